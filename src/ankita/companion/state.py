"""The companion's state as the HTTP server reads it: the personality card and the scheduled
tasks, each where this installation keeps it. The one companion module a door may import."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ankita.companion._paths import persona_path, tasks_db_path
from ankita.companion.persona._persona import Persona, load_persona, save_persona
from ankita.companion.tasks._scheduler import Scheduler

__all__ = ["Persona", "read_card", "tasks", "write_card"]


def read_card() -> dict[str, Any]:
    """The card as stored (one per installation)."""
    return load_persona(persona_path()).card


def write_card(card: dict[str, Any]) -> dict[str, Any]:
    """Check a card, then replace the stored one; unknown fields are kept as sent."""
    checked = Persona.from_dict(card, "the card")
    save_persona(checked, persona_path())
    return checked.card


def tasks(run: Callable[[Any], str]) -> Scheduler:
    """The scheduled tasks, with `run` called for a job that is run from here."""
    return Scheduler(tasks_db_path(), run)
