"""Reading JSON Lines input (eval pairs, imports): every bad line named, nothing half-read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ._errors import InvalidInput


def read_jsonl(lines: Iterable[str], where: str,
               check: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """Parse every line and run `check` on it before returning anything, so a caller can
    refuse a whole file for one bad line before it writes."""
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{where}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise InvalidInput(f"{where}:{number}: not a JSON object")
        try:
            check(row)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}:{number}: {exc}") from None
        rows.append(row)
    return rows
