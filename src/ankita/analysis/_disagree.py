"""What differs between two related facts (SPEC §4.3): pure, deterministic, explainable.

Each check returns `Finding`s with a readable detail. A finding blocks a merge; together with a
shared frame it is the evidence for a conflict.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ankita.analysis._attributes import attribute_conflicts, attribute_keys
from ankita.analysis._lexicon import FUNCTION_WORDS, NEGATIONS, STOP_WORDS
from ankita.analysis._similarity import SHORT_FACT_WORDS, match_words, words_match
from ankita.analysis._text import (
    TEXT_CACHE,
    WRITE_CACHE,
    clauses,
    content_words,
    inner_names,
    leading_name,
    names,
    number_value,
    sentences,
    statements,
    stem,
    tokens,
)


@dataclass(frozen=True)
class Finding:
    """One reason the two facts disagree."""

    check: str  # negation | numbers | days | months | swapped | order | opposites | ...
    # "different" (a replaced word in a multi-valued frame) blocks a merge but is no conflict.
    detail: str
    words: tuple[str, ...] = ()  # the disagreeing words; the rest of the facts is the frame

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


# A fact of more content words than this states more than one thing: cosine no longer says
# "the same subject", and a swap of two of its words is no swap of roles (SPEC §4.4).
CLAIM_WORDS = 6

_CLAUSE_END = {"but", "though", "although", "however", "while", "whereas", "yet", "because"}
_SUBJECTS = frozenset({"i", "you", "he", "she", "we", "they"})
_NEGATION_PHRASES = (("no", "longer"), ("no", "more"))

CHANGE_OF_STATE = frozenset(
    {
        "moved",
        "move",
        "moving",
        "switched",
        "switch",
        "switching",
        "quit",
        "quitting",
        "stopped",
        "stop",
        "anymore",
        "now",
        "nowadays",
        "changed",
        "replaced",
        "former",
        "formerly",
        "ex",
        "instead",
        "relocated",
        "left",
        "retired",
        "divorced",
        "became",
        "started",
        "began",
        "again",
        "become",
        "converted",
        "migrated",
        "dropped",
        "abandoned",
        "ditched",
    }
)
_CHANGE_PHRASES = (
    ("no", "longer"),
    ("no", "more"),
    ("used", "to"),
    ("any", "more"),
    ("give", "up"),
    ("gave", "up"),
    ("giving", "up"),
    ("given", "up"),
    ("these", "days"),
    ("not", "anymore"),
)
# Change words that only end something ("I quit X"), as against those that replace it ("I
# moved to X", "I switched to X"): an ending names what ended, not what came instead.
ENDING = frozenset(
    {
        "quit",
        "quitting",
        "stopped",
        "stop",
        "anymore",
        "left",
        "retired",
        "dropped",
        "abandoned",
        "ditched",
        "former",
        "formerly",
        "ex",
        "no longer",
        "no more",
        "any more",
        "give up",
        "gave up",
        "giving up",
        "given up",
        "not anymore",
        "used to",
    }
)

_OPPOSITES = [
    ("love", "hate"),
    ("like", "dislike"),
    ("like", "hate"),
    ("light", "dark"),
    ("early", "late"),
    ("morning", "evening"),
    ("morning", "night"),
    ("day", "night"),
    ("hot", "cold"),
    ("warm", "cold"),
    ("always", "never"),
    ("remote", "office"),
    ("home", "office"),
    ("open", "closed"),
    ("empty", "fill"),
    ("win", "lose"),
    ("won", "lost"),
    ("happy", "sad"),
    ("big", "small"),
    ("large", "small"),
    ("tall", "short"),
    ("old", "young"),
    ("old", "new"),
    ("introvert", "extrovert"),
    ("sweet", "savory"),
    ("summer", "winter"),
    ("true", "false"),
    ("enable", "disable"),
    ("agree", "disagree"),
    ("before", "after"),
    ("more", "less"),
    ("increase", "decrease"),
    ("buy", "sell"),
    ("married", "single"),
    ("married", "divorced"),
    ("employed", "unemployed"),
    ("full", "part"),
    ("left", "right"),
    ("tabs", "spaces"),
    ("window", "aisle"),
    ("vegetarian", "meat"),
    ("vegan", "meat"),
    ("allow", "forbid"),
    ("accept", "reject"),
    ("easy", "hard"),
    ("fast", "slow"),
    ("cheap", "expensive"),
    ("rich", "poor"),
    ("loud", "quiet"),
    ("wet", "dry"),
    ("male", "female"),
    ("man", "woman"),
    ("boy", "girl"),
    ("rarely", "often"),
    ("clean", "dirty"),
    ("healthy", "sick"),
    ("awake", "asleep"),
    ("inside", "outside"),
    ("sitting", "standing"),
    ("up", "down"),
    ("start", "finish"),
    ("arrive", "leave"),
    ("push", "pull"),
    ("emptying", "filling"),
    ("into", "out"),
    ("onto", "off"),
    ("on", "off"),
    ("in", "out"),
    ("removed", "on"),
    ("climbing", "down"),
    ("love", "dislike"),
    ("enjoy", "hate"),
    ("enjoy", "dislike"),
    ("sunrise", "sunset"),
]
# Opposites that place something in time or space rather than name a value.
_PARTICLES = frozenset(
    {
        "before",
        "after",
        "in",
        "out",
        "on",
        "off",
        "up",
        "down",
        "into",
        "onto",
        "inside",
        "outside",
        "early",
        "late",
    }
)
OPPOSITE_OF: dict[str, set[str]] = {}
for _x, _y in _OPPOSITES:
    OPPOSITE_OF.setdefault(_x, set()).add(_y)
    OPPOSITE_OF.setdefault(_y, set()).add(_x)

# A different value after these verbs is a second value, not a replacement ("I like jazz" and
# "I like blues" are both true); after "live in" or "is called" it replaces the first.
MULTI_VALUED = frozenset(
    {
        "like",
        "love",
        "enjoy",
        "have",
        "has",
        "had",
        "play",
        "plays",
        "playing",
        "listen",
        "listening",
        "watch",
        "watching",
        "read",
        "reading",
        "speak",
        "know",
        "visit",
        "visited",
        "own",
        "collect",
        "eat",
        "eating",
        "drink",
        "cook",
        "also",
        "too",
        "another",
        "both",
        "friend",
        "friends",
        "fan",
        "and",
        "or",
        "sometimes",
        "some",
        "allergic",
        "prefer",
        "prefers",
        "learning",
        "learn",
        "study",
        "studying",
        # People one mostly has several of: naming one does not unname another.
        "colleague",
        "colleagues",
        "coworker",
        "coworkers",
        "neighbour",
        "neighbours",
        "neighbor",
        "neighbors",
        "cousin",
        "cousins",
        "classmate",
        "classmates",
    }
)
# One person a fact may be about instead of the user ("My colleague lives in Porto"); groups
# ("my parents") may include the one the other fact names.
PEOPLE = frozenset(
    {
        "sister",
        "brother",
        "mother",
        "mom",
        "mum",
        "father",
        "dad",
        "wife",
        "husband",
        "partner",
        "girlfriend",
        "boyfriend",
        "fiance",
        "fiancee",
        "son",
        "daughter",
        "kid",
        "child",
        "aunt",
        "uncle",
        "grandma",
        "grandmother",
        "grandpa",
        "grandfather",
        "cousin",
        "friend",
        "colleague",
        "coworker",
        "boss",
        "manager",
        "neighbour",
        "neighbor",
        "roommate",
        "flatmate",
        "classmate",
        "teacher",
        "doctor",
        "dentist",
        "mentor",
        "landlord",
    }
)
_WEAK_MULTI = frozenset({"use", "uses", "using", "try", "tried"})
_ADDITIVE = frozenset({"too", "also", "another", "as", "both", "additionally", "second"})
# Either kind: a frame holding one may hold several values, so none replaces another.
_MANY = MULTI_VALUED | _ADDITIVE
_CONNECTORS = (
    ("over",),
    ("rather", "than"),
    ("instead", "of"),
    ("than",),
    ("vs",),
    ("versus",),
    ("not",),
)
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
_MONTHS = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
}
_WEEKDAY_STEMS = frozenset(stem(w) for w in _WEEKDAYS)
_MONTH_STEMS = frozenset(stem(w) for w in _MONTHS)
_ARTICLES = {"a", "an", "the", "some", "my", "our", "his", "her", "their", "your"}
# Words between an opposite and what it modifies: "every morning", "this evening".
_DETERMINERS = _ARTICLES | {
    "every",
    "each",
    "this",
    "that",
    "these",
    "those",
    "last",
    "next",
    "all",
    "both",
}


def _has_phrase(toks: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(toks[i : i + n] == phrase for i in range(len(toks) - n + 1))


@lru_cache(maxsize=TEXT_CACHE)
def _negated_words(text: str) -> frozenset[str]:
    """Content words inside the scope of a negation: from the cue to the end of its clause."""
    scoped: set[str] = set()
    for clause in clauses(text):
        inside = False
        for i, word in enumerate(clause):
            # A new subject opens a new clause: "when I am not reading I work as a guide".
            if word in _CLAUSE_END or (word in _SUBJECTS and inside):
                inside = False
            if word in NEGATIONS:
                # "no longer"/"no more" are change of state, read by their own check.
                if (
                    word == "no"
                    and i + 1 < len(clause)
                    and clause[i + 1] in {"longer", "more", "matter", "doubt"}
                ):
                    continue
                inside = True
                # "nobody", "nothing": the negated thing is the subject; the rest is scope.
                continue
            if inside and word not in STOP_WORDS:
                scoped.add(stem(word))
    return frozenset(scoped)


def negates(text: str) -> bool:
    """Holds a negation with content words in its scope."""
    return bool(_negated_words(text))


def check_negation(a: str, b: str) -> list[Finding]:
    """A negation on one side only, whose scope covers words the two facts share."""
    neg_a, neg_b = _negated_words(a), _negated_words(b)
    if not neg_a and not neg_b:
        return []
    matches = match_words(content_words(a), content_words(b))
    shared_a = {x for x, _ in matches}
    shared_b = {y for _, y in matches}
    hit_a = {w for w in neg_a if any(words_match(w, s) for s in shared_a)}
    hit_b = {w for w in neg_b if any(words_match(w, s) for s in shared_b)}
    only = hit_a ^ hit_b if (bool(hit_a) != bool(hit_b)) else set()
    if not only:
        return []
    side = "first" if hit_a else "second"
    return [Finding("negation", f"the {side} fact negates '{' '.join(sorted(only))}'")]


@lru_cache(maxsize=TEXT_CACHE)
def _numbers(text: str) -> frozenset[str]:
    toks = tokens(text)
    return frozenset(v for i in range(len(toks)) if (v := number_value(toks, i)) is not None)


@lru_cache(maxsize=1)
def droppable_stems() -> frozenset[str]:
    words = set(CHANGE_OF_STATE) | {w for p in _CHANGE_PHRASES for w in p}
    return frozenset(stem(w) for w in words) | _WEEKDAY_STEMS | _MONTH_STEMS


@lru_cache(maxsize=TEXT_CACHE)
def core_size(text: str) -> int:
    """Content words a finding can never take out of the frame: all but numbers, days,
    months and change-of-state words. Lower bound on the frame's size (for the gate)."""
    drop = droppable_stems()
    return sum(1 for w in content_words(text) if w not in drop and not any(c.isdigit() for c in w))


