"""`ankita eval`: SPEC §9 output shape, metrics, the shipped pair set, the dev-data target."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankita import InvalidInput
from ankita.cli import cli
from ankita.dev._eval import builtin_pairs_path, load_pairs, score

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "dev"


def run_eval(*args):
    result = CliRunner().invoke(cli, ["--embedder", "none", "eval", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_output_has_the_spec_fields(tmp_path):
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(
        "\n".join(
            json.dumps(p)
            for p in [
                {"a": "I use Postgres", "b": "Database is Postgres", "label": "duplicate"},
                {"a": "I live in Berlin", "b": "I live in Munich", "label": "conflict"},
                {"a": "I like jazz", "b": "I like blues", "label": "neither"},
                {
                    "a": "I'm allergic to nuts",
                    "b": "I'm not allergic to nuts",
                    "label": "conflict",
                    "kind": "health",
                },
            ]
        )
    )
    report = run_eval(str(pairs))
    assert set(report) == {
        "pairs",
        "accuracy",
        "macro_f1",
        "wrong_merge_rate",
        "labels",
        "confusion",
        "embedder",
        "macro_f1_sure_only",
        "possible_conflicts",
    }
    assert report["pairs"] == 4 and report["accuracy"] == 1.0 and report["macro_f1"] == 1.0
    assert report["macro_f1_sure_only"] == 1.0 and report["possible_conflicts"] == 0
    assert report["embedder"] == "none"
    assert report["labels"]["conflict"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "support": 2,
    }
    assert report["confusion"]["neither"] == {"duplicate": 0, "conflict": 0, "neither": 1}


def test_metrics_by_hand():
    report = score(
        ["duplicate", "conflict", "neither", "neither"],
        ["duplicate", "duplicate", "neither", "conflict"],
        "none",
    )
    assert report["accuracy"] == 0.5
    assert report["wrong_merge_rate"] == round(1 / 3, 4)
    assert report["labels"]["duplicate"]["precision"] == 0.5
    assert report["labels"]["conflict"]["f1"] == 0.0
    assert report["macro_f1"] == round((2 / 3 + 0 + 2 / 3) / 3, 4)


def test_macro_f1_only_over_labels_present():
    report = score(["conflict", "neither"], ["conflict", "neither"], "none")
    assert set(report["labels"]) == {"conflict", "neither"} and report["macro_f1"] == 1.0


def test_shipped_pair_set_is_large_and_varied():
    pairs = load_pairs(builtin_pairs_path())
    assert len(pairs) >= 150
    assert len({p["kind"] for p in pairs}) >= 8
    assert {p["category"] for p in pairs} >= {
        "paraphrase",
        "negation",
        "swapped",
        "change",
        "neighbour",
        "value",
        "meaning",
    }


def test_shipped_pair_set_quality_floor():
    # A regression guard, measured: lexical mode scores 0.886 macro-F1 (0.925 sure only) and 0
    # wrong merges on 276 pairs; the 54 after the first 222 (third-person facts, intended
    # changes, two occasions, ends, reported speech, and some only world knowledge tells) took
    # it from 0.923.
    report = run_eval()
    assert report["wrong_merge_rate"] == 0.0
    assert report["macro_f1"] >= 0.88 and report["macro_f1_sure_only"] >= 0.91


def test_plain_rules_are_worse_on_the_shipped_set():
    plain = run_eval("--plain")
    full = run_eval()
    assert plain["macro_f1"] < full["macro_f1"]


@pytest.mark.parametrize(
    "content,message",
    [
        ("not json\n", "not JSON"),
        ('{"a": "x", "b": "y"}\n', "needs string fields"),
        ('{"a": "x", "b": "y", "label": "maybe"}\n', "label must be"),
        ("\n", "no pairs"),
    ],
)
def test_malformed_pair_files_are_refused(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(InvalidInput, match=message):
        load_pairs(path)


@pytest.mark.skipif(not DEV.is_dir(), reason="development data is not beside this checkout")
@pytest.mark.parametrize(
    "name", sorted(p.name for p in DEV.glob("*.jsonl")) if DEV.is_dir() else []
)
@pytest.mark.slow
def test_lexical_mode_merges_at_most_3_percent_of_non_duplicates(name):
    assert run_eval(str(DEV / name))["wrong_merge_rate"] <= 0.03


def test_by_source_scores_each_source(tmp_path):
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(
        "\n".join(
            json.dumps(p)
            for p in [
                {
                    "a": "I use Postgres",
                    "b": "Database is Postgres",
                    "label": "duplicate",
                    "source": "x",
                },
                {
                    "a": "I live in Berlin",
                    "b": "I live in Munich",
                    "label": "conflict",
                    "source": "y",
                },
                {"a": "I like jazz", "b": "I like blues", "label": "duplicate", "source": "y"},
            ]
        )
    )
    report = run_eval(str(pairs), "--by-source")
    assert report["by_source"]["x"] == {
        "pairs": 1,
        "accuracy": 1.0,
        "macro_f1": 1.0,
        "wrong_merge_rate": 0.0,
    }
    assert report["by_source"]["y"]["pairs"] == 2 and report["by_source"]["y"]["accuracy"] == 0.5


@pytest.mark.slow
def test_plot_draws_score_distributions_per_label(tmp_path):
    chart = tmp_path / "scores.png"
    report = run_eval("--plot", str(chart))
    assert report["plot"] == str(chart)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000


def test_plot_refuses_a_bad_target_before_any_work(tmp_path):
    result = CliRunner().invoke(
        cli, ["--embedder", "none", "eval", "--plot", str(tmp_path / "scores.txt")]
    )
    assert result.exit_code == 2 and ".png, .svg or .pdf" in result.output
    missing = CliRunner().invoke(
        cli, ["--embedder", "none", "eval", "--plot", str(tmp_path / "nope" / "scores.png")]
    )
    assert missing.exit_code == 2 and "no folder" in missing.output
