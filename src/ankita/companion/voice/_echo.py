"""Echo cancelling for barge-in: while a reply plays, the microphone also hears it through the
speaker. The loop knows exactly what it played, so an adaptive filter learns the path from the
speaker to the microphone and takes its estimate out before the stop-word spotter listens.

The filter is a partitioned-block frequency-domain one (overlap-save), each frequency normalised
by the power played in it: speech keeps its power in a few frequencies, and a time-domain NLMS
filter tried first took out 4 dB of a reply's echo after 7 s, this one 18 dB after one. It
learns only from blocks that hold echo alone (a double-talk guard), so a stop word said over the
reply is not cancelled.
"""

from __future__ import annotations

from typing import Any

PARTITIONS = 8  # filter length in blocks: 160 ms at 20 ms a block (device delay plus a room)
STEP = 0.5  # how much of the error each block corrects (0 to 1)
SMOOTH = 0.9  # how slowly the per-frequency power follows the played signal
CONVERGED = 4.0  # echo return loss enhancement (energy heard / left) that counts as settled
# Once settled, a block that leaves this many times the usual energy holds a user speaking over
# the reply, and is not learnt from.
DOUBLE_TALK = 4.0
SUPPRESS = 0.2  # the level of what is left in a block of echo alone
GEIGEL = 0.8  # before it has settled: a block peaking above this share of what was played


def _np() -> Any:
    import numpy as np

    return np


class EchoCanceller:
    """Subtracts the echo of what was played from what the microphone heard, block by block.

    The loop reads a block before it writes one, so the echo in a block can only come from what
    was played before it: the filter's first partition is the block played just before."""

    def __init__(self, block: int, partitions: int = PARTITIONS, step: float = STEP) -> None:
        np = _np()
        self.block, self.step = block, step
        bins = block + 1  # rfft of two blocks
        self.weights = np.zeros((partitions, bins), dtype=complex)
        self.spectra = np.zeros((partitions, bins), dtype=complex)  # played, newest first
        self.power = np.zeros(bins)
        self.played_blocks = 0
        self.window = np.zeros(2 * block)  # the last two blocks played
        self.peaks = np.zeros(partitions + 1)  # the loudest sample of each block the filter spans
        self.residual = 0.0  # running energy left after cancelling, while adapting
        self.echo_return = 0.0  # running ratio of energy heard to energy left (ERLE)

    def heard(self, block: Any) -> Any:
        """The microphone's block with the expected echo taken out (call `play` after it)."""
        np = _np()
        n = self.block
        if not self.spectra.any():
            return block  # nothing played yet: nothing to take out or learn
        expected = np.fft.irfft((self.weights * self.spectra).sum(axis=0))[n:]
        cleaned = block - expected
        left = float(np.dot(cleaned, cleaned))
        heard = float(np.dot(block, block))
        # Someone talking over the reply must not be learnt as echo. Once the filter cancels
        # well, they show as a block it suddenly cancels badly; before, as a block with peaks
        # near the loudest the speaker played lately (an echo is quieter than its source).
        if self.echo_return > CONVERGED:
            talking = left > DOUBLE_TALK * self.residual
        else:
            talking = float(np.max(np.abs(block))) > GEIGEL * float(self.peaks.max())
        if talking or heard == 0.0:
            return cleaned if left < heard else block
        error = np.fft.rfft(np.concatenate([np.zeros(n), cleaned]))
        # Each frequency is normalised by the power played in it (over all partitions).
        power = len(self.spectra) * self.power / (1.0 - SMOOTH**self.played_blocks)
        gradient = np.conj(self.spectra) * error / (power + 1e-3)
        # Keep each partition a filter of one block's length (the overlap-save constraint).
        taps = np.fft.irfft(gradient, axis=1)
        taps[:, n:] = 0.0
        self.weights += self.step * np.fft.rfft(taps, axis=1)
        self.residual = left if not self.residual else 0.9 * self.residual + 0.1 * left
        self.echo_return = 0.9 * self.echo_return + 0.1 * min(heard / max(left, 1e-9), 1e4)
        if left >= heard:
            return block  # while it is still learning, an estimate that adds more is not used
        # What is left of the echo still sounds like speech to the stop-word spotter: a block
        # that holds nothing but that is turned down.
        return cleaned * SUPPRESS if self.echo_return > CONVERGED else cleaned

    def play(self, block: Any) -> None:
        """What goes to the speaker now; its echo reaches the microphone from the next block."""
        np = _np()
        self.window = np.concatenate([self.window[self.block :], np.asarray(block, float)])
        self.peaks = np.concatenate([self.peaks[1:], [float(np.max(np.abs(block)))]])
        spectrum = np.fft.rfft(self.window)
        self.spectra = np.concatenate([spectrum[None, :], self.spectra[:-1]])
        self.power = SMOOTH * self.power + (1 - SMOOTH) * np.abs(spectrum) ** 2
        self.played_blocks += 1
