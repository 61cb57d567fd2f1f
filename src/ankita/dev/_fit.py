"""Fitting the weights that tell a sure conflict from a possible one (`analysis._standing`):
every labelled pair the engine flags becomes one row of signals, labelled real or not; a
logistic regression (L2, every source weighted equally) is fitted on them, and judged by
leaving one source out at a time."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ankita._memory import Memory
from ankita.analysis._comparison import CONFLICT
from ankita.analysis._standing import SIGNALS, ruled_out, signals


@dataclass(frozen=True)
class Row:
    source: str  # a pair file's name, or a LoCoMo conversation
    values: tuple[float, ...]
    real: bool  # labelled a conflict
    a: str
    b: str
    # A reading beside the fit rules the flag out (`_standing.ruled_out`): fitted on, as the
    # signals of every flag the rules raise, but never linked, whatever the weights.
    ruled_out: bool = False


def flagged_rows(memory: Memory, pairs: Iterable[dict[str, Any]], source: str) -> list[Row]:
    """The pairs `memory` would flag as a conflict (sure or not), with their signals."""
    rows = []
    for pair in pairs:
        kind = pair.get("kind") or "fact"
        comparison = memory.compare(pair["a"], pair["b"], kind)
        if comparison.action != CONFLICT:
            continue
        values = signals(comparison, pair["b"], pair["a"])
        out = ruled_out(comparison, pair["b"], pair["a"])
        rows.append(Row(source, values, pair["label"] == "conflict", pair["a"], pair["b"], out))
    return rows


def fit(rows: Sequence[Row], l2: float = 1.0, steps: int = 400) -> tuple[float, ...]:
    """Weights (one per signal, then the intercept) by Newton's method on the weighted
    log-loss. A source of n flags weighs sqrt(n): a large file does not set the line alone,
    and a conversation with one flag does not weigh as much as a file of hundreds."""
    x = np.array([(*r.values, 1.0) for r in rows])
    y = np.array([float(r.real) for r in rows])
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.source] = counts.get(r.source, 0) + 1
    sample = np.array([1.0 / math.sqrt(counts[r.source]) for r in rows])
    sample *= len(rows) / sample.sum()
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0  # the intercept is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -60, 60)))
        grad = x.T @ (sample * (p - y)) + penalty * w
        hess = (x.T * (sample * p * (1 - p))) @ x + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return tuple(round(float(v), 3) for v in w)


def likelihoods(rows: Sequence[Row], weights: Sequence[float]) -> list[float]:
    out = []
    for r in rows:
        z = weights[-1] + sum(w * v for w, v in zip(weights, r.values, strict=False))
        out.append(1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z)))))
    return out


def split(rows: Sequence[Row], weights: Sequence[float], lines: tuple[float, float]) -> dict:
    """How the flags of `rows` fall: sure, possible, dropped, each with how many are real."""
    sure_line, possible_line = lines
    out = {"flags": len(rows), "real": sum(r.real for r in rows)}
    for name in ("sure", "possible", "dropped"):
        out[name] = 0
        out[name + "_real"] = 0
    for r, p in zip(rows, likelihoods(rows, weights), strict=True):
        name = "sure" if p >= sure_line else "possible" if p >= possible_line else "dropped"
        name = "dropped" if r.ruled_out else name
        out[name] += 1
        out[name + "_real"] += int(r.real)
    return out


def leave_one_out(
    rows: Sequence[Row], lines: tuple[float, float], l2: float = 1.0
) -> list[tuple[str, dict]]:
    """Each source scored by weights fitted on the others, worst first (by the share of its
    sure flags that are not real, then by the real conflicts it drops)."""
    sources = sorted({r.source for r in rows})
    out = []
    for held in sources:
        weights = fit([r for r in rows if r.source != held], l2)
        out.append((held, split([r for r in rows if r.source == held], weights, lines)))

    def badness(item: tuple[str, dict]) -> tuple[float, float]:
        s = item[1]
        false_sure = (s["sure"] - s["sure_real"]) / s["flags"] if s["flags"] else 0.0
        lost = s["dropped_real"] / s["real"] if s["real"] else 0.0
        return (-false_sure, -lost)

    return sorted(out, key=badness)


def weights_table(weights: Sequence[float]) -> list[tuple[str, float]]:
    return [*zip(SIGNALS, weights, strict=False), ("intercept", weights[-1])]
