"""The values Ankita hands out: facts, write results, conflicts, events, recalls."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

NOTICE = (
    "Some facts conflict with each other. "
    "Ask the user which is current instead of asserting either."
)


class WordEnum(str, Enum):
    """A closed set of words, each equal to its string: "merged" == Action.MERGED, and it
    prints, formats and serialises as the word itself."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Action(WordEnum):
    """What one write did (`WriteResult.action`)."""

    CREATED = "created"
    MERGED = "merged"  # into an existing fact: one fact, not two
    CONFLICT = "conflict"  # created, and flagged against the facts it disagrees with


class Status(WordEnum):
    """Where a fact stands (`Fact.status`)."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"  # the user kept another fact over it; history, not deleted


@dataclass(frozen=True)
class Fact:
    """One short statement about the user or their world (SPEC §1)."""

    id: str
    text: str
    kind: str
    user: str
    pinned: bool
    status: Status
    source: str | None
    created_at: str
    updated_at: str
    last_confirmed_at: str
    mentions: int
    conflicts_with: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Built from rows and snapshots too: every fact holds a Status, never a bare string.
        object.__setattr__(self, "status", Status(self.status))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["conflicts_with"] = list(self.conflicts_with)
        return data


@dataclass(frozen=True)
class WriteResult:
    """What one `remember` did (SPEC §2.6)."""

    action: Action
    fact: Fact
    merged_into: str | None
    conflicts_with: tuple[str, ...]
    score: float
    method: str
    reason: str
    event_id: int
    embedding_error: str | None = None  # set when the embedder failed and scores are lexical
    # Flagged but not sure: kept for review (`conflicts --possible`), never in the notice.
    possible_conflicts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "action", Action(self.action))

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "fact": self.fact.to_dict(),
            "merged_into": self.merged_into,
            "conflicts_with": list(self.conflicts_with),
            "possible_conflicts": list(self.possible_conflicts),
            "score": self.score,
            "method": self.method,
            "reason": self.reason,
            "event_id": self.event_id,
            "embedding_error": self.embedding_error,
        }


@dataclass(frozen=True)
class Conflict:
    """Two active facts flagged against each other; `a` < `b` by id. `score`, `reason` and
    `flagged_at` come from the history event that linked them (None if it has none); `newer`
    is the id of the side said last, `explanation` the pair in plain words."""

    a: Fact
    b: Fact
    score: float | None = None
    reason: str | None = None
    flagged_at: str | None = None
    newer: str | None = None
    explanation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        older = (
            None if self.newer is None else (self.a.id if self.newer == self.b.id else self.b.id)
        )
        return {
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "score": self.score,
            "reason": self.reason,
            "flagged_at": self.flagged_at,
            "older": older,
            "newer": self.newer,
            "explanation": self.explanation,
        }


EVENT_TYPES = frozenset(
    {
        "create",
        "merge",
        "text_change",
        "pin",
        "unpin",
        "reactivate",
        "link",
        "clear",
        "resolve",
        "promote",
        "forget",
        "undo",
    }
)


@dataclass(frozen=True)
class Event:
    """One entry of the append-only history (SPEC §7)."""

    id: int
    op: str  # all events of one operation share it; undo reverses the whole operation
    type: str
    fact_id: str
    other_id: str | None
    at: str
    data: dict[str, Any]
    undone_by: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RecalledFact:
    """A fact chosen for a prompt, with why it was chosen."""

    fact: Fact
    score: float
    stale: bool
    pinned: bool
    conflicting: bool
    via_conflict: bool  # pulled in because a recalled fact conflicts with it

    def to_dict(self) -> dict[str, Any]:
        return {
            "fact": self.fact.to_dict(),
            "score": self.score,
            "stale": self.stale,
            "pinned": self.pinned,
            "conflicting": self.conflicting,
            "via_conflict": self.via_conflict,
        }


@dataclass(frozen=True)
class Recall:
    """The facts relevant to a query, their conflicts and the notice (SPEC §6)."""

    query: str
    facts: tuple[RecalledFact, ...]
    conflicts: tuple[tuple[str, str], ...]
    notice: str | None = field(default=None)

    def to_prompt(self) -> str:
        """A compact block for a system prompt: one line per fact, the notice last."""
        if not self.facts:
            return ""
        lines = ["Known facts about the user:"]
        for item in self.facts:
            marks = []
            if item.conflicting:
                marks.append(
                    "CONFLICTS with "
                    + ", ".join(
                        f"[{other}]"
                        for other in item.fact.conflicts_with
                        if any(f.fact.id == other for f in self.facts)
                    )
                )
            if item.stale:
                marks.append("may be outdated")
            if item.pinned:
                marks.append("pinned")
            tail = f" ({'; '.join(marks)})" if marks else ""
            lines.append(f"- [{item.fact.id}] {item.fact.text}{tail}")
        if self.notice:
            lines.append(self.notice)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "facts": [f.to_dict() for f in self.facts],
            "conflicts": [list(c) for c in self.conflicts],
            "notice": self.notice,
            "prompt": self.to_prompt(),
        }
