"""Merge, conflict or plain create for one new fact against one stored fact (pure)."""

from __future__ import annotations

from collections.abc import Callable

from ankita._config import Settings
from ankita.analysis._change import ended_said, only_ends
from ankita.analysis._claims import contradicting
from ankita.analysis._comparison import (
    CONFLICT,
    CREATE,
    MERGE,
    MERGE_ONLY_CHECKS,
    NOVEL_WORDS_KEPT,
    SEMANTIC_FRAME_CHECKS,
    Comparison,
    Decision,
    Gates,
)
from ankita.analysis._cues import (
    CLAIM_WORDS,
    Finding,
    quoted_negations,
)
from ankita.analysis._disagree import (
    disagreements,
    frame_words,
    may_conflict,
    polar_cue,
)
from ankita.analysis._gates import could_conflict
from ankita.analysis._language import reads
from ankita.analysis._profile import Text, TextProfile, as_profile, per_text, profile_of, raw_text
from ankita.analysis._similarity import (
    SHORT_FACT_WORDS,
    LexicalScore,
    calibrate,
    count_covered,
    covered_by,
    initials_of,
    lexical_score,
    match_words,
    score_words,
)
from ankita.analysis._subjects import (
    named_subjects_differ,
    other_subjects,
    owner_and_owned,
    subject,
    subject_words,
    subjects_differ,
)
from ankita.analysis._text import (
    content_words,
    inner_names,
    leading_name,
    names,
    sentences,
    shown_words,
    statements,
    stem,
)

NEW_WORDS_KEPT = 4  # see `compare_texts`
FRAGMENT_TOKENS = 2  # a clause of fewer tokens is a fragment ("John,"), not a statement


@per_text
def clause_units(text: str) -> tuple[TextProfile, ...]:
    """What `clause_conflict` compares of a text: each of its clauses, or the whole text if it
    has one, that is not a fragment ("John," or "climbing," states nothing of its own)."""
    units = [profile_of(part) for part in statements(text)] or [profile_of(text)]
    return tuple(unit for unit in units if len(unit.tokens) >= FRAGMENT_TOKENS)


@per_text
def clause_cues(text: str) -> tuple[bool, frozenset[bool], frozenset[str], frozenset[str]]:
    """Of the text's `clause_units` together: whether one negates or has clauses of its own,
    whether each states a change, their words with an opposite and the opposites of those (what
    `polar_cue` and `clause_conflict` read of each clause)."""
    units = clause_units(text)
    return (
        any(unit.negated_words or unit.statements for unit in units),
        frozenset(bool(unit.change_words) for unit in units),
        frozenset().union(*(unit.opposite_forms for unit in units)),
        frozenset().union(*(unit.opposed_forms for unit in units)),
    )


@per_text
def one_claim(text: str) -> bool:
    """Each sentence short enough to say one thing: a chat turn of short sentences is read
    sentence by sentence, while one long sentence ("Caroline went hiking last week and got
    into a bad spot with some people") strings several things together. Cosine says "the same
    subject" only between such facts: between two long ones it measures a shared topic, and
    on a stream every fact shares its topic with dozens (SPEC §4.4)."""
    return all(len(content_words(part)) <= CLAIM_WORDS for part in sentences(text) or (text,))


def who(text: Text) -> str:
    """Whom a fact is about, for a reason: "self", "my sister", "Caroline"."""
    found = subject(text) or "?"
    return found[5:].title() if found.startswith("name ") else found


