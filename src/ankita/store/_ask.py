"""The question a store answers for candidate search: facts filed under terms of one of some
fields, a word of at least some groups (`Ask`), and the terms and ranges to read for a group."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Group:
    """The stored words that match one word of the new fact: these exactly, and every
    extension of `ranges` (prefix rule, both ways) of at most `longest` characters, if set."""

    exact: frozenset[str]
    ranges: frozenset[str]
    longest: int | None = None


# A fact is filed under this + the smallest core size of its parts (`_index.smallest_core`).
SIZE = "k:"


@dataclass(frozen=True)
class Ask:
    """Facts filed under one of `fields` + a word of at least `at_least` different groups; if
    `by_size`, of at least `by_size[k]` groups for a fact filed under `SIZE` + k (the last
    entry for any larger k, 0 for a fact filed under none); if `same_name`, only those that
    also meet one of the write's names; if `unless`, only those not filed under that term
    (docs/index.md)."""

    fields: tuple[str, ...]
    groups: tuple[Group, ...]
    at_least: int = 1
    same_name: bool = False
    unless: str | None = None
    by_size: tuple[int, ...] = ()

    def needs(self, size: int) -> int:
        """How many groups a fact filed under `SIZE` + `size` must meet."""
        sized = self.by_size[min(size, len(self.by_size) - 1)] if self.by_size else 0
        return max(1, self.at_least, sized)

    @property
    def counts(self) -> bool:
        """Answered by counting the groups each fact meets (`TermQuery.answer`), not by reading
        the postings of one word."""
        return self.at_least > 1 or self.same_name or bool(self.by_size)

    @property
    def sure(self) -> int:
        """Groups enough whatever a fact's size: no need to read it."""
        return max(1, self.at_least, *self.by_size)


def size_of(terms: Iterable[str]) -> int:
    """The size a fact is filed under (`SIZE`), from some of its terms: 0 if none, the least
    if several."""
    return min((int(t[len(SIZE) :]) for t in terms if t.startswith(SIZE)), default=0)


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


def groups_met_in(rows: Iterable[tuple[str, str]], ask: Ask) -> dict[str, set[int]]:
    """For each fact of `rows` (fact id, term), the groups of the ask one of its terms meets."""
    exact: dict[str, list[int]] = {}
    starts: dict[str, list[int]] = {}
    for g, group in enumerate(ask.groups):
        for word in group.exact:
            exact.setdefault(word, []).append(g)
        for word in group.ranges:
            starts.setdefault(word, []).append(g)
    # A word extends a start when its first len(start) characters are the start.
    lengths = sorted({len(start) for start in starts})
    longest = [math.inf if group.longest is None else group.longest for group in ask.groups]

    def groups_of(term: str) -> tuple[int, ...]:
        groups: list[int] = []
        for field in ask.fields:
            if not term.startswith(field):
                continue
            word = term[len(field) :]
            groups += exact.get(word, ())
            groups += (
                g
                for n in lengths
                if len(word) > n
                for g in starts.get(word[:n], ())
                if len(word) <= longest[g]
            )
        return tuple(groups)

    # The same words recur across the facts read: each term is matched once.
    known: dict[str, tuple[int, ...]] = {}
    met: dict[str, set[int]] = {}
    for fact_id, term in rows:
        groups = known.get(term)
        if groups is None:
            groups = known[term] = groups_of(term)
        if groups:
            met.setdefault(fact_id, set()).update(groups)
    return met
