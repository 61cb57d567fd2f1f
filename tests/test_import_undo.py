"""An export's history is a stranger's input (docs/security.md, "Import and undo"): imported
events are checked like live writes, bound to the importer, and undo re-checks them and only
ever touches the caller's rows. Each reproduction of the hostile review is a test here."""

import json
import socket
import sqlite3
import time

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ankita import AnkitaError, Memory
from ankita._eventdata import FACT_FIELDS, fact_from_fields
from ankita.cli import cli
from ankita.server._guards import TimedH11, create_token
from ankita.server._server import create_app
from hostile import snapshot
from live import LiveServer
from test_write import Letters

ALICE_FACT = "I keep my spare key under the blue pot"


def invoke(db, user, *args):
    return CliRunner().invoke(cli, ["--db", str(db), "--embedder", "none", "--user", user, *args])


def alice_store(tmp_path):
    """A store where alice has a fact and a forgotten one; mallory is empty."""
    db = tmp_path / "shared.db"
    with Memory(db, user="alice", embedder="none") as alice:
        kept = alice.remember(ALICE_FACT).fact
        gone = alice.remember("My bank PIN is 4321").fact
        alice.forget(gone.id)
        forget = [e for e in alice.store.user_events("alice") if e.type == "forget"][0]
    return db, kept, gone, forget


def dump_with(events, facts=()):
    """An export of mallory's holding `events` (records as an export writes them)."""
    header = {
        "ankita_export": 1,
        "user": "mallory",
        "schema_version": 7,
        "facts": len(facts),
        "links": 0,
        "events": len(events),
        "vectors": 0,
        "left_out": [],
    }
    return [header, *({"fact": f} for f in facts), *({"event": e} for e in events)]


