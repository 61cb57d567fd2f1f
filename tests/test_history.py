"""SPEC §7: every change is an event, and undo reverses one operation or refuses cleanly."""

import struct

import pytest

from ankita import InvalidInput, NotFound, UndoError


def types(memory, fact_id):
    return [e.type for e in memory.history(fact_id)]


def test_every_kind_of_change_is_recorded(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.remember("I live in Munich")
    memory.pin(b.id)
    memory.unpin(b.id)
    memory.clear_conflict(a.id, b.id)
    memory.resolve(keep=b.id, over=a.id)
    memory.forget(b.id)
    assert types(memory, a.id) == ["create", "link", "clear", "resolve"]
    assert types(memory, b.id) == [
        "create",
        "link",
        "merge",
        "pin",
        "unpin",
        "clear",
        "resolve",
        "forget",
    ]


def test_history_is_append_only_and_survives_forget(memory):
    a = memory.remember("I use Postgres").fact
    memory.forget(a.id)
    events = memory.history(a.id)
    assert [e.type for e in events] == ["create", "forget"]
    assert events[1].data["fact"]["text"] == "I use Postgres"


def test_undo_create_removes_the_fact_and_its_links(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich")
    memory.undo(b.event_id)
    with pytest.raises(NotFound):
        memory.get(b.fact.id)
    assert memory.get(a.id).conflicts_with == ()
    assert types(memory, b.fact.id)[-1] == "undo"


def test_undo_create_is_refused_after_later_merges(memory):
    first = memory.remember("I use Postgres")
    memory.remember("Database is Postgres")
    with pytest.raises(UndoError, match="merges first"):
        memory.undo(first.event_id)
    assert memory.get(first.fact.id).mentions == 2


def test_undo_merge_restores_mentions_text_and_confirmation(memory, clock):
    first = memory.remember("I prefer dark mode in editors").fact
    clock.advance(days=1)
    merged = memory.remember("I prefer dark mode in editors and terminals")
    assert merged.fact.text.endswith("terminals")
    memory.undo(merged.event_id)
    back = memory.get(first.id)
    assert back.text == first.text
    assert back.mentions == 1
    assert back.last_confirmed_at == first.last_confirmed_at


def test_undo_forget_restores_fact_and_links(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.forget(a.id)
    memory.undo(memory.history(a.id)[-1].id)
    assert memory.get(a.id).conflicts_with == (b.id,)
    assert memory.get(b.id).conflicts_with == (a.id,)


def test_undo_clear_and_pin(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.clear_conflict(a.id, b.id)
    memory.undo(memory.history(a.id)[-1].id)
    assert memory.get(a.id).conflicts_with == (b.id,)
    memory.pin(a.id)
    memory.undo(memory.history(a.id)[-1].id)
    assert not memory.get(a.id).pinned


def test_undo_reactivation_supersedes_again(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.resolve(keep=b.id, over=a.id)
    back = memory.remember("I live in Berlin")
    memory.undo(back.event_id)
    assert memory.get(a.id).status == "superseded"
    assert memory.get(a.id).conflicts_with == ()
    assert memory.get(a.id).mentions == 1


def test_an_event_is_undone_once_and_undo_is_not_undone(memory):
    a = memory.remember("I use Postgres").fact
    memory.pin(a.id)
    pin_event = memory.history(a.id)[-1]
    undo_event = memory.undo(pin_event.id)
    with pytest.raises(UndoError, match="already undone"):
        memory.undo(pin_event.id)
    with pytest.raises(UndoError, match="cannot itself be undone"):
        memory.undo(undo_event.id)
    assert memory.history(a.id)[-2].undone_by == undo_event.id


def test_undo_of_unknown_or_bad_event(memory):
    with pytest.raises(NotFound):
        memory.undo(999)
    for bad in (0, -1, "1", True, None):
        with pytest.raises(InvalidInput):
            memory.undo(bad)


def test_undo_refused_when_the_fact_is_gone_changes_nothing(memory):
    a = memory.remember("I use Postgres").fact
    memory.pin(a.id)
    pin_event = memory.history(a.id)[-1]
    memory.forget(a.id)
    with pytest.raises(UndoError, match="no longer exists"):
        memory.undo(pin_event.id)
    assert memory.history(a.id)[-1].type == "forget"


def test_events_of_another_user_are_invisible(db):
    from ankita import Memory

    with (
        Memory(db, user="alice", embedder="none") as alice,
        Memory(db, user="bob", embedder="none") as bob,
    ):
        fact = alice.remember("I use Postgres")
        with pytest.raises(NotFound):
            bob.undo(fact.event_id)
        with pytest.raises(NotFound):
            bob.history(fact.fact.id)


def test_conflict_details_survive_clear_and_its_undo(memory):
    memory.remember("I love jazz")
    flagged = memory.remember("I hate jazz")
    [pair] = memory.conflicts()
    assert (pair.score, pair.reason) == (flagged.score, flagged.reason)
    memory.clear_conflict(pair.a.id, pair.b.id)
    clear = memory.history(pair.a.id)[-1]
    memory.undo(clear.id)
    [again] = memory.conflicts()
    assert (again.score, again.reason) == (flagged.score, flagged.reason)


def test_undo_of_a_forget_never_makes_a_second_copy(memory):
    first = memory.remember("I use Postgres").fact.id
    memory.forget(first)
    again = memory.remember("I use Postgres").fact.id
    forget_event = memory.history(first)[-1].id
    with pytest.raises(UndoError, match=f"{again}.*says the same"):
        memory.undo(forget_event)
    assert [f.id for f in memory.list()] == [again]
    memory.forget(again)  # once the copy is gone, the original can come back
    memory.undo(forget_event)
    assert [f.id for f in memory.list()] == [first]


def test_undoing_a_grown_text_drops_the_vector_of_the_grown_text(tmp_path):
    """A vector always belongs to the fact's current text: undo cannot leave the grown text's
    vector behind on the restored one (reindex embeds it again)."""
    from ankita import Memory
    from test_write import Letters

    with Memory(tmp_path / "m.db", embedder=Letters()) as m:
        first = m.remember("I use Postgres").fact
        grown = m.remember("I use Postgres at work")
        assert grown.action == "merged" and grown.fact.text == "I use Postgres at work"
        change = [e for e in m.history(first.id) if e.type == "text_change"][0]
        m.undo(change.id)
        assert m.get(first.id).text == "I use Postgres"
        assert m.store.vectors_of([first.id], "letters") == {}
        assert m.reindex()["embedded"] == 1
        stored = m.store.vectors_of([first.id], "letters")[first.id]
    assert stored == struct.pack("<26f", *Letters().embed_batch(["I use Postgres"])[0])
