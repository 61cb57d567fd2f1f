"""Opening a store: the backend a location names."""

from __future__ import annotations

from typing import Any

from ankita.store._sql import SQLStore


def open_store(location: str | Any) -> SQLStore:
    """The backend a location names: a postgresql:// URL, or a SQLite file path."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from ankita.store._postgres import PostgresStore

        return PostgresStore(text)
    from ankita.store._sqlite import SQLiteStore

    return SQLiteStore(text)
