"""Reply classes, decided in code: a normal reply, a silent one, or an error.

A model asked to stay quiet answers `[SILENT]` or `NO_REPLY`, in any case, with or without
brackets, sometimes half-closed (`[SILENT`) or beside a few words. Such a reply is recorded and
never shown or posted; a token that arrives beside real content is removed, so it never reaches
the user either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The tokens, tolerant of case, brackets (closed or not), underscores, spaces and dashes.
_TOKEN = re.compile(r"[\[(<{]*\s*(?:silent|no[\s_-]*reply)\s*[\])>}]*", re.IGNORECASE)
_ONLY_PUNCTUATION = re.compile(r"^[\s.!…,;:\-–—*_`'\"]*$")


@dataclass(frozen=True)
class Classified:
    kind: str  # "normal" | "silent" | "error"
    text: str  # what may be shown: empty unless normal


def classify(reply: str | None, failed: bool = False) -> Classified:
    if failed or reply is None:
        return Classified("error", "")
    stripped = reply.strip()
    if not stripped:
        return Classified("silent", "")
    # Only the token (and punctuation around it) at the very start or end counts as silence.
    leading = _TOKEN.match(stripped)
    if leading and _ONLY_PUNCTUATION.match(stripped[leading.end() :]):
        return Classified("silent", "")
    cleaned = _strip_tokens(stripped)
    if _ONLY_PUNCTUATION.match(cleaned):
        return Classified("silent", "")
    return Classified("normal", cleaned)


def _strip_tokens(text: str) -> str:
    """Remove a token found at the start or end of a reply that also says something."""
    for _ in range(2):
        head = _TOKEN.match(text)
        if head and head.end() > 0 and _is_token(text[: head.end()]):
            text = text[head.end() :].lstrip(" :-–—\n")
        tail = re.search(_TOKEN.pattern + r"\s*$", text, re.IGNORECASE)
        if tail and _is_token(tail.group(0)):
            text = text[: tail.start()].rstrip()
    return text.strip()


def _is_token(piece: str) -> bool:
    """A bare word "silent" inside a sentence is language; the token is bracketed or upper."""
    core = piece.strip()
    return core[:1] in "[(<{" or core.upper() == core


def strip_head_token(text: str) -> str:
    """The text without a silent token at its very start (for streaming, before the end)."""
    head = _TOKEN.match(text)
    if head and head.end() > 0 and _is_token(text[: head.end()]):
        return text[head.end() :].lstrip(" :-–—\n")
    return text
