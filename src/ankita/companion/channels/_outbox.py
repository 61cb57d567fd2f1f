"""The durable outbox every channel sends through. A message is written before it is sent,
claimed while sending, and marked sent with the platform's message id. It is retried on transient
errors (5 s, 25 s, 2 min; at most 5 attempts) and on 429 after the platform's `retry_after`.
Permanent errors (4xx, chat not found, forbidden) are parked as failed. It is paced per channel,
expires when too old, and is drained by a timer. A message the platform acknowledged is never
sent again. A claim lasts `SEND_LEASE` (longer than any send's timeout): a claim older than that
was left by a crash and is sent again, so two processes draining one outbox never send one
message twice. Every attempt of one message carries the same key, and an attempt after a crash or
a timeout is marked `maybe_sent`, so an adapter can keep the platform from showing it twice
(docs/channels.md, "Sent once")."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from ankita._errors import InvalidInput
from ankita.companion._localdb import immediate
from ankita.companion.channels._sending import (
    Attempt,
    Permanent,
    RetryAfter,
    Sender,
    Sent,
    Transient,
    split_message,
)

RETRY_S = (5, 25, 120)
MAX_ATTEMPTS = 5
TTL = timedelta(hours=1)
MIN_INTERVAL_S = {"telegram": 1.0, "discord": 0.5, "slack": 1.0}  # per channel, between sends
SEND_LEASE = timedelta(minutes=2)
# Longest message each platform accepts (characters); longer replies go out in parts.
MAX_LENGTH = {"telegram": 4096, "discord": 2000, "slack": 4000}


def iso_ms(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


class Outbox:
    """Messages to send, per channel and chat, in order (the outbox table of a channel store)."""

    db: Any
    clock: Callable[[], datetime]

    def channel(self, name: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def enqueue(self, channel: str, chat_id: str, text: str, dedupe: str | None = None) -> int:
        """Queue a message (in parts if the platform needs it); with `dedupe`, a second message
        with the same key is the first. Returns the id of the first part."""
        with immediate(self.db):
            return self._insert(channel, chat_id, text, dedupe)

    def _insert(self, channel: str, chat_id: str, text: str, dedupe: str | None) -> int:
        if not text.strip():
            raise InvalidInput("an empty message is not sent")
        if not chat_id:
            raise InvalidInput("a message needs a chat id")
        config = self.channel(channel)
        limit = MAX_LENGTH.get(config["platform"], 2000) if config else 2000
        parts = split_message(text, limit)
        ids = [
            self._insert_part(
                channel, chat_id, part, dedupe if dedupe is None or i == 0 else f"{dedupe}:{i}"
            )
            for i, part in enumerate(parts)
        ]
        return ids[0]

    def _insert_part(self, channel: str, chat_id: str, text: str, dedupe: str | None) -> int:
        now = iso_ms(self.clock())
        # Random, so two outboxes (two data folders, one bot) never share a key; short enough
        # for Discord's nonce (25 characters).
        key = "ak-" + secrets.token_hex(8)
        row = self.db.execute(
            "INSERT INTO outbox (channel, chat_id, text, created_at, next_attempt_at, status, "
            "dedupe, send_key) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?) "
            "ON CONFLICT (dedupe) DO NOTHING RETURNING id",
            (channel, chat_id, text, now, now, dedupe, key),
        ).fetchone()
        if row is None:
            row = self.db.execute("SELECT id FROM outbox WHERE dedupe = ?", (dedupe,)).fetchone()
        return int(row[0])

    def outbox_counts(self) -> dict[str, dict[str, int]]:
        """Per channel, how many messages are in each state (queued, sending, sent, ...)."""
        counts: dict[str, dict[str, int]] = {}
        for channel, status, n in self.db.execute(
            "SELECT channel, status, count(*) FROM outbox GROUP BY channel, status"
        ):
            counts.setdefault(channel, {})[status] = n
        return counts

    def outbox(self) -> list[dict[str, Any]]:
        return [
            {
                "id": r[0],
                "channel": r[1],
                "chat_id": r[2],
                "text": r[3],
                "attempts": r[4],
                "status": r[5],
                "platform_id": r[6],
                "last_error": r[7],
                "maybe_sent": bool(r[8]),
            }
            for r in self.db.execute(
                "SELECT id, channel, chat_id, text, attempts, status, "
                "platform_id, last_error, maybe_sent FROM outbox ORDER BY id"
            )
        ]

    def release_claims(self) -> int:
        """Requeue every claim at once: only for the one process that owns this outbox (the
        relay, under its lock), where any claim is certainly left by a crash."""
        return self.db.execute(
            "UPDATE outbox SET status = 'queued', next_attempt_at = ?, maybe_sent = 1 "
            "WHERE status = 'sending'",
            (iso_ms(self.clock()),),
        ).rowcount

    def drain(self, send: Sender, platform_of: Callable[[str], str] | None = None) -> int:
        """Send what is due, paced per channel; returns how many were sent. Call on a timer."""
        now = self.clock()
        self.db.execute(
            "UPDATE outbox SET status = 'expired' WHERE status = 'queued' AND created_at < ?",
            (iso_ms(now - TTL),),
        )
        # A claim older than the lease was left by a crash: the platform may or may not have
        # it, so it is sent again, marked as such (a 'sent' message never is).
        self.db.execute(
            "UPDATE outbox SET status = 'queued', maybe_sent = 1 "
            "WHERE status = 'sending' AND next_attempt_at <= ?",
            (iso_ms(now),),
        )
        last_sent: dict[str, datetime] = {}
        sent = 0
        # Each chat gets its messages in order: a message waits while an earlier one to the same
        # chat is still pending (retrying, paced or in flight), so parts and replies never swap.
        waiting = self.db.execute(
            "SELECT id, channel, chat_id, text, attempts, status, next_attempt_at, send_key, "
            "maybe_sent FROM outbox WHERE status IN ('queued', 'sending') ORDER BY id"
        ).fetchall()
        held: set[tuple[str, str]] = set()
        for message_id, channel, chat_id, text, attempts, status, next_at, key, maybe in waiting:
            chat = (channel, chat_id)
            if chat in held:
                continue
            held.add(chat)  # until this one is sent, below
            if status != "queued" or next_at > iso_ms(now):
                continue
            platform = platform_of(channel) if platform_of else "telegram"
            gap = MIN_INTERVAL_S.get(platform, 1.0)
            if channel in last_sent and (self.clock() - last_sent[channel]).total_seconds() < gap:
                self.db.execute(
                    "UPDATE outbox SET next_attempt_at = ? WHERE id = ?",
                    (iso_ms(last_sent[channel] + timedelta(seconds=gap)), message_id),
                )
                continue  # paced: the next drain sends it
            claimed = self.db.execute(
                "UPDATE outbox SET status = 'sending', attempts = attempts + 1, "
                "next_attempt_at = ? WHERE id = ? AND status = 'queued'",
                (iso_ms(self.clock() + SEND_LEASE), message_id),
            ).rowcount
            if not claimed:
                continue  # another process claimed it first
            try:
                result = send(channel, chat_id, text, Attempt(key, bool(maybe)))
            except Exception as exc:  # an adapter's bug must not strand the claim
                result = Transient(f"{type(exc).__name__}: {exc}", maybe_sent=True)
            if isinstance(result, Sent):
                self.db.execute(
                    "UPDATE outbox SET status = 'sent', platform_id = ? WHERE id = ?",
                    (result.platform_id, message_id),
                )
                last_sent[channel] = self.clock()
                sent += 1
            elif isinstance(result, Permanent) or attempts + 1 >= MAX_ATTEMPTS:
                error = (
                    result.error
                    if isinstance(result, (Permanent, Transient))
                    else "rate limited too often"
                )
                self.db.execute(
                    "UPDATE outbox SET status = 'failed', last_error = ? WHERE id = ?",
                    (error, message_id),
                )
                held.discard(chat)  # a parked message does not hold the chat back
            else:
                wait = (
                    result.seconds
                    if isinstance(result, RetryAfter)
                    else RETRY_S[min(attempts, len(RETRY_S) - 1)]
                )
                error = (
                    f"retry after {wait:g} s" if isinstance(result, RetryAfter) else result.error
                )
                self.db.execute(
                    "UPDATE outbox SET status = 'queued', next_attempt_at = ?, "
                    "last_error = ?, maybe_sent = max(maybe_sent, ?) WHERE id = ?",
                    (
                        iso_ms(self.clock() + timedelta(seconds=wait)),
                        error,
                        isinstance(result, Transient) and result.maybe_sent,
                        message_id,
                    ),
                )
        return sent