def slotted(word: str, opposite: str) -> bool:
    """Do two opposite words name one slot of a frame? Not when both are function words
    (in/out): those never relate two facts alone. "like" / "hate" do."""
    return word not in STOP_WORDS or opposite not in STOP_WORDS


# Capitalised words that open a chat turn without naming anyone ("Haha, ...", "Wow I ...").
_INTERJECTIONS = frozenset(
    """
haha hahaha lol wow oh ooh hey hi hello yeah yes yep nope ok okay well hmm omg aw aww ah
sure thanks cool nice great awesome honestly really actually sorry um uh totally definitely
""".split()
)
_PERSONAL = frozenset(
    {"i", "me", "my", "mine", "myself", "you", "your", "yours", "we", "us", "our"}
)
_LEADING_WORD = re.compile(r"\s*([^\W_]+)('s\b|\u2019s\b)?(\s*[,!?.:;])?")


@lru_cache(maxsize=TEXT_CACHE)
def subject(text: str) -> str | None:
    """Who a fact is about, when its first words say: "self" ("I ..."), "my <person>" ("My
    best friend ...", "My sister ..."), or "name <name>" for a fact that opens with a name
    ("Caroline is learning the piano"; "Locker 12 ..." keeps its number, which tells one
    locker from another). None when they do not (a thing, "My favourite colour ...", a name
    owning something, "Anna's sister ...", or a pronoun, which in a chat turn may stand for
    anything)."""
    toks = tokens(text)
    if not toks:
        return None
    if toks[0] == "i":
        return "self"
    if toks[0] in ("my", "our"):
        person = next((w for w in toks[1:3] if w in PEOPLE), None)
        return f"my {person}" if person else None
    first = _LEADING_WORD.match(unicodedata.normalize("NFKC", text))
    # Only a fact in the third person: in "Sounds fun! I love board games" the speaker is the
    # subject, and a capital that opens a chat turn is mostly no name. A name followed by
    # punctuation is an address or an interjection ("Anna, ..."), and "Enjoying ..." a verb.
    if (
        first
        and not first.group(2)
        and not first.group(3)
        and leading_name(text)
        and toks[0] not in _INTERJECTIONS
        and not toks[0].endswith("ing")
        and not _PERSONAL & set(toks)
        and len(toks) > 1
    ):
        number = number_value(toks, 1)
        if number is not None:
            return f"name {toks[0]} {number}"
        # A name with its verb ("Caroline attended", "Gina lost", "Jon is"), not the first
        # noun of a phrase ("Garden party tonight", "Dentist appointment on Friday").
        if _verb_like(toks[1]):
            return f"name {toks[0]}"
    return None


