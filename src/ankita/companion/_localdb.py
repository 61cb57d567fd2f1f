"""The companion's small local SQLite files (transcripts, tasks, channels): opened one way."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence

from ankita._errors import StoreError
from ankita._files import private_file


def open_local(path: str, schema: Sequence[str], what: str) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit mode (transactions are explicit), schema applied."""
    try:
        if path != ":memory:":
            private_file(path)
        db = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode = WAL")
        for statement in schema:
            db.execute(statement)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"cannot open the {what} at {path}: {exc}") from exc
    return db


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction that holds the write lock from its first statement."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
