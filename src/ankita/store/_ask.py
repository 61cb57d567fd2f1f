"""The question a store answers for candidate search: facts filed under terms of one of some
fields, a word of at least some groups (`Ask`), and the terms and ranges to read for a group."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Group:
    """The stored words that match one word of the new fact: these exactly, and every
    extension of `ranges` (prefix rule, both ways) of at most `longest` characters, if set."""

    exact: frozenset[str]
    ranges: frozenset[str]
    longest: int | None = None


@dataclass(frozen=True)
class Ask:
    """Facts filed under one of `fields` + a word of at least `at_least` different groups; if
    `same_name`, only those that also meet one of the write's names; if `unless`, only those
    not filed under that term (docs/scale.md)."""

    fields: tuple[str, ...]
    groups: tuple[Group, ...]
    at_least: int = 1
    same_name: bool = False
    unless: str | None = None


# A stored term extends a prefix when it sorts in [prefix, prefix + U+10FFFF): code point order,
# which both backends use for the terms column.
TOP = "\U0010ffff"
# A word longer than this is read from this many letters on as one range of terms rather
# than one seek per prefix (a generated or compound name brings dozens of prefixes).
RUN = 8


@dataclass(frozen=True)
class Run:
    """Terms in [low, high) that count: one of `covered`, or one extending `extends` (of at
    most `longest` characters, if set)."""

    low: str
    high: str
    extends: str
    covered: frozenset[str]
    longest: int | None = None

    def counts(self, term: str) -> bool:
        return term in self.covered or (
            term != self.extends
            and term.startswith(self.extends)
            and (self.longest is None or len(term) <= self.longest)
        )


@lru_cache(maxsize=512)
def reads(field: str, group: Group) -> tuple[tuple[str, ...], tuple[Run, ...]]:
    """The terms to seek and the ranges to scan for the stored words of one group under one
    field: each exact word, and for each word of `ranges` the words extending it. A long
    word's range starts at its first RUN letters, and covers the exact words in it."""
    runs = []
    for word in sorted(group.ranges):
        low = field + word[:RUN] if len(word) > RUN else field + word
        high = field + word + TOP
        runs.append(
            Run(
                low,
                high,
                field + word,
                frozenset(field + w for w in group.exact if low <= field + w < high),
                None if group.longest is None else len(field) + group.longest,
            )
        )
    covered = frozenset().union(*(run.covered for run in runs))
    # Cached: a common word's group comes back in many writes, under the same fields.
    return tuple(sorted(field + w for w in group.exact if field + w not in covered)), tuple(runs)
