"""`ankita voice`: a session from files and typed transcripts, or live from the microphone (or
a WAV file played as one) through the same loop."""

from __future__ import annotations

import os
import tempfile
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ankita._console import _memory, console, esc
from ankita._errors import InvalidInput, ModelError, NotFound
from ankita._files import private_folder
from ankita.companion._apps import AppIndex
from ankita.companion._paths import chat_db_path, persona_path
from ankita.companion.chat._model import open_model
from ankita.companion.chat._runtime import Companion
from ankita.companion.chat._transcripts import Transcripts
from ankita.companion.persona._persona import load_persona
from ankita.companion.voice._speech import dictation_engine
from ankita.companion.voice._voice import SPEAKING, Voice, VoiceSettings, read_inputs
from ankita.companion.voice._voiceproc import VoiceError, VoiceProcess


@click.command()
@click.argument("inputs", nargs=-1)
@click.option(
    "--phrase",
    "phrases",
    multiple=True,
    help="A command you will say (repeatable): recognition is constrained to these, with the "
    "wake word before them or not, plus the wake and stop words. Without any, free dictation.",
)
@click.option("--mic", is_flag=True, help="Listen live on the default microphone (Ctrl-C ends).")
@click.option(
    "--stream",
    "stream_wav",
    type=click.Path(dir_okay=False),
    default=None,
    help="Play this WAV file into the live loop as if a microphone heard it.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where spoken replies are written as WAV files (sessions from INPUTS).",
)
@click.option(
    "--follow-up",
    "follow_up_s",
    default=25.0,
    show_default=True,
    help="Seconds to keep listening after a reply, without the wake word.",
)
@click.option(
    "--dictation",
    default=None,
    help="Who writes down free speech (no --phrase): whisper (pip install 'ankita[dictation]'), "
    "pocketsphinx, or auto: whisper when installed. Default: ANKITA_DICTATION, else auto.",
)
@click.pass_context
def voice(
    ctx: click.Context,
    inputs: tuple[str, ...],
    phrases: tuple[str, ...],
    mic: bool,
    stream_wav: str | None,
    out_dir: str | None,
    follow_up_s: float,
    dictation: str | None,
) -> None:
    """A voice session. From INPUTS, in order: WAV files heard, `+N` seconds of silence, or typed
    text; or live with --mic (or --stream WAV, a recording played as the microphone)."""
    live = mic or stream_wav is not None
    if live == bool(inputs) or (mic and stream_wav):
        raise InvalidInput("give INPUTS, or --mic, or --stream WAV: one of the three")
    if stream_wav is not None and not Path(stream_wav).is_file():
        raise NotFound(f"no WAV file {stream_wav!r}")
    steps = read_inputs(inputs)  # bad input stops here, before anything starts
    settings = VoiceSettings(follow_up_s=follow_up_s)
    engine = VoiceProcess(
        list(phrases),
        dictation=dictation_engine(dictation or os.environ.get("ANKITA_DICTATION") or "auto"),
    )
    transcripts = Transcripts(chat_db_path())
    companion = Companion(
        _memory(ctx),
        open_model(),
        load_persona(persona_path()),
        transcripts,
        session="voice",
        apps=AppIndex(),
    )
    try:
        if live:
            _live(companion, engine, settings, stream_wav)
        else:
            _steps(companion, engine, settings, steps, out_dir)
    finally:
        engine.close()
        companion.lanes.close()
        transcripts.close()


def _log(now: Callable[[], float]) -> Callable[[str], None]:
    return lambda text: console.print(f"[dim]{now():7.1f}s[/dim] {text}")


def _ask(companion: Companion) -> Callable[[str], str]:
    def ask(question: str) -> str:
        try:
            return companion.send(question).text
        except TimeoutError as exc:
            raise ModelError(str(exc)) from None

    return ask


