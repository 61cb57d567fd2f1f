"""Undo: reverse every event of one operation, or refuse and change nothing (SPEC §7)."""

from __future__ import annotations

from typing import Any

from ankita._errors import InvalidInput, NotFound, UndoError
from ankita._eventdata import check_stored_event, snapshot
from ankita._models import Event, Fact
from ankita.store._sql import SQLStore
from ankita.store._sqlbase import TermsOf


def _need(store: SQLStore, user: str, fact_id: str, event: Event) -> Fact:
    fact = store.get_fact(user, fact_id)
    if fact is None:
        raise UndoError(
            f"cannot undo event {event.id} ({event.type}): fact {fact_id} no longer "
            "exists; undo its forget first"
        )
    return fact


def _reverse(store: SQLStore, user: str, event: Event, terms_of: TermsOf) -> None:
    """Reverse one event in place; raise UndoError if the store has moved on."""
    data: dict[str, Any] = event.data
    kind = event.type
    if kind == "create":
        fact = _need(store, user, event.fact_id, event)
        if fact.mentions > 1:
            raise UndoError(f"fact {fact.id} absorbed later writes; undo those merges first")
        store.delete_fact(fact.id)
    elif kind == "merge":
        fact = _need(store, user, event.fact_id, event)
        fields: dict[str, Any] = {"mentions": max(1, fact.mentions - 1)}
        # Only roll timestamps back if no later write confirmed the fact again.
        before = (data.get("confirmed_before"), data.get("updated_before"))
        if fact.last_confirmed_at == data.get("confirmed_after") and None not in before:
            fields["last_confirmed_at"], fields["updated_at"] = before
        store.update_fact(fact.id, **fields)
    elif kind == "text_change":
        fact = _need(store, user, event.fact_id, event)
        if fact.text != data["after"]:
            raise UndoError(f"the text of {fact.id} changed again since event {event.id}")
        store.update_fact(fact.id, terms_of(data["before"]), text=data["before"])
    elif kind == "reactivate":
        _need(store, user, event.fact_id, event)
        store.update_fact(event.fact_id, status="superseded")
    elif kind == "link":
        store.remove_link(user, event.fact_id, event.other_id or "")
    elif kind == "clear":
        assert event.other_id is not None
        _need(store, user, event.fact_id, event)
        _need(store, user, event.other_id, event)
        store.add_link(user, event.fact_id, event.other_id, event.at, not data.get("possible"))
    elif kind == "resolve":
        over = _need(store, user, event.fact_id, event)
        store.update_fact(over.id, status="active")
        keep = store.get_fact(user, event.other_id or "")
        if data.get("was_linked") and keep is not None:
            store.add_link(user, over.id, keep.id, event.at, not data.get("possible"))
    elif kind == "promote":
        store.set_link_sure(user, event.fact_id, event.other_id or "", False)
    elif kind in ("pin", "unpin"):
        _need(store, user, event.fact_id, event)
        store.update_fact(event.fact_id, pinned=(kind == "unpin"))
    elif kind == "forget":
        if store.get_fact(user, event.fact_id) is not None:
            raise UndoError(f"fact {event.fact_id} exists again; nothing to restore")
        if store.fact_row_exists(event.fact_id):
            raise UndoError(f"fact id {event.fact_id} is in use; nothing to restore")
        fact, partners = snapshot(data["fact"], user, event.fact_id)
        store.insert_fact(fact, terms_of(fact.text))
        for other in partners:
            if store.get_fact(user, other) is not None:
                store.add_link(user, event.fact_id, other, event.at)
    else:
        raise UndoError(f"events of type {kind!r} cannot be undone")


def checked_group(store: SQLStore, user: str, event_id: int) -> list[Event]:
    """The user's events of the operation `event_id` belongs to, each one's data checked again
    as a live write checks what it stores (an imported event is a stranger's), or UndoError."""
    event = store.event(user, event_id)
    if event is None:
        raise NotFound(f"no event {event_id} for user {user!r}")
    if event.type == "undo":
        raise UndoError("an undo cannot itself be undone; make the change again instead")
    group = store.op_events(user, event.op)
    if any(e.undone_by is not None for e in group):
        raise UndoError(f"event {event_id} was already undone")
    for item in group:
        try:
            check_stored_event(item.type, item.data, item.fact_id, user)
        except InvalidInput as exc:
            raise UndoError(
                f"event {item.id} holds what no write would store, so it is not undone: {exc}"
            ) from None
    return group


def undo(
    store: SQLStore, user: str, group: list[Event], op: str, at: str, terms_of: TermsOf
) -> Event:
    """Undo one operation, given as `checked_group` returned it. Call inside a transaction."""
    event = group[0]
    for item in reversed(group):
        _reverse(store, user, item, terms_of)
    undo_id = store.add_event(
        user,
        op,
        "undo",
        event.fact_id,
        event.other_id,
        at,
        {"undid": [e.id for e in group], "types": [e.type for e in group]},
    )
    store.mark_undone(user, [e.id for e in group], undo_id)
    found = store.event(user, undo_id)
    assert found is not None
    return found
