"""One write's questions to the term index (`Question`), answered from a store's sorted postings
(`TermQuery`): which facts meet at least so many groups of the new fact's words."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ankita.analysis._slots import (
    NARROW,
)
from ankita.search._index import Field
from ankita.store._ask import TOP, Ask, Run, reads


@dataclass(frozen=True)
class Question:
    """Everything one text asks the index (`_candidates`): facts answering one of `asks`, where
    an ask marked `same_name` counts only facts that answer one of `names` (whose `unless` is
    not read); and facts filed under `<field><key>#<tag>`, for one of `slot_fields` and one of
    `slots`' keys, with a tag that is not one of its words (after the `NARROW` mark, which
    does not count when the key is marked wide)."""

    asks: tuple[Ask, ...]
    names: tuple[Ask, ...] = ()
    slots: tuple[tuple[str, frozenset[str], bool], ...] = ()
    slot_fields: tuple[str, ...] = (Field.SLOT, Field.ENDED_SLOT)


class TermQuery:
    """The facts that answer some questions (`answer`).

    Three ways, each the cheapest for its asks:
    - every ask of one word, every name and every slot: one read of postings (`terms`,
      `ranges`), so that the statements are few and their shapes alike from write to write
      (the driver prepares each once), and each term is read once however many asks hold it;
    - an ask that counts words: counted by the store, one statement each, since a common
      word's postings are many and their count few;
    - an ask that counts only facts answering a name: from every term of those few facts.
    An ask's `unless` is read last, for the facts only such asks found: a flag may be filed by
    many facts, and few of them are candidates.

    What a posting of the read answers is a target: `FOUND` (the fact is a candidate), q >= 0
    (it answers a name of question q), or `unless_flag(k)`: a candidate unless filed under the
    k-th term of `flags`.
    """

    FOUND = -1

    @staticmethod
    def unless_flag(k: int) -> int:
        """The target "a candidate unless filed under the k-th flag": -2, -3, ..., below FOUND."""
        return -2 - k

    @staticmethod
    def flag_of(target: int) -> int:
        """Which flag an `unless_flag` target names."""
        return -2 - target

    def __init__(self, questions: tuple[Question, ...]) -> None:
        self.questions = questions
        exact: dict[str, set[int]] = {}
        # (low, high) -> (target, the run whose terms count, else every term but those
        # ending in one of these after `low`)
        ranges: dict[tuple[str, str], list[tuple[int, Run | None, frozenset[str]]]] = {}
        # Each term some ask must not be filed under.
        self.flags = sorted({a.unless for q in questions for a in q.asks if a.unless is not None})
        for q, question in enumerate(questions):
            asks = [
                *(
                    (
                        self.FOUND
                        if a.unless is None
                        else self.unless_flag(self.flags.index(a.unless)),
                        a,
                    )
                    for a in question.asks
                ),
                *((q, a) for a in question.names),
            ]
            for target, ask in asks:
                if ask.counts:
                    continue  # answered another way (`answer`)
                for field in ask.fields:
                    for group in ask.groups:
                        seeks, runs = reads(field, group)
                        for term in seeks:
                            exact.setdefault(term, set()).add(target)
                        for run in runs:
                            ranges.setdefault((run.low, run.high), []).append(
                                (target, run, frozenset())
                            )
            for key, words, wide in question.slots:
                # Every tag of the key but our words' (a slot asked twice: either's rule);
                # only those of wide frames, which sort before the narrow ones, if `wide`.
                # Kept as tags, not terms: one set serves every field.
                skip = words if wide else words.union([NARROW + w for w in words])
                for field in question.slot_fields:
                    head = f"{field}{key}#"
                    ranges.setdefault((head, head + (NARROW if wide else TOP)), []).append(
                        (self.FOUND, None, skip)
                    )
        # Postings of a term that only finds candidates are read without the term: the store
        # returns each fact once, however many such terms it is filed under.
        self.found_terms = sorted(t for t, targets in exact.items() if targets == {self.FOUND})
        self.terms = sorted(t for t, targets in exact.items() if targets != {self.FOUND})
        self._exact = {term: tuple(exact[term]) for term in self.terms}
        keys = sorted(ranges)
        self._range_rules = [ranges[key] for key in keys]
        # With each range, the terms the store may leave out: those every rule of it excludes
        # (a slot key's tags that are our words), so that their postings are not read.
        self.ranges = [
            (low, high, _excluded(low, rules))
            for (low, high), rules in zip(keys, self._range_rules, strict=True)
        ]

    def answer(
        self,
        rows: list[tuple[str, str | None, int]],
        count: Callable[[Ask], set[str]],
        groups_met: Callable[[list[str], Ask], dict[str, set[int]]],
        filed: Callable[[str, list[str]], set[str]],
        sizes: Callable[[list[str]], dict[str, int]],
    ) -> set[str]:
        """The facts answering the questions, from every (fact id, term, part) the store read:
        part -2 for one of `found_terms`, -1 for one of `terms`, else the number of the range
        in `ranges` (whose excluded terms it may or may not have left out). `count` asks the
        store for the facts meeting an ask that counts words, `groups_met` for the groups of an
        ask that each of some facts meets, `filed` for those of some facts filed under a
        term, `sizes` for the size some facts are filed under (`Ask.by_size`)."""
        found: set[str] = set()
        names: list[set[str]] = [set() for _ in self.questions]
        # For each flag: the candidates unless filed under it.
        unless: list[set[str]] = [set() for _ in self.flags]
        for fact_id, term, part in rows:
            if term is None:  # part -2
                found.add(fact_id)
                continue
            if part < 0:
                targets: Iterable[int] = self._exact.get(term, ())
            else:
                cut = len(self.ranges[part][0])  # a slot's tag follows its range's low
                targets = [
                    t
                    for t, run, skip in self._range_rules[part]
                    if (run.counts(term) if run else term[cut:] not in skip)
                ]
            for target in targets:
                (
                    found
                    if target == self.FOUND
                    else names[target]
                    if target >= 0
                    else unless[self.flag_of(target)]
                ).add(fact_id)
        for q, question in enumerate(self.questions):
            named = names[q]
            for ask in question.names:
                if ask.at_least > 1:
                    named |= _meeting({}, ask, count, sizes)
            # An ask marked same_name counts only facts that answer a name.
            ids = sorted(named)
            for ask in question.asks:
                if ask.counts:
                    met = _meeting(
                        groups_met(ids, ask) if ask.same_name and ids and ask.fields else {},
                        ask,
                        count,
                        sizes,
                    )
                    (found if ask.unless is None else unless[self.flags.index(ask.unless)]).update(
                        met
                    )
        for flag, maybe in zip(self.flags, unless, strict=True):
            maybe -= found
            if maybe:
                found |= maybe - filed(flag, sorted(maybe))
        return found


def _excluded(low: str, rules: list[tuple[int, Run | None, frozenset[str]]]) -> list[str]:
    if len(rules) == 1:  # most ranges: one slot key, or one word's run
        return [] if rules[0][1] is not None else [low + t for t in sorted(rules[0][2])]
    if any(run is not None for _, run, _ in rules):
        return []
    return [low + t for t in sorted(frozenset.intersection(*(skip for _, _, skip in rules)))]


def _meeting(
    groups_of: dict[str, set[int]],
    ask: Ask,
    count: Callable[[Ask], set[str]],
    sizes: Callable[[list[str]], dict[str, int]],
) -> set[str]:
    """The facts meeting the ask: those among `groups_of` (each fact's groups met) that met
    enough, or, for an ask that counts words with no `groups_of` given, the store's count."""
    if ask.same_name:
        least, sure = max(1, ask.at_least), ask.sure
        met = {f for f, groups in groups_of.items() if len(groups) >= least}
        # A fact's size is read only where it may matter: few of the facts named.
        unsure = sorted(f for f in met if len(groups_of[f]) < sure)
        if unsure:
            size = sizes(unsure)
            met.difference_update(
                f for f in unsure if len(groups_of[f]) < ask.needs(size.get(f, 0))
            )
        return met
    return count(ask) if ask.at_least <= len(ask.groups) and ask.fields else set()
