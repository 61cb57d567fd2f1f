"""`ankita eval --recall`: facts written through `remember`, questions asked through `recall`,
hit@k and full@k against the evidence ids; LoCoMo's format; the dev conversations' figures."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankita import InvalidInput, Memory
from ankita.cli import cli
from ankita.dev._recall_eval import load_recall_set, run_recall

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "dev" / "locomo"

ONE = {
    "name": "ours",
    "facts": [
        {"text": "Ana plays the cello in an orchestra", "id": "a"},
        {"text": "Ana lives in Porto with her dog", "id": "b"},
        {"text": "Rui works as a baker in Lisbon", "id": "c"},
        {"text": "Rui works as a baker in Lisbon every morning", "id": "d"},  # merges into c
        "Rui has two cats",  # its id is "4"
    ],
    "questions": [
        {"question": "What instrument does Ana play?", "evidence": ["a"], "category": 4},
        {
            "question": "Where does Ana live and where does Rui work?",
            "evidence": ["b", "d"],
            "category": 1,
        },
        {"question": "How many cats does Rui have?", "evidence": ["4"]},
    ],
}


def run(path, *args, embedder="none"):
    result = CliRunner().invoke(
        cli, ["--embedder", embedder, "eval", "--recall", str(path), *args, "--json"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_hits_and_full_coverage_are_scored_per_category(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(ONE) + "\n")
    report = run(path, "--k", "1,3")
    assert report["facts"] == 5 and report["questions"] == 3
    # Each question's best fact holds its evidence; the merged fact answers for "c" and "d".
    assert report["hit@1"] == 1.0 and report["hit@3"] == 1.0
    # The two-part question needs two facts: not within the first, within three.
    assert report["full@1:multi-hop"] == 0.0 and report["full@3:multi-hop"] == 1.0
    assert report["full@1"] == round(2 / 3, 4)
    assert report["recall_p50_ms"] > 0 and report["embedder"] == "none"


def test_a_question_whose_evidence_was_never_written_misses(tmp_path):
    row = dict(ONE, questions=[{"question": "What does Ana eat?", "evidence": ["zz"]}])
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert run(path)["hit@10"] == 0.0


def test_by_source_scores_each_conversation_apart_worst_first(tmp_path):
    missed = dict(
        ONE,
        name="missed",
        questions=[
            {"question": "What does Ana eat?", "evidence": ["zz"]},  # never written
            {"question": "What instrument does Ana play?", "evidence": ["a"]},
        ],
    )
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(ONE) + "\n" + json.dumps(missed) + "\n")
    report = run(path, "--k", "1,3", "--by-source")
    worst, best = report["by_stream"]  # the file names "ours" first
    assert (worst["stream"], worst["questions"], worst["hit@1"]) == ("missed", 2, 0.5)
    assert (best["stream"], best["questions"], best["hit@1"]) == ("ours", 3, 1.0)
    assert report["questions"] == 5 and report["hit@1"] == 0.8  # the two together
    assert "by_stream" not in run(path, "--k", "1,3")
    text = CliRunner().invoke(
        cli, ["--embedder", "none", "eval", "--recall", str(path), "--k", "1", "--by-source"]
    )
    assert text.exit_code == 0, text.output
    assert text.output.index("missed") < text.output.index("ours")


@pytest.mark.parametrize(
    "row,message",
    [
        ({"facts": [], "questions": "x"}, "needs lists"),
        ({"facts": [3], "questions": []}, "not a string"),
        ({"facts": ["x"], "questions": [{"question": "q", "evidence": []}]}, "non-empty list"),
        (
            {"facts": ["x"], "questions": [{"question": "q", "evidence": ["0"], "category": 5}]},
            "category must be 1 to 4",
        ),
        ({"facts": ["x"], "questions": []}, "no questions"),
    ],
)
def test_malformed_sets_are_refused(tmp_path, row, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InvalidInput, match=message):
        load_recall_set(path)


def test_the_command_refuses_options_of_other_modes(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(ONE) + "\n")
    for extra, message in (
        (["--stream"], "--recall takes FILE"),
        (["--k", "0"], "cut-offs from 1 to 200"),
        (["--k", "a"], "whole numbers"),
    ):
        result = CliRunner().invoke(
            cli, ["--embedder", "none", "eval", "--recall", str(path), *extra]
        )
        assert result.exit_code == 2 and message in result.output, result.output


def test_conflict_partners_do_not_count_as_recalled(tmp_path):
    # The partner comes along for the notice, not because it answers the question.
    path = tmp_path / "set.jsonl"
    path.write_text(
        json.dumps(
            {
                "facts": [
                    {"text": "I live in Berlin", "id": "old"},
                    {"text": "I moved to Munich", "id": "new"},
                    {"text": "I like jazz", "id": "x"},
                ],
                "questions": [{"question": "Do I like jazz?", "evidence": ["old"]}],
            }
        )
        + "\n"
    )
    (stream,) = load_recall_set(path)
    report = run_recall([stream], lambda s: Memory(tmp_path / "m.db", embedder="none"), (1,))
    assert report["hit@1"] == 0.0


@pytest.mark.skipif(
    not LOCOMO.is_dir(),
    reason="the LoCoMo dev conversations are not beside this checkout (../shared/data/dev/locomo)",
)
@pytest.mark.parametrize(
    "embedder,floor",
    [
        ("none", 0.60),
        pytest.param("local", 0.67, marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_dev_conversations_recall(embedder, floor):
    # Issue 34 asks hit@5 >= 0.66 lexical and >= 0.75 by default; today's figures (0.62 and
    # 0.69, docs/decisions.md) are guarded here so that neither slips back.
    # Conversations 0-2, on which these floors were set (conversation 3 came later).
    report = run(LOCOMO / "locomo_dev.json", "--convs", "0-2", embedder=embedder)
    assert report["questions"] == 383
    assert report["hit@5"] >= floor