def _steps(
    companion: Companion,
    engine: VoiceProcess,
    settings: VoiceSettings,
    steps: list[tuple[str, str | float]],
    out_dir: str | None,
) -> None:
    """Inputs in order. Each waits until a reply has been spoken, unless a `+N` came between
    them: `+N` says when the next input starts, so it may interrupt the reply."""
    now = {"t": 0.0, "speech_ends": 0.0}
    machine = Voice(lambda: now["t"], settings)
    out = private_folder(out_dir or tempfile.mkdtemp(prefix="ankita-voice-"))
    log = _log(lambda: now["t"])
    name = esc(companion.persona.card["data"]["name"])
    spoken = {"reply": ""}  # the reply being spoken, withdrawn if a stop word cuts it

    def act(actions: list[tuple[str, str]]) -> None:
        for action, value in actions:
            if action == "ask":
                try:
                    reply = _ask(companion)(value)
                except ModelError as exc:
                    log(f"[red]model failed[/red]: {esc(str(exc))}")
                    act(machine.failed("model"))
                    continue
                log(f"{name}: {esc(reply or '(silent)')}")
                spoken["reply"] = reply
                act(machine.reply(reply))
            elif action == "speak":
                try:
                    path = engine.call("speak", value, str(out / f"reply-{now['t']:.0f}.wav"))
                    with wave.open(path) as w:
                        length = w.getnframes() / w.getframerate()
                    log(f"speaking ({length:.1f} s, microphone muted): {esc(path)}")
                    now["speech_ends"] = now["t"] + length
                except VoiceError as exc:
                    log(f"[red]speech failed[/red]: {esc(str(exc))}")
                    act(machine.spoken())
            elif action == "cancel_speech":
                companion.withdraw(spoken["reply"])
                log("speech cancelled")
            elif action == "cancel_request":
                log("request cancelled")
            elif action == "show_hint":
                log(f"hint: [yellow]{esc(value)}[/yellow]")  # worded as `--stream` words it
            elif action == "ignored":
                log(f"ignored: {esc(value)}")
            elif action == "listen":
                log(f"listening (state: {machine.state})")

    def speech_done_by(t: float) -> None:
        if machine.state == SPEAKING and now["speech_ends"] <= t:
            now["t"] = max(now["t"], now["speech_ends"])
            act(machine.spoken())

    act(machine.start())
    timed = False
    for kind, item in steps:
        if isinstance(item, float):
            start = now["t"]
            speech_done_by(start + item)
            now["t"] = start + item
            log(f"{item:g} s of silence")
            act(machine.tick())
            timed = True
            continue
        if not timed:  # nobody talks over a reply unasked, nor into the echo tail after it
            speech_done_by(now["speech_ends"])
            now["t"] = max(now["t"], machine.muted_until)
        timed = False
        began = now["t"]
        if kind == "wav":
            try:
                timed_heard = engine.call("transcribe_timed", str(Path(item).resolve()))
            except VoiceError as exc:
                log(f"[red]recognition failed[/red]: {esc(str(exc))}")
                continue
            with wave.open(item) as w:
                now["t"] += w.getnframes() / w.getframerate()
            # Each utterance is judged where it began (the follow-up window), not at the end
            # of the file: as the live loop and `--stream` judge it.
            heard = [(began + offset, text) for offset, text in timed_heard]
        else:
            heard = [(began, item)]
        for started, text in heard:
            log(f"heard: {esc(text)!r}")
            act(machine.heard(text, started))
        if not heard:
            log("heard nothing it could recognise")
    speech_done_by(now["speech_ends"])


def _live(
    companion: Companion, engine: VoiceProcess, settings: VoiceSettings, stream_wav: str | None
) -> None:
    from ankita.companion.voice._live import DeviceAudio, Engines, LiveSession, VirtualAudio
    from ankita.companion.voice._speech import StopSpotter, read_wav_16k

    audio: Any = VirtualAudio(read_wav_16k(stream_wav)) if stream_wav else DeviceAudio()
    spotter = StopSpotter(settings.stop_words)
    engines = Engines(
        recognise=lambda pcm: str(engine.call("recognise", pcm)),
        ask=_ask(companion),
        synthesize=lambda text: engine.call("synthesize", text),
        spot_stop=spotter.feed,
        withdraw=companion.withdraw,
    )
    session = LiveSession(
        Voice(audio.now, settings),
        audio,
        engines,
        log=lambda t, text: console.print(f"[dim]{t:7.1f}s[/dim] {esc(text)}"),
    )
    if stream_wav is None:
        console.print("Listening on the default microphone; Ctrl-C ends the session.")
    try:
        session.run()
    except KeyboardInterrupt:
        console.print("session ended")
    finally:
        if isinstance(audio, DeviceAudio):
            audio.close()
