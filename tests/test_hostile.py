"""Hostile input through every door (Python API, CLI, HTTP, MCP): each input gets a clear error
and changes nothing, or is stored verbatim. The corpus is in tests/hostile.py."""

import json
import subprocess
import sys
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner

from ankita import InvalidInput, Memory, NotFound
from ankita.cli import cli
from ankita.server._guards import create_token
from ankita.server._server import create_app
from ankita.store._sqlite import SQLiteStore
from hostile import (
    BAD_IDS,
    BAD_KINDS,
    BAD_USERS,
    MISSING_ID,
    QUERIES,
    REFUSED_TEXTS,
    STORED_TEXTS,
    snapshot,
)
from live import LiveServer


def newest_phrasing(path, user="default"):
    with Memory(path, user=user, embedder="none") as memory:
        events = memory.store.user_events(user)
    write = [e for e in events if e.type in ("create", "merge")][-1]
    return write.data["text"] if write.type == "create" else write.data["phrasing"]


@pytest.fixture
def seeded(db_path):
    with Memory(db_path, embedder="none") as memory:
        memory.remember("I live in Berlin")
        memory.remember("I live in Munich")
        fact = memory.remember("I use Postgres", kind="tool").fact
    return db_path, fact.id


# -- Python API -------------------------------------------------------------------------------


def test_python_api(seeded):
    path, fid = seeded
    with Memory(path, embedder="none") as memory:
        refusals = [
            *[lambda t=t: memory.remember(t) for t in REFUSED_TEXTS],
            *[lambda k=k: memory.remember("I like tea", kind=k) for k in BAD_KINDS],
            *[lambda i=i: memory.forget(i) for i in BAD_IDS],
            *[lambda i=i: memory.get(i) for i in BAD_IDS],
            lambda: memory.remember(5),
            lambda: memory.remember(None),
            lambda: memory.remember(b"bytes \xff"),
            lambda: memory.remember(["a list"]),
            lambda: memory.remember("I like tea", kind=5),
            lambda: memory.remember("I like tea", pinned="yes"),
            lambda: memory.remember("I like tea", source=5),
            lambda: memory.forget(5),
            lambda: memory.undo("1"),
            lambda: memory.undo(2**64),
            lambda: memory.undo(-1),
            lambda: memory.recall(5),
            lambda: memory.recall("x", 10**9),
            lambda: memory.list(limit=2**70),
            lambda: memory.resolve(fid, fid),
        ]
        for attempt in refusals:
            before = snapshot(path)
            with pytest.raises(InvalidInput):
                attempt()
            assert snapshot(path) == before
        for attempt in [
            lambda: memory.forget(MISSING_ID),
            lambda: memory.pin(MISSING_ID),
            lambda: memory.undo(10**6),
            lambda: memory.resolve(fid, MISSING_ID),
        ]:
            before = snapshot(path)
            with pytest.raises(NotFound):
                attempt()
            assert snapshot(path) == before
        for user in BAD_USERS + [5, None]:
            with pytest.raises(InvalidInput):
                Memory(path, user=user, embedder="none")
        for query in QUERIES + STORED_TEXTS:
            memory.recall(query)  # query syntax is never interpreted, so never an error
        for text in STORED_TEXTS:
            result = memory.remember(text)
            assert newest_phrasing(path) == text.strip(), text
            if result.action == "created":
                assert memory.get(result.fact.id).text == text.strip()
        assert memory.doctor()["ok"]


# -- CLI --------------------------------------------------------------------------------------


