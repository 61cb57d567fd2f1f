"""The SQLite backend: one file, its schema, migrations, transactions and full-text search.

Row access is shared with PostgreSQL (`_sql`); this module holds what only SQLite does.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ankita._errors import StoreError
from ankita._files import private_file, replacing
from ankita._models import Fact
from ankita.store._sql import SQLStore
from ankita.store._sqlbase import (
    FACT_COLUMNS,
    JOINED_FACT_COLUMNS,
    placeholders,
    row_to_fact,
    translate_errors,
)
from ankita.store._sqliteschema import MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_S = 10.0  # one wait inside SQLite
LOCK_RETRIES = 5  # then whole-transaction retries with backoff, so a busy store never loses a write


def describe(path: str, exc: sqlite3.Error) -> str:
    """A sentence a user can act on, for the SQLite errors a store can meet."""
    text = str(exc)
    if "disk is full" in text or "disk I/O error" in text:
        return f"no space left for {path} ({text}); nothing was written. Free some disk space."
    if "readonly" in text or "read-only" in text:
        return f"{path} is read-only ({text}); nothing was written."
    if "malformed" in text or "not a database" in text:
        return f"{path} is damaged or not an Ankita store ({text}); run `ankita doctor`."
    if "unable to open" in text:
        folder = Path(path).expanduser().parent
        if folder.is_dir() and not os.access(folder, os.W_OK):
            return (
                f"{path} is read-only: its folder cannot be written ({text}), and SQLite "
                "needs it for the write-ahead log. Nothing was changed."
            )
        return f"cannot open {path} ({text}): check that the folder exists and is writable."
    return f"{path}: {text}"


class _Checkpointer:
    """Copies the write-ahead log back into the database file from a thread of its own.

    SQLite's own checkpoint runs inside the commit that takes the log past its limit, so that
    one write in a few dozen waits for a copy of many pages (the slowest writes of a busy
    store). Here a commit only wakes this thread; the copy runs beside the next writes, since
    SQLite releases the GIL while it copies. The writer keeps its own checkpoint, at a larger
    limit (`FALLBACK_PAGES`), for when this thread falls behind or is gone. The thread ends
    after `IDLE_S` without commits, so a store nobody closes leaves no thread behind."""

    PAUSE_S = 0.05  # the commits of this long are copied in one pass
    IDLE_S = 2.0
    FALLBACK_PAGES = 8000

    def __init__(self, path: str) -> None:
        self.path = path
        self.passes = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def committed(self) -> None:
        """A write was committed: copy it back soon."""
        self._wake.set()
        with self._lock:
            # A forked child has the object but not the thread.
            if (self._thread is None or self._pid != os.getpid()) and not self._stop.is_set():
                self._start()

    def _start(self) -> None:
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="ankita-checkpoint", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self._lock:
            self._stop.set()
            thread = self._thread if self._pid == os.getpid() else None
        self._wake.set()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        db = None
        try:
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            while self._wake.wait(self.IDLE_S) and not self._stop.wait(self.PAUSE_S):
                self._wake.clear()
                # PASSIVE copies what no reader still needs and never blocks a writer. A
                # failure loses nothing: the pages stay in the log for the next pass.
                with contextlib.suppress(sqlite3.Error):
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.passes += 1
        except sqlite3.Error:
            pass  # cannot open: the writer's own checkpoint still runs
        finally:
            if db is not None:
                db.close()
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None
                    # A commit that came as this thread was ending still gets its pass.
                    if self._wake.is_set() and not self._stop.is_set():
                        self._start()


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class SQLiteStore(SQLStore):
    """One SQLite file holding every user's facts, links, events and vectors."""

    SCHEMA_VERSION = SCHEMA_VERSION

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._depth = 0
        self.own_filings = {}
        self._checkpointer: _Checkpointer | None = None
        if self.path != ":memory:":
            try:
                private_file(self.path)
            except OSError as exc:
                raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        try:
            # Autocommit mode: transactions are opened explicitly with BEGIN IMMEDIATE.
            # A larger statement cache: candidate search has many statement shapes (one per
            # count of words and prefixes), and preparing one costs as much as running it.
            self.db = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
                cached_statements=1024,
            )
            # Damaged bytes on disk read as U+FFFD instead of stopping every read of the user.
            self.db.text_factory = _lenient_text
            self.db.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:":
                self._retry(lambda: self.db.execute("PRAGMA journal_mode = WAL"))
                self._checkpointer = _Checkpointer(self.path)
                self.db.execute(f"PRAGMA wal_autocheckpoint = {_Checkpointer.FALLBACK_PAGES}")
            self.db.execute("PRAGMA synchronous = NORMAL")
            self._retry(self._migrate)
        except sqlite3.Error as exc:
            raise StoreError(describe(self.path, exc)) from exc

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.db.execute(sql, params)

    def _run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.db.executemany(sql, rows)

    # -- transactions ---------------------------------------------------------------------

    def _retry(self, fn: Any) -> Any:
        for attempt in range(LOCK_RETRIES + 1):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if attempt == LOCK_RETRIES:
                    raise StoreError(f"the store stayed locked: {exc}") from exc
                time.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    def _migrate(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema {version}; this Ankita knows up to "
                    f"{SCHEMA_VERSION}. Upgrade Ankita."
                )
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    if callable(statement):
                        statement(self.db)
                    else:
                        self.db.execute(statement)
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def transaction(self, user: str | None = None) -> Iterator[SQLiteStore]:
        """One write transaction; BEGIN IMMEDIATE takes the write lock before anything is read,
        so the comparison and the write see the same store (compare-and-write). SQLite has
        one writer at a time, so `user` needs no lock of its own."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        try:
            self._retry(lambda: self.db.execute("BEGIN IMMEDIATE"))
        except sqlite3.Error as exc:
            raise StoreError(describe(self.path, exc)) from exc
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._depth = 0
            self._rolled_back()
            if self.db.in_transaction:  # SQLite may already have rolled back (disk full)
                self.db.execute("ROLLBACK")
            raise
        self._depth = 0
        try:
            self._retry(lambda: self.db.execute("COMMIT"))
        except BaseException as exc:
            self._rolled_back()
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(describe(self.path, exc)) from exc
            raise
        if self._checkpointer is not None:
            self._checkpointer.committed()

    def data_version(self) -> int | None:
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        self.db.close()

    def backup(self, target: str | Path) -> str:
        """Copy the store to `target` with SQLite's online backup: a consistent snapshot, even
        while other processes write. Written beside the target, then renamed into place."""
        final = Path(target).expanduser()
        if final.exists():
            raise StoreError(f"{final} exists; choose a new file for the backup")
        if not final.parent.is_dir():
            raise StoreError(f"{final.parent} is not a folder")
        with replacing(final) as partial:
            copy = sqlite3.connect(partial)
            try:
                self.db.backup(copy)
                bad = [r[0] for r in copy.execute("PRAGMA integrity_check") if r[0] != "ok"]
            finally:
                copy.close()
            if bad:
                raise StoreError(f"the backup failed its integrity check: {bad[0]}")
        return str(final)

    # -- what only SQLite does ------------------------------------------------------------

    # Without statistics SQLite reads `user = ?` as the narrower filter and scans every fact of
    # the user; the unary + keeps it off that index, so the id index is used.
    _user_filter = '+"user"'

    def _ids_clause(self, ids: Sequence[str], column: str = "id") -> tuple[str, list[Any]]:
        if len(ids) <= 900:  # under SQLite's parameter limit: a plain IN
            return super()._ids_clause(ids, column)
        # Through a temporary table: any number of ids, one indexed join.
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM wanted")
        self.db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", [(i,) for i in ids])
        return f"{column} IN (SELECT id FROM wanted)", []

    def search(self, user: str, words: Sequence[str], limit: int) -> list[tuple[Fact, float]]:
        """FTS5 over the facts' text, ranked by bm25. Every term is quoted, so no user text is
        ever read as FTS syntax; words of 3+ characters match as prefixes (cat -> cats)."""
        if not words:
            return []
        match = " OR ".join(f'"{w}"*' if len(w) >= 3 else f'"{w}"' for w in sorted(words))
        # Ranking inside the full-text index alone costs half as much as ranking its join with
        # the facts (bm25 runs on every match either way). The best `wide` matches of any user
        # or status, filtered, are the best `limit` of this user's active ones whenever at
        # least `limit` survive, or when there were no more matches; else rank the join.
        wide = 2 * limit
        ranked = self.db.execute(
            "SELECT rowid, bm25(facts_fts) AS r FROM facts_fts WHERE facts_fts MATCH ?"
            " ORDER BY r, rowid LIMIT ?",
            (match, wide),
        ).fetchall()
        if not ranked:
            return []
        kept: dict[int, Fact] = {}
        # `limit` rows at a time, best first: mostly the first `limit` all survive, and the
        # rest need not be read. `+`: look the rows up by seq, not through the (user, status)
        # index.
        for start in range(0, len(ranked), limit):
            chunk = [seq for seq, _ in ranked[start : start + limit]]
            kept.update(
                (r[0], row_to_fact(r[1:], ()))
                for r in self.db.execute(
                    f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE seq IN ({placeholders(chunk)})"
                    " AND +user = ? AND +status = 'active'",
                    [*chunk, user],
                )
            )
            if len(kept) >= limit:
                break
        if len(kept) >= limit or len(ranked) < wide:
            return [(kept[seq], float(rank)) for seq, rank in ranked if seq in kept][:limit]
        rows = self.db.execute(
            f"SELECT {JOINED_FACT_COLUMNS}, bm25(facts_fts) AS r FROM facts_fts"
            " JOIN facts f ON f.seq = facts_fts.rowid"
            " WHERE facts_fts MATCH ? AND f.user = ? AND f.status = 'active'"
            " ORDER BY r, f.seq LIMIT ?",
            (match, user, limit),
        ).fetchall()
        return [(row_to_fact(r[:-1], ()), float(r[-1])) for r in rows]

    def engine_problems(self) -> list[str]:
        problems = [r[0] for r in self.db.execute("PRAGMA integrity_check") if r[0] != "ok"]
        return problems + [
            f"{r[0]} row {r[1]} points at a missing {r[2]} row"
            for r in self.db.execute("PRAGMA foreign_key_check")
        ]

    def fulltext_problems(self) -> list[str]:
        try:
            self.db.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            return [f"full-text index: {exc}"]
        return []

    def rebuild_fulltext(self) -> None:
        self.db.execute("INSERT INTO facts_fts (facts_fts) VALUES ('rebuild')")


translate_errors(SQLiteStore, sqlite3.Error, describe)