_IRREGULAR_PAST = frozenset(
    """
went took made lost found got ran saw gave felt met thought told won kept bought brought taught
left said came became began wrote led held knew grew drew flew sold paid spent sent built
""".split()
)


def _verb_like(word: str) -> bool:
    """Could be the verb after a subject: a function word ("is", "has", "will", "and"), a
    third-person or past form ("believes", "attended"), or a common irregular past."""
    return (
        word in FUNCTION_WORDS
        or word in _IRREGULAR_PAST
        or (
            len(word) > 3
            and (word.endswith("ed") or (word.endswith("s") and not word.endswith("ss")))
        )
    )


def other_subjects(a: str, b: str) -> bool:
    """The two facts say, by their first words, that they are about different people, and
    neither names the other's person ("I live with my sister" / "My sister lives with me" are
    one fact; "I live in Porto" / "My colleague lives in Porto" are two). Two named subjects
    are one only when each fact names the other's ("Jon thanks Gina" / "Gina supports Jon"):
    "Calvin admires Dave's shop" says nothing of Dave's own that "Dave works at a shop" does."""
    sa, sb = subject(a), subject(b)
    if sa is None or sb is None or sa == sb:
        return False
    if sa.startswith("name ") and sb.startswith("name "):
        return not (_names_subject(sa, b) and _names_subject(sb, a))
    return not any(_names_subject(s, t) for s, t in ((sa, b), (sb, a)))


def _short_claim(text: str) -> bool:
    """One sentence of at most CLAIM_WORDS content words."""
    return not sentences(text) and len(content_words(text)) <= CLAIM_WORDS


def subjects_differ(a: str, b: str) -> bool:
    """Both facts say by their first words whom they are about, and not the same person."""
    sa, sb = subject(a), subject(b)
    return bool(sa and sb and sa != sb)


def named_subjects_differ(a: str, b: str) -> bool:
    """Both facts open with a name, and not the same one."""
    sa, sb = subject(a), subject(b)
    return bool(sa and sb and sa.startswith("name ") and sb.startswith("name ") and sa != sb)


def _subject_words(text: str) -> frozenset[str]:
    """The content words that only say who the fact is about ("Caroline" in "Caroline ...")."""
    who = subject(text)
    return (
        frozenset(stem(w) for w in who[5:].split())
        if who and who.startswith("name ")
        else frozenset()
    )


def _names_subject(who: str, text: str) -> bool:
    """Does `text` name the subject `who` ("my sister", "name anna", "name locker 12")?"""
    if who.startswith("my "):
        return mentions(who[3:], text)
    if who.startswith("name "):
        toks = tokens(text)
        words = who[5:].split()
        # A subject with a number ("locker 12") is named by both, side by side.
        return any(
            list(toks[i : i + len(words)]) == words
            or (len(words) == 1 and stem(toks[i]) == stem(words[0]))
            for i in range(len(toks))
        )
    return False


def mentions(person: str, text: str) -> bool:
    """Does the text name this person, in any form ("dads" for "father")?"""
    return stem(person) in _word_forms(text)


def has_opposite_pair(a: str, b: str) -> bool:
    """Does one fact hold a word whose opposite the other holds (vegetarian / meat), the two
    naming one slot (`slotted`)?"""
    wb = _word_forms(b)
    return any(slotted(w, o) for w in _word_forms(a) for o in OPPOSITE_OF.get(w, ()) if o in wb)


