"""`ankita doctor`: check a SQLite store's invariants, and repair only what is safe to repair.

Safe means derived data that can be rebuilt from the facts themselves (the full-text index, the
candidate index), and rows that point at nothing (links and vectors of missing facts, vectors of
the wrong size, which `reindex` makes again). Facts, events and mentions are never changed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ankita._errors import InvalidInput
from ankita._eventdata import FACT_FIELDS, check_stored_event, fact_from_fields
from ankita._models import EVENT_TYPES
from ankita._validate import MAX_INT
from ankita.search._index import index_terms
from ankita.store._sql import SQLStore

EVENT_ID_ALARM = 2**62  # a store's own ids grow by one per event; past this, something forged


@dataclass
class Check:
    """One check: what it looked at, what it found, and whether `--repair` may fix it."""

    name: str
    problems: list[str] = field(default_factory=list)
    repairable: bool = False
    repaired: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": not self.problems,
            "problems": self.problems,
            "repairable": self.repairable,
        }


def _rows(store: SQLStore, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    return store.query(sql, params)


def _schema(store: SQLStore, repair: bool) -> Check:
    check = Check("schema version")
    version = store.schema_version()
    if version != store.SCHEMA_VERSION:
        check.problems.append(f"schema {version}, expected {store.SCHEMA_VERSION}")
    return check


def _sqlite(store: SQLStore, repair: bool) -> Check:
    check = Check("database engine's own checks (SQLite integrity_check, foreign keys)")
    check.problems += store.engine_problems()
    return check


def _links(store: SQLStore, repair: bool) -> Check:
    check = Check("conflict links: symmetric, between existing facts of one user", repairable=True)
    dangling = _rows(
        store,
        "SELECT a, b FROM links WHERE a NOT IN (SELECT id FROM facts) "
        "OR b NOT IN (SELECT id FROM facts)",
    )
    check.problems += [f"link {a}-{b} points at a missing fact" for a, b in dangling]
    crossing = _rows(
        store,
        "SELECT l.a, l.b FROM links l JOIN facts fa ON fa.id = l.a "
        "JOIN facts fb ON fb.id = l.b "
        'WHERE fa."user" != fb."user" OR fa."user" != l."user"',
    )
    check.problems += [f"link {a}-{b} crosses users" for a, b in crossing]
    # One row per pair with a < b is what makes links symmetric; anything else breaks that.
    unordered = _rows(store, "SELECT a, b FROM links WHERE a >= b")
    check.problems += [f"link {a}-{b} is not stored as an ordered pair" for a, b in unordered]
    if repair and check.problems:
        for a, b in dangling + crossing + unordered:
            store.query("DELETE FROM links WHERE a = ? AND b = ?", (a, b))
        check.repaired.append(f"removed {len(set(dangling + crossing + unordered))} links")
    return check


def _history(store: SQLStore, repair: bool) -> Check:
    check = Check("history: every fact has its events, mentions match its merges")
    events: dict[str, list[tuple[str, Any]]] = defaultdict(list)
    ids = {(r[0], r[1]) for r in _rows(store, 'SELECT "user", id FROM events')}
    for user, event_id, type_, fact_id, undone_by in _rows(
        store, 'SELECT "user", id, type, fact_id, undone_by FROM events ORDER BY "user", id'
    ):
        events[fact_id].append((type_, undone_by))
        if type_ not in EVENT_TYPES:
            check.problems.append(f"event {event_id} of {user} has unknown type {type_!r}")
        if undone_by is not None and (user, undone_by) not in ids:
            check.problems.append(
                f"event {event_id} of {user} is undone by missing event {undone_by}"
            )
    for fact_id, mentions in _rows(store, "SELECT id, mentions FROM facts"):
        mine = events.get(fact_id, [])
        if not mine:
            check.problems.append(f"fact {fact_id} has no history")
            continue
        merges = sum(1 for type_, undone in mine if type_ == "merge" and undone is None)
        if mentions != 1 + merges:
            check.problems.append(
                f"fact {fact_id} says {mentions} mentions but its history "
                f"holds {merges} standing merges"
            )
    return check


def _undoable(store: SQLStore, repair: bool) -> Check:
    """What undo would store, checked as a live write checks it: every event's data (a
    forgotten fact's snapshot owned by the event's user) and every fact's fields."""
    check = Check("history and facts hold only what a write would store")
    for user, event_id, type_, fact_id, raw in _rows(
        store, 'SELECT "user", id, type, fact_id, data FROM events ORDER BY "user", id'
    ):
        if type_ not in EVENT_TYPES:
            continue  # `_history` reports it
        try:
            check_stored_event(type_, json.loads(raw), fact_id, user)
        except (InvalidInput, ValueError, RecursionError) as exc:
            check.problems.append(f"event {event_id} of {user}: {exc}")
    for row in _rows(store, f'SELECT "user", {", ".join(FACT_FIELDS)} FROM facts'):
        fields = dict(zip(FACT_FIELDS, row[1:], strict=True))
        fields["pinned"] = bool(fields["pinned"])
        if "\ufffd" in fields["text"]:
            continue  # damaged on disk: `_readable` reports it
        try:
            fact_from_fields(fields, row[0])
        except InvalidInput as exc:
            check.problems.append(f"fact of {row[0]}: {exc}")
    return check


