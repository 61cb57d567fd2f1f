"""Index terms for candidate search (pure functions, no I/O).

A stored fact can change the decision for a new one only if one of these holds (each is a
necessary condition of some rule in `_decision`; see docs/scale.md):

- they share a content word, with the prefix rule (every lexical score and every lexical frame);
- one holds a content word whose opposite the other holds (opposites renamed into one slot);
- they are the same token sequence with one span of 1-3 tokens replaced (the `value` check,
  whose frame may be filler such as "my name is");
- both state the same single-valued attribute of the user (`_attributes`);
- their vectors are within the model's conflict line (searched separately, exactly).

So a fact is filed under its content words, slot keys and attributes, in the tiers of
`index_terms`; a lookup (`lookup_for`) says which of them to ask for, and `Ask` is one question
to the store. docs/scale.md gives the argument for each tier.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ankita.analysis._attributes import attribute_keys
from ankita.analysis._disagree import (
    NARROW,
    OPPOSITE_OF,
    PEOPLE,
    change_words,
    core_size,
    droppable_stems,
    frame_sequence,
    mentions,
    negates,
    only_ends,
    opposed_forms,
    opposite_forms,
    slot_key,
    slotted,
    subject,
    value_slot_keys,
    value_spans,
)
from ankita.analysis._similarity import PREFIX_MIN, SHORT_FACT_WORDS
from ankita.analysis._text import (
    ACRONYM_MAX,
    TEXT_CACHE,
    WRITE_CACHE,
    acronyms,
    content_words,
    leading_name,
    names,
    statements,
    stem,
    tokens,
)

SLOT = "s:"  # a span a `value` finding could be read from
# The same, for a fact whose change only ends something ("I quit working on X"): two such facts
# never make a `value` finding (`_disagree.check_value`), so such a new fact skips them.
ENDED_SLOT = "se:"
POLAR_FLAG = "q:"  # filed if the fact negates or states a change
OPPOSITE_TAG = "p:"  # filed under each of its word forms that has an opposite
SUBJECT_TAG = "u:"  # filed under who the fact is about, when its first words say (`subject`)
# Filed if every clause of the fact is `name_bound`: between two such facts no change of state
# lifts the name rule.
NAME_BOUND = "nq:"

# Bumped whenever the words a text is filed under change (tokens, stemming, stop-words, terms):
# a store indexed by another version is refiled once when it is opened.
ANALYZER_VERSION = "19"


@lru_cache(maxsize=TEXT_CACHE)
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
    one side only (`_disagree.check_change_of_state`) and no name opening either side; so
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


@lru_cache(maxsize=WRITE_CACHE)
def index_terms(text: str) -> frozenset[str]:
    """Every term a stored fact is filed under: those of the whole text and of each of its
    clauses (`units`), since a clause of it may decide against a clause of a new fact; and,
    for the vector tier, `u:` who the whole text is about."""
    who = subject(text)
    every = units(text)
    # Only if every clause is: a clause that is not may meet a stated change in a clause of
    # the new fact through a change-of-state finding.
    flag = {NAME_BOUND} if all(name_bound(unit) for unit in every) else set()
    return frozenset().union(
        *(_unit_terms(unit) for unit in every), {SUBJECT_TAG + who} if who else (), flag
    )


def other_people(text: str) -> frozenset[str]:
    """The `u:` tags of facts that are about someone else than this fact, for any cosine
    (`_disagree.other_subjects`): for a fact about the user, every "my <person>" it does not
    name. Empty for any other fact (which of those differ depends on their text)."""
    if subject(text) != "self":
        return frozenset()
    # The very test `other_subjects` makes, so that nothing it keeps is dropped.
    return frozenset(f"{SUBJECT_TAG}my {p}" for p in PEOPLE if not mentions(p, text))


def _unit_terms(text: str) -> frozenset[str]:
    """`c:` each content word; `s:` slot keys; `a:` attributes; `n:` each firm name; `r:`
    initials runs. The same words again under `h<class>:` for each short class
    (`short_classes`), and, if the text holds no firm name (open to any fact sharing its
    words), under `o:` and `ho<class>:`. For the vector tier: `q:` if it negates or states a
    change, `p:` each word form that has an opposite. Word forms with an opposite count as
    content words here even when they are filler ("like"): a frame holds the opposites' slot
    on both sides, so a new fact's opposites group must find them."""
    slots = {w for w in opposite_forms(text) if any(slotted(w, o) for o in OPPOSITE_OF[w])}
    words = content_words(text) | slots | {stem(w) for w in slots}
    open_ = not named(text)
    fields = ["c:"] + (["o:"] if open_ else [])
    for cls in short_classes(text):
        fields += [f"h{cls}:", f"ho{cls}:"] if open_ else [f"h{cls}:"]
    return frozenset(
        {f + w for f in fields for w in words}
        | {(ENDED_SLOT if only_ends(text) else SLOT) + k for k in value_slot_keys(text)}
        | {"a:" + k for k in attribute_keys(text)}
        | {"n:" + w for w in firm_names(text)}
        | {"r:" + run for run in acronyms(text)}
        | ({POLAR_FLAG} if _shifts(text) else set())
        | {OPPOSITE_TAG + w for w in opposite_forms(text)}
    )


