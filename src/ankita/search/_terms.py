"""An in-memory copy of one user's postings of index terms, for candidate search at scale.

Loaded whole on first use, then caught up on every use from the store's log of changed facts
(`term_changes`), so writes by other processes are seen too. It answers the four reads of
postings that candidate search makes (`postings`, `counted`, `groups_met`, `filed_under`)
exactly as the store answers them (tests/test_term_query.py holds both to the definition),
without a statement.
"""

from __future__ import annotations

import time
from bisect import bisect_left, insort
from collections.abc import Iterator, Sequence

from ankita.store._ask import (
    SIZE,
    TOP,
    Ask,
    Group,
    reads,
    size_of,
)
from ankita.store._sql import SQLStore

# New terms wait in a small sorted list, merged into the large one when it holds this many:
# inserting into 400,000 sorted terms one at a time would move them all each time.
FRESH_MAX = 4096
# About how many terms one fact holds under one field (`groups_met` weighs its two ways by it).
SCAN_TERMS = 16


class TermIndex:
    """One user's postings: each term's facts, each fact's terms, and the terms in order."""

    def __init__(self, user: str, fresh_max: int = FRESH_MAX, scan_terms: int = SCAN_TERMS) -> None:
        self.user, self.fresh_max, self.scan_terms = user, fresh_max, scan_terms
        self.seq: int | None = None  # the last change read; None until loaded
        self.load_seconds = 0.0  # what the last full load took (`ankita bench` reports it)
        self.rollbacks = 0  # the store's count of rollbacks when last caught up
        self.version: int | None = None  # the store's `data_version` when last caught up
        self.number: dict[str, int] = {}  # fact id -> its number here
        self.ids: list[str] = []
        self.held: list[tuple[str, ...]] = []  # by fact number: its terms, in order
        # term -> the number of the one fact filed under it, or of each of several: four in
        # five terms have one fact, and an int is a fraction of a list's size.
        self.facts_of: dict[str, int | list[int]] = {}
        self._sorted: list[str] = []  # every term ever held, in code point order
        self._fresh: list[str] = []  # terms first held since `_sorted` was last merged

    @property
    def loaded(self) -> bool:
        return self.seq is not None

    def sync(self, store: SQLStore) -> None:
        """Catch up with the store: load it all the first time (or after a rollback of this
        connection, whose rows this copy may have read), else apply the facts changed since."""
        if self.seq is not None and self.rollbacks == store.rollbacks:
            # Read before the log: a commit in between is then read again next time.
            version = store.data_version()
            if version is not None and version == self.version and self._own_since(store):
                return
            self.version = version
            changes = store.term_changes(self.user, self.seq)
            if not changes:
                return
            if all(fact_id is not None for _, fact_id in changes):
                # Each fact as its last change left it: this connection's filing if it made
                # that change, else what the store holds now.
                last = {fact_id: seq for seq, fact_id in changes if fact_id is not None}
                own = store.own_filings
                terms = {
                    fact_id: set(own[seq][2])
                    for fact_id, seq in last.items()
                    if seq in own and own[seq][1] == fact_id
                }
                unknown = sorted(last.keys() - terms.keys())
                terms.update((fact_id, set()) for fact_id in unknown)
                for fact_id, term in store.terms_of(unknown) if unknown else ():
                    terms[fact_id].add(term)
                for fact_id, held in terms.items():
                    self._put(fact_id, held)
                self.seq = changes[-1][0]
                return
        self._load(store)

    def _own_since(self, store: SQLStore) -> bool:
        """No other connection has committed since the last catch-up, so every change since is
        this connection's: apply them from its own filings, if it holds each one."""
        assert self.seq is not None
        own, newest = store.own_filings, store.last_logged
        if newest <= self.seq:
            return True
        wanted = range(self.seq + 1, newest + 1)
        if any(seq not in own for seq in wanted):
            return False
        for seq in wanted:
            user, fact_id, terms = own[seq]
            if user == self.user:
                self._put(fact_id, set(terms))
        self.seq = newest
        return True

    def _load(self, store: SQLStore) -> None:
        # Read before the postings: a change made meanwhile is applied again, which is
        # harmless, rather than missed.
        start = time.perf_counter()
        version = store.data_version()
        seq, rollbacks = store.last_term_change(), store.rollbacks
        self.__init__(self.user, self.fresh_max, self.scan_terms)  # type: ignore[misc]
        held: dict[str, list[str]] = {}
        facts_of, number, ids, ordered = self.facts_of, self.number, self.ids, self._sorted
        for term, fact_id in store.user_terms(self.user):
            n = number.get(fact_id)
            if n is None:
                n = number[fact_id] = len(ids)
                ids.append(fact_id)
            if ordered and ordered[-1] == term:
                term = ordered[-1]  # one string for every posting of a term
                facts = facts_of[term]
                if isinstance(facts, int):
                    facts_of[term] = [facts, n]
                else:
                    facts.append(n)
            else:
                ordered.append(term)
                facts_of[term] = n
            held.setdefault(fact_id, []).append(term)  # in order, as read (`terms_of`)
        self.held = [tuple(held[fact_id]) for fact_id in ids]
        self.seq, self.rollbacks, self.version = seq, rollbacks, version
        self.load_seconds = time.perf_counter() - start

    def _put(self, fact_id: str, terms: set[str]) -> None:
        """Make the fact's postings these terms (none: it is gone)."""
        number = self.number.get(fact_id)
        if number is None:
            if not terms:
                return
            number = self.number[fact_id] = len(self.ids)
            self.ids.append(fact_id)
            self.held.append(())
        old = set(self.held[number])
        facts_of = self.facts_of
        for term in old - terms:
            facts = facts_of[term]
            if isinstance(facts, int):
                facts_of[term] = []
            else:
                facts.remove(number)
        for term in terms - old:
            known = facts_of.get(term)
            if known is None:  # a term never held before
                facts_of[term] = number
                self._add_term(term)
            elif isinstance(known, int):
                facts_of[term] = [known, number]
            else:
                known.append(number)
        self.held[number] = tuple(sorted(terms))

    def _facts(self, term: str) -> list[int]:
        facts = self.facts_of.get(term, [])
        return [facts] if isinstance(facts, int) else facts

    def _add_term(self, term: str) -> None:
        insort(self._fresh, term)
        if len(self._fresh) >= self.fresh_max:
            # Two sorted runs: the sort merges them in one pass.
            self._sorted = sorted(self._sorted + self._fresh)
            self._fresh = []

    def _between(self, low: str, high: str) -> Iterator[str]:
        """Every term held in [low, high), in no particular order."""
        for terms in (self._sorted, self._fresh):
            at = bisect_left(terms, low)
            while at < len(terms) and terms[at] < high:
                yield terms[at]
                at += 1

    # -- the reads of candidate search, as `_sql.SQLStore` answers them ---------------------

    def postings(
        self,
        user: str,
        terms: Sequence[str],
        ranges: Sequence[tuple[str, str, Sequence[str]]],
        found_terms: Sequence[str] = (),
    ) -> list[tuple[str, str | None, int]]:
        """As `SQLStore.postings`."""
        self._check(user)
        ids, facts = self.ids, self._facts
        found: set[int] = set()
        for term in found_terms:
            found.update(facts(term))
        rows: list[tuple[str, str | None, int]] = [(ids[n], None, -2) for n in found]
        for term in terms:
            rows += [(ids[n], term, -1) for n in facts(term)]
        for part, (low, high, excluded) in enumerate(ranges):
            skip = set(excluded)
            for term in self._between(low, high):
                if term not in skip:
                    rows += [(ids[n], term, part) for n in facts(term)]
        return rows

    def terms_of(
        self, ids: Sequence[str], fields: Sequence[str] | None = None
    ) -> list[tuple[str, str]]:
        """As `SQLStore.terms_of`."""
        number, held = self.number, self.held
        if fields is None:
            return [
                (fact_id, term)
                for fact_id in ids
                if fact_id in number
                for term in held[number[fact_id]]
            ]
        return [
            (fact_id, term)
            for fact_id in ids
            if fact_id in number
            for field in fields
            for term in _under(held[number[fact_id]], field)
        ]

    def groups_met(self, ids: Sequence[str], ask: Ask) -> dict[str, set[int]]:
        """As `SQLStore.groups_met`: from the postings of the ask's words, or from these
        facts' own terms under the ask's fields if they hold fewer."""
        number, facts, held = self.number, self._facts, self.held
        wanted = [number[i] for i in ids if i in number]
        groups_of: dict[str, list[int]] = {}
        for g, group in enumerate(ask.groups):
            for term in self._group_terms(ask.fields, group):
                groups_of.setdefault(term, []).append(g)
        met: dict[str, set[int]] = {}
        # A fact holds about a dozen terms under one field, and a common word's postings
        # run to thousands: read whichever side is fewer.
        if sum(len(facts(t)) for t in groups_of) > self.scan_terms * len(wanted) * len(ask.fields):
            asked = groups_of.keys()
            for n in wanted:
                got = set[int]()
                for field in ask.fields:
                    for term in asked & _under(held[n], field):
                        got.update(groups_of[term])
                if got:
                    met[self.ids[n]] = got
            return met
        numbers = set(wanted)
        for term, groups in groups_of.items():
            for n in numbers.intersection(facts(term)):
                met.setdefault(self.ids[n], set()).update(groups)
        return met

    def _group_terms(self, fields: Sequence[str], group: Group) -> set[str]:
        """The terms held that match one group under one of `fields` (`_ask.reads`)."""
        terms: set[str] = set()
        for field in fields:
            seeks, runs = reads(field, group)
            terms.update(t for t in seeks if t in self.facts_of)
            for run in runs:
                terms.update(t for t in self._between(run.low, run.high) if run.counts(t))
        return terms

    def filed_under(self, user: str, term: str, ids: Sequence[str]) -> set[str]:
        """As `SQLStore.filed_under`."""
        self._check(user)
        number, held = self.number, self.held
        return {i for i in ids if i in number and term in held[number[i]]}

    def counted(self, user: str, ask: Ask) -> set[str]:
        """As `SQLStore.counted`: facts filed under a field + a word of at least
        `ask.at_least` of the ask's groups."""
        self._check(user)
        if ask.at_least > len(ask.groups) or not ask.fields:
            return set()
        facts = self._facts
        groups = [self._group_terms(ask.fields, group) for group in ask.groups]
        # A fact meeting `at_least` of n groups meets one of any n - at_least + 1 of them:
        # gather from the rarest (prefix filtering), then count each gathered fact's groups.
        size = [sum(len(facts(t)) for t in terms) for terms in groups]
        order = sorted(range(len(groups)), key=size.__getitem__)
        gathered: set[int] = set()
        for g in order[: len(groups) - ask.at_least + 1]:
            for term in groups[g]:
                gathered.update(facts(term))
        held, ids, sure = self.held, self.ids, ask.sure
        found: set[str] = set()
        for n in gathered:
            met = sum(not terms.isdisjoint(held[n]) for terms in groups)
            # Its size is read only when it may matter (`Ask.by_size`).
            if met >= sure or met >= ask.needs(size_of(_under(held[n], SIZE))):
                found.add(ids[n])
        return found

    def sizes(self, ids: Sequence[str]) -> dict[str, int]:
        """As `SQLStore.sizes`."""
        number, held = self.number, self.held
        return {i: size_of(_under(held[number[i]], SIZE)) for i in ids if i in number}

    def _check(self, user: str) -> None:
        if user != self.user:
            raise ValueError(f"this index holds {self.user!r}'s postings, not {user!r}'s")


def _under(terms: tuple[str, ...], field: str) -> tuple[str, ...]:
    """One fact's terms under `field`: they are held in order, so those are one run, up to
    `field` + U+10FFFF (no word starts with that noncharacter)."""
    at = bisect_left(terms, field)
    return terms[at : bisect_left(terms, field + TOP, at)]
