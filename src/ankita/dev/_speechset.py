"""What the voice measurements say and how they score it: the spoken commands that
benchmarks/voice.py and the voice tests use, word errors between two transcripts, and a room
for the reply's echo to travel through."""

from __future__ import annotations

from typing import Any

# Ten short commands of the kind said to a companion, each one breath after the wake word.
COMMANDS = (
    "tell me a story",
    "what is on today",
    "and tomorrow",
    "open the calculator",
    "what time is it",
    "play some music",
    "remind me at six",
    "how is the weather",
    "turn off the lights",
    "call my sister",
)


def word_errors(reference: str, hypothesis: str) -> int:
    """Words substituted, dropped or added between two transcripts (Levenshtein on words)."""
    ref, hyp = reference.split(), hypothesis.split()
    row = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        prev, row[0] = row[:], i
        for j in range(1, len(hyp) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ref[i - 1] != hyp[j - 1]))
    return row[-1]


def room_echo_path(delay_s: float = 0.04, reflections_s: float = 0.08, seed: int = 3) -> Any:
    """An impulse response from speaker to microphone at 16 kHz: the direct sound after
    `delay_s`, then reflections that fade over `reflections_s`; unit energy, so an echo level
    means the same loudness as a plain copy of the reply."""
    import numpy as np

    rate = 16000
    start, length = int(delay_s * rate), int(reflections_s * rate)
    path = np.zeros(start + length)
    path[start] = 1.0
    fading = np.random.default_rng(seed).normal(0.0, 1.0, length) * np.exp(
        -np.arange(length) / (length / 8)
    )
    path[start + 1 :] = 0.5 * fading[1:]
    return path / np.sqrt(float(np.sum(path**2)))
