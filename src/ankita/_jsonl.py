"""Reading JSON input (eval pairs, imports, tool arguments): every bad line named, nothing
half-read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput


def read_text(path: str | Path) -> str:
    """A whole input file as text, or a clear error: a file that is not UTF-8 is refused
    before anything is read from it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be read ({exc.strerror})") from None


MAX_DEPTH = 64  # nesting of one JSON value from outside; nothing Ankita reads is deeper than 8


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed value nests past `limit`; measured without recursion."""
    level = [(value, 1)]
    while level:
        item, depth = level.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            level.extend((child, depth + 1) for child in children)
    return False


def parse_json(text: str, where: str) -> Any:
    """One JSON value from outside (a file, a line, a model's arguments), or a clear error: a
    value nested past MAX_DEPTH is refused, so no reader of it recurses without bound."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{where}: not JSON ({exc.msg})") from None
    except (RecursionError, ValueError):
        raise InvalidInput(f"{where}: not JSON (nested too deeply)") from None
    if too_deep(value):
        raise InvalidInput(f"{where}: JSON nested deeper than {MAX_DEPTH} levels")
    return value


def parse_object(text: str, where: str) -> dict[str, Any]:
    """One JSON object from text (a JSONL line, a model's tool arguments), or a clear error."""
    value = parse_json(text, where)
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: not a JSON object")
    return value


def read_jsonl(
    lines: Iterable[str], where: str, check: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    """Parse every line and run `check` on it before returning anything, so a caller can
    refuse a whole file for one bad line before it writes."""
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = parse_object(line, f"{where}:{number}")
        try:
            check(row)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}:{number}: {exc}") from None
        rows.append(row)
    return rows
