"""Checks on what callers hand in: texts, kinds, users, ids and import rows. No I/O."""

from __future__ import annotations

import re
from typing import Any

from ankita._errors import InvalidInput

MAX_TEXT = 2000
# Matched with fullmatch: "$" also matches before a final newline, so "alice\n" passed.
_KIND = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# What a terminal acts on: C0 and C1 controls but tab and newline.
TERMINAL_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SURROGATE = re.compile("[\ud800-\udfff]")


def validate_text(text: object) -> str:
    """Trimmed text of 1..2000 characters, encodable as UTF-8, without control characters."""
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a string, not {type(text).__name__}")
    text = text.strip()
    if not text:
        raise InvalidInput("text is empty")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"text is {len(text)} characters; the limit is {MAX_TEXT}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            "text holds characters that are not valid Unicode (lone surrogates)"
        ) from None
    if "\ufffd" in text:
        # U+FFFD is what a decoder leaves where input was not valid: storing it keeps damage.
        raise InvalidInput(
            "text holds U+FFFD, which stands in for bytes or characters that "
            "were not valid Unicode; send the text as valid UTF-8"
        )
    if CONTROL.search(text):
        raise InvalidInput("text holds control characters")
    return text


def validate_string(value: object, what: str, limit: int = MAX_TEXT) -> str:
    """Any other string a caller hands in (a source, a query, a search): at most `limit`
    characters, valid Unicode (no lone surrogates) and no control characters such as NUL,
    which a database refuses or stores as damage."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, not {type(value).__name__}")
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value)} characters; the limit is {limit}")
    if SURROGATE.search(value):
        raise InvalidInput(f"{what} holds characters that are not valid Unicode (lone surrogates)")
    if CONTROL.search(value):
        raise InvalidInput(f"{what} holds control characters")
    return value


def validate_kind(kind: object) -> str:
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise InvalidInput(f"kind must be a lowercase slug (a-z, 0-9, '-', '_'), got {kind!r}")
    return kind


def validate_user(user: object) -> str:
    if not isinstance(user, str) or not _USER.fullmatch(user):
        raise InvalidInput(f"user must be 1-64 letters, digits, '-' or '_', got {user!r}")
    return user


def validate_id(fact_id: object) -> str:
    if not isinstance(fact_id, str) or not _ID.fullmatch(fact_id):
        raise InvalidInput(f"not a fact id: {fact_id!r}")
    return fact_id


def check_import_row(row: dict[str, Any]) -> None:
    """One import line: a text, and optionally a kind, pinned flag and source."""
    if not isinstance(row.get("text"), str):
        raise InvalidInput("needs a string field 'text'")
    validate_text(row["text"])
    validate_kind(row.get("kind") or "fact")
    if not isinstance(row.get("pinned", False), bool):
        raise InvalidInput("pinned must be true or false")
    if row.get("source") is not None and not isinstance(row["source"], str):
        raise InvalidInput("source must be a string")


MAX_INT = 2**63 - 1  # SQLite's largest integer


def validate_count(value: object, what: str) -> int:
    """A positive whole number SQLite can hold (a limit or an event id)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INT:
        raise InvalidInput(f"{what} must be a positive whole number, not {value!r}")
    return value


def check_write(text: object, kind: object, pinned: object, source: object) -> tuple[str, str]:
    """A write's text and kind, validated, with its pinned flag and source checked."""
    text, kind = validate_text(text), validate_kind(kind)
    if not isinstance(pinned, bool):
        raise InvalidInput("pinned must be true or false")
    if source is not None:
        validate_string(source, "source", 200)
    return text, kind