def check_numbers(a: str, b: str) -> list[Finding]:
    """Both facts state numbers (ages, counts, years, times) and they differ."""
    na, nb = _numbers(a), _numbers(b)
    findings = []
    # "a cat" is one cat: a 1 on one side only, against "a" or "an" on the other, agrees.
    if na ^ nb == {"1"} and {"a", "an"} & set(tokens(b if "1" in na else a)):
        na = nb = frozenset()
    if na and nb and na != nb:
        findings.append(
            Finding(
                "numbers",
                f"{', '.join(sorted(na))} vs {', '.join(sorted(nb))}",
                tuple(sorted(na ^ nb)),
            )
        )
    for vocabulary, what in ((_WEEKDAY_STEMS, "days"), (_MONTH_STEMS, "months")):
        da = _word_forms(a) & vocabulary
        db = _word_forms(b) & vocabulary
        if da and db and da != db:
            findings.append(
                Finding(
                    what,
                    f"{', '.join(sorted(da))} vs {', '.join(sorted(db))}",
                    tuple(sorted(da ^ db)),
                )
            )
    return findings


@lru_cache(maxsize=TEXT_CACHE)
def _split_on_connector(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    toks = tokens(text)
    for connector in _CONNECTORS:
        n = len(connector)
        for i in range(len(toks) - n + 1):
            if toks[i : i + n] == connector and i > 0:
                left = frozenset(stem(w) for w in toks[:i] if w not in STOP_WORDS)
                right = frozenset(stem(w) for w in toks[i + n :] if w not in STOP_WORDS)
                if left and right:
                    return left, right
    return None


def check_swapped(a: str, b: str) -> list[Finding]:
    """ "X over Y" against "Y over X" (also "rather than", "instead of", "than")."""
    sa, sb = _split_on_connector(a), _split_on_connector(b)
    if not sa or not sb:
        return []
    (left_a, right_a), (left_b, right_b) = sa, sb
    moved_right = {x for x, _ in match_words(right_a, left_b)} - left_a
    moved_left = {x for x, _ in match_words(left_a, right_b)} - right_a
    if moved_right and moved_left:
        return [
            Finding(
                "swapped",
                f"'{' '.join(sorted(moved_left))}' over "
                f"'{' '.join(sorted(moved_right))}' is reversed",
            )
        ]
    return []


def check_opposites(a: str, b: str) -> list[Finding]:
    """A word on one side whose opposite is on the other side only."""
    wa, wb = _word_forms(a), _word_forms(b)
    neg_a, neg_b = _negated_words(a), _negated_words(b)
    for word in sorted(wa - wb):
        for opposite in sorted(OPPOSITE_OF.get(word, ())):
            if opposite in wb and opposite not in wa:
                # A negated opposite agrees: "I'm vegetarian" / "I don't eat meat".
                if (stem(word) in neg_a) != (stem(opposite) in neg_b):
                    continue
                # Two particles ("before" / "after", "in" / "out") mostly place two events;
                # they oppose each other only after the same word, the one they modify ("I
                # wake up before 7" / "... after 7", "jumping into / out of the pool"), not
                # "swimming after the talk" / "painting before the talk".
                if {word, opposite} <= _PARTICLES and not {
                    n for n in _beside(a, word, True) if n[0] == "<"
                } & _beside(b, opposite, True):
                    continue
                # Opposites in two different slots say nothing against each other ("home" /
                # "office" in unrelated clauses): beyond short facts, a word beside them, or
                # the first one they say something of, must be the same on both sides.
                longest = max(len(content_words(a)), len(content_words(b)))
                if (
                    longest > SHORT_FACT_WORDS
                    and not _beside(a, word) & _beside(b, opposite)
                    and not _head(a, word) & _head(b, opposite)
                ):
                    continue
                return [Finding("opposites", f"'{word}' vs '{opposite}'", (word, opposite))]
    return []


def _head(text: str, word: str) -> frozenset[str]:
    """The first content word after each place of `word` in its clause, stemmed: what it
    says something of ("love the album" / "hate the album")."""
    target, found = stem(word), set()
    for clause in clauses(text):
        stems = [stem(w) for w in clause]
        for i, form in enumerate(stems):
            if form in (target, word):
                after = [
                    stems[k]
                    for k in range(i + 1, len(clause))
                    if clause[k] not in STOP_WORDS and len(clause[k]) > 1
                ]
                found |= set(after[:1])
    return frozenset(found)


def _beside(text: str, word: str, ends: bool = False) -> frozenset[str]:
    """The stems just before and after each place of `word` (or a form of it) in the text,
    within its clause, articles skipped; with `ends`, a clause's start and end count too."""
    found: set[str] = set()
    target = stem(word)
    for clause in clauses(text):
        seq = ["^", *(stem(w) for w in clause if w not in _DETERMINERS), "$"]
        for i in range(1, len(seq) - 1):
            if seq[i] in (target, word):
                # A subject pronoun is beside every verb: it names no slot.
                found |= {f"<{seq[i - 1]}"} if seq[i - 1] not in _SUBJECTS else set()
                found |= {f">{seq[i + 1]}"}
    return frozenset(found) if ends else frozenset(f for f in found if f[1:] not in "^$")


# Change words that a negation just before them does not undo: "I do not use it anymore" is
# still a change, while "encourages him not to give up" states none.
_NEGATABLE = frozenset(CHANGE_OF_STATE) - {
    "anymore",
    "now",
    "nowadays",
    "former",
    "formerly",
    "ex",
    "instead",
}


@lru_cache(maxsize=TEXT_CACHE)
def change_words(text: str) -> frozenset[str]:
    found: set[str] = set()
    for clause in clauses(text):
        for i, word in enumerate(clause):
            negated = any(w in NEGATIONS for w in clause[max(0, i - 4) : i])
            if word in CHANGE_OF_STATE and not (negated and word in _NEGATABLE):
                found.add(word)
            for phrase in _CHANGE_PHRASES:
                if clause[i : i + len(phrase)] == phrase and not (
                    negated and phrase[0] in ("give", "gave", "giving", "given", "used")
                ):
                    found.add(" ".join(phrase))
    return frozenset(found)


# Where the object of a change ends: "left his job as a banker | to pursue dancing".
_SCOPE_END = frozenset(
    {
        "to",
        "and",
        "but",
        "because",
        "so",
        "which",
        "who",
        "that",
        "while",
        "after",
        "before",
        "since",
        "when",
        "where",
        "despite",
        "although",
    }
)
_SCOPE_WORDS = 4  # content words a change's object may hold
_STARTS = frozenset({"started", "began", "again", "become", "became"})
_MOVES = frozenset({"moved", "move", "moving", "relocated"})
# A past habit says nothing of the present but of the very thing it names.
_PAST = _STARTS | {"used to"}
_CLAUSE_WIDE = frozenset({"now", "nowadays", "anymore", "any", "these", "days"})


@lru_cache(maxsize=TEXT_CACHE)
def change_scope(text: str) -> frozenset[str]:
    """The slot whose value a stated change ends or replaces: the few content words after the
    change word and the one just before it ("I quit coffee": coffee; "The deadline moved to
    Wednesday": deadline, wednesday), or the whole clause for "now" or "anymore"; never the
    subject ("Jon left his job" says nothing of Jon's other facts)."""
    change = {w for p in change_words(text) for w in p.split()}
    who = subject(text)
    name = who.split()[1] if who and who.startswith("name ") else None
    scope: set[str] = set()
    for clause in clauses(text):
        at = [i for i, w in enumerate(clause) if w in change]
        if not at:
            continue
        start = 1 if clause[0] in _SUBJECTS or clause[0] == name else 0
        kept = [
            k >= start and w not in STOP_WORDS and w not in change and len(w) > 1
            for k, w in enumerate(clause)
        ]
        # "now", "anymore", "these days" change the whole clause ("I work from the office
        # every day now"); a verb ("moved", "quit") changes what follows it.
        if change & _CLAUSE_WIDE:
            scope |= {stem(w) for w, keep in zip(clause, kept, strict=True) if keep}
            continue
        after: list[str] = []
        for k in range(at[0] + 1, len(clause)):
            if (after and clause[k] in _SCOPE_END) or len(after) == _SCOPE_WORDS:
                break
            if kept[k]:
                after.append(stem(clause[k]))
        # The word just before is what changed when it is no subject ("the deadline moved").
        before = {stem(clause[at[0] - 1])} if at[0] and kept[at[0] - 1] else set()
        scope |= set(after) | before
    # A move changes where one lives, whatever the sentence says next.
    if change & _MOVES:
        scope |= {stem("live"), "home"}
    return frozenset(scope)


def only_ends(text: str) -> bool:
    """States a change, and every change word only ends something (`ENDING`)."""
    words = change_words(text)
    return bool(words) and words <= ENDING


@lru_cache(maxsize=TEXT_CACHE)
def _word_forms(text: str) -> frozenset[str]:
    """Every token and its stem: what the opposites and vocabulary checks look up."""
    toks = tokens(text)
    return frozenset(toks) | frozenset(stem(w) for w in toks)


def check_change_of_state(a: str, b: str) -> list[Finding]:
    """Change-of-state wording ("moved to", "quit", "no longer", "now") on one side only."""
    ca, cb = change_words(a), change_words(b)
    if bool(ca) == bool(cb):
        return []
    side, words = ("first", ca) if ca else ("second", cb)
    # A change conflicts only with a fact that holds the slot it changes (SPEC §4.4): "Anna
    # is running for office again" says nothing against "Anna practises taekwondo".
    scope, other = (change_scope(a), b) if ca else (change_scope(b), a)
    # The other side says the same change, negated ("I am not moving to the UK"): that is
    # the negation's finding, and the change's words are no difference of slot.
    changed = {w for p in words for w in p.split()}
    if changed <= set(tokens(other)):
        return []
    other_words = content_words(other) - _subject_words(other)
    # The slot may be named by an opposite ("I'm vegetarian" / "I started eating meat"; "I'm
    # married" / "we divorced").
    opposed = {o for w in scope | changed for o in OPPOSITE_OF.get(w, ())} & _word_forms(other)
    # A start ends nothing by itself: "Gina opened a store" / "Gina started a store" agree.
    # It replaces only the opposite of what it starts. Any other change needs its slot named
    # in the other fact, but for two short facts of one claim each, whose slot cosine may
    # tell ("I no longer cycle to work" / "Biking to the office daily"), unless the other
    # names things the change does not ("Marta visited us in Lisbon" / "I moved to Porto").
    if not opposed and (
        words <= _STARTS
        or not (
            match_words(scope, other_words)
            or (
                _short_claim(a)
                and _short_claim(b)
                and not words <= _PAST
                and inner_names(other) <= names(a if ca else b)
            )
        )
    ):
        return []
    return [
        Finding(
            "change_of_state",
            f"the {side} fact says '{', '.join(sorted(words))}'",
            tuple(sorted(w for p in words for w in p.split())),
        )
    ]


@lru_cache(maxsize=TEXT_CACHE)
def _frame_tokens(text: str) -> tuple[str, ...]:
    toks = tokens(text)
    out = []
    for i, word in enumerate(toks):
        if word in _ARTICLES:
            continue
        number = number_value(toks, i)
        out.append(number if number is not None else word)
    return tuple(out)


MAX_SLOT = 3  # the `value` check looks at replaced spans of at most this many tokens


def _digest(parts: tuple[str, ...]) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).hexdigest()