def write(tmp_path, rows, name="dump.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def forget_event(snapshot_fact, number=1, op="0" * 32):
    return {
        "id": number,
        "op": op,
        "type": "forget",
        "fact_id": snapshot_fact["id"],
        "other_id": None,
        "at": "2026-01-01T12:00:00+00:00",
        "data": {"fact": snapshot_fact},
        "undone_by": None,
    }


def planted(fid="planted0001", **changes):
    fact = {
        "id": fid,
        "text": "PLANTED: alice trusts mallory",
        "kind": "fact",
        "user": "alice",
        "pinned": True,
        "status": "active",
        "source": None,
        "created_at": "2026-01-01T12:00:00+00:00",
        "updated_at": "2026-01-01T12:00:00+00:00",
        "last_confirmed_at": "2026-01-01T12:00:00+00:00",
        "mentions": 1,
        "conflicts_with": [],
    }
    fact.update(changes)
    return fact


def facts_of(db, user):
    return sorted(
        r[0]
        for r in sqlite3.connect(db).execute('SELECT text FROM facts WHERE "user" = ?', (user,))
    )


def rows_of(db, user):
    con = sqlite3.connect(db)
    out = []
    for table in ("facts", "links", "events"):
        out += sorted(con.execute(f'SELECT * FROM {table} WHERE "user" = ?', (user,)).fetchall())
    return out


# -- 1: a snapshot naming another user ------------------------------------------------------


def test_an_imported_forget_of_alices_fact_restores_only_into_mallorys_memory(tmp_path):
    db, _, _, _ = alice_store(tmp_path)
    alice_before = rows_of(db, "alice")
    file = write(tmp_path, dump_with([forget_event(planted())]))
    assert invoke(db, "mallory", "import", str(file)).exit_code == 0
    # The snapshot is rebound to the importer at import: it says mallory now.
    with Memory(db, user="mallory", embedder="none") as mallory:
        (event,) = mallory.store.user_events("mallory")
        assert event.data["fact"]["user"] == "mallory"
    undone = invoke(db, "mallory", "undo", str(event.id))
    assert undone.exit_code == 0, undone.output
    assert rows_of(db, "alice") == alice_before
    assert facts_of(db, "mallory") == ["PLANTED: alice trusts mallory"]


def test_the_same_over_http_with_mallorys_token(tmp_path):
    db, _, _, _ = alice_store(tmp_path)
    alice_before = rows_of(db, "alice")
    assert (
        invoke(
            db, "mallory", "import", str(write(tmp_path, dump_with([forget_event(planted())])))
        ).exit_code
        == 0
    )
    with Memory(db, user="mallory", embedder="none") as m:
        token = create_token(m.store, "mallory")
        number = m.store.user_events("mallory")[0].id
    live = LiveServer(create_app(db, embedder="none"))
    try:
        reply = httpx.post(
            f"{live.url}/v1/undo/{number}", headers={"Authorization": f"Bearer {token}"}
        )
    finally:
        live.stop()
    assert reply.status_code == 200, reply.text
    assert rows_of(db, "alice") == alice_before


def test_undo_refuses_a_snapshot_of_another_user_that_reached_the_store(tmp_path):
    """An event stored before imports were checked (or by any other path) is re-checked."""
    db, _, _, _ = alice_store(tmp_path)
    alice_before = rows_of(db, "alice")
    con = sqlite3.connect(db)
    con.execute(
        'INSERT INTO events (id, op, "user", type, fact_id, other_id, at, data) '
        "VALUES (1, 'x', 'mallory', 'forget', 'planted0001', NULL, ?, ?)",
        ("2026-01-01T12:00:00+00:00", json.dumps({"fact": planted()})),
    )
    con.commit()
    con.close()
    result = invoke(db, "mallory", "undo", "1")
    assert result.exit_code == 4 and "another user" in result.output
    assert rows_of(db, "alice") == alice_before and facts_of(db, "mallory") == []
    doctor = json.loads(invoke(db, "mallory", "doctor", "--json").output)
    assert any("another user's fact" in p for p in doctor["problems"])


# -- 2: an op id of alice's -------------------------------------------------------------------


def test_an_imported_op_id_never_gathers_alices_events(tmp_path):
    db, _, gone, forget = alice_store(tmp_path)
    alice_before = rows_of(db, "alice")
    mine = planted("mallory0001", user="mallory", text="I like chess")
    event = forget_event(mine, op=forget.op)  # alice's op id, seen in her history
    assert invoke(db, "mallory", "import", str(write(tmp_path, dump_with([event])))).exit_code == 0
    with Memory(db, user="mallory", embedder="none") as mallory:
        (stored,) = mallory.store.user_events("mallory")
        assert stored.op != forget.op  # renamed into the importer's space
        mallory.undo(stored.id)
    assert rows_of(db, "alice") == alice_before
    assert gone.text not in facts_of(db, "alice") + facts_of(db, "mallory")


# -- 3 and 4: values no live write would store ------------------------------------------------

FORGED_SNAPSHOTS = [
    {"text": "x" * 30_000 + "\x00\x1b"},
    {"text": "a" * 100_000},
    {"last_confirmed_at": "not a time"},
    {"last_confirmed_at": "2026-01-01T12:00:00"},  # naive
    {"source": "s" * 200_000 + "\x00\x1b[2J"},
    {"source": "ok\x1b[2J"},
    {"kind": "NOT A KIND"},
    {"mentions": 0},
    {"conflicts_with": "abc"},
    {"id": "another0001"},  # not the event's fact
]


@pytest.mark.parametrize("change", FORGED_SNAPSHOTS, ids=lambda c: next(iter(c)))
def test_a_forged_forget_snapshot_is_refused_at_import(tmp_path, change):
    db, _, _, _ = alice_store(tmp_path)
    before = snapshot(db)
    fact = planted(**change)
    event = forget_event(fact)
    event["fact_id"] = "planted0001"
    result = invoke(db, "mallory", "import", str(write(tmp_path, dump_with([event]))))
    assert result.exit_code == 2, result.output
    assert (
        "Traceback" not in result.output
        and result.exception is None
        or isinstance(result.exception, SystemExit)
    )
    assert snapshot(db) == before


@pytest.mark.parametrize(
    "data",
    [
        {},  # no fact
        {"fact": "a string"},
        {"fact": {k: v for k, v in planted().items() if k != "user"}},
        {"fact": {k: v for k, v in planted().items() if k != "text"}},
        {"fact": planted(), "extra": 1},
    ],
)
def test_malformed_forget_data_is_a_clear_error(tmp_path, data):
    db, _, _, _ = alice_store(tmp_path)
    before = snapshot(db)
    event = forget_event(planted())
    event["data"] = data
    result = invoke(db, "mallory", "import", str(write(tmp_path, dump_with([event]))))
    assert result.exit_code == 2 and "event 1" in result.output, result.output
    assert snapshot(db) == before


def mallory_export(tmp_path):
    """Mallory's own export with a merge and a text change in it."""
    with Memory(tmp_path / "m.db", user="mallory", embedder=Letters()) as m:
        m.remember("I use Postgres")
        m.remember("I use Postgres at work")
        return list(m.export())


@pytest.mark.parametrize(
    "kind, field, value",
    [
        ("merge", "confirmed_before", "not a time"),
        ("merge", "updated_before", "2026-01-01T12:00:00"),
        ("merge", "source", "x" * 201),
        ("text_change", "before", "y" * 30_000 + "\x00"),
        ("text_change", "before", "\x1b[2J"),
        ("text_change", "after", None),
        ("create", "text", "\x00"),
        ("resolve", "was_linked", "yes"),
        ("undo", "undid", "all"),
    ],
)
def test_forged_event_data_of_every_type_is_refused(tmp_path, kind, field, value):
    rows = mallory_export(tmp_path)
    events = [r["event"] for r in rows if "event" in r]
    target = next((e for e in events if e["type"] == kind), None)
    if target is None:  # this history has no such event: add one to the first fact
        target = dict(events[0], id=99, type=kind, data={}, op="z" * 8)
        rows.append({"event": target})
        rows[0]["events"] += 1
    target["data"][field] = value
    db = tmp_path / "target.db"
    result = invoke(db, "mallory", "import", str(write(tmp_path, rows)))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error (invalid_input)")
    with Memory(db, user="mallory", embedder="none") as m:
        assert m.list() == [] and m.store.user_events("mallory") == []


def test_undo_rechecks_a_stored_text_change_before_storing_it(tmp_path):
    db = tmp_path / "m.db"
    with Memory(db, user="mallory", embedder=Letters()) as m:
        m.remember("I use Postgres")
        result = m.remember("I use Postgres at work")
        change = [e for e in m.store.user_events("mallory") if e.type == "text_change"][0]
    con = sqlite3.connect(db)
    data = dict(change.data, before="z" * 30_000 + "\x1b[2J")
    con.execute(
        'UPDATE events SET data = ? WHERE "user" = ? AND id = ?',
        (json.dumps(data), "mallory", change.id),
    )
    con.commit()
    con.close()
    before = snapshot(db)
    refused = invoke(db, "mallory", "undo", str(result.event_id))
    assert refused.exit_code == 4 and "no write would store" in refused.output
    assert snapshot(db) == before


def test_a_users_own_export_restores_after_undo_of_an_import(tmp_path):
    """The backup a user makes after undoing imported events can be restored."""
    db, _, _, _ = alice_store(tmp_path)
    mine = planted("mallory0001", user="mallory", text="I like chess")
    assert (
        invoke(
            db, "mallory", "import", str(write(tmp_path, dump_with([forget_event(mine)])))
        ).exit_code
        == 0
    )
    assert invoke(db, "mallory", "undo", "1").exit_code == 0
    out = tmp_path / "backup.jsonl"
    assert invoke(db, "mallory", "export", "-o", str(out)).exit_code == 0
    again = invoke(tmp_path / "fresh.db", "mallory", "import", str(out))
    assert again.exit_code == 0, again.output
    recalled = invoke(tmp_path / "fresh.db", "mallory", "recall", "chess")
    assert recalled.exit_code == 0 and "I like chess" in recalled.output


# -- 4: the terminal --------------------------------------------------------------------------


def test_show_and_list_print_stored_escape_codes_as_text(tmp_path):
    db = tmp_path / "m.db"
    with Memory(db, embedder="none") as m:
        fid = m.remember("I live in Rome").fact.id
    con = sqlite3.connect(db)  # as an older version may have stored it
    con.execute("UPDATE facts SET text = ? WHERE id = ?", ("I live in \x1b[2JRome", fid))
    con.commit()
    con.close()
    for args in (("show", fid), ("list",), ("recall", "I live", "--prompt")):
        out = invoke(db, "default", *args).output
        assert "\x1b" not in out and "\\x1b[2JRome" in out, (args, out)


# -- 5: nesting -------------------------------------------------------------------------------


def test_deeply_nested_json_is_a_clear_error_at_every_file_door(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    file = tmp_path / "deep.jsonl"
    file.write_text(deep + "\n", encoding="utf-8")
    result = invoke(tmp_path / "m.db", "default", "import", str(file))
    assert result.exit_code == 2 and "nested" in result.output, result.output
    card = tmp_path / "card.json"
    card.write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    result = invoke(tmp_path / "m.db", "default", "persona", "import", str(card))
    assert result.exit_code == 2 and "nested" in result.output, result.output
    shallow = '{"a": ' * 70 + "1" + "}" * 70
    file.write_text(shallow + "\n", encoding="utf-8")
    result = invoke(tmp_path / "m.db", "default", "import", str(file))
    assert result.exit_code == 2 and "deeper than 64" in result.output


# -- 6, 7, 8: the server ----------------------------------------------------------------------


class QuickHead(TimedH11):
    HEAD_TIMEOUT_S = 1.0


@pytest.fixture
def server(tmp_path):
    import threading

    import uvicorn

    path = tmp_path / "memory.db"
    app = create_app(path, embedder="none", anonymous=True, body_timeout=1.0)
    srv = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", http=QuickHead)
    )
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not srv.started:
        assert time.time() < deadline
        time.sleep(0.02)
    yield srv.servers[0].sockets[0].getsockname()[1], path
    srv.should_exit = True
    thread.join(10)


def test_a_chunked_body_over_the_limit_is_413(server):
    port, _ = server

    def chunks():
        for _ in range(70):
            yield b" " * 1024

    reply = httpx.post(
        f"http://127.0.0.1:{port}/v1/facts",
        content=chunks(),
        headers={"Content-Type": "application/json"},
    )
    assert reply.status_code == 413 and reply.json()["error"]["code"] == "too_large"
    ok = httpx.post(f"http://127.0.0.1:{port}/v1/facts", json={"text": "I like tea"})
    assert ok.status_code in (200, 201), ok.text


def test_a_trickled_head_is_cut_off(server):
    port, _ = server
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(10)
    start = time.monotonic()
    sock.sendall(b"GET /v1/facts HTTP/1.1\r\n")
    closed = False
    for _ in range(20):  # one header line every 0.3 s, never the blank line
        try:
            sock.sendall(b"X-Slow: 1\r\n")
        except OSError:
            closed = True
            break
        time.sleep(0.3)
        sock.setblocking(False)
        try:
            if sock.recv(1) == b"":
                closed = True
                break
        except BlockingIOError:
            pass
        finally:
            sock.setblocking(True)
    sock.close()
    assert closed and time.monotonic() - start < 4


def test_a_stalled_body_is_408(server):
    port, _ = server
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(10)
    sock.sendall(
        b"POST /v1/facts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"text":'
    )
    start = time.monotonic()
    answer = sock.recv(4096)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - start < 5


def test_event_ids_are_numbered_per_user(tmp_path):
    db = tmp_path / "m.db"
    with Memory(db, user="alice", embedder="none") as alice:
        first = alice.remember("I like tea").event_id
    with Memory(db, user="bob", embedder="none") as bob:
        for text in ("I like chess", "I live in Oslo", "I use Vim", "I drive a Volvo"):
            bob.remember(text)
    with Memory(db, user="alice", embedder="none") as alice:
        second = alice.remember("I live in Rome").event_id
    assert (first, second) == (1, 2)  # bob's four writes leave no gap in alice's ids


def test_a_forbidden_card_names_no_other_user(tmp_path):
    path = tmp_path / "memory.db"
    with Memory(path, user="alice", embedder="none") as m:
        token = create_token(m.store, "mallory")
    live = LiveServer(create_app(path, default_user="alice", embedder="none"))
    try:
        reply = httpx.get(live.url + "/v1/persona", headers={"Authorization": f"Bearer {token}"})
    finally:
        live.stop()
    assert reply.status_code == 403 and "alice" not in reply.text and "mallory" not in reply.text


# -- the fuzz: import -> undo -----------------------------------------------------------------

_TEXTS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["I like tea", "x" * 2001, "\x1b[2J", " padded ", "ok\x00"]),
)
_TIMES = st.sampled_from(
    ["2026-01-01T12:00:00+00:00", "2026-01-01T12:00:00", "not a time", "", "2026-13-01"]
)
_VALUES = st.one_of(
    _TEXTS,
    _TIMES,
    st.none(),
    st.booleans(),
    st.integers(-5, 2**70),
    st.lists(st.integers(), max_size=3),
)


