"""A stated change ("started", "no longer", "moved"): its words, what it ends or replaces, and
the check that a change conflicts only with the fact holding that value."""

from __future__ import annotations

from ankita.analysis._attributes import homes
from ankita.analysis._claims import ended_asserted
from ankita.analysis._cues import (
    CHANGE_OF_STATE,
    CHANGE_PHRASES,
    DETERMINERS,
    ENDING,
    OPPOSITE_OF,
    SUBJECT_PRONOUNS,
    Finding,
)
from ankita.analysis._lexicon import NEGATIONS, STOP_WORDS
from ankita.analysis._profile import Text, as_profile, per_text, raw_text
from ankita.analysis._similarity import match_words
from ankita.analysis._subjects import (
    forms_of,
    short_claim,
    subject,
    subject_words,
)
from ankita.analysis._text import (
    clauses,
    content_words,
    inner_names,
    names,
    stem,
    tokens,
)


def head_words(text: Text, word: str) -> frozenset[str]:
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


def words_beside(text: Text, word: str, ends: bool = False) -> frozenset[str]:
    """The stems just before and after each place of `word` (or a form of it) in the text,
    within its clause, articles skipped; with `ends`, a clause's start and end count too."""
    found: set[str] = set()
    target = stem(word)
    for clause in clauses(text):
        seq = ["^", *(stem(w) for w in clause if w not in DETERMINERS), "$"]
        for i in range(1, len(seq) - 1):
            if seq[i] in (target, word):
                # A subject pronoun is beside every verb: it names no slot.
                found |= {f"<{seq[i - 1]}"} if seq[i - 1] not in SUBJECT_PRONOUNS else set()
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


# Each change phrase under its first word: a word that opens none and is no change word is
# passed over without looking back for a negation (most words of most facts).
_PHRASES_AT: dict[str, tuple[tuple[str, ...], ...]] = {}
for _phrase in CHANGE_PHRASES:
    _PHRASES_AT[_phrase[0]] = (*_PHRASES_AT.get(_phrase[0], ()), _phrase)


# Particles after which a change word tells a visit or a delivery.
_VISIT_AFTER = {w: frozenset({"off", "by"}) for w in ("drop", "dropped", "dropping")}


@per_text
def change_words(text: str) -> frozenset[str]:
    found: set[str] = set()
    for clause in clauses(text):
        for i, word in enumerate(clause):
            phrases = _PHRASES_AT.get(word, ())
            if not phrases and word not in CHANGE_OF_STATE:
                continue
            negated = any(w in NEGATIONS for w in clause[max(0, i - 4) : i])
            # "Dropped off baked goods", "dropped by the shelter": a visit, not an end.
            if clause[i + 1 : i + 2] and clause[i + 1] in _VISIT_AFTER.get(word, ()):
                continue
            if word in CHANGE_OF_STATE and not (negated and word in _NEGATABLE):
                found.add(word)
            for phrase in phrases:
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
# Changes that replace one thing with another, named after "to": where they went is current.
_SWITCHES = frozenset({"switched", "switch", "switching", "migrated", "converted"})
# A past habit says nothing of the present but of the very thing it names.
_PAST = _STARTS | {"used to"}
_CLAUSE_WIDE = frozenset({"now", "nowadays", "anymore", "any", "these", "days"})


@per_text
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
        start = 1 if clause[0] in SUBJECT_PRONOUNS or clause[0] == name else 0
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


def only_ends(text: Text) -> bool:
    """States a change, and every change word only ends something (`ENDING`)."""
    words = change_words(text)
    return bool(words) and words <= ENDING


