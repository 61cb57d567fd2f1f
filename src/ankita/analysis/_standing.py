"""Whether a flagged pair is a *sure* conflict, only a *possible* one, or none at all: a fitted
logistic model over the pair's signals (docs/decisions.md, "Sure and possible conflicts"),
with the parser's readings (`_claims`) asked only when they could move the pair across
a line."""

from __future__ import annotations

import math

from ankita.analysis._change import change_words, ended_said, only_ends
from ankita.analysis._claims import (
    actions_only,
    contradicting,
    doing_shared,
    member_of_denied_kind,
    mention_only,
    occasions,
    only_intended,
    other_value_ended,
    owners_only,
    related,
)
from ankita.analysis._comparison import MERGE_ONLY_CHECKS, Comparison, judge_read
from ankita.analysis._cues import Finding, quoted_by, quoted_negations
from ankita.analysis._language import language
from ankita.analysis._profile import profile_of
from ankita.analysis._text import stem

# Findings that read one slot of one frame (a value, a number, a date, an order, opposites,
# an attribute): the rules already name the proposition both facts fill differently.
SLOT_CHECKS = frozenset(
    {"value", "attribute", "numbers", "days", "months", "swapped", "order", "opposites"}
)
# Findings that say only *when* or *how many*: numbers, days and months.
_TIMES = frozenset({"numbers", "days", "months"})

# Opposites that are a thing's beginning and its end: told as two past events, both hold.
_BEGIN_END = frozenset(
    frozenset(stem(w) for w in pair) for pair in (("start", "finish"), ("arrive", "leave"))
)

# Change words that only say "at present": the change is what the fact says now.
_PRESENT = frozenset({"now", "nowadays", "these days"})

SURE, POSSIBLE, UNRELATED = "sure", "possible", "unrelated"

# The signals a flagged pair is read by, in the order of `WEIGHTS`.
SIGNALS = (
    "slot",  # a finding on one slot of one frame (SLOT_CHECKS)
    "change",  # a stated change of state, not only "used to"
    "used_to",  # a past habit against the present
    "negation",  # a negated word the other fact mentions
    "negated_asserted",  # English: a proposition one negates and the other asserts
    "related",  # English: one subject, one object or predicate, whatever the polarity
    "judge",  # the contradiction judge alone flagged it
    "cosine",  # the embedder's cosine (0 without one)
    "lexical",  # the lexical score
    "not_english",  # either fact in another language (the parser does not read it)
)
# Fitted by `benchmarks/fit_standing.py` (logistic regression, L2 1.0, a source of n flags
# weighing sqrt(n); four pair files, four LoCoMo conversations and the shipped multilingual
# pairs, each flagged with the local model and lexically, pooled); the last weight is the
# intercept. docs/decisions.md gives the leave-one-source-out figures.
WEIGHTS = (2.358, 0.498, -2.0, 0.378, 3.449, 0.439, 0.097, 0.052, 0.131, 3.222, -0.731)
# A flag at or above SURE_LINE is a conflict; at or above POSSIBLE_LINE a possible one.
SURE_LINE, POSSIBLE_LINE = 0.7, 0.15


_PARSED = (
    SIGNALS.index("slot"),
    SIGNALS.index("negated_asserted"),
    SIGNALS.index("related"),
)


def signals(
    comparison: Comparison, new_text: str, old_text: str, parse: bool = True
) -> tuple[float, ...]:
    """The signals of one flagged pair, as numbers in the order of SIGNALS; without `parse`,
    the two the parser reads are 0 and a slot is not asked whether its values are verbs
    (`standing` parses only when what it reads could change the band)."""
    checks = {f.check for f in comparison.findings}
    english = _english(new_text, old_text)
    parsed = parse and english
    changes = [f for f in comparison.findings if f.check == "change_of_state"]
    words = quoted_negations(comparison.findings)
    judge = judge_read(comparison)
    stated = any("used to" not in f.detail for f in changes)
    return (
        float(
            any(
                f.check in SLOT_CHECKS and not (parsed and _no_slot(f, new_text, old_text))
                for f in comparison.findings
            )
        ),
        float(stated and not (parsed and only_intended_change(comparison, new_text, old_text))),
        float(any("used to" in f.detail for f in changes)),
        float("negation" in checks),
        float(
            parsed and "negation" in checks and contradicting(old_text, new_text, words) is not None
        ),
        float(parsed and related(old_text, new_text)),
        float(judge),
        comparison.cosine or 0.0,
        comparison.lexical.score,
        float(not english),
    )


