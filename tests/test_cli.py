"""The `ankita` command, through click's runner and as a real subprocess."""

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ankita import Memory
from ankita.cli import cli


@pytest.fixture
def run(db):
    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(
            cli, ["--db", str(db), "--embedder", "none", *args], input=input, catch_exceptions=False
        )

    return invoke


def as_json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_remember_merge_and_conflict_in_json(run):
    first = as_json(run("remember", "I use Postgres", "--kind", "tool", "--json"))
    assert first["action"] == "created"
    merged = as_json(run("remember", "Database", "is", "Postgres", "--kind", "tool", "--json"))
    assert merged["action"] == "merged" and merged["merged_into"] == first["fact"]["id"]
    flagged = as_json(
        run("remember", "I switched from Postgres to SQLite", "--kind", "tool", "--json")
    )
    assert flagged["action"] == "conflict"
    assert flagged["conflicts_with"] == [first["fact"]["id"]]
    assert set(flagged) >= {"action", "fact", "score", "method", "reason", "event_id"}


def test_human_output_is_readable_and_escapes_markup(run):
    out = run("remember", "[bold]not markup[/bold]")
    assert out.exit_code == 0
    assert "[bold]not markup[/bold]" in out.output
    listed = run("list")
    assert "[bold]not markup[/bold]" in listed.output


def test_recall_json_and_prompt(run):
    a = as_json(run("remember", "I live in Berlin", "--json"))["fact"]["id"]
    b = as_json(run("remember", "I live in Munich", "--json"))["fact"]["id"]
    data = as_json(run("recall", "where do I live", "--json"))
    assert {f["fact"]["id"] for f in data["facts"]} == {a, b}
    assert data["notice"].startswith("Some facts conflict")
    prompt = run("recall", "where do I live", "--prompt")
    assert prompt.output.strip().splitlines()[-1] == data["notice"]


def test_list_show_pin_unpin_forget(run):
    fid = as_json(run("remember", "I use Postgres", "--json"))["fact"]["id"]
    assert [f["id"] for f in as_json(run("list", "--json"))] == [fid]
    assert as_json(run("show", fid, "--json"))["text"] == "I use Postgres"
    assert as_json(run("pin", fid, "--json"))["pinned"] is True
    assert as_json(run("unpin", fid, "--json"))["pinned"] is False
    assert as_json(run("forget", fid, "--json"))["id"] == fid
    assert as_json(run("list", "--json")) == []


def test_list_search_and_limit(run):
    for text in ["I use Postgres", "I drink tea", "My sister uses Vim"]:
        run("remember", text)
    found = as_json(run("list", "--search", "USE", "--json"))
    assert [f["text"] for f in found] == ["I use Postgres", "My sister uses Vim"]
    assert len(as_json(run("list", "--limit", "1", "--json"))) == 1
    bad = run("list", "--limit", "0")
    assert bad.exit_code == 2 and "Invalid value for '--limit'" in bad.output


def test_conflicts_clear_resolve_history_undo(run):
    a = as_json(run("remember", "I live in Berlin", "--json"))["fact"]["id"]
    b = as_json(run("remember", "I live in Munich", "--json"))["fact"]["id"]
    pairs = as_json(run("conflicts", "--json"))
    assert [(p["a"]["id"], p["b"]["id"]) for p in pairs] == [tuple(sorted((a, b)))]
    assert run("clear-conflict", a, b).exit_code == 0
    assert as_json(run("conflicts", "--json")) == []
    run("undo", str(as_json(run("history", a, "--json"))[-1]["id"]))
    assert len(as_json(run("conflicts", "--json"))) == 1
    kept = as_json(run("resolve", b, a, "--json"))
    assert kept["id"] == b
    assert [f["id"] for f in as_json(run("list", "--json"))] == [b]
    assert {f["id"] for f in as_json(run("list", "--all", "--json"))} == {a, b}
    resolve_event = as_json(run("history", a, "--json"))[-1]
    assert resolve_event["type"] == "resolve"
    undone = as_json(run("undo", str(resolve_event["id"]), "--json"))
    assert undone["type"] == "undo"
    assert len(as_json(run("list", "--json"))) == 2


def test_compare_explain(run):
    out = run("compare", "I'm allergic to peanuts", "I'm not allergic to peanuts", "--explain")
    assert out.exit_code == 0
    assert "conflict" in out.output and "negation" in out.output
    data = as_json(run("compare", "I use Postgres", "Database is Postgres", "--json"))
    assert data["action"] == "merge" and data["lexical"]["winner"] == "jaccard"
    gates = {g["gate"]: g["passed"] for g in data["gates"]}
    assert gates["score 1.00 >= merge line 0.85"] is True
    assert gates["a disagreement found"] is False
    assert "yes  a disagreement found" in out.output


