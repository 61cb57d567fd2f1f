"""A fact's parse kept with the fact: read back before a comparison needs it, written once
the write has it, so a stored fact is parsed once in its life, not once per process."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ankita._models import Fact
from ankita.analysis._propositions import decode, encode, known, parser_id, seed
from ankita.store._sql import SQLStore


def digest(text: str) -> str:
    """The text a stored parse was read from: a fact whose text changed is read again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def read_stored(store: SQLStore, facts: Sequence[Fact]) -> set[str]:
    """Give the parser what it read in these facts before; the ids whose parse was stored."""
    rows = store.parses_of([f.id for f in facts], parser_id())
    stored = set()
    for fact in facts:
        row = rows.get(fact.id)
        if row is not None and row[0] == digest(fact.text):
            stored.add(fact.id)
            if known(fact.text) is None:
                seed(fact.text, decode(row[1]))
    return stored


def keep_new(store: SQLStore, facts: Sequence[tuple[str, str]], stored: set[str]) -> None:
    """Store the parse of each (id, text) that was parsed and is not stored yet."""
    rows = []
    for fact_id, text in facts:
        found = known(text) if fact_id not in stored else None
        if found is not None:
            rows.append((fact_id, parser_id(), digest(text), encode(found)))
    if rows:
        store.put_parses(rows)