def _no_slot(finding: Finding, new_text: str, old_text: str) -> bool:
    """A value finding whose words are two doings of one subject with one thing
    (`_claims.actions_only`), or lie in the subjects' phrases (`_claims.owners_only`)."""
    if finding.check != "value":
        return False
    words = frozenset(stem(w) for w in finding.words)
    return actions_only(words, old_text, new_text) or owners_only(words, old_text, new_text)


def likelihood(values: tuple[float, ...], weights: tuple[float, ...] = WEIGHTS) -> float:
    """The fitted probability that a flagged pair is a real conflict."""
    z = weights[-1] + sum(w * v for w, v in zip(weights, values, strict=False))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def standing(comparison: Comparison, new_text: str, old_text: str) -> str:
    """What a flagged pair is: a conflict worth asking the user about (SURE), one kept for
    review and never in recall's notice (POSSIBLE), or no conflict at all (UNRELATED: no
    link is made). Read by a fitted logistic model over the pair's signals (SIGNALS)."""
    if ruled_out(comparison, new_text, old_text):
        return UNRELATED
    found = _fitted(comparison, new_text, old_text)
    # Two occasions of one kind of event may differ in when or how often and both hold:
    # "Evan went to Canada in July" / "... in August" (a persona line's two medals in 1992
    # and 2002, and news sentences' prices on two days, are labelled so too). Nothing in the
    # words tells them from one event told two ways ("died in 1601" / "died in 1610"), so
    # such a flag is kept for review, never asked about.
    if found == SURE and (
        two_occasions(comparison, new_text, old_text)
        or begun_and_ended(comparison, new_text, old_text)
    ):
        return POSSIBLE
    # A denied kind against a member of it had by the same subject ("Andrew does not have any
    # pets" / "Andrew adopted a puppy"): the words share nothing, so only the judge flags it,
    # and the parse says the two deny and assert having of one subject.
    if (
        found == POSSIBLE
        and judge_read(comparison)
        and _english(new_text, old_text)
        and member_of_denied_kind(old_text, new_text)
    ):
        return SURE
    return found


def _fitted(comparison: Comparison, new_text: str, old_text: str) -> str:
    values = signals(comparison, new_text, old_text, parse=False)
    # A stated change (not "used to") is sure on its own: 78 of its 88 flags are real, over
    # five sources; the fit gives it little weight only because word overlap says the same
    # in most of them, and a change stated in few shared words ("I moved to Lisbon") is the
    # one the user most needs asked about.
    if values[1] and not values[2] and not values[6]:  # not a flag the judge alone raised
        # ... unless the change is only wished, planned or tried ("Andrew wants to move out
        # of the city" / "Andrew lives in the city"): then it is read as no change at all.
        if not values[9] and only_intended_change(comparison, new_text, old_text):
            values = (values[0], 0.0, *values[2:])
        # ... or it only ends something ("no longer", "anymore", "quit") that the other fact
        # does not name in its words, and only the cosine of two short facts tied them: none
        # of those 88 flags was so, and such a flag fires on any two habits ("Deborah doesn't
        # go to the gym anymore" / "Deborah teaches yoga"); or it ends another value of the
        # verb the other asserts ("no longer works at the garage" / "works at a shop"). A
        # new value ("Ana is now a teacher") may name its slot by meaning alone.
        elif values[9] or not _unnamed_end(old_text, new_text):
            return SURE
    english, negation = not values[9], bool(values[3])
    # The parser is asked only when what it could read moves the pair across a line: each
    # parsed signal at 0 and at 1 bounds the probability (an English pair only; the first
    # needs a negation).
    values_said = any(f.check == "value" for f in comparison.findings)
    able = (english and values_said and bool(values[0]), english and negation, english)
    can = [i for i, ok in zip(_PARSED, able, strict=True) if ok]
    low = [*values]
    high = [*values]
    for i in can:
        low[i], high[i] = (0.0, 1.0) if WEIGHTS[i] >= 0 else (1.0, 0.0)
    first, last = _band(likelihood(tuple(low))), _band(likelihood(tuple(high)))
    if first == last:
        return first
    return _band(likelihood(signals(comparison, new_text, old_text)))


