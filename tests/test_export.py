"""The lossless export: a round trip gives an identical memory; bad dumps change nothing;
`backup` copies a consistent store while another process writes."""

import json
import multiprocessing
import sqlite3

import pytest
from click.testing import CliRunner

from ankita import Embedder, InvalidInput, Memory, StoreError
from ankita.cli import cli
from conftest import fresh_schema


class HashedWords(Embedder):
    """A tiny deterministic embedder: words counted into 16 buckets (a bag of words)."""

    model_id = "test:hashed-words"

    def embed_batch(self, texts):
        out = []
        for text in texts:
            vector = [0.0] * 16
            for word in text.lower().split():
                vector[sum(map(ord, word)) % 16] += 1.0
            out.append(vector)
        return out


def rich_memory(memory, clock):
    """Every kind of event: create, merge (with text growth), conflict, clear and its undo,
    resolve, pin, unpin, forget and its undo, reactivation."""
    berlin = memory.remember("I live in Berlin", kind="location").fact.id
    clock.advance(hours=1)
    munich = memory.remember("I live in Munich", kind="location", source="chat").fact.id
    memory.remember("I use Postgres", kind="tool")
    memory.remember("I use Postgres for work projects", kind="tool")
    jazz = memory.remember("I love jazz").fact.id
    hate = memory.remember("I hate jazz").fact.id
    memory.clear_conflict(jazz, hate)
    memory.undo(memory.history(jazz)[-1].id)
    memory.resolve(keep=munich, over=berlin)
    tea = memory.remember("I drink green tea", pinned=True).fact.id
    memory.unpin(tea)
    memory.forget(tea)
    memory.undo(memory.history(tea)[-1].id)
    clock.advance(days=3)
    memory.remember("I live in Berlin", kind="location")  # said again: active and flagged


def table_dump(path, user):
    db = sqlite3.connect(path)
    out = {
        "facts": db.execute(
            "SELECT id, text, kind, pinned, status, source, created_at, "
            "updated_at, last_confirmed_at, mentions FROM facts WHERE user = ? "
            "ORDER BY seq",
            (user,),
        ).fetchall(),
        "links": db.execute(
            "SELECT a, b, created_at FROM links WHERE user = ? ORDER BY a", (user,)
        ).fetchall(),
        "events": db.execute(
            "SELECT op, type, fact_id, other_id, at, data, undone_by IS NULL "
            "FROM events WHERE user = ? ORDER BY id",
            (user,),
        ).fetchall(),
        "vectors": db.execute(
            "SELECT v.fact_id, model, dim, vector FROM vectors v JOIN facts "
            "f ON f.id = v.fact_id WHERE f.user = ? ORDER BY v.fact_id",
            (user,),
        ).fetchall(),
    }
    db.close()
    ops: dict[str, int] = {}
    out["events"] = [(ops.setdefault(r[0], len(ops)), *r[1:]) for r in out["events"]]
    return out


def lines_of(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def op_order(records):
    """Records with each op id replaced by the order it first appears in: a restore renames op
    ids into the importer's space (docs/security.md) and keeps which events share one."""
    ops: dict[str, int] = {}
    out = []
    for r in records:
        if "event" in r:
            r = {"event": {**r["event"], "op": ops.setdefault(r["event"]["op"], len(ops))}}
        out.append(r)
    return out


def test_round_trip_gives_an_identical_memory(tmp_path, clock):
    with Memory(tmp_path / "a.db", embedder=HashedWords(), clock=clock) as memory:
        rich_memory(memory, clock)
        dump = list(memory.export(vectors=True))
    assert dump[0]["vectors"] > 0 and dump[0]["events"] > 15
    with Memory(tmp_path / "b.db", embedder=HashedWords()) as copy:
        assert copy.restore(json.loads(json.dumps(dump))) == {
            k: dump[0][k] for k in ("facts", "links", "events", "vectors")
        }
        again = list(copy.export(vectors=True))
        assert op_order(again) == op_order(dump)
        old_ops = {r["event"]["op"] for r in dump if "event" in r}
        assert old_ops.isdisjoint(r["event"]["op"] for r in again if "event" in r)
        assert copy.doctor()["ok"]
    assert table_dump(tmp_path / "a.db", "default") == table_dump(tmp_path / "b.db", "default")


def test_a_restored_memory_behaves_like_the_original(tmp_path, clock):
    with Memory(tmp_path / "a.db", embedder="none", clock=clock) as memory:
        rich_memory(memory, clock)
        dump = list(memory.export())
        last = next(f for f in memory.list() if f.text == "I live in Berlin")
        before = memory.undo(memory.history(last.id)[-1].id)
    with Memory(tmp_path / "b.db", embedder="none", user="alice") as copy:
        copy.restore(dump)
        # Undo reaches back into the restored history exactly as it did in the original.
        after = copy.undo(copy.history(last.id)[-1].id)
        assert (after.data["types"], after.fact_id) == (before.data["types"], before.fact_id)
        assert copy.remember("I love jazz").action == "merged"


def test_event_ids_are_the_importers_own_and_undo_still_works(tmp_path, clock):
    with Memory(tmp_path / "a.db", embedder="none", clock=clock) as memory:
        rich_memory(memory, clock)
        dump = list(memory.export())
    with Memory(tmp_path / "b.db", embedder="none", user="bob") as bob:
        for i in range(30):
            bob.remember(f"Bob's note number {i} about item {i * 7}")
    with Memory(tmp_path / "b.db", embedder="none", user="alice") as alice:
        alice.restore(dump)
        events = alice.store.user_events("alice")
        # Numbered in alice's own sequence: bob's 30 writes leave no trace in them.
        assert [e.id for e in events] == list(range(1, len(events) + 1))
        undos = [e for e in events if e.type == "undo"]
        assert undos and all(all(i < u.id for i in u.data["undid"]) for u in undos)
        tea = next(f for f in alice.list() if f.text == "I drink green tea")
        assert alice.history(tea.id)[-2].undone_by == alice.history(tea.id)[-1].id
        assert alice.doctor()["ok"]


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda d: d[:-1], "the export is incomplete"),
        (
            lambda d: [d[0]] + [{"fact": {**d[1]["fact"], "status": "gone"}}] + d[2:],
            "status must be active or superseded",
        ),
        (
            lambda d: [d[0]] + [{"fact": {**d[1]["fact"], "text": "  padded "}}] + d[2:],
            "leading or trailing space",
        ),
        (
            lambda d: (
                d + [{"link": {"a": d[1]["fact"]["id"], "b": "nobody", "created_at": "2026"}}]
            ),
            "must join two different facts",
        ),
        (lambda d: [{**d[0], "ankita_export": 2}] + d[1:], "format 2"),
        (lambda d: d[1:], "starts with its header"),
        (
            lambda d: d + [{"event": {**next(r for r in d if "event" in r)["event"]}}],
            "same event id twice",
        ),
        (
            lambda d: (
                d
                + [
                    {
                        "vector": {
                            "fact_id": d[1]["fact"]["id"],
                            "model": "m",
                            "dim": 2,
                            "base64": "AAAA",
                        }
                    }
                ]
            ),
            "not 2 floats",
        ),
    ],
)
def test_bad_dumps_are_refused_and_change_nothing(tmp_path, clock, change, message):
    with Memory(tmp_path / "a.db", embedder="none", clock=clock) as memory:
        rich_memory(memory, clock)
        dump = list(memory.export())
    with Memory(tmp_path / "b.db", embedder="none") as copy:
        with pytest.raises(InvalidInput, match=message):
            copy.restore(change(dump))
        assert copy.list(include_superseded=True) == [] and copy.store.user_events("default") == []


