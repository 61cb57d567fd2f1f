"""What a history event's `data` may hold, checked with the rules of a live write.

An export's events come from a stranger's file, and undo stores what they hold (a forgotten
fact, an earlier text, earlier timestamps). So an imported event is checked against its type's
schema, and undo checks again before it stores anything: a value no live write would store
never reaches the facts table this way (docs/security.md, "Import and undo").
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ankita._errors import InvalidInput
from ankita._models import EVENT_TYPES, Fact
from ankita._validate import (
    validate_id,
    validate_kind,
    validate_string,
    validate_text,
    validate_user,
)

MAX_SOURCE = 200  # what a live write accepts as a source
MAX_NOTE = 4000  # a decision's reason or method, as the engine writes it
MAX_TIMESTAMP = 64
MAX_MENTIONS = 10**9
MAX_LINKS = 10_000  # partners a forgotten fact may name
MAX_EVENT_ID = 2**53  # ids JSON readers hold exactly; a store's own run far below

# The fields of a fact in an export record; a forget's snapshot adds `user` and `conflicts_with`.
FACT_FIELDS = (
    "id",
    "text",
    "kind",
    "pinned",
    "status",
    "source",
    "created_at",
    "updated_at",
    "last_confirmed_at",
    "mentions",
)


def timestamp(value: object, what: str) -> str:
    """An ISO 8601 time with its offset, as every write stores (a naive time cannot be compared
    with the aware ones recall computes)."""
    if not isinstance(value, str) or len(value) > MAX_TIMESTAMP:
        raise InvalidInput(f"{what} must be an ISO timestamp")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{what} is not an ISO timestamp: {value!r}") from None
    if parsed.tzinfo is None:
        raise InvalidInput(f"{what} has no time zone offset: {value!r}")
    return value


def event_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_EVENT_ID


def fact_from_fields(data: object, user: str, extra: tuple[str, ...] = ()) -> Fact:
    """A fact from its exported fields (plus `extra` ones the caller reads), every field checked
    as a live write checks it, owned by `user` whatever the data says."""
    if not isinstance(data, dict) or set(data) != {*FACT_FIELDS, *extra}:
        raise InvalidInput(f"a fact has exactly the fields {', '.join((*FACT_FIELDS, *extra))}")
    fid = validate_id(data["id"])
    if validate_text(data["text"]) != data["text"]:
        raise InvalidInput(f"fact {fid}: text has leading or trailing space")
    if data["status"] not in ("active", "superseded"):
        raise InvalidInput(f"fact {fid}: status must be active or superseded")
    if not isinstance(data["pinned"], bool):
        raise InvalidInput(f"fact {fid}: pinned must be true or false")
    mentions = data["mentions"]
    if (
        isinstance(mentions, bool)
        or not isinstance(mentions, int)
        or not 1 <= mentions <= MAX_MENTIONS
    ):
        raise InvalidInput(f"fact {fid}: mentions must be a whole number from 1 to {MAX_MENTIONS}")
    source = data["source"]
    if source is not None:
        validate_string(source, f"fact {fid}: source", MAX_SOURCE)
    return Fact(
        id=fid,
        text=data["text"],
        kind=validate_kind(data["kind"]),
        user=user,
        pinned=data["pinned"],
        status=data["status"],
        source=source,
        created_at=timestamp(data["created_at"], f"fact {fid}: created_at"),
        updated_at=timestamp(data["updated_at"], f"fact {fid}: updated_at"),
        last_confirmed_at=timestamp(data["last_confirmed_at"], f"fact {fid}: last_confirmed_at"),
        mentions=mentions,
    )


def snapshot(data: object, user: str, fact_id: str) -> tuple[Fact, list[str]]:
    """A forget's snapshot: the fact it removed (owned by `user`, with the event's own fact id)
    and the partners it was flagged against."""
    fact = fact_from_fields(data, user, ("user", "conflicts_with"))
    assert isinstance(data, dict)
    validate_user(data["user"])
    if fact.id != fact_id:
        raise InvalidInput(f"the snapshot is of fact {fact.id}, not of the event's {fact_id}")
    partners = data["conflicts_with"]
    if not isinstance(partners, list) or len(partners) > MAX_LINKS:
        raise InvalidInput("conflicts_with must be a list of fact ids")
    return fact, [validate_id(p) for p in partners]


def _text(value: object, what: str) -> None:
    if validate_text(value) != value:
        raise InvalidInput(f"{what} has leading or trailing space")


def _optional_text(value: object, what: str) -> None:
    if value is not None:
        _text(value, what)


def _source(value: object, what: str) -> None:
    if value is not None:
        validate_string(value, what, MAX_SOURCE)


def _note(value: object, what: str) -> None:
    if value is not None:
        validate_string(value, what, MAX_NOTE)


def _flag(value: object, what: str) -> None:
    if not isinstance(value, bool):
        raise InvalidInput(f"{what} must be true or false")


def _score(value: object, what: str) -> None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not -1e6 < value < 1e6
    ):
        raise InvalidInput(f"{what} must be a number")


def _numbers(value: object, what: str) -> None:
    if not isinstance(value, list) or not all(event_number(i) for i in value):
        raise InvalidInput(f"{what} must be a list of event ids")


def _types(value: object, what: str) -> None:
    if not isinstance(value, list) or not all(t in EVENT_TYPES for t in value):
        raise InvalidInput(f"{what} must be a list of event types")


def _time(value: object, what: str) -> None:
    timestamp(value, what)


def _optional_kind(value: object, what: str) -> None:
    if value is not None:
        validate_kind(value)


def _optional_flag(value: object, what: str) -> None:
    if value is not None:
        _flag(value, what)


def _snapshot_later(value: object, what: str) -> None:
    """Checked apart, by `snapshot`, which needs the event's user and fact id."""


