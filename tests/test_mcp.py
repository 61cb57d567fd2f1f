"""`ankita mcp`: the official MCP SDK's client talks to it over stdio."""

import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def call(db, steps):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ankita", "--db", str(db), "--embedder", "none", "--user", "alice", "mcp"],
    )

    async def session():
        results = []
        async with Client(params) as client:
            tools = await client.list_tools()
            results.append(sorted(t.name for t in tools.tools))
            for name, arguments in steps:
                result = await client.call_tool(name, arguments)
                results.append((result.is_error, result.content[0].text))
        return results

    return anyio.run(session)


def test_tools_merge_flag_and_recall_with_the_notice(db):
    tools, first, again, conflict, recalled, listed = call(
        db,
        [
            ("remember", {"text": "I use Postgres", "kind": "tool"}),
            ("remember", {"text": "Database is Postgres", "kind": "tool"}),
            ("remember", {"text": "I switched from Postgres to SQLite", "kind": "tool"}),
            ("recall", {"query": "Postgres"}),
            ("list_conflicts", {}),
        ],
    )
    assert tools == [
        "clear_conflict",
        "forget",
        "list_conflicts",
        "pin",
        "recall",
        "remember",
        "resolve_conflict",
    ]
    assert first[1].startswith("Stored [")
    assert again[1].startswith("Already known; merged into")
    assert "ask the user which is current" in conflict[1]
    assert recalled[1].splitlines()[-1] == (
        "Some facts conflict with each other. Ask the user "
        "which is current instead of asserting either."
    )
    assert "<->" in listed[1]
    from ankita import Memory

    with Memory(db, user="alice", embedder="none") as m:
        assert len(m.list()) == 2 and m.list()[0].mentions == 2


def test_bad_calls_are_tool_errors_not_crashes(db):
    _, empty, unknown, missing, after = call(
        db,
        [
            ("remember", {"text": ""}),
            ("forget", {"id": "doesnotexist"}),
            ("resolve_conflict", {"keep": "a"}),
            ("remember", {"text": "I live in Lyon"}),
        ],
    )
    assert empty[0] and "invalid_input" in empty[1]
    assert unknown[0] and "not_found" in unknown[1]
    assert missing[0] and "missing argument" in missing[1]
    assert not after[0]
