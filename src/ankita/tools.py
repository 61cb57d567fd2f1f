"""Memory as tools for a model: JSON schemas (OpenAI, Anthropic, MCP) and `dispatch`.

    from ankita import Memory
    from ankita.tools import dispatch, openai_tools

    tools = openai_tools()                       # pass to a chat completion request
    text = dispatch("recall", {"query": "where do I live?"}, Memory())

Every tool answers with a short text meant for the model, and raises `AnkitaError` subclasses for
bad arguments, so an adapter can translate errors in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ankita._errors import InvalidInput
from ankita._jsonl import parse_object
from ankita._memory import Memory

__all__ = ["TOOLS", "Tool", "anthropic_tools", "dispatch", "openai_tools"]

_ID = {"type": "string", "description": "A fact id, as shown in brackets by recall."}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


TOOLS: tuple[Tool, ...] = (
    Tool(
        "remember",
        'Store one short fact about the user, in their words or a plain paraphrase ("I live '
        'in Lyon"). Call it when the user tells you something lasting about themselves. '
        "Near-duplicates are merged automatically; if the fact disagrees with a stored one, "
        "both are kept and flagged, and you should ask the user which is current.",
        _schema(
            {
                "text": {"type": "string", "description": "One fact, 1-2000 characters."},
                "kind": {
                    "type": "string",
                    "description": "A lowercase category such as "
                    "preference, tool, location, relationship, health, work, project, "
                    "habit or identity. Facts only conflict within one kind.",
                    "default": "fact",
                },
                "pinned": {
                    "type": "boolean",
                    "default": False,
                    "description": "True for a deliberate, lasting fact the user "
                    "asked you to keep; pinned facts never go stale.",
                },
            },
            ["text"],
        ),
    ),
    Tool(
        "recall",
        "Look up what you know about the user that is relevant to a topic, before answering "
        "about them. Returns one fact per line with its id. If it says some facts conflict, "
        "do not assert either: ask the user which is current.",
        _schema(
            {
                "query": {"type": "string", "description": "The topic or question."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 8},
            },
            ["query"],
        ),
    ),
    Tool(
        "forget",
        "Remove a fact because the user asked you to forget it. Not for facts that are merely "
        "outdated: use resolve_conflict for those.",
        _schema({"id": _ID}, ["id"]),
    ),
    Tool(
        "list_conflicts",
        "List pairs of stored facts that disagree and are waiting for the user's answer.",
        _schema({}, []),
    ),
    Tool(
        "clear_conflict",
        "The user said both facts of a flagged pair are true: remove the flag, keep both.",
        _schema({"a": _ID, "b": _ID}, ["a", "b"]),
    ),
    Tool(
        "resolve_conflict",
        "The user said which of two flagged facts is current: keep that one, and mark the "
        "other superseded (kept in history, no longer recalled).",
        _schema({"keep": _ID, "over": _ID}, ["keep", "over"]),
    ),
    Tool(
        "pin",
        "Pin a fact the user wants always remembered; pinned facts are always recalled and "
        "never go stale.",
        _schema({"id": _ID}, ["id"]),
    ),
)
_BY_NAME = {t.name: t for t in TOOLS}


def openai_tools() -> list[dict[str, Any]]:
    """Schemas in the OpenAI/LM Studio/llama.cpp `tools` format."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in TOOLS
    ]


def anthropic_tools() -> list[dict[str, Any]]:
    """Schemas in the Anthropic Messages API `tools` format."""
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS
    ]


def _remember(m: Memory, a: dict[str, Any]) -> str:
    r = m.remember(
        a["text"], kind=a.get("kind", "fact"), pinned=a.get("pinned", False), source="tool"
    )
    if r.action == "merged":
        return f"Already known; merged into [{r.fact.id}] {r.fact.text}"
    if r.action == "conflict":
        return (
            f"Stored [{r.fact.id}] {r.fact.text}. It conflicts with "
            f"{', '.join(f'[{i}]' for i in r.conflicts_with)}: ask the user which is current."
        )
    return f"Stored [{r.fact.id}] {r.fact.text}"


def _recall(m: Memory, a: dict[str, Any]) -> str:
    text = m.recall(a["query"], limit=a.get("limit", 8)).to_prompt()
    return text or "Nothing relevant is stored."


LISTED_CONFLICTS = 20  # a model's context holds the newest few, not thousands


def _list_conflicts(m: Memory, a: dict[str, Any]) -> str:
    pairs = m.conflicts(limit=LISTED_CONFLICTS)
    if not pairs:
        return "No conflicts."
    lines = [f"[{c.a.id}] {c.a.text}  <->  [{c.b.id}] {c.b.text}" for c in pairs]
    more = m.conflict_count() - len(pairs)
    if more > 0:
        lines.append(f"... and {more} older pairs; settle these first.")
    return "\n".join(lines)


def _clear(m: Memory, a: dict[str, Any]) -> str:
    m.clear_conflict(a["a"], a["b"])
    return f"Cleared the conflict between [{a['a']}] and [{a['b']}]; both are kept."


def _resolve(m: Memory, a: dict[str, Any]) -> str:
    kept = m.resolve(keep=a["keep"], over=a["over"])
    return f"Kept [{kept.id}] {kept.text}; [{a['over']}] is superseded."


_HANDLERS: dict[str, Callable[[Memory, dict[str, Any]], str]] = {
    "remember": _remember,
    "recall": _recall,
    "forget": lambda m, a: f"Forgot [{m.forget(a['id']).id}].",
    "list_conflicts": _list_conflicts,
    "clear_conflict": _clear,
    "resolve_conflict": _resolve,
    "pin": lambda m, a: f"Pinned [{m.pin(a['id']).id}].",
}

_TYPES = {"string": str, "integer": int, "boolean": bool}


def _check(tool: Tool, arguments: dict[str, Any]) -> None:
    """Arguments against the tool's schema: required present, no unknown, right JSON types."""
    properties = tool.parameters["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise InvalidInput(f"{tool.name}: unknown argument(s) {', '.join(unknown)}")
    missing = [name for name in tool.parameters["required"] if name not in arguments]
    if missing:
        raise InvalidInput(f"{tool.name}: missing argument(s) {', '.join(missing)}")
    for name, value in arguments.items():
        expected = _TYPES[properties[name]["type"]]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise InvalidInput(f"{tool.name}: {name} must be a {properties[name]['type']}")


def dispatch(
    name: str, arguments: dict[str, Any] | str | None, memory: Memory | None = None
) -> str:
    """Run one tool call (arguments as a dict or the JSON text a model produced).

    Without `memory`, a `Memory()` with the default store, user and embedder is used."""
    tool = _BY_NAME.get(name)
    if tool is None:
        raise InvalidInput(f"unknown tool {name!r}; tools: {', '.join(_BY_NAME)}")
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        arguments = parse_object(arguments, f"{name} arguments")
    if not isinstance(arguments, dict):
        raise InvalidInput(f"{name}: arguments must be a JSON object")
    _check(tool, arguments)
    if memory is None:
        with Memory() as owned:
            return _HANDLERS[name](owned, arguments)
    return _HANDLERS[name](memory, arguments)