def share_a_slot(a: str, b: str) -> bool:
    """Whether a span of 1..MAX_SLOT tokens of each frame has the same tokens before and after
    it on both sides (the same `slot_key`): the precondition of a `value` finding.

    Read from the common start and end, without a key: with i tokens kept before the spans and
    t after, the spans are len - i - t long on each side, so some i <= common start and
    t <= common end must make both lengths 1..MAX_SLOT, and every sum i + t up to common start
    + common end can be made."""
    sa, sb = frame_sequence(a), frame_sequence(b)
    shorter, longer = sorted((len(sa), len(sb)))
    kept = max(0, longer - MAX_SLOT)  # the fewest tokens the spans may leave around them
    if kept > shorter - 1:
        return False
    head = next((k for k in range(shorter) if sa[k] != sb[k]), shorter)
    tail = next((k for k in range(shorter) if sa[-1 - k] != sb[-1 - k]), shorter)
    return head + tail >= kept


def spans(length: int) -> list[tuple[int, int]]:
    """Every span (i, j) of 1..MAX_SLOT tokens in a sequence of `length` tokens."""
    return [(i, j) for i in range(length) for j in range(i + 1, min(i + MAX_SLOT, length) + 1)]


def slot_key(seq: tuple[str, ...], i: int, j: int) -> str:
    """The key of `seq` with tokens i..j replaced: the same for every replacement."""
    heads, tails = _ends(seq)
    return heads[i] + tails[j]


