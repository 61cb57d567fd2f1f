"""The live voice loop: a microphone (or a WAV played as one) in, a speaker out, 20 ms a step.

One loop reads a block of input and writes a block of output, so the same code runs on a sound
device and on a virtual one whose clock is the audio it has read (tests, benchmarks). Per block:

- while a reply is spoken, the input goes to the stop-word spotter only (barge-in): a stop word
  silences the reply from the next block on and is never sent to the model;
- otherwise a streaming energy VAD cuts utterances; each is recognised, and the state machine is
  told when its speech *began* (the follow-up window is judged there);
- recognising, asking the model and synthesising the reply run on a worker thread, so the loop
  never stops listening. On a virtual device the loop waits for them instead: its clock only
  moves with audio, which keeps a session reproducible.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ankita._errors import InvalidInput
from ankita.companion.voice._echo import EchoCanceller
from ankita.companion.voice._speech import MARGIN_S, RATE, SILENCE_S, to_pcm
from ankita.companion.voice._voice import SPEAKING, Voice

BLOCK = RATE // 50  # 20 ms
BLOCK_S = BLOCK / RATE
MIN_SPEECH_S = 0.06  # shorter bursts (a click, a cough) are no utterance
TAIL_S = 3.0  # a virtual session runs this long past its input, so a reply can finish


def _np() -> Any:
    import numpy as np

    return np


class Audio(Protocol):
    realtime: bool

    def read(self) -> Any | None:
        """The next block of float samples at 16 kHz, or None when the input has ended."""

    def write(self, samples: Any) -> None:
        """One block to the speaker (silence when nothing is said)."""

    def now(self) -> float:
        """Seconds since the session began."""


class VirtualAudio:
    """Samples played as if a microphone heard them; what is written is recorded, and mixed back
    into the input at `echo` times its level (a speaker the microphone hears): one block later,
    or through `echo_path`, an impulse response in samples (a room: a delay, then reflections),
    which must delay by at least one block."""

    realtime = False

    def __init__(
        self,
        samples: Any,
        echo: float = 0.0,
        tail_s: float = TAIL_S,
        echo_path: Any = None,
    ) -> None:
        np = _np()
        tail = np.zeros(int(tail_s * RATE))
        self.samples = np.concatenate([np.asarray(samples, dtype=np.float64), tail])
        if echo_path is None:
            echo_path = np.zeros(BLOCK + 1)
            echo_path[BLOCK] = 1.0
        self.path = echo * np.asarray(echo_path, dtype=np.float64)
        if np.any(self.path[:BLOCK]):
            raise InvalidInput("an echo path must delay by at least one block")
        self.position = 0
        self.played: list[Any] = []
        self._out = np.zeros(len(self.path) + BLOCK)  # the latest output, newest last

    def read(self) -> Any | None:
        np = _np()
        if self.position + BLOCK > len(self.samples):
            return None
        # The echo of every sample played in the last `len(path)` samples.
        echo = np.convolve(self._out, self.path)[len(self._out) : len(self._out) + BLOCK]
        block = self.samples[self.position : self.position + BLOCK] + echo
        self.position += BLOCK
        return block

    def write(self, samples: Any) -> None:
        np = _np()
        self.played.append(samples)
        self._out = np.concatenate([self._out[len(samples) :], np.asarray(samples, float)])

    def now(self) -> float:
        return self.position / RATE


class DeviceAudio:
    """The default input and output devices, through sounddevice (PortAudio)."""

    realtime = True

    def __init__(self) -> None:
        try:
            import sounddevice  # type: ignore[import-untyped]
        except (ImportError, OSError) as exc:
            raise InvalidInput(
                "the microphone needs sounddevice and PortAudio: pip install 'ankita[voice]' "
                f"and apt-get install libportaudio2 ({exc})"
            ) from None
        try:
            self.stream = sounddevice.Stream(
                samplerate=RATE, blocksize=BLOCK, channels=1, dtype="int16", latency="low"
            )
            self.stream.start()
        except Exception as exc:  # PortAudio reports a missing device in its own error type
            raise InvalidInput(f"no usable microphone and speaker: {exc}") from None
        self.blocks = 0

    def read(self) -> Any | None:
        data, _overflowed = self.stream.read(BLOCK)
        self.blocks += 1
        return _np().frombuffer(bytes(data), dtype="<i2").astype(float)

    def write(self, samples: Any) -> None:
        self.stream.write(_np().rint(samples).clip(-32768, 32767).astype("<i2"))

    def now(self) -> float:
        return self.blocks * BLOCK_S

    def close(self) -> None:
        self.stream.stop()
        self.stream.close()


class Vad:
    """A streaming energy VAD: loud blocks start an utterance, SILENCE_S of quiet ends it.
    The loudness line follows the room: four times its quiet level, and at least 300."""

    def __init__(self) -> None:
        self.floor = 50.0
        self.started: float | None = None
        self._blocks: list[Any] = []
        self._before: list[Any] = []  # a margin of audio before the first loud block
        self._quiet = 0
        self._loud = 0

    def reset(self) -> None:
        self.started, self._blocks, self._before, self._quiet, self._loud = None, [], [], 0, 0

    def feed(self, block: Any, t: float) -> tuple[float, Any] | None:
        """A block heard at time t (its end); an utterance (its start, its samples) once ended."""
        np = _np()
        level = float(np.sqrt(np.mean(block**2)))
        loud = level > max(300.0, 4.0 * self.floor)
        if not loud:
            self.floor = 0.95 * self.floor + 0.05 * max(level, 1.0)
        if self.started is None:
            self._before = (self._before + [block])[-int(MARGIN_S / BLOCK_S) - 1 :]
            if loud:
                self.started = t - BLOCK_S
                self._blocks, self._quiet, self._loud = list(self._before), 0, 1
            return None
        self._blocks.append(block)
        self._loud += loud
        self._quiet = 0 if loud else self._quiet + 1
        if self._quiet * BLOCK_S < SILENCE_S:
            return None
        started, loud_blocks = self.started, self._loud
        keep = len(self._blocks) - self._quiet + int(MARGIN_S / BLOCK_S)
        samples = np.concatenate(self._blocks[:keep])
        self.reset()
        if loud_blocks * BLOCK_S < MIN_SPEECH_S:
            return None
        return started, samples


class Player:
    """The reply being spoken, one block at a time; stopping it silences the next block."""

    def __init__(self) -> None:
        self.samples: Any = None
        self.position = 0

    def start(self, samples: Any) -> None:
        self.samples, self.position = samples, 0

    def stop(self) -> None:
        self.samples = None

    @property
    def playing(self) -> bool:
        return self.samples is not None

    def next(self) -> tuple[Any, bool]:
        """A block to play, and whether the reply has just ended."""
        np = _np()
        if self.samples is None:
            return np.zeros(BLOCK), False
        block = self.samples[self.position : self.position + BLOCK]
        self.position += BLOCK
        if self.position >= len(self.samples):
            self.samples = None
            return np.pad(block, (0, BLOCK - len(block))), True
        return block, False


@dataclass
class Engines:
    """What the loop calls; each may block (it runs on the worker thread)."""

    recognise: Callable[[bytes], str]  # one 16 kHz utterance to text
    ask: Callable[[str], str]  # a question to the companion's reply ("" when silent)
    synthesize: Callable[[str], Any]  # text to 16 kHz float samples
    spot_stop: Callable[[Any], str | None]  # a block while speaking to a stop word, if said
    # A reply the user stopped leaves the conversation the model reads (as a cancelled chat
    # reply does): called with its text.
    withdraw: Callable[[str], None] = lambda reply: None


@dataclass
class LiveSession:
    machine: Voice
    audio: Audio
    engines: Engines
    log: Callable[[float, str], None] = lambda t, text: None
    events: list[tuple[float, str, str]] = field(default_factory=list)  # (time, kind, detail)
    cancel_echo: bool = True  # take the reply's own echo out before listening for stop words

    def __post_init__(self) -> None:
        self.vad, self.player = Vad(), Player()
        self.echo = EchoCanceller(BLOCK) if self.cancel_echo else None
        self._done: queue.Queue[tuple[int, str, Any]] = queue.Queue()
        self._jobs = 0
        self._pending = 0
        self._ask_number = 0  # a reply to an ask given up on (a stop word) is dropped
        self._reply = ""  # the text of the reply being spoken
        self._speech: Any = None

    def _note(self, kind: str, detail: str = "") -> None:
        t = self.audio.now()
        self.events.append((t, kind, detail))
        self.log(t, f"{kind}: {detail}" if detail else kind)

    def _submit(self, kind: str, work: Callable[[], Any]) -> int:
        self._jobs += 1
        number, self._pending = self._jobs, self._pending + 1

        def run() -> None:
            try:
                self._done.put((number, kind, ("ok", work())))
            except Exception as exc:  # the engines' failures are the machine's to handle
                self._done.put((number, kind, ("error", f"{type(exc).__name__}: {exc}")))

        threading.Thread(target=run, daemon=True).start()
        return number

    def _act(self, actions: list[tuple[str, str]]) -> None:
        for action, value in actions:
            if action == "ask":
                self._note("asked", value)
                self._ask_number = self._submit("reply", self._answer(value))
            elif action == "speak":
                self.player.start(self._speech)
                self._note("speaking", value)
            elif action == "cancel_speech":
                self.player.stop()
                self.engines.withdraw(self._reply)
                self._note("speech cancelled")
            elif action == "cancel_request":
                self._ask_number = -1
                self._note("request cancelled")
            elif action == "show_hint":
                self._note("hint", value)
            elif action == "ignored":
                self._note("ignored", value)

    def _answer(self, question: str) -> Callable[[], tuple[str, Any]]:
        engines = self.engines

        def answer() -> tuple[str, Any]:
            reply = engines.ask(question)
            return reply, engines.synthesize(reply) if reply else None

        return answer

    def _finish(self, number: int, kind: str, outcome: tuple[str, Any]) -> None:
        self._pending -= 1
        status, value = outcome
        if kind == "heard":
            started, text = value if status == "ok" else (None, "")
            if status != "ok":
                self._note("recognition failed", str(value))
            elif text:
                self._note("heard", text)
                self._act(self.machine.heard(text, started))
            return
        if number != self._ask_number:
            if status == "ok" and value[0]:
                self.engines.withdraw(value[0])  # given up on: a stop word came first
            return
        if status != "ok":
            self._note("model failed", str(value))
            self._act(self.machine.failed("model"))
            return
        reply, self._speech = value
        self._reply = reply
        self._note("reply", reply or "(silent)")
        self._act(self.machine.reply(reply))

    def _collect(self, wait: bool) -> None:
        while self._pending:
            try:
                item = self._done.get(timeout=60) if wait else self._done.get_nowait()
            except queue.Empty:
                return
            self._finish(*item)

    def step(self, block: Any) -> None:
        """One block of input heard, one block of output played."""
        t = self.audio.now()
        if self.machine.state == SPEAKING:
            word = self.engines.spot_stop(self.echo.heard(block) if self.echo else block)
            if word:
                self._note("stop word", word)
                self._act(self.machine.heard(word, t))
        elif self.machine.mic_muted():
            self.vad.reset()  # our own voice's tail through the speakers
        else:
            utterance = self.vad.feed(block, t)
            if utterance is not None:
                started, samples = utterance
                recognise = self.engines.recognise
                self._submit("heard", lambda: (started, recognise(to_pcm(samples))))
        out, ended = self.player.next()
        self.audio.write(out)
        if self.echo:
            self.echo.play(out)
        if ended:
            self._note("speech done")
            self._act(self.machine.spoken())
        self._collect(wait=not self.audio.realtime)
        self._act(self.machine.tick(self.vad.started))

    def run(self, until: Callable[[], bool] = lambda: False) -> None:
        self._act(self.machine.start())
        while not until():
            block = self.audio.read()
            if block is None:
                break
            self.step(block)
        self._collect(wait=True)


def stop_latency(events: list[tuple[float, str, str]], stop_ended: float) -> float | None:
    """Seconds from the end of a spoken stop word to silence (the next block after the cancel)."""
    cancelled = [t for t, kind, _ in events if kind == "speech cancelled" and t >= stop_ended - 1]
    return cancelled[0] - stop_ended if cancelled else None


def speak_over(
    track: Any,
    reply: Any,
    spot_stop: Callable[[Any], str | None],
    echo: float = 0.0,
    echo_path: Any = None,
    cancel_echo: bool = True,
) -> list[tuple[float, str, str]]:
    """The events of a session already speaking `reply` (samples) from time 0 while a virtual
    microphone hears `track` and the reply's echo: how barge-in is measured and tested."""
    audio = VirtualAudio(track, echo=echo, tail_s=0, echo_path=echo_path)
    engines = Engines(lambda pcm: "", lambda q: "", lambda t: None, spot_stop)
    machine = Voice(audio.now)
    machine.heard("ankita tell me a story")
    machine.reply("a story")
    session = LiveSession(machine, audio, engines, cancel_echo=cancel_echo)
    session.player.start(reply)
    while (block := audio.read()) is not None:
        session.step(block)
    return session.events
