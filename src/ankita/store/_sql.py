"""Row access shared by the SQLite and PostgreSQL backends: the store contract, written once.

Statements use `?` placeholders and quote the "user" column (a reserved word in PostgreSQL);
each backend runs them through `_run`, which adapts the placeholder style, and supplies the few
pieces that differ (transactions, full-text search, substring match, long id lists, vectors).
No decisions here.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ankita._errors import StoreError
from ankita._models import Event, Fact
from ankita.search._index import Ask, reads

F = TypeVar("F")
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
        status=row[5],
        source=row[6],
        created_at=row[7],
        updated_at=row[8],
        last_confirmed_at=row[9],
        mentions=row[10],
        conflicts_with=links,
    )
    return fact


_TERMS_MAX = 512  # terms in one IN list
_PARTS_MAX = 64  # SELECTs in one statement


def _padded(values: Sequence[str], fill: str | None = None) -> list[str | None]:
    """The values and `fill` up to a power of two (at least 8): few list lengths make few
    statements for the driver to prepare. NULL, the default, matches nothing in an IN list."""
    return [*values, *[fill] * (max(8, 1 << (len(values) - 1).bit_length()) - len(values))]


def _marks(values: Sequence[Any]) -> str:
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
        def wrapper(self: SQLStore, *args: Any, **kwargs: Any) -> Any:
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


class SQLStore:
    """Every user's facts, links, events, vectors and tokens in one database."""

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
        return f"{column} IN ({_marks(ids)})", list(ids)

    # -- plain queries (doctor) -----------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one statement in this dialect-neutral SQL; rows if it returns any."""
        cur = self._run(sql, params)
        return cur.fetchall() if cur.description is not None else []

    def schema_version(self) -> int:
        rows = self.query("SELECT value FROM meta WHERE key = 'schema_version'")
        return int(rows[0][0]) if rows else 0

    # -- facts ----------------------------------------------------------------------------

    def _links_map(self, ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = _marks(chunk)
            # Two indexed lookups: an OR across columns would scan the whole table.
            for a, b in self._run(
                f"SELECT a, b FROM links WHERE a IN ({marks}) "
                f"UNION SELECT a, b FROM links WHERE b IN ({marks})",
                chunk + chunk,
            ).fetchall():
                if a in out:
                    out[a].append(b)
                if b in out:
                    out[b].append(a)
        return out

    def _facts(self, sql: str, params: Sequence[Any], links: bool = True) -> list[Fact]:
        rows = self._run(f"SELECT {FACT_COLUMNS} FROM facts {sql}", params).fetchall()
        if not links:  # comparing does not need them; a dense conflict graph makes them costly
            return [row_to_fact(r, ()) for r in rows]
        found = self._links_map([r[0] for r in rows])
        return [row_to_fact(r, tuple(sorted(found[r[0]]))) for r in rows]

    def get_fact(self, user: str, fact_id: str) -> Fact | None:
        found = self._facts('WHERE "user" = ? AND id = ?', (user, fact_id))
        return found[0] if found else None

    def list_facts(
        self,
        user: str,
        statuses: Sequence[str] = ("active",),
        kinds: Sequence[str] | None = None,
        search: str | None = None,
        limit: int | None = None,
        links: bool = True,
        offset: int = 0,
        order: str = "said",
        descending: bool = False,
        pinned_first: bool = False,
        only: str | None = None,
    ) -> list[Fact]:
        """Facts in one of FACT_ORDERS (then the order they were said), a page at a time."""
        sql, params = self._fact_filter(user, statuses, kinds, search, only)
        direction = " DESC" if descending else ""
        sql += " ORDER BY " + ("pinned DESC, " if pinned_first else "")
        sql += f"{FACT_ORDERS[order]}{direction}, seq{direction}"
        if limit is not None or offset:
            sql += f" LIMIT {int(limit) if limit is not None else 2**62} OFFSET {int(offset)}"
        return self._facts(sql, params, links)

    def count_facts(
        self,
        user: str,
        statuses: Sequence[str] = ("active",),
        kinds: Sequence[str] | None = None,
        search: str | None = None,
        only: str | None = None,
    ) -> int:
        sql, params = self._fact_filter(user, statuses, kinds, search, only)
        return int(self._run(f"SELECT count(*) FROM facts {sql}", params).fetchone()[0])

    def kind_counts(self, user: str, statuses: Sequence[str] = ("active",)) -> dict[str, int]:
        rows = self._run(
            f'SELECT kind, count(*) FROM facts WHERE "user" = ? AND status IN '
            f"({_marks(statuses)}) GROUP BY kind ORDER BY kind",
            [user, *statuses],
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def _fact_filter(
        self,
        user: str,
        statuses: Sequence[str],
        kinds: Sequence[str] | None,
        search: str | None,
        only: str | None,
    ) -> tuple[str, list[Any]]:
        sql = f'WHERE "user" = ? AND status IN ({_marks(statuses)})'
        params: list[Any] = [user, *statuses]
        if kinds:
            sql += f" AND kind IN ({_marks(kinds)})"
            params += list(kinds)
        if search:
            sql += f" AND {self._contains}"
            params.append(search)
        if only == "pinned":
            sql += " AND pinned = 1"
        elif only == "conflicting":
            # Two indexed lookups: an OR across the pair's columns would scan every link.
            sql += (
                " AND (EXISTS (SELECT 1 FROM links WHERE links.a = facts.id) OR "
                "EXISTS (SELECT 1 FROM links WHERE links.b = facts.id))"
            )
        return sql, params

    def pinned_facts(self, user: str, kinds: Sequence[str] | None = None) -> list[Fact]:
        sql, params = "WHERE \"user\" = ? AND status = 'active' AND pinned = 1", [user]
        if kinds:
            sql += f" AND kind IN ({_marks(kinds)})"
            params += list(kinds)
        return self._facts(sql + " ORDER BY seq", params)

    def recent_facts(self, user: str, limit: int, kinds: Sequence[str] | None = None) -> list[Fact]:
        sql, params = "WHERE \"user\" = ? AND status = 'active'", [user]
        if kinds:
            sql += f" AND kind IN ({_marks(kinds)})"
            params += list(kinds)
        return self._facts(
            sql + " ORDER BY last_confirmed_at DESC, seq DESC LIMIT ?", [*params, limit]
        )

    def facts_by_ids(self, user: str, ids: Sequence[str], links: bool = True) -> list[Fact]:
        """The facts with these ids, oldest first (the order the exhaustive scan uses)."""
        if not ids:
            return []
        clause, params = self._ids_clause(ids)
        return self._facts(
            f"WHERE {clause} AND {self._user_filter} = ? ORDER BY seq", [*params, user], links
        )

    def insert_fact(self, fact: Fact) -> None:
        self._run(
            f"INSERT INTO facts ({FACT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                fact.id,
                fact.user,
                fact.text,
                fact.kind,
                int(fact.pinned),
                fact.status,
                fact.source,
                fact.created_at,
                fact.updated_at,
                fact.last_confirmed_at,
                fact.mentions,
            ),
        )
        self.index_fact(fact.user, fact.id, fact.text)

    def refresh_terms(self) -> int:
        """Refile every fact if the store was indexed by another text analysis (an upgrade
        changed stemming or stop-words): facts found before must still be found. Returns how
        many facts were refiled."""
        from ankita.search._index import ANALYZER_VERSION

        def current() -> bool:
            row = self._run("SELECT value FROM meta WHERE key = 'analyzer'").fetchone()
            return bool(row) and row[0] == ANALYZER_VERSION

        if current():
            return 0
        with self.transaction():
            if current():  # another process refiled them meanwhile
                return 0
            rows = self._run('SELECT id, "user", text FROM facts').fetchall()
            self._run("DELETE FROM terms")
            for fact_id, user, text in rows:
                self.index_fact(user, fact_id, text, logged=False)
            if rows:
                self._log_terms(None, None)  # every user's postings changed
            self._run(
                "INSERT INTO meta (key, value) VALUES ('analyzer', ?) ON CONFLICT (key) "
                "DO UPDATE SET value = excluded.value",
                (ANALYZER_VERSION,),
            )
        return len(rows)

    def index_fact(self, user: str, fact_id: str, text: str, logged: bool = True) -> None:
        """File the fact under its candidate-search terms (docs/scale.md)."""
        from ankita.search._index import index_terms

        # Every caller files a new fact, or one whose postings it has just deleted: so these
        # are all of the fact's postings.
        terms = index_terms(text)
        self._run_many(
            'INSERT INTO terms ("user", term, fact_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
            [(user, term, fact_id) for term in sorted(terms)],
        )
        if logged:
            self._log_terms(user, fact_id, terms)

    def _log_terms(
        self, user: str | None, fact_id: str | None, terms: frozenset[str] | None = None
    ) -> None:
        """Note that a fact's postings changed (None: every fact's, of every user), for the
        in-memory copies of other connections (`_terms.TermIndex`); and, if `terms` says what
        they are now, for this connection's."""
        seq = self._run(
            'INSERT INTO term_changes ("user", fact_id) VALUES (?, ?) RETURNING seq',
            (user, fact_id),
        ).fetchone()[0]
        self.last_logged = seq
        if user is not None and fact_id is not None and terms is not None:
            own = self.own_filings
            own[seq] = (user, fact_id, terms)
            if len(own) > self.OWN_FILINGS_MAX:
                del own[next(iter(own))]  # the oldest: a copy missing one reads the log

    def term_changes(self, user: str, since: int) -> list[tuple[int, str | None]]:
        """(seq, fact id) of every change to the user's postings after `since`, in order; a
        fact id of None means that every fact's may have changed."""
        return [
            (r[0], r[1])
            for r in self._run(
                'SELECT seq, fact_id FROM term_changes WHERE seq > ? AND ("user" = ? OR '
                '"user" IS NULL) ORDER BY seq',
                (since, user),
            ).fetchall()
        ]

    def last_term_change(self) -> int:
        return int(self._run("SELECT COALESCE(MAX(seq), 0) FROM term_changes").fetchone()[0])

    def user_terms(self, user: str) -> Iterator[tuple[str, str]]:
        """(term, fact id) of every posting of the user, in term order, as they are read."""
        yield from self._run(
            'SELECT term, fact_id FROM terms WHERE "user" = ? ORDER BY term', (user,)
        )

    def update_fact(self, fact_id: str, **fields: Any) -> None:
        if "pinned" in fields:
            fields["pinned"] = int(fields["pinned"])
        sets = ", ".join(f"{name} = ?" for name in fields)
        self._run(f"UPDATE facts SET {sets} WHERE id = ?", [*fields.values(), fact_id])
        if "text" in fields:
            row = self._run('SELECT "user" FROM facts WHERE id = ?', (fact_id,)).fetchone()
            self._run("DELETE FROM terms WHERE fact_id = ?", (fact_id,))
            # A vector always belongs to the current text, of every model; reindex fills gaps.
            self.delete_vectors(fact_id)
            if row:
                self.index_fact(row[0], fact_id, fields["text"])

    def delete_fact(self, fact_id: str) -> None:
        row = self._run('SELECT "user" FROM facts WHERE id = ?', (fact_id,)).fetchone()
        self._run("DELETE FROM links WHERE a = ? OR b = ?", (fact_id, fact_id))
        self._run("DELETE FROM vectors WHERE fact_id = ?", (fact_id,))
        self._run("DELETE FROM terms WHERE fact_id = ?", (fact_id,))
        if row:
            self._log_terms(row[0], fact_id, frozenset())
        self._run("DELETE FROM facts WHERE id = ?", (fact_id,))

    def postings(
        self,
        user: str,
        terms: Sequence[str],
        ranges: Sequence[tuple[str, str, Sequence[str]]],
        found_terms: Sequence[str] = (),
    ) -> list[tuple[str, str | None, int]]:
        """(fact id, term, part) of the user's postings under one of `terms` (part -1) or in
        one of `ranges` [low, high) but not one of its excluded terms (part = its number); and
        (fact id, None, -2) for a fact filed under one of `found_terms`, once however many. In
        few statements whose shapes repeat: the lists padded to a power of two, the ranges one
        SELECT each."""
        parts: list[tuple[str, list[Any]]] = []
        for listed, column, part in ((found_terms, "NULL", -2), (terms, "term", -1)):
            for start in range(0, len(listed), _TERMS_MAX):
                chunk = _padded(listed[start : start + _TERMS_MAX])
                parts.append(
                    (
                        f'SELECT fact_id, {column}, {part} FROM terms WHERE "user" = ? '
                        f"AND term IN ({_marks(chunk)})",
                        [user, *chunk],
                    )
                )
        for number, (low, high, excluded) in enumerate(ranges):
            sql = 'SELECT fact_id, term, ? FROM terms WHERE "user" = ? AND term >= ? AND term < ?'
            out: list[Any] = []
            if excluded:
                # Padded with the empty term, which no range holds (NULL would exclude all).
                out = _padded(excluded, "")
                sql += f" AND term NOT IN ({_marks(out)})"
            parts.append((sql, [number, user, low, high, *out]))
        rows: list[tuple[str, str | None, int]] = []
        for start in range(0, len(parts), _PARTS_MAX):  # bounded statement size
            chunk_parts = parts[start : start + _PARTS_MAX]
            rows += self._run(
                " UNION ".join(sql for sql, _ in chunk_parts),
                [p for _, ps in chunk_parts for p in ps],
            ).fetchall()
        return rows

    def terms_of(
        self, ids: Sequence[str], fields: Sequence[str] | None = None
    ) -> list[tuple[str, str]]:
        """(fact id, term) of every term of these facts, or of those under one of `fields`."""
        rows: list[tuple[str, str]] = []
        for start in range(0, len(ids), _TERMS_MAX):
            chunk = _padded(ids[start : start + _TERMS_MAX])
            rows += self._run(
                f"SELECT fact_id, term FROM terms WHERE fact_id IN ({_marks(chunk)})", chunk
            ).fetchall()
        if fields is None:
            return rows
        under = tuple(fields)
        return [row for row in rows if row[1].startswith(under)]

    def filed_under(self, user: str, term: str, ids: Sequence[str]) -> set[str]:
        """Those of these facts that are filed under `term`."""
        found: set[str] = set()
        for start in range(0, len(ids), _TERMS_MAX):
            chunk = _padded(ids[start : start + _TERMS_MAX])
            found.update(
                r[0]
                for r in self._run(
                    f'SELECT fact_id FROM terms WHERE "user" = ? AND term = ? AND fact_id IN '
                    f"({_marks(chunk)})",
                    [user, term, *chunk],
                ).fetchall()
            )
        return found

    def counted(self, user: str, ask: Ask) -> set[str]:
        """Facts filed under one of the ask's fields + a word of at least `ask.at_least` of its
        groups, counted by the database: a common word's postings are many, their count few."""
        parts: list[str] = []
        params: list[Any] = []
        for number, group in enumerate(ask.groups):
            select = f'SELECT fact_id, {number} AS g FROM terms WHERE "user" = ? AND '
            for field in ask.fields:
                seeks, runs = reads(field, group)
                for start in range(0, len(seeks), _TERMS_MAX):
                    chunk = seeks[start : start + _TERMS_MAX]
                    parts.append(f"{select}term IN ({_marks(chunk)})")
                    params += [user, *chunk]
                for run in runs:
                    # The run's range, in code point order (the terms column compares bytes
                    # in both backends); in it, the covered words and those extending the word.
                    covered = sorted(run.covered)
                    either = f"term IN ({_marks(covered)}) OR " if covered else ""
                    extension = "term > ?"
                    if run.longest is not None:
                        extension += " AND length(term) <= ?"
                    parts.append(f"{select}term >= ? AND term < ? AND ({either}{extension})")
                    params += [
                        user,
                        run.low,
                        run.high,
                        *covered,
                        run.extends,
                        *([] if run.longest is None else [run.longest]),
                    ]
        if ask.at_least > len(ask.groups) or not parts:
            return set()
        sql = (
            f"SELECT fact_id FROM ({' UNION ALL '.join(parts)}) AS m GROUP BY fact_id "
            f"HAVING COUNT(DISTINCT g) >= {int(ask.at_least)}"
        )
        return {r[0] for r in self._run(sql, params).fetchall()}

    def id_exists(self, fact_id: str) -> bool:
        """True if the id was ever used (ids are never reused, even after a forget)."""
        row = self._run(
            "SELECT 1 FROM facts WHERE id = ? UNION ALL "
            "SELECT 1 FROM events WHERE fact_id = ? LIMIT 1",
            (fact_id, fact_id),
        ).fetchone()
        return row is not None

    # -- links ----------------------------------------------------------------------------

    def add_link(self, user: str, a: str, b: str, at: str) -> bool:
        """Flag a and b against each other; False if they already were."""
        lo, hi = sorted((a, b))
        cur = self._run(
            'INSERT INTO links ("user", a, b, created_at) VALUES (?, ?, ?, ?) '
            "ON CONFLICT DO NOTHING",
            (user, lo, hi, at),
        )
        return bool(cur.rowcount == 1)

    def remove_link(self, a: str, b: str) -> bool:
        lo, hi = sorted((a, b))
        return bool(self._run("DELETE FROM links WHERE a = ? AND b = ?", (lo, hi)).rowcount == 1)

    def links(
        self, user: str, limit: int | None = None, offset: int = 0, fact: str | None = None
    ) -> list[tuple[str, str]]:
        """Flagged pairs, the newest flag first; only those of `fact` if given."""
        sql, params = self._link_filter(user, fact)
        page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
        return [
            (r[0], r[1])
            for r in self._run(
                f"SELECT a, b FROM links {sql} ORDER BY created_at DESC, a, b{page}", params
            ).fetchall()
        ]

    def link_count(self, user: str, fact: str | None = None) -> int:
        sql, params = self._link_filter(user, fact)
        return int(self._run(f"SELECT count(*) FROM links {sql}", params).fetchone()[0])

    @staticmethod
    def _link_filter(user: str, fact: str | None) -> tuple[str, list[Any]]:
        if fact is None:
            return 'WHERE "user" = ?', [user]
        return 'WHERE "user" = ? AND (a = ? OR b = ?)', [user, fact, fact]

    def link_rows(self, user: str) -> list[tuple[str, str, str]]:
        """(a, b, created_at) of every link of the user, for export."""
        return [
            (r[0], r[1], r[2])
            for r in self._run(
                'SELECT a, b, created_at FROM links WHERE "user" = ? ORDER BY a, b', (user,)
            ).fetchall()
        ]

    # -- events ---------------------------------------------------------------------------

    def add_event(
        self,
        user: str,
        op: str,
        type_: str,
        fact_id: str,
        other_id: str | None,
        at: str,
        data: dict[str, Any],
    ) -> int:
        row = self._run(
            'INSERT INTO events (op, "user", type, fact_id, other_id, at, data) '
            "VALUES (?,?,?,?,?,?,?) RETURNING id",
            (op, user, type_, fact_id, other_id, at, json.dumps(data, ensure_ascii=False)),
        ).fetchone()
        return int(row[0])

    def put_event(self, user: str, event: Event) -> None:
        """Write an event with its own id (restoring an export); add_event picks new ids."""
        self._run(
            'INSERT INTO events (id, op, "user", type, fact_id, other_id, at, data, undone_by) '
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (
                event.id,
                event.op,
                user,
                event.type,
                event.fact_id,
                event.other_id,
                event.at,
                json.dumps(event.data, ensure_ascii=False),
                event.undone_by,
            ),
        )

    def user_events(self, user: str) -> list[Event]:
        return self._events('WHERE "user" = ? ORDER BY id', (user,))

    def max_event_id(self) -> int:
        row = self._run("SELECT max(id) FROM events").fetchone()
        return int(row[0] or 0)

    def _events(self, sql: str, params: Sequence[Any]) -> list[Event]:
        rows = self._run(f"SELECT {EVENT_COLUMNS} FROM events " + sql, params).fetchall()
        return [
            Event(
                id=r[0],
                op=r[1],
                type=r[2],
                fact_id=r[3],
                other_id=r[4],
                at=r[5],
                data=json.loads(r[6]),
                undone_by=r[7],
            )
            for r in rows
        ]

    def link_event(self, user: str, a: str, b: str) -> Event | None:
        """The latest event that flagged a and b (in either direction) and still stands."""
        found = self._events(
            "WHERE \"user\" = ? AND type = 'link' AND undone_by IS NULL AND ((fact_id = ? AND "
            "other_id = ?) OR (fact_id = ? AND other_id = ?)) ORDER BY id DESC LIMIT 1",
            (user, a, b, b, a),
        )
        return found[0] if found else None

    def events_for(
        self,
        user: str,
        fact_id: str,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> list[Event]:
        page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
        return self._events(
            'WHERE "user" = ? AND (fact_id = ? OR other_id = ?) ORDER BY id'
            + (" DESC" if newest_first else "")
            + page,
            (user, fact_id, fact_id),
        )

    def event_count(self, user: str, fact_id: str) -> int:
        return int(
            self._run(
                'SELECT count(*) FROM events WHERE "user" = ? AND (fact_id = ? OR other_id = ?)',
                (user, fact_id, fact_id),
            ).fetchone()[0]
        )

    def event(self, user: str, event_id: int) -> Event | None:
        found = self._events('WHERE "user" = ? AND id = ?', (user, event_id))
        return found[0] if found else None

    def op_events(self, op: str) -> list[Event]:
        return self._events("WHERE op = ? ORDER BY id", (op,))

    def mark_undone(self, event_ids: Sequence[int], by: int) -> None:
        self._run_many("UPDATE events SET undone_by = ? WHERE id = ?", [(by, i) for i in event_ids])

    # -- vectors --------------------------------------------------------------------------

    def put_vector(self, fact_id: str, model: str, vector: bytes, dim: int) -> None:
        self._run("DELETE FROM vectors WHERE fact_id = ? AND model = ?", (fact_id, model))
        self._run(
            "INSERT INTO vectors (fact_id, model, dim, vector) VALUES (?, ?, ?, ?)",
            (fact_id, model, dim, vector),
        )

    def vectors_since(self, user: str, model: str, seq: int) -> list[tuple[int, str, bytes, str]]:
        """(seq, fact id, vector, kind) written after `seq`, for catching up an in-memory
        index."""
        return [
            (r[0], r[1], bytes(r[2]), r[3])
            for r in self._run(
                "SELECT v.seq, v.fact_id, v.vector, f.kind FROM vectors v JOIN facts f"
                ' ON f.id = v.fact_id WHERE v.model = ? AND v.seq > ? AND f."user" = ?'
                " ORDER BY v.seq",
                (model, seq, user),
            ).fetchall()
        ]

    def terms_under(
        self, user: str, prefixes: Sequence[str], ids: Sequence[str] | None = None
    ) -> list[tuple[str, str]]:
        """(fact id, term) of every term starting with one of `prefixes`, of these facts (or
        of all the user's)."""
        clause, params = "", list[Any]()
        if ids is not None:
            if not ids:
                return []
            clause, params = self._ids_clause(sorted(ids), "fact_id")
            clause = " AND " + clause
        out: list[tuple[str, str]] = []
        for prefix in prefixes:
            out += [
                (r[0], r[1])
                for r in self._run(
                    'SELECT fact_id, term FROM terms WHERE "user" = ? AND term >= ? AND term < ?'
                    + clause,
                    [user, prefix, prefix + "\U0010ffff", *params],
                ).fetchall()
            ]
        return out

    def vector_dim(self, model: str) -> int | None:
        """The dimension this store has seen for a model (a provider may not change it)."""
        row = self._run("SELECT dim FROM vectors WHERE model = ? LIMIT 1", (model,)).fetchone()
        return int(row[0]) if row else None

    def user_vectors(self, user: str) -> list[tuple[str, str, int, bytes]]:
        """(fact id, model, dim, vector) of every vector of the user, in fact order."""
        return [
            (r[0], r[1], r[2], bytes(r[3]))
            for r in self._run(
                "SELECT v.fact_id, v.model, v.dim, v.vector FROM vectors v JOIN facts f "
                'ON f.id = v.fact_id WHERE f."user" = ? ORDER BY f.seq, v.model',
                (user,),
            ).fetchall()
        ]

    def delete_vectors(self, fact_id: str) -> None:
        self._run("DELETE FROM vectors WHERE fact_id = ?", (fact_id,))

    def facts_without_vector(self, user: str, model: str) -> list[tuple[str, str]]:
        """(id, text) of the user's facts that have no vector from `model`."""
        return [
            (r[0], r[1])
            for r in self._run(
                'SELECT f.id, f.text FROM facts f WHERE f."user" = ? AND NOT EXISTS ('
                "SELECT 1 FROM vectors v WHERE v.fact_id = f.id AND v.model = ?) ORDER BY f.seq",
                (user, model),
            ).fetchall()
        ]

    def vectors_of(self, ids: Sequence[str], model: str) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            out.update(
                (r[0], bytes(r[1]))
                for r in self._run(
                    f"SELECT fact_id, vector FROM vectors WHERE model = ? AND fact_id IN "
                    f"({_marks(chunk)})",
                    [model, *chunk],
                ).fetchall()
            )
        return out

    # -- tokens ---------------------------------------------------------------------------

    def add_token(self, token_hash: str, user: str, label: str | None, at: str) -> None:
        self._run(
            'INSERT INTO tokens (hash, "user", label, created_at) VALUES (?, ?, ?, ?)',
            (token_hash, user, label, at),
        )

    def token_user(self, token_hash: str) -> str | None:
        row = self._run('SELECT "user" FROM tokens WHERE hash = ?', (token_hash,)).fetchone()
        return str(row[0]) if row else None

    def tokens(self) -> list[tuple[str, str, str | None, str]]:
        """(hash prefix, user, label, created_at) of every token."""
        return [
            (r[0][:12], r[1], r[2], r[3])
            for r in self._run(
                'SELECT hash, "user", label, created_at FROM tokens ORDER BY created_at'
            ).fetchall()
        ]

    def revoke_token(self, prefix: str) -> int:
        return int(
            self._run(
                "DELETE FROM tokens WHERE substr(hash, 1, ?) = ?", (len(prefix), prefix)
            ).rowcount
        )

    def token_count(self) -> int:
        return int(self._run("SELECT count(*) FROM tokens").fetchone()[0])
