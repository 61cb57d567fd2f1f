"""Channels core: one message model, one access policy, durable ingress and a durable outbox,
shared by every platform adapter (Telegram, Discord, Slack).

- **Policy.** Per channel, direct messages are `pairing` (a one-time code the owner approves with
  `ankita channels pair CODE`), `allowlist`, `open` or `disabled`; groups are `open`,
  `allowlist` or `disabled`. A channel with no configuration denies everyone.
- **Ingress.** Updates are stored before the polling offset moves, in one transaction, so a
  crash never skips one. An update seen twice is handled once.
- **Outbox.** A message is written before it is sent, claimed while sending, and marked sent with
  the platform's message id. It is retried on transient errors (5 s, 25 s, 2 min; at most 5
  attempts) and on 429 after the platform's `retry_after`. Permanent errors (4xx, chat not found,
  forbidden) are parked as failed. It is paced per channel, expires when too old, and is drained
  by a timer. A message the platform acknowledged is never sent again. A claim lasts
  `SEND_LEASE` (longer than any send's timeout): a claim older than that was left by a crash and
  is sent again, so two processes draining one outbox never send one message twice.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput, NotFound
from ankita._validate import validate_user
from ankita.companion._localdb import immediate, open_local
from ankita.companion._sending import (
    Permanent,
    RetryAfter,
    Sender,
    Sent,
    Transient,
    split_message,
)

DM_POLICIES = ("pairing", "allowlist", "open", "disabled")
GROUP_POLICIES = ("open", "allowlist", "disabled")
PLATFORMS = ("telegram", "discord", "slack")
PAIRING_TTL = timedelta(hours=1)
MAX_PENDING_CODES = 3
RETRY_S = (5, 25, 120)
MAX_ATTEMPTS = 5
TTL = timedelta(hours=1)
MIN_INTERVAL_S = {"telegram": 1.0, "discord": 0.5, "slack": 1.0}  # per channel, between sends
SEND_LEASE = timedelta(minutes=2)
# Longest message each platform accepts (characters); longer replies go out in parts.
MAX_LENGTH = {"telegram": 4096, "discord": 2000, "slack": 4000}

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS channels (
        name TEXT PRIMARY KEY, platform TEXT NOT NULL, dm_policy TEXT NOT NULL,
        group_policy TEXT NOT NULL, allow_from TEXT NOT NULL, user TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS pairing (
        code TEXT PRIMARY KEY, channel TEXT NOT NULL, sender TEXT NOT NULL,
        created_at TEXT NOT NULL, approved_at TEXT)""",
    """CREATE TABLE IF NOT EXISTS ingress (
        id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, update_id TEXT NOT NULL,
        chat_type TEXT NOT NULL, chat_id TEXT NOT NULL, sender TEXT NOT NULL, text TEXT NOT NULL,
        received_at TEXT NOT NULL, handled_at TEXT, UNIQUE (channel, update_id))""",
    "CREATE TABLE IF NOT EXISTS offsets (channel TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, chat_id TEXT NOT NULL,
        text TEXT NOT NULL, created_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL, status TEXT NOT NULL, platform_id TEXT,
        last_error TEXT, dedupe TEXT)""",
    "CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, next_attempt_at)",
]
# The outbox of an earlier version lacks the idempotency key; added in place, once.
_UPGRADE = ["ALTER TABLE outbox ADD COLUMN dedupe TEXT"]
_LATE_SCHEMA = ["CREATE UNIQUE INDEX IF NOT EXISTS outbox_dedupe ON outbox (dedupe)"]


@dataclass(frozen=True)
class Inbound:
    """One message from any platform, normalised."""

    channel: str
    update_id: str
    chat_type: str  # "dm" | "group"
    chat_id: str
    sender: str
    text: str

    def session_key(self, platform: str) -> str:
        """The conversation this message belongs to (a transcript session name)."""
        return f"{platform}.{self.channel}.{self.chat_type}.{self.chat_id}"


@dataclass(frozen=True)
class Decision:
    verdict: str  # "allow" | "deny" | "pair"
    reason: str
    reply: str | None = None  # what to send back (the pairing code), if anything


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


class Channels:
    def __init__(self, path: str | Path, clock: Callable[[], datetime] | None = None) -> None:
        self.path = str(path)
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.db = open_local(self.path, _SCHEMA, "channel store")
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(outbox)")}
        for statement in _UPGRADE if "dedupe" not in columns else []:
            self.db.execute(statement)
        for statement in _LATE_SCHEMA:
            self.db.execute(statement)

    def close(self) -> None:
        self.db.close()

    # -- configuration --------------------------------------------------------------------

    def add(
        self,
        name: str,
        platform: str,
        dm_policy: str = "pairing",
        group_policy: str = "disabled",
        allow_from: list[str] | None = None,
        user: str = "default",
    ) -> int:
        """Configure a channel; returns how many paired senders had to be unpaired: a sender
        paired to reach one user's memory must pair again before reaching another's."""
        if platform not in PLATFORMS:
            raise InvalidInput(f"platform must be one of {', '.join(PLATFORMS)}")
        if dm_policy not in DM_POLICIES or group_policy not in GROUP_POLICIES:
            raise InvalidInput(
                f"dm policy: {', '.join(DM_POLICIES)}; group policy: {', '.join(GROUP_POLICIES)}"
            )
        if (
            not name
            or len(name) > 24
            or not all(c.isascii() and (c.isalnum() or c in "-_") for c in name)
        ):
            raise InvalidInput("a channel name is 1-24 letters, digits, '-' or '_'")
        validate_user(user)
        with immediate(self.db):
            row = self.db.execute("SELECT user FROM channels WHERE name = ?", (name,)).fetchone()
            unpaired = 0
            if row is not None and row[0] != user:
                unpaired = self.db.execute(
                    "DELETE FROM pairing WHERE channel = ?", (name,)
                ).rowcount
            self.db.execute(
                "INSERT INTO channels VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) "
                "DO UPDATE SET platform = excluded.platform, dm_policy = "
                "excluded.dm_policy, group_policy = excluded.group_policy, "
                "allow_from = excluded.allow_from, user = excluded.user",
                (
                    name,
                    platform,
                    dm_policy,
                    group_policy,
                    json.dumps(sorted(allow_from or [])),
                    user,
                ),
            )
        return int(unpaired)

    @staticmethod
    def _config(row: tuple[Any, ...]) -> dict[str, Any]:
        return {
            "name": row[0],
            "platform": row[1],
            "dm_policy": row[2],
            "group_policy": row[3],
            "allow_from": json.loads(row[4]),
            "user": row[5],
        }

    def configured(self) -> list[dict[str, Any]]:
        return [self._config(r) for r in self.db.execute("SELECT * FROM channels ORDER BY name")]

    def remove(self, name: str) -> None:
        if self.db.execute("DELETE FROM channels WHERE name = ?", (name,)).rowcount == 0:
            raise NotFound(f"no channel named {name!r}")

    def configured_channel(self, name: str) -> dict[str, Any]:
        """A channel's configuration, or a NotFound that says how to add it."""
        config = self.channel(name)
        if config is None:
            raise NotFound(f"no channel named {name!r}; add it with `ankita channels add`")
        return config

    def channel(self, name: str) -> dict[str, Any] | None:
        # By key: every message and every queued reply looks its channel up.
        row = self.db.execute("SELECT * FROM channels WHERE name = ?", (name,)).fetchone()
        return self._config(row) if row else None

    # -- policy ---------------------------------------------------------------------------

    def check(self, message: Inbound) -> Decision:
        channel = self.channel(message.channel)
        if channel is None:
            return Decision("deny", "the channel has no configuration (denied by default)")
        allowed = set(channel["allow_from"]) | self._approved(message.channel)
        if message.chat_type == "group":
            policy = channel["group_policy"]
            if policy == "open":
                return Decision("allow", "groups are open")
            if policy == "allowlist" and message.chat_id in allowed:
                return Decision("allow", "the group is on the allowlist")
            return Decision("deny", f"group policy {policy}")
        policy = channel["dm_policy"]
        if policy == "open":
            return Decision("allow", "direct messages are open")
        if policy == "disabled":
            return Decision("deny", "direct messages are disabled")
        if message.sender in allowed:
            return Decision("allow", "the sender is approved")
        if policy == "allowlist":
            return Decision("deny", "the sender is not on the allowlist")
        return self._pairing_code(message)

    def _approved(self, channel: str) -> set[str]:
        return {
            r[0]
            for r in self.db.execute(
                "SELECT sender FROM pairing WHERE channel = ? AND approved_at IS NOT NULL",
                (channel,),
            )
        }

    def _pairing_code(self, message: Inbound) -> Decision:
        now = self.clock()
        oldest = _iso(now - PAIRING_TTL)
        with immediate(self.db):
            row = self.db.execute(
                "SELECT code FROM pairing WHERE channel = ? AND sender = ? AND approved_at IS "
                "NULL AND created_at > ?",
                (message.channel, message.sender, oldest),
            ).fetchone()
            if row:
                code = row[0]
            else:
                pending = self.db.execute(
                    "SELECT count(*) FROM pairing WHERE channel = ? AND approved_at IS NULL "
                    "AND created_at > ?",
                    (message.channel, oldest),
                ).fetchone()[0]
                if pending >= MAX_PENDING_CODES:
                    return Decision("deny", "too many pairing requests are waiting")
                code = secrets.token_hex(4).upper()
                self.db.execute(
                    "INSERT INTO pairing VALUES (?, ?, ?, ?, NULL)",
                    (code, message.channel, message.sender, _iso(now)),
                )
        return Decision(
            "pair",
            "the sender is not paired yet",
            f"To talk with me here, ask my owner to run: ankita channels pair {code}",
        )

    def pair(self, code: str) -> tuple[str, str]:
        """Approve a pairing code: (channel, sender)."""
        now = self.clock()
        with immediate(self.db):
            row = self.db.execute(
                "SELECT channel, sender, created_at, approved_at FROM pairing WHERE code = ?",
                (code.strip().upper(),),
            ).fetchone()
            if row is None or row[3] is not None:
                raise NotFound(f"no pending pairing code {code!r}")
            if datetime.fromisoformat(row[2]) < now - PAIRING_TTL:
                raise InvalidInput(f"pairing code {code} has expired; ask for a new one")
            self.db.execute(
                "UPDATE pairing SET approved_at = ? WHERE code = ?",
                (_iso(now), code.strip().upper()),
            )
        return row[0], row[1]

    def senders(self, channel: str) -> list[tuple[str, str]]:
        """The senders paired on a channel: (sender, when approved), oldest first."""
        return [
            (str(r[0]), str(r[1]))
            for r in self.db.execute(
                "SELECT sender, approved_at FROM pairing WHERE channel = ? AND approved_at IS "
                "NOT NULL ORDER BY approved_at, sender",
                (channel,),
            )
        ]

    def known_chat(self, channel: str, chat_id: str) -> bool:
        """Whether a task may post to this chat: one on the channel's allowlist, or one a
        sender the channel lets in has written from (paired, or any under an open policy)."""
        config = self.channel(channel)
        if config is None:
            return False
        if chat_id in config["allow_from"]:
            return True
        senders = {
            str(r[0])
            for r in self.db.execute(
                "SELECT DISTINCT sender FROM ingress WHERE channel = ? AND chat_id = ?",
                (channel, chat_id),
            )
        }
        return bool(senders) and (
            config["dm_policy"] == "open" or bool(senders & self._approved(channel))
        )

    def check_task_chat(self, channel: str, chat_id: str) -> None:
        """Refuse a task's target chat unless the channel exists and lets that chat in."""
        self.configured_channel(channel)
        if not self.known_chat(channel, chat_id):
            raise InvalidInput(
                f"chat {chat_id} has not written to channel {channel} from a paired or allowed "
                "sender: a task posts only to such chats"
            )

    def unpair(self, channel: str, sender: str) -> None:
        """Revoke a paired sender: their next message gets a new pairing code, not a reply."""
        with immediate(self.db):
            gone = self.db.execute(
                "DELETE FROM pairing WHERE channel = ? AND sender = ? AND approved_at IS NOT NULL",
                (channel, sender),
            ).rowcount
        if not gone:
            raise NotFound(f"{sender!r} is not paired on {channel!r}")

    # -- ingress --------------------------------------------------------------------------

    def receive(
        self, channel: str, updates: list[Inbound], next_offset: str | None = None
    ) -> list[int]:
        """Store updates, then move the offset (for platforms that have one), in one
        transaction: ids of the new rows."""
        now = _iso(self.clock())
        new = []
        with immediate(self.db):
            for update in updates:
                cur = self.db.execute(
                    "INSERT INTO ingress (channel, update_id, chat_type, chat_id, sender, text, "
                    "received_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (
                        channel,
                        update.update_id,
                        update.chat_type,
                        update.chat_id,
                        update.sender,
                        update.text,
                        now,
                    ),
                )
                if cur.rowcount == 1:
                    new.append(int(cur.lastrowid or 0))
            if next_offset is not None:
                self.db.execute(
                    "INSERT INTO offsets VALUES (?, ?) ON CONFLICT (channel) DO "
                    "UPDATE SET value = excluded.value",
                    (channel, next_offset),
                )
        return new

    def offset(self, channel: str) -> str | None:
        row = self.db.execute("SELECT value FROM offsets WHERE channel = ?", (channel,)).fetchone()
        return str(row[0]) if row else None

    def pending(self) -> list[tuple[int, Inbound]]:
        """Stored updates not handled yet (after a crash, too)."""
        return [
            (r[0], Inbound(r[1], r[2], r[3], r[4], r[5], r[6]))
            for r in self.db.execute(
                "SELECT id, channel, update_id, chat_type, chat_id, sender, text FROM ingress "
                "WHERE handled_at IS NULL ORDER BY id"
            )
        ]

    def handled(self, ingress_id: int, reply: tuple[str, str, str] | None = None) -> None:
        """Mark an update handled and queue its reply (channel, chat_id, text), in one
        transaction: a crash before it handles the update again, never answers it twice."""
        with immediate(self.db):
            if reply is not None:
                self._insert(*reply, dedupe=f"reply:{ingress_id}")
            self.db.execute(
                "UPDATE ingress SET handled_at = ? WHERE id = ?", (_iso(self.clock()), ingress_id)
            )

    # -- outbox ---------------------------------------------------------------------------

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
        now = _iso(self.clock())
        row = self.db.execute(
            "INSERT INTO outbox (channel, chat_id, text, created_at, next_attempt_at, status, "
            "dedupe) VALUES (?, ?, ?, ?, ?, 'queued', ?) ON CONFLICT (dedupe) DO NOTHING "
            "RETURNING id",
            (channel, chat_id, text, now, now, dedupe),
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
            }
            for r in self.db.execute(
                "SELECT id, channel, chat_id, text, attempts, status, "
                "platform_id, last_error FROM outbox ORDER BY id"
            )
        ]

    def release_claims(self) -> int:
        """Requeue every claim at once: only for the one process that owns this outbox (the
        relay, under its lock), where any claim is certainly left by a crash."""
        return self.db.execute(
            "UPDATE outbox SET status = 'queued', next_attempt_at = ? WHERE status = 'sending'",
            (_iso(self.clock()),),
        ).rowcount

    def drain(self, send: Sender, platform_of: Callable[[str], str] | None = None) -> int:
        """Send what is due, paced per channel; returns how many were sent. Call on a timer."""
        now = self.clock()
        self.db.execute(
            "UPDATE outbox SET status = 'expired' WHERE status = 'queued' AND created_at < ?",
            (_iso(now - TTL),),
        )
        # A claim older than the lease was left by a crash: the platform may not have it, so it
        # is sent again (a 'sent' message never is).
        self.db.execute(
            "UPDATE outbox SET status = 'queued' WHERE status = 'sending' AND next_attempt_at <= ?",
            (_iso(now),),
        )
        last_sent: dict[str, datetime] = {}
        sent = 0
        # Each chat gets its messages in order: a message waits while an earlier one to the same
        # chat is still pending (retrying, paced or in flight), so parts and replies never swap.
        waiting = self.db.execute(
            "SELECT id, channel, chat_id, text, attempts, status, "
            "next_attempt_at FROM outbox WHERE status IN ('queued', "
            "'sending') ORDER BY id"
        ).fetchall()
        held: set[tuple[str, str]] = set()
        for message_id, channel, chat_id, text, attempts, status, next_at in waiting:
            chat = (channel, chat_id)
            if chat in held:
                continue
            held.add(chat)  # until this one is sent, below
            if status != "queued" or next_at > _iso(now):
                continue
            platform = platform_of(channel) if platform_of else "telegram"
            gap = MIN_INTERVAL_S.get(platform, 1.0)
            if channel in last_sent and (self.clock() - last_sent[channel]).total_seconds() < gap:
                self.db.execute(
                    "UPDATE outbox SET next_attempt_at = ? WHERE id = ?",
                    (_iso(last_sent[channel] + timedelta(seconds=gap)), message_id),
                )
                continue  # paced: the next drain sends it
            claimed = self.db.execute(
                "UPDATE outbox SET status = 'sending', attempts = attempts + 1, "
                "next_attempt_at = ? WHERE id = ? AND status = 'queued'",
                (_iso(self.clock() + SEND_LEASE), message_id),
            ).rowcount
            if not claimed:
                continue  # another process claimed it first
            try:
                result = send(channel, chat_id, text)
            except Exception as exc:  # an adapter's bug must not strand the claim
                result = Transient(f"{type(exc).__name__}: {exc}")
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
                    "last_error = ? WHERE id = ?",
                    (_iso(self.clock() + timedelta(seconds=wait)), error, message_id),
                )
        return sent
