"""Free dictation with Whisper base (`ankita[dictation]`) on espeak-ng speech: the wake word and
a command in one breath, a follow-up without the wake word, the wake word alone; the model's
files are checked; `--dictation` refuses what it does not know."""

from __future__ import annotations

import os
import shutil

import pytest
from click.testing import CliRunner

from ankita import InvalidInput
from ankita.cli import cli
from ankita.companion.voice import _dictation
from ankita.companion.voice._speech import Recognizer, dictation_engine, synthesize, to_pcm
from ankita.dev._speechset import COMMANDS, word_errors

if shutil.which("espeak-ng") is None:
    if os.environ.get("CI"):
        raise RuntimeError("espeak-ng is missing: .ci/run installs it")
    pytest.skip("needs Debian's espeak-ng", allow_module_level=True)
if not _dictation.available():
    if os.environ.get("CI"):
        raise RuntimeError("Whisper dictation is missing: the test extra installs it")
    pytest.skip("needs ankita[dictation]", allow_module_level=True)


@pytest.fixture(scope="module")
def whisper():
    return Recognizer(dictation="whisper")


def heard(recognizer, text, voice="en"):
    return recognizer.recognise(to_pcm(synthesize(text, voice, None)))  # the voice's own speed


@pytest.mark.slow
def test_wake_word_and_command_in_one_breath_without_phrases(whisper):
    said = {command: heard(whisper, f"ankita {command}") for command in COMMANDS}
    exact = [c for c, text in said.items() if text == f"ankita {c}"]
    wrong = sum(word_errors(f"ankita {c}", text) for c, text in said.items())
    # pocketsphinx's free dictation got 2 of these exactly, at a word error rate of 0.7;
    # Whisper 9 (its one miss: "remind me at 6").
    assert len(exact) >= 8, said
    assert wrong / sum(len(c.split()) + 1 for c in COMMANDS) <= 0.1, said


@pytest.mark.slow
def test_follow_ups_and_the_wake_word_alone(whisper):
    assert heard(whisper, "what time is it", voice="en-us") == "what time is it"  # no wake word
    assert heard(whisper, "ankita") == "ankita"
    assert heard(whisper, "stop") == "stop"


def test_a_model_file_that_differs_is_refused():
    with pytest.raises(InvalidInput, match="sha256 differs"):
        _dictation._checked("model.bin", b"not the model", _dictation.MODEL_SHA256)


def test_the_dictation_choice_is_checked(tmp_path):
    assert dictation_engine("auto") == "whisper"  # installed here
    assert dictation_engine("pocketsphinx") == "pocketsphinx"
    with pytest.raises(InvalidInput, match="dictation must be one of"):
        dictation_engine("vosk")
    bad = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "m.db"), "voice", "--dictation", "vosk", "ankita"]
    )
    assert bad.exit_code == 2 and "dictation must be one of" in bad.output


@pytest.mark.slow
def test_a_session_in_free_dictation_from_audio_files(tmp_path, chat_model):
    files = []
    for name, text in [("ask", "ankita what time is it"), ("more", "and tomorrow")]:
        path = tmp_path / f"{name}.wav"
        path.write_bytes(to_pcm_wav(synthesize(text, "en-us", None)))
        files.append(str(path))
    result = CliRunner().invoke(
        cli,
        ["--db", str(tmp_path / "m.db"), "--embedder", "none", "voice", *files],
    )
    assert result.exit_code == 0, result.output
    lines = [line.split("s ", 1)[1].strip() for line in result.output.splitlines()]
    assert "heard: 'ankita what time is it'" in lines
    assert "heard: 'and tomorrow'" in lines  # the follow-up, no wake word needed
    asked = [
        m["content"] for r in chat_model.requests for m in r["messages"] if m["role"] == "user"
    ]
    assert "what time is it" in asked and "and tomorrow" in asked


def to_pcm_wav(samples) -> bytes:
    import io
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(to_pcm(samples))
    return out.getvalue()
