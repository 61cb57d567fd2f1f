"""Row access shared by the SQLite and PostgreSQL backends: the base of the store contract.

Statements use `?` placeholders and quote the "user" column (a reserved word in PostgreSQL);
each backend runs them through `_run`, which adapts the placeholder style, and supplies the few
pieces that differ (transactions, full-text search, substring match, long id lists, vectors).
No decisions here.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ankita._errors import StoreError
from ankita._models import Fact, Status

F = TypeVar("F")
# A fact's index terms from its text (`search/_index.index_terms`): handed to the store, which
# files what it is given and computes nothing.
TermsOf = Callable[[str], frozenset[str]]
FACT_COLUMNS = (
    'id, "user", text, kind, pinned, status, source, created_at, updated_at, '
    "last_confirmed_at, mentions"
)
# The same columns, read from a join in which the facts table is `f`.
JOINED_FACT_COLUMNS = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))
EVENT_COLUMNS = "id, op, type, fact_id, other_id, at, data, undone_by"
# How a listing may be sorted (a name a caller may pass -> its SQL), ties in the order said.
FACT_ORDERS = {
    "said": "seq",
    "text": "lower(text)",
    "kind": "kind",
    "status": "status",
    "mentions": "mentions",
    "confirmed": "last_confirmed_at",
    "created": "created_at",
}


_new_object = object.__new__


_STATUS = {status.value: status for status in Status}


def row_to_fact(row: Sequence[Any], links: tuple[str, ...]) -> Fact:
    # Filled in directly, not through the frozen dataclass's __init__ (a guarded setattr per
    # field): recall and the write path read hundreds of rows, and this is 4x cheaper.
    fact = _new_object(Fact)
    fact.__dict__.update(
        id=row[0],
        text=row[2],
        kind=row[3],
        user=row[1],
        pinned=bool(row[4]),
        # A damaged row keeps its word, for `doctor` to report; a sound one holds a Status.
        status=_STATUS.get(row[5], row[5]),
        source=row[6],
        created_at=row[7],
        updated_at=row[8],
        last_confirmed_at=row[9],
        mentions=row[10],
        conflicts_with=links,
    )
    return fact


TERMS_MAX = 512  # terms in one IN list
PARTS_MAX = 64  # SELECTs in one statement


def padded_list(values: Sequence[str], fill: str | None = None) -> list[str | None]:
    """The values and `fill` up to a power of two (at least 8): few list lengths make few
    statements for the driver to prepare. NULL, the default, matches nothing in an IN list."""
    return [*values, *[fill] * (max(8, 1 << (len(values) - 1).bit_length()) - len(values))]


def placeholders(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def translate_errors(
    cls: type,
    errors: type[BaseException] | tuple[type[BaseException], ...],
    describe: Callable[[str, Any], str],
) -> None:
    """Wrap every public method of a backend so its driver's errors leave as StoreError: the
    one seam where they are translated (transaction() does it itself, as a generator)."""

    def wrap(method: F) -> F:
        @functools.wraps(method)  # type: ignore[arg-type]
        def wrapper(self: SQLBase, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)  # type: ignore[operator]
            except errors as exc:
                raise StoreError(describe(self.path, exc)) from exc

        return wrapper  # type: ignore[return-value]

    # Each name once, resolved on `cls`: a method inherited and one overridden alike.
    names = {
        name
        for klass in cls.__mro__
        if klass is not object
        for name, method in vars(klass).items()
        if callable(method)
        and not name.startswith("_")
        and name != "transaction"
        and not isinstance(method, type)
    }
    for name in sorted(names):
        setattr(cls, name, wrap(getattr(cls, name)))


class SQLBase:
    """What every part of the SQL store reads and writes through: the connection's state and
    the few pieces each backend provides."""

    path: str
    SCHEMA_VERSION: int = 0
    db: Any
    # Transactions of this connection rolled back so far: an in-memory copy that read rows
    # inside one must read them again, since their sequence numbers may be reused.
    rollbacks: int = 0
    # This connection's own filings of postings since its last rollback, by their number in
    # the log: (user, fact id, its terms; none once it is gone). Its in-memory copies take
    # them from here instead of reading back what it has just written (`_terms.TermIndex`).
    own_filings: dict[int, tuple[str, str, frozenset[str]]]
    OWN_FILINGS_MAX = 4096
    last_logged = 0  # the number of this connection's last change in the log

    def _rolled_back(self) -> None:
        self.rollbacks += 1
        self.own_filings.clear()  # their numbers may be handed out again
        self.last_logged = 0

    def data_version(self) -> int | None:
        """A number that changes whenever another connection commits, if the backend has one."""
        return None

    # -- what each backend provides -------------------------------------------------------

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def transaction(self, user: str | None = None) -> contextlib.AbstractContextManager[Any]:
        """One atomic compare-and-write: no other writer of `user` runs in between."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def search(self, user: str, words: Sequence[str], limit: int) -> list[tuple[Fact, float]]:
        """Active facts holding any of the words (3+ letters as prefixes), without their links:
        (fact, rank), lower rank is better. The facts come with the ranking, since recall
        scores every one of them."""
        raise NotImplementedError

    @property
    def searches_vectors(self) -> bool:
        """Does the database search vectors itself (`nearest`, `closest`)?"""
        return False

    def nearest(
        self, user: str, model: str, vector: Sequence[float], line: float
    ) -> dict[str, float] | None:
        """Facts whose stored vector has cosine >= line with `vector`, if the database can
        search vectors itself; None means the caller searches in memory."""
        return None

    def closest(
        self, user: str, model: str, vector: Sequence[float], kind: str, floor: float, count: int
    ) -> list[str] | None:
        """At least the `count` active facts of `kind` whose stored vector is closest to
        `vector` (cosine >= floor), if the database can search vectors itself; else None."""
        return None

    def backup(self, target: str | Path) -> str:
        raise StoreError(
            f"{self.path}: backup copies SQLite files; for this database use its "
            "own tools, or `ankita export` per user"
        )

    def engine_problems(self) -> list[str]:
        """What the database engine's own checks report."""
        return []

    def fulltext_problems(self) -> list[str]:
        return []

    def rebuild_fulltext(self) -> None:
        return None

    _contains = "instr(lower(text), lower(?)) > 0"  # substring, no wildcard characters

    # The user column where an id lookup already narrows the rows (see SQLiteStore).
    _user_filter = '"user"'

    def _ids_clause(self, ids: Sequence[str], column: str = "id") -> tuple[str, list[Any]]:
        """A clause "`column` is one of `ids`"."""
        return f"{column} IN ({placeholders(ids)})", list(ids)

    # -- plain queries (doctor) -----------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one statement in this dialect-neutral SQL; rows if it returns any."""
        cur = self._run(sql, params)
        return cur.fetchall() if cur.description is not None else []

    def schema_version(self) -> int:
        rows = self.query("SELECT value FROM meta WHERE key = 'schema_version'")
        return int(rows[0][0]) if rows else 0
