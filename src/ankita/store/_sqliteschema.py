"""SQLite's schema, as the migrations that build it, oldest first (`SQLiteStore._migrate`)."""

from __future__ import annotations

from typing import Any

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


# Candidate search (docs/index.md): postings of index terms; and vectors get a sequence number
# that is never reused, so an in-memory matrix can catch up with `seq > last seen`.
_M004: list[Any] = [
    """CREATE TABLE terms (
        user TEXT NOT NULL,
        term TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        PRIMARY KEY (user, term, fact_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX terms_fact ON terms (fact_id)",
    # Filed by the first memory that opens the store (`refresh_terms`): the store has no text
    # analysis of its own.
    "DELETE FROM meta WHERE key = 'analyzer'",
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

# A new fact id is checked against every event ever written (ids are never reused): by id
# alone, which the (user, fact_id) index cannot serve.
_M005 = ["CREATE INDEX IF NOT EXISTS events_fact_id ON events (fact_id)"]

# Every change to a fact's postings, in sequence: in-memory copies of the postings
# (`_terms.TermIndex`) catch up from it. Rows are never deleted, so a committed seq is never
# reused without AUTOINCREMENT (which would write its counter on every insert).
_M006 = [
    """CREATE TABLE IF NOT EXISTS term_changes (
        seq INTEGER PRIMARY KEY,
        user TEXT,
        fact_id TEXT
    )"""
]

# Event ids are numbered per user (docs/security.md): one sequence for the whole store showed
# each user the others' activity in the gaps of their own ids. Ids already given are kept.
_M007 = [
    """CREATE TABLE events_new (
        id INTEGER NOT NULL,
        op TEXT NOT NULL,
        user TEXT NOT NULL,
        type TEXT NOT NULL,
        fact_id TEXT NOT NULL,
        other_id TEXT,
        at TEXT NOT NULL,
        data TEXT NOT NULL,
        undone_by INTEGER,
        PRIMARY KEY (user, id)
    )""",
    "INSERT INTO events_new (id, op, user, type, fact_id, other_id, at, data, undone_by) "
    "SELECT id, op, user, type, fact_id, other_id, at, data, undone_by FROM events",
    "DROP TABLE events",
    "ALTER TABLE events_new RENAME TO events",
    "CREATE INDEX events_fact ON events (user, fact_id)",
    "CREATE INDEX events_other ON events (user, other_id)",
    "CREATE INDEX events_op ON events (user, op)",
    "CREATE INDEX events_fact_id ON events (fact_id)",
]


# A link is a sure conflict (raises recall's notice) or a possible one (kept for review).
def _add_sure(db: Any) -> None:
    # Once: a store whose version was set back (an old copy's meta) may have the column.
    if "sure" not in {row[1] for row in db.execute("PRAGMA table_info(links)")}:
        db.execute("ALTER TABLE links ADD COLUMN sure INTEGER NOT NULL DEFAULT 1")


_M008: list[Any] = [_add_sure]

# What the parser read in a fact (`analysis._propositions`), so a stored fact is parsed once:
# `parser` names the parser and its rules, `digest` the text read (a changed text is re-read).
_M009 = [
    """CREATE TABLE IF NOT EXISTS parses (
        fact_id TEXT PRIMARY KEY REFERENCES facts (id) ON DELETE CASCADE,
        parser TEXT NOT NULL,
        digest TEXT NOT NULL,
        data TEXT NOT NULL
    )"""
]

MIGRATIONS: tuple[list[Any], ...] = (
    _M001,
    _M002,
    _M003,
    _M004,
    _M005,
    _M006,
    _M007,
    _M008,
    _M009,
)
SCHEMA_VERSION = len(MIGRATIONS)