@dataclass(frozen=True)
class Group:
    """The stored words that match one word of the new fact: these exactly, and every
    extension of `ranges` (prefix rule, both ways) of at most `longest` characters, if set."""

    exact: frozenset[str]
    ranges: frozenset[str]
    longest: int | None = None


@dataclass(frozen=True)
class Ask:
    """Facts filed under one of `fields` + a word of at least `at_least` different groups; if
    `same_name`, only those that also meet one of the write's names; if `unless`, only those
    not filed under that term (docs/scale.md)."""

    fields: tuple[str, ...]
    groups: tuple[Group, ...]
    at_least: int = 1
    same_name: bool = False
    unless: str | None = None


@dataclass(frozen=True)
class Lookup:
    """What to ask the index for one new fact (docs/scale.md)."""

    specific: frozenset[str]  # attributes: any fact filed under one counts
    # Slot keys, each with the words of our span there (a stored span whose stop word is one
    # of them shares a word with ours, so it is not one value replaced by another), and
    # whether only stored spans of a wide frame count (`_disagree.value_spans`).
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


@lru_cache(maxsize=WRITE_CACHE)
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
    for i, j, wide in value_spans(text):
        key, span = slot_key(seq, i, j), frozenset(seq[i:j])
        if key in slots:  # a key asked twice: either span's rule
            span, wide = span & slots[key][0], wide and slots[key][1]
        slots[key] = (span, wide)
    return Lookup(
        frozenset({"a:" + k for k in attribute_keys(text)}),
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
    )


# A stored term extends a prefix when it sorts in [prefix, prefix + U+10FFFF): code point order,
# which both backends use for the terms column.
_TOP = "\U0010ffff"
# A word longer than this is read from this many letters on as one range of terms rather
# than one seek per prefix (a generated or compound name brings dozens of prefixes).
RUN = 8


@dataclass(frozen=True)
class Run:
    """Terms in [low, high) that count: one of `covered`, or one extending `extends` (of at
    most `longest` characters, if set)."""

    low: str
    high: str
    extends: str
    covered: frozenset[str]
    longest: int | None = None

    def counts(self, term: str) -> bool:
        return term in self.covered or (
            term != self.extends
            and term.startswith(self.extends)
            and (self.longest is None or len(term) <= self.longest)
        )


@lru_cache(maxsize=WRITE_CACHE)
def reads(field: str, group: Group) -> tuple[tuple[str, ...], tuple[Run, ...]]:
    """The terms to seek and the ranges to scan for the stored words of one group under one
    field: each exact word, and for each word of `ranges` the words extending it. A long
    word's range starts at its first RUN letters, and covers the exact words in it."""
    runs = []
    for word in sorted(group.ranges):
        low = field + word[:RUN] if len(word) > RUN else field + word
        high = field + word + _TOP
        runs.append(
            Run(
                low,
                high,
                field + word,
                frozenset(field + w for w in group.exact if low <= field + w < high),
                None if group.longest is None else len(field) + group.longest,
            )
        )
    covered = frozenset().union(*(run.covered for run in runs))
    # Cached: a common word's group comes back in many writes, under the same fields.
    return tuple(sorted(field + w for w in group.exact if field + w not in covered)), tuple(runs)