@lru_cache(maxsize=WRITE_CACHE)
def _ends(seq: tuple[str, ...]) -> tuple[list[str], list[str]]:
    # Each prefix and suffix digested once: a sequence has ~3 spans per token, each two ends.
    return (
        [_digest(seq[:i]) for i in range(len(seq) + 1)],
        [_digest(seq[j:]) for j in range(len(seq) + 1)],
    )


@lru_cache(maxsize=TEXT_CACHE)
def frame_sequence(text: str) -> tuple[str, ...]:
    """The stemmed token sequence the `value` check aligns (articles out, numbers as digits)."""
    return tuple(stem(t) for t in _frame_tokens(text))


def check_value(a: str, b: str) -> list[Finding]:
    """The same frame with one value replaced: "I live in Prague" / "I live in Vienna"."""
    # Both findings below need one replaced span of at most 3 tokens in an otherwise equal
    # sequence, and then the two texts share that span's slot key: a set lookup, not a diff.
    if not share_a_slot(a, b):
        return []
    ta, tb = list(_frame_tokens(a)), list(_frame_tokens(b))
    sa, sb = frame_sequence(a), frame_sequence(b)
    # One span replaced: what is left between the common start and the common end, on both
    # sides, and nothing shared between the two spans (else it is more than one change).
    limit = min(len(sa), len(sb))
    i1 = next((k for k in range(limit) if sa[k] != sb[k]), limit)
    tail = next((k for k in range(limit - i1) if sa[-1 - k] != sb[-1 - k]), limit - i1)
    i2, j2 = len(sa) - tail, len(sb) - tail
    if i1 == i2 or i1 == j2 or set(sa[i1:i2]) & set(sb[i1:j2]):
        return []
    old, new = ta[i1:i2], tb[i1:j2]
    before, frame = ta[:i1], ta[:i1] + ta[i2:]
    if len(old) > 3 or len(new) > 3:
        return []
    old_c = [stem(w) for w in old if w not in STOP_WORDS]
    new_c = [stem(w) for w in new if w not in STOP_WORDS]
    if not old_c or not new_c or match_words(old_c, new_c):
        return []
    words = tuple(old_c + new_c)
    # Whatever else holds, one thing replaced by another is never the same fact: it blocks a
    # merge ("I like jazz" / "I like blues"), even where it is no conflict.
    different = [Finding("different", f"'{' '.join(old)}' vs '{' '.join(new)}'", words)]
    if any(w in _MANY for w in frame + old + new):
        return different
    # Two endings in one frame both hold ("I quit working on X" / "... on Y").
    if only_ends(a) and only_ends(b):
        return different
    # "I use X" / "I use Y" can both hold; "I use X on my desktop" names one slot.
    after_c = [w for w in ta[i2:] if w not in STOP_WORDS]
    if not after_c and any(w in _WEAK_MULTI for w in before):
        return different
    # Two different activities ("talking"/"laughing") describe more than one thing going on.
    if all(w.endswith("ing") for w in old + new if w not in STOP_WORDS):
        return different
    # The frame words here include filler ("my name is X"): they still say what X is.
    frame_c = [w for w in frame if w not in FUNCTION_WORDS]
    before_c = [w for w in before if w not in FUNCTION_WORDS]
    # The replaced part must be a value that follows its frame, not the relation itself:
    # "I [live] in Lisbon" / "I [work] in Lisbon" are two attributes, not two values. Only a
    # bare number needs no frame ("Anna is 30" / "Mum turned 31" replace more than that).
    bare_numbers = _only_numbers(tuple(old)) and _only_numbers(tuple(new))
    if not before_c and not bare_numbers:
        return different
    # Nor where the subject alone comes before and the span runs to the end: the whole
    # predicate is replaced ("Tom [likes hiking]" / "Tom [owns a boat]", "My brother [eats
    # meat]" / "... [hates jazz]"), two things said of one person. "Anna [loves] jazz" /
    # "Anna [hates] jazz" keep their object, so that stays one value replaced; a subject set
    # apart by a comma ("John, the guitar") is no sentence of its own; and a stated change
    # replaces what the other side says ("Anna lives in Lyon" / "Anna moved to Paris").
    # The same holds where the replaced span opens with the verb and is more than the verb,
    # whatever follows ("My sister Marta [lives] in Porto" / "... [is a teacher] in Porto"):
    # the relation changed. "Anna [loves] jazz" / "Anna [hates] jazz" keep the object.
    if (
        before
        and before[-1] not in FUNCTION_WORDS
        and _only_subject(a, b, before_c)
        and (
            not any(w not in STOP_WORDS for w in ta[i2:])
            or (
                (_verb_like(old[0]) or _verb_like(new[0]))
                and (len(old) != len(new) or len(old) > 1)
            )
        )
        and not change_words(a)
        and not change_words(b)
        and len(clauses(a)) == len(clauses(b)) == 1
        and not bare_numbers
    ):
        return different
    # Spans holding numbers may be long ("a 2015 Honda Civic" / "a 2019 Toyota Corolla").
    numbers = bool(_numbers(" ".join(old)) and _numbers(" ".join(new)))
    if not numbers and max(len(old_c), len(new_c)) > max(2, len(frame_c)):
        return different
    return [Finding("value", f"'{' '.join(old)}' vs '{' '.join(new)}' in the same frame", words)]


