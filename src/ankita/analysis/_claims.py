"""What two texts' propositions (`_propositions`) say of each other: whether one denies what the
other asserts of the same subject, whether they are about one thing at all, and the readings
the standing of a flag rests on (`_standing`)."""

from __future__ import annotations

from dataclasses import replace

from ankita.analysis._cues import PEOPLE
from ankita.analysis._propositions import ENDERS, Proposition, propositions
from ankita.analysis._similarity import initials_of, match_words
from ankita.analysis._text import stem, tokens

# The people one may have ("his girlfriend"): none is a kind of thing one may be denied.
_PEOPLE = frozenset(stem(w) for w in PEOPLE)
# Predicates too general to carry a negation alone: the object must match.
_LIGHT = frozenset({"be", "have", "do", "get", "make", "go", "take"})
# Verbs of wishing and planning (stems): what they govern is not yet done.
_WISH = frozenset(
    stem(w) for w in ("want", "plan", "hope", "wish", "intend", "try", "consider", "dream", "aim")
)
# ... and of mulling it over ("thinking about moving"), which reads its doing through a
# preposition, so the doing has no subject and the verb no object of its own.
_MULL = frozenset({stem("think")})
# ... and a loss: a fact telling one asserts nothing that holds.
_LOSSES = ENDERS | {stem("lose")}
# Subjects that name nobody in particular, or a pronoun: they may be anyone the other names.
_PRONOUNS = frozenset(
    {
        "i",
        "he",
        "she",
        "they",
        "we",
        "you",
        "it",
        "there",
        "one",
        "someone",
        "somebody",
        "anyone",
        "anybody",
        "nobody",
        "person",
        "people",
    }
)


def _of_kind(denied: frozenset[str], asserted: frozenset[str]) -> bool:
    """Whether what is asserted is of the kind denied: each modifier of the denied object is
    one of the asserted's, or its prefix ("thrift" / "thrifty")."""
    return len(match_words(denied, asserted)) == len(denied)


def _one_thing(a: str, b: str, first: str, second: str) -> bool:
    """Two objects the parser read apart that may name one thing: one is missing ("not
    successful" / "successful in the end"), or one is an acronym of capitalised words in the
    other text ("the UK" / "the United Kingdom"), not "pork" / "chicken"."""
    if not a or not b:
        return True
    return any(
        initials_of(short, t) for short, t in ((a, first), (a, second), (b, first), (b, second))
    )


def _only_wished(p: Proposition, said: frozenset[Proposition]) -> bool:
    """Whether `p` is a doing its subject only wishes or plans, with its object: "James is
    planning to go to a concert" says nothing of having been to one ("I remember watching
    it", "I'll get out soon" do say so). A doing said of nobody under a verb of wishing or
    mulling that reads no other object is one too: "thinking about going to Paris"."""

    def wishes(q: Proposition) -> bool:
        if q.negated or q.predicate == p.predicate or not _same_subject(q.subject, p.subject):
            return False
        if q.predicate in _WISH and q.obj == p.obj:
            return True
        return q.predicate in _WISH | _MULL and not p.subject and not q.obj and bool(q.subject)

    return p.intended and any(wishes(q) for q in said)


def _wanted(p: Proposition, said: frozenset[Proposition]) -> frozenset[str]:
    """The doings `p` wishes, plans or tries, if its object is a verb: the intended
    propositions of its subject in the same text."""
    return frozenset(
        q.predicate
        for q in said
        if q.intended and q is not p and _same_subject(q.subject, p.subject)
    )


def _wants_alike(
    n: Proposition, neg: frozenset[Proposition], p: Proposition, pos: frozenset[Proposition]
) -> bool:
    """A denied wish whose object is a doing ("doesn't want to stop gaming") is answered only
    by a wish of that doing, not by another ("wants to win the next tournament")."""
    if n.obj or n.predicate not in _WISH:
        return True
    denied = _wanted(n, neg)
    return not denied or bool(denied & _wanted(p, pos))


