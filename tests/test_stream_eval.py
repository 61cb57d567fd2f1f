"""`ankita eval --stream`: a memory stream written in order, its merges and flags scored
against labelled pairs; the built-in stream; LoCoMo's format; the dev conversations' targets
(docs/decisions.md, "On a stream")."""

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankita import InvalidInput, Memory
from ankita.cli import cli
from ankita.dev._stream import load_labels, load_streams, run_stream, select

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "dev" / "locomo"


def run(*args, embedder="none"):
    result = CliRunner().invoke(cli, ["--embedder", embedder, "eval", "--stream", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_every_merge_and_link_is_scored_by_its_label(tmp_path):
    stream = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"text": "I use Postgres at work"},
            {"text": "I am allergic to peanuts"},
            {"text": "I use Postgres at work every day"},  # merges into the first
            {"text": "I am not allergic to peanuts"},  # flagged against the second
            {"text": "I like jazz"},
            {"text": "I like blues"},  # compatible: created
        ],
    )
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {
                "a": "I use Postgres at work",
                "b": "I use Postgres at work every day",
                "label": "duplicate",
            },
            {
                "a": "I am allergic to peanuts",
                "b": "I am not allergic to peanuts",
                "label": "neither",
            },  # a person says: a false alarm
            {"a": "I like jazz", "b": "I like blues", "label": "duplicate"},  # a merge missed
        ],
    )
    report = run(stream, "--labels", labels, "--errors")
    assert report["facts"] == 6 and report["streams"] == 1
    assert (report["merges"], report["conflict_links"], report["conflict_writes"]) == (1, 1, 1)
    assert report["conflict_writes_per_1k"] == round(1000 / 6, 1)
    assert report["false_conflict_links_per_1k"] == round(1000 / 6, 1)
    assert report["merge_precision"] == 1.0 and report["conflict_precision"] == 0.0
    assert report["duplicate_recall"] == 0.5 and report["conflict_recall"] is None
    assert report["flagged_unlabelled"] == 0
    # --errors lists the flag the label says is wrong, and nothing that was right.
    assert [(e["action"], e["label"]) for e in report["errors"]] == [("conflict", "neither")]


def test_a_merged_fact_is_matched_by_the_text_it_was_created_with(tmp_path):
    # The stored text grows on a merge; a label names the text as it was first written.
    stream = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"text": "I use Postgres at home"},
            {"text": "I use Postgres at home and at work"},
            {"text": "I use Postgres at home and at work daily"},
        ],
    )
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {
                "a": "I use Postgres at home",
                "b": "I use Postgres at home and at work",
                "label": "duplicate",
            },
            {
                "a": "I use Postgres at home",
                "b": "I use Postgres at home and at work daily",
                "label": "duplicate",
            },
        ],
    )
    report = run(stream, "--labels", labels)
    assert report["merges"] == 2 and report["merge_labelled"] == 2
    assert report["duplicate_recall"] == 1.0


def test_streams_are_separate_memories_and_unlabelled_flags_are_counted(tmp_path):
    stream = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"stream": "a", "text": "I live in Berlin"},
            {"stream": "b", "text": "I live in Munich"},  # another memory: no conflict
            {"stream": "a", "text": "I live in Munich"},  # flagged, and nobody labelled it
        ],
    )
    report = run(stream)
    assert report["streams"] == 2 and report["conflict_links"] == 1
    assert report["flagged_unlabelled"] == 1 and report["merge_precision"] is None