def test_restore_needs_an_empty_memory(tmp_path, clock):
    with Memory(tmp_path / "a.db", embedder="none", clock=clock) as memory:
        rich_memory(memory, clock)
        dump = list(memory.export())
        with pytest.raises(InvalidInput, match="already has a memory"):
            memory.restore(dump)
    with Memory(tmp_path / "a.db", embedder="none", user="twin") as twin:
        with pytest.raises(InvalidInput, match="already used in this store"):
            twin.restore(dump)  # fact ids are unique in a store, across users
        assert twin.list() == []


def test_cli_export_then_import_into_another_store(tmp_path, clock):
    with Memory(tmp_path / "a.db", embedder="none", clock=clock) as memory:
        rich_memory(memory, clock)
    runner = CliRunner()
    out = tmp_path / "memory.jsonl"
    base = ["--embedder", "none"]
    assert (
        runner.invoke(
            cli, ["--db", str(tmp_path / "a.db"), *base, "export", "-o", str(out)]
        ).exit_code
        == 0
    )
    result = runner.invoke(
        cli, ["--db", str(tmp_path / "b.db"), *base, "import", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["facts"] == json.loads(out.read_text().split("\n")[0])["facts"]
    again = runner.invoke(cli, ["--db", str(tmp_path / "b.db"), *base, "export"]).output
    assert op_order(lines_of(again)) == op_order(lines_of(out.read_text()))


def _writer(path, count, started):
    with Memory(path, embedder="none", user="writer") as memory:
        started.set()
        for i in range(count):
            memory.remember(f"Note {i}: the meeting about project {i} is on day {i % 28 + 1}")


@pytest.mark.slow
def test_backup_while_another_process_writes(tmp_path):
    path = tmp_path / "live.db"
    Memory(path, embedder="none").close()
    context = multiprocessing.get_context("spawn")
    started = context.Event()
    child = context.Process(target=_writer, args=(str(path), 150, started))
    child.start()
    try:
        assert started.wait(60)
        with Memory(path, embedder="none") as memory:
            copies = [memory.backup(tmp_path / f"copy{i}.db") for i in range(3)]
            with pytest.raises(StoreError, match="exists"):
                memory.backup(copies[0])
    finally:
        child.join(120)
    assert child.exitcode == 0
    seen = []
    for copy in copies:
        with Memory(copy, embedder="none", user="writer") as memory:
            report = memory.doctor()
            assert report["ok"], report["problems"]
            seen.append(len(memory.list()))
    assert seen == sorted(seen)  # later copies hold at least as much
    assert not list(tmp_path.glob("*.partial"))


def test_an_export_moves_a_memory_between_backends(tmp_path, clock, postgres_url):
    with Memory(tmp_path / "a.db", embedder=HashedWords(), clock=clock) as memory:
        rich_memory(memory, clock)
        dump = list(memory.export(vectors=True))
    with Memory(fresh_schema(postgres_url), embedder=HashedWords()) as there:
        there.restore(dump)
        moved = list(there.export(vectors=True))
        assert there.doctor()["ok"]
        # Restored event ids move the server's sequence: new history never reuses them.
        later = there.remember("My cat is called Miso")
        assert later.event_id > max(r["event"]["id"] for r in dump if "event" in r)
    # The header names each backend's own schema version.
    assert op_order(moved[1:]) == op_order(dump[1:])
    with Memory(tmp_path / "back.db", embedder=HashedWords()) as home:
        home.restore(moved)
        assert op_order(home.export(vectors=True)) == op_order(dump)