def _same_subject(a: str, b: str) -> bool:
    return not a or not b or a in _PRONOUNS or b in _PRONOUNS or stem(a) == stem(b)


def contradicting(
    first: str, second: str, negated: frozenset[str] = frozenset()
) -> tuple[Proposition, Proposition] | None:
    """A proposition one text negates and the other asserts of the same subject, if any: the
    same predicate and object; or, where the negated words (`negated`, stems) are the
    predicate itself and it says more than be/have/do, the same predicate with objects that
    may be one thing ("I am not flying to the UK" / "I am flying to the United Kingdom"), not
    two ("I don't eat pork" / "I eat chicken"), each in a clause with a subject of its own: a
    gerund said of nobody ("thinks driving in the city is stressful") asserts no driving."""
    pa, pb = propositions(first), propositions(second)
    for neg, pos in ((pa, pb), (pb, pa)):
        for n in (p for p in neg if p.negated):
            of_action = n.predicate in negated and n.predicate not in _LIGHT
            for p in pos:
                if (
                    not p.negated
                    and not _only_wished(p, pos)
                    and _wants_alike(n, neg, p, pos)
                    and (
                        (p.obj == n.obj and _of_kind(n.kinds, p.kinds))
                        or (
                            of_action
                            and n.subject
                            and p.subject
                            and _one_thing(n.obj, p.obj, first, second)
                        )
                    )
                    and p.predicate == n.predicate
                    and _same_subject(n.subject, p.subject)
                ):
                    return n, p
    # Two texts of the same words, one negated: the small model may read the other as a phrase
    # with no verb ("Pat lives in Porto": "lives" a plural noun), but its words say it asserts
    # what the negated one denies.
    if _words_but_denial(first) == _words_but_denial(second):
        for neg, other in ((pa, pb), (pb, pa)):
            if not any(p.negated for p in other):
                for n in sorted((p for p in neg if p.negated), key=lambda p: (p.predicate, p.obj)):
                    return n, replace(n, negated=False)
    return None


# The words a denial adds to a sentence, and the articles it may swap ("a car" / "no car").
_DENIAL = frozenset({"not", "no", "never", "do", "does", "did", "a", "an", "the", "any"})


def _words_but_denial(text: str) -> frozenset[str]:
    return frozenset(stem(t) for t in tokens(text) if t not in _DENIAL)


def related(first: str, second: str) -> bool:
    """Whether the two texts say something of one subject about one thing: the same object,
    or the same predicate (one saying more than be/have/do), whatever the polarity."""
    for p in propositions(first):
        for q in propositions(second):
            if not _same_subject(p.subject, q.subject):
                continue
            if (p.obj and p.obj == q.obj) or (
                p.predicate == q.predicate and p.predicate not in _LIGHT
            ):
                return True
    return False


def actions_only(words: frozenset[str], first: str, second: str) -> bool:
    """Whether two texts tell two doings of one subject with one thing, and the words they
    differ in (`words`, stems) name neither a subject nor a thing: "Melanie taught a yoga
    class" / "Melanie attended a yoga class", "A girl is riding a horse" / "The girl trotted
    the horse" are two things done, not one slot holding two values ("The language of X is
    Dutch" / "... is French", "I use Fedora" / "I use Arch")."""
    pa, pb = propositions(first), propositions(second)
    named = {w for p in pa | pb for w in (stem(p.subject), p.obj, *p.kinds)}
    return (
        bool(words)
        and not words & named
        and any(
            p.obj
            and p.obj == q.obj
            and p.predicate != q.predicate
            and "be" not in (p.predicate, q.predicate)
            and not (p.state or q.state)
            and _same_subject(p.subject, q.subject)
            for p in pa
            for q in pb
        )
    )


