"""The PostgreSQL backend (psycopg 3): one server for many users and many processes.

Row access is shared with SQLite (`_sql`). What differs lives here: the schema, transactions
that hold a per-user advisory lock (so compare-and-write is atomic per user across processes),
full-text search on a generated tsvector, and vector search with pgvector when it is installed.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from ankita._errors import StoreError
from ankita._models import Fact
from ankita.store._sql import SQLStore
from ankita.store._sqlbase import (
    JOINED_FACT_COLUMNS,
    row_to_fact,
    translate_errors,
)

try:
    import psycopg
except ImportError:  # pragma: no cover - the error below says what to install
    psycopg = None  # type: ignore[assignment]

SCHEMA_VERSION = 2
MIGRATION_LOCK = 0x616E6B69  # an advisory lock key of our own, held while the schema is built

_EVENTS_PER_USER = [
    "ALTER TABLE events ALTER COLUMN id DROP DEFAULT",
    "DROP SEQUENCE IF EXISTS events_id_seq",
    "ALTER TABLE events DROP CONSTRAINT events_pkey",
    'ALTER TABLE events ADD PRIMARY KEY ("user", id)',
    "DROP INDEX IF EXISTS events_op",
    'CREATE INDEX events_op ON events ("user", op)',
]

# Ids and index terms compare bytes ("C"), as SQLite and Python do, whatever the server locale.
_SCHEMA = [
    """CREATE TABLE facts (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT COLLATE "C" NOT NULL UNIQUE,
        "user" TEXT NOT NULL,
        text TEXT NOT NULL,
        kind TEXT NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL CHECK (status IN ('active', 'superseded')),
        source TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_confirmed_at TEXT NOT NULL,
        mentions INTEGER NOT NULL DEFAULT 1,
        tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
    )""",
    'CREATE INDEX facts_user ON facts ("user", status, kind)',
    'CREATE INDEX facts_pinned ON facts ("user", pinned)',
    "CREATE INDEX facts_tsv ON facts USING gin (tsv)",
    """CREATE TABLE links (
        "user" TEXT NOT NULL,
        a TEXT COLLATE "C" NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
        b TEXT COLLATE "C" NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        sure INTEGER NOT NULL DEFAULT 1,
        PRIMARY KEY (a, b),
        CHECK (a < b)
    )""",
    "CREATE INDEX links_b ON links (b)",
    """CREATE TABLE events (
        id BIGINT NOT NULL,
        op TEXT NOT NULL,
        "user" TEXT NOT NULL,
        type TEXT NOT NULL,
        fact_id TEXT COLLATE "C" NOT NULL,
        other_id TEXT COLLATE "C",
        at TEXT NOT NULL,
        data TEXT NOT NULL,
        undone_by BIGINT,
        PRIMARY KEY ("user", id)
    )""",
    'CREATE INDEX events_fact ON events ("user", fact_id)',
    'CREATE INDEX events_other ON events ("user", other_id)',
    'CREATE INDEX events_op ON events ("user", op)',
    """CREATE TABLE vectors (
        seq BIGSERIAL PRIMARY KEY,
        fact_id TEXT COLLATE "C" NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BYTEA NOT NULL,
        UNIQUE (fact_id, model)
    )""",
    "CREATE INDEX vectors_model ON vectors (model, seq)",
    """CREATE TABLE tokens (
        hash TEXT PRIMARY KEY,
        "user" TEXT NOT NULL,
        label TEXT,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE terms (
        "user" TEXT NOT NULL,
        term TEXT COLLATE "C" NOT NULL,
        fact_id TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY ("user", term, fact_id)
    )""",
    "CREATE INDEX terms_fact ON terms (fact_id)",
]


@lru_cache(maxsize=512)
def _dialect(sql: str) -> str:
    """`?` placeholders become psycopg's `%s`; a literal % is doubled first."""
    return sql.replace("%", "%%").replace("?", "%s")


def describe(location: str, exc: Any) -> str:
    """A sentence a user can act on, for the PostgreSQL errors a store can meet."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    where = _redact(location)
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        return (
            f"cannot reach PostgreSQL at {where} ({text}): check that the server runs and "
            "the URL, user and password are right"
        )
    if "read-only" in text or "read only" in text:
        return f"{where} is read-only ({text}); nothing was written."
    if "could not extend" in text or "No space left" in text:
        return f"no space left on the server of {where} ({text}); nothing was written."
    return f"{where}: {text}"


def _redact(location: str) -> str:
    """The URL without its password, for messages and logs."""
    head, sep, tail = location.partition("://")
    if "@" not in tail:
        return location
    credentials, _, rest = tail.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{head}{sep}{user}:***@{rest}" if ":" in credentials else location


class PostgresStore(SQLStore):
    """Every user's memory in one PostgreSQL database (the schema on the search path)."""

    SCHEMA_VERSION = SCHEMA_VERSION
    _contains = "strpos(lower(text), lower(?)) > 0"

    def __init__(self, url: str) -> None:
        if psycopg is None:
            raise StoreError("PostgreSQL needs psycopg: pip install 'ankita[postgres]'")
        self.path = _redact(url)
        self._depth = 0
        self.own_filings = {}
        try:
            self.db = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(describe(url, exc)) from exc
        try:
            self.has_pgvector = self._enable_pgvector()
            self._migrate()
        except BaseException as exc:
            self.db.close()
            if isinstance(exc, psycopg.Error):
                raise StoreError(describe(self.path, exc)) from exc
            raise

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.db.execute(_dialect(sql), params)

    def _run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self.db.cursor() as cur:
                cur.executemany(_dialect(sql), rows)

    def _enable_pgvector(self) -> bool:
        """Use pgvector if the server has it (creating the extension needs the right)."""
        try:
            self.db.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error:
            pass  # not installed or not allowed: exact search in memory instead
        row = self.db.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        return row is not None

    def _migrate(self) -> None:
        with self.transaction():
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            version = self.schema_version()
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema {version}; this Ankita knows up to "
                    f"{SCHEMA_VERSION}. Upgrade Ankita."
                )
            if version == 0:
                for statement in _SCHEMA:
                    self.db.execute(statement)
                if self.has_pgvector:
                    self.db.execute("ALTER TABLE vectors ADD COLUMN embedding vector")
                self.db.execute(
                    "INSERT INTO meta VALUES ('schema_version', %s)", (str(SCHEMA_VERSION),)
                )
            elif version == 1:
                # Event ids per user, as in SQLite's migration 7; the ids already given stay.
                for statement in _EVENTS_PER_USER:
                    self.db.execute(statement)
                self.db.execute(
                    "UPDATE meta SET value = %s WHERE key = 'schema_version'",
                    (str(SCHEMA_VERSION),),
                )
            # Added after schema 1 shipped; cheap to assert on every open.
            self.db.execute(
                "ALTER TABLE links ADD COLUMN IF NOT EXISTS sure INTEGER NOT NULL DEFAULT 1"
            )
            self.db.execute("CREATE INDEX IF NOT EXISTS events_fact_id ON events (fact_id)")
            # What the parser read in a fact, as SQLite's migration 9.
            self.db.execute(
                'CREATE TABLE IF NOT EXISTS parses (fact_id TEXT COLLATE "C" PRIMARY KEY '
                "REFERENCES facts (id) ON DELETE CASCADE, parser TEXT NOT NULL, "
                "digest TEXT NOT NULL, data TEXT NOT NULL)"
            )
            # Every change to a fact's postings (`_terms.TermIndex`); a user's are written
            # under that user's lock, so they commit in sequence order.
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS term_changes (seq BIGSERIAL PRIMARY KEY,"
                ' "user" TEXT, fact_id TEXT)'
            )
        # The column tells, not the extension: a schema built without pgvector stays so.
        self.has_pgvector = (
            self.db.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_name = 'vectors' AND "
                "column_name = 'embedding' AND table_schema = current_schema()"
            ).fetchone()
            is not None
        )

    @contextlib.contextmanager
    def transaction(self, user: str | None = None) -> Iterator[PostgresStore]:
        """One transaction holding an advisory lock on `user` until it ends: writers of one
        user run one at a time across every process, writers of different users in
        parallel."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        try:
            self.db.execute("BEGIN")
            self.db.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (f"ankita-user:{user or ''}",),
            )
        except psycopg.Error as exc:
            self._rollback()
            raise StoreError(describe(self.path, exc)) from exc
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._depth = 0
            self._rollback()
            raise
        self._depth = 0
        try:
            self.db.execute("COMMIT")
        except psycopg.Error as exc:
            self._rollback()
            raise StoreError(describe(self.path, exc)) from exc

    def _rollback(self) -> None:
        self._rolled_back()
        with contextlib.suppress(psycopg.Error):
            self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.db.close()

    # -- what only PostgreSQL does --------------------------------------------------------

    def _ids_clause(self, ids: Sequence[str], column: str = "id") -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(ids)]

    def put_vector(self, fact_id: str, model: str, vector: bytes, dim: int) -> None:
        if not self.has_pgvector:
            super().put_vector(fact_id, model, vector, dim)
            return
        self._run("DELETE FROM vectors WHERE fact_id = ? AND model = ?", (fact_id, model))
        self._run(
            "INSERT INTO vectors (fact_id, model, dim, vector, embedding) "
            "VALUES (?, ?, ?, ?, ?::vector)",
            (fact_id, model, dim, vector, _literal(struct.unpack(f"<{dim}f", vector))),
        )

    @property
    def searches_vectors(self) -> bool:
        return bool(self.has_pgvector)

    def nearest(
        self, user: str, model: str, vector: Sequence[float], line: float
    ) -> dict[str, float] | None:
        """Exact cosine search with pgvector's `<=>` (cosine distance = 1 - cosine)."""
        if not self.has_pgvector:
            return None
        query = _literal(vector)
        rows = self._run(
            "SELECT fact_id, 1 - distance FROM (SELECT v.fact_id, CASE WHEN v.dim = ? THEN "
            "v.embedding <=> ?::vector END AS distance FROM vectors v JOIN facts f ON "
            'f.id = v.fact_id WHERE f."user" = ? AND v.model = ?) AS d WHERE distance <= ?',
            (len(vector), query, user, model, 1.0 - line),
        ).fetchall()
        return {r[0]: float(r[1]) for r in rows}

    def closest(
        self, user: str, model: str, vector: Sequence[float], kind: str, floor: float, count: int
    ) -> list[str] | None:
        if not self.has_pgvector:
            return None
        # Twice as many as asked, and a few more: the caller ranks them by the exact cosine,
        # which may order near-ties differently from the server's float arithmetic.
        rows = self._run(
            "SELECT fact_id FROM (SELECT v.fact_id, CASE WHEN v.dim = ? THEN v.embedding <=> "
            "?::vector END AS distance FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE "
            "f.\"user\" = ? AND v.model = ? AND f.kind = ? AND f.status = 'active') AS d "
            "WHERE distance <= ? ORDER BY distance, fact_id LIMIT ?",
            (len(vector), _literal(vector), user, model, kind, 1.0 - floor + 1e-4, 2 * count + 4),
        ).fetchall()
        return [r[0] for r in rows]

    def search(self, user: str, words: Sequence[str], limit: int) -> list[tuple[Fact, float]]:
        """The generated tsvector (GIN-indexed), ranked by ts_rank_cd. Each word is passed as a
        parameter and quoted by the server, so no user text is read as tsquery syntax; words
        of 3+ characters match as prefixes, as in SQLite."""
        if not words:
            return []
        parts, params = [], []
        for word in sorted(words):
            if len(word) >= 3:
                parts.append("to_tsquery('simple', quote_literal(?) || ':*')")
            else:
                parts.append("plainto_tsquery('simple', ?)")
            params.append(word)
        query = " || ".join(parts)
        rows = self._run(
            f"SELECT {JOINED_FACT_COLUMNS}, -ts_rank_cd(f.tsv, q) FROM facts f, "
            f"(SELECT {query}) AS t(q) "
            "WHERE f.tsv @@ q AND f.\"user\" = ? AND f.status = 'active' "
            "ORDER BY 2, f.seq LIMIT ?",
            [*params, user, limit],
        ).fetchall()
        return [(row_to_fact(r[:-1], ()), float(r[-1])) for r in rows]

    def engine_problems(self) -> list[str]:
        # PostgreSQL enforces foreign keys and checks pages itself; report what would break us.
        return [
            f"the schema lacks table {name}"
            for name in ("facts", "links", "events", "vectors", "tokens", "terms")
            if self.db.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is None
        ]


def with_schema(url: str, schema: str) -> str:
    """The URL with connections using `schema` first on their search path (then public, where
    extensions such as pgvector usually live)."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query["options"] = f"-csearch_path={schema},public"
    return urlunsplit(parts._replace(query=urlencode(query)))


def create_schema(url: str, prefix: str) -> str:
    """A new empty schema (a database of its own for a test or a benchmark): its URL."""
    import uuid

    if psycopg is None:
        raise StoreError("PostgreSQL needs psycopg: pip install 'ankita[postgres]'")
    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
    return with_schema(url, schema)


def drop_schema(url: str) -> None:
    from urllib.parse import parse_qsl, urlsplit

    options = dict(parse_qsl(urlsplit(url).query)).get("options", "")
    schema = options.partition("search_path=")[2].split(",")[0]
    if psycopg is not None and schema:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _literal(values: Sequence[float]) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(repr(float(v)) for v in values) + "]"


if psycopg is not None:
    translate_errors(PostgresStore, psycopg.Error, describe)