def names_apart(
    a: Text, b: Text, frames: tuple[frozenset[str], frozenset[str]] | None = None
) -> tuple[str, str] | None:
    """The same statement about two differently named things ("Anna is 30" / "Marek is 41",
    "I lived in Oslo for 3 years" / "I lived in Rome for 5 years"): a name in each frame that
    the other does not hold, and the rest of the frames alike (Jaccard >= 0.5) or both frames
    short. A name stands for one individual, so these are two facts, not one that changed. In
    a long chat turn a name is mostly a passing detail, which those conditions leave out. Words a
    finding took out (a weekday, a month) are the disagreement itself. None if not apart."""
    words_a, words_b = frames or (content_words(a), content_words(b))
    only_a, only_b = _unshared_names(a, b, words_a, words_b)
    if not only_a or not only_b:
        return None
    rest_a, rest_b = words_a - names(a), words_b - names(b)
    shared = len(match_words(rest_a, rest_b))
    union = len(rest_a) + len(rest_b) - shared
    short = max(len(words_a), len(words_b)) <= SHORT_FACT_WORDS
    return (only_a[0], only_b[0]) if short or union == 0 or shared / union >= 0.5 else None


def _unshared_names(
    a: Text,
    b: Text,
    words_a: frozenset[str],
    words_b: frozenset[str],
) -> tuple[list[str], list[str]]:
    """The names in each frame that the other frame does not hold (nor as initials)."""
    return (
        sorted(
            n
            for n in names(a) & words_a
            if not count_covered((n,), words_b) and not initials_of(n, b)
        ),
        sorted(
            n
            for n in names(b) & words_b
            if not count_covered((n,), words_a) and not initials_of(n, a)
        ),
    )


def _holds_unshared_name(a: TextProfile, b: TextProfile) -> bool:
    """A name inside a sentence of `a` that `b`'s content words do not hold (nor as initials):
    one side of `_unshared_names` over the whole texts, as a yes or no."""
    return any(
        not covered_by(n, b) and not initials_of(n, b) for n in inner_names(a) & a.content_words
    )


def _lexical_evidence(lex: LexicalScore) -> bool:
    """SPEC §4.2: >= 3 content words each, >= 2 of them agree, Jaccard >= 0.5."""
    return (
        len(lex.words_a) >= 3
        and len(lex.words_b) >= 3
        and len(lex.matches) >= 2
        and lex.jaccard >= 0.5
    )


def _denied_possession(old: TextProfile, new: TextProfile, found: tuple[Finding, ...]) -> bool:
    """Whether one fact denies its subject has what the other says the subject has: "Nate
    doesn't have a girlfriend" / "Nate's girlfriend Anna came to watch" are not about two
    people, the second's subject is what the first denies (read by the parser)."""
    if (old.language, new.language) != ("en", "en") or all(f.check != "negation" for f in found):
        return False
    # Read in the words first, so that the parser reads only such a pair: one subject is what
    # the other's owns ("name nate" / "name nate girlfriend"), and what it is is denied.
    whose, other = subject(old) or "", subject(new) or ""
    if not owner_and_owned(whose, other):
        return False
    denied = quoted_negations(found)
    if stem(max(whose, other, key=len).split()[-1]) not in denied:
        return False
    pair = contradicting(raw_text(old), raw_text(new), denied)
    # One subject by its own word on both sides: a pronoun, which the parser lets stand for
    # anyone, does not say whose ("I don't have a dog" / "My neighbour's dog barks").
    return (
        pair is not None
        and pair[0].predicate == "have"
        and pair[0].subject not in ("", "there")
        and pair[0].subject == pair[1].subject
    )