def owners_only(words: frozenset[str], first: str, second: str) -> bool:
    """Whether every word (stems) lies in the subject phrase of either text's main verb: "The
    language of Jack Frost was Russian" / "The language of The Other Conquest was Russian" say
    one thing of two subjects, not two values of one slot."""
    said = {w for t in (first, second) for p in propositions(t) for w in p.about}
    return bool(words) and words <= said


def occasions(first: str, second: str, opposed: bool = False) -> bool:
    """Whether both texts tell one kind of event in the simple past of one subject ("Evan
    went to Canada in July" / "Evan went to Canada in August"), or, where the rules found
    opposites (`opposed`), two events about one thing ("lost the tournament" / "won the
    tournament"): then different times or counts are two occasions, not one claim told two
    ways."""
    for p in propositions(first):
        for q in propositions(second):
            if (
                p.past
                and q.past
                and not p.negated
                and not q.negated
                and p.subject
                and q.subject
                and _same_subject(p.subject, q.subject)
                and (p.predicate == q.predicate or (opposed and p.obj and p.obj == q.obj))
                and (p.obj == q.obj or p.predicate not in _LIGHT)
            ):
                return True
    return False


def mention_only(first: str, second: str, negated: frozenset[str]) -> bool:
    """Whether every denial the rules found (`negated`, stems, as objects) denies having,
    being or going of a subject of its own, and the other text says no such thing of that
    subject, only mentions the object: "Andrew does not have any pets" / "Andrew believes
    that pets bring joy", "Calvin has never been to Boston" / "Calvin loves Boston's
    architecture". An existential "there is no X" is not one: it is denied by any X doing
    anything. Having a person says nothing of having a thing: "Andrew and his girlfriend
    volunteered at a pet shelter" says of pets only the word."""
    pa, pb = propositions(first), propositions(second)
    seen = False
    for neg, other in ((pa, pb), (pb, pa)):
        for n in (p for p in neg if p.negated and (p.obj in negated or p.predicate in negated)):
            if n.predicate not in _LIGHT or not n.obj or n.subject in ("", "there"):
                return False
            if any(
                q.predicate == n.predicate
                and not q.negated
                and _same_subject(n.subject, q.subject)
                and (q.obj not in _PEOPLE or n.obj in _PEOPLE)
                for q in other
            ):
                return False
            seen = True
    return seen


# Plurals without an -s that a denial of having names as a kind ("no children").
_PLURALS = frozenset({"children", "people"})


def _kind_denied(text: str, obj: str) -> bool:
    """Whether `text` denies the object `obj` (a stem) as a kind, in the plural: "any pets", "no
    siblings", "kids"; not one thing ("a garden", which the same word in the other fact
    answers), nor a mass ("no experience", which no thing had is a member of)."""
    toks = tokens(text)
    for i, word in enumerate(toks):
        if not (stem(word).startswith(obj) or obj.startswith(stem(word))) or len(word) < 3:
            continue
        plural = (word.endswith("s") and not word.endswith("ss")) or word in _PLURALS
        if plural and not {"a", "an", "one"} & set(toks[max(0, i - 2) : i]):
            return True
    return False


def _denied_in_the_past(text: str) -> bool:
    """Whether a denial is told of the past ("did not have any pets growing up", "never had a
    dog as a kid"): it says nothing of now. "Has never had a pet" runs up to now."""
    toks = tokens(text)
    for i, word in enumerate(toks[:-1]):
        if word == "did" and toks[i + 1] in ("not", "never"):
            return True
        if word == "never" and toks[i + 1] == "had" and not {"have", "has"} & set(toks[:i]):
            return True
    return False