def _readable(store: SQLStore, repair: bool) -> Check:
    check = Check("stored text readable, event ids far from their end")
    damaged = _rows(store, "SELECT id FROM facts WHERE text LIKE ?", ("%\ufffd%",))
    check.problems += [
        f"fact {fid}: its stored text is not valid UTF-8 (damaged on disk); "
        "`ankita export` leaves it out, `ankita forget` removes it"
        for (fid,) in damaged
    ]
    last = _rows(store, "SELECT MAX(id) FROM events")[0][0] or 0
    if last > EVENT_ID_ALARM:
        check.problems.append(
            f"the last event id is {last}, near the end of the range "
            f"({MAX_INT}); export each user and import into a new store"
        )
    return check


def _fulltext(store: SQLStore, repair: bool) -> Check:
    check = Check("full-text index in step with facts", repairable=True)
    check.problems += store.fulltext_problems()
    if repair and check.problems:
        store.rebuild_fulltext()
        check.repaired.append("rebuilt the full-text index from the facts")
    return check


def _terms(store: SQLStore, repair: bool) -> Check:
    check = Check("candidate index in step with facts", repairable=True)
    stored: dict[str, set[str]] = defaultdict(set)
    for term, fact_id in _rows(store, "SELECT term, fact_id FROM terms"):
        stored[fact_id].add(term)
    facts = {r[0]: (r[1], r[2]) for r in _rows(store, 'SELECT id, "user", text FROM facts')}
    wrong = [fid for fid, (_, text) in facts.items() if stored.get(fid, set()) != index_terms(text)]
    orphans = [fid for fid in stored if fid not in facts]
    check.problems += [f"fact {fid} is filed under the wrong index terms" for fid in wrong]
    check.problems += [f"index terms of missing fact {fid}" for fid in orphans]
    if repair and check.problems:
        for fid in wrong + orphans:
            store.query("DELETE FROM terms WHERE fact_id = ?", (fid,))
        for fid in wrong:
            store.index_fact(facts[fid][0], fid, index_terms(facts[fid][1]))
        check.repaired.append(f"re-filed {len(wrong)} facts, dropped {len(orphans)} orphans")
    return check


def _vectors(store: SQLStore, repair: bool, model: str | None) -> Check:
    check = Check("vectors: sizes, one dimension per model, model identity", repairable=True)
    bad: list[tuple[str, str]] = []
    dims: dict[str, set[int]] = defaultdict(set)
    for fact_id, name, dim, size in _rows(
        store, "SELECT fact_id, model, dim, length(vector) FROM vectors"
    ):
        dims[name].add(dim)
        if size != 4 * dim:
            bad.append((fact_id, name))
            check.problems.append(
                f"vector of {fact_id} ({name}) holds {size} bytes, not {dim} floats"
            )
    for name, seen in dims.items():
        if len(seen) > 1:
            common = max(
                seen,
                key=lambda d: _rows(
                    store, "SELECT count(*) FROM vectors WHERE model = ? AND dim = ?", (name, d)
                )[0][0],
            )
            odd = _rows(
                store, "SELECT fact_id FROM vectors WHERE model = ? AND dim != ?", (name, common)
            )
            bad += [(r[0], name) for r in odd]
            check.problems.append(
                f"model {name} has vectors of {len(seen)} dimensions "
                f"{sorted(seen)}; {len(odd)} differ from {common}"
            )
    orphans = _rows(
        store, "SELECT fact_id, model FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)"
    )
    check.problems += [f"vector of missing fact {fid} ({name})" for fid, name in orphans]
    if repair and check.problems:
        for fact_id, name in bad + orphans:
            store.query("DELETE FROM vectors WHERE fact_id = ? AND model = ?", (fact_id, name))
        check.repaired.append(
            f"removed {len(set(bad + orphans))} vectors; `ankita reindex` embeds those facts again"
        )
    return check


def _coverage(store: SQLStore, model: str | None) -> dict[str, Any]:
    """Which models the stored vectors come from, and how many facts the current one lacks."""
    models = {
        name: count
        for name, count in _rows(
            store, "SELECT model, count(*) FROM vectors GROUP BY model ORDER BY model"
        )
    }
    facts = _rows(store, "SELECT count(*) FROM facts")[0][0]
    missing = None
    if model is not None:
        missing = facts - models.get(model, 0)
    return {
        "facts": facts,
        "vectors_by_model": models,
        "current_model": model,
        "facts_without_current_vectors": missing,
    }


def diagnose(store: SQLStore, repair: bool = False, model: str | None = None) -> dict[str, Any]:
    """Run every check and report. With `repair`, the safe repairs run first in one write
    transaction, then every check runs again, so the report describes the store as it is."""

    def run(fix: bool) -> list[Check]:
        return [
            _schema(store, fix),
            _sqlite(store, fix),
            _links(store, fix),
            _history(store, fix),
            _undoable(store, fix),
            _readable(store, fix),
            _fulltext(store, fix),
            _terms(store, fix),
            _vectors(store, fix, model),
        ]

    repaired: list[str] = []
    if repair:
        with store.transaction():
            repaired = [r for c in run(True) for r in c.repaired]
    checks = run(False)
    problems = [p for c in checks for p in c.problems]
    return {
        "path": store.path,
        "schema_version": store.schema_version(),
        "ok": not problems,
        "checks": [c.to_dict() for c in checks],
        "problems": problems,
        "repaired": repaired,
        "vectors": _coverage(store, model),
    }
