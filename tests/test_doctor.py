"""`ankita doctor`: every check finds the damage it is for; `--repair` fixes only safe things."""

import json
import sqlite3

import pytest
from click.testing import CliRunner

from ankita import Memory
from ankita.cli import cli
from ankita.search._index import (
    ANALYZER_VERSION,
)


def healthy_store(path):
    with Memory(path, embedder="none") as memory:
        memory.remember("I live in Berlin", kind="location")
        memory.remember("I live in Munich", kind="location")
        memory.remember("I use Postgres", kind="tool")
        memory.remember("I use Postgres", kind="tool")
        facts = {f.text: f.id for f in memory.list()}
    return facts


def damage(path, *statements):
    """Change the file behind Ankita's back, as a crash, a bug or a hand edit could."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA foreign_keys = OFF")
    for statement, params in statements:
        db.execute(statement, params)
    db.commit()
    db.close()


def doctor(path, *args):
    result = CliRunner().invoke(
        cli, ["--db", str(path), "--embedder", "none", "doctor", "--json", *args]
    )
    return result.exit_code, json.loads(result.output)


def failing(report):
    return {c["name"].split(":")[0].split(" ")[0] for c in report["checks"] if not c["ok"]}


def test_a_healthy_store_passes_every_check(db_path):
    healthy_store(db_path)
    code, report = doctor(db_path)
    assert code == 0 and report["ok"] and report["problems"] == []
    assert len(report["checks"]) == 9 and all(c["ok"] for c in report["checks"])


def test_each_kind_of_damage_is_found_and_safe_ones_are_repaired(db_path):
    facts = healthy_store(db_path)
    berlin, postgres = facts["I live in Berlin"], facts["I use Postgres"]
    damage(
        db_path,
        (
            "INSERT INTO links (user, a, b, created_at) VALUES ('default', ?, 'zzzz', 'x')",
            (berlin,),
        ),
        ("DELETE FROM terms WHERE fact_id = ?", (postgres,)),
        (
            "INSERT INTO vectors (fact_id, model, dim, vector) VALUES (?, 'm', 4, ?)",
            (berlin, b"\0" * 12),
        ),
        (
            "INSERT INTO vectors (fact_id, model, dim, vector) VALUES ('gone', 'm', 1, ?)",
            (b"\0" * 4,),
        ),
        (
            "INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', 1, "
            "'I live in Berlin')",
            (),
        ),
        ("UPDATE facts SET mentions = 7 WHERE id = ?", (postgres,)),
    )
    code, report = doctor(db_path)
    assert code == 1 and not report["ok"]
    problems = "\n".join(report["problems"])
    for expected in [
        f"link {berlin}-zzzz points at a missing fact",
        f"fact {postgres} is filed under the wrong index terms",
        f"vector of {berlin} (m) holds 12 bytes, not 4 floats",
        "vector of missing fact gone (m)",
        "full-text index",
        f"fact {postgres} says 7 mentions but its history holds 1 standing merges",
    ]:
        assert expected in problems, expected

    code, repaired = doctor(db_path, "--repair")
    # Mentions disagree with history: that needs a person, so doctor still fails.
    assert code == 1 and repaired["problems"] == [
        f"fact {postgres} says 7 mentions but its history holds 1 standing merges"
    ]
    assert len(repaired["repaired"]) == 4
    code, after = doctor(db_path)
    assert failing(after) == {"history"}
    with Memory(db_path, embedder="none") as memory:
        assert {f.text: f.id for f in memory.list()} == facts  # facts untouched
        assert memory.get(postgres).mentions == 7
        assert [f.fact.id for f in memory.recall("Postgres").facts][:1] == [postgres]


def test_history_without_events_and_unknown_event_types_are_reported(db_path):
    facts = healthy_store(db_path)
    damage(
        db_path,
        ("DELETE FROM events WHERE fact_id = ?", (facts["I use Postgres"],)),
        ("UPDATE events SET type = 'teleport' WHERE id = 1", ()),
    )
    _, report = doctor(db_path)
    problems = report["problems"]
    assert f"fact {facts['I use Postgres']} has no history" in problems
    assert "event 1 of default has unknown type 'teleport'" in problems


def test_doctor_text_output_says_what_to_run(db_path):
    healthy_store(db_path)
    damage(db_path, ("DELETE FROM terms", ()))
    result = CliRunner().invoke(cli, ["--db", str(db_path), "--embedder", "none", "doctor"])
    assert result.exit_code == 1
    assert "FAIL candidate index" in result.output and "doctor --repair" in result.output
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "--embedder", "none", "doctor", "--repair"]
    )
    assert result.exit_code == 0 and "repaired:" in result.output


def test_a_store_indexed_by_an_older_text_analysis_is_refiled_when_opened(db):
    """An upgrade that changes stemming or stop-words must not hide stored facts from the
    candidate search: the store is refiled once, on open, on either backend."""
    with Memory(db, embedder="none") as memory:
        played = memory.remember("I play the guitar every day", kind="hobby").fact
        memory.remember("I live in Lyon", kind="location")
        memory.store.query("DELETE FROM terms WHERE fact_id = ?", (played.id,))
        memory.store.query(
            'INSERT INTO terms ("user", term, fact_id) VALUES (?, ?, ?)',
            ("default", "c:plai", played.id),
        )  # what an older stemmer filed
        memory.store.query("UPDATE meta SET value = '1' WHERE key = 'analyzer'")
    with Memory(db, embedder="none") as memory:
        again = memory.remember("I play guitar every day", kind="hobby")
        assert again.action == "merged" and again.fact.id == played.id
        assert memory.store.query("SELECT value FROM meta WHERE key = 'analyzer'") == [
            (ANALYZER_VERSION,)
        ]


def test_a_store_with_no_terms_yet_is_filed_when_a_memory_opens_it(db):
    """A store from before the terms (the migration that added them files nothing: the store
    computes no terms) is filed by the first memory that opens it, on either backend."""
    with Memory(db, embedder="none") as memory:
        played = memory.remember("I play the guitar every day", kind="hobby").fact
        memory.store.query("DELETE FROM terms")
        memory.store.query("DELETE FROM meta WHERE key = 'analyzer'")
    with Memory(db, embedder="none") as memory:
        assert memory.store.query("SELECT count(*) FROM terms")[0][0] > 0
        again = memory.remember("I play guitar every day", kind="hobby")
        assert again.action == "merged" and again.fact.id == played.id


def test_the_store_files_the_terms_it_is_given_and_computes_none(db_path):
    """Layering (issue 36): the store receives a fact's terms; a new text without them is a
    programming error, not a fact filed under nothing."""
    from ankita.store._open import open_store

    with Memory(db_path, embedder="none") as memory:
        fact = memory.remember("I play the guitar every day", kind="hobby").fact
    store = open_store(str(db_path))
    try:
        with store.transaction("default"):
            store.update_fact(fact.id, frozenset({"c:ukulel"}), text="I play the ukulele")
        assert sorted(t for t, f in store.user_terms("default") if f == fact.id) == ["c:ukulel"]
        with pytest.raises(TypeError, match="terms"), store.transaction("default"):
            store.update_fact(fact.id, text="I play the drums")
        assert store.get_fact("default", fact.id).text == "I play the ukulele"
    finally:
        store.close()
