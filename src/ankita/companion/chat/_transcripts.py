"""Chat sessions in SQLite: every message ever exchanged, and each session's small state.

Nothing is deleted when a conversation is compacted: a summary row marks where the prompt starts
again, and the messages before it stay in the transcript.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput
from ankita.companion._localdb import open_local

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'turn',
        extra TEXT NOT NULL DEFAULT '{}',
        at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS messages_session ON messages (session, seq)",
    """CREATE TABLE IF NOT EXISTS session_state (
        session TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (session, key)
    )""",
]
# kind: "turn" (in the prompt), "silent" and "flush" (recorded, never shown),
# "summary" (the prompt restarts here), "error" (a failed model call, recorded).


@dataclass(frozen=True)
class Message:
    seq: int
    role: str
    content: str
    kind: str
    extra: dict[str, Any]
    at: str

    def to_model(self) -> dict[str, Any]:
        """The message as the model client takes it (OpenAI's shape)."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        out.update(
            {k: v for k, v in self.extra.items() if k in ("tool_calls", "tool_call_id", "name")}
        )
        return out


def validate_session(name: object) -> str:
    if (
        not isinstance(name, str)
        or not name
        or len(name) > 64
        or not all(c.isalnum() or c in "-_." for c in name)
    ):
        raise InvalidInput(f"a session name is 1-64 letters, digits, '-', '_' or '.', got {name!r}")
    return name


class Transcripts:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.db = open_local(self.path, _SCHEMA, "chat transcripts")

    def close(self) -> None:
        self.db.close()

    def add(
        self, session: str, role: str, content: str, kind: str = "turn", **extra: Any
    ) -> Message:
        at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        row = self.db.execute(
            "INSERT INTO messages (session, role, content, kind, extra, at) VALUES "
            "(?, ?, ?, ?, ?, ?) RETURNING seq",
            (session, role, content, kind, json.dumps(extra, ensure_ascii=False), at),
        ).fetchone()
        return Message(int(row[0]), role, content, kind, extra, at)

    def withdraw(self, session: str, content: str) -> bool:
        """Mark the newest assistant turn saying `content` cancelled: kept in the transcript,
        never read back to the model (a reply the user stopped). False if there is none."""
        row = self.db.execute(
            "SELECT seq FROM messages WHERE session = ? AND role = 'assistant' AND kind = 'turn' "
            "AND content = ? ORDER BY seq DESC LIMIT 1",
            (session, content),
        ).fetchone()
        if row is None:
            return False
        self.db.execute("UPDATE messages SET kind = 'cancelled' WHERE seq = ?", (row[0],))
        return True

    def messages(self, session: str, since: int = 0) -> list[Message]:
        return [
            Message(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5])
            for r in self.db.execute(
                "SELECT seq, role, content, kind, extra, at FROM messages WHERE session = ? "
                "AND seq > ? ORDER BY seq",
                (session, since),
            )
        ]

    def sessions(self) -> list[tuple[str, int, str]]:
        """(name, messages, last message at) of every session."""
        return [
            (r[0], r[1], r[2])
            for r in self.db.execute(
                "SELECT session, count(*), max(at) FROM messages GROUP BY session ORDER BY 3"
            )
        ]

    def set_busy(self, until: datetime | None, lease: str = "") -> None:
        """Mark one conversation turn (`lease`) as running until a deadline, or clear its mark,
        for other processes: a heartbeat never interrupts a live turn. Each turn has a mark of
        its own, so one ending never clears another's."""
        key = f"busy_until:{lease}"
        if until is None:
            self.db.execute("DELETE FROM session_state WHERE session = '*' AND key = ?", (key,))
        else:
            self.put("*", key, until.isoformat())

    def busy_marks(self) -> list[datetime]:
        """The deadline of every turn marked running (some may have lapsed)."""
        rows = self.db.execute(
            "SELECT value FROM session_state WHERE session = '*' AND key LIKE 'busy_until:%'"
        ).fetchall()
        return [datetime.fromisoformat(str(r[0])) for r in rows if r[0]]

    def busy(self, now: datetime) -> bool:
        return any(until > now for until in self.busy_marks())

    def get(self, session: str, key: str) -> str | None:
        row = self.db.execute(
            "SELECT value FROM session_state WHERE session = ? AND key = ?", (session, key)
        ).fetchone()
        return str(row[0]) if row else None

    def put(self, session: str, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO session_state VALUES (?, ?, ?) ON CONFLICT (session, key) "
            "DO UPDATE SET value = excluded.value",
            (session, key, value),
        )
