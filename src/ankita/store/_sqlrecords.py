"""The rows around facts in SQL: conflict links, history events, vectors, parses and API
tokens."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ankita._models import Event
from ankita.store._sqlbase import (
    EVENT_COLUMNS,
    SQLBase,
)


class RecordsSQL(SQLBase):
    """Links, events, vectors and tokens of every user."""

    # -- links ----------------------------------------------------------------------------

    def add_link(self, user: str, a: str, b: str, at: str, sure: bool = True) -> bool:
        """Flag a and b against each other, as a sure or a possible conflict; False if they
        already were."""
        lo, hi = sorted((a, b))
        cur = self._run(
            'INSERT INTO links ("user", a, b, created_at, sure) VALUES (?, ?, ?, ?, ?) '
            "ON CONFLICT DO NOTHING",
            (user, lo, hi, at, int(sure)),
        )
        return bool(cur.rowcount == 1)

    def link_is_sure(self, user: str, a: str, b: str) -> bool | None:
        """Whether a and b are flagged as a sure conflict, a possible one (False), or not."""
        lo, hi = sorted((a, b))
        row = self._run(
            'SELECT sure FROM links WHERE "user" = ? AND a = ? AND b = ?', (user, lo, hi)
        ).fetchone()
        return None if row is None else bool(row[0])

    def set_link_sure(self, user: str, a: str, b: str, sure: bool) -> bool:
        lo, hi = sorted((a, b))
        cur = self._run(
            'UPDATE links SET sure = ? WHERE "user" = ? AND a = ? AND b = ? AND sure != ?',
            (int(sure), user, lo, hi, int(sure)),
        )
        return bool(cur.rowcount == 1)

    def remove_link(self, user: str, a: str, b: str) -> bool:
        lo, hi = sorted((a, b))
        return bool(
            self._run(
                'DELETE FROM links WHERE "user" = ? AND a = ? AND b = ?', (user, lo, hi)
            ).rowcount
            == 1
        )

    def links(
        self,
        user: str,
        limit: int | None = None,
        offset: int = 0,
        fact: str | None = None,
        sure: bool = True,
    ) -> list[tuple[str, str]]:
        """Flagged pairs (sure or possible ones), the newest flag first; only those of `fact`
        if given."""
        sql, params = self._link_filter(user, fact, sure)
        page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
        return [
            (r[0], r[1])
            for r in self._run(
                f"SELECT a, b FROM links {sql} ORDER BY created_at DESC, a, b{page}", params
            ).fetchall()
        ]

    def link_count(self, user: str, fact: str | None = None, sure: bool = True) -> int:
        sql, params = self._link_filter(user, fact, sure)
        return int(self._run(f"SELECT count(*) FROM links {sql}", params).fetchone()[0])

    @staticmethod
    def _link_filter(user: str, fact: str | None, sure: bool) -> tuple[str, list[Any]]:
        if fact is None:
            return 'WHERE "user" = ? AND sure = ?', [user, int(sure)]
        return 'WHERE "user" = ? AND sure = ? AND (a = ? OR b = ?)', [user, int(sure), fact, fact]

    def link_rows(self, user: str) -> list[tuple[str, str, str, bool]]:
        """(a, b, created_at, sure) of every link of the user, for export."""
        return [
            (r[0], r[1], r[2], bool(r[3]))
            for r in self._run(
                'SELECT a, b, created_at, sure FROM links WHERE "user" = ? ORDER BY a, b', (user,)
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
        # Numbered per user: a writer holds its user's lock, so the next number is its own.
        row = self._run(
            'INSERT INTO events (id, op, "user", type, fact_id, other_id, at, data) '
            'VALUES ((SELECT coalesce(max(id), 0) + 1 FROM events WHERE "user" = ?),'
            "?,?,?,?,?,?,?) RETURNING id",
            (user, op, user, type_, fact_id, other_id, at, json.dumps(data, ensure_ascii=False)),
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

    def max_event_id(self, user: str) -> int:
        row = self._run('SELECT max(id) FROM events WHERE "user" = ?', (user,)).fetchone()
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

    def op_events(self, user: str, op: str) -> list[Event]:
        """The user's events of one operation: an op id never gathers another user's."""
        return self._events('WHERE "user" = ? AND op = ? ORDER BY id', (user, op))

    def mark_undone(self, user: str, event_ids: Sequence[int], by: int) -> None:
        self._run_many(
            'UPDATE events SET undone_by = ? WHERE "user" = ? AND id = ?',
            [(by, user, i) for i in event_ids],
        )

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

    def ids_starting(self, user: str, prefix: str, limit: int = 3) -> list[str]:
        """The user's fact ids that begin with `prefix` (substr, so no character is a
        wildcard), in order."""
        return [
            r[0]
            for r in self._run(
                'SELECT id FROM facts WHERE "user" = ? AND substr(id, 1, ?) = ? ORDER BY id '
                "LIMIT ?",
                (user, len(prefix), prefix, limit),
            ).fetchall()
        ]

    def has_vectors(self, user: str, model: str) -> bool:
        """Whether any of the user's facts holds a vector from `model`."""
        row = self._run(
            "SELECT 1 FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE v.model = ? AND "
            'f."user" = ? LIMIT 1',
            (model, user),
        ).fetchone()
        return row is not None

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
        if not ids:
            return {}
        clause, params = self._ids_clause(ids, "fact_id")
        return {
            r[0]: bytes(r[1])
            for r in self._run(
                f"SELECT fact_id, vector FROM vectors WHERE {clause} AND model = ?",
                [*params, model],
            ).fetchall()
        }

    # -- parses ----------------------------------------------------------------------------

    def put_parses(self, rows: Sequence[tuple[str, str, str, str]]) -> None:
        """Keep (fact id, parser, digest, data) rows, each replacing the fact's earlier one."""
        self._run_many(
            "INSERT INTO parses (fact_id, parser, digest, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (fact_id) DO UPDATE SET parser = excluded.parser, "
            "digest = excluded.digest, data = excluded.data",
            rows,
        )

    def parses_of(self, ids: Sequence[str], parser: str) -> dict[str, tuple[str, str]]:
        """(digest, data) of each fact whose parse `parser` wrote."""
        if not ids:
            return {}
        clause, params = self._ids_clause(ids, "fact_id")
        return {
            r[0]: (r[1], r[2])
            for r in self._run(
                f"SELECT fact_id, digest, data FROM parses WHERE {clause} AND parser = ?",
                [*params, parser],
            ).fetchall()
        }

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