def member_of_denied_kind(first: str, second: str) -> bool:
    """Whether one text denies that its subject has any of a kind ("Andrew does not have any
    pets", "I don't have any pets") and the other says that subject has something, not only
    wished ("his dog Toby", "adopted a puppy", "I have two cats"). The subject is a name, or
    "I" in both (the user); another pronoun may be anyone. Whether the thing is of the kind
    is the contradiction judge's reading; this says only that the two facts deny and assert
    having, of one subject."""

    def named(subject: str) -> bool:
        return bool(subject) and subject not in _PRONOUNS

    pa, pb = propositions(first), propositions(second)
    for (neg, denying), pos in (((pa, first), pb), ((pb, second), pa)):
        for n in neg:
            if not (n.negated and n.predicate == "have" and n.obj):
                continue
            if not (named(n.subject) or n.subject == "i"):
                continue
            if not _kind_denied(denying, n.obj) or _denied_in_the_past(denying):
                continue
            for p in pos:
                if (
                    not p.negated
                    and p.predicate == "have"
                    and p.obj
                    and p.obj != n.obj
                    and not p.intended
                    and (p.subject == n.subject == "i" or (named(p.subject) and named(n.subject)))
                    and _same_subject(n.subject, p.subject)
                ):
                    return True
    return False


def only_intended(word: str, *texts: str) -> bool:
    """Whether `word` (a stem) is a verb of these texts that is only wished, planned or tried
    wherever one says it ("Andrew wants to move out of the city")."""
    said = [p for text in texts for p in propositions(text) if p.predicate == word]
    return bool(said) and all(p.intended for p in said)


def other_value_ended(ending: str, other: str) -> bool:
    """Whether what `ending` says has ended is not what `other` asserts: every verb the two
    share (more than be/have/do, of one subject) is only wished or dreamt of in `other`, or
    has an object in each, and not the same one. "Dave no longer works at the garage" / "Dave
    works at a restoration shop" and "John doesn't play video games anymore" / "John dreams of
    playing professionally" both hold; "Tim stopped playing basketball" / "Tim plays
    basketball" do not."""
    found, said = False, propositions(other)
    for p in propositions(ending):
        # A doing said of nobody is no value that ended: "quit his finance job to work at a
        # shelter" ended the job, not the work at the shelter.
        if p.predicate in _LIGHT or not p.subject:
            continue
        for q in said:
            if q.negated or q.predicate != p.predicate or not _same_subject(p.subject, q.subject):
                continue
            found = True
            # Only wished, or a doing said of nobody (a gerund, as "contradicting" reads it).
            if _only_wished(q, said) or (q.intended and not q.subject):
                continue
            if not p.obj or not q.obj or p.obj == q.obj or p.obj in q.kinds or q.obj in p.kinds:
                return False
    return found


def _holds(p: Proposition, q: Proposition, words: frozenset[str] = frozenset()) -> bool:
    """Whether `q` asserts the doing or thing `p` reads, of one subject: the same verb with
    objects that may be one ("stopped running" / "go running on Tuesdays"; a light verb needs
    the object too), or the same thing under another verb ("stopped using Firefox" / "browse
    with Firefox", "quit smoking" / "smoke a pack a week", "quit his finance job" / "works in
    finance"). `words` are the stems of `q`'s text."""
    # Two kinds of one thing are two things: "no longer teaches dance classes" / "teaches
    # hip hop classes"; unless `q`'s text names `p`'s kind elsewhere ("jazz vinyl records").
    if not _same_subject(p.subject, q.subject) or (
        p.obj == q.obj
        and p.kinds
        and q.kinds
        and not match_words(p.kinds, q.kinds)
        and not match_words(p.kinds, words)
    ):
        return False
    if p.predicate == q.predicate:
        if p.predicate in _LIGHT:
            return bool(p.obj) and p.obj == q.obj
        return not p.obj or not q.obj or p.obj == q.obj or p.obj in q.kinds or q.obj in p.kinds
    # Under another verb only when `p` reads the ending itself or a general verb: "doesn't
    # play football anymore" says nothing of watching it.
    return (
        bool(p.obj)
        and p.predicate in ENDERS | _LIGHT | {"use"}
        and (
            p.obj in (q.obj, q.predicate)
            or (bool(q.obj) and q.predicate not in _LIGHT and q.obj in p.kinds)
        )
    )