def check_change_of_state(a: Text, b: Text) -> list[Finding]:
    """Change-of-state wording ("moved to", "quit", "no longer", "now") on one side only."""
    ca, cb = change_words(a), change_words(b)
    if bool(ca) == bool(cb):
        return []
    side, words = ("first", ca) if ca else ("second", cb)
    # The other side says the same change, negated ("I am not moving to the UK"): that is
    # the negation's finding, and the change's words are no difference of slot.
    changed = {w for p in words for w in p.split()}
    if changed <= set(tokens(a if cb else b)):
        return []
    # A move to the home the other fact states replaces nothing ("I live in Berlin" / "I
    # moved to Berlin in 2019").
    if changed & _MOVES:
        home_a, home_b = homes(a), homes(b)
        if any(match_words(home_a[k], home_b[k]) for k in home_a.keys() & home_b.keys()):
            return []
        # A move replaces a home: a fact that states none, and shares with the move only
        # where it went, has nothing it replaces ("Joanna moved to a new apartment" /
        # "Joanna's new apartment has a balcony"); "The deadline moved to Wednesday" / "The
        # deadline is Friday" and "We moved from Postgres to MySQL" / "I use Postgres" share
        # more.
        mover, other = (a, b) if ca else (b, a)
        if changed <= _MOVES and not homes(other) and _only_where_to(mover, other, _MOVES):
            return []
    # A switch to what the other fact states replaces nothing it says: "I switched from VS
    # Code to Neovim" / "My favourite editor is Neovim" agree ("I switched to Chrome" / "I
    # use Firefox", sharing nothing, may still disagree).
    if changed <= _SWITCHES:
        mover, other = (a, b) if ca else (b, a)
        if _shares_words(mover, other) and _only_where_to(mover, other, _SWITCHES):
            return []
    # A start ends nothing by itself: "Gina opened a store" / "Gina started a store" agree.
    # It replaces only the opposite of what it starts. Any other change needs its slot named
    # in the other fact, but for two short facts of one claim each, whose slot cosine may
    # tell ("I no longer cycle to work" / "Biking to the office daily"), unless the other
    # names things the change does not ("Marta visited us in Lisbon" / "I moved to Porto").
    if not (changed_slot_said(a, b) or ended_said(a, b)) and (
        words <= _STARTS
        or not (
            short_claim(a)
            and short_claim(b)
            and not words <= _PAST
            and inner_names(b if ca else a) <= names(a if ca else b)
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


def changed_slot_said(a: Text, b: Text) -> bool:
    """Whether the fact without change wording names, in its own words, the slot the other's
    stated change ends or replaces (SPEC §4.4: "Anna is running for office again" says
    nothing against "Anna practises taekwondo"), or its opposite ("I'm vegetarian" / "I
    started eating meat"; "I'm married" / "we divorced"); a start needs the opposite."""
    ca, cb = change_words(a), change_words(b)
    if bool(ca) == bool(cb):
        return False
    words, scope, other = (ca, change_scope(a), b) if ca else (cb, change_scope(b), a)
    changed = {w for p in words for w in p.split()}
    if {o for w in scope | changed for o in OPPOSITE_OF.get(w, ())} & forms_of(other):
        return True
    return not words <= _STARTS and bool(
        match_words(scope, content_words(other) - subject_words(other))
    )


def ended_said(a: Text, b: Text) -> bool:
    """Whether an English change that only ends something (not a past habit) ends what the
    other fact asserts of its subject, read from the two texts' propositions
    (`_claims.ended_asserted`): "Maria stopped going to the gym after her surgery" / "Maria
    goes to the gym on Saturdays", where the change's words stop at "to"."""
    ca, cb = change_words(a), change_words(b)
    if bool(ca) == bool(cb) or "used to" in ca | cb:
        return False
    ending, other = (as_profile(a), as_profile(b)) if ca else (as_profile(b), as_profile(a))
    # A word besides whom they are about, before either text is parsed: most pairs that
    # reach here share only a name ("Pelo no longer enjoys dancing" / "Pelo went to a game
    # night").
    return (
        ending.language == other.language == "en"
        and only_ends(ending)
        and _shares_words(ending, other)
        and ended_asserted(raw_text(ending), raw_text(other), ca | cb)
    )


def _shared_words(a: Text, b: Text) -> list[tuple[str, str]]:
    """The content words the two facts share (`match_words` pairs), names of subjects aside."""
    return match_words(content_words(a) - subject_words(a), content_words(b) - subject_words(b))


def _shares_words(a: Text, b: Text) -> bool:
    return bool(_shared_words(a, b))


def _only_where_to(mover: Text, other: Text, moves: frozenset[str]) -> bool:
    """Whether every word `other` shares with `mover` (names of subjects aside) lies where the
    move or switch went: after its last word of `moves`, and after "to" where it also says
    "from"."""
    words = tokens(mover)
    at = max((i for i, w in enumerate(words) if w in moves), default=-1)
    tail = list(words[at + 1 :])
    # What a switch replaces may come first ("switched my phone plan to a cheaper one").
    if "to" in tail and ("from" in tail[: tail.index("to")] or moves is _SWITCHES):
        tail = tail[tail.index("to") :]
        # "Switched to driving a Honda": the doing is the slot, what follows it the value.
        if moves is _SWITCHES and len(tail) > 1 and tail[1].endswith("ing"):
            tail = tail[2:]
    where = frozenset(stem(w) for w in tail)
    return all(x in where for x, _ in _shared_words(mover, other))