Check = Callable[[object, str], None]
# Per type: the fields its data may hold, each with its check, and the ones it must hold
# (those undo reads). Events written by earlier versions lack some optional fields.
_SCHEMAS: dict[str, tuple[dict[str, Check], frozenset[str]]] = {
    "create": (
        {
            "text": _optional_text,
            "kind": _optional_kind,
            "pinned": _optional_flag,
            "source": _source,
            "reason": _note,
        },
        frozenset(),
    ),
    "merge": (
        {
            "phrasing": _optional_text,
            "source": _source,
            "score": _score,
            "method": _note,
            "reason": _note,
            "confirmed_before": _time,
            "updated_before": _time,
            "confirmed_after": _time,
        },
        frozenset(),
    ),
    "text_change": ({"before": _text, "after": _text}, frozenset({"before", "after"})),
    "link": (
        {"score": _score, "method": _note, "reason": _note, "possible": _optional_flag},
        frozenset(),
    ),
    "resolve": ({"was_linked": _flag, "possible": _optional_flag}, frozenset()),
    "clear": ({"possible": _optional_flag}, frozenset()),
    "forget": ({"fact": _snapshot_later}, frozenset({"fact"})),
    "undo": ({"undid": _numbers, "types": _types}, frozenset({"undid"})),
    **{kind: ({}, frozenset()) for kind in ("pin", "unpin", "reactivate", "promote")},
}


def check_stored_event(kind: str, data: object, fact_id: str, user: str) -> None:
    """An event already in `user`'s history, before undo stores what it holds: its data as
    `check_event_data` checks it, and a forget's snapshot of `user`'s own fact (import rebinds
    it; one that says another user reached the store some other way). Raises InvalidInput."""
    check_event_data(kind, data, fact_id, user)
    if kind == "forget" and isinstance(data, dict) and data["fact"]["user"] != user:
        raise InvalidInput("its snapshot is of another user's fact")


def check_event_data(kind: str, data: object, fact_id: str, user: str) -> dict[str, Any]:
    """The data of one event of type `kind`, checked as a live write would check what it holds;
    a forget's snapshot comes back owned by `user`. Raises InvalidInput."""
    if kind not in _SCHEMAS:
        raise InvalidInput(f"unknown event type {kind!r}")
    if not isinstance(data, dict):
        raise InvalidInput("data must be an object")
    fields, required = _SCHEMAS[kind]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise InvalidInput(f"a {kind} event's data has no field {unknown[0]!r}")
    missing = sorted(required - set(data))
    if missing:
        raise InvalidInput(f"a {kind} event's data needs the field {missing[0]!r}")
    for name, value in data.items():
        fields[name](value, f"{kind} event's {name}")
    if kind == "forget":
        fact, partners = snapshot(data["fact"], user, fact_id)
        return {"fact": {**fact.to_dict(), "conflicts_with": partners}}
    return dict(data)