def clause_conflict(
    new_text: Text, old_text: Text, kind: str, settings: Settings
) -> tuple[str, str, str] | None:
    """A clause of each side that conflicts with the other through a negation, opposites or a
    stated change, when one side has several clauses: "I love wine too, I went tasting in May"
    / "OK, but I do not even like wine". The whole turns share too little for a frame, but a
    clause states one thing, and the small talk around it says nothing about it. Lexical only
    (only the whole text has a vector). Returns the two clauses and why, or None."""
    new_text, old_text = as_profile(new_text), as_profile(old_text)
    if not new_text.statements and not old_text.statements:
        return None
    # Without a negation, opposites or a stated change between them, two clauses of one
    # clause each cannot come out as such a conflict: their comparison is skipped. Mostly
    # the clauses' cues taken together already say so.
    (cued_old, changes_old, opposite_old, _), (cued_new, changes_new, _, opposed_new) = (
        old_text.clause_cues,
        new_text.clause_cues,
    )
    if (
        not (cued_old or cued_new)
        and len(changes_old | changes_new) < 2
        and opposite_old.isdisjoint(opposed_new)
    ):
        return None
    # A clause may leave its subject behind ("Anna Berg, born in Oslo"): two turns that each
    # name something the other does not are about two things. Only names inside a sentence
    # count; a capital that opens one is mostly an interjection ("Ha", "Honestly"). Asked
    # before the clauses are paired: on a stream it ends most of the pairs that get this far.
    if _holds_unshared_name(old_text, new_text) and _holds_unshared_name(new_text, old_text):
        return None
    pairs = [
        (old_part, new_part)
        for old_part in old_text.clause_units
        for new_part in new_text.clause_units
        if polar_cue(old_part, new_part) or old_part.statements or new_part.statements
    ]
    for old_part, new_part in pairs:
        part = compare_texts(new_part, kind, old_part, kind, settings)
        if part.action == CONFLICT and all(
            f.check in SEMANTIC_FRAME_CHECKS
            for f in part.findings
            if f.check not in MERGE_ONLY_CHECKS
        ):
            return raw_text(old_part), raw_text(new_part), part.reason
    return None