def _snapshot_strategy():
    base = planted("fuzzed00001")
    return st.fixed_dictionaries(
        {},
        optional={
            name: st.one_of(st.just(base[name]), _VALUES)
            for name in (*FACT_FIELDS, "user", "conflicts_with")
        },
    ).map(lambda changes: {**base, **changes})


_EVENT = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["forget", "merge", "text_change", "create", "link", "resolve", "pin", "reactivate"]
        ),
        "snapshot": _snapshot_strategy(),
        "data": st.dictionaries(
            st.sampled_from(
                [
                    "before",
                    "after",
                    "phrasing",
                    "confirmed_before",
                    "updated_before",
                    "confirmed_after",
                    "source",
                    "text",
                    "was_linked",
                    "reason",
                    "junk",
                ]
            ),
            _VALUES,
            max_size=4,
        ),
        "fact_id": st.sampled_from(["fuzzed00001", "alicefact01", "bad id!"]),
        "op": st.sampled_from(["0" * 32, "alice-op", "x" * 65]),
    }
)


def _fuzz(tmp_path, events):
    db = tmp_path / "fuzz.db"
    db.unlink(missing_ok=True)
    with Memory(db, user="alice", embedder="none") as alice:
        alice.remember(ALICE_FACT)
        alice_before = rows_of(db, "alice")
    rows = []
    for number, spec in enumerate(events, 1):
        data = {"fact": spec["snapshot"]} if spec["type"] == "forget" else spec["data"]
        rows.append(
            {
                "id": number,
                "op": spec["op"],
                "type": spec["type"],
                "fact_id": spec["fact_id"],
                "other_id": None,
                "at": "2026-01-01T12:00:00+00:00",
                "data": data,
                "undone_by": None,
            }
        )
    with Memory(db, user="mallory", embedder="none") as mallory:
        try:
            mallory.restore(dump_with(rows))
        except AnkitaError:
            pass
        for event in mallory.store.user_events("mallory"):
            try:
                mallory.undo(event.id)
            except AnkitaError:
                pass
        for fact in mallory.store.list_facts("mallory", statuses=("active", "superseded")):
            fields = {name: getattr(fact, name) for name in FACT_FIELDS}
            fact_from_fields({**fields, "status": str(fields["status"])}, "mallory")
        mallory.recall("tea")
    assert rows_of(db, "alice") == alice_before


@pytest.mark.parametrize(
    "examples", [pytest.param(40, id="quick"), pytest.param(400, marks=pytest.mark.slow, id="long")]
)
def test_fuzzed_import_then_undo_stays_in_the_importers_memory(tmp_path, examples):
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(_EVENT, min_size=1, max_size=3))
    def check(events):
        _fuzz(tmp_path, events)

    check()
