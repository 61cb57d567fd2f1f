"""`ankita bench --style real` and `--corpus FILE`: speed measured on facts like a user's."""

import json
import statistics

import pytest
from click.testing import CliRunner

from ankita.analysis._text import content_words
from ankita.cli import cli
from ankita.dev._corpus import FactGenerator, RealStyleGenerator, make_facts


def test_real_style_facts_are_long_third_person_and_repeatable():
    one = [RealStyleGenerator(3, 1000).next() for _ in range(1)]
    gen, again = RealStyleGenerator(3, 1000), RealStyleGenerator(3, 1000)
    facts = [gen.next()[0] for _ in range(400)]
    assert facts == [again.next()[0] for _ in range(400)]
    assert one[0][0] == facts[0]
    short = FactGenerator(3, 1000)
    short_words = statistics.mean(len(content_words(short.next()[0])) for _ in range(400))
    real_words = statistics.mean(len(content_words(t)) for t in facts)
    assert real_words > 1.5 * short_words  # long sentences, like a real stream's
    assert all(t[0].isupper() and t.endswith(".") for t in facts)
    assert len(set(facts)) < len(facts)  # repeats, which must merge, are mixed in
    people = {t.split()[0].split("'")[0] for t in facts}
    assert len(people) <= 12  # a few people, each with many related facts


def test_a_corpus_too_small_is_refused_in_one_line(tmp_path):
    corpus = tmp_path / "mine.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"Fact number {i}."}) + "\n" for i in range(30)))
    result = CliRunner().invoke(
        cli,
        ["--embedder", "none", "bench", "--corpus", str(corpus), "--facts", "20", "--writes", "5"],
    )
    assert result.exit_code == 2
    assert "holds 30 facts; this bench needs 35" in result.output
    assert make_facts("short", 1, 10, str(corpus), 30).next() == ("Fact number 0.", "fact")


@pytest.mark.slow
@pytest.mark.parametrize("style", ["real", "corpus"])
def test_bench_on_real_style_facts_and_on_a_corpus(tmp_path, style):
    args = ["--embedder", "none", "bench", "--facts", "60", "--writes", "10", "--writers", "0"]
    if style == "corpus":
        corpus = tmp_path / "mine.jsonl"
        gen = RealStyleGenerator(9, 100)
        corpus.write_text("".join(json.dumps({"text": gen.next()[0]}) + "\n" for _ in range(90)))
        args += ["--corpus", str(corpus)]
    else:
        args += ["--style", "real"]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert report["facts_from"] == (
        str(tmp_path / "mine.jsonl") if style == "corpus" else "generated, real style"
    )
    (run,) = report["runs"]
    assert run["facts"] == 60 and run["decisions_identical"] is True
    assert run["remember_p50_ms"] > 0 and run["recall_p50_ms"] > 0


def test_the_bench_table_fits_an_80_column_terminal(tmp_path):
    args = ["--embedder", "none", "bench", "--facts", "30,60", "--writes", "5", "--writers", "0"]
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "b.db"), *args], terminal_width=80)
    assert result.exit_code == 0, result.output
    assert "…" not in result.output  # no figure cut short
    assert all(len(line) <= 80 for line in result.output.splitlines())
    assert "remember p50 ms" in result.output and "60 facts" in result.output
