"""The SQLite backend: schema, migrations, transactions and row access. No decisions here."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ._errors import StoreError
from ._models import Event, Fact

BUSY_TIMEOUT_S = 10.0  # one wait inside SQLite
LOCK_RETRIES = 5  # then whole-transaction retries with backoff, so a busy store never loses a write

F = TypeVar("F")


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
            return (f"{path} is read-only: its folder cannot be written ({text}), and SQLite "
                    "needs it for the write-ahead log. Nothing was changed.")
        return f"cannot open {path} ({text}): check that the folder exists and is writable."
    return f"{path}: {text}"


def _translated(method: F) -> F:
    """sqlite3 errors leave the store as StoreError: the one seam where they are translated."""
    @functools.wraps(method)  # type: ignore[arg-type]
    def wrapper(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)  # type: ignore[operator]
        except sqlite3.Error as exc:
            raise StoreError(describe(self.path, exc)) from exc
    return wrapper  # type: ignore[return-value]


_FACT_COLUMNS = ("id, user, text, kind, pinned, status, source, created_at, updated_at, "
                 "last_confirmed_at, mentions")


# Each migration is a list of statements run inside one transaction (executescript would
# commit on its own, so a failed migration could leave a half-built schema).
_M001 = [
    """CREATE TABLE facts (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        user TEXT NOT NULL,
        text TEXT NOT NULL,
        kind TEXT NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL CHECK (status IN ('active', 'superseded')),
        source TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_confirmed_at TEXT NOT NULL,
        mentions INTEGER NOT NULL DEFAULT 1
    )""",
    "CREATE INDEX facts_user ON facts (user, status, kind)",
    # One row per conflicting pair, a < b: symmetry holds by construction.
    """CREATE TABLE links (
        user TEXT NOT NULL,
        a TEXT NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
        b TEXT NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        PRIMARY KEY (a, b),
        CHECK (a < b)
    )""",
    "CREATE INDEX links_b ON links (b)",
    """CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        op TEXT NOT NULL,
        user TEXT NOT NULL,
        type TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        other_id TEXT,
        at TEXT NOT NULL,
        data TEXT NOT NULL,
        undone_by INTEGER
    )""",
    "CREATE INDEX events_fact ON events (user, fact_id)",
    "CREATE INDEX events_other ON events (user, other_id)",
    "CREATE INDEX events_op ON events (op)",
    """CREATE VIRTUAL TABLE facts_fts USING fts5 (
        text, content = 'facts', content_rowid = 'seq',
        tokenize = 'unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
        INSERT INTO facts_fts (rowid, text) VALUES (new.seq, new.text);
    END""",
    """CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    END""",
    """CREATE TRIGGER facts_au AFTER UPDATE OF text ON facts BEGIN
        INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.seq, old.text);
        INSERT INTO facts_fts (rowid, text) VALUES (new.seq, new.text);
    END""",
]

# Vectors sit beside the model that made them, so vectors of two models never meet.
_M002 = [
    """CREATE TABLE vectors (
        fact_id TEXT NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (fact_id, model)
    )""",
]


# API tokens: only a hash is stored; the token itself is shown once, at creation.
_M003 = [
    """CREATE TABLE tokens (
        hash TEXT PRIMARY KEY,
        user TEXT NOT NULL,
        label TEXT,
        created_at TEXT NOT NULL
    )""",
]

def _backfill_terms(db: sqlite3.Connection) -> None:
    from ._index import index_terms

    rows = db.execute("SELECT id, user, text FROM facts").fetchall()
    db.executemany("INSERT OR IGNORE INTO terms VALUES (?, ?, ?)",
                   [(user, term, fact_id) for fact_id, user, text in rows
                    for term in index_terms(text)])


# Candidate search (docs/scale.md): postings of index terms; and vectors get a sequence number
# that is never reused, so an in-memory matrix can catch up with `seq > last seen`.
_M004: list[Any] = [
    """CREATE TABLE terms (
        user TEXT NOT NULL,
        term TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        PRIMARY KEY (user, term, fact_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX terms_fact ON terms (fact_id)",
    _backfill_terms,
    """CREATE TABLE vectors_new (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        fact_id TEXT NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (fact_id, model)
    )""",
    "INSERT INTO vectors_new (fact_id, model, dim, vector) "
    "SELECT fact_id, model, dim, vector FROM vectors",
    "DROP TABLE vectors",
    "ALTER TABLE vectors_new RENAME TO vectors",
    "CREATE INDEX vectors_model ON vectors (model, seq)",
    "CREATE INDEX IF NOT EXISTS facts_pinned ON facts (user, pinned)",
]

MIGRATIONS: tuple[list[Any], ...] = (_M001, _M002, _M003, _M004)
SCHEMA_VERSION = len(MIGRATIONS)


def _row_to_fact(row: Sequence[Any], links: tuple[str, ...]) -> Fact:
    return Fact(id=row[0], user=row[1], text=row[2], kind=row[3], pinned=bool(row[4]),
                status=row[5], source=row[6], created_at=row[7], updated_at=row[8],
                last_confirmed_at=row[9], mentions=row[10], conflicts_with=links)


class SQLiteStore:
    """One SQLite file holding every user's facts, links, events and vectors."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            try:
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        try:
            # Autocommit mode: transactions are opened explicitly with BEGIN IMMEDIATE.
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                      check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            if self.path != ":memory:":
                self._retry(lambda: self.db.execute("PRAGMA journal_mode = WAL"))
            self.db.execute("PRAGMA synchronous = NORMAL")
            self._retry(self._migrate)
        except sqlite3.Error as exc:
            raise StoreError(describe(self.path, exc)) from exc
        self._depth = 0

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
                raise StoreError(f"{self.path} has schema {version}; this Ankita knows up to "
                                 f"{SCHEMA_VERSION}. Upgrade Ankita.")
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    if callable(statement):
                        statement(self.db)
                    else:
                        self.db.execute(statement)
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                            (str(SCHEMA_VERSION),))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SQLiteStore]:
        """One write transaction; BEGIN IMMEDIATE takes the write lock before anything is read,
        so the comparison and the write see the same store (compare-and-write)."""
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
            if self.db.in_transaction:  # SQLite may already have rolled back (disk full)
                self.db.execute("ROLLBACK")
            raise
        self._depth = 0
        try:
            self._retry(lambda: self.db.execute("COMMIT"))
        except BaseException as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(describe(self.path, exc)) from exc
            raise

    def close(self) -> None:
        self.db.close()

    def backup(self, target: str | Path) -> str:
        """Copy the store to `target` with SQLite's online backup: a consistent snapshot, even
        while other processes write. Written beside the target, then renamed into place."""
        final = Path(target).expanduser()
        if final.exists():
            raise StoreError(f"{final} exists; choose a new file for the backup")
        if not final.parent.is_dir():
            raise StoreError(f"{final.parent} is not a folder")
        partial = final.with_name(final.name + ".partial")
        partial.unlink(missing_ok=True)
        try:
            copy = sqlite3.connect(partial)
            try:
                self.db.backup(copy)
                bad = [r[0] for r in copy.execute("PRAGMA integrity_check") if r[0] != "ok"]
            finally:
                copy.close()
            if bad:
                raise StoreError(f"the backup failed its integrity check: {bad[0]}")
            os.replace(partial, final)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        return str(final)

    def schema_version(self) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    # -- facts ----------------------------------------------------------------------------

    def _links_map(self, ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            # Two indexed lookups: an OR across columns would scan the whole table.
            for a, b in self.db.execute(
                    f"SELECT a, b FROM links WHERE a IN ({marks}) "
                    f"UNION SELECT a, b FROM links WHERE b IN ({marks})", chunk + chunk):
                if a in out:
                    out[a].append(b)
                if b in out:
                    out[b].append(a)
        return out

    def _facts(self, sql: str, params: Sequence[Any], links: bool = True) -> list[Fact]:
        rows = self.db.execute(f"SELECT {_FACT_COLUMNS} FROM facts {sql}", params).fetchall()
        if not links:  # comparing does not need them; a dense conflict graph makes them costly
            return [_row_to_fact(r, ()) for r in rows]
        found = self._links_map([r[0] for r in rows])
        return [_row_to_fact(r, tuple(sorted(found[r[0]]))) for r in rows]

    def get_fact(self, user: str, fact_id: str) -> Fact | None:
        found = self._facts("WHERE user = ? AND id = ?", (user, fact_id))
        return found[0] if found else None

    def list_facts(self, user: str, statuses: Sequence[str] = ("active",),
                   kinds: Sequence[str] | None = None, search: str | None = None,
                   limit: int | None = None, links: bool = True) -> list[Fact]:
        sql = f"WHERE user = ? AND status IN ({','.join('?' * len(statuses))})"
        params: list[Any] = [user, *statuses]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        if search:
            # instr, not LIKE: '%' and '_' in the search are plain characters.
            sql += " AND instr(lower(text), lower(?)) > 0"
            params.append(search)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self._facts(sql, params, links)

    def pinned_facts(self, user: str, kinds: Sequence[str] | None = None) -> list[Fact]:
        sql, params = "WHERE user = ? AND status = 'active' AND pinned = 1", [user]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        return self._facts(sql + " ORDER BY seq", params)

    def recent_facts(self, user: str, limit: int,
                     kinds: Sequence[str] | None = None) -> list[Fact]:
        sql, params = "WHERE user = ? AND status = 'active'", [user]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        return self._facts(sql + " ORDER BY last_confirmed_at DESC, seq DESC LIMIT ?",
                           [*params, limit])

    def facts_by_ids(self, user: str, ids: Sequence[str], links: bool = True) -> list[Fact]:
        """The facts with these ids, oldest first (the order the exhaustive scan uses)."""
        if not ids:
            return []
        if len(ids) <= 900:  # under SQLite's parameter limit: one plain IN query
            marks = ",".join("?" * len(ids))
            return self._facts(f"WHERE user = ? AND id IN ({marks}) ORDER BY seq",
                               [user, *ids], links)
        # Through a temporary table: any number of ids, one indexed join, ordered by seq.
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM wanted")
        self.db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", [(i,) for i in ids])
        found = self._facts("WHERE user = ? AND id IN (SELECT id FROM wanted) ORDER BY seq",
                            [user], links)
        self.db.execute("DELETE FROM wanted")
        return found

    def insert_fact(self, fact: Fact) -> None:
        self.db.execute(
            f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (fact.id, fact.user, fact.text, fact.kind, int(fact.pinned), fact.status,
             fact.source, fact.created_at, fact.updated_at, fact.last_confirmed_at,
             fact.mentions))
        self._index(fact.user, fact.id, fact.text)

    def _index(self, user: str, fact_id: str, text: str) -> None:
        from ._index import index_terms

        self.db.executemany("INSERT OR IGNORE INTO terms VALUES (?, ?, ?)",
                            [(user, term, fact_id) for term in index_terms(text)])

    def update_fact(self, fact_id: str, **fields: Any) -> None:
        if "pinned" in fields:
            fields["pinned"] = int(fields["pinned"])
        sets = ", ".join(f"{name} = ?" for name in fields)
        self.db.execute(f"UPDATE facts SET {sets} WHERE id = ?", [*fields.values(), fact_id])
        if "text" in fields:
            row = self.db.execute("SELECT user FROM facts WHERE id = ?", (fact_id,)).fetchone()
            self.db.execute("DELETE FROM terms WHERE fact_id = ?", (fact_id,))
            if row:
                self._index(row[0], fact_id, fields["text"])

    def delete_fact(self, fact_id: str) -> None:
        self.db.execute("DELETE FROM links WHERE a = ? OR b = ?", (fact_id, fact_id))
        self.db.execute("DELETE FROM vectors WHERE fact_id = ?", (fact_id,))
        self.db.execute("DELETE FROM terms WHERE fact_id = ?", (fact_id,))
        self.db.execute("DELETE FROM facts WHERE id = ?", (fact_id,))

    def candidate_ids(self, user: str, exact: Sequence[str],
                      prefixes: Sequence[str]) -> list[str]:
        """Facts filed under any exact term, or under a term that extends a prefix."""
        clauses, params = [], []
        for start in range(0, len(exact), 500):
            chunk = list(exact[start:start + 500])
            clauses.append(f"SELECT fact_id FROM terms WHERE user = ? AND term IN "
                           f"({','.join('?' * len(chunk))})")
            params += [user, *chunk]
        for prefix in prefixes:
            # Terms that extend the prefix: the range [prefix, prefix + U+10FFFF).
            clauses.append("SELECT fact_id FROM terms WHERE user = ? AND term > ? AND term < ?")
            params += [user, prefix, prefix + "\U0010ffff"]
        if not clauses:
            return []
        return [r[0] for r in self.db.execute(" UNION ".join(clauses), params)]

    def id_exists(self, fact_id: str) -> bool:
        """True if the id was ever used (ids are never reused, even after a forget)."""
        row = self.db.execute("SELECT 1 FROM facts WHERE id = ? UNION ALL "
                              "SELECT 1 FROM events WHERE fact_id = ? LIMIT 1",
                              (fact_id, fact_id)).fetchone()
        return row is not None

    def search(self, user: str, match: str, limit: int) -> list[tuple[str, float]]:
        """Full-text candidates for recall: (id, bm25 rank; lower is better)."""
        rows = self.db.execute(
            "SELECT f.id, bm25(facts_fts) FROM facts_fts JOIN facts f ON f.seq = facts_fts.rowid"
            " WHERE facts_fts MATCH ? AND f.user = ? AND f.status = 'active'"
            " ORDER BY bm25(facts_fts) LIMIT ?", (match, user, limit)).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    # -- links ----------------------------------------------------------------------------

    def add_link(self, user: str, a: str, b: str, at: str) -> bool:
        """Flag a and b against each other; False if they already were."""
        lo, hi = sorted((a, b))
        cur = self.db.execute("INSERT OR IGNORE INTO links VALUES (?, ?, ?, ?)",
                              (user, lo, hi, at))
        return cur.rowcount == 1

    def remove_link(self, a: str, b: str) -> bool:
        lo, hi = sorted((a, b))
        return self.db.execute("DELETE FROM links WHERE a = ? AND b = ?", (lo, hi)).rowcount == 1

    def links(self, user: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT a, b FROM links WHERE user = ? ORDER BY a, b", (user,))]

    def link_rows(self, user: str) -> list[tuple[str, str, str]]:
        """(a, b, created_at) of every link of the user, for export."""
        return [(r[0], r[1], r[2]) for r in self.db.execute(
            "SELECT a, b, created_at FROM links WHERE user = ? ORDER BY a, b", (user,))]

    # -- events ---------------------------------------------------------------------------

    def add_event(self, user: str, op: str, type_: str, fact_id: str, other_id: str | None,
                  at: str, data: dict[str, Any]) -> int:
        cur = self.db.execute(
            "INSERT INTO events (op, user, type, fact_id, other_id, at, data) "
            "VALUES (?,?,?,?,?,?,?)",
            (op, user, type_, fact_id, other_id, at, json.dumps(data, ensure_ascii=False)))
        assert cur.lastrowid is not None
        return cur.lastrowid

    def put_event(self, user: str, event: Event) -> None:
        """Write an event with its own id (restoring an export); add_event picks new ids."""
        self.db.execute(
            "INSERT INTO events (id, op, user, type, fact_id, other_id, at, data, undone_by) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (event.id, event.op, user, event.type, event.fact_id, event.other_id, event.at,
             json.dumps(event.data, ensure_ascii=False), event.undone_by))

    def user_events(self, user: str) -> list[Event]:
        return self._events("WHERE user = ? ORDER BY id", (user,))

    def max_event_id(self) -> int:
        row = self.db.execute("SELECT max(id) FROM events").fetchone()
        return int(row[0] or 0)

    def _events(self, sql: str, params: Sequence[Any]) -> list[Event]:
        rows = self.db.execute(
            "SELECT id, op, type, fact_id, other_id, at, data, undone_by FROM events "
            + sql, params).fetchall()
        return [Event(id=r[0], op=r[1], type=r[2], fact_id=r[3], other_id=r[4], at=r[5],
                      data=json.loads(r[6]), undone_by=r[7]) for r in rows]

    def link_event(self, user: str, a: str, b: str) -> Event | None:
        """The latest event that flagged a and b (in either direction) and still stands."""
        found = self._events(
            "WHERE user = ? AND type = 'link' AND undone_by IS NULL AND ((fact_id = ? AND "
            "other_id = ?) OR (fact_id = ? AND other_id = ?)) ORDER BY id DESC LIMIT 1",
            (user, a, b, b, a))
        return found[0] if found else None

    def events_for(self, user: str, fact_id: str) -> list[Event]:
        return self._events("WHERE user = ? AND (fact_id = ? OR other_id = ?) ORDER BY id",
                            (user, fact_id, fact_id))

    def event(self, user: str, event_id: int) -> Event | None:
        found = self._events("WHERE user = ? AND id = ?", (user, event_id))
        return found[0] if found else None

    def op_events(self, op: str) -> list[Event]:
        return self._events("WHERE op = ? ORDER BY id", (op,))

    def mark_undone(self, event_ids: Sequence[int], by: int) -> None:
        self.db.executemany("UPDATE events SET undone_by = ? WHERE id = ?",
                            [(by, i) for i in event_ids])

    # -- vectors --------------------------------------------------------------------------

    def put_vector(self, fact_id: str, model: str, vector: bytes, dim: int) -> None:
        self.db.execute("DELETE FROM vectors WHERE fact_id = ? AND model = ?", (fact_id, model))
        self.db.execute("INSERT INTO vectors (fact_id, model, dim, vector) VALUES (?, ?, ?, ?)",
                        (fact_id, model, dim, vector))

    def vectors_since(self, user: str, model: str, seq: int) -> list[tuple[int, str, bytes]]:
        """(seq, fact id, vector) written after `seq`, for catching up an in-memory index."""
        return [(r[0], r[1], r[2]) for r in self.db.execute(
            "SELECT v.seq, v.fact_id, v.vector FROM vectors v JOIN facts f ON f.id = v.fact_id "
            "WHERE v.model = ? AND v.seq > ? AND f.user = ? ORDER BY v.seq", (model, seq, user))]

    def vector_dim(self, model: str) -> int | None:
        """The dimension this store has seen for a model (a provider may not change it)."""
        row = self.db.execute("SELECT dim FROM vectors WHERE model = ? LIMIT 1",
                              (model,)).fetchone()
        return int(row[0]) if row else None

    def user_vectors(self, user: str) -> list[tuple[str, str, int, bytes]]:
        """(fact id, model, dim, vector) of every vector of the user, in fact order."""
        return [(r[0], r[1], r[2], r[3]) for r in self.db.execute(
            "SELECT v.fact_id, v.model, v.dim, v.vector FROM vectors v JOIN facts f "
            "ON f.id = v.fact_id WHERE f.user = ? ORDER BY f.seq, v.model", (user,))]

    def delete_vectors(self, fact_id: str) -> None:
        self.db.execute("DELETE FROM vectors WHERE fact_id = ?", (fact_id,))

    def facts_without_vector(self, user: str, model: str) -> list[tuple[str, str]]:
        """(id, text) of the user's facts that have no vector from `model`."""
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT f.id, f.text FROM facts f WHERE f.user = ? AND NOT EXISTS ("
            "SELECT 1 FROM vectors v WHERE v.fact_id = f.id AND v.model = ?) ORDER BY f.seq",
            (user, model))]

    def vectors_of(self, ids: Sequence[str], model: str) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start:start + 500])
            out.update((r[0], r[1]) for r in self.db.execute(
                f"SELECT fact_id, vector FROM vectors WHERE model = ? AND fact_id IN "
                f"({','.join('?' * len(chunk))})", [model, *chunk]))
        return out

    # -- tokens ---------------------------------------------------------------------------

    def add_token(self, token_hash: str, user: str, label: str | None, at: str) -> None:
        self.db.execute("INSERT INTO tokens VALUES (?, ?, ?, ?)", (token_hash, user, label, at))

    def token_user(self, token_hash: str) -> str | None:
        row = self.db.execute("SELECT user FROM tokens WHERE hash = ?", (token_hash,)).fetchone()
        return row[0] if row else None

    def tokens(self) -> list[tuple[str, str, str | None, str]]:
        """(hash prefix, user, label, created_at) of every token."""
        return [(r[0][:12], r[1], r[2], r[3]) for r in self.db.execute(
            "SELECT hash, user, label, created_at FROM tokens ORDER BY created_at")]

    def revoke_token(self, prefix: str) -> int:
        return self.db.execute("DELETE FROM tokens WHERE hash LIKE ? || '%'",
                               (prefix,)).rowcount

    def token_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM tokens").fetchone()[0])

    # -- checks ---------------------------------------------------------------------------



# Every public method translates sqlite3 errors (transaction() does so itself, as a generator).
for _name, _method in list(vars(SQLiteStore).items()):
    if callable(_method) and not _name.startswith("_") and _name != "transaction":
        setattr(SQLiteStore, _name, _translated(_method))
