"""Row access shared by the SQLite and PostgreSQL backends: the store contract, written once.

Statements use `?` placeholders and quote the "user" column (a reserved word in PostgreSQL);
each backend runs them through `_run`, which adapts the placeholder style, and supplies the few
pieces that differ (transactions, full-text search, substring match, long id lists, vectors).
No decisions here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ankita._models import Fact
from ankita.store._sqlbase import (
    FACT_COLUMNS,
    FACT_ORDERS,
    placeholders,
    row_to_fact,
)
from ankita.store._sqlrecords import RecordsSQL
from ankita.store._sqlterms import TermsSQL


class SQLStore(TermsSQL, RecordsSQL):
    """Every user's facts, links, events, vectors and tokens in one database."""

    # -- facts ----------------------------------------------------------------------------

    def _links_map(self, ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = placeholders(chunk)
            # Two indexed lookups: an OR across columns would scan the whole table.
            for a, b in self._run(
                f"SELECT a, b FROM links WHERE sure = 1 AND a IN ({marks}) "
                f"UNION SELECT a, b FROM links WHERE sure = 1 AND b IN ({marks})",
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
            f"({placeholders(statuses)}) GROUP BY kind ORDER BY kind",
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
        sql = f'WHERE "user" = ? AND status IN ({placeholders(statuses)})'
        params: list[Any] = [user, *statuses]
        if kinds:
            sql += f" AND kind IN ({placeholders(kinds)})"
            params += list(kinds)
        if search:
            sql += f" AND {self._contains}"
            params.append(search)
        if only == "pinned":
            sql += " AND pinned = 1"
        elif only == "conflicting":
            # Two indexed lookups: an OR across the pair's columns would scan every link.
            sql += (
                " AND (EXISTS (SELECT 1 FROM links WHERE links.a = facts.id AND sure = 1) OR "
                "EXISTS (SELECT 1 FROM links WHERE links.b = facts.id AND sure = 1))"
            )
        return sql, params

    def pinned_facts(self, user: str, kinds: Sequence[str] | None = None) -> list[Fact]:
        sql, params = "WHERE \"user\" = ? AND status = 'active' AND pinned = 1", [user]
        if kinds:
            sql += f" AND kind IN ({placeholders(kinds)})"
            params += list(kinds)
        return self._facts(sql + " ORDER BY seq", params)

    def recent_facts(self, user: str, limit: int, kinds: Sequence[str] | None = None) -> list[Fact]:
        sql, params = "WHERE \"user\" = ? AND status = 'active'", [user]
        if kinds:
            sql += f" AND kind IN ({placeholders(kinds)})"
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

    def insert_fact(self, fact: Fact, terms: frozenset[str]) -> None:
        """Store a new fact, filed under `terms` (its index terms)."""
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
        self.index_fact(fact.user, fact.id, terms)

    def update_fact(self, fact_id: str, terms: frozenset[str] | None = None, **fields: Any) -> None:
        """Change fields of a fact; a new `text` comes with its index `terms`."""
        if "text" in fields and terms is None:
            raise TypeError("a new text is filed under its terms: pass terms=")
        if "pinned" in fields:
            fields["pinned"] = int(fields["pinned"])
        sets = ", ".join(f"{name} = ?" for name in fields)
        self._run(f"UPDATE facts SET {sets} WHERE id = ?", [*fields.values(), fact_id])
        if "text" in fields:
            row = self._run('SELECT "user" FROM facts WHERE id = ?', (fact_id,)).fetchone()
            self._run("DELETE FROM terms WHERE fact_id = ?", (fact_id,))
            # A vector always belongs to the current text, of every model; reindex fills gaps.
            self.delete_vectors(fact_id)
            if row and terms is not None:
                self.index_fact(row[0], fact_id, terms)

    def delete_fact(self, fact_id: str) -> None:
        row = self._run('SELECT "user" FROM facts WHERE id = ?', (fact_id,)).fetchone()
        self._run("DELETE FROM links WHERE a = ? OR b = ?", (fact_id, fact_id))
        self._run("DELETE FROM vectors WHERE fact_id = ?", (fact_id,))
        self._run("DELETE FROM terms WHERE fact_id = ?", (fact_id,))
        if row:
            self._log_terms(row[0], fact_id, frozenset())
        self._run("DELETE FROM facts WHERE id = ?", (fact_id,))

    def fact_row_exists(self, fact_id: str) -> bool:
        """True if any user holds a fact of this id now."""
        return self._run("SELECT 1 FROM facts WHERE id = ?", (fact_id,)).fetchone() is not None

    def id_exists(self, fact_id: str) -> bool:
        """True if the id was ever used (ids are never reused, even after a forget)."""
        row = self._run(
            "SELECT 1 FROM facts WHERE id = ? UNION ALL "
            "SELECT 1 FROM events WHERE fact_id = ? LIMIT 1",
            (fact_id, fact_id),
        ).fetchone()
        return row is not None
