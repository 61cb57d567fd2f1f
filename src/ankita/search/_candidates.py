"""Candidate search: the stored facts that could change one write's decision (docs/index.md).

The lexical tiers ask the terms table; the vector tier searches an in-memory matrix per model
(or pgvector), narrowed to the facts a cosine can decide against. `mode="exhaustive"` returns
every stored fact instead: the reference the index is tested and benchmarked against.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ankita._config import Settings
from ankita._models import Fact
from ankita.analysis._cues import core_size
from ankita.analysis._similarity import SHORT_LINK_SCORE
from ankita.search._index import (
    Field,
    Lookup,
    groups_needed,
    lookup_for,
    named_apart_under,
    other_people,
    short_partners,
    smallest_core,
    units,
)
from ankita.search._query import (
    Question,
    TermQuery,
)
from ankita.search._terms import TermIndex
from ankita.search._vectors import Narrow, Nearby, VectorIndex
from ankita.store._ask import (
    Ask,
    Group,
)
from ankita.store._sql import SQLStore

# Lookups read from the store before a user's postings are held in memory (mode "index"):
# loading them costs about as much as a few hundred lookups at 100,000 facts, which a process
# that writes once (a CLI call) never gets back.
LOAD_AFTER = 32
MODES = ("index", "memory", "store", "exhaustive")


class CandidateSearch:
    """One user's candidate search, holding that user's in-memory vector indexes."""

    def __init__(self, user: str, settings: Settings, mode: str = "index") -> None:
        self.user, self.settings, self.mode = user, settings, mode
        self.vector_indexes: dict[str, VectorIndex] = {}
        self.terms = TermIndex(user)
        self.lookups = 0

    def candidates(
        self,
        store: SQLStore,
        text: str,
        kind: str,
        probes: Sequence[list[float]],
        model: str | None,
    ) -> list[Fact]:
        """The stored facts that could change this write's decision (docs/index.md)."""
        if self.mode == "exhaustive":
            return store.list_facts(self.user, statuses=("active", "superseded"), links=False)
        # What each unit of the text asks, worked out once for both tiers.
        lookups = tuple(lookup_for(unit) for unit in units(text))
        query = self._query(text, lookups, kind)
        source = self._postings(store)
        ids = query.answer(
            source.postings(self.user, query.terms, query.ranges, query.found_terms),
            lambda ask: source.counted(self.user, ask),
            source.groups_met,
            lambda term, ids: source.filed_under(self.user, term, ids),
            source.sizes,
        )
        apart = named_apart_under(text) if self.settings.detect_disagreement else None
        if apart and ids:
            # About another named person: a plain create, so not read (`_gates.named_apart`).
            ids -= {i for i, term in source.terms_of(sorted(ids), (Field.SUBJECT,)) if apart(term)}
        if not (probes and model):
            return store.facts_by_ids(self.user, sorted(ids), links=False)
        lookup = lookups[0]  # the whole text's
        merge_line, line = self.settings.cosine_lines(model, kind)
        # Below the merge line, cosine decides only between facts of one kind: as a conflict
        # by itself when the disagreement check is off, else as the frame of a negation,
        # opposites or a change of state (`polar_cue`). A fact that negates or states a change
        # may meet almost any stored fact; any other meets only one that does, or that holds
        # an opposite of one of its words (docs/index.md).
        # A fact about someone else never decides by its cosine (`other_subjects`).
        detect = self.settings.detect_disagreement
        narrow = Narrow(
            merge_line - 1e-4,
            kind,
            frozenset(Field.OPPOSITE + w for w in lookup.opposed),
            every=lookup.shifts or not detect,
            drop=other_people(text) if detect else frozenset(),
        )
        # A hair below the lines: float32 search must not lose a pair the exact cosine keeps.
        near = self._similar(store, model, probes, line - 1e-4, narrow)
        ids |= {i for i, cos in near.items() if cos >= narrow.line}
        return [
            f
            for f in store.facts_by_ids(self.user, sorted(ids | near.keys()), links=False)
            if f.id in ids or f.kind == kind
        ]

    def query(self, text: str, kind: str) -> TermQuery:
        """What the lexical tiers ask the index for this text: built from the text alone."""
        return self._query(text, tuple(lookup_for(unit) for unit in units(text)), kind)

    def _query(self, text: str, lookups: tuple[Lookup, ...], kind: str) -> TermQuery:
        # Each clause of a chat turn may decide against a clause of a stored fact. A clause
        # keeps its own core; the whole text may be compared through any of its parts.
        cores = (smallest_core(text), *(core_size(unit) for unit in units(text)[1:]))
        return TermQuery(
            tuple(
                self._question(lookup, kind, core)
                for lookup, core in zip(lookups, cores, strict=True)
            )
        )

    def _postings(self, store: SQLStore) -> SQLStore | TermIndex:
        """Where this lookup reads postings: the in-memory copy, caught up, once it pays."""
        self.lookups += 1
        if self.mode == "store" or (
            self.mode == "index" and self.lookups <= LOAD_AFTER and not self.terms.loaded
        ):
            return store
        self.terms.sync(store)
        return self.terms

    def related(
        self, store: SQLStore, kind: str, probes: Sequence[list[float]], model: str, count: int
    ) -> list[Fact]:
        """Active facts of `kind` among which are the `count` closest in meaning to the probes
        at or above the judge's floor: a superset, which the caller ranks by exact cosine."""
        if self.mode == "exhaustive":
            return store.list_facts(self.user, kinds=[kind], links=False)
        floor = self.settings.judge_floor
        served = [store.closest(self.user, model, p, kind, floor, count) for p in probes]
        if all(ids is not None for ids in served):
            found = sorted(set().union(*(ids for ids in served if ids is not None)))
            return store.facts_by_ids(self.user, found, links=False)
        index, wanted = self._vector_index(store, model), count
        while True:
            found = index.closest(probes, kind, floor, wanted)
            facts = [
                f for f in store.facts_by_ids(self.user, found, links=False) if f.status == "active"
            ]
            # Rows of other statuses may fill the best `wanted`: look further until `count`
            # active ones are in hand or the index has no more.
            if len(facts) >= count or len(found) < wanted:
                return facts
            wanted *= 4

    def _question(self, lookup: Lookup, kind: str, core: int = 0) -> Question:
        """The lexical tiers for one text (its `lookup_for`), whose parts keep at least `core`
        words (0 asks as if they were short): what to ask for the stored facts filed under a
        term that could change its decision (docs/index.md)."""
        groups = lookup.groups
        dedup, conflict_line = self.settings.thresholds(kind)
        # Frames of long facts need more than two shared words to reach the line, and more
        # the longer the stored fact (`groups_needed`); an opposite pair is a finding of its
        # own, so a text holding an opposite keeps asking for two.
        sized = () if lookup.opposed_slot else groups_needed(core, conflict_line)
        partners = (
            ()
            if lookup.short is None or conflict_line <= 0
            else short_partners(lookup.short, lookup.shifts, conflict_line)
        )
        short = tuple(Field.short(c) for c in partners)
        asks = [Ask(("",), (Group(lookup.specific, frozenset()),))]
        # An ending meets the fact asserting what ended on one shared word, either way round.
        # (two endings never meet so: `_change.ended_said` needs a change on one side only).
        asks.append(
            Ask((Field.WORD,), groups, unless=Field.ENDS)
            if lookup.ends
            else Ask((Field.ENDS,), groups)
        )
        names: list[Ask] = []
        if not (
            self.settings.detect_disagreement and conflict_line >= 0.5 and dedup > SHORT_LINK_SCORE
        ):
            # Outside the bounds docs/index.md proves for: every fact sharing a word.
            asks.append(Ask((Field.WORD,), groups))
        elif not lookup.named and not lookup.name_bound:
            # Two shared words, or one with a short fact of a partner class.
            asks += [Ask((Field.WORD,), groups, 2, by_size=sized), Ask(short, groups)]
        else:
            # A fact holding a name this one lacks, while this one holds a name it lacks, is
            # about something else: it counts only if it holds one of our names, we hold
            # one of its names, or it could reach the merge line on shared words alone.
            # The rule holds between named facts (filed without `o:`), and between two facts
            # that are `name_bound`; a named change that replaces a value ("My friend Kalo
            # moved to Lyon") may still meet a named fact that is not ("My friend is called
            # Zeni"), through a change-of-state finding.
            unless = Field.NAME_BOUND if lookup.name_bound else None
            words, shorts = (
                ((Field.OPEN_WORD,), tuple(Field.short(c, True) for c in partners))
                if lookup.named
                else ((Field.WORD,), short)
            )
            asks += [
                Ask(words, groups, 2, unless=unless, by_size=sized),
                Ask(shorts, groups, unless=unless),
            ]
            # One of its names is one of our words, or one of ours one of its words: that
            # name is a shared word, and the rule of two shared words (or one with a short
            # partner) still holds.
            names = [Ask((Field.NAME,), groups), Ask((Field.WORD,), lookup.name_groups)]
            asks += [
                Ask((Field.WORD,), groups, 2, same_name=True, by_size=sized),
                Ask(short, groups, same_name=True),
            ]
            # Its name extends our initials ("UK"), or one of our names may be an acronym of
            # its capitalised words: such a name shares no word, so every one counts.
            asks += [
                Ask((Field.NAME,), lookup.initials_groups),
                Ask((Field.INITIALS,), lookup.acronym_groups),
            ]
            # Jaccard >= dedup with a word apart on each side needs this many shared words.
            if dedup < 1:
                asks.append(
                    Ask((Field.WORD,), groups, max(2, math.ceil(2 * dedup / (1 - dedup) - 1e-9)))
                )
        # A fact that only ends something makes no `value` finding with another such fact.
        return Question(
            tuple(asks),
            tuple(names),
            lookup.slots,
            (Field.SLOT,) if lookup.ends else (Field.SLOT, Field.ENDED_SLOT),
        )

    def plan(
        self, store: SQLStore, model: str, probe_sets: Sequence[Sequence[list[float]]]
    ) -> None:
        """The probes of the writes about to come, in order (an import batch), so that the
        in-memory search scores several in one pass; an empty list ends the plan."""
        if not probe_sets:
            if model in self.vector_indexes:
                self.vector_indexes[model].plan([])
        elif self.mode == "index" and not store.searches_vectors:
            self._vector_index(store, model).plan(probe_sets)

    def nearby(self, store: SQLStore, model: str, vector: list[float], floor: float) -> Nearby:
        """Every stored fact's cosine with `vector`, read through `floor` (for recall)."""
        found = store.nearest(self.user, model, vector, floor)
        if found is not None:
            return Nearby.of(found)
        return self._vector_index(store, model).nearby(vector, floor)

    def _similar(
        self,
        store: SQLStore,
        model: str,
        vectors: Sequence[list[float]],
        line: float,
        narrow: Narrow | None = None,
    ) -> dict[str, float]:
        """Stored facts whose vector has cosine >= line with any of `vectors`, and the highest
        such cosine; with `narrow`, below its line only those it lets through, or a superset.
        Searched by the database when it can (pgvector), else in an in-memory matrix kept in
        step with the store."""
        found: dict[str, float] = {}
        for vector in vectors:
            near = store.nearest(self.user, model, vector, line)
            if near is None:
                return self._vector_index(store, model).above(vectors, line, narrow)
            for fact_id, cos in near.items():
                found[fact_id] = max(cos, found.get(fact_id, cos))
        if narrow is None or (narrow.every and not narrow.drop):
            return found  # the caller keeps only facts of its kind
        # The flag and tags that the in-memory index keeps beside its rows, read for these.
        terms = store.terms_under(
            self.user, (Field.POLAR, Field.OPPOSITE, Field.SUBJECT), list(found)
        )
        dropped = {i for i, term in terms if term in narrow.drop}
        let = {i for i, term in terms if term == Field.POLAR or term in narrow.tags}
        return {
            i: cos
            for i, cos in found.items()
            if i not in dropped and (cos >= narrow.line or narrow.every or i in let)
        }

    def _vector_index(self, store: SQLStore, model: str) -> VectorIndex:
        index = self.vector_indexes.get(model)
        if index is None:
            index = self.vector_indexes[model] = VectorIndex(
                self.user, model, flag=Field.POLAR, tag_prefixes=(Field.OPPOSITE, Field.SUBJECT)
            )
        index.sync(store)
        return index
