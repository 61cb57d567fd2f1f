"""`ankita mcp`: the memory tools over the Model Context Protocol (stdio), via the official SDK.

The tool list and every call go through `ankita.tools`, so MCP, the OpenAI/Anthropic schemas and
`dispatch` can never drift apart. Errors become tool results with `is_error`, which the model
sees and can correct, never a crash of the server.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from typing import IO, Any, cast

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from ankita import __version__
from ankita._errors import AnkitaError
from ankita._jsonl import too_deep
from ankita._memory import Memory
from ankita._validate import SURROGATE
from ankita.tools import TOOLS, dispatch

INSTRUCTIONS = (
    "Long-term memory about the user. Call recall before answering questions about "
    "the user, remember when they tell you something lasting about themselves, and "
    "when recall says facts conflict, ask the user which is current instead of "
    "asserting either."
)


def build_server(memory: Memory) -> Server[Any]:
    lock = threading.Lock()  # one SQLite connection: calls run one at a time

    def call(name: str, arguments: dict[str, Any]) -> str:
        with lock:
            return dispatch(name, arguments, memory)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in TOOLS
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            # SQLite and the embedder are blocking: keep them off the event loop.
            text = await anyio.to_thread.run_sync(call, params.name, params.arguments or {})
        except AnkitaError as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"error ({exc.code}): {exc}")],
                is_error=True,
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server(
        "ankita",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _mark_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_mark_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_mark_surrogates(k): _mark_surrogates(v) for k, v in value.items()}
    return value


def clean_line(line: str) -> str:
    """A JSON-RPC line whose strings hold lone surrogates (legal as JSON escapes, refused by
    the SDK's parser, which then drops the request unanswered) gets U+FFFD in their place,
    which the tools refuse with a clear error. Every other line passes through unchanged."""
    if "\\u" not in line and not SURROGATE.search(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line
    cleaned = _mark_surrogates(message)
    return line if cleaned == message else json.dumps(cleaned) + "\n"


MAX_DEPTH = 64  # JSON nesting of one message; the deepest MCP message is far shallower


def _error(code: int, message: str, request_id: Any = None) -> str:
    return (
        json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )
        + "\n"
    )


def screen(line: str) -> tuple[str | None, str | None]:
    """One line from the client: (the line for the SDK, None), or (None, a JSON-RPC error to
    answer it with). The SDK drops what it cannot parse without an answer, and the client
    then waits for ever; here every such line gets -32700 (not JSON) or -32600 (not a
    request), with its id when it has a usable one. Blank lines are skipped."""
    if not line.strip():
        return None, None
    line = clean_line(line)
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None, _error(-32700, "Parse error: the line is not one JSON value")
    request_id = message.get("id") if isinstance(message, dict) else None
    if (
        isinstance(request_id, bool)
        or not isinstance(request_id, (str, int))
        or (isinstance(request_id, int) and not -(2**53) < request_id < 2**53)
    ):
        request_id = None
    if isinstance(message, dict) and "id" in message and request_id is None:
        # MCP ids are strings or integers; the SDK reads any other as a notification and
        # never answers it.
        return None, _error(
            -32600, "Invalid Request: the id must be a string or an integer (at most 2^53 in size)"
        )
    if too_deep(message, MAX_DEPTH):
        return None, _error(
            -32600, f"Invalid Request: nested more than {MAX_DEPTH} levels", request_id
        )
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:
        return None, _error(
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 message "
            '(jsonrpc "2.0", a string method, a string or integer id)',
            request_id,
        )
    return line, None


class _Wire:
    """stdin and stdout for the SDK: stdin read as UTF-8 (undecodable bytes become U+FFFD,
    as the SDK does), each line through `screen`, whose answers go straight to stdout under
    the lock the SDK's own writes take, so lines never interleave. anyio's AsyncFile calls
    readline, write and flush."""

    def __init__(self) -> None:
        self._in = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        self._out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
        self._lock = threading.Lock()

    def readline(self, size: int = -1) -> str:
        while True:
            line = self._in.readline(size)
            if not line:
                return line  # end of input
            passed, answer = screen(line)
            if answer is not None:
                self.write(answer)
                self.flush()
            if passed is not None:
                return passed

    def write(self, text: str) -> int:
        with self._lock:
            return self._out.write(text)

    def flush(self) -> None:
        with self._lock:
            self._out.flush()


def run_stdio(memory: Memory) -> None:
    server = build_server(memory)
    wire = _Wire()

    async def main() -> None:
        stdin = anyio.wrap_file(cast("IO[str]", wire))
        stdout = anyio.wrap_file(cast("IO[str]", wire))
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
