"""`Memory`: the public API. Validates input, runs each operation in one transaction."""

from __future__ import annotations

import gc
import secrets
import struct
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ankita._config import Settings, default_db_path
from ankita._errors import EmbedderError, InvalidInput, JudgeError, NotFound, UndoError
from ankita._models import Conflict, Event, Fact, Recall, WriteResult
from ankita._validate import (
    check_import_row,
    validate_count,
    validate_id,
    validate_kind,
    validate_string,
    validate_text,
    validate_user,
)
from ankita.analysis._decision import CONFLICT, MERGE, Comparison, compare_texts, judge_asks, judged
from ankita.analysis._plain import flagged_pair, older_newer
from ankita.analysis._similarity import cosine, match_words
from ankita.analysis._text import content_words, sentences
from ankita.embed._embedders import Embedder, resolve_embedder
from ankita.embed._judge import ContradictionJudge, resolve_judge
from ankita.ops import _doctor, _dump
from ankita.search import _recall
from ankita.search._candidates import MODES as CANDIDATE_MODES
from ankita.search._candidates import CandidateSearch
from ankita.store import _history
from ankita.store._open import open_store
from ankita.store._sql import FACT_ORDERS, SQLStore

# `Memory.list` shadows the builtin inside the class body, so annotations use these aliases.
Facts = list[Fact]
Events = list[Event]
Conflicts = list[Conflict]
Rows = list[dict[str, Any]]
IMPORT_BATCH = 256  # facts embedded in one call and written in one transaction