def test_cli(seeded):
    path, fid = seeded
    runner = CliRunner()

    def run(*args):
        return runner.invoke(cli, ["--db", str(path), "--embedder", "none", *args])

    refusals = [
        *[("remember", t) for t in REFUSED_TEXTS],
        *[("remember", "I like tea", "--kind", k) for k in BAD_KINDS],
        *[("forget", i) for i in BAD_IDS],
        *[("show", i) for i in BAD_IDS],
        ("remember", "I like tea", "--source", "x" * 300),
        ("undo", "abc"),
        ("undo", str(2**64)),
        ("undo", "-1"),
        ("recall", "x", "--limit", "0"),
        ("list", "--limit", "-5"),
        ("resolve", fid, fid),
        ("forget", MISSING_ID),
        ("pin", MISSING_ID),
        ("undo", "999999"),
    ]
    refusals += [("--user", u, "list") for u in BAD_USERS if "\x00" not in u]
    for args in refusals:
        before = snapshot(path)
        result = run(*args)
        assert result.exit_code in (2, 3), (args, result.output)
        assert result.output.startswith(("error (", "Error", "Usage"))
        assert "Traceback" not in result.output
        assert snapshot(path) == before, args
    for query in QUERIES:
        assert run("recall", "--", query).exit_code == 0, query  # "--": "-x" is not an option
    for text in STORED_TEXTS:
        result = run("remember", text)
        assert result.exit_code == 0, (text, result.output)
        assert newest_phrasing(path) == text.strip()
    # Bytes that are not UTF-8 on the real command line: Python hands them over as lone
    # surrogates, and the text check refuses them.
    before = snapshot(path)
    raw = subprocess.run(
        [
            sys.executable,
            "-m",
            "ankita",
            "--db",
            str(path),
            "--embedder",
            "none",
            "remember",
            b"bad \xff\xfe bytes",
        ],
        capture_output=True,
    )
    assert raw.returncode == 2 and b"not valid Unicode" in raw.stderr + raw.stdout
    assert b"Traceback" not in raw.stderr and snapshot(path) == before


# -- HTTP -------------------------------------------------------------------------------------


def test_http(seeded):
    path, fid = seeded
    store = SQLiteStore(path)
    token = create_token(store, "default")
    for user in BAD_USERS:
        with pytest.raises(InvalidInput):
            create_token(store, user)
    store.close()
    server = LiveServer(create_app(path, embedder="none"))
    try:
        with httpx.Client(
            base_url=server.url, timeout=10, headers={"Authorization": f"Bearer {token}"}
        ) as api:
            refusals = [
                *[("POST", "/v1/facts", {"text": t}) for t in REFUSED_TEXTS],
                *[("POST", "/v1/facts", {"text": "I like tea", "kind": k}) for k in BAD_KINDS],
                ("POST", "/v1/facts", {"text": 5}),
                ("POST", "/v1/facts", {"text": None}),
                ("POST", "/v1/facts", {"text": ["a"]}),
                ("POST", "/v1/facts", {"text": "tea", "pinned": "yes please"}),
                ("POST", "/v1/facts", {"text": "tea", "source": 5}),
                ("POST", "/v1/facts", {"text": "tea", "user": "someone-else"}),
                ("POST", "/v1/facts", {"text": "x" * 70000}),
                ("POST", "/v1/recall", {"query": 5}),
                ("POST", "/v1/recall", {}),
                ("POST", "/v1/recall", {"query": "x", "limit": 10**9}),
                ("POST", f"/v1/undo/{2**64}", None),
                ("POST", "/v1/undo/abc", None),
                ("POST", "/v1/undo/-1", None),
                ("POST", "/v1/undo/999999", None),
                ("GET", f"/v1/facts?limit={2**70}", None),
                ("POST", f"/v1/conflicts/{fid}/{fid}/resolve", {"keep": fid}),
                ("DELETE", f"/v1/facts/{MISSING_ID}", None),
            ]
            refusals += [
                (m, f"/v1/facts/{quote(i, safe='')}", None)
                for i in BAD_IDS
                for m in ("GET", "DELETE")
            ]
            for method, url, body in refusals:
                before = snapshot(path)
                # json.dumps escapes lone surrogates (\ud800), as a hostile client would send.
                response = api.request(
                    method,
                    url,
                    content=None if body is None else json.dumps(body),
                    headers={"content-type": "application/json"},
                )
                assert 400 <= response.status_code < 500, (method, url, response.text)
                assert response.json()["error"]["code"], (method, url)
                assert snapshot(path) == before, (method, url)
            for raw in [
                b'{"text": "bad \xff\xfe bytes"}',
                b"not json",
                b'{"text": ',
                b"\xef\xbb\xbf{}",
                b"[]",
                b'"just a string"',
            ]:
                before = snapshot(path)
                response = api.post(
                    "/v1/facts", content=raw, headers={"content-type": "application/json"}
                )
                assert response.status_code in (400, 422), (raw, response.text)
                assert snapshot(path) == before
            for query in QUERIES:
                assert api.post("/v1/recall", json={"query": query}).status_code == 200
            for text in STORED_TEXTS:
                response = api.post("/v1/facts", json={"text": text})
                assert response.status_code == 200, (text, response.text)
                assert newest_phrasing(path) == text.strip()
    finally:
        server.stop()