@dataclass(frozen=True)
class Question:
    """Everything one text asks the index (`_candidates`): facts answering one of `asks`, where
    an ask marked `same_name` counts only facts that answer one of `names` (whose `unless` is
    not read); and facts filed under `<field><key>#<tag>`, for one of `slot_fields` and one of
    `slots`' keys, with a tag that is not one of its words (after the `NARROW` mark, which
    does not count when the key is marked wide)."""

    asks: tuple[Ask, ...]
    names: tuple[Ask, ...] = ()
    slots: tuple[tuple[str, frozenset[str], bool], ...] = ()
    slot_fields: tuple[str, ...] = (SLOT, ENDED_SLOT)


class TermQuery:
    """The facts that answer some questions (`answer`).

    Three ways, each the cheapest for its asks:
    - every ask of one word, every name and every slot: one read of postings (`terms`,
      `ranges`), so that the statements are few and their shapes alike from write to write
      (the driver prepares each once), and each term is read once however many asks hold it;
    - an ask that counts words: counted by the store, one statement each, since a common
      word's postings are many and their count few;
    - an ask that counts only facts answering a name: from every term of those few facts.
    An ask's `unless` is read last, for the facts only such asks found: a flag may be filed by
    many facts, and few of them are candidates.

    What a posting of the read answers is a target: `FOUND` (the fact is a candidate), q >= 0
    (it answers a name of question q), or -2 - k: a candidate unless filed under the k-th term
    of `flags`.
    """

    FOUND = -1

    def __init__(self, questions: tuple[Question, ...]) -> None:
        self.questions = questions
        exact: dict[str, set[int]] = {}
        # (low, high) -> (target, the run whose terms count, else every term but those
        # ending in one of these after `low`)
        ranges: dict[tuple[str, str], list[tuple[int, Run | None, frozenset[str]]]] = {}
        # Each term some ask must not be filed under.
        self.flags = sorted({a.unless for q in questions for a in q.asks if a.unless is not None})
        for q, question in enumerate(questions):
            asks = [
                *(
                    (self.FOUND if a.unless is None else -2 - self.flags.index(a.unless), a)
                    for a in question.asks
                ),
                *((q, a) for a in question.names),
            ]
            for target, ask in asks:
                if ask.at_least > 1 or ask.same_name:
                    continue  # answered another way (`answer`)
                for field in ask.fields:
                    for group in ask.groups:
                        seeks, runs = reads(field, group)
                        for term in seeks:
                            exact.setdefault(term, set()).add(target)
                        for run in runs:
                            ranges.setdefault((run.low, run.high), []).append(
                                (target, run, frozenset())
                            )
            for key, words, wide in question.slots:
                # Every tag of the key but our words' (a slot asked twice: either's rule);
                # only those of wide frames, which sort before the narrow ones, if `wide`.
                # Kept as tags, not terms: one set serves every field.
                skip = words if wide else words.union([NARROW + w for w in words])
                for field in question.slot_fields:
                    head = f"{field}{key}#"
                    ranges.setdefault((head, head + (NARROW if wide else _TOP)), []).append(
                        (self.FOUND, None, skip)
                    )
        # Postings of a term that only finds candidates are read without the term: the store
        # returns each fact once, however many such terms it is filed under.
        self.found_terms = sorted(t for t, targets in exact.items() if targets == {self.FOUND})
        self.terms = sorted(t for t, targets in exact.items() if targets != {self.FOUND})
        self._exact = {term: tuple(exact[term]) for term in self.terms}
        keys = sorted(ranges)
        self._range_rules = [ranges[key] for key in keys]
        # With each range, the terms the store may leave out: those every rule of it excludes
        # (a slot key's tags that are our words), so that their postings are not read.
        self.ranges = [
            (low, high, _excluded(low, rules))
            for (low, high), rules in zip(keys, self._range_rules, strict=True)
        ]

    def answer(
        self,
        rows: list[tuple[str, str | None, int]],
        count: Callable[[Ask], set[str]],
        terms_of: Callable[[list[str], Sequence[str]], list[tuple[str, str]]],
        filed: Callable[[str, list[str]], set[str]],
    ) -> set[str]:
        """The facts answering the questions, from every (fact id, term, part) the store read:
        part -2 for one of `found_terms`, -1 for one of `terms`, else the number of the range
        in `ranges` (whose excluded terms it may or may not have left out). `count` asks the
        store for the facts meeting an ask that counts words, `terms_of` for every (fact id,
        term) of some facts under some fields, `filed` for those of some facts filed under a
        term."""
        found: set[str] = set()
        names: list[set[str]] = [set() for _ in self.questions]
        # For each flag: the candidates unless filed under it.
        unless: list[set[str]] = [set() for _ in self.flags]
        for fact_id, term, part in rows:
            if term is None:  # part -2
                found.add(fact_id)
                continue
            if part < 0:
                targets: Iterable[int] = self._exact.get(term, ())
            else:
                cut = len(self.ranges[part][0])  # a slot's tag follows its range's low
                targets = [
                    t
                    for t, run, skip in self._range_rules[part]
                    if (run.counts(term) if run else term[cut:] not in skip)
                ]
            for target in targets:
                (
                    found
                    if target == self.FOUND
                    else names[target]
                    if target >= 0
                    else unless[-2 - target]
                ).add(fact_id)
        for q, question in enumerate(self.questions):
            named = names[q]
            for ask in question.names:
                if ask.at_least > 1:
                    named |= _meeting({}, ask, count)
            # An ask marked same_name counts only facts that answer a name: read their terms
            # under its fields, rather than every posting of its words.
            fields = sorted({f for ask in question.asks if ask.same_name for f in ask.fields})
            held = terms_of(sorted(named), fields) if named and fields else []
            for ask in question.asks:
                if ask.same_name or ask.at_least > 1:
                    met = _meeting(_groups_met(held, ask) if ask.same_name else {}, ask, count)
                    (found if ask.unless is None else unless[self.flags.index(ask.unless)]).update(
                        met
                    )
        for flag, maybe in zip(self.flags, unless, strict=True):
            maybe -= found
            if maybe:
                found |= maybe - filed(flag, sorted(maybe))
        return found