def compare_texts(
    new: Text,
    new_kind: str,
    old: Text,
    old_kind: str,
    settings: Settings,
    cosine: float | None = None,
    embedder_model: str | None = None,
    analyse_all: bool = False,
    novelty: Callable[[str, str], int | None] | None = None,
) -> Comparison:
    """Decide what `new_text` should do to `old_text`.

    `cosine` is given only when *both* facts have a vector from the same model; a pair scored
    half by cosine and half lexically can therefore never produce a cosine conflict.
    `analyse_all` runs the disagreement analysis even where `could_conflict` proves it cannot
    change the decision (for explanations, and to test that proof). Either text may be given
    as its profile (`_profile.profile_of`), as a write does: each is analysed once.
    `novelty(new, old)` counts the new text's words that no word of the old one is close to
    (the writer reads it with its embedder, `_novelty`); it is asked only of a cosine merge
    between long English facts.
    """
    new_text, old_text = as_profile(new), as_profile(old)
    lex = lexical_score(old_text, new_text)
    # A model trained on English scores "मुझे चाय पसंद है" and its negation 0.95: its cosine
    # is no evidence on facts it cannot read, which are then compared by their words.
    languages = sorted({old_text.language, new_text.language})
    model_reads = embedder_model is None or cosine is None or reads(embedder_model, languages)
    if not model_reads:
        cosine = None
    dedup, conflict_line = settings.thresholds(new_kind)
    score, method = lex.score, "lexical"
    semantic: float | None = None
    novel: int | None = None
    claims = old_text.one_claim and new_text.one_claim
    if cosine is not None:
        semantic = calibrate(
            cosine, settings.cosine_lines(embedder_model, new_kind), (dedup, conflict_line)
        )
        if semantic > score:
            score, method = semantic, f"embedding:{embedder_model}"
            # Two long sentences on one topic score high by cosine while each says something
            # the other does not: folding one into the other would lose it (SPEC §4.4).
            # Unless the new fact adds few words of its own, which the merge keeps in history.
            unmatched = len(lex.words_b) - len(lex.matches)
            if not claims and unmatched > NEW_WORDS_KEPT:
                dedup = max(dedup, settings.long_merge_line)
            # Nor when it holds words no word of the old one stands for, read by the model word
            # by word: "made a plate in pottery class" is not "signed up for a pottery class".
            if (
                not claims
                and novelty is not None
                and languages == ["en"]
                and dedup <= score < settings.novel_merge_line
            ):
                novel = novelty(raw_text(new_text), raw_text(old_text))
                if novel is not None and novel > NOVEL_WORDS_KEPT:
                    dedup = settings.novel_merge_line
    same_kind = new_kind == old_kind
    different_people = other_subjects(old_text, new_text)
    # A merge keeps one subject's fact: "Gina offered to help Jon" is not "Jon plans to work
    # with Gina", though each names the other.
    two_named = named_subjects_differ(old_text, new_text)
    # Both of the above imply this: each fact says whom it is about, and not the same one.
    subjects_apart = subjects_differ(old_text, new_text)
    findings: tuple[Finding, ...] = ()
    frame_score = 0.0
    conflicting: tuple[Finding, ...] = ()
    frames: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    # Below the merge line only a finding that is not "different" can change the decision,
    # and only between facts of one kind (of two kinds, only a merge can come of it).
    if settings.detect_disagreement and (
        analyse_all
        or (
            (score >= dedup or (same_kind and may_conflict(old_text, new_text)))
            and could_conflict(old_text, new_text, score, conflict_line)
        )
    ):
        findings = tuple(disagreements(old_text, new_text))
        conflicting = tuple(f for f in findings if f.check not in MERGE_ONLY_CHECKS)
        if conflicting:
            frames = frame_words(old_text, new_text, conflicting)
            frame = score_words(*frames)
            # One shared word is a subject only for a stated change ("I quit coffee") or a
            # negation; for different numbers or days it is too little ("I run on Sundays" /
            # "I swim on Wednesdays").
            one_word_ok = any(f.check in ("change_of_state", "negation") for f in conflicting)
            frame_score = frame.score if one_word_ok else max(frame.jaccard, frame.containment)
            # The plain rule's lexical evidence (>= 2 shared words, Jaccard >= 0.5) on the frame
            # also says "same subject" ("56 year old woman" / "twenty year old male"); the name
            # both open with says whose it is, not what ("Sam goes running on Mondays" / "Sam
            # goes swimming on Fridays").
            named = subject_words(old_text) | subject_words(new_text)
            said = [m for m in frame.matches if not named & set(m)]
            if len(said) >= 2 and frame.jaccard >= 0.5:
                frame_score = max(frame_score, settings.thresholds(new_kind)[1])
            # One value replaced in an otherwise identical sentence, or one attribute of the
            # user stated twice: the frame is the same.
            if any(f.check in ("value", "attribute") for f in conflicting):
                frame_score = 1.0
            # An ending whose ended doing the other asserts of its subject is one slot,
            # whatever else each says ("I stopped running because of a knee injury" / "I go
            # running on Tuesday mornings"), read from the two texts' propositions.
            elif any(f.check == "change_of_state" for f in conflicting) and ended_said(
                old_text, new_text
            ):
                frame_score = 1.0
            # Cosine may stand for "same subject" only where the wording differs by polarity;
            # "I'm 41" / "My wife is 39" are close in meaning but about different people, and
            # so are "I moved to Lisbon" / "My colleague lives in Porto".
            if (
                semantic is not None
                and all(f.check in SEMANTIC_FRAME_CHECKS for f in conflicting)
                and not different_people
                and claims
            ):
                frame_score = max(frame_score, semantic)

    # A value or an attribute finding *is* the differing name ("my sister lives in Lyon" /
    # "... in Paris"), and so is a stated change when no name is the subject ("I live in
    # Toronto" / "I moved to Montreal"); any other finding between two named things compares
    # two things.
    # A stated change replaces one value, so two names on each side that the other lacks are
    # two things ("My sister Anna moved to Lyon" / "My colleague Marek lives in Oslo"); and a
    # change that only ends something names what ended ("I quit working on Apollo" / "I work
    # on Zephyr").
    apart, names_are_values = None, False
    if conflicting:
        # Unless the two facts open with two different names: then what differs is whose
        # fact it is ("Locker 12 code is 4821" / "Locker 13 code is 4821").
        names_are_values = (
            not two_named
            and any(f.check in ("value", "attribute") for f in conflicting)
            or (
                any(f.check == "change_of_state" for f in conflicting)
                and not subjects_apart
                and not leading_name(old_text)
                and not leading_name(new_text)
                and not (only_ends(old_text) or only_ends(new_text))
                and min(len(n) for n in _unshared_names(old_text, new_text, *frames)) < 2
            )
        )
        apart = None if names_are_values else names_apart(old_text, new_text, frames)
    gates = Gates(
        score,
        dedup,
        conflict_line,
        old_kind,
        new_kind,
        _lexical_evidence(lex),
        cosine is not None,
        tuple(languages),
        model_reads,
        settings.detect_disagreement,
        bool(findings),
        frame_score,
        apart,
        different_people,
        novel=novel,
    )

    def result(action: Decision, reason: str) -> Comparison:
        return Comparison(
            action,
            round(score, 6),
            method,
            lex,
            cosine,
            findings,
            round(frame_score, 6),
            same_kind,
            shown_words(reason, old_text, new_text),
            gates,
            one_subject=apart is None and not different_people,
            worth_judging=claims or polar_cue(old_text, new_text),
        )

    why = "; ".join(str(f) for f in conflicting)
    if score >= dedup and (different_people or two_named):
        return result(
            CREATE,
            f"similar ({score:.2f}) but about different people "
            f"('{who(old_text)}' / '{who(new_text)}')",
        )
    if score >= dedup:
        if not findings:
            return result(MERGE, f"same fact: {method} score {score:.2f} >= {dedup:.2f}")
        if not conflicting:
            return result(
                CREATE,
                f"similar ({score:.2f}) but not the same: {'; '.join(str(f) for f in findings)}",
            )
        if apart:
            return result(
                CREATE, f"similar but about different names ('{apart[0]}' vs '{apart[1]}')"
            )
        if same_kind:
            return result(CONFLICT, f"near-identical but they disagree ({why})")
        return result(CREATE, f"similar but disagreeing, and kinds differ ({new_kind}/{old_kind})")
    if not same_kind:
        return result(CREATE, f"different kinds ({new_kind}/{old_kind}) never conflict")
    # Two people do not disagree ("My sister does not eat meat" / "My brother eats meat"),
    # unless what differs is a value or an attribute, which names whose it is ("I am single" /
    # "My wife and I ...").
    # Naming the other's person makes one fact for a merge ("I live with my sister" / "My
    # sister lives with me"), not one subject for a conflict ("My sister lives in Porto" /
    # "I moved to Porto to be near my sister").
    people_apart = (
        subjects_apart
        and not names_are_values
        and not _denied_possession(old_text, new_text, conflicting)
    )
    if conflicting and frame_score >= conflict_line and not apart and not people_apart:
        return result(CONFLICT, f"same subject ({frame_score:.2f}) but they disagree ({why})")
    if (
        settings.detect_disagreement
        and not different_people
        and (found := clause_conflict(new_text, old_text, new_kind, settings))
    ):
        old_part, new_part, why_part = found
        return result(
            CONFLICT, f"one clause of each disagrees ('{old_part}' / '{new_part}'): {why_part}"
        )
    if score >= conflict_line and not settings.detect_disagreement:
        if method == "lexical" and _lexical_evidence(lex):
            return result(CONFLICT, f"related ({score:.2f}) with lexical evidence")
        if method != "lexical":
            return result(CONFLICT, f"related by {method} ({score:.2f})")
    if score >= conflict_line and conflicting and frame_score >= conflict_line:
        # The frame is related, so what kept them apart is who or what they are about.
        if apart:
            return result(
                CREATE,
                f"related ({score:.2f}) and they disagree ({why}), but "
                f"about different names ('{apart[0]}' vs '{apart[1]}')",
            )
        if people_apart:
            return result(
                CREATE,
                f"related ({score:.2f}) and they disagree ({why}), but "
                f"about different people ('{who(old_text)}' / "
                f"'{who(new_text)}')",
            )
    if score >= conflict_line and conflicting:
        return result(
            CREATE,
            f"related ({score:.2f}), but what disagrees ({why}) is not about "
            f"one subject (frame {frame_score:.2f} < {conflict_line:.2f})",
        )
    if score >= conflict_line:
        return result(CREATE, f"related ({score:.2f}) and compatible: no disagreement found")
    return result(CREATE, f"unrelated ({method} score {score:.2f} < {conflict_line:.2f})")
