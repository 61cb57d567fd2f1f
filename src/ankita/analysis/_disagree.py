"""What differs between two related facts (SPEC §4.3): pure, deterministic, explainable.

Each check returns `Finding`s with a readable detail. A finding blocks a merge; together with a
shared frame it is the evidence for a conflict.
"""

from __future__ import annotations

from collections.abc import Iterator

from ankita.analysis._attributes import attribute_conflicts
from ankita.analysis._change import (
    check_change_of_state,
    head_words,
    words_beside,
)
from ankita.analysis._cues import (
    CLAIM_WORDS,
    CONNECTORS,
    MONTH_STEMS,
    OPPOSITE_OF,
    PARTICLES,
    WEEKDAY_STEMS,
    Finding,
    check_negation,
    negated_words,
    numbers_in,
    slotted,
)
from ankita.analysis._lexicon import STOP_WORDS
from ankita.analysis._profile import Text, as_profile, per_text
from ankita.analysis._similarity import SHORT_FACT_WORDS, match_words
from ankita.analysis._slots import (
    check_value,
    content_sequence,
    content_set,
    share_a_slot,
)
from ankita.analysis._subjects import (
    forms_of,
)
from ankita.analysis._text import (
    content_words,
    names,
    statements,
    stem,
    tokens,
)


def has_opposite_pair(a: Text, b: Text) -> bool:
    """Does one fact hold a word whose opposite the other holds (vegetarian / meat), the two
    naming one slot (`slotted`)?"""
    a, b = as_profile(a), as_profile(b)
    wb = b.forms_of
    return any(slotted(w, o) for w in a.opposite_forms for o in OPPOSITE_OF[w] if o in wb)


def check_numbers(a: Text, b: Text) -> list[Finding]:
    """Both facts state numbers (ages, counts, years, times) and they differ."""
    na, nb = numbers_in(a), numbers_in(b)
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
    for vocabulary, what in ((WEEKDAY_STEMS, "days"), (MONTH_STEMS, "months")):
        da = forms_of(a) & vocabulary
        db = forms_of(b) & vocabulary
        if da and db and da != db:
            findings.append(
                Finding(
                    what,
                    f"{', '.join(sorted(da))} vs {', '.join(sorted(db))}",
                    tuple(sorted(da ^ db)),
                )
            )
    return findings


