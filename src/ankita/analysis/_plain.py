"""Conflicts and history in the user's words: which side was said last, what kind of
disagreement the store found, and each history event told with the facts' texts."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ankita._models import Conflict, Event, Fact

# The reason a write recorded names its finding (see `_disagree.Finding`); each kind of finding
# is told to the user in one sentence, the first that appears in the reason wins.
_CUES = (
    ("contradiction judge", "Read together, they contradict each other."),
    (
        "change_of_state",
        "The later one says something changed, so the earlier one may no longer hold.",
    ),
    ("negation", "One says the opposite of the other."),
    ("value", "They give different values for the same thing."),
    ("attribute", "They give different values for the same thing."),
    ("numbers", "They give different numbers for the same thing."),
    ("days", "They name different days for the same thing."),
    ("months", "They name different months for the same thing."),
    ("opposites", "They use opposite words about the same thing."),
    ("swapped", "They say the same relation the other way round."),
    ("order", "They say the same relation the other way round."),
    ("reactivated", "You said the earlier one again after choosing the later one."),
)
_DEFAULT_CUE = "They may not both be true."


def cue(reason: str | None) -> str:
    """One sentence saying how two flagged facts disagree, from the reason the write recorded."""
    text = reason or ""
    for marker, sentence in _CUES:
        if re.search(rf"\b{re.escape(marker)}\b", text):
            return sentence
    return _DEFAULT_CUE


def older_newer(a: Fact, b: Fact) -> tuple[Fact, Fact]:
    """The two sides in the order the user last said them (then first said them, then id)."""
    first, second = sorted((a, b), key=lambda f: (f.last_confirmed_at, f.created_at, f.id))
    return first, second


def day(at: str | None) -> str:
    """The calendar day of a stored timestamp (they are ISO 8601, UTC)."""
    return (at or "")[:10]


def explain_conflict(older: Fact, newer: Fact, reason: str | None) -> str:
    """ "On DAY you said "X"; later, on DAY, "Y". <how they disagree>", for the two sides in
    the order `older_newer` gives."""
    when_old, when_new = day(older.last_confirmed_at), day(newer.last_confirmed_at)
    later = "later the same day" if when_old == when_new else f"later, on {when_new}"
    return f"On {when_old} you said “{older.text}”; {later}, “{newer.text}”. {cue(reason)}"


def flagged_pair(a: Fact, b: Fact, link: Event | None) -> Conflict:
    """Two flagged facts as a Conflict: the score, reason and time of the event that linked
    them (if it still stands), which side was said last, and the pair in plain words."""
    reason = link.data.get("reason") if link else None
    older, newer = older_newer(a, b)
    return Conflict(
        a,
        b,
        score=link.data.get("score") if link else None,
        reason=reason,
        flagged_at=link.at if link else None,
        newer=newer.id,
        explanation=explain_conflict(older, newer, reason),
    )


def partner_of(event: Event, fact_id: str) -> str | None:
    """The other fact an event names, seen from `fact_id` (never the fact itself)."""
    if event.other_id is None:
        return None
    return event.other_id if event.fact_id == fact_id else event.fact_id


def event_words(event: Event, fact_id: str, texts: Mapping[str, str]) -> str:
    """One history line, as the fact `fact_id` lived it, with the texts of the facts named."""
    data = event.data
    partner = partner_of(event, fact_id)
    other = (
        (f"“{texts[partner]}”" if partner in texts else f"a fact no longer stored ({partner})")
        if partner
        else ""
    )
    kind = event.type
    if kind == "create":
        return f"First said: “{data.get('text', '')}”"
    if kind == "merge":
        return f"Said again as “{data.get('phrasing', '')}”: merged here, not stored twice"
    if kind == "text_change":
        return f"Text changed from “{data.get('before', '')}” to “{data.get('after', '')}”"
    if kind == "link":
        return f"Flagged against {other}: {cue(data.get('reason'))}"
    if kind == "clear":
        return f"You kept both this and {other}: the flag was removed"
    if kind == "resolve":
        if event.fact_id == fact_id:
            return f"Superseded: you kept {other} instead"
        return f"You kept this over {other}, which is now superseded"
    if kind == "reactivate":
        return "Active again: said again after it had been superseded"
    if kind == "forget":
        return f"Forgotten: “{(data.get('fact') or {}).get('text', '')}”"
    if kind in ("pin", "unpin"):
        return "Pinned" if kind == "pin" else "Unpinned"
    if kind == "undo":
        return "Undone: " + ", ".join(str(t) for t in data.get("types", []))
    return kind