def test_by_source_scores_each_stream_apart_worst_first(tmp_path):
    stream = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"stream": "clean", "text": "I use Postgres at work"},
            {"stream": "clean", "text": "I use Postgres at work every day"},  # a right merge
            {"stream": "noisy", "text": "I live in Berlin"},
            {"stream": "noisy", "text": "I live in Munich"},  # a link labelled neither
            {"stream": "noisy", "text": "I use Postgres at work"},
            {"stream": "noisy", "text": "I use Postgres at work every day"},  # labelled neither
        ],
    )
    rows = [
        {"stream": s, "a": "I use Postgres at work", "b": "I use Postgres at work every day"}
        for s in ("clean", "noisy")
    ]
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {**rows[0], "label": "duplicate"},
            {**rows[1], "label": "neither"},
            {
                "stream": "noisy",
                "a": "I live in Berlin",
                "b": "I live in Munich",
                "label": "neither",
            },
        ],
    )
    report = run(stream, "--labels", labels, "--by-source")
    noisy, clean = report["by_stream"]  # worst first, though the file names "clean" first
    assert (noisy["stream"], clean["stream"]) == ("noisy", "clean")
    assert (noisy["facts"], noisy["merge_precision"], noisy["false_links"]) == (4, 0.0, 1)
    assert noisy["wrong_per_1k"] == 500.0  # a false link and a wrong merge in 4 writes
    assert (clean["merge_precision"], clean["duplicate_recall"], clean["wrong_per_1k"]) == (
        1.0,
        1.0,
        0.0,
    )
    # The pooled figures are the streams' together.
    assert report["merge_precision"] == 0.5 and report["wrong_per_1k"] == 333.3
    assert "by_stream" not in run(stream, "--labels", labels)
    text = CliRunner().invoke(
        cli, ["--embedder", "none", "eval", "--stream", stream, "--labels", labels, "--by-source"]
    )
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[-2].startswith("  noisy: 4 facts, wrong 500.0 per 1,000")
    assert lines[-1].startswith("  clean: 2 facts, wrong 0.0 per 1,000")


def test_locomo_sessions_are_read_in_their_numeric_order(tmp_path):
    # A conversation of our own in LoCoMo's shape: session 10 comes after session 2.
    conversation = {
        "sample_id": "ours",
        "observation": {
            "session_10_observation": {"Ana": [["Ana moved to Lisbon in May.", "D10:1"]]},
            "session_2_observation": {
                "Ana": [["Ana lives in Porto.", ["D2:1", "D2:4"]]],
                "Rui": [["Rui plays the cello.", "D2:2"]],
            },
        },
        "qa": [
            {"question": "Where does Ana live?", "evidence": ["D2:1"], "category": 4},
            {"question": "Unanswerable?", "evidence": [], "category": 5},
        ],
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps([conversation]))
    (stream,) = load_streams(path)
    assert stream.name == "ours"
    assert [t for t, _ in stream.facts] == [
        "Ana lives in Porto.",
        "Rui plays the cello.",
        "Ana moved to Lisbon in May.",
    ]
    assert stream.facts[0][1] == {"D2:1", "D2:4"}
    assert stream.questions == (("Where does Ana live?", frozenset({"D2:1"}), 4),)


@pytest.mark.parametrize(
    "content,message",
    [
        ("[1, 2]", "no 'observation'"),
        ('[{"observation": {"s1": {"A": [[3]]}}}]', r"not \[fact, id\]"),
        ("[not json", "not JSON"),
        ('{"stream": "a"}\n', "needs a non-empty string field 'text'"),
        ("\n", "no facts"),
    ],
)
def test_malformed_streams_are_refused_with_a_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InvalidInput, match=message):
        load_streams(path)


def test_the_command_answers_bad_input_in_one_line(tmp_path):
    stream = write_jsonl(tmp_path / "s.jsonl", [{"text": "I live in Berlin"}])
    for args, message in (
        (["eval", "--labels", stream], "go with --stream"),
        (["eval", "--stream", stream, "--convs", "4"], "asks past the 1"),
        (["eval", "--stream", stream, "--convs", "x"], "not like 0-2"),
        (["eval", "--stream", stream, "--plot", str(tmp_path / "p.png")], "not --stream"),
    ):
        result = CliRunner().invoke(cli, ["--embedder", "none", *args])
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output
    labels = write_jsonl(tmp_path / "l.jsonl", [{"a": "x", "b": "y", "label": "maybe"}])
    with pytest.raises(InvalidInput, match="label must be"):
        load_labels(labels)