@per_text
def _split_on_connector(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    toks = tokens(text)
    for connector in CONNECTORS:
        n = len(connector)
        for i in range(len(toks) - n + 1):
            if toks[i : i + n] == connector and i > 0:
                left = frozenset(stem(w) for w in toks[:i] if w not in STOP_WORDS)
                right = frozenset(stem(w) for w in toks[i + n :] if w not in STOP_WORDS)
                if left and right:
                    return left, right
    return None


def check_swapped(a: Text, b: Text) -> list[Finding]:
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


def check_opposites(a: Text, b: Text) -> list[Finding]:
    """A word on one side whose opposite is on the other side only."""
    wa, wb = forms_of(a), forms_of(b)
    neg_a, neg_b = negated_words(a), negated_words(b)
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
                if {word, opposite} <= PARTICLES and not {
                    n for n in words_beside(a, word, True) if n[0] == "<"
                } & words_beside(b, opposite, True):
                    continue
                # Opposites in two different slots say nothing against each other ("home" /
                # "office" in unrelated clauses): beyond short facts, a word beside them, or
                # the first one they say something of, must be the same on both sides.
                longest = max(len(content_words(a)), len(content_words(b)))
                if (
                    longest > SHORT_FACT_WORDS
                    and not words_beside(a, word) & words_beside(b, opposite)
                    and not head_words(a, word) & head_words(b, opposite)
                ):
                    continue
                return [Finding("opposites", f"'{word}' vs '{opposite}'", (word, opposite))]
    return []


_BE = frozenset({"is", "are", "was", "were", "be", "been", "being"})


@per_text
def _passive(text: str) -> bool:
    """A form of "be" and later "by": the doer is named after the verb."""
    toks = tokens(text)
    first = next((i for i, t in enumerate(toks) if t in _BE), None)
    return first is not None and "by" in toks[first + 1 :]


def check_order(a: Text, b: Text) -> list[Finding]:
    """Roles swapped around a shared word: "the turtle follows the fish" / "the fish follows
    the turtle". Reordered phrases with nothing between them ("from home remotely") pass.
    Clause by clause: across clauses word order is free ("I love rock music, and I listen to
    it at work")."""
    for part_a, part_b in clause_pairs(a, b):
        if found := _swapped_roles(part_a, part_b):
            return found
    return []


def clause_pairs(a: Text, b: Text) -> Iterator[tuple[Text, Text]]:
    """Each clause of `a` with each clause of `b`; a text of one clause is its own."""
    for part_a in statements(a) or (a,):
        for part_b in statements(b) or (b,):
            yield part_a, part_b


def _swapped_roles(a: Text, b: Text) -> list[Finding]:
    if len(content_set(a) & content_set(b)) < 3:
        return []  # a swap around a third word needs three shared words
    if _passive(a) != _passive(b):
        return []  # the passive names the doer last: "a jump is performed by a man"
    sa, sb = content_sequence(a), content_sequence(b)
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


def check_attribute(a: Text, b: Text) -> list[Finding]:
    """One single-valued attribute of the user (home, age, marital status, name, employer,
    birthday, favourite X) with two different values."""
    return [
        Finding("attribute", f"{key}: '{x}' vs '{y}'", tuple(f"{x} {y}".split()))
        for key, x, y in attribute_conflicts(a, b)
    ]


@per_text
def _days_and_months(text: str) -> tuple[bool, bool]:
    forms = forms_of(text)
    return bool(forms & WEEKDAY_STEMS), bool(forms & MONTH_STEMS)


def polar_cue(a: Text, b: Text) -> bool:
    """False only when neither a negation, nor opposites, nor a change of state can be found
    between `a` and `b` (in `disagreements` order): the preconditions of those three checks."""
    a, b = as_profile(a), as_profile(b)
    if a.negated_words or b.negated_words:
        return True
    if bool(a.change_words) != bool(b.change_words):
        return True
    return not a.opposite_forms.isdisjoint(b.opposed_forms)


@per_text
def opposite_forms(text: str) -> frozenset[str]:
    """The text's word forms (stop words too) that have an opposite."""
    return frozenset(w for w in forms_of(text) if w in OPPOSITE_OF)


@per_text
def opposed_forms(text: str) -> frozenset[str]:
    """Every word form whose opposite the text holds (the opposites are symmetric)."""
    return frozenset(o for w in opposite_forms(text) for o in OPPOSITE_OF[w])


def may_conflict(a: Text, b: Text) -> bool:
    """False only when no check below can return a finding other than "different": every
    branch is the precondition of one or more checks, read from per-text features
    of each text's profile, so a pair can skip the analysis for a fraction of its cost."""
    a, b = as_profile(a), as_profile(b)
    if not a.attribute_keys.isdisjoint(b.attribute_keys):
        return True
    if polar_cue(a, b):  # negation, opposites, change of state
        return True
    if a.numbers_in and b.numbers_in:
        return True
    (day_a, month_a), (day_b, month_b) = a.days_and_months, b.days_and_months
    if (day_a and day_b) or (month_a and month_b):
        return True
    if a.split_on_connector and b.split_on_connector:
        return True
    if len(a.content_set & b.content_set) >= 3:  # order: three shared words at least
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


def disagreements(a: Text, b: Text) -> list[Finding]:
    """Every finding of every check, in a fixed order, without duplicates."""
    seen: list[Finding] = []
    for check in CHECKS:
        for finding in check(a, b):
            if finding not in seen:
                seen.append(finding)
    return seen


def frame_words(
    a: Text, b: Text, findings: list[Finding] | tuple[Finding, ...]
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
