"""`Memory`: the public API. Validates input, runs each operation in one transaction."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ankita._bulk import IMPORT_BATCH, write_rows
from ankita._compare import compare_pair, newer_sides, refuse_second_copy
from ankita._config import Settings, default_db_path
from ankita._errors import InvalidInput, NotFound
from ankita._missing import embed_missing
from ankita._models import Conflict, Event, Fact, Recall, WriteResult
from ankita._multilingual import MultilingualSpace, backfill_now, open_space, recall_nearby
from ankita._validate import (
    check_import_row,
    check_write,
    validate_count,
    validate_id,
    validate_kind,
    validate_string,
    validate_text,
    validate_user,
)
from ankita._write import NewFact, Writer, now_iso
from ankita.analysis._comparison import Comparison
from ankita.analysis._plain import flagged_pair
from ankita.embed._embedders import Embedder, resolve_embedder
from ankita.embed._judge import ContradictionJudge, resolve_judge
from ankita.ops import _doctor, _dump
from ankita.search import _recall
from ankita.search._candidates import MODES as CANDIDATE_MODES
from ankita.search._candidates import CandidateSearch
from ankita.search._index import ANALYZER_VERSION, index_terms
from ankita.store import _history
from ankita.store._open import open_store
from ankita.store._sqlbase import (
    FACT_ORDERS,
)

# `Memory.list` shadows the builtin inside the class body, so annotations use these aliases.
Facts = list[Fact]
Events = list[Event]
Conflicts = list[Conflict]
Rows = list[dict[str, Any]]


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
        multilingual: str | Embedder | None = None,
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
        self.path = str(path) if path is not None else str(default_db_path())
        if candidate_search not in CANDIDATE_MODES:
            raise InvalidInput(
                "candidate_search must be one of " + ", ".join(repr(m) for m in CANDIDATE_MODES)
            )
        # "exhaustive" compares with every stored fact: the reference the index is tested
        # against (tests/test_scale.py) and benchmarked against (`ankita bench`). "memory" and
        # "store" fix where the index's postings are read; "index" moves them into memory once
        # this process has made a few writes (docs/index.md).
        self.candidate_search = candidate_search
        self._search = CandidateSearch(self.user, self.settings, candidate_search)
        location = self.path  # kept whole: the backfill opens the store again
        self.store = open_store(self.path)
        # A store filed by another text analysis (or none yet) is refiled once, here.
        self.store.refresh_terms(ANALYZER_VERSION, index_terms)
        self.path = self.store.path  # a database URL without its password
        self._writer = Writer(
            self.user,
            self.settings,
            self.store,
            self._search,
            resolve_embedder(embedder),
            resolve_judge(judge),
            clock or (lambda: datetime.now(timezone.utc)),
        )
        # The multilingual space beside the English one (docs/languages.md), if installed.
        again = None if location in (":memory:", "") else (lambda: open_store(location))
        self._writer.multilingual, self._backfill = open_space(
            self.user, multilingual, self.store, again
        )

    # The writer holds these; a memory reads and replaces its one copy, so writes see a change.
    @property
    def embedder(self) -> Embedder | None:
        return self._writer.embedder

    @embedder.setter
    def embedder(self, value: Embedder | None) -> None:
        self._writer.embedder = value

    @property
    def multilingual(self) -> MultilingualSpace | None:
        """The multilingual meaning space beside the English one, if installed and not off."""
        return self._writer.multilingual

    @property
    def judge(self) -> ContradictionJudge | None:
        return self._writer.judge

    @judge.setter
    def judge(self, value: ContradictionJudge | None) -> None:
        self._writer.judge = value

    @property
    def clock(self) -> Callable[[], datetime]:
        return self._writer.clock

    @clock.setter
    def clock(self, value: Callable[[], datetime]) -> None:
        self._writer.clock = value

    def close(self) -> None:
        if self._backfill is not None:
            self._backfill.close()
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory(path={self.path!r}, user={self.user!r})"

    # -- the write ------------------------------------------------------------------------

    def remember(
        self, text: str, kind: str = "fact", pinned: bool = False, source: str | None = None
    ) -> WriteResult:
        """Compare `text` with what is stored, then merge, flag a conflict, or create."""
        text, kind = check_write(text, kind, pinned, source)
        vector, parts, embedding_error = self._writer.embed(text)
        across = self._writer.embed_across([text])[0]
        result = self._writer.write(
            NewFact(text, kind, pinned, source, vector, parts, embedding_error, across)
        )
        self._across_used()
        return result

    def _across_used(self, asked: bool = False) -> None:
        """Once the store uses the multilingual space, every older fact gets a vector there."""
        space = self._writer.multilingual
        if self._backfill is not None and space is not None and (asked or space.in_use(self.store)):
            self._backfill.ensure(self.store)

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
        results = list(write_rows(self._writer, rows, batch_size, progress))
        self._across_used()
        return results

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
        self,
        limit: int | None = None,
        offset: int = 0,
        fact: str | None = None,
        possible: bool = False,
    ) -> Conflicts:
        """Flagged pairs of this user, the newest flag first: all of them, or a page of
        `limit` from `offset`; only the pairs of `fact` if given (`conflict_count` says how
        many there are). Sure ones, or the `possible` ones (never in recall's notice)."""
        if limit is not None:
            validate_count(limit, "limit")
        if offset:
            validate_count(offset, "offset")
        if fact is not None:
            validate_id(fact)
        out = []
        for a, b in self.store.links(self.user, limit, offset, fact, not possible):
            fa, fb = self.store.get_fact(self.user, a), self.store.get_fact(self.user, b)
            if fa is not None and fb is not None:
                out.append(flagged_pair(fa, fb, self.store.link_event(self.user, a, b)))
        return out

    def conflict_count(self, fact: str | None = None, possible: bool = False) -> int:
        """How many sure (or `possible`) flagged pairs this user has, of `fact` if given."""
        return self.store.link_count(self.user, validate_id(fact) if fact else None, not possible)

    def keep_newer(self, pairs: Sequence[tuple[str, str]]) -> Facts:
        """For each flagged pair, keep the side said last (as `resolve` would). Every pair is
        checked before any is settled, so a bad one changes nothing; each settled pair is its
        own operation in history, undone on its own."""
        kept = []
        for keep, over in newer_sides(self.store, self.user, pairs):
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
            vector = self._writer.embed(query)[0]
            if vector is not None:
                model = self.embedder.model_id
                semantic = (
                    model,
                    self._search.nearby(self.store, model, vector, _recall.SEMANTIC_FLOOR),
                )
        across = recall_nearby(self._writer.multilingual, self.store, self._search, query)
        self._across_used(across is not None)
        return _recall.recall(
            self.store,
            self.user,
            query,
            limit,
            kind_list,
            self.settings,
            self.clock(),
            semantic,
            across,
        )

    def compare(self, a: str, b: str, kind: str = "fact") -> Comparison:
        """What remembering `b` after `a` would do, without writing anything."""
        a, b, kind = validate_text(a), validate_text(b), validate_kind(kind)
        return compare_pair(self._writer, a, b, kind)

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
        return uuid.uuid4().hex, now_iso(self.clock)

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
            sure = store.link_is_sure(self.user, a, b)
            if sure is None or not store.remove_link(self.user, a, b):
                raise NotFound(f"{a} and {b} are not flagged as conflicting")
            store.add_event(self.user, op, "clear", a, b, at, {} if sure else {"possible": True})

    def promote(self, a: str, b: str) -> Conflict:
        """A possible conflict is a real one: it becomes sure (recall asks). Undoable."""
        a, b, (op, at) = validate_id(a), validate_id(b), self._op()
        with self.store.transaction(self.user) as store:
            self.get(a), self.get(b)  # NotFound for a missing fact or another user's
            if not store.set_link_sure(self.user, a, b, True):
                raise NotFound(f"{a} and {b} are not flagged as a possible conflict")
            store.add_event(self.user, op, "promote", a, b, at, {})
            return flagged_pair(self.get(a), self.get(b), store.link_event(self.user, a, b))

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
            sure = store.link_is_sure(self.user, keep, over)
            was_linked = store.remove_link(self.user, keep, over)
            store.update_fact(over, status="superseded", updated_at=at)
            data = {"was_linked": was_linked, **({"possible": True} if sure is False else {})}
            store.add_event(self.user, op, "resolve", over, keep, at, data)
            return self.get(keep)

    def undo(self, event_id: int) -> Event:
        """Reverse the operation an event belongs to; the undo is itself in history."""
        validate_count(event_id, "an event id")
        op, at = self._op()
        with self.store.transaction(self.user) as store:
            group = _history.checked_group(store, self.user, event_id)
            refuse_second_copy(self._search, self.settings, store, self.user, group)
            return _history.undo(store, self.user, group, op, at, index_terms)

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
        for result in write_rows(self._writer, rows, batch_size, progress):
            counts[result.action] += 1
        self._across_used()
        return counts

    def reindex(
        self,
        batch_size: int = 32,
        progress: Callable[[int, int], None] | None = None,
        multilingual: bool = False,
    ) -> dict[str, Any]:
        """Embed every fact of this user that has no vector from the current model (or, with
        `multilingual`, from the multilingual one: the backfill, run here to its end).

        Embedding happens outside the write lock, batch by batch; a fact whose text changed or
        that was forgotten meanwhile is skipped, so a vector never belongs to the wrong text."""
        if multilingual:
            return backfill_now(self._writer.multilingual, self.store, batch_size, progress)
        if self.embedder is None:
            raise InvalidInput("no embedder is configured; choose one with --embedder")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput("batch_size must be a positive whole number")
        return embed_missing(self.store, self.user, self.embedder, batch_size, progress)

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
