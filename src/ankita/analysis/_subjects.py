"""Who a fact is about: the name or pronoun it opens with, and whether two facts are about
different people (SPEC §4.4)."""

from __future__ import annotations

import re
import unicodedata

from ankita.analysis._cues import (
    CLAIM_WORDS,
    PEOPLE,
)
from ankita.analysis._lexicon import FUNCTION_WORDS
from ankita.analysis._profile import Text, as_profile, per_text
from ankita.analysis._text import (
    TITLES,
    content_words,
    leading_name,
    number_value,
    sentences,
    stem,
    tokens,
)

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
# Titles and initials before a name ("Dr. Patel", "J. K. Rowling"): the name is what follows.
_TITLES = re.compile(rf"\s*(?:(?:{'|'.join(TITLES)}|[^\W\d_])\.\s+)+(?=[^\W\d_])", re.IGNORECASE)


@per_text
def subject(text: str) -> str | None:
    """Who a fact is about, when its first words say: "self" ("I ..."), "my <person>" ("My
    best friend ...", "My sister ..."), or "name <name>" for a fact that opens with a name
    ("Caroline is learning the piano"; "Locker 12 ..." keeps its number, which tells one
    locker from another), "name <name> <person>" for a name's person ("Anna's sister ...").
    None when they do not (a thing, "My favourite colour ...", a name owning a thing, "Anna's
    store ...", or a pronoun, which in a chat turn may stand for anything)."""
    titled = _TITLES.match(text)
    if titled and titled.end() < len(text):
        return subject(text[titled.end() :])
    toks = tokens(text)
    if not toks:
        return None
    if toks[0] == "i":
        return "self"
    if toks[0] in ("my", "our"):
        person = next((w for w in toks[1:3] if w in PEOPLE), None)
        return f"my {person}" if person else None
    first = _LEADING_WORD.match(unicodedata.normalize("NFKC", text))
    # A name's person is someone else: "Caroline's sister is 30" is not about Caroline.
    if (
        first
        and first.group(2)
        and not first.group(3)
        and len(toks) > 2
        and (toks[1] in PEOPLE or toks[1][:-1] in PEOPLE)
        and leading_name(text)
    ):
        return f"name {toks[0]} {toks[1]}"
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
        # noun of a phrase ("Garden party tonight", "Dentist appointment on Friday"); an
        # adverb may stand between ("Caroline recently joined").
        verb = 2 if toks[1].endswith("ly") and len(toks) > 2 else 1
        if verb_like(toks[verb]):
            return f"name {toks[0]}"
    return None


_IRREGULAR_PAST = frozenset(
    """
went took made lost found got ran saw gave felt met thought told won kept bought brought taught
left said came became began wrote led held knew grew drew flew sold paid spent sent built
quit put set cut hit let shut hurt chose ate drank drove rode wore broke spoke forgot sat
stood heard fell caught slept swam sang fought
""".split()
)


def verb_like(word: str) -> bool:
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


def other_subjects(a: Text, b: Text) -> bool:
    """The two facts say, by their first words, that they are about different people, and
    neither names the other's person ("I live with my sister" / "My sister lives with me" are
    one fact; "I live in Porto" / "My colleague lives in Porto" are two). Two named subjects
    are one only when each fact names the other's ("Jon thanks Gina" / "Gina supports Jon"):
    "Calvin admires Dave's shop" says nothing of Dave's own that "Dave works at a shop" does."""
    a, b = as_profile(a), as_profile(b)
    sa, sb = a.subject, b.subject
    if sa is None or sb is None or sa == sb:
        return False
    if sa.startswith("name ") and sb.startswith("name "):
        return not (names_subject(sa, b) and names_subject(sb, a))
    return not any(names_subject(s, t) for s, t in ((sa, b), (sb, a)))


def short_claim(text: Text) -> bool:
    """One sentence of at most CLAIM_WORDS content words."""
    return not sentences(text) and len(content_words(text)) <= CLAIM_WORDS


def subjects_differ(a: Text, b: Text) -> bool:
    """Both facts say by their first words whom they are about, and not the same person."""
    sa, sb = as_profile(a).subject, as_profile(b).subject
    return bool(sa and sb and sa != sb)


def named_subjects_differ(a: Text, b: Text) -> bool:
    """Both facts open with a name, and not the same one."""
    sa, sb = as_profile(a).subject, as_profile(b).subject
    return bool(sa and sb and sa.startswith("name ") and sb.startswith("name ") and sa != sb)


def subject_words(text: Text) -> frozenset[str]:
    """The content words that only say who the fact is about ("Caroline" in "Caroline ...")."""
    who = subject(text)
    return (
        frozenset(stem(w) for w in who[5:].split())
        if who and who.startswith("name ")
        else frozenset()
    )


def owner_and_owned(who: str, other: str) -> bool:
    """Whether one subject is what the other owns ("name nate" / "name nate girlfriend"): a
    denial of having one is about the owner (`_decision._denied_possession`)."""
    return bool(who and other) and (who.startswith(other + " ") or other.startswith(who + " "))


def names_subject(who: str, text: Text) -> bool:
    """Does `text` name the subject `who` ("my sister", "name anna", "name locker 12")?"""
    if who.startswith("my "):
        return mentions(who[3:], text)
    if who.startswith("name "):
        profile = as_profile(text)
        toks = profile.tokens
        words = who[5:].split()
        if len(words) == 1:  # as below: the word, or a token of the same stem
            return words[0] in toks or stem(words[0]) in profile.token_stems
        # A subject with a number ("locker 12") is named by both, side by side.
        return any(
            list(toks[i : i + len(words)]) == words
            or (len(words) == 1 and stem(toks[i]) == stem(words[0]))
            for i in range(len(toks))
        )
    return False


def mentions(person: str, text: Text) -> bool:
    """Does the text name this person, in any form ("dads" for "father")?"""
    return stem(person) in forms_of(text)


@per_text
def forms_of(text: str) -> frozenset[str]:
    """Every token and its stem: what the opposites and vocabulary checks look up."""
    toks = tokens(text)
    return frozenset(toks) | frozenset(stem(w) for w in toks)