# -- MCP --------------------------------------------------------------------------------------


class RawMCP:
    """`ankita mcp` driven line by line, so bytes no SDK client would send can be sent."""

    def __init__(self, path, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ankita", "--db", str(path), "--embedder", "none", *args, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0
        reply = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        assert "result" in reply, reply
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params, raw: bytes | None = None):
        self.next_id += 1
        self.send(
            raw
            if raw is not None
            else json.dumps(
                {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
            ).encode()
        )
        reply = json.loads(self.proc.stdout.readline())
        assert reply["id"] == self.next_id
        return reply

    def call(self, name, arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        return result["isError"], result["content"][0]["text"]

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(20) == 0
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.mark.slow
def test_mcp(seeded):
    path, fid = seeded
    mcp = RawMCP(path)
    try:
        refusals = [
            *[("remember", {"text": t}) for t in REFUSED_TEXTS],
            *[("remember", {"text": "I like tea", "kind": k}) for k in BAD_KINDS],
            *[("forget", {"id": i}) for i in BAD_IDS],
            ("remember", {"text": 5}),
            ("remember", {"text": None}),
            ("remember", {"text": ["a"]}),
            ("remember", {}),
            ("remember", {"text": "tea", "pinned": "yes"}),
            ("recall", {"query": 5}),
            ("recall", {"query": "x", "limit": 10**30}),
            ("forget", {"id": MISSING_ID}),
            ("forget", {"id": 5}),
            ("resolve_conflict", {"keep": fid, "over": fid}),
            ("no_such_tool", {"text": "x"}),
        ]
        for name, arguments in refusals:
            before = snapshot(path)
            is_error, text = mcp.call(name, arguments)
            assert is_error and text.startswith("error ("), (name, arguments, text)
            assert snapshot(path) == before, (name, arguments)
        # Bytes that are not UTF-8 inside the JSON-RPC line itself.
        before = snapshot(path)
        line = (
            b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": '
            b'"remember", "arguments": {"text": "bad \xff\xfe bytes"}}}' % (mcp.next_id + 1)
        )
        result = mcp.request("tools/call", None, raw=line)["result"]
        assert result["isError"] and "not valid Unicode" in result["content"][0]["text"]
        assert snapshot(path) == before
        for query in QUERIES:
            assert not mcp.call("recall", {"query": query})[0], query
        for text in STORED_TEXTS:
            is_error, reply = mcp.call("remember", {"text": text})
            assert not is_error, (text, reply)
            assert newest_phrasing(path) == text.strip()
    finally:
        mcp.close()
    for user in BAD_USERS:
        if "\x00" in user:
            continue  # a NUL cannot be passed on a command line at all
        before = snapshot(path)
        refused = subprocess.run(
            [sys.executable, "-m", "ankita", "--db", str(path), "--user", user, "mcp"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 2 and "user must be" in refused.stderr
        assert snapshot(path) == before
