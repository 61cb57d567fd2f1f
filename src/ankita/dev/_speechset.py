"""What the voice measurements say and how they score it: the spoken commands that
benchmarks/voice.py and the voice tests use, and word errors between two transcripts."""

from __future__ import annotations

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
