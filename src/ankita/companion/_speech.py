"""Offline speech: pocketsphinx to recognise, espeak-ng to speak, an energy VAD to cut audio
into utterances. Nothing is downloaded at run time.

Recognition is grammar-constrained when phrases are configured: the wake words, the stop words
and the commands the user expects to say. pocketsphinx's free dictation is far less accurate,
and is used only when no phrases are given.
"""

from __future__ import annotations

import shutil
import subprocess
import wave
from collections.abc import Sequence
from pathlib import Path

from ankita._errors import InvalidInput

FRAME_S = 0.02
SILENCE_S = 0.45  # this much quiet ends an utterance
MARGIN_S = 0.15  # audio kept on each side of the loud part


def read_wav(path: str | Path) -> tuple[bytes, int]:
    """Mono 16-bit PCM and its sample rate; stereo is mixed down."""
    import numpy as np

    try:
        with wave.open(str(path)) as w:
            if w.getsampwidth() != 2:
                raise InvalidInput(f"{path}: only 16-bit PCM WAV files are supported")
            frames = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
            if w.getnchannels() > 1:
                frames = frames.reshape(-1, w.getnchannels()).mean(axis=1).astype("<i2")
            return frames.tobytes(), w.getframerate()
    except (wave.Error, EOFError, OSError) as exc:
        raise InvalidInput(f"{path}: not a readable WAV file ({exc})") from None


def utterances(pcm: bytes, rate: int) -> list[bytes]:
    """Cut audio at pauses (frame energy below a threshold relative to the loudest part)."""
    import numpy as np

    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
    size = max(1, int(rate * FRAME_S))
    count = len(samples) // size
    if count == 0:
        return []
    energy = np.sqrt((samples[: count * size].reshape(count, size) ** 2).mean(axis=1))
    loud = energy > max(200.0, 0.05 * float(energy.max()))
    gap = int(SILENCE_S / FRAME_S)
    pieces, start, quiet = [], None, 0
    for i, is_loud in enumerate(loud):
        if is_loud:
            start = i if start is None else start
            quiet = 0
        elif start is not None:
            quiet += 1
            if quiet >= gap:
                pieces.append((start, i - quiet + 1))
                start, quiet = None, 0
    if start is not None:
        pieces.append((start, count))
    # A margin of real audio, not added digital silence (which the recogniser misreads):
    # quiet consonants such as the s of "stop" sit below the energy line.
    margin = int(MARGIN_S / FRAME_S)
    return [
        samples[max(0, a - margin) * size : min(count, b + margin) * size].astype("<i2").tobytes()
        for a, b in pieces
        if b - a >= 3
    ]


def grammar(phrases: Sequence[str]) -> str:
    words = sorted({" ".join(p.lower().split()) for p in phrases if p.strip()})
    if not words:
        raise InvalidInput("the voice grammar needs at least one phrase")
    cleaned = [w for w in words if all(c.isalpha() or c in " '" for c in w)]
    return "#JSGF V1.0;\ngrammar ankita;\npublic <utterance> = " + " | ".join(cleaned) + ";\n"


class Recognizer:
    """Utterances to text with pocketsphinx; one phrase per utterance."""

    def __init__(self, phrases: Sequence[str] = ()) -> None:
        try:
            import pocketsphinx  # noqa: F401
        except ImportError:
            raise InvalidInput("voice needs pocketsphinx: pip install 'ankita[voice]'") from None
        self.phrases = list(phrases)
        self._grammar = grammar(self.phrases) if self.phrases else None

    def _decoder(self, rate: int) -> object:
        from pocketsphinx import Decoder

        options = {"samprate": rate, "loglevel": "FATAL"}
        if rate > 16000:
            options["nfft"] = 1024  # wider frames for higher sample rates
        decoder = Decoder(**options)
        if self._grammar:
            decoder.add_jsgf_string("phrases", self._grammar)
            decoder.activate_search("phrases")
        return decoder

    def transcribe(self, pcm: bytes, rate: int) -> list[str]:
        """What was said, one entry per utterance (unrecognised ones are left out)."""
        out = []
        for piece in utterances(pcm, rate):
            decoder = self._decoder(rate)
            decoder.start_utt()  # type: ignore[attr-defined]
            decoder.process_raw(piece, full_utt=True)  # type: ignore[attr-defined]
            decoder.end_utt()  # type: ignore[attr-defined]
            hyp = decoder.hyp()  # type: ignore[attr-defined]
            if hyp is not None and hyp.hypstr.strip():
                out.append(hyp.hypstr.strip())
        return out


def speak_to_file(text: str, path: str | Path, voice: str = "en-us") -> Path:
    """Speech as a WAV file, with Debian's espeak-ng (offline)."""
    binary = shutil.which("espeak-ng") or shutil.which("espeak")
    if binary is None:
        raise InvalidInput("speaking needs espeak-ng (apt-get install espeak-ng)")
    target = Path(path)
    subprocess.run(
        [binary, "-v", voice, "-s", "150", "-w", str(target), text],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return target
