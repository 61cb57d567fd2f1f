"""The write: one new fact compared with the stored facts that could matter, then merged,
created flagged, or created (SPEC §4), inside one transaction."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, NamedTuple

from ankita._config import Settings
from ankita._errors import EmbedderError, JudgeError
from ankita._merge_check import best_first, unless_contradicted
from ankita._missing import array_of, cosine_with, dimension_error, pack_vector
from ankita._models import Action, Fact, Status, WriteResult
from ankita._multilingual import MultilingualSpace
from ankita._novelty import WordNovelty
from ankita._parses import keep_new, read_stored
from ankita.analysis._comparison import (
    CONFLICT,
    MERGE,
    Comparison,
    cleared,
    judge_asks,
    judge_read,
    judged,
)
from ankita.analysis._decision import compare_texts
from ankita.analysis._gates import named_apart
from ankita.analysis._profile import Text, profile_of
from ankita.analysis._similarity import match_words
from ankita.analysis._standing import POSSIBLE, SURE, UNRELATED, standing
from ankita.analysis._text import content_words, sentences
from ankita.embed._embedders import Embedder
from ankita.embed._judge import ContradictionJudge
from ankita.search._candidates import CandidateSearch
from ankita.search._index import index_terms
from ankita.store._sql import SQLStore


@dataclass(frozen=True)
class NewFact:
    """One write's input, validated, with its vectors (the text's and each sentence's) or
    why the embedder gave none."""

    text: str
    kind: str
    pinned: bool
    source: str | None
    vector: list[float] | None = None
    parts: Sequence[list[float]] = ()
    embedding_error: str | None = None
    # Its vector in the multilingual space, when the store uses one (docs/languages.md).
    other_space: list[float] | None = None


class Step(NamedTuple):
    """Where and when one write happens: its transaction's store, its operation id and time,
    and the embedder's model (None without one)."""

    store: SQLStore
    op: str
    at: str
    model: str | None


