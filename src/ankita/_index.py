"""Index terms for candidate search (pure functions, no I/O).

A stored fact can change the decision for a new one only if one of these holds (each is a
necessary condition of some rule in `_decision`; see docs/scale.md):

- they share a content word, with the prefix rule (every lexical score and every lexical frame);
- one holds a content word whose opposite the other holds (opposites renamed into one slot);
- they are the same token sequence with one span of 1-3 tokens replaced (the `value` check,
  whose frame may be filler such as "my name is");
- both state the same single-valued attribute of the user (`_attributes`);
- their vectors are within the model's conflict line (searched separately, exactly).

So a fact is indexed under `c:<content word>`, `s:<slot key>` and `a:<attribute>`, and a
lookup asks for the
new fact's words (as exact terms and prefix ranges), their opposites and its slot keys.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

from ._attributes import attribute_keys
from ._disagree import OPPOSITE_OF, frame_sequence
from ._similarity import PREFIX_MIN
from ._text import STOP_WORDS, TEXT_CACHE, content_words, stem, tokens

MAX_SLOT = 3  # the `value` check looks at replaced spans of at most this many tokens
# Bumped whenever the words a text is filed under change (tokens, stemming, stop-words, terms):
# a store indexed by another version is refiled once when it is opened.
ANALYZER_VERSION = "2"


def _digest(parts: tuple[str, ...]) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).hexdigest()


@lru_cache(maxsize=TEXT_CACHE)
def slot_keys(text: str) -> frozenset[str]:
    """One key per (prefix, suffix) around every span of 1..3 tokens of the fact's frame."""
    seq = frame_sequence(text)
    keys = set()
    for i in range(len(seq)):
        for j in range(i + 1, min(i + MAX_SLOT, len(seq)) + 1):
            keys.add(_digest(seq[:i]) + _digest(seq[j:]))
    return frozenset(keys)


@lru_cache(maxsize=TEXT_CACHE)
def index_terms(text: str) -> frozenset[str]:
    """Every term a stored fact is filed under."""
    return frozenset({"c:" + w for w in content_words(text)}
                     | {"s:" + k for k in slot_keys(text)}
                     | {"a:" + k for k in attribute_keys(text)})


@dataclass(frozen=True)
class Lookup:
    """What to ask the index for one new fact."""

    exact: frozenset[str]
    prefixes: frozenset[str]  # terms whose stored extensions also count ("c:postgr" -> ...sql)


@lru_cache(maxsize=4096)
def lookup_for(text: str) -> Lookup:
    exact: set[str] = set(index_terms(text))
    prefixes: set[str] = set()
    words = content_words(text)
    for word in words:
        if len(word) >= PREFIX_MIN:
            prefixes.add("c:" + word)
            # Stored words that are a prefix of this one (postgres stored, postgresql new).
            exact.update("c:" + word[:n] for n in range(PREFIX_MIN, len(word)))
    # Opposites: a stored fact holding the opposite of one of our content words.
    raw = {t for t in tokens(text) if t not in STOP_WORDS}
    for token in set(words) | raw:
        for opposite in OPPOSITE_OF.get(token, ()):
            if opposite not in STOP_WORDS:
                exact.update({"c:" + opposite, "c:" + stem(opposite)})
    return Lookup(frozenset(exact), frozenset(prefixes))
