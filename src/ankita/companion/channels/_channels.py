"""Channels core: one message model, one access policy, durable ingress and a durable outbox,
shared by every platform adapter (Telegram, Discord, Slack).

- **Policy.** Per channel, direct messages are `pairing` (a one-time code the owner approves with
  `ankita channels pair CODE`), `allowlist`, `open` or `disabled`; groups are `open`,
  `allowlist` or `disabled`. A channel with no configuration denies everyone.
- **Ingress.** Updates are stored before the polling offset moves, in one transaction, so a
  crash never skips one. An update seen twice is handled once.
- **Outbox** (`_outbox`): written before it is sent, retried, paced, never sent twice once
  the platform acknowledged it.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput, NotFound
from ankita._validate import validate_user
from ankita.companion._localdb import immediate, open_local
from ankita.companion.channels._outbox import Outbox, iso_ms

DM_POLICIES = ("pairing", "allowlist", "open", "disabled")
GROUP_POLICIES = ("open", "allowlist", "disabled")
PLATFORMS = ("telegram", "discord", "slack")
PAIRING_TTL = timedelta(hours=1)
MAX_PENDING_CODES = 3

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
        last_error TEXT, dedupe TEXT, send_key TEXT, maybe_sent INTEGER NOT NULL DEFAULT 0)""",
    "CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, next_attempt_at)",
]
# Columns an outbox of an earlier version lacks, added in place, once: the idempotency key of a
# queued reply, and the key and crash mark of each send (messages already queued get a key from
# their id, which is all they need: one outbox's ids never repeat).
_UPGRADE = {
    "dedupe": ["ALTER TABLE outbox ADD COLUMN dedupe TEXT"],
    "send_key": [
        "ALTER TABLE outbox ADD COLUMN send_key TEXT",
        "UPDATE outbox SET send_key = 'ak-' || id",
    ],
    "maybe_sent": ["ALTER TABLE outbox ADD COLUMN maybe_sent INTEGER NOT NULL DEFAULT 0"],
}
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


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """A platform's text as UTF-8 can hold it: a lone surrogate (which JSON may carry, and
    SQLite refuses) becomes U+FFFD, so the message is stored and answered, not dropped."""
    return _SURROGATE.sub("\ufffd", text)


class Channels(Outbox):
    def __init__(self, path: str | Path, clock: Callable[[], datetime] | None = None) -> None:
        self.path = str(path)
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.db = open_local(self.path, _SCHEMA, "channel store")
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(outbox)")}
        for column, statements in _UPGRADE.items():
            for statement in statements if column not in columns else []:
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
        oldest = iso_ms(now - PAIRING_TTL)
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
                    (code, message.channel, message.sender, iso_ms(now)),
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
                (iso_ms(now), code.strip().upper()),
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
        now = iso_ms(self.clock())
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
                        storable(update.sender),
                        storable(update.text),
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
                "UPDATE ingress SET handled_at = ? WHERE id = ?", (iso_ms(self.clock()), ingress_id)
            )
