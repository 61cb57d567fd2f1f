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


def parse_object(text: str, where: str) -> dict[str, Any]:
    """One JSON object from text (a JSONL line, a model's tool arguments), or a clear error."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{where}: not JSON ({exc.msg})") from None
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
