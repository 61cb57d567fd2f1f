"""The words the checks look for (stated changes, endings, opposites, multi-valued verbs,
people, dates) and what one text says with them: its negated words, numbers and core size."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ankita.analysis._lexicon import NEGATIONS, STOP_WORDS
from ankita.analysis._profile import Text, per_text
from ankita.analysis._similarity import match_words, words_match
from ankita.analysis._text import (
    clauses,
    content_words,
    number_value,
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


_QUOTED = re.compile(r"'([^']+)'")


def quoted_by(findings: Sequence[Finding], check: str) -> list[str]:
    """What the findings of one check quote in their detail ("negates 'pet'": pet)."""
    return [q for f in findings if f.check == check for q in _QUOTED.findall(f.detail)]


def quoted_negations(findings: Sequence[Finding]) -> frozenset[str]:
    """The words negation findings quote (stems)."""
    return frozenset(w for quoted in quoted_by(findings, "negation") for w in quoted.split())


# A fact of more content words than this states more than one thing: cosine no longer says
# "the same subject", and a swap of two of its words is no swap of roles (SPEC §4.4).
CLAIM_WORDS = 6

_CLAUSE_END = {"but", "though", "although", "however", "while", "whereas", "yet", "because"}
SUBJECT_PRONOUNS = frozenset({"i", "you", "he", "she", "we", "they"})
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
CHANGE_PHRASES = (
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
PARTICLES = frozenset(
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
WEAK_MULTI = frozenset({"use", "uses", "using", "try", "tried"})
_ADDITIVE = frozenset({"too", "also", "another", "as", "both", "additionally", "second"})
# Either kind: a frame holding one may hold several values, so none replaces another.
MANY = MULTI_VALUED | _ADDITIVE
CONNECTORS = (
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
WEEKDAY_STEMS = frozenset(stem(w) for w in _WEEKDAYS)
MONTH_STEMS = frozenset(stem(w) for w in _MONTHS)
ARTICLES = {"a", "an", "the", "some", "my", "our", "his", "her", "their", "your"}
# Words between an opposite and what it modifies: "every morning", "this evening".
DETERMINERS = ARTICLES | {
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


@per_text
def negated_words(text: str) -> frozenset[str]:
    """Content words inside the scope of a negation: from the cue to the end of its clause."""
    scoped: set[str] = set()
    for clause in clauses(text):
        inside = False
        for i, word in enumerate(clause):
            # A new subject opens a new clause: "when I am not reading I work as a guide".
            if word in _CLAUSE_END or (word in SUBJECT_PRONOUNS and inside):
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
    return bool(negated_words(text))


def check_negation(a: Text, b: Text) -> list[Finding]:
    """A negation on one side only, whose scope covers words the two facts share."""
    neg_a, neg_b = negated_words(a), negated_words(b)
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


@per_text
def numbers_in(text: str) -> frozenset[str]:
    toks = tokens(text)
    return frozenset(v for i in range(len(toks)) if (v := number_value(toks, i)) is not None)


@lru_cache(maxsize=1)
def droppable_stems() -> frozenset[str]:
    words = set(CHANGE_OF_STATE) | {w for p in CHANGE_PHRASES for w in p}
    return frozenset(stem(w) for w in words) | WEEKDAY_STEMS | MONTH_STEMS


@per_text
def core_size(text: str) -> int:
    """Content words a finding can never take out of the frame: all but numbers, days,
    months and change-of-state words. Lower bound on the frame's size (for the gate)."""
    drop = droppable_stems()
    return sum(1 for w in content_words(text) if w not in drop and not any(c.isdigit() for c in w))


def slotted(word: str, opposite: str) -> bool:
    """Do two opposite words name one slot of a frame? Not when both are function words
    (in/out): those never relate two facts alone. "like" / "hate" do."""
    return word not in STOP_WORDS or opposite not in STOP_WORDS
