"""A fact id may be typed as a unique prefix wherever the CLI takes one (as git takes
commits); an ambiguous prefix is refused with the ids it could be."""

import json

from click.testing import CliRunner

from ankita import Memory
from ankita.cli import cli


def run(path, *args):
    return CliRunner().invoke(cli, ["--db", path, "--embedder", "none", *args])


def test_a_unique_prefix_names_the_fact(tmp_path):
    path = str(tmp_path / "m.db")
    with Memory(path, embedder="none") as memory:
        berlin = memory.remember("I live in Berlin").fact.id
        munich = memory.remember("I live in Munich").fact.id
    shown = run(path, "show", berlin[:6], "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["id"] == berlin
    resolved = run(path, "resolve", munich[:5], berlin[:5])
    assert resolved.exit_code == 0, resolved.output
    assert f"kept {munich}" in resolved.output
    history = run(path, "history", berlin[:4], "--json")
    assert history.exit_code == 0 and json.loads(history.output)[0]["fact_id"] == berlin


def test_an_ambiguous_prefix_is_refused_and_names_the_candidates(tmp_path):
    path = str(tmp_path / "m.db")
    with Memory(path, embedder="none") as memory:
        ids = [
            memory.remember(f"I own {n} bikes and {n} cars numbered {n}").fact.id for n in range(40)
        ]
    first = {}
    for fact_id in ids:
        first.setdefault(fact_id[0], []).append(fact_id)
    shared = next(v for v in first.values() if len(v) > 1)  # 40 ids over 16 hex digits
    out = run(path, "show", shared[0][0])
    assert out.exit_code == 2, out.output
    assert "start of several fact ids" in out.output
    missing = run(path, "show", "zzzz")
    assert missing.exit_code != 0 and "zzzz" in missing.output
