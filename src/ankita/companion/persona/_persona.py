"""The personality card (Character Card V2/V3 compatible) and the one prompt builder every front
end uses: chat now, voice and channels later.

A card is `{"spec": "chara_card_v3", "spec_version": "3.0", "data": {...}}`. Unknown fields and
`extensions` are kept as they came, so a card survives import and export unchanged; Ankita's
own settings live under `data.extensions.ankita`.
"""

from __future__ import annotations

import copy
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput
from ankita._files import replacing
from ankita._jsonl import parse_json
from ankita._validate import validate_string

TEXT_FIELDS = (
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
    "system_prompt",
    "post_history_instructions",
    "creator_notes",
)
SETTINGS = {  # extensions.ankita: name -> (allowed values, default)
    "caring": (("low", "medium", "high"), "high"),
    "teasing": (("none", "light", "playful"), "light"),
    "language": (None, "English"),
    "reply_length": (("short", "medium", "long"), "short"),
    "user_name": (None, ""),  # what the companion calls the user; empty: the memory's user
}
LORE_BUDGET = 300  # tokens of lorebook entries a prompt may hold
LENGTH_WORDS = {
    "short": "one to three sentences",
    "medium": "a short paragraph",
    "long": "a few paragraphs when it helps",
}
DEFAULT_SYSTEM = (
    "You are {{char}}, a companion who talks with {{user}} and remembers what {{user}} tells you."
)
DEFAULT_DATA: dict[str, Any] = {
    "name": "Ankita",
    "description": "A warm, curious companion with a good memory.",
    "personality": "kind, attentive, a little playful, honest about what she does not know",
    "scenario": "{{user}} chats with {{char}} whenever they like.",
    "first_mes": "Hi! I'm {{char}}. Tell me about your day, or anything you'd like me to remember.",
    "mes_example": "<START>\n{{user}}: I started learning the piano.\n{{char}}: Oh, lovely! "
    "What are you practising first?",
    "system_prompt": "",
    "post_history_instructions": "",
    "creator_notes": "",
    "alternate_greetings": [],
    "tags": [],
    "extensions": {"ankita": {name: default for name, (_, default) in SETTINGS.items()}},
}


def estimate_tokens(text: str) -> int:
    """About four characters per token: the budget check before the server measures it."""
    return max(1, len(text) // 4)


@dataclass
class Persona:
    """A card: `data` holds every field, known or not."""

    card: dict[str, Any]

    @classmethod
    def default(cls) -> Persona:
        return cls(
            {"spec": "chara_card_v3", "spec_version": "3.0", "data": copy.deepcopy(DEFAULT_DATA)}
        )

    @classmethod
    def from_json(cls, text: str, where: str = "card") -> Persona:
        return cls.from_dict(parse_json(text, where), where)

    @classmethod
    def from_dict(cls, raw: Any, where: str = "card") -> Persona:
        if not isinstance(raw, dict):
            raise InvalidInput(f"{where} must be a JSON object")
        _check_strings(raw, where)
        # V2/V3 wrap the fields in "data"; V1 cards have them at the top level.
        card: dict[str, Any] = (
            copy.deepcopy(raw)
            if isinstance(raw.get("data"), dict)
            else {"spec": "chara_card_v3", "spec_version": "3.0", "data": copy.deepcopy(raw)}
        )
        data: dict[str, Any] = card["data"]
        for name in TEXT_FIELDS:
            if name in data and not isinstance(data[name], str):
                raise InvalidInput(f"{where}: {name} must be text")
        if not str(data.get("name") or "").strip():
            raise InvalidInput(f"{where}: the card needs a name")
        extensions = data.setdefault("extensions", {})
        if not isinstance(extensions, dict):
            raise InvalidInput(f"{where}: extensions must be an object")
        own = extensions.setdefault("ankita", {})
        if not isinstance(own, dict):
            raise InvalidInput(f"{where}: extensions.ankita must be an object")
        for key, value in own.items():
            if key in SETTINGS:
                _check_setting(key, value)
        return cls(card)

    @property
    def data(self) -> dict[str, Any]:
        return dict(self.card["data"])

    def setting(self, name: str) -> str:
        own = self.card["data"].get("extensions", {}).get("ankita", {})
        return str(own.get(name, SETTINGS[name][1]))

    def set(self, key: str, value: str) -> Persona:
        """A copy with one field or setting changed (`ankita persona set KEY VALUE`)."""
        card = copy.deepcopy(self.card)
        validate_string(value, key, MAX_FIELD)
        if key in SETTINGS:
            _check_setting(key, value)
            card["data"].setdefault("extensions", {}).setdefault("ankita", {})[key] = value
        elif key in TEXT_FIELDS:
            if key == "name" and not value.strip():
                raise InvalidInput("the name cannot be empty")
            card["data"][key] = value
        else:
            raise InvalidInput(
                f"unknown field {key!r}; fields: {', '.join(TEXT_FIELDS + tuple(SETTINGS))}"
            )
        return Persona(card)

    def to_json(self) -> str:
        return json.dumps(self.card, ensure_ascii=False, indent=2)

    def fill(self, text: str, user: str) -> str:
        return text.replace("{{char}}", self.card["data"]["name"]).replace("{{user}}", user)

    def greeting(self, user: str, session: str = "") -> str:
        """The first message, or one of the card's alternate greetings: the same one for a
        session name every time (a stable choice, not a random one)."""
        data = self.card["data"]
        options = [str(data.get("first_mes") or "")] + [
            str(g) for g in data.get("alternate_greetings") or [] if isinstance(g, str) and g
        ]
        index = zlib.crc32(session.encode("utf-8")) % len(options) if session else 0
        return self.fill(options[index], user)

    def lore(self, recent: str, user: str, budget_tokens: int = LORE_BUDGET) -> list[str]:
        """The lorebook (`character_book`) entries whose keys appear in the recent turns
        (case-insensitively), and those marked constant, in the book's order, within a budget."""
        book = self.card["data"].get("character_book")
        entries = book.get("entries") if isinstance(book, dict) else None
        text, kept = recent.lower(), list[str]()
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or entry.get("enabled") is False:
                continue
            keys = [str(k).lower() for k in entry.get("keys") or [] if str(k).strip()]
            content = str(entry.get("content") or "").strip()
            if content and (entry.get("constant") or any(k in text for k in keys)):
                if estimate_tokens("\n".join([*kept, content])) > budget_tokens:
                    break
                kept.append(self.fill(content, user))
        return kept

    def examples(self, user: str, budget_tokens: int) -> str:
        """Whole example exchanges (`<START>` blocks) that fit their own budget, so long
        chats never push them out silently."""
        raw = self.fill(str(self.card["data"].get("mes_example") or ""), user)
        blocks = [b.strip() for b in raw.split("<START>") if b.strip()]
        kept: list[str] = []
        for block in blocks:
            if estimate_tokens("\n\n".join(kept + [block])) > budget_tokens:
                break
            kept.append(block)
        return "\n\n".join(kept)


MAX_FIELD = 100_000  # characters of one card field; a card is a prompt, not a book
MAX_DEPTH = 32


def _check_strings(value: Any, where: str, depth: int = 0) -> None:
    """Every key and string of a card, unknown fields included (they are kept and saved):
    valid Unicode, no control characters but newline and tab, and not nested without end."""
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{where}: nested more than {MAX_DEPTH} levels")
    if isinstance(value, str):
        validate_string(value, f"{where}: a field", MAX_FIELD)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key, where, depth + 1)
            _check_strings(item, where, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, where, depth + 1)


