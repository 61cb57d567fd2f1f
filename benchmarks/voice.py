"""How well the offline voice hears, and how fast a stop word silences a reply. Speech is made
by espeak-ng in several voices and speeds; everything runs through the code `ankita voice`
uses. Prints JSON; a benchmark, not a test.

    python benchmarks/voice.py [--voices en,en-us,...] [--speeds 0,140,210]
        [--parts recognition,barge-in,loop] [--dictation auto|whisper|pocketsphinx]

- recognition: wake word + command in one breath, with the commands as phrases (the grammar:
  exact utterances) and without (free dictation, `--dictation`: exact utterances, wake word
  spotted, word error rate of the command, time per utterance); the wake and stop words said
  alone; false wakes on the commands said alone;
- barge-in: a 7 s reply, the user says a stop word 1.5 s into it, on a virtual microphone (each
  voice and speed); how often each word is found, and the time from its last sound to the block
  where the speaker falls silent. False stops: the user says a command instead of a stop word,
  and, with echo (the reply mixed back into the microphone at that level, one block later or
  through a room), nobody speaks; each with the echo canceller on and off;
- loop cost: wall time of one 20 ms block, listening and while speaking, beside the 20 ms it
  stands for.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from functools import partial

import numpy as np

from ankita.companion.voice._echo import EchoCanceller
from ankita.companion.voice._live import BLOCK, Vad, speak_over, stop_latency
from ankita.companion.voice._speech import RATE, Recognizer, StopSpotter, synthesize, to_pcm
from ankita.dev._speechset import COMMANDS, room_echo_path, word_errors

STOP_WORDS = ("stop", "cancel")
REPLY = (
    "Once upon a time there was a little fox who lived in the forest and loved to explore "
    "the hills every morning, looking for berries."
)


def said(text: str, voice: str, speed: int) -> np.ndarray:
    return synthesize(text, voice, speed or None)  # 0: the voice's own speed


def recognition(voices: list[str], speeds: list[int], dictation: str) -> list[dict[str, object]]:
    grammar, free = Recognizer(COMMANDS), Recognizer(dictation=dictation)
    rows = []
    for voice in voices:
        for speed in speeds:
            exact = free_exact = woken = false_wake = wrong = words = 0
            took: list[float] = []
            for command in COMMANDS:
                pcm = to_pcm(said(f"ankita {command}", voice, speed))
                exact += grammar.recognise(pcm) == f"ankita {command}"
                started = time.perf_counter()
                heard = free.recognise(pcm)
                took.append(time.perf_counter() - started)
                free_exact += heard == f"ankita {command}"
                woken += heard.startswith("ankita")
                wrong += word_errors(command, heard.removeprefix("ankita").strip())
                words += len(command.split())
                false_wake += free.recognise(to_pcm(said(command, voice, speed))).startswith(
                    "ankita"
                )
            alone = ("ankita", *STOP_WORDS)
            alone_exact = sum(free.recognise(to_pcm(said(w, voice, speed))) == w for w in alone)
            rows.append(
                {
                    "voice": voice,
                    "speed": speed or "default",
                    "grammar_exact": f"{exact}/{len(COMMANDS)}",
                    "free_exact": f"{free_exact}/{len(COMMANDS)}",
                    "free_alone_exact": f"{alone_exact}/{len(alone)}",
                    "free_wake": f"{woken}/{len(COMMANDS)}",
                    "free_command_wer": round(wrong / words, 3),
                    "free_ms_per_utterance": round(1000 * statistics.median(took)),
                    "false_wakes": f"{false_wake}/{len(COMMANDS)}",
                }
            )
    return rows


def barge_in(
    voices: list[str], speeds: list[int], echo: float, path: str, cancel: bool
) -> dict[str, object]:
    heard_over = partial(_speak_over, echo=echo, path=ECHO_PATHS[path], cancel=cancel)
    reply = synthesize(REPLY)
    found = {word: 0 for word in STOP_WORDS}
    latencies, tried, false_stops, other_stops = [], 0, 0, 0
    for voice in voices:
        for speed in speeds:
            for word in STOP_WORDS:
                tried += 1
                spoken = said(word, voice, speed)
                loud = np.nonzero(np.abs(spoken) > 300)[0]
                start = int(1.5 * RATE)  # the reply starts at 0 (played as it begins)
                track = np.zeros(len(reply) + 2 * RATE)
                track[start : start + len(spoken)] += spoken
                events = heard_over(track, reply)
                latency = stop_latency(events, (start + loud[-1]) / RATE)
                if latency is not None:
                    found[word] += 1
                    latencies.append(latency)
        # Nobody speaks: any stop is false (the reply's own echo).
        events = heard_over(np.zeros(len(reply) + RATE), reply)
        false_stops += _stopped(events)
        if echo == 0.0:
            # The user says something else over the reply: a stop is false too.
            for command in COMMANDS:
                spoken = said(command, voice, 0)
                track = np.zeros(len(reply) + 3 * RATE)
                track[int(1.5 * RATE) : int(1.5 * RATE) + len(spoken)] += spoken
                other_stops += _stopped(heard_over(track, reply))
    each = tried // len(STOP_WORDS)
    return {
        "echo": echo,
        "echo_path": path,
        "echo_cancelling": cancel,
        **{f"{word}_found": f"{n}/{each}" for word, n in found.items()},
        "stop_to_silence_ms_mean": round(1000 * statistics.mean(latencies)) if latencies else None,
        "stop_to_silence_ms_max": round(1000 * max(latencies)) if latencies else None,
        "false_stops_on_echo": f"{false_stops}/{len(voices)}",
        **(
            {"false_stops_on_other_speech": f"{other_stops}/{len(voices) * len(COMMANDS)}"}
            if echo == 0.0
            else {}
        ),
    }


def _stopped(events: list) -> bool:
    return any(kind == "speech cancelled" for _, kind, _ in events)


# How the reply reaches the microphone: one block later at `echo` times its level, or through
# a room (dev/_speechset.room_echo_path: 40 ms away, reflections for 80 ms more).
ECHO_PATHS = {"flat": None, "room": room_echo_path()}


def _speak_over(
    track: np.ndarray, reply: np.ndarray, echo: float, path: np.ndarray | None, cancel: bool
) -> list:
    """A session already speaking `reply` at time 0, hearing `track`."""
    return speak_over(track, reply, StopSpotter().feed, echo, path, cancel)


def loop_cost() -> dict[str, float]:
    speech = said("ankita tell me a story and then another one about the sea", "en-us", 0)
    blocks = [speech[i : i + BLOCK] for i in range(0, len(speech) - BLOCK, BLOCK)]
    vad, spotter = Vad(), StopSpotter()
    t0 = time.perf_counter()
    for n, block in enumerate(blocks):
        vad.feed(block, n * 0.02)
    listening = (time.perf_counter() - t0) / len(blocks)
    t0 = time.perf_counter()
    for block in blocks:
        spotter.feed(block)
    speaking = (time.perf_counter() - t0) / len(blocks)
    canceller = EchoCanceller(BLOCK)
    t0 = time.perf_counter()
    for block in blocks:
        spotter.feed(canceller.heard(block))
        canceller.play(block)
    cancelling = (time.perf_counter() - t0) / len(blocks)
    return {
        "block_ms": 20.0,
        "listening_ms_per_block": round(listening * 1000, 3),
        "speaking_ms_per_block": round(speaking * 1000, 3),
        "speaking_with_echo_cancelling_ms_per_block": round(cancelling * 1000, 3),
        "speaking_share_of_real_time": round(cancelling / 0.02, 3),
    }


PARTS = ("recognition", "barge-in", "loop")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--voices", default="en,en-us,en-gb-x-rp,en-us+f3,en-us+m3")
    parser.add_argument("--speeds", default="0,140,210", help="words a minute; 0: the voice's own")
    parser.add_argument("--parts", default=",".join(PARTS), help="which measurements to run")
    parser.add_argument(
        "--dictation", default="auto", help="free dictation: auto, whisper or pocketsphinx"
    )
    args = parser.parse_args()
    voices = args.voices.split(",")
    speeds = [int(s) for s in args.speeds.split(",")]
    parts = args.parts.split(",")
    if unknown := set(parts) - set(PARTS):
        parser.error(f"unknown parts: {', '.join(sorted(unknown))} (known: {', '.join(PARTS)})")
    report: dict[str, object] = {}
    if "recognition" in parts:
        report["dictation"] = Recognizer(dictation=args.dictation).dictation
        report["recognition"] = recognition(voices, speeds, args.dictation)
    if "barge-in" in parts:
        report["barge_in"] = [
            barge_in(voices, speeds, echo, path, cancel)
            for path, levels in (("flat", (0.0, 0.1, 0.3, 0.6)), ("room", (0.1, 0.3, 0.6)))
            for echo in levels
            for cancel in (True, False)
        ]
    if "loop" in parts:
        report["loop_cost"] = loop_cost()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
