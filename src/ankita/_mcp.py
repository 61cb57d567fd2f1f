"""`ankita mcp`: the memory tools over the Model Context Protocol (stdio), via the official SDK.

The tool list and every call go through `ankita.tools`, so MCP, the OpenAI/Anthropic schemas and
`dispatch` can never drift apart. Errors become tool results with `is_error`, which the model
sees and can correct, never a crash of the server.
"""

from __future__ import annotations

import io
import json
import re
import sys
import threading
from typing import IO, Any, cast

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from . import __version__
from ._errors import AnkitaError
from ._memory import Memory
from .tools import TOOLS, dispatch

INSTRUCTIONS = ("Long-term memory about the user. Call recall before answering questions about "
                "the user, remember when they tell you something lasting about themselves, and "
                "when recall says facts conflict, ask the user which is current instead of "
                "asserting either.")


def build_server(memory: Memory) -> Server[Any]:
    lock = threading.Lock()  # one SQLite connection: calls run one at a time

    def call(name: str, arguments: dict[str, Any]) -> str:
        with lock:
            return dispatch(name, arguments, memory)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
            for t in TOOLS])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            # SQLite and the embedder are blocking: keep them off the event loop.
            text = await anyio.to_thread.run_sync(call, params.name, params.arguments or {})
        except AnkitaError as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"error ({exc.code}): {exc}")],
                is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("ankita", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _mark_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_mark_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_mark_surrogates(k): _mark_surrogates(v) for k, v in value.items()}
    return value


def clean_line(line: str) -> str:
    """A JSON-RPC line whose strings hold lone surrogates (legal as JSON escapes, refused by
    the SDK's parser, which then drops the request unanswered) gets U+FFFD in their place,
    which the tools refuse with a clear error. Every other line passes through unchanged."""
    if "\\u" not in line and not _SURROGATE.search(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line
    cleaned = _mark_surrogates(message)
    return line if cleaned == message else json.dumps(cleaned) + "\n"


class _CleanStdin:
    """stdin as UTF-8 text (undecodable bytes become U+FFFD, as the SDK does), line by line
    through `clean_line`; anyio's AsyncFile iterates by calling readline."""

    def __init__(self) -> None:
        self._lines = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")

    def readline(self, size: int = -1) -> str:
        return clean_line(self._lines.readline(size))


def run_stdio(memory: Memory) -> None:
    server = build_server(memory)

    async def main() -> None:
        stdin = anyio.wrap_file(cast("IO[str]", _CleanStdin()))
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