def _only_subject(a: str, b: str, words: list[str]) -> bool:
    """Every one of `words` is a person one has ("brother") or a name in either text."""
    named = names(a) | names(b)
    return all(w in PEOPLE or stem(w) in named for w in words)


@lru_cache(maxsize=TEXT_CACHE)
def _only_numbers(span: tuple[str, ...]) -> bool:
    """Every content token of the span is a number ("is 30", "5km"): a value that needs no
    frame word before it. "Anna is 30" / "Mum turned 31" replace more than a number."""
    content = [k for k, w in enumerate(span) if w not in STOP_WORDS]
    return bool(content) and all(number_value(span, k) is not None for k in content)


def _stop_tag(ta: tuple[str, ...], sa: tuple[str, ...], i: int, j: int) -> str:
    """The stop words inside tokens i..j of a frame, as one tag: "" for none, the word for one,
    "*" for more. Two spans that share a word are not one value replaced by another."""
    stops = sorted({sa[k] for k in range(i, j) if ta[k] in STOP_WORDS})
    return "" if not stops else stops[0] if len(stops) == 1 else "*"


@lru_cache(maxsize=WRITE_CACHE)
def value_slot_keys(text: str) -> frozenset[str]:
    """`slot key#stop tag` of the spans for which `check_value(text, other)` can report a
    `value` finding, whatever `other` is: each condition below is one of its own, read on this
    side alone. A stored fact is filed under these only (docs/scale.md)."""
    ta, sa = _frame_tokens(text), frame_sequence(text)
    if any(w in _MANY for w in ta):
        return frozenset()
    # Counted once per token, not once per span: content words up to each token, frame words
    # up to each token, and whether only stop words follow it.
    content, framing = _running(ta, STOP_WORDS), _running(ta, FUNCTION_WORDS)
    ends_stop = [True] * (len(ta) + 1)
    for k in range(len(ta) - 1, -1, -1):
        ends_stop[k] = ends_stop[k + 1] and ta[k] in STOP_WORDS
    keys = set()
    for i, j in spans(len(ta)):
        old, before = ta[i:j], ta[:i]
        old_c = content[j] - content[i]
        if not old_c:
            continue
        if ends_stop[j] and any(w in _WEAK_MULTI for w in before):
            continue
        # Only a bare number needs no frame word before it; a span holding a number may be
        # long ("a 2015 Honda Civic").
        if not framing[i] and not _only_numbers(old):
            continue
        frame_c = framing[i] + framing[-1] - framing[j]
        if old_c > max(2, frame_c) and not _numbers(" ".join(old)):
            continue
        # A span of MAX_SLOT content words without a number, on the other side, needs at least
        # as many in this frame: say which frames have fewer (`value_spans`).
        narrow = NARROW if frame_c < MAX_SLOT else ""
        keys.add(f"{slot_key(sa, i, j)}#{narrow}{_stop_tag(ta, sa, i, j)}")
    return frozenset(keys)


def _running(words: Sequence[str], left_out: Collection[str]) -> list[int]:
    """How many of the first k words are not in `left_out`, for each k from 0 to all."""
    counts = [0]
    for word in words:
        counts.append(counts[-1] + (word not in left_out))
    return counts


# Marks the slot key of a stored span whose frame holds fewer than MAX_SLOT content words. It
# sorts after every stop tag (stems of stop words, "" and "*"), so the keys of wide frames are
# one range of their own.
NARROW = "~"


def value_spans(text: str) -> tuple[tuple[int, int, bool], ...]:
    """(i, j, wide) for each span of `text`'s frame sequence from which `check_value(other,
    text)` can report a `value` finding, whatever `other` is; `wide` if only an `other` whose
    frame holds at least MAX_SLOT content words can (not `NARROW` in `value_slot_keys`). Each
    condition is one of the check's own, read on this side's span alone: a content word in it,
    no multi-valued or additive word in it, and a span of MAX_SLOT content words without a
    number needs as many content words in the frame."""
    tb = _frame_tokens(text)
    content, single = _running(tb, STOP_WORDS), _running(tb, _MANY)
    out = []
    for i, j in spans(len(tb)):
        new_c = content[j] - content[i]
        # Fewer single-valued words than tokens: the span holds a multi-valued or additive one.
        if not new_c or single[j] - single[i] < j - i:
            continue
        out.append((i, j, new_c > 2 and not _numbers(" ".join(tb[i:j]))))
    return tuple(out)


def _content_sequence(text: str) -> list[str]:
    toks = tokens(text)
    return [stem(w) for w in toks if w not in STOP_WORDS and not w.isdigit()]


@lru_cache(maxsize=TEXT_CACHE)
def _content_set(text: str) -> frozenset[str]:
    return frozenset(_content_sequence(text))


_BE = frozenset({"is", "are", "was", "were", "be", "been", "being"})


@lru_cache(maxsize=TEXT_CACHE)
def _passive(text: str) -> bool:
    """A form of "be" and later "by": the doer is named after the verb."""
    toks = tokens(text)
    first = next((i for i, t in enumerate(toks) if t in _BE), None)
    return first is not None and "by" in toks[first + 1 :]