def _check_setting(key: str, value: Any) -> None:
    allowed = SETTINGS[key][0]
    if not isinstance(value, str) or not (value.strip() or key == "user_name"):
        raise InvalidInput(f"{key} must be text")
    if allowed is not None and value not in allowed:
        raise InvalidInput(f"{key} must be one of {', '.join(allowed)}, got {value!r}")


def load_persona(path: Path) -> Persona:
    if not path.exists():
        return Persona.default()
    return Persona.from_json(path.read_text(encoding="utf-8"), str(path))


def save_persona(persona: Persona, path: Path) -> None:
    """Written beside the target, then renamed: a crash never leaves half a card."""
    with replacing(path) as partial:
        partial.write_text(persona.to_json() + "\n", encoding="utf-8")


EXAMPLE_BUDGET = 300  # tokens kept for example exchanges, whatever the chat's length


def build_system_prompt(
    persona: Persona,
    user: str,
    memory_block: str = "",
    question: str | None = None,
    summary: str | None = None,
    lore: list[str] | None = None,
) -> str:
    """The one system prompt: who the companion is, how it talks, what it remembers, what it
    should ask. Chat, voice and channels all call this."""
    data = persona.card["data"]
    own = str(data.get("system_prompt") or "").strip()
    # Character Card V2: {{original}} stands for the front end's own prompt, which a card
    # may keep and add to; without it the card's prompt replaces Ankita's opening line.
    base = own.replace("{{original}}", DEFAULT_SYSTEM) if own else DEFAULT_SYSTEM
    caring, teasing = persona.setting("caring"), persona.setting("teasing")
    parts = [persona.fill(base, user)]
    for label, key in (
        ("About you", "description"),
        ("Your personality", "personality"),
        ("Scenario", "scenario"),
    ):
        if str(data.get(key) or "").strip():
            parts.append(f"{label}: {persona.fill(str(data[key]), user)}")
    parts.append(
        f"Style: answer in {persona.setting('language')}, in "
        f"{LENGTH_WORDS[persona.setting('reply_length')]}. Care for {user}: {caring}. "
        f"Teasing: {teasing}."
    )
    parts.append(
        "Memory: you have tools. Call remember when the user tells you something lasting "
        "about themselves or their world, forget when they ask you to, recall to look "
        "something up. Never claim to remember what is not in your memory."
    )
    examples = persona.examples(user, EXAMPLE_BUDGET)
    if examples:
        parts.append("Example exchanges (tone only, not facts):\n" + examples)
    if lore:
        parts.append("Background (from the card's lorebook):\n" + "\n".join(lore))
    if summary:
        parts.append("Earlier in this conversation (summary):\n" + summary)
    if memory_block:
        parts.append(memory_block)
    if question:
        parts.append(question)
    return "\n\n".join(parts)


def post_history(persona: Persona, user: str) -> dict[str, str] | None:
    """The card's post_history_instructions, as a system message to send after the history
    (where card authors mean them to stand), or None."""
    post = str(persona.card["data"].get("post_history_instructions") or "").strip()
    return {"role": "system", "content": persona.fill(post, user)} if post else None