def _unnamed_end(old_text: str, new_text: str) -> bool:
    """A stated change that only ends something (`_change.only_ends`), whose slot the other
    fact does not name in its words (`changed_slot_said`), or whose ended value is not what
    the other asserts (`_claims.other_value_ended`, `_claims.ended_asserted`); or a change
    told by "now" alone, of a doing the other does not assert (`_claims.doing_shared`)."""
    old, new = profile_of(old_text), profile_of(new_text)
    ending, other = (new_text, old_text) if change_words(new) else (old_text, new_text)
    words = change_words(profile_of(ending))
    if words and words <= _PRESENT:
        return not doing_shared(ending, other)
    return only_ends(profile_of(ending)) and (
        not ended_said(old, new) or other_value_ended(ending, other)
    )


def ruled_out(comparison: Comparison, new_text: str, old_text: str) -> bool:
    """A flag that is no conflict whatever the fit says: all it has is a denial of having,
    being or going that the other fact only mentions (`_claims.mention_only`). Such
    flags stay rows of the fit: what the signals say of a negation is read over every flag
    the rules raise, and held out, a dev conversation's negations read sure without them."""
    found = _disagreeing(comparison)
    return (
        bool(found)
        and all(f.check == "negation" for f in found)
        and _english(new_text, old_text)
        and mention_only(old_text, new_text, quoted_negations(comparison.findings))
    )


def only_intended_change(comparison: Comparison, new_text: str, old_text: str) -> bool:
    """Whether every change word the flag rests on (not "used to") is a verb that both texts
    only wish, plan or try, wherever they say it (`_claims.only_intended`)."""
    changes = [f for f in comparison.findings if "used to" not in f.detail]
    words = {stem(quoted.split()[0]) for quoted in quoted_by(changes, "change_of_state")}
    return bool(words) and all(only_intended(w, new_text, old_text) for w in words)


def two_occasions(comparison: Comparison, new_text: str, old_text: str) -> bool:
    """Whether all that a flag disagrees on is when or how many, between two events of one
    kind told in the simple past of one subject."""
    opposed = any(f.check == "opposites" for f in comparison.findings)
    return _only_times(comparison, new_text, old_text) and occasions(old_text, new_text, opposed)


def begun_and_ended(comparison: Comparison, new_text: str, old_text: str) -> bool:
    """Whether all that disagrees is a beginning against an end ("started" / "finished"),
    told of one thing in the simple past of one subject: "Joanna started a new screenplay" /
    "Joanna finished the screenplay" tell one thing's course, and both hold."""
    found = _disagreeing(comparison)
    return (
        bool(found)
        and all(
            f.check == "opposites" and frozenset(stem(w) for w in f.words) in _BEGIN_END
            for f in found
        )
        and _english(new_text, old_text)
        and occasions(old_text, new_text, opposed=True)
    )


def _only_times(comparison: Comparison, new_text: str, old_text: str) -> bool:
    """Whether all that disagrees is when or how many (numbers, days, months, or a value
    that is one of them), in two English facts; or that and opposite events ("lost" / "won"
    the tournament, in March and in May), which `occasions` reads as two."""
    found = _disagreeing(comparison)
    times = [f for f in found if f.check in _TIMES]
    said = {stem(w) for f in times for w in f.words}
    return (
        bool(times)
        and all(
            f in times
            or f.check == "opposites"
            or (f.check == "value" and {stem(w) for w in f.words} <= said)
            for f in found
        )
        and _english(new_text, old_text)
    )


def _disagreeing(comparison: Comparison) -> list[Finding]:
    """The findings that may make a conflict (a "different" finding only blocks a merge)."""
    return [f for f in comparison.findings if f.check not in MERGE_ONLY_CHECKS]


def _english(new_text: str, old_text: str) -> bool:
    """Both texts English: the parser reads no other language."""
    return language(new_text) == "en" and language(old_text) == "en"


def _band(p: float) -> str:
    return SURE if p >= SURE_LINE else POSSIBLE if p >= POSSIBLE_LINE else UNRELATED