def test_the_built_in_stream_flags_only_what_its_labels_call_conflicts():
    report = run()
    assert report["facts"] >= 30 and report["labelled_true_conflicts"] >= 3
    assert report["false_conflict_links_per_1k"] == 0.0 and report["merge_precision"] == 1.0
    assert report["conflict_precision"] == 1.0


@pytest.mark.slow
def test_templated_lockers_never_conflict_with_each_other(tmp_path):
    rng = random.Random(5)
    with Memory(tmp_path / "m.db", embedder="none") as memory:
        # Two lockers may share a code: still two lockers, not one changed.
        codes = [rng.randint(1000, 1100) for _ in range(300)]
        memory.import_rows(
            [{"text": f"Locker {n} code is {code}"} for n, code in enumerate(codes, 1)]
        )
        assert list(memory.conflicts()) == []
        changed = memory.remember(f"Locker 7 code is {codes[6] + 1}")
        assert changed.action == "conflict" and len(changed.conflicts_with) == 1
        assert memory.get(changed.conflicts_with[0]).text == f"Locker 7 code is {codes[6]}"


def test_one_write_is_flagged_against_at_most_a_few_facts(tmp_path):
    with Memory(tmp_path / "m.db", embedder="none") as memory:
        for year in range(2001, 2011):
            memory.remember(f"I was born in {year}")
        result = memory.remember("I was born in 1999")
    assert result.action == "conflict"
    assert len(result.conflicts_with) == memory.settings.max_conflicts == 3


def test_run_stream_is_the_library_door(tmp_path):
    streams = select(
        load_streams(
            write_jsonl(
                tmp_path / "s.jsonl",
                [{"text": "I drink coffee every morning"}, {"text": "I quit drinking coffee"}],
            )
        ),
        "0",
    )
    report, flagged = run_stream(
        streams, {}, lambda s: Memory(tmp_path / f"{s.name}.db", embedder="none")
    )
    assert report["conflict_links"] == 1
    assert flagged[0]["a"] == "I drink coffee every morning" and flagged[0]["label"] is None


needs_locomo = pytest.mark.skipif(
    not LOCOMO.is_dir(),
    reason="the LoCoMo dev conversations are not beside this checkout (../shared/data/dev/locomo)",
)


def dev_stream(embedder):
    return run(
        str(LOCOMO / "locomo_dev.json"),
        "--labels",
        str(LOCOMO / "labels_dev.jsonl"),
        embedder=embedder,
    )


@pytest.mark.slow
@needs_locomo
def test_dev_conversations_lexical_meet_the_stream_targets():
    report = dev_stream("none")
    assert report["facts"] == 954  # conversations 0-3; 3 (conv-44) holds four real conflicts
    assert report["conflict_writes_per_1k"] <= 15
    assert report["false_conflict_links_per_1k"] <= 5
    assert report["conflict_recall"] >= 0.75  # 3 of the 4 raised as sure conflicts
    assert report["merge_precision"] is None or report["merge_precision"] >= 0.95


@needs_locomo
@pytest.mark.slow
def test_dev_conversations_default_config_meet_the_stream_targets():
    report = dev_stream("local")
    assert report["conflict_writes_per_1k"] <= 15
    assert report["false_conflict_links_per_1k"] <= 5
    assert report["conflict_recall"] >= 0.75
    # Issue 53 asks merge precision >= 0.95 with duplicate recall >= 0.40; over conversations
    # 0-3 together today gives 0.952 / 0.455 (per conversation in docs/decisions.md).
    assert report["merge_precision"] >= 0.95
    assert report["duplicate_recall"] >= 0.45


def test_a_file_that_is_not_utf8_is_refused_by_every_eval(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "caf\xe9"}\n')
    good = write_jsonl(tmp_path / "s.jsonl", [{"text": "I live in Berlin"}])
    for args in (
        ["eval", str(bad)],
        ["eval", "--stream", str(bad)],
        ["eval", "--stream", good, "--labels", str(bad)],
        ["eval", "--recall", str(bad)],
    ):
        result = CliRunner().invoke(cli, ["--embedder", "none", *args])
        assert result.exit_code == 2, (args, result.output)
        assert "not UTF-8 text" in result.output and "Traceback" not in result.output