@contextmanager
def _collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off for one import batch, then back as it was."""
    # A batch leaves thousands of analysed texts in the text caches; a collection every few
    # hundred of them would traverse every cached entry again (docs/scale.md, round 13).
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _now(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(timezone.utc).isoformat(timespec="microseconds")


def _pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def _array(vector: Sequence[float]) -> Any:
    """A fresh vector as a float64 array, exactly as given."""
    import numpy as np

    return np.asarray(vector, dtype=np.float64)


def _stored(blob: bytes) -> Any:
    """A stored vector as a float32 array, without a Python float per component."""
    import numpy as np

    return np.frombuffer(blob, dtype="<f4")


def _cosine_with(probes: Sequence[Any], blob: bytes) -> float:
    """A stored fact's cosine with a write: the text as a whole, or one of its sentences, the
    closer one counting. Both the decision and the judge's ranking read it here, so the two
    candidate searches see one number for a pair."""
    stored = _stored(blob)
    return max(cosine(p, stored) for p in probes)


class Memory:
    """A user's memory in one store: remember, recall, and everything around them."""

    def __init__(
        self,
        path: str | Path | None = None,
        user: str = "default",
        embedder: str | Embedder | None = "auto",
        *,
        settings: Settings | None = None,
        detect_disagreement: bool | None = None,
        dedup_threshold: float | None = None,
        conflict_threshold: float | None = None,
        stale_after_days: float | None = None,
        clock: Callable[[], datetime] | None = None,
        candidate_search: str = "index",
        judge: str | ContradictionJudge | None = None,
    ) -> None:
        self.user = validate_user(user)
        base = settings or Settings.from_env()
        overrides = {
            "detect_disagreement": detect_disagreement,
            "dedup_threshold": dedup_threshold,
            "conflict_threshold": conflict_threshold,
            "stale_after_days": stale_after_days,
        }
        self.settings = Settings(
            **{**base.__dict__, **{k: v for k, v in overrides.items() if v is not None}}
        )
        self.embedder = resolve_embedder(embedder)
        self.judge = resolve_judge(judge)
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.path = str(path) if path is not None else str(default_db_path())
        if candidate_search not in CANDIDATE_MODES:
            raise InvalidInput(
                "candidate_search must be one of " + ", ".join(repr(m) for m in CANDIDATE_MODES)
            )
        # "exhaustive" compares with every stored fact: the reference the index is tested
        # against (tests/test_scale.py) and benchmarked against (`ankita bench`). "memory" and
        # "store" fix where the index's postings are read; "index" moves them into memory once
        # this process has made a few writes (docs/scale.md).
        self.candidate_search = candidate_search
        self._search = CandidateSearch(self.user, self.settings, candidate_search)
        self.store = open_store(self.path)
        self.path = self.store.path  # a database URL without its password

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory(path={self.path!r}, user={self.user!r})"

    # -- the write ------------------------------------------------------------------------

    def _embed(self, text: str) -> tuple[list[float] | None, list[list[float]], str | None]:
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

    def _dimension_error(self, model: str, vectors: Sequence[list[float]]) -> str | None:
        """Why these vectors cannot be stored, if a provider changed its dimension under the
        same model id; else None."""
        known = self.store.vector_dim(model)
        for vector in vectors:
            if known is not None and len(vector) != known:
                return (
                    f"{model}: {len(vector)} dimensions, but this store holds {known} "
                    "for that model"
                )
        return None

    def _new_id(self) -> str:
        while True:
            fact_id = secrets.token_hex(8)
            if not self.store.id_exists(fact_id):
                return fact_id

    def remember(
        self, text: str, kind: str = "fact", pinned: bool = False, source: str | None = None
    ) -> WriteResult:
        """Compare `text` with what is stored, then merge, flag a conflict, or create."""
        text, kind = self._check_write(text, kind, pinned, source)
        vector, parts, embedding_error = self._embed(text)
        return self._remember(text, kind, pinned, source, vector, embedding_error, parts)

    @staticmethod
    def _check_write(text: object, kind: object, pinned: object, source: object) -> tuple[str, str]:
        text, kind = validate_text(text), validate_kind(kind)
        if not isinstance(pinned, bool):
            raise InvalidInput("pinned must be true or false")
        if source is not None:
            validate_string(source, "source", 200)
        return text, kind

    def remember_many(
        self,
        rows: Rows,
        batch_size: int = IMPORT_BATCH,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[WriteResult]:
        """Remember many facts ({"text", "kind"?, "pinned"?, "source"?}) in order, exactly as
        one `remember` each, but embedding a batch at a time (the next one while this one is
        written) and writing a batch per transaction. Every row is validated first, so bad
        input writes nothing."""
        return list(self._remember_stream(rows, batch_size, progress))

    def _remember_stream(
        self,
        rows: Rows,
        batch_size: int = IMPORT_BATCH,
        progress: Callable[[int, int], None] | None = None,
    ) -> Iterator[WriteResult]:
        """`remember_many`, one batch of results at a time, so a large import need not hold
        every result. Validates every row before it returns (not when first iterated)."""
        checked = [
            (
                *self._check_write(
                    r.get("text"), r.get("kind") or "fact", r.get("pinned", False), r.get("source")
                ),
                r.get("pinned", False),
                r.get("source"),
            )
            for r in rows
        ]
        batches = [checked[at : at + batch_size] for at in range(0, len(checked), batch_size)]
        return self._write_batches(batches, len(checked), progress)

    def _write_batches(
        self,
        batches: list[list[tuple[str, str, bool, str | None]]],
        total: int,
        progress: Callable[[int, int], None] | None,
    ) -> Iterator[WriteResult]:
        done = 0
        model = self.embedder.model_id if self.embedder is not None else None
        with ThreadPoolExecutor(max_workers=1) as pool:
            ahead = pool.submit(self._embed_rows, batches[0]) if batches else None
            for number, batch in enumerate(batches):
                assert ahead is not None
                vectors, parts, error = ahead.result()
                # The next batch is embedded while this one is written: the model or the network
                # call releases the GIL, and a vector does not depend on the store.
                ahead = (
                    pool.submit(self._embed_rows, batches[number + 1])
                    if number + 1 < len(batches)
                    else None
                )
                results = []
                with _collection_paused(), self.store.transaction(self.user):
                    if model:
                        # Scored several at a time in one pass over the vectors held in memory.
                        self._search.plan(
                            self.store,
                            model,
                            [[v, *x] for v, x in zip(vectors, parts, strict=True) if v is not None],
                        )
                    try:
                        for (text, kind, pinned, source), vector, extra in zip(
                            batch, vectors, parts, strict=True
                        ):
                            results.append(
                                self._remember(text, kind, pinned, source, vector, error, extra)
                            )
                    finally:
                        if model:
                            self._search.plan(self.store, model, [])
                done += len(results)
                if progress is not None:
                    progress(done, total)
                # Yielded after the commit: a caller that stops early leaves no transaction open.
                yield from results

    def _embed_rows(
        self, batch: Sequence[tuple[str, str, bool, str | None]]
    ) -> tuple[list[list[float] | None], list[list[list[float]]], str | None]:
        """(vector of each text, its sentences' vectors, the embedder's error) for one batch,
        in one call: each text, then its sentences (where it has several)."""
        vectors: list[list[float] | None] = [None] * len(batch)
        parts: list[list[list[float]]] = [[] for _ in batch]
        if self.embedder is None:
            return vectors, parts, None
        spans = [[t, *sentences(t)] for t, *_ in batch]
        try:
            flat = self.embedder.embed_checked([x for span in spans for x in span])
        except EmbedderError as exc:
            return vectors, parts, str(exc)
        at = 0
        for i, span in enumerate(spans):
            vectors[i], parts[i] = flat[at], flat[at + 1 : at + len(span)]
            at += len(span)
        return vectors, parts, None

    def _remember(
        self,
        text: str,
        kind: str,
        pinned: bool,
        source: str | None,
        vector: list[float] | None,
        embedding_error: str | None,
        parts: Sequence[list[float]] = (),
    ) -> WriteResult:
        model = self.embedder.model_id if self.embedder is not None else None
        if vector is not None and model:
            wrong = self._dimension_error(model, [vector, *parts])
            if wrong is not None:
                embedding_error, vector = wrong, None
        probes = [vector, *parts] if vector is not None else []
        op, at = uuid.uuid4().hex, _now(self.clock)
        judge_error: str | None = None
        with self.store.transaction(self.user) as store:
            stored = self._search.candidates(store, text, kind, probes, model)
            vectors = (
                store.vectors_of([f.id for f in stored], model)
                if vector is not None and model
                else {}
            )
            scored: list[tuple[Comparison, Fact]] = []
            arrays = [_array(p) for p in probes]  # converted once, not per candidate
            for fact in stored:
                blob = vectors.get(fact.id)
                cos = _cosine_with(arrays, blob) if arrays and blob else None
                scored.append(
                    (
                        compare_texts(text, kind, fact.text, fact.kind, self.settings, cos, model),
                        fact,
                    )
                )
            merges = [(c, f) for c, f in scored if c.action == MERGE]
            if merges:
                # Of equal scores, the fact stored first: ids are random, creation is not.
                best = min(merges, key=lambda cf: (-cf[0].score, cf[1].created_at, cf[1].id))
                result = self._merge(store, op, at, text, pinned, source, *best, vector, model)
            else:
                # Superseded facts are history: a new fact is not flagged against them.
                flagged = [
                    (c, f) for c, f in scored if c.action == CONFLICT and f.status == "active"
                ]
                if self.judge is not None and arrays and model:
                    found, judge_error = self._judged(store, text, kind, probes, arrays, model)
                    flagged += found
                # The closest few only: a question about dozens of facts is no question, and
                # a templated import would otherwise link every line to every other.
                # Ties go to the newest fact (what the user said last), then the id.
                flagged = sorted(flagged, key=lambda cf: (cf[1].created_at, cf[1].id), reverse=True)
                flagged = sorted(flagged, key=lambda cf: (-cf[0].frame_score, -cf[0].score))[
                    : self.settings.max_conflicts
                ]
                result = self._create(
                    store, op, at, text, kind, pinned, source, flagged, scored, vector, model
                )
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
        related = self._search.related(store, kind, probes, model, count)
        blobs = store.vectors_of([f.id for f in related], model)
        # The exact cosine ranks them, ties by id: the same few in both candidate searches.
        near = sorted(
            ((_cosine_with(arrays, blobs[f.id]), f) for f in related if f.id in blobs),
            key=lambda cf: (-cf[0], cf[1].id),
        )
        asked = []
        for cos, fact in near[:count]:
            # The whole analysis (as `compare` runs it): whether the judge reads a pair depends
            # on findings that the write's shortcut may have skipped; the action is the same.
            comparison = compare_texts(
                text, kind, fact.text, fact.kind, self.settings, cos, model, analyse_all=True
            )
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

    def _create(
        self,
        store: SQLStore,
        op: str,
        at: str,
        text: str,
        kind: str,
        pinned: bool,
        source: str | None,
        flagged: list[tuple[Comparison, Fact]],
        scored: list[tuple[Comparison, Fact]],
        vector: list[float] | None,
        model: str | None,
    ) -> WriteResult:
        fact_id = self._new_id()
        links = tuple(sorted(other.id for _, other in flagged))
        # The fact as stored, links included: nothing else writes it inside this transaction.
        fact = Fact(
            id=fact_id,
            text=text,
            kind=kind,
            user=self.user,
            pinned=pinned,
            status="active",
            source=source,
            created_at=at,
            updated_at=at,
            last_confirmed_at=at,
            mentions=1,
            conflicts_with=links,
        )
        store.insert_fact(fact)
        if vector is not None and model:
            store.put_vector(fact_id, model, _pack(vector), len(vector))
        best: Comparison | None
        if flagged:
            best = max(flagged, key=lambda cf: cf[0].score)[0]
            action, reason = "conflict", best.reason
        else:
            best = max(scored, key=lambda cf: cf[0].score)[0] if scored else None
            action = "created"
            reason = best.reason if best else "no stored fact is close enough to compare with"
        event_id = store.add_event(
            self.user,
            op,
            "create",
            fact_id,
            None,
            at,
            {"text": text, "kind": kind, "pinned": pinned, "source": source, "reason": reason},
        )
        for comparison, other in flagged:
            store.add_link(self.user, fact_id, other.id, at)
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
                },
            )
        return WriteResult(
            action=action,
            fact=fact,
            merged_into=None,
            conflicts_with=links,
            score=best.score if best else 0.0,
            method=best.method if best else "lexical",
            reason=reason,
            event_id=event_id,
        )

    def _merge(
        self,
        store: SQLStore,
        op: str,
        at: str,
        text: str,
        pinned: bool,
        source: str | None,
        comparison: Comparison,
        fact: Fact,
        vector: list[float] | None,
        model: str | None,
    ) -> WriteResult:
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
            store.update_fact(fact.id, text=grown)
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
                store.put_vector(fact.id, model, _pack(vector), len(vector))
        if pinned and not fact.pinned:
            store.update_fact(fact.id, pinned=True)
            store.add_event(self.user, op, "pin", fact.id, None, at, {})
        reason = comparison.reason
        if fact.status == "superseded":
            # The user changed their mind back: active again, and the store asks once more.
            store.update_fact(fact.id, status="active")
            store.add_event(self.user, op, "reactivate", fact.id, None, at, {})
            for other in self._replacements(store, fact.id):
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
            action="merged",
            fact=merged,
            merged_into=fact.id,
            conflicts_with=merged.conflicts_with,
            score=comparison.score,
            method=comparison.method,
            reason=reason,
            event_id=event_id,
        )

    def _replacements(self, store: SQLStore, fact_id: str) -> list[str]:
        """Active facts that were kept over `fact_id` by a resolve not since undone."""
        out = []
        for event in store.events_for(self.user, fact_id):
            if event.type == "resolve" and event.fact_id == fact_id and event.undone_by is None:
                keep = store.get_fact(self.user, event.other_id or "")
                if keep is not None and keep.status == "active" and keep.id not in out:
                    out.append(keep.id)
        return out

    # -- reading --------------------------------------------------------------------------

    def get(self, fact_id: str) -> Fact:
        fact = self.store.get_fact(self.user, validate_id(fact_id))
        if fact is None:
            raise NotFound(f"no fact {fact_id} for user {self.user!r}")
        return fact

    def list(
        self,
        kind: str | None = None,
        include_superseded: bool = False,
        search: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "said",
        descending: bool = False,
        pinned_first: bool = False,
        only: str | None = None,
    ) -> Facts:
        """Facts in the order said (or by `order`: one of FACT_ORDERS); superseded ones only
        when asked (`list --all`). `search` keeps facts whose text contains it (ASCII letters
        case-insensitively); `only` keeps the "pinned" or the "conflicting" ones; `limit` and
        `offset` give one page (`count` says how many there are)."""
        statuses, kinds, search, only = self._filters(kind, include_superseded, search, only)
        if limit is not None:
            validate_count(limit, "limit")
        if offset:
            validate_count(offset, "offset")
        if order not in FACT_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(sorted(FACT_ORDERS))}")
        return self.store.list_facts(
            self.user,
            statuses,
            kinds,
            search,
            limit=limit,
            offset=offset,
            order=order,
            descending=bool(descending),
            pinned_first=bool(pinned_first),
            only=only,
        )

    def count(
        self,
        kind: str | None = None,
        include_superseded: bool = False,
        search: str | None = None,
        only: str | None = None,
    ) -> int:
        """How many facts `list` would give with these filters and no limit."""
        return self.store.count_facts(
            self.user, *self._filters(kind, include_superseded, search, only)
        )

    def kinds(self, include_superseded: bool = False) -> dict[str, int]:
        """Every kind this user has facts of, with how many."""
        statuses = ("active", "superseded") if include_superseded else ("active",)
        return self.store.kind_counts(self.user, statuses)

    def _filters(
        self, kind: str | None, include_superseded: bool, search: str | None, only: str | None
    ) -> tuple[tuple[str, ...], Sequence[str] | None, str | None, str | None]:
        kinds = [validate_kind(kind)] if kind is not None else None
        statuses = ("active", "superseded") if include_superseded else ("active",)
        if search is not None:
            validate_string(search, "search")
        if only not in (None, "pinned", "conflicting"):
            raise InvalidInput("only must be 'pinned' or 'conflicting'")
        return statuses, kinds, search or None, only

    def is_stale(self, fact: Fact) -> bool:
        """Unpinned and not confirmed for `stale_after_days` (recall ranks these lower)."""
        return _recall.is_stale(fact, self.clock(), self.settings)

    def conflicts(
        self, limit: int | None = None, offset: int = 0, fact: str | None = None
    ) -> Conflicts:
        """Flagged pairs of this user, the newest flag first: all of them, or a page of
        `limit` from `offset`; only the pairs of `fact` if given (`conflict_count` says how
        many there are)."""
        if limit is not None:
            validate_count(limit, "limit")
        if offset:
            validate_count(offset, "offset")
        if fact is not None:
            validate_id(fact)
        out = []
        for a, b in self.store.links(self.user, limit, offset, fact):
            fa, fb = self.store.get_fact(self.user, a), self.store.get_fact(self.user, b)
            if fa is not None and fb is not None:
                out.append(flagged_pair(fa, fb, self.store.link_event(self.user, a, b)))
        return out

    def conflict_count(self, fact: str | None = None) -> int:
        """How many flagged pairs this user has (of `fact`, if given)."""
        return self.store.link_count(self.user, validate_id(fact) if fact else None)

    def keep_newer(self, pairs: Sequence[tuple[str, str]]) -> Facts:
        """For each flagged pair, keep the side said last (as `resolve` would). Every pair is
        checked before any is settled, so a bad one changes nothing; each settled pair is its
        own operation in history, undone on its own."""
        if not isinstance(pairs, (list, tuple)) or not 1 <= len(pairs) <= 1000:
            raise InvalidInput("pairs must be a list of 1 to 1000 [a, b] pairs")
        chosen: list[tuple[str, str]] = []
        for pair in pairs:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise InvalidInput("each pair must be [a, b]")
            a, b = validate_id(pair[0]), validate_id(pair[1])
            fa, fb = self.store.get_fact(self.user, a), self.store.get_fact(self.user, b)
            if fa is None or fb is None or b not in fa.conflicts_with:
                raise NotFound(f"{a} and {b} are not a flagged pair of user {self.user!r}")
            older, newer = older_newer(fa, fb)
            chosen.append((newer.id, older.id))
        # A fact kept in one pair and superseded in another would depend on the order.
        both = {keep for keep, _ in chosen} & {over for _, over in chosen}
        if both:
            raise InvalidInput(
                f"{min(both)} is the newer side of one pair and the older of "
                "another; settle those pairs one at a time"
            )
        kept = []
        for keep, over in chosen:
            if self.get(over).status == "active":
                kept.append(self.resolve(keep=keep, over=over))
        return kept

    def recall(self, query: str, limit: int = 8, kinds: Sequence[str] | None = None) -> Recall:
        """Facts relevant to `query`, pinned ones, conflict partners and the notice."""
        # Bounded: every word of a query is looked up, and a 60 KB query cost seconds.
        validate_string(query, "query")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
            raise InvalidInput("limit must be a whole number from 1 to 200")
        if isinstance(kinds, str):
            kinds = [kinds]
        kind_list = [validate_kind(k) for k in kinds] if kinds else None
        semantic = None
        if self.embedder is not None and query.strip():
            vector = self._embed(query)[0]
            if vector is not None:
                model = self.embedder.model_id
                semantic = (
                    model,
                    self._search.nearby(self.store, model, vector, _recall.SEMANTIC_FLOOR),
                )
        return _recall.recall(
            self.store, self.user, query, limit, kind_list, self.settings, self.clock(), semantic
        )

    def compare(self, a: str, b: str, kind: str = "fact") -> Comparison:
        """What remembering `b` after `a` would do, without writing anything."""
        a, b, kind = validate_text(a), validate_text(b), validate_kind(kind)
        va = self._embed(a)[0]
        vb, parts, _ = self._embed(b)
        # As a write would: b as a whole or one of its sentences, against a's stored vector.
        cos = (
            max(cosine(p, va) for p in (vb, *parts)) if va is not None and vb is not None else None
        )
        model = self.embedder.model_id if self.embedder is not None else None
        comparison = compare_texts(b, kind, a, kind, self.settings, cos, model, analyse_all=True)
        if self.judge is None or not judge_asks(comparison, self.settings):
            return comparison
        return judged(comparison, self.judge.contradiction([(a, b)])[0], self.settings)

    def history(
        self, fact_id: str, limit: int | None = None, offset: int = 0, newest_first: bool = False
    ) -> Events:
        """Every event that touched the fact, oldest first (also after it was forgotten), or
        a page of them (`history_count` says how many there are)."""
        fact_id = validate_id(fact_id)
        if limit is not None:
            validate_count(limit, "limit")
        if offset:
            validate_count(offset, "offset")
        events = self.store.events_for(self.user, fact_id, limit, offset, bool(newest_first))
        if not events and (offset == 0 or not self.history_count(fact_id)):
            raise NotFound(f"no history for {fact_id} for user {self.user!r}")
        return events

    def history_count(self, fact_id: str) -> int:
        """How many events touched the fact."""
        return self.store.event_count(self.user, validate_id(fact_id))

    # -- changes --------------------------------------------------------------------------

    def _op(self) -> tuple[str, str]:
        return uuid.uuid4().hex, _now(self.clock)

    def forget(self, fact_id: str) -> Fact:
        """Remove a fact at the user's request; its id leaves every partner's list."""
        fact_id = validate_id(fact_id)
        op, at = self._op()
        with self.store.transaction(self.user) as store:
            fact = self.get(fact_id)
            store.delete_fact(fact_id)
            store.add_event(self.user, op, "forget", fact_id, None, at, {"fact": fact.to_dict()})
        return fact

    def _set_pin(self, fact_id: str, pinned: bool) -> Fact:
        fact_id = validate_id(fact_id)
        op, at = self._op()
        with self.store.transaction(self.user) as store:
            fact = self.get(fact_id)
            if fact.pinned != pinned:
                store.update_fact(fact_id, pinned=pinned)
                store.add_event(self.user, op, "pin" if pinned else "unpin", fact_id, None, at, {})
            return self.get(fact_id)

    def pin(self, fact_id: str) -> Fact:
        return self._set_pin(fact_id, True)

    def unpin(self, fact_id: str) -> Fact:
        return self._set_pin(fact_id, False)

    def clear_conflict(self, a: str, b: str) -> None:
        """Remove the flag between a and b from both sides: the user says both are true."""
        a, b = validate_id(a), validate_id(b)
        op, at = self._op()
        with self.store.transaction(self.user) as store:
            self.get(a), self.get(b)
            if not store.remove_link(a, b):
                raise NotFound(f"{a} and {b} are not flagged as conflicting")
            store.add_event(self.user, op, "clear", a, b, at, {})

    def resolve(self, keep: str, over: str) -> Fact:
        """The user says `keep` is current: `over` becomes superseded and the flag goes."""
        keep, over = validate_id(keep), validate_id(over)
        if keep == over:
            raise InvalidInput("keep and over must be two different facts")
        op, at = self._op()
        with self.store.transaction(self.user) as store:
            kept, old = self.get(keep), self.get(over)
            if kept.status != "active":
                raise InvalidInput(f"{keep} is superseded; it cannot be kept over another fact")
            if old.status != "active":
                raise InvalidInput(f"{over} is already superseded")
            was_linked = store.remove_link(keep, over)
            store.update_fact(over, status="superseded", updated_at=at)
            store.add_event(self.user, op, "resolve", over, keep, at, {"was_linked": was_linked})
            return self.get(keep)

    def undo(self, event_id: int) -> Event:
        """Reverse the operation an event belongs to; the undo is itself in history."""
        validate_count(event_id, "an event id")
        op, at = self._op()
        with self.store.transaction(self.user) as store:
            self._refuse_second_copy(store, event_id)
            return _history.undo(store, self.user, event_id, op, at)

    def _refuse_second_copy(self, store: SQLStore, event_id: int) -> None:
        """Undoing a forget must not bring back a fact that was said again since: the store
        would then hold two copies of one fact, which a write can never make."""
        event = store.event(self.user, event_id)
        if event is None:
            return
        for item in store.op_events(event.op):
            if item.type != "forget" or item.undone_by is not None:
                continue
            text, kind = item.data["fact"]["text"], item.data["fact"]["kind"]
            for other in self._search.candidates(store, text, kind, (), None):
                same = compare_texts(text, kind, other.text, other.kind, self.settings, None, None)
                if other.id != item.fact_id and same.action == MERGE:
                    raise UndoError(
                        f"cannot restore {item.fact_id}: {other.id} "
                        f"('{other.text}') was written since and says the same"
                    )

    def import_rows(
        self,
        rows: Rows,
        batch_size: int = IMPORT_BATCH,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """Remember each {"text", "kind"?, "pinned"?, "source"?} through the normal write path,
        in batches. Every row is validated before the first write, so bad input changes
        nothing."""
        for row in rows:
            check_import_row(row)
        counts = {"created": 0, "merged": 0, "conflict": 0}
        rows = [{**row, "source": row.get("source") or "import"} for row in rows]
        # Counted as they come: a large import holds one batch of results, not all of them.
        for result in self._remember_stream(rows, batch_size=batch_size, progress=progress):
            counts[result.action] += 1
        return counts

    def reindex(
        self, batch_size: int = 32, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """Embed every fact of this user that has no vector from the current model.

        Embedding happens outside the write lock, batch by batch; a fact whose text changed or
        that was forgotten meanwhile is skipped, so a vector never belongs to the wrong text."""
        if self.embedder is None:
            raise InvalidInput("no embedder is configured; choose one with --embedder")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput("batch_size must be a positive whole number")
        model = self.embedder.model_id
        todo = self.store.facts_without_vector(self.user, model)
        done = failed = 0
        errors: list[str] = []
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            try:
                vectors = self.embedder.embed_checked([text for _, text in batch])
                wrong = self._dimension_error(model, vectors)
                if wrong is not None:
                    raise EmbedderError(wrong)
            except EmbedderError as exc:
                failed += len(batch)
                errors.append(str(exc))
            else:
                with self.store.transaction(self.user) as store:
                    for (fact_id, text), vector in zip(batch, vectors, strict=True):
                        current = store.get_fact(self.user, fact_id)
                        if current is not None and current.text == text:
                            store.put_vector(fact_id, model, _pack(vector), len(vector))
                            done += 1
            if progress is not None:
                progress(min(start + batch_size, len(todo)), len(todo))
        return {
            "model": model,
            "missing": len(todo),
            "embedded": done,
            "failed": failed,
            "errors": errors[:5],
        }

    def doctor(self, repair: bool = False) -> dict[str, Any]:
        """Check the whole store (every user); with `repair`, fix only what is safe to fix
        (see `_doctor`). `ok` is true when nothing is left unresolved."""
        model = self.embedder.model_id if self.embedder is not None else None
        return _doctor.diagnose(self.store, repair=repair, model=model)

    def export(self, vectors: bool = False) -> Iterator[dict[str, Any]]:
        """This user's whole memory in the lossless export format (docs/export.md): a header,
        then facts, links, history and, if asked, vectors. Read in one transaction, so a
        writer running meanwhile never tears it."""
        with self.store.transaction(self.user) as store:
            records = list(_dump.export_records(store, self.user, vectors=vectors))
        return iter(records)

    def backup(self, target: str | Path) -> str:
        """Copy the whole store (every user) to a new file, safely while writers run."""
        return self.store.backup(target)

    def restore(self, rows: Rows) -> dict[str, int]:
        """Load an export into this user's memory, which must be empty: ids, statuses, links,
        history and vectors come back exactly. Checks every record first; all or nothing."""
        return _dump.restore(self.store, self.user, rows)
