"""`ankita.tools`: schemas for function-calling agents and `dispatch`."""

import json
import random
import string

import pytest
from click.testing import CliRunner

from ankita import InvalidInput, NotFound
from ankita.cli import cli
from ankita.tools import TOOLS, anthropic_tools, dispatch, openai_tools


def test_openai_and_anthropic_formats():
    openai = openai_tools()
    anthropic = anthropic_tools()
    assert [t["function"]["name"] for t in openai] == [t["name"] for t in anthropic]
    for tool in openai:
        assert tool["type"] == "function"
        assert tool["function"]["parameters"]["type"] == "object"
        assert len(tool["function"]["description"]) > 40
    assert all("input_schema" in t for t in anthropic)


def test_cli_prints_the_schemas():
    out = CliRunner().invoke(cli, ["tools", "--format", "anthropic"])
    assert out.exit_code == 0
    assert [t["name"] for t in json.loads(out.output)] == [t.name for t in TOOLS]


def test_dispatch_runs_against_a_memory(memory):
    assert dispatch("remember", {"text": "I live in Berlin"}, memory).startswith("Stored")
    text = dispatch("remember", '{"text": "I live in Munich"}', memory)  # JSON text works too
    assert "conflicts with" in text
    assert "Ask the user" in dispatch("recall", {"query": "I live in Berlin"}, memory)
    a, b = (f.id for f in memory.list())
    assert "Kept" in dispatch("resolve_conflict", {"keep": b, "over": a}, memory)
    assert dispatch("list_conflicts", {}, memory) == "No conflicts."
    assert dispatch("pin", {"id": b}, memory) == f"Pinned [{b}]."
    assert dispatch("forget", {"id": b}, memory) == f"Forgot [{b}]."


@pytest.mark.parametrize(
    "name,arguments,error",
    [
        ("nope", {}, InvalidInput),
        ("remember", {}, InvalidInput),
        ("remember", {"text": "x", "extra": 1}, InvalidInput),
        ("remember", {"text": 5}, InvalidInput),
        ("recall", {"query": "x", "limit": True}, InvalidInput),
        ("remember", "{not json", InvalidInput),
        ("remember", "[1]", InvalidInput),
        ("forget", {"id": "missing"}, NotFound),
    ],
)
def test_dispatch_refuses_bad_calls_and_writes_nothing(memory, name, arguments, error):
    with pytest.raises(error):
        dispatch(name, arguments, memory)
    assert memory.list() == []


def test_list_conflicts_gives_the_model_the_newest_twenty(memory, clock):
    rng = random.Random(5)
    for _ in range(25):
        name = "".join(rng.choice(string.ascii_lowercase) for _ in range(8)).capitalize()
        memory.remember(f"{name} meets us on Friday")
        memory.remember(f"{name} does not meet us on Friday")
        clock.advance(minutes=1)
    assert memory.conflict_count() == 25
    lines = dispatch("list_conflicts", {}, memory).splitlines()
    assert len(lines) == 21 and lines[-1] == "... and 5 older pairs; settle these first."
    assert name in lines[0]  # the newest first
