"""The lossless export format (docs/export.md): one user's facts, links, history and vectors.

A dump is JSON Lines. The first line is a header that names the format and counts every record,
so a truncated file is refused; then one record per line: `{"fact": ...}`, `{"link": ...}`,
`{"event": ...}` and, when asked for, `{"vector": ...}`. Restoring checks every record before
writing any, and writes all of them in one transaction.
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from collections.abc import Iterator
from typing import Any

from ankita._errors import InvalidInput, StoreError
from ankita._eventdata import (
    FACT_FIELDS,
    MAX_EVENT_ID,
    check_event_data,
    event_number,
    fact_from_fields,
    timestamp,
)
from ankita._models import EVENT_TYPES, Event
from ankita._validate import validate_id
from ankita.search._index import index_terms
from ankita.store._sql import SQLStore

FORMAT = 1
_OP = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_DIM = 65536
KINDS = ("fact", "link", "event", "vector")


def is_dump_header(row: dict[str, Any]) -> bool:
    return "ankita_export" in row


def export_records(store: SQLStore, user: str, vectors: bool = False) -> Iterator[dict[str, Any]]:
    """The header, then every record of `user`; the same store always gives the same lines."""
    facts = store.list_facts(user, statuses=("active", "superseded"), links=False)
    # A text whose bytes were damaged on disk reads with U+FFFD, which no write stores: such
    # facts are left out (with their links and vectors), so the rest can still be saved.
    damaged = sorted(f.id for f in facts if "\ufffd" in f.text)
    facts = [f for f in facts if f.id not in damaged]
    links = [row for row in store.link_rows(user) if not {row[0], row[1]} & set(damaged)]
    events = store.user_events(user)
    blobs = [row for row in store.user_vectors(user) if row[0] not in damaged] if vectors else []
    yield {
        "ankita_export": FORMAT,
        "user": user,
        "schema_version": store.schema_version(),
        "facts": len(facts),
        "links": len(links),
        "events": len(events),
        "vectors": len(blobs),
        "left_out": damaged,
    }
    for fact in facts:
        yield {"fact": {name: getattr(fact, name) for name in FACT_FIELDS}}
    for a, b, created_at, sure in links:
        # A possible conflict says so; a sure one is written as before it had a kind.
        yield {
            "link": {
                "a": a,
                "b": b,
                "created_at": created_at,
                **({} if sure else {"possible": True}),
            }
        }
    for event in events:
        yield {"event": event.to_dict()}
    for fact_id, model, dim, blob in blobs:
        yield {
            "vector": {
                "fact_id": fact_id,
                "model": model,
                "dim": dim,
                "base64": base64.b64encode(blob).decode("ascii"),
            }
        }


def check_record(row: dict[str, Any]) -> None:
    """The shape of one line (header or record); cross-record checks come in `restore`."""
    if is_dump_header(row):
        if row["ankita_export"] != FORMAT:
            raise InvalidInput(
                f"export format {row['ankita_export']!r}; this Ankita reads format {FORMAT}"
            )
        for kind in ("facts", "links", "events", "vectors"):
            if not isinstance(row.get(kind), int) or isinstance(row.get(kind), bool):
                raise InvalidInput(f"the header needs a count of {kind}")
        return
    kinds = [k for k in KINDS if k in row]
    if len(kinds) != 1 or len(row) != 1 or not isinstance(row[kinds[0]], dict):
        raise InvalidInput(
            'a record is one of {"fact": {...}}, {"link": {...}}, '
            '{"event": {...}} or {"vector": {...}}'
        )


def _event(data: dict[str, Any], user: str) -> Event:
    """One exported event, checked like a live write's (its data by its type's schema, a
    forgotten fact's snapshot owned by `user`); its op is renamed later, in `_renumber`."""
    fields = {"id", "op", "type", "fact_id", "other_id", "at", "data", "undone_by"}
    if set(data) != fields:
        raise InvalidInput(f"an event has exactly the fields {', '.join(sorted(fields))}")
    number = data["id"]
    if not event_number(number):
        raise InvalidInput(
            f"event id must be a whole number from 1 to {MAX_EVENT_ID}, not {number!r}"
        )
    if data["type"] not in EVENT_TYPES:
        raise InvalidInput(f"event {number}: unknown type {data['type']!r}")
    if not isinstance(data["op"], str) or not _OP.fullmatch(data["op"]):
        raise InvalidInput(f"event {number}: op must be 1-64 letters, digits, '-' or '_'")
    undone = data["undone_by"]
    if undone is not None and not event_number(undone):
        raise InvalidInput(f"event {number}: undone_by must be an event id or null")
    fact_id = validate_id(data["fact_id"])
    try:
        checked = check_event_data(data["type"], data["data"], fact_id, user)
    except InvalidInput as exc:
        raise InvalidInput(f"event {number}: {exc}") from None
    return Event(
        id=number,
        op=data["op"],
        type=data["type"],
        fact_id=fact_id,
        other_id=None if data["other_id"] is None else validate_id(data["other_id"]),
        at=timestamp(data["at"], f"event {number}: at"),
        data=checked,
        undone_by=undone,
    )


