"""The offline voice engines in their supervised child process: WAV files made by espeak-ng
go through pocketsphinx; a hung child is restarted while chat goes on; `ankita voice` runs a
session from audio files against the fake model."""

import os
import shutil
import subprocess
import threading
import time

import pytest
from click.testing import CliRunner

from ankita import Memory
from ankita.cli import cli
from ankita.companion import Companion, ModelSettings, Persona, Transcripts, open_model
from ankita.companion.voice._voiceproc import VoiceError, VoiceProcess
from fakemodel import FakeModel

PHRASES = ["ankita", "stop", "cancel", "tell me a story", "and tomorrow", "open the calculator"]

if shutil.which("espeak-ng") is None:
    if os.environ.get("CI"):
        raise RuntimeError("espeak-ng is missing: .ci/run installs it")
    pytest.skip("needs Debian's espeak-ng", allow_module_level=True)


def say(folder, name, text):
    path = folder / f"{name}.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "120", "-w", str(path), text], check=True)
    return path


def test_generated_speech_is_recognised_by_the_real_engine(tmp_path):
    engine = VoiceProcess(PHRASES)
    try:
        for text in ["ankita", "tell me a story", "and tomorrow", "stop"]:
            assert engine.call("transcribe", str(say(tmp_path, text.replace(" ", "-"), text))) == [
                text
            ]
        spoken = engine.call("speak", "Hello there", str(tmp_path / "reply.wav"))
        assert os.path.getsize(spoken) > 10_000
    finally:
        engine.close()


def sometimes_hangs(requests, results, phrases, dictation):
    """A fake engine: hangs on one request, as a wedged audio library would."""
    while True:
        item = requests.get()
        if item is None:
            return
        number, op, args = item
        if args and args[0] == "hang":
            time.sleep(60)
        if args and args[0] == "crash":
            os._exit(9)
        results.put((number, "ok", "pong"))


@pytest.mark.slow
def test_a_hung_voice_process_is_restarted_while_a_chat_turn_completes(tmp_path):
    fake = FakeModel()
    chat = Companion(
        Memory(tmp_path / "m.db", embedder="none"),
        open_model(ModelSettings(provider="ollama", base_url=fake.url("ollama"), model="fake")),
        Persona.default(),
        Transcripts(tmp_path / "chat.db"),
    )
    engine = VoiceProcess(target=sometimes_hangs, deadline_s=2)
    outcome = {}

    def stuck():
        try:
            engine.call("transcribe", "hang")
        except VoiceError as exc:
            outcome["voice"] = str(exc)

    waiter = threading.Thread(target=stuck)
    waiter.start()
    time.sleep(0.3)
    assert chat.send("I live in Berlin").text == "Got it, I'll remember that."
    voice_still_hung = waiter.is_alive()  # the turn finished while the voice call hung
    waiter.join(15)
    assert "did not answer transcribe within 2 s; it was restarted" in outcome["voice"]
    assert engine.restarts == 1
    assert engine.call("ping") == "pong"  # the restarted process answers again
    assert voice_still_hung
    with pytest.raises(VoiceError, match="died during transcribe"):
        engine.call("transcribe", "crash")
    assert engine.restarts == 2 and engine.call("ping") == "pong"
    engine.close()
    fake.stop()


def test_a_voice_session_from_audio_files(tmp_path, chat_model):
    files = [
        say(tmp_path, "wake", "ankita"),
        say(tmp_path, "command", "tell me a story"),
        say(tmp_path, "followup", "and tomorrow"),
    ]
    late = say(tmp_path, "late", "open the calculator")
    result = CliRunner().invoke(
        cli,
        [
            "--db",
            str(tmp_path / "m.db"),
            "--embedder",
            "none",
            "voice",
            *map(str, files),
            "+30",
            str(late),
            "--out",
            str(tmp_path / "out"),
            *[x for p in PHRASES[3:] for x in ("--phrase", p)],
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line.split("s ", 1)[1].strip() for line in result.output.splitlines()]
    # The session opens with the hint, then the wake word is heard.
    assert lines[:3] == [
        "hint: Say Ankita first",
        "heard: 'ankita'",
        "listening (state: listening)",
    ]
    assert "heard: 'tell me a story'" in lines and "Ankita: Tell me more!" in lines
    # The follow-up needed no wake word; after 30 s of silence the window had closed.
    follow = lines.index("heard: 'and tomorrow'")
    assert lines[follow + 1] == "Ankita: Tell me more!"
    assert "hint: Say Ankita first" in lines[lines.index("30 s of silence") + 1]
    assert lines[-3:] == [
        "heard: 'open the calculator'",
        "ignored: no wake word",
        "hint: Say Ankita first",
    ]
    assert len(list((tmp_path / "out").glob("reply-*.wav"))) == 2


def test_a_file_utterance_begun_inside_the_follow_up_window_is_answered(tmp_path, chat_model):
    """From files as live: an utterance is judged where it began. This one begins 23 s after
    the reply (the window is 25 s) and ends after the window closed."""
    import wave

    spoken = say(tmp_path, "spoken", "open the calculator please right now")
    late = tmp_path / "late.wav"
    with wave.open(str(spoken)) as source, wave.open(str(late), "wb") as out:
        out.setparams(source.getparams())
        out.writeframes(b"\x00\x00" * int(23.0 * source.getframerate()))
        out.writeframes(source.readframes(source.getnframes()))
        length = source.getnframes() / source.getframerate()
    assert 23.0 + length > 25.5  # it ends after the window
    args = ["--db", str(tmp_path / "m.db"), "--embedder", "none", "voice"]
    result = CliRunner().invoke(
        cli,
        [*args, "ankita", "tell me a story", str(late), "--out", str(tmp_path / "out")]
        + ["--phrase", "open the calculator please right now"],
    )
    assert result.exit_code == 0, result.output
    lines = [line.split("s ", 1)[1].strip() for line in result.output.splitlines()]
    heard = lines.index("heard: 'open the calculator please right now'")
    assert lines[heard + 1] == "Ankita: Tell me more!", lines
