"""What a send to a platform can come to, and what the adapters share to get there: the
result types, reading an HTTP answer as one, one line for the operator, and cutting a long reply
into parts a platform accepts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Sent:
    platform_id: str


@dataclass(frozen=True)
class RetryAfter:
    seconds: float


@dataclass(frozen=True)
class Transient:
    error: str
    # The request may have reached the platform (it timed out, or the process failed while it
    # was out): the next attempt must not assume it was not delivered.
    maybe_sent: bool = False


@dataclass(frozen=True)
class Permanent:
    error: str


SendResult = Sent | RetryAfter | Transient | Permanent


def describe(result: SendResult) -> str:
    """One line for the operator about a send that did not go through (yet)."""
    if isinstance(result, RetryAfter):
        return f"rate limited, retry after {result.seconds:g} s"
    if isinstance(result, Transient):
        return f"will retry: {result.error}"
    if isinstance(result, Permanent):
        return f"gave up: {result.error}"
    return f"sent as {result.platform_id}"


@dataclass(frozen=True)
class Attempt:
    """How to send one outbox message once: `key` is the same on every attempt of that message
    (a platform that dedupes by key, such as Discord's nonce, drops a second copy), and
    `maybe_sent` says an earlier attempt may have reached the platform (a crash or a timeout
    while it was out), so an adapter that can look checks before sending again."""

    key: str
    maybe_sent: bool = False


# Leads a message sent again where the platform cannot tell whether the first attempt arrived.
RESENT_NOTE = "(Sent again after an interruption; it may repeat a message above.)"

# (channel, chat_id, text, attempt) -> result
Sender = Callable[[str, str, str, Attempt], SendResult]


def classify_http(
    status: int, description: str = "", retry_after: float | None = None
) -> SendResult:
    """A platform's HTTP answer as a send result (the adapters share this)."""
    text = description.lower()
    if status == 429:
        return RetryAfter(retry_after if retry_after is not None else 30.0)
    if status >= 500:
        return Transient(f"HTTP {status}: {description}")
    if 400 <= status < 500 or "chat not found" in text or "forbidden" in text:
        return Permanent(f"HTTP {status}: {description}")
    return Transient(f"HTTP {status}: {description}")


def split_message(text: str, limit: int) -> list[str]:
    """Parts of at most `limit` characters, cut at a paragraph, a line, a sentence or a word
    when one is in the second half of the part, else mid-word: nothing is dropped but the
    whitespace at the cuts."""
    parts = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = -1
        for mark in ("\n\n", "\n", ". ", "! ", "? ", " "):
            at = window.rfind(mark)
            if at >= limit // 2:
                cut = at + len(mark.rstrip())
                break
        if cut <= 0:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        parts.append(rest)
    return parts
