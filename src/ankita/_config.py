"""Settings: explicit argument > environment variable > default."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ankita._errors import ConfigError

DEFAULT_DEDUP_THRESHOLD = 0.85
DEFAULT_CONFLICT_THRESHOLD = 0.55
DEFAULT_STALE_AFTER_DAYS = 180.0
# The contradiction judge (docs/decisions.md): it reads the `judge_candidates` facts of one kind
# closest in meaning (cosine >= judge_floor) that the rules left apart, and flags a pair whose
# contradiction probability is >= judge_line in both orders. Measured on the development pairs.
DEFAULT_JUDGE_LINE = 0.98
DEFAULT_JUDGE_FLOOR = 0.30
DEFAULT_JUDGE_CANDIDATES = 2
# A possible conflict (never a sure one) that the judge reads below even odds, in the lower of
# its two orders, is no conflict at all: read together, the two facts are more likely
# compatible (docs/decisions.md, "Sure and possible conflicts").
DEFAULT_JUDGE_CLEAR_LINE = 0.50
DEFAULT_LONG_MERGE_LINE = 0.91
DEFAULT_NOVEL_MERGE_LINE = 0.88
DEFAULT_MAX_CONFLICTS = 3

# Cosine (merge line, conflict line) per embedding model, measured with `ankita eval` on the
# development pairs (docs/embedders.md). Models not listed use the lexical lines as they are.
DEFAULT_EMBEDDING_LINES: dict[str, tuple[float, float]] = {
    "local:minilm-l6-int8": (0.85, 0.45),
    "local:paraphrase-minilm-l3": (0.88, 0.40),
    # The multilingual space, read only for pairs in another language (docs/languages.md):
    # e5's cosines sit high (unrelated pairs 0.81-0.95), so its lines do too.
    "multilingual-e5-small-q4": (0.94, 0.86),
}


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None


def _check_threshold(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{name} must be a number between 0 and 1, got {value!r}")


@dataclass(frozen=True)
class Settings:
    """Decision settings. `per_kind` maps a kind to (dedup_threshold, conflict_threshold)."""

    dedup_threshold: float = DEFAULT_DEDUP_THRESHOLD
    conflict_threshold: float = DEFAULT_CONFLICT_THRESHOLD
    stale_after_days: float = DEFAULT_STALE_AFTER_DAYS
    detect_disagreement: bool = True
    per_kind: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    embedding_lines: Mapping[str, tuple[float, float]] = field(
        default_factory=lambda: dict(DEFAULT_EMBEDDING_LINES)
    )
    judge_line: float = DEFAULT_JUDGE_LINE
    judge_floor: float = DEFAULT_JUDGE_FLOOR
    judge_candidates: int = DEFAULT_JUDGE_CANDIDATES
    judge_clear_line: float = DEFAULT_JUDGE_CLEAR_LINE
    # A cosine merge between long facts (a sentence of more than CLAIM_WORDS content words)
    # needs this score instead of the merge line: two long sentences on one topic score high
    # while each holds something the other does not (docs/decisions.md, "On a stream").
    long_merge_line: float = DEFAULT_LONG_MERGE_LINE
    # ... and this one where the new fact holds more than NOVEL_WORDS_KEPT words that no word
    # of the old one is close to, read word by word by the embedder (`_novelty`).
    novel_merge_line: float = DEFAULT_NOVEL_MERGE_LINE
    # One write is flagged against at most this many facts, the closest first.
    max_conflicts: int = DEFAULT_MAX_CONFLICTS

    def __post_init__(self) -> None:
        _check_threshold("dedup_threshold", self.dedup_threshold)
        _check_threshold("conflict_threshold", self.conflict_threshold)
        if self.conflict_threshold > self.dedup_threshold:
            raise ConfigError("conflict_threshold must not be above dedup_threshold")
        _check_threshold("judge_line", self.judge_line)
        _check_threshold("judge_floor", self.judge_floor)
        _check_threshold("judge_clear_line", self.judge_clear_line)
        _check_threshold("long_merge_line", self.long_merge_line)
        _check_threshold("novel_merge_line", self.novel_merge_line)
        if (
            isinstance(self.max_conflicts, bool)
            or not isinstance(self.max_conflicts, int)
            or not 1 <= self.max_conflicts <= 1000
        ):
            raise ConfigError("max_conflicts must be a whole number from 1 to 1000")
        if (
            isinstance(self.judge_candidates, bool)
            or not isinstance(self.judge_candidates, int)
            or not 1 <= self.judge_candidates <= 20
        ):
            raise ConfigError("judge_candidates must be a whole number from 1 to 20")
        if not isinstance(self.stale_after_days, (int, float)) or self.stale_after_days <= 0:
            raise ConfigError("stale_after_days must be a positive number of days")
        for kind, pair in self.per_kind.items():
            if len(pair) != 2:
                raise ConfigError(f"per_kind[{kind!r}] must be (dedup, conflict)")
            _check_threshold(f"per_kind[{kind!r}] dedup", pair[0])
            _check_threshold(f"per_kind[{kind!r}] conflict", pair[1])
            if pair[1] > pair[0]:
                raise ConfigError(f"per_kind[{kind!r}]: conflict line above merge line")

        for model, pair in self.embedding_lines.items():
            if len(pair) != 2:
                raise ConfigError(f"embedding_lines[{model!r}] must be (merge, conflict)")
            _check_threshold(f"embedding_lines[{model!r}] merge", pair[0])
            _check_threshold(f"embedding_lines[{model!r}] conflict", pair[1])
            if not 0 < pair[1] < pair[0]:
                raise ConfigError(f"embedding_lines[{model!r}]: need 0 < conflict < merge")

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Defaults, overridden by ANKITA_* variables, overridden by explicit arguments."""
        values: dict[str, object] = {
            "dedup_threshold": _env_float("ANKITA_DEDUP_THRESHOLD", DEFAULT_DEDUP_THRESHOLD),
            "conflict_threshold": _env_float(
                "ANKITA_CONFLICT_THRESHOLD", DEFAULT_CONFLICT_THRESHOLD
            ),
            "stale_after_days": _env_float("ANKITA_STALE_AFTER_DAYS", DEFAULT_STALE_AFTER_DAYS),
            "judge_line": _env_float("ANKITA_JUDGE_LINE", DEFAULT_JUDGE_LINE),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]

    def thresholds(self, kind: str) -> tuple[float, float]:
        """(merge line, conflict line) for one kind."""
        return self.per_kind.get(kind, (self.dedup_threshold, self.conflict_threshold))

    def cosine_lines(self, model: str | None, kind: str) -> tuple[float, float]:
        """(merge line, conflict line) for a model's raw cosine."""
        if model is not None and model in self.embedding_lines:
            return self.embedding_lines[model]
        return self.thresholds(kind)


def default_db_path() -> Path:
    """`ANKITA_DB`, else `memory.db` in the user's data directory."""
    env = os.environ.get("ANKITA_DB")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("ankita", appauthor=False)) / "memory.db"