def test_a_decision_line_shows_the_one_score_its_reason_rests_on(run):
    """A frame's score beside an unrelated similarity read as one decision with two scores."""
    run("remember", "I live in Paris")
    flagged = run("remember", "I live in Berlin")
    reason = flagged.output.splitlines()[-1].strip()
    assert reason.startswith("same subject (") and "score" not in reason.split("(")[0]
    assert len(re.findall(r"\d\.\d\d", reason)) == 1, reason
    header = run("compare", "I live in Paris", "I live in Berlin").output.splitlines()[0]
    assert header.startswith("conflict: same subject (")
    assert len(re.findall(r"\d\.\d\d", header)) == 1, header
    explained = run("compare", "I live in Paris", "I live in Berlin", "--explain").output
    assert "similarity: lexical " in explained


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["remember", " "], 2, "text is empty"),
        (["remember", "x", "--kind", "Bad Kind"], 2, "kind must be"),
        (["show", "doesnotexist"], 3, "no fact"),
        (["show", "../../etc"], 2, "not a fact id"),
        (["undo", "12345"], 3, "no event"),
        (["--user", "a/b", "list"], 2, "user must be"),
    ],
)
def test_errors_are_one_line_with_exit_codes(run, args, code, message):
    result = run(*args)
    assert result.exit_code == code
    assert message in result.output
    assert "Traceback" not in result.output


def test_import_and_export_round_trip(run, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"text": "I use Postgres", "kind": "tool"},
                {"text": "Database is Postgres", "kind": "tool"},
                {"text": "I live in Berlin", "kind": "location", "pinned": True},
                {"text": "I live in Munich", "kind": "location"},
            ]
        )
        + "\n"
    )
    assert as_json(run("import", str(source), "--json")) == {
        "created": 2,
        "merged": 1,
        "conflict": 1,
    }
    exported = [json.loads(line) for line in run("export").output.splitlines()]
    facts = [r["fact"] for r in exported if "fact" in r]
    assert exported[0]["facts"] == len(facts) == 3
    assert {f["source"] for f in facts} == {"import"}


def test_bad_import_line_writes_nothing(run, tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_text('{"text": "I use Postgres"}\n{"text": ""}\n')
    result = run("import", str(source))
    assert result.exit_code == 2 and ":2: text is empty" in result.output
    assert as_json(run("list", "--json")) == []


def test_doctor_reports_ok(run, db):
    run("remember", "I use Postgres")
    report = as_json(run("doctor", "--json"))
    assert report["ok"] is True and report["problems"] == []
    with Memory(db, embedder="none") as memory:
        assert report["schema_version"] == memory.store.SCHEMA_VERSION > 0


def test_env_vars_select_db_and_user(tmp_path, monkeypatch):
    monkeypatch.setenv("ANKITA_DB", str(tmp_path / "env.db"))
    monkeypatch.setenv("ANKITA_USER", "alice")
    monkeypatch.setenv("ANKITA_EMBEDDER", "none")
    runner = CliRunner()
    created = json.loads(runner.invoke(cli, ["remember", "I use Postgres", "--json"]).output)
    assert created["fact"]["user"] == "alice"
    assert (tmp_path / "env.db").exists()


def test_default_db_lives_in_the_user_data_folder(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["--embedder", "none", "remember", "I use Postgres"])
    assert result.exit_code == 0
    assert list((tmp_path / "xdg").rglob("memory.db"))


def test_demo_shows_merge_conflict_notice_resolve_undo():
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.output
    for expected in ("merged", "conflict", "Ask the user which is current", "superseded", "undid"):
        assert expected in result.output
    # The conflict's other side is shown when it is stored; the end says what happened, and next.
    assert 'remember "I live in Berlin"' in result.output
    assert "temporary store is deleted (--keep keeps it)" in result.output
    assert "Next:" in result.output


def test_python_dash_m_and_console_script(db):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ankita",
            "--db",
            str(db),
            "--embedder",
            "none",
            "remember",
            "I use Postgres",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["action"] == "created"


def test_every_command_has_help():
    for name, command in cli.commands.items():
        assert command.help or command.callback.__doc__, name


def test_history_names_the_other_side_and_undo_says_both_events(run):
    a = as_json(run("remember", "I live in Berlin", "--json"))["fact"]["id"]
    b = as_json(run("remember", "I live in Munich", "--json"))["fact"]["id"]
    assert run("conflicts").output.startswith(f"{b}: I live in Munich")  # said last, first
    resolved = run("resolve", b, a)
    assert resolved.exit_code == 0, resolved.output
    shown = run("history", b).output
    assert f"(with {b})" not in shown and f"(with {a})" in shown  # the link row: the partner
    table = "".join(c for c in run("history", a).output if c.isalnum())  # folded cells
    assert f"kept{b}over{a}" in table
    events = as_json(run("history", a, "--json"))
    resolve = next(e for e in events if e["type"] == "resolve")
    out = run("undo", str(resolve["id"])).output
    assert f"undid the resolve of event {resolve['id']}; event {resolve['id'] + 1}" in out


def test_serve_on_a_taken_port_says_so_before_claiming_to_serve(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli, ["--db", str(tmp_path / "m.db"), "serve", "--port", str(port)]
        )
    assert result.exit_code == 8, result.output
    assert "port_in_use" in result.output and "serving" not in result.output