def now_iso(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(timezone.utc).isoformat(timespec="microseconds")


class Writer:
    """Writes one user's facts: embeds them, compares, and records each decision."""

    def __init__(
        self,
        user: str,
        settings: Settings,
        store: SQLStore,
        search: CandidateSearch,
        embedder: Embedder | None,
        judge: ContradictionJudge | None,
        clock: Callable[[], datetime],
    ) -> None:
        self.user, self.settings, self.store, self.search = user, settings, store, search
        self.embedder, self.judge, self.clock = embedder, judge, clock
        self.multilingual: MultilingualSpace | None = None
        self.novelty = WordNovelty(embedder) if embedder is not None else None

    def _compare(
        self,
        new: Text,
        kind: str,
        old: Text,
        old_kind: str,
        cos: float | None,
        model: str | None,
        analyse_all: bool = False,
    ) -> Comparison:
        return compare_texts(
            new, kind, old, old_kind, self.settings, cos, model, analyse_all, self.novelty
        )

    def embed(self, text: str) -> tuple[list[float] | None, list[list[float]], str | None]:
        """(vector, its sentences' vectors, None) or (None, [], why): a failing provider never
        blocks a write. A text of several sentences (a chat turn) also gets one vector per
        sentence, so a fact restated in one of them is not diluted by the rest."""
        if self.embedder is None:
            return None, [], None
        try:
            vectors = self.embedder.embed_checked([text, *sentences(text)])
        except EmbedderError as exc:
            return None, [], str(exc)
        return vectors[0], vectors[1:], None

    def _new_id(self) -> str:
        while True:
            fact_id = secrets.token_hex(8)
            if not self.store.id_exists(fact_id):
                return fact_id

    def write(self, new: NewFact) -> WriteResult:
        """Compare the new fact with the stored ones that could matter, then merge it, create
        it flagged against the closest few it conflicts with, or create it."""
        model = self.embedder.model_id if self.embedder is not None else None
        if new.vector is not None and model:
            wrong = dimension_error(self.store, model, [new.vector, *new.parts])
            if wrong is not None:
                new = replace(new, vector=None, embedding_error=wrong)
        text, kind, vector, embedding_error = new.text, new.kind, new.vector, new.embedding_error
        probes = [vector, *new.parts] if vector is not None else []
        judge_error: str | None = None
        with self.store.transaction(self.user) as store:
            step = Step(store, uuid.uuid4().hex, now_iso(self.clock), model)
            stored = self.search.candidates(store, text, kind, probes, model)
            # Their parses, read back before a comparison could parse them again (`_parses`).
            kept = read_stored(store, stored)
            vectors = (
                store.vectors_of([f.id for f in stored], model)
                if vector is not None and model
                else {}
            )
            scored: list[tuple[Comparison, Fact]] = []
            # Analysed once here and passed down; stored facts' profiles are kept between writes.
            profile = profile_of(text)
            space, other = self.multilingual, new.other_space
            # Each candidate's cosine in the multilingual space; its nearest facts there join
            # the candidates (no word need be shared).
            across = (
                space.cosines(store, self.search, kind, other, stored)
                if space is not None and other is not None
                else {}
            )
            arrays = [array_of(p) for p in probes]  # converted once, not per candidate
            detect = self.settings.detect_disagreement
            for fact in stored:
                old = profile_of(fact.text)
                # Two people named apart: a plain create, which only the closest fact's
                # reason would show (docs/index.md), at about a third of a stream's pairs.
                if detect and named_apart(old, profile):
                    continue
                blob = vectors.get(fact.id)
                cos = cosine_with(arrays, blob) if arrays and blob else None
                pair_model = model
                if fact.id in across and (profile.language, old.language) != ("en", "en"):
                    # A pair the English model cannot read: the multilingual cosine decides.
                    cos, pair_model = across[fact.id], space.model  # type: ignore[union-attr]
                scored.append(
                    (
                        self._compare(profile, kind, old, fact.kind, cos, pair_model),
                        fact,
                    )
                )
            merges = best_first([(c, f) for c, f in scored if c.action == MERGE])
            best = merges[0] if merges else None
            if merges and self.judge is not None and arrays and model:
                best, refused, judge_error = unless_contradicted(
                    self.judge, self.settings, text, merges
                )
                gone = {f.id for _, f in refused}
                scored = [cf for cf in scored if cf[1].id not in gone] + refused
            flagged: list[tuple[Comparison, Fact]] = []
            written: list[tuple[str, str]] = []
            if best is not None:
                result = self._merge(step, new, *best)
            else:
                # Superseded facts are history: a new fact is not flagged against them.
                flagged = [
                    (c, f) for c, f in scored if c.action == CONFLICT and f.status == "active"
                ]
                if self.judge is not None and arrays and model:
                    found, error = self._judged(store, text, kind, probes, arrays, model)
                    flagged, judge_error = flagged + found, judge_error or error
                # The closest few only: a question about dozens of facts is no question, and
                # a templated import would otherwise link every line to every other.
                # Ties go to the newest fact (what the user said last), then the id.
                flagged = sorted(flagged, key=lambda cf: (cf[1].created_at, cf[1].id), reverse=True)
                flagged = sorted(flagged, key=lambda cf: (-cf[0].frame_score, -cf[0].score))[
                    : self.settings.max_conflicts
                ]
                # A fact the judge flagged may be no candidate: its parse, before its standing.
                candidates = {f.id for f in stored}
                kept |= read_stored(store, [f for _, f in flagged if f.id not in candidates])
                result = self._create(step, new, flagged, scored)
                written = [(result.fact.id, text)]
            # Every fact this write parsed keeps its parse, flagged or not: one in its life.
            compared = {f.id: f.text for f in stored} | {f.id: f.text for _, f in flagged}
            keep_new(store, [*written, *compared.items()], kept)
        if judge_error is not None:
            result = replace(
                result,
                reason=f"{result.reason}; the contradiction judge failed "
                f"({judge_error}), so the rules alone decided",
            )
        if embedding_error is None:
            return result
        return replace(
            result,
            embedding_error=embedding_error,
            reason=f"{result.reason}; the embedder failed ({embedding_error}), so "
            "scores are lexical and `ankita reindex` will embed it later",
        )

    def embed_across(
        self, texts: Sequence[str], elsewhere: bool = False
    ) -> list[list[float] | None]:
        """The texts' vectors in the multilingual space, where the store needs them; in
        another thread (`elsewhere`) the store's use of it is read as last known."""
        space = self.multilingual
        store = None if elsewhere else self.store
        if space is None or not any(space.wanted(store, t) for t in texts):
            return [None] * len(texts)
        return space.vectors(texts)

    def _judged(
        self,
        store: SQLStore,
        text: str,
        kind: str,
        probes: Sequence[list[float]],
        arrays: Sequence[Any],
        model: str,
    ) -> tuple[list[tuple[Comparison, Fact]], str | None]:
        """The facts closest in meaning that the rules left apart, flagged where the
        contradiction judge reads a contradiction (docs/decisions.md); and its error, if any."""
        assert self.judge is not None
        count = self.settings.judge_candidates
        related = self.search.related(store, kind, probes, model, count)
        blobs = store.vectors_of([f.id for f in related], model)
        # The exact cosine ranks them, ties by id: the same few in both candidate searches.
        near = sorted(
            ((cosine_with(arrays, blobs[f.id]), f) for f in related if f.id in blobs),
            key=lambda cf: (-cf[0], cf[1].id),
        )
        asked = []
        for cos, fact in near[:count]:
            # The whole analysis (as `compare` runs it): whether the judge reads a pair depends
            # on findings that the write's shortcut may have skipped; the action is the same.
            comparison = self._compare(text, kind, fact.text, fact.kind, cos, model, True)
            if judge_asks(comparison, self.settings):
                asked.append((comparison, fact))
        if not asked:
            return [], None
        try:
            probabilities = self.judge.contradiction([(f.text, text) for _, f in asked])
        except JudgeError as exc:
            return [], str(exc)
        read = [
            (judged(c, p, self.settings), f) for (c, f), p in zip(asked, probabilities, strict=True)
        ]
        return [(c, f) for c, f in read if c.action == CONFLICT], None

    def _standing(
        self, comparison: Comparison, new: NewFact, other: Fact, model: str | None
    ) -> tuple[str, str]:
        """Whether a flag is a sure or a possible conflict, or none at all
        (`analysis._standing.standing`), and why not, when the judge cleared it; with the
        disagreement checks off (SPEC's plain rules) every flag is sure."""
        if not self.settings.detect_disagreement:
            return SURE, ""
        if not comparison.findings:
            # The write's shortcut may stop at the first finding a clause gives: read them all.
            full = self._compare(
                new.text, new.kind, other.text, other.kind, comparison.cosine, model, True
            )
            comparison = replace(comparison, findings=full.findings)
        found = standing(comparison, new.text, other.text)
        if found != POSSIBLE or self.judge is None or not model or judge_read(comparison):
            return found, ""
        # The judge reads only where an embedder is configured (as it does to flag); a
        # possible flag it reads as compatible, in both orders, is no conflict at all.
        try:
            (p,) = self.judge.contradiction([(other.text, new.text)])
        except JudgeError:  # a failing judge never blocks a write: the flag stays possible
            return found, ""
        why = cleared(p, self.settings)
        return (UNRELATED if why else found), why

    def _create(
        self,
        step: Step,
        new: NewFact,
        flagged: list[tuple[Comparison, Fact]],
        scored: list[tuple[Comparison, Fact]],
    ) -> WriteResult:
        store, op, at, model = step
        text, kind, pinned, source, vector = new.text, new.kind, new.pinned, new.source, new.vector
        fact_id = self._new_id()
        # Sure conflicts raise recall's notice; possible ones are kept for review only.
        read, judged_apart = [], ""
        for c, o in flagged:
            band, why = self._standing(c, new, o, model)
            read.append((c, o, band))
            judged_apart = judged_apart or why
        sure = [(c, o) for c, o, band in read if band == SURE]
        possible = [(c, o) for c, o, band in read if band == POSSIBLE]
        links = tuple(sorted(other.id for _, other in sure))
        # The fact as stored, links included: nothing else writes it inside this transaction.
        fact = Fact(
            id=fact_id,
            text=text,
            kind=kind,
            user=self.user,
            pinned=pinned,
            status=Status.ACTIVE,
            source=source,
            created_at=at,
            updated_at=at,
            last_confirmed_at=at,
            mentions=1,
            conflicts_with=links,
        )
        store.insert_fact(fact, index_terms(text))
        if vector is not None and model:
            store.put_vector(fact_id, model, pack_vector(vector), len(vector))
        self._put_across(store, fact_id, new.other_space)
        best: Comparison | None
        if sure:
            best = max(sure, key=lambda cf: cf[0].score)[0]
            action, reason = Action.CONFLICT, best.reason
        elif possible:
            best = max(possible, key=lambda cf: cf[0].score)[0]
            action = Action.CREATED
            reason = f"a possible conflict, kept for review and not asked about: {best.reason}"
        else:
            best = max(scored, key=lambda cf: cf[0].score)[0] if scored else None
            action = Action.CREATED
            reason = best.reason if best else "no stored fact is close enough to compare with"
            if read:  # flags the parser found about different things, or the judge compatible
                reason = f"no conflict: {read[0][0].reason}, but " + (
                    judged_apart
                    or "the two say nothing of one subject about one thing (a word mentioned, "
                    "not negated of it)"
                )
        event_id = store.add_event(
            self.user,
            op,
            "create",
            fact_id,
            None,
            at,
            {"text": text, "kind": kind, "pinned": pinned, "source": source, "reason": reason},
        )
        for comparison, other, band in read:
            if band == UNRELATED:
                continue
            is_possible = band == POSSIBLE
            store.add_link(self.user, fact_id, other.id, at, not is_possible)
            store.add_event(
                self.user,
                op,
                "link",
                fact_id,
                other.id,
                at,
                {
                    "score": comparison.score,
                    "method": comparison.method,
                    "reason": comparison.reason,
                    **({"possible": True} if is_possible else {}),
                },
            )
        return WriteResult(
            action=action,
            fact=fact,
            merged_into=None,
            conflicts_with=links,
            possible_conflicts=tuple(sorted(other.id for _, other in possible)),
            score=best.score if best else 0.0,
            method=best.method if best else "lexical",
            reason=reason,
            event_id=event_id,
        )

    def _merge(self, step: Step, new: NewFact, comparison: Comparison, fact: Fact) -> WriteResult:
        store, op, at, model = step
        text, pinned, source, vector = new.text, new.pinned, new.source, new.vector
        old_words = content_words(fact.text)

        def says_more(phrasing: str) -> bool:
            words = content_words(phrasing)
            return len(words) > len(old_words) and len(match_words(old_words, words)) == len(
                old_words
            )

        # The text grows only when the new phrasing says everything the old one did, and more,
        # within one sentence: of a chat turn, only the sentence that restates the fact is kept.
        grown = next((p for p in (sentences(text) or (text,)) if says_more(p)), None)
        event_id = store.add_event(
            self.user,
            op,
            "merge",
            fact.id,
            None,
            at,
            {
                "phrasing": text,
                "source": source,
                "score": comparison.score,
                "method": comparison.method,
                "reason": comparison.reason,
                "confirmed_before": fact.last_confirmed_at,
                "updated_before": fact.updated_at,
                "confirmed_after": at,
            },
        )
        store.update_fact(fact.id, mentions=fact.mentions + 1, last_confirmed_at=at, updated_at=at)
        if grown is not None:
            store.update_fact(fact.id, index_terms(grown), text=grown)
            store.add_event(
                self.user,
                op,
                "text_change",
                fact.id,
                None,
                at,
                {"before": fact.text, "after": grown},
            )
            # Changing the text dropped its vectors; the new phrasing's vector fits only if it
            # is the whole new text.
            if vector is not None and model and grown == text:
                store.put_vector(fact.id, model, pack_vector(vector), len(vector))
            if grown == text:
                self._put_across(store, fact.id, new.other_space)
        if pinned and not fact.pinned:
            store.update_fact(fact.id, pinned=True)
            store.add_event(self.user, op, "pin", fact.id, None, at, {})
        reason = comparison.reason
        if fact.status == "superseded":
            # The user changed their mind back: active again, and the store asks once more.
            store.update_fact(fact.id, status="active")
            store.add_event(self.user, op, "reactivate", fact.id, None, at, {})
            for other in self.replacements(store, fact.id):
                if store.add_link(self.user, fact.id, other, at):
                    store.add_event(
                        self.user,
                        op,
                        "link",
                        fact.id,
                        other,
                        at,
                        {"reason": "reactivated fact conflicts with its replacement"},
                    )
            reason += "; it had been superseded, so it is active again and flagged"
        merged = store.get_fact(self.user, fact.id)
        assert merged is not None
        return WriteResult(
            action=Action.MERGED,
            fact=merged,
            merged_into=fact.id,
            conflicts_with=merged.conflicts_with,
            score=comparison.score,
            method=comparison.method,
            reason=reason,
            event_id=event_id,
        )

    def _put_across(self, store: SQLStore, fact_id: str, vector: list[float] | None) -> None:
        if vector is not None and self.multilingual is not None:
            store.put_vector(fact_id, self.multilingual.model, pack_vector(vector), len(vector))
            self.multilingual.mark_used()

    def replacements(self, store: SQLStore, fact_id: str) -> list[str]:
        """Active facts that were kept over `fact_id` by a resolve not since undone."""
        out = []
        for event in store.events_for(self.user, fact_id):
            if event.type == "resolve" and event.fact_id == fact_id and event.undone_by is None:
                keep = store.get_fact(self.user, event.other_id or "")
                if keep is not None and keep.status == "active" and keep.id not in out:
                    out.append(keep.id)
        return out