def _renumber(event: Event, new: dict[int, int], ops: dict[str, str]) -> Event:
    """An event under its new id and the importer's own op id, with every event id it names
    mapped the same way: an imported op can never name an operation already in the store."""
    data = dict(event.data)
    if event.type == "undo":
        data["undid"] = [new[i] for i in data["undid"]]
    return Event(
        id=new[event.id],
        op=ops.setdefault(event.op, uuid.uuid4().hex),
        type=event.type,
        fact_id=event.fact_id,
        other_id=event.other_id,
        at=event.at,
        data=data,
        undone_by=None if event.undone_by is None else new[event.undone_by],
    )


def restore(store: SQLStore, user: str, rows: list[dict[str, Any]]) -> dict[str, int]:
    """Write a dump into `user`'s memory, which must be empty. All or nothing."""
    if not rows or not is_dump_header(rows[0]):
        raise InvalidInput("an Ankita export starts with its header line")
    for row in rows:
        check_record(row)
    header, records = rows[0], rows[1:]
    if any(is_dump_header(r) for r in records):
        raise InvalidInput("an export has one header line, the first")
    facts = [fact_from_fields(r["fact"], user) for r in records if "fact" in r]
    ids = {f.id for f in facts}
    if len(ids) != len(facts):
        raise InvalidInput("the export holds the same fact id twice")
    links = []
    for r in records:
        if "link" in r:
            link = r["link"]
            a, b = link.get("a"), link.get("b")
            if a not in ids or b not in ids or a == b:
                raise InvalidInput(f"link {a}-{b} must join two different facts of the export")
            possible = link.get("possible", False)
            if not isinstance(possible, bool) or set(link) - {"a", "b", "created_at", "possible"}:
                raise InvalidInput(
                    f"link {a}-{b}: fields a, b, created_at and possible (true/false)"
                )
            links.append((a, b, timestamp(link.get("created_at"), f"link {a}-{b}"), not possible))
    events = [_event(r["event"], user) for r in records if "event" in r]
    numbers = {e.id for e in events}
    if len(numbers) != len(events):
        raise InvalidInput("the export holds the same event id twice")
    for event in events:
        if event.undone_by is not None and event.undone_by not in numbers:
            raise InvalidInput(
                f"event {event.id} is undone by event {event.undone_by}, "
                "which the export does not hold"
            )
        missing = (
            [i for i in event.data.get("undid", ()) if i not in numbers]
            if event.type == "undo"
            else []
        )
        if missing:
            raise InvalidInput(
                f"event {event.id} undid event {missing[0]}, which the export does not hold"
            )
    # Facts an event names that the export does not hold were forgotten; they must not be
    # facts of this store (another user's), or the history would reach into them.
    named = {i for e in events for i in (e.fact_id, e.other_id) if i is not None} - ids
    vectors = []
    for r in records:
        if "vector" in r:
            v = r["vector"]
            dim = v.get("dim")
            if (
                v.get("fact_id") not in ids
                or not isinstance(v.get("model"), str)
                or not v["model"]
                or isinstance(dim, bool)
                or not isinstance(dim, int)
                or not 1 <= dim <= MAX_DIM
            ):
                raise InvalidInput("a vector needs a fact id of the export, a model and a dim")
            try:
                blob = base64.b64decode(str(v.get("base64", "")), validate=True)
            except (binascii.Error, ValueError):
                raise InvalidInput(f"vector of {v['fact_id']}: not base64") from None
            if len(blob) != 4 * dim:
                raise InvalidInput(f"vector of {v['fact_id']}: {len(blob)} bytes, not {dim} floats")
            vectors.append((v["fact_id"], v["model"], dim, blob))
    found = {
        "facts": len(facts),
        "links": len(links),
        "events": len(events),
        "vectors": len(vectors),
    }
    expected = {k: header[k] for k in found}
    if found != expected:
        raise InvalidInput(
            f"the export is incomplete: the header counts {expected}, the file holds {found}"
        )

    with store.transaction(user):
        existing = store.list_facts(user, statuses=("active", "superseded"), limit=1)
        if existing or store.user_events(user):
            raise InvalidInput(
                f"user {user!r} already has a memory; restore an export into "
                "an empty one (another --user or another --db)"
            )
        taken = [i for i in sorted(ids | named) if store.id_exists(i)]
        if taken:
            raise InvalidInput(f"fact id {taken[0]} is already used in this store")
        # Event ids are the store's: always numbered on from the last one in use, in the
        # export's order, so a crafted id can neither collide nor exhaust the sequence.
        start = store.max_event_id(user)
        if start + len(events) > MAX_EVENT_ID:
            raise StoreError("the store's event ids are used up")
        new = {number: start + i for i, number in enumerate(sorted(numbers), 1)}
        for fact in facts:
            store.insert_fact(fact, index_terms(fact.text))
        for a, b, created_at, sure in links:
            store.add_link(user, a, b, created_at, sure)
        ops: dict[str, str] = {}
        for event in events:
            store.put_event(user, _renumber(event, new, ops))
        for fact_id, model, dim, blob in vectors:
            store.put_vector(fact_id, model, blob, dim)
    return found