def check_order(a: str, b: str) -> list[Finding]:
    """Roles swapped around a shared word: "the turtle follows the fish" / "the fish follows
    the turtle". Reordered phrases with nothing between them ("from home remotely") pass.
    Clause by clause: across clauses word order is free ("I love rock music, and I listen to
    it at work")."""
    for part_a, part_b in clause_pairs(a, b):
        if found := _swapped_roles(part_a, part_b):
            return found
    return []


def clause_pairs(a: str, b: str) -> Iterator[tuple[str, str]]:
    """Each clause of `a` with each clause of `b`; a text of one clause is its own."""
    for part_a in statements(a) or (a,):
        for part_b in statements(b) or (b,):
            yield part_a, part_b


def _swapped_roles(a: str, b: str) -> list[Finding]:
    if len(_content_set(a) & _content_set(b)) < 3:
        return []  # a swap around a third word needs three shared words
    if _passive(a) != _passive(b):
        return []  # the passive names the doer last: "a jump is performed by a man"
    sa, sb = _content_sequence(a), _content_sequence(b)
    pos_b: dict[str, int] = {}
    for i, w in enumerate(sb):
        pos_b.setdefault(w, i)
    shared = [w for w in dict.fromkeys(sa) if w in pos_b]
    pos_a = {w: sa.index(w) for w in shared}
    for x in shared:
        for y in shared:
            if pos_a[x] >= pos_a[y] or pos_b[x] <= pos_b[y]:
                continue
            for v in shared:
                if pos_a[x] < pos_a[v] < pos_a[y] and pos_b[y] < pos_b[v] < pos_b[x]:
                    # Two people in swapped roles mostly both hold ("Maria helps John" /
                    # "John helps Maria"): not the same fact, and no contradiction.
                    named = names(a) | names(b)
                    long = max(len(content_words(a)), len(content_words(b))) > CLAIM_WORDS
                    check = "different" if {x, y} <= named or long else "order"
                    return [Finding(check, f"'{x}' and '{y}' swap places around '{v}'", (x, y))]
    return []


def check_attribute(a: str, b: str) -> list[Finding]:
    """One single-valued attribute of the user (home, age, marital status, name, employer,
    birthday, favourite X) with two different values."""
    return [
        Finding("attribute", f"{key}: '{x}' vs '{y}'", tuple(f"{x} {y}".split()))
        for key, x, y in attribute_conflicts(a, b)
    ]


@lru_cache(maxsize=TEXT_CACHE)
def _days_and_months(text: str) -> tuple[bool, bool]:
    forms = _word_forms(text)
    return bool(forms & _WEEKDAY_STEMS), bool(forms & _MONTH_STEMS)


def polar_cue(a: str, b: str) -> bool:
    """False only when neither a negation, nor opposites, nor a change of state can be found
    between `a` and `b` (in `disagreements` order): the preconditions of those three checks."""
    if _negated_words(a) or _negated_words(b):
        return True
    if bool(change_words(a)) != bool(change_words(b)):
        return True
    return bool(opposite_forms(a) & opposed_forms(b))


@lru_cache(maxsize=TEXT_CACHE)
def opposite_forms(text: str) -> frozenset[str]:
    """The text's word forms (stop words too) that have an opposite."""
    return frozenset(w for w in _word_forms(text) if w in OPPOSITE_OF)


@lru_cache(maxsize=WRITE_CACHE)
def opposed_forms(text: str) -> frozenset[str]:
    """Every word form whose opposite the text holds (the opposites are symmetric)."""
    return frozenset(o for w in opposite_forms(text) for o in OPPOSITE_OF[w])


def may_conflict(a: str, b: str) -> bool:
    """False only when no check below can return a finding other than "different": every
    branch is the precondition of one or more checks, read from per-text features
    that are cached, so a pair can skip the analysis for a fraction of its cost."""
    if attribute_keys(a) & attribute_keys(b):
        return True
    if polar_cue(a, b):  # negation, opposites, change of state
        return True
    if _numbers(a) and _numbers(b):
        return True
    (day_a, month_a), (day_b, month_b) = _days_and_months(a), _days_and_months(b)
    if (day_a and day_b) or (month_a and month_b):
        return True
    if _split_on_connector(a) and _split_on_connector(b):
        return True
    if len(_content_set(a) & _content_set(b)) >= 3:  # order: three shared words at least
        return True
    return share_a_slot(a, b)  # value: one span of <= 3 tokens replaced


CHECKS = (
    check_attribute,
    check_negation,
    check_numbers,
    check_swapped,
    check_order,
    check_opposites,
    check_change_of_state,
    check_value,
)


def disagreements(a: str, b: str) -> list[Finding]:
    """Every finding of every check, in a fixed order, without duplicates."""
    seen: list[Finding] = []
    for check in CHECKS:
        for finding in check(a, b):
            if finding not in seen:
                seen.append(finding)
    return seen


def frame_words(
    a: str, b: str, findings: list[Finding] | tuple[Finding, ...]
) -> tuple[frozenset[str], frozenset[str]]:
    """Content words with the disagreeing ones taken out: what the two facts are *about*.

    Opposite words count as the same slot (light/dark mode are both about the mode)."""
    drop: set[str] = set()
    rename: dict[str, str] = {}
    slots: set[str] = set()
    for f in findings:
        if f.check == "opposites" and len(f.words) == 2:
            rename[stem(f.words[1])] = stem(f.words[0])
            # The slot is on both sides even when one of the words is filler ("like" / "hate").
            if slotted(*f.words):
                slots.add(stem(f.words[0]))
        else:
            drop |= {stem(w) for w in f.words} | set(f.words)
    wa = frozenset(w for w in content_words(a) if w not in drop) | slots
    wb = frozenset(rename.get(w, w) for w in content_words(b) if w not in drop) | slots
    return wa, wb
