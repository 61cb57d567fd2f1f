"""Index terms for candidate search (pure functions, no I/O).

A stored fact can change the decision for a new one only if one of these holds (each is a
necessary condition of some rule in `_decision`; see docs/index.md):

- they share a content word, with the prefix rule (every lexical score and every lexical frame);
- one holds a content word whose opposite the other holds (opposites renamed into one slot);
- they are the same token sequence with one span of 1-3 tokens replaced (the `value` check,
  whose frame may be filler such as "my name is");
- both state the same single-valued attribute of the user (`_attributes`);
- their vectors are within the model's conflict line (searched separately, exactly).

So a fact is filed under its content words, slot keys and attributes, in the tiers of
`index_terms`; a lookup (`lookup_for`) says which of them to ask for, and `Ask` is one question
to the store. docs/index.md gives the argument for each tier.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ankita.analysis._attributes import attribute_keys
from ankita.analysis._change import (
    change_words,
    only_ends,
)
from ankita.analysis._cues import (
    OPPOSITE_OF,
    PEOPLE,
    core_size,
    droppable_stems,
    negates,
    slotted,
)
from ankita.analysis._disagree import (
    opposed_forms,
    opposite_forms,
)
from ankita.analysis._gates import frames_may_reach
from ankita.analysis._profile import per_text
from ankita.analysis._similarity import PREFIX_MIN, SHORT_FACT_WORDS
from ankita.analysis._slots import (
    frame_sequence,
    slot_keys,
    value_slot_keys,
    value_spans,
)
from ankita.analysis._subjects import (
    mentions,
    names_subject,
    owner_and_owned,
    subject,
)
from ankita.analysis._text import (
    ACRONYM_MAX,
    acronyms,
    content_words,
    leading_name,
    names,
    sentences,
    statements,
    stem,
    tokens,
)
from ankita.store._ask import SIZE, Group


class Field:
    """The kinds of index terms: a term is its kind's prefix and a word or a key (the prefixes
    are what stores hold, so they never change without an `ANALYZER_VERSION` bump)."""

    WORD = "c:"  # each content word of the fact and of each clause (prefix rule)
    OPEN_WORD = "o:"  # the same, for a fact that holds no firm name (open to any fact)
    NAME = "n:"  # each firm name
    INITIALS = "r:"  # runs of capitals a name may be the acronym of
    ATTRIBUTE = "a:"  # a single-valued attribute of the user (`_attributes`)
    SLOT = "s:"  # a span a `value` finding could be read from
    # The same, for a fact whose change only ends something ("I quit working on X"): two such
    # facts never make a `value` finding (`_slots.check_value`), so such a new fact skips them.
    ENDED_SLOT = "se:"
    # Each content word again, for a fact whose change only ends something: an ending meets
    # the fact asserting what ended on one shared word (`_gates.could_conflict`).
    ENDS = "ed:"
    POLAR = "q:"  # filed if the fact negates or states a change
    OPPOSITE = "p:"  # filed under each of its word forms that has an opposite
    SUBJECT = "u:"  # filed under who the fact is about, when its first words say (`subject`)
    # Filed if every clause of the fact is `name_bound`: between two such facts no change of
    # state lifts the name rule.
    NAME_BOUND = "nq:"
    # The smallest core size of the fact's parts (`smallest_core`): a long fact needs more
    # shared words to decide against another long one (`groups_needed`).
    CORE = SIZE

    @staticmethod
    def short(core_class: str, open_: bool = False) -> str:
        """A short fact's words again, under its class (`short_classes`); `open_` as for
        OPEN_WORD."""
        return f"ho{core_class}:" if open_ else f"h{core_class}:"


# Bumped whenever the words a text is filed under change (tokens, stemming, stop-words, terms):
# a store indexed by another version is refiled once when it is opened.
ANALYZER_VERSION = "28"


@per_text
def firm_names(text: str) -> frozenset[str]:
    """Names no finding can take out of a frame or rename: not a number, day, month or change
    word, and without an opposite. Two facts each holding one the other lacks never conflict
    through their frames (`_decision.names_apart`)."""
    drop = droppable_stems() | _with_opposite()
    return frozenset(n for n in names(text) if n not in drop and not n[:1].isdigit())


@lru_cache(maxsize=1)
def _with_opposite() -> frozenset[str]:
    return frozenset(OPPOSITE_OF) | frozenset(stem(w) for w in OPPOSITE_OF)


def named(text: str) -> bool:
    """Holds a firm name and states no change, or only one that ends something, or opens
    with a name: a change that replaces a value between two named things may be one thing
    changing ("I live in Toronto" / "I moved to Montreal"), which the name rule of `_decision`
    leaves alone, so such a fact is open to every fact sharing its words. An ending ("I quit
    working on Apollo") names what ended, and a name that opens the fact is its subject
    ("Anna moved to Lyon"): the name rule holds for both."""
    return bool(firm_names(text)) and (
        not change_words(text) or only_ends(text) or leading_name(text)
    )


def name_bound(text: str) -> bool:
    """Holds a firm name, and states a change (any) or opens with a name. The name rule is
    lifted for a change only through a change-of-state finding, which needs a change stated on
    one side only (`_change.check_change_of_state`) and no name opening either side; so
    between two such facts only a value or an attribute finding may treat their names as
    values, and the name rule holds for them as for two named facts."""
    return bool(firm_names(text)) and (bool(change_words(text)) or leading_name(text))


def is_short(text: str) -> bool:
    """At most SHORT_FACT_WORDS words no finding can take out: may link on one shared word."""
    return core_size(text) <= SHORT_FACT_WORDS


def short_core(text: str) -> int | None:
    """The core size (at least 1) of a short fact; None if the fact is not short."""
    return max(1, core_size(text)) if is_short(text) else None


def short_classes(text: str) -> tuple[str, ...]:
    """The classes a short fact is filed under: its core size, and `n` if it negates or
    states a change. Empty for a fact that is not short."""
    core = short_core(text)
    if core is None:
        return ()
    return (str(core),) + (("n",) if _shifts(text) else ())


def _shifts(text: str) -> bool:
    return negates(text) or bool(change_words(text))


def short_partners(core: int, shifts: bool, conflict_line: float) -> tuple[str, ...]:
    """The classes of short facts that may decide against a short fact of this core size (at
    least 1) on one shared word.

    With one shared word, a finding makes a conflict only if its frames (each at least the
    fact's core, and at least the shared word) reach the conflict line: by the short-fact link
    when a negation or a stated change is found, which needs one of them on either side; else
    by Jaccard 1 / (a + b - 1) >= line, so a + b <= 1 + 1 / line. A merge on one shared word
    needs one word each. (Value, attribute and vector findings have tiers of their own.)"""
    if shifts:
        return ("1", "2", "3")
    fits = tuple(str(k) for k in (1, 2, 3) if core + k <= 1 + 1 / conflict_line + 1e-9)
    return (*fits, "n")


def units(text: str) -> tuple[str, ...]:
    """The texts a fact is compared as: the whole, and each clause of a text that has several
    (`_decision.clause_conflict`)."""
    return (text, *statements(text))


def index_terms(text: str) -> frozenset[str]:
    """Every term a stored fact is filed under: those of the whole text and of each of its
    clauses (`units`), since a clause of it may decide against a clause of a new fact; and,
    for the vector tier, `u:` who the whole text is about."""
    who = subject(text)
    every = units(text)
    # Only if every clause is: a clause that is not may meet a stated change in a clause of
    # the new fact through a change-of-state finding.
    flag = {Field.NAME_BOUND} if all(name_bound(unit) for unit in every) else set()
    return frozenset().union(
        *(_unit_terms(unit) for unit in every),
        {Field.SUBJECT + who} if who else (),
        flag,
        {Field.CORE + str(smallest_core(text))},
    )


@per_text
def smallest_core(text: str) -> int:
    """The least core size among the parts a comparison may read of this text: the whole,
    each clause (`units`) and each sentence (`_similarity.lexical_score`)."""
    return min(core_size(part) for part in (*units(text), *sentences(text)))


@lru_cache(maxsize=256)
def groups_needed(core: int, conflict_line: float) -> tuple[int, ...]:
    """For a new text whose parts keep at least `core` words: how many of its words (at least
    two) a stored fact whose parts keep at least k words must share for their frames to reach
    the line (`_gates.frames_may_reach`), for k = 0, 1, ...; the last entry holds for any
    larger k. Containment makes max(2, min(core, k)) always enough, and the count only grows
    with k, so the table stops where it reaches max(2, core) past the short-fact link."""
    table: list[int] = []
    while len(table) <= 2 * SHORT_FACT_WORDS or table[-1] < max(2, core):
        k = len(table)
        enough = max(2, min(core, k))
        table.append(
            next(
                (s for s in range(2, enough) if frames_may_reach(s, core, k, conflict_line)), enough
            )
        )
    return tuple(table)


def other_people(text: str) -> frozenset[str]:
    """The `u:` tags of facts that are about someone else than this fact, for any cosine
    (`_subjects.other_subjects`): for a fact about the user, every "my <person>" it does not
    name. Empty for any other fact (which of those differ depends on their text)."""
    if subject(text) != "self":
        return frozenset()
    # The very test `other_subjects` makes, so that nothing it keeps is dropped.
    return frozenset(f"{Field.SUBJECT}my {p}" for p in PEOPLE if not mentions(p, text))


def named_apart_under(text: str) -> Callable[[str], bool] | None:
    """For a fact that opens with a name: which `u:` terms file stored facts that are
    `_gates.named_apart` from it whatever else they say (they open with another name, which
    this fact does not name). None for any other fact."""
    who = subject(text)
    if who is None or not who.startswith("name "):
        return None
    own, named = Field.SUBJECT + who, Field.SUBJECT + "name "
    return lambda term: (
        term.startswith(named)
        and term != own
        and not names_subject(term[len(Field.SUBJECT) :], text)
        and not owner_and_owned(term[len(Field.SUBJECT) :], who)
    )


def _unit_terms(text: str) -> frozenset[str]:
    """`Field.WORD` each content word; `SLOT` slot keys; `ATTRIBUTE` attributes; `NAME` each
    firm name; `INITIALS` initials runs. The same words again under `Field.short(class)` for
    each short class (`short_classes`), and, if the text holds no firm name (open to any fact
    sharing its words), under `OPEN_WORD` and `Field.short(class, open_=True)`. For the vector
    tier: `POLAR` if it negates or states a change, `OPPOSITE` each word form that has an
    opposite. Word forms with an opposite count as
    content words here even when they are filler ("like"): a frame holds the opposites' slot
    on both sides, so a new fact's opposites group must find them."""
    slots = {w for w in opposite_forms(text) if any(slotted(w, o) for o in OPPOSITE_OF[w])}
    words = content_words(text) | slots | {stem(w) for w in slots}
    open_ = not named(text)
    fields = [Field.WORD] + ([Field.OPEN_WORD] if open_ else [])
    for cls in short_classes(text):
        fields += [Field.short(cls), Field.short(cls, True)] if open_ else [Field.short(cls)]
    if only_ends(text):
        fields.append(Field.ENDS)
    return frozenset(
        {f + w for f in fields for w in words}
        | {(Field.ENDED_SLOT if only_ends(text) else Field.SLOT) + k for k in value_slot_keys(text)}
        | ({Field.ENDS} if only_ends(text) else set())
        | {Field.ATTRIBUTE + k for k in attribute_keys(text)}
        | {Field.NAME + w for w in firm_names(text)}
        | {Field.INITIALS + run for run in acronyms(text)}
        | ({Field.POLAR} if _shifts(text) else set())
        | {Field.OPPOSITE + w for w in opposite_forms(text)}
    )


@dataclass(frozen=True)
class Lookup:
    """What to ask the index for one new fact (docs/index.md)."""

    specific: frozenset[str]  # attributes: any fact filed under one counts
    # Slot keys, each with the words of our span there (a stored span whose stop word is one
    # of them shares a word with ours, so it is not one value replaced by another), and
    # whether only stored spans of a wide frame count (`_slots.value_spans`).
    slots: tuple[tuple[str, frozenset[str], bool], ...]
    groups: tuple[Group, ...]  # one per content word, and one for all their opposites
    name_groups: tuple[Group, ...]  # its firm names
    # Names that may be an acronym of the other's capitalised words, and our own initials.
    acronym_groups: tuple[Group, ...]  # under r:
    initials_groups: tuple[Group, ...]  # under n:
    short: int | None  # `short_core`: its core size if it is short (`short_partners`)
    shifts: bool  # negates or states a change
    named: bool  # holds a firm name (`named`)
    name_bound: bool  # holds a firm name, and states a change or opens with a name
    ends: bool  # states a change that only ends something (`only_ends`)
    opposed: frozenset[str]  # word forms whose opposite it holds (`opposed_forms`)
    opposed_slot: bool  # holds a word form with an opposite: `groups` ends with their group


def _group(words: set[str]) -> Group:
    exact, ranges = set(words), set()
    for word in words:
        if len(word) >= PREFIX_MIN:
            ranges.add(word)
            # Stored words that are a prefix of this one (postgres stored, postgresql new).
            exact.update(word[:n] for n in range(PREFIX_MIN, len(word)))
    return Group(frozenset(exact), frozenset(ranges))


def _opposites(tokens_: set[str]) -> set[str]:
    out: set[str] = set()
    for token in tokens_:
        for opposite in OPPOSITE_OF.get(token, ()):
            if slotted(token, opposite):
                out |= {opposite, stem(opposite)}
    return out


def lookup_for(text: str) -> Lookup:
    words = content_words(text)
    # Opposites count as one more shared slot (frames rename them), at most one per pair.
    raw = set(tokens(text))
    opposite = _opposites(set(words) | raw | {stem(t) for t in raw})
    groups = [_group({w}) for w in sorted(words)] + ([_group(opposite)] if opposite else [])
    # Only firm names: a fact lacking one of our firm names while we lack one of its firm names
    # is about something else (`_decision.names_apart`), whatever else the two share.
    own = firm_names(text)
    name_groups = [_group(set(own))] if own else []
    seq = frame_sequence(text)
    slots: dict[str, tuple[frozenset[str], bool]] = {}
    key_of = slot_keys(seq)
    for i, j, wide in value_spans(text):
        key, span = key_of(i, j), frozenset(seq[i:j])
        if key in slots:  # a key asked twice: either span's rule
            span, wide = span & slots[key][0], wide and slots[key][1]
        slots[key] = (span, wide)
    return Lookup(
        frozenset({Field.ATTRIBUTE + k for k in attribute_keys(text)}),
        tuple(sorted((k, *v) for k, v in slots.items())),
        tuple(groups),
        tuple(name_groups),
        tuple(
            Group(frozenset(n[:k] for k in range(max(2, len(n) - 1), len(n) + 1)), frozenset())
            for n in own
            if len(n) <= ACRONYM_MAX
        ),
        # A name counts as our initials with at most one more letter, and up to
        # ACRONYM_MAX letters (`_decision._initials_of`).
        tuple(
            Group(frozenset({run}), frozenset({run}), min(ACRONYM_MAX, len(run) + 1))
            for run in acronyms(text)
            if len(run) <= ACRONYM_MAX
        ),
        short_core(text),
        _shifts(text),
        named(text),
        name_bound(text),
        only_ends(text),
        opposed_forms(text),
        bool(opposite),
    )
