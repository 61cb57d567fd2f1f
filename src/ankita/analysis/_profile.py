"""One text's analysis: every per-text result the checks, the index and the decision read,
computed once per text and kept together (`TextProfile`).

An analysis of one text is a function of the text, marked `@per_text`; it becomes a field of
the text's profile, computed the first time it is read. A pair of texts is compared by
passing their profiles down, so nothing is derived twice; a function called with a plain
string finds the text's profile first (`profile_of`). Profiles are the one per-text cache:
a write compares one new text with about a hundred stored ones, and those come back write
after write.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property, lru_cache, wraps
from typing import TypeVar

from ankita._errors import ConfigError

T = TypeVar("T")


def _profiles_kept() -> int:
    """How many texts' profiles are kept: ANKITA_TEXT_CACHE, else 16384."""
    raw = os.environ.get("ANKITA_TEXT_CACHE", "").strip()
    if not raw:
        return 16384
    if not (raw.isascii() and raw.isdigit()) or not 1024 <= int(raw) <= 10_000_000:
        raise ConfigError(
            f"ANKITA_TEXT_CACHE must be a whole number from 1024 to 10000000, not {raw!r}"
        )
    return int(raw)


# Read at import: the bound of the one cache below (docs/index.md has its memory per text).
PROFILES_KEPT = _profiles_kept()


class TextProfile:
    """Everything read from one text, each part computed on first use and then kept.

    Immutable: its fields are set only by their analyses. The annotations below list them;
    each is filled by the `@per_text` function of that name, in the module that owns it."""

    text: str
    # What each analysis returns: read by mypy and by readers; filled in on first read.
    language: str
    stated: str
    tokens: tuple[str, ...]
    clauses: tuple[tuple[str, ...], ...]
    sentences: tuple[str, ...]
    statements: tuple[str, ...]
    content_words: frozenset[str]
    sorted_words: tuple[str, ...]
    token_stems: frozenset[str]
    names: frozenset[str]
    inner_names: frozenset[str]
    acronyms: frozenset[str]
    negated_words: frozenset[str]
    numbers_in: frozenset[str]
    core_size: int
    subject: str | None
    forms_of: frozenset[str]
    change_words: frozenset[str]
    change_scope: frozenset[str]
    frame_tokens: tuple[str, ...]
    frame_sequence: tuple[str, ...]
    content_set: frozenset[str]
    attributes: dict[str, tuple[str, ...]]
    split_on_connector: tuple[frozenset[str], frozenset[str]] | None
    passive: bool
    days_and_months: tuple[bool, bool]
    opposite_forms: frozenset[str]
    opposed_forms: frozenset[str]
    firm_names: frozenset[str]
    smallest_core: int
    word_heads: dict[str, tuple[str, ...]]
    one_claim: bool
    clause_units: tuple[TextProfile, ...]
    clause_cues: tuple[bool, frozenset[bool], frozenset[str], frozenset[str]]
    attribute_keys: frozenset[str]

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "text", text)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a TextProfile is immutable: cannot set {name!r}")

    def __repr__(self) -> str:
        return f"TextProfile({self.text!r})"


@lru_cache(maxsize=PROFILES_KEPT)
def profile_of(text: str) -> TextProfile:
    """The profile of `text`: the same object while it is kept, so each analysis runs once."""
    return TextProfile(text)


Text = str | TextProfile


def raw_text(text: Text) -> str:
    """The text itself, of a text or of its profile."""
    return text if isinstance(text, str) else text.text


def as_profile(text: Text) -> TextProfile:
    """The profile of a text, or the profile given."""
    return text if isinstance(text, TextProfile) else profile_of(text)


def per_text(fn: Callable[[str], T]) -> Callable[[Text], T]:
    """Make `fn`, an analysis of one text, a field of the text's profile: computed once per
    text, on first use. The returned function takes a text or its profile."""
    name = fn.__name__.lstrip("_")
    if name in vars(TextProfile):
        raise RuntimeError(f"two analyses named {name!r}")  # a programming error
    field: cached_property[T] = cached_property(lambda profile: fn(profile.text))
    field.__set_name__(TextProfile, name)
    setattr(TextProfile, name, field)

    @wraps(fn)
    def read(text: Text) -> T:
        profile = text if isinstance(text, TextProfile) else profile_of(text)
        value: T = getattr(profile, name)  # after the first read, a plain attribute
        return value

    return read


def kept_profiles() -> int:
    """How many profiles are held now (for the bench's memory figures)."""
    return profile_of.cache_info().currsize