def _wished(q: Proposition, said: frozenset[Proposition]) -> bool:
    """A doing its subject only wishes, plans or dreams of, whatever the wish's object, or a
    doing said of nobody ("loves basketball and dreams of playing professionally")."""
    return q.intended and (
        not q.subject
        or any(
            r.predicate in _WISH and not r.negated and _same_subject(r.subject, q.subject)
            for r in said
        )
    )


# Change words that end whatever verb their clause negates or states: "doesn't drink coffee
# anymore", "no longer teaches dance classes".
_CLAUSE_ENDS = frozenset({"anymore", "any more", "not anymore", "no longer", "no more"})


def _ended(text: str, words: frozenset[str]) -> frozenset[Proposition]:
    """What a change told by `words` ends: the objects of an ending verb ("quit her job at the
    bakery") and the doings it governs ("stopped going to the gym"), or what a clause that
    ends by "anymore" or "no longer" negates or states. Not what it says came instead ("left
    his job to pursue dancing")."""
    said = propositions(text)
    enders = {p for p in said if p.predicate in ENDERS}
    found = {p for p in enders if p.obj} | {
        p for p in said if p.intended and any(_same_subject(e.subject, p.subject) for e in enders)
    }
    if words & _CLAUSE_ENDS:
        # "No longer" is no negation to the parser: its clause's verb is what it ends.
        plain = "no longer" in words or "no more" in words
        found |= {
            p for p in said if p.subject and p.predicate not in ENDERS and (p.negated or plain)
        }
    return frozenset(p for p in found if p.predicate != stem("long"))


def ended_asserted(ending: str, other: str, words: frozenset[str]) -> bool:
    """Whether `other` asserts what `ending` says has ended (`_ended`), of its subject: "I
    don't drink coffee anymore" / "I drink coffee every morning" do; "... / I prefer tea over
    coffee" and "Deborah doesn't go to the gym anymore" / "Deborah teaches yoga" do not. An
    ending or a loss in `other` asserts nothing ("Jon lost his job as a banker")."""
    ended = _ended(ending, words)
    named = frozenset(stem(t) for t in tokens(other))
    # `other` names a word of what ended, or none of its propositions can hold it: asked
    # before `other` is parsed (of the facts a write meets, mostly stored ones never parsed).
    keys = {w for p in ended for w in (p.predicate, p.obj, *p.kinds) if w and w not in _LIGHT}
    if not match_words(frozenset(keys), named):
        return False
    said = propositions(other)
    # What `other` tells lost it does not assert held ("Jon lost his job", "mentioned losing
    # his job").
    lost = {q.obj for q in said if q.predicate in _LOSSES}
    # A doing said of nobody where another has a subject is no value that ended ("quit his
    # finance job to work at a shelter"); where none has one, the parser found no subject.
    anyone = not any(p.subject for p in ended)
    return any(
        _holds(p, q, named)
        for p in ended
        if p.subject or anyone
        for q in said
        if not q.negated
        and q.predicate not in _LOSSES
        and q.obj not in lost
        and not _wished(q, said)
    )


def doing_shared(changed: str, other: str) -> bool:
    """Whether a change told by "now" alone says a state ("Ana is now a teacher": a state
    replaces a state), or a doing that `other` asserts too ("I work from the office every day
    now" / "I work remotely"). "I'm learning Japanese with a tutor now" says nothing against
    "I love Japanese food": one may learn one thing and love another."""
    now, said = propositions(changed), propositions(other)
    anyone = not any(p.subject for p in now)
    named = frozenset(stem(t) for t in tokens(other))
    return any(p.state or p.predicate == "be" for p in now) or any(
        _holds(p, q, named)
        for p in now
        if p.subject or anyone
        for q in said
        if not q.negated and not _wished(q, said)
    )