def _excluded(low: str, rules: list[tuple[int, Run | None, frozenset[str]]]) -> list[str]:
    if len(rules) == 1:  # most ranges: one slot key, or one word's run
        return [] if rules[0][1] is not None else [low + t for t in sorted(rules[0][2])]
    if any(run is not None for _, run, _ in rules):
        return []
    return [low + t for t in sorted(frozenset.intersection(*(skip for _, _, skip in rules)))]


def _meeting(
    groups_of: dict[str, set[int]], ask: Ask, count: Callable[[Ask], set[str]]
) -> set[str]:
    """The facts meeting the ask: those among `groups_of` (each fact's groups met) that met
    enough, or, for an ask that counts words with no `groups_of` given, the store's count."""
    if ask.same_name or ask.at_least <= 1:
        return {f for f, groups in groups_of.items() if len(groups) >= max(1, ask.at_least)}
    return count(ask) if ask.at_least <= len(ask.groups) and ask.fields else set()


def _groups_met(rows: list[tuple[str, str]], ask: Ask) -> dict[str, set[int]]:
    """For each fact of `rows` (fact id, term), the groups of the ask one of its terms meets."""
    exact: dict[str, list[int]] = {}
    starts: dict[str, list[int]] = {}
    for g, group in enumerate(ask.groups):
        for word in group.exact:
            exact.setdefault(word, []).append(g)
        for word in group.ranges:
            starts.setdefault(word, []).append(g)
    # A word extends a start when its first len(start) characters are the start.
    lengths = sorted({len(start) for start in starts})
    longest = [math.inf if group.longest is None else group.longest for group in ask.groups]
    met: dict[str, set[int]] = {}
    for fact_id, term in rows:
        for field in ask.fields:
            if not term.startswith(field):
                continue
            word = term[len(field) :]
            groups = [
                *exact.get(word, ()),
                *(
                    g
                    for n in lengths
                    if len(word) > n
                    for g in starts.get(word[:n], ())
                    if len(word) <= longest[g]
                ),
            ]
            if groups:
                met.setdefault(fact_id, set()).update(groups)
    return met
