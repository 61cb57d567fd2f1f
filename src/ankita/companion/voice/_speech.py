"""Offline speech: pocketsphinx to recognise, espeak-ng to speak, an energy VAD to cut audio
into utterances. Nothing is downloaded at run time.

Recognition is grammar-constrained when commands are configured: the wake word may come first,
then one command ("ankita tell me a story" in one breath), or a wake or stop word alone. Without
commands, the wake word is spotted by keyword search and the rest goes to free dictation, which
is far less accurate. Every utterance gets a quiet noise floor before decoding (see `audible`).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import wave
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput

RATE = 16000  # the rate of pocketsphinx's acoustic model; every input is brought to it
FRAME_S = 0.02
SILENCE_S = 0.45  # this much quiet ends an utterance
MARGIN_S = 0.15  # audio kept on each side of the loud part
NOISE_FLOOR = 30.0  # standard deviation of the added noise, about -60 dBFS
PAD_S = 0.3
WAKE_THRESHOLD = "1e-5"  # keyword search for the wake word: no false wake on 24 commands
STOP_THRESHOLD = "1e-20"  # stop words while speaking: found within 180 ms of their end
# "cancel" scores lower than "stop" in every voice measured: at 1e-20 it was found in 2 of 15
# utterances, at 1e-35 in 8 (benchmarks/voice.py, barge-in); lower lines stop on echo.
STOP_THRESHOLDS = {"stop": STOP_THRESHOLD, "cancel": "1e-35"}
# Speech after the spotted wake word that makes it more than the wake word alone: after
# "ankita" alone the loud part went on for at most 0.14 s (5 voices, 3 speeds), after
# "ankita stop" for at least 0.36 s.
WAKE_TAIL_S = 0.25


def _np() -> Any:
    import numpy as np

    return np


def resample(samples: Any, rate: int, target: int = RATE) -> Any:
    """Float samples at `target` Hz (band-limited, through the spectrum; utterances are short)."""
    np = _np()
    samples = np.asarray(samples, dtype=np.float64)
    if rate == target or len(samples) == 0:
        return samples
    n = max(1, int(round(len(samples) * target / rate)))
    spectrum = np.fft.rfft(samples)[: n // 2 + 1]
    return np.fft.irfft(spectrum, n) * (n / len(samples))


def to_pcm(samples: Any) -> bytes:
    np = _np()
    return bytes(np.clip(np.rint(samples), -32768, 32767).astype("<i2").tobytes())


def read_wav(path: str | Path) -> tuple[bytes, int]:
    """Mono 16-bit PCM and its sample rate; stereo is mixed down."""
    try:
        with wave.open(str(path)) as w:
            return _read(w)
    except (wave.Error, EOFError, OSError) as exc:
        raise InvalidInput(f"{path}: not a readable WAV file ({exc})") from None


def _read(w: wave.Wave_read) -> tuple[bytes, int]:
    np = _np()
    if w.getsampwidth() != 2:
        raise InvalidInput("only 16-bit PCM WAV audio is supported")
    frames = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    if w.getnchannels() > 1:
        frames = frames.reshape(-1, w.getnchannels()).mean(axis=1).astype("<i2")
    return frames.tobytes(), w.getframerate()


def read_wav_16k(path: str | Path) -> Any:
    """A WAV file as float samples at 16 kHz."""
    np = _np()
    pcm, rate = read_wav(path)
    return resample(np.frombuffer(pcm, dtype="<i2"), rate)


def audible(pcm: bytes, seed: int = 0) -> bytes:
    """The utterance with 0.3 s of margin and a quiet noise floor, as a microphone gives.

    pocketsphinx's features break down on digital silence: on espeak-ng audio, wake word plus
    command in one breath was recognised 12 times in 32 as it came and 32 in 32 with this floor.
    """
    np = _np()
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    pad = np.zeros(int(RATE * PAD_S))
    samples = np.concatenate([pad, samples, pad])
    samples += np.random.default_rng(seed).normal(0.0, NOISE_FLOOR, len(samples))
    return to_pcm(samples)


def _frame_energy(samples: Any, size: int) -> Any:
    """The RMS level of each whole frame of `size` samples."""
    count = len(samples) // size
    return _np().sqrt((samples[: count * size].reshape(count, size) ** 2).mean(axis=1))


def utterances(pcm: bytes, rate: int) -> list[bytes]:
    """Cut audio at pauses (frame energy below a threshold relative to the loudest part)."""
    return [piece for _, piece in timed_utterances(pcm, rate)]


def timed_utterances(pcm: bytes, rate: int) -> list[tuple[float, bytes]]:
    """`utterances`, each with the second of the recording it begins at (margin included)."""
    np = _np()
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
    size = max(1, int(rate * FRAME_S))
    count = len(samples) // size
    if count == 0:
        return []
    energy = _frame_energy(samples, size)
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
        (
            max(0, a - margin) * size / rate,
            samples[max(0, a - margin) * size : min(count, b + margin) * size]
            .astype("<i2")
            .tobytes(),
        )
        for a, b in pieces
        if b - a >= 3
    ]


def _clean(phrases: Sequence[str]) -> list[str]:
    words = sorted({" ".join(p.lower().split()) for p in phrases if p.strip()})
    return [w for w in words if all(c.isalpha() or c in " '" for c in w)]


def grammar(
    commands: Sequence[str], wake_words: Sequence[str] = (), stop_words: Sequence[str] = ()
) -> str:
    """A JSGF grammar: a wake or stop word alone, or a command with the wake word before it."""
    wake, stop = _clean(wake_words), _clean(stop_words)
    said = [c for c in _clean(commands) if c not in wake and c not in stop]
    if not said and not wake and not stop:
        raise InvalidInput("the voice grammar needs at least one phrase")
    rules, alone = ["#JSGF V1.0;", "grammar ankita;"], wake + stop
    if said:
        rules.append("<command> = " + " | ".join(said) + ";")
        prefix = "[" + " | ".join(wake) + "] " if wake else ""
        alone.append(prefix + "<command>")
    rules.append("public <utterance> = " + " | ".join(alone) + ";")
    return "\n".join(rules) + "\n"


def _decoder(**options: Any) -> Any:
    from pocketsphinx import Decoder

    return Decoder(samprate=RATE, loglevel="FATAL", **options)


# espeak-ng's default English voice says the "a" of "ankita" as AA, not the dictionary's AE:
# with these spellings added, the wake word was spotted in 150 of 150 utterances (5 voices,
# 3 speeds), 120 without them.
VOWEL_VARIANTS = {"AE": ("AA", "AH")}


def _keyword_decoder(
    words: Sequence[str], threshold: str | Mapping[str, str], variants: bool = False
) -> Any:
    """A keyword-search decoder, one detection threshold for every word or one per word;
    pocketsphinx reads several keyphrases only from a file."""
    decoder = _decoder()
    phrases: list[tuple[str, str]] = []
    for word in _clean(words):
        line = threshold if isinstance(threshold, str) else threshold.get(word, STOP_THRESHOLD)
        phrases.append((word, line))
        phones = decoder.lookup_word(word) if variants and " " not in word else None
        first, _, rest = (phones or "").partition(" ")
        for n, vowel in enumerate(VOWEL_VARIANTS.get(first, ()), start=2):
            decoder.add_word(f"{word}_{n}", f"{vowel} {rest}", False)
            phrases.append((f"{word}_{n}", line))
    with tempfile.NamedTemporaryFile("w", suffix=".kws") as f:
        f.writelines(f"{p} /{line}/\n" for p, line in phrases)
        f.flush()
        decoder.add_kws("keywords", f.name)
    decoder.activate_search("keywords")
    return decoder


def _speech_after(audio: bytes, cut: int) -> float:
    """Seconds from byte `cut` to the last loud 10 ms of the utterance."""
    np = _np()
    size = RATE // 100
    energy = _frame_energy(np.frombuffer(audio, dtype="<i2").astype(np.float32), size)
    if len(energy) == 0:
        return 0.0
    loud = np.nonzero(energy > 0.05 * float(energy.max()))[0]
    return max(0.0, (int(loud[-1]) + 1 - cut // 2 // size) / 100) if len(loud) else 0.0


def _spelling(word: str) -> str:
    """A variant spelling found by keyword search, back to the word it spells."""
    base, _, n = word.strip().rpartition("_")
    return base if base and n.isdigit() else word.strip()


DICTATION = ("auto", "whisper", "pocketsphinx")


def dictation_engine(choice: str) -> str:
    """Which engine free dictation uses: `auto` is Whisper when installed, else pocketsphinx."""
    from ankita.companion.voice import _dictation

    if choice not in DICTATION:
        raise InvalidInput(f"dictation must be one of {', '.join(DICTATION)}, not {choice!r}")
    if choice == "whisper" and not _dictation.available():
        raise InvalidInput(f"Whisper dictation is not installed: {_dictation.INSTALL}")
    if choice == "auto":
        return "whisper" if _dictation.available() else "pocketsphinx"
    return choice


class Recognizer:
    """16 kHz utterances to text: pocketsphinx for the wake word, stop words and phrases, and
    pocketsphinx or Whisper (`dictation`) for free dictation."""

    def __init__(
        self,
        phrases: Sequence[str] = (),
        wake_words: Sequence[str] = ("ankita",),
        stop_words: Sequence[str] = ("stop", "cancel"),
        dictation: str = "pocketsphinx",
    ) -> None:
        try:
            import pocketsphinx  # noqa: F401
        except ImportError:
            raise InvalidInput("voice needs pocketsphinx: pip install 'ankita[voice]'") from None
        self.phrases = list(phrases)
        self.wake_words = list(wake_words)
        self._grammar = grammar(self.phrases, wake_words, stop_words) if self.phrases else None
        self.dictation = dictation_engine(dictation)
        self._whisper: Any = None
        if self.dictation == "whisper" and not self._grammar:
            from ankita.companion.voice._dictation import Dictation

            # Loaded now, not on the first thing the user says.
            self._whisper = Dictation(vocabulary=tuple(_clean([*wake_words, *stop_words])))

    def recognise(self, pcm: bytes) -> str:
        """One utterance (16-bit, 16 kHz) to text; "" when nothing was recognised."""
        audio = audible(pcm)
        if self._grammar:
            decoder = _decoder()
            decoder.add_jsgf_string("phrases", self._grammar)
            decoder.activate_search("phrases")
            return self._decode(decoder, audio)
        wake, cut = self._spot_wake(audio)
        rest = audio[cut:]
        if len(rest) <= RATE // 5:
            heard = ""
        elif self._whisper is not None:
            # The wake word alone: Whisper, made to start with it, invents what follows.
            alone = wake and _speech_after(audio, cut) < WAKE_TAIL_S
            heard = "" if alone else self._whisper.transcribe(audio, wake)
        else:
            heard = self._decode(_decoder(), audible(rest) if cut else rest)
        return " ".join(x for x in (wake, heard) if x)

    def _spot_wake(self, audio: bytes) -> tuple[str, int]:
        """Free dictation does not know the wake word: find it by keyword search. The word
        found, and the byte where it ends (0: none found)."""
        if not self.wake_words:
            return "", 0
        decoder = _keyword_decoder(self.wake_words, WAKE_THRESHOLD, variants=True)
        decoder.start_utt()
        decoder.process_raw(audio, full_utt=True)
        decoder.end_utt()
        found = list(decoder.seg() or [])
        if not found:
            return "", 0
        cut = (found[0].end_frame + 1) * RATE // 100 * 2  # 100 frames a second, 2 bytes a sample
        return _spelling(found[0].word), cut

    @staticmethod
    def _decode(decoder: Any, audio: bytes) -> str:
        decoder.start_utt()
        decoder.process_raw(audio, full_utt=True)
        decoder.end_utt()
        hyp = decoder.hyp()
        return hyp.hypstr.strip() if hyp is not None else ""

    def transcribe(self, pcm: bytes, rate: int) -> list[str]:
        """What was said in a recording, one entry per utterance (unrecognised ones left out)."""
        return [text for _, text in self.transcribe_timed(pcm, rate)]

    def transcribe_timed(self, pcm: bytes, rate: int) -> list[tuple[float, str]]:
        """`transcribe`, each utterance with the second it began: a follow-up window is judged
        where speech began, as the live loop judges it."""
        np = _np()
        heard = (
            (start, self.recognise(to_pcm(resample(np.frombuffer(piece, dtype="<i2"), rate))))
            for start, piece in timed_utterances(pcm, rate)
        )
        return [(start, text) for start, text in heard if text]


class StopSpotter:
    """Listens for stop words only, block by block, while a reply is spoken (barge-in)."""

    def __init__(self, stop_words: Sequence[str] = ("stop", "cancel")) -> None:
        self._decoder = _keyword_decoder(stop_words, STOP_THRESHOLDS)
        self._noise = _np().random.default_rng(1)
        self._decoder.start_utt()

    def feed(self, samples: Any) -> str | None:
        """A block of 16 kHz float samples; the stop word when one has just been said."""
        noisy = samples + self._noise.normal(0.0, NOISE_FLOOR, len(samples))
        self._decoder.process_raw(to_pcm(noisy), False, False)
        hyp = self._decoder.hyp()
        if hyp is None:
            return None
        self.reset()
        return _spelling(str(hyp.hypstr))

    def reset(self) -> None:
        self._decoder.end_utt()
        self._decoder.start_utt()


def _espeak(text: str, *args: str, voice: str = "en-us", speed: int | None = 150) -> bytes:
    binary = shutil.which("espeak-ng") or shutil.which("espeak")
    if binary is None:
        raise InvalidInput("speaking needs espeak-ng (apt-get install espeak-ng)")
    done = subprocess.run(
        [binary, "-v", voice, *(["-s", str(speed)] if speed else []), *args, text],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return done.stdout


def speak_to_file(text: str, path: str | Path) -> Path:
    """Speech as a WAV file, with Debian's espeak-ng (offline)."""
    target = Path(path)
    _espeak(text, "-w", str(target))
    return target


def synthesize(text: str, voice: str = "en-us", speed: int | None = 150) -> Any:
    """Speech as float samples at 16 kHz, for a live loop to play (speed None: the voice's own,
    as the tests and benchmarks make a user's speech)."""
    with wave.open(io.BytesIO(_espeak(text, "--stdout", voice=voice, speed=speed))) as w:
        pcm, rate = _read(w)
    return resample(_np().frombuffer(pcm, dtype="<i2"), rate)
