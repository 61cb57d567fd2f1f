"""The text analysis's shortcuts give what their definitions give (hypothesis)."""

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ankita.analysis._change import (
    change_words,
)
from ankita.analysis._cues import (
    CHANGE_OF_STATE,
    CHANGE_PHRASES,
)
from ankita.analysis._language import WORD, _non_latin_script, words_of
from ankita.analysis._lexicon import (
    NEGATIONS,
    STOP_WORDS,
)
from ankita.analysis._slots import (
    NARROW,
    check_value,
    frame_sequence,
    share_a_slot,
    slot_keys,
    spans,
    value_slot_keys,
    value_spans,
)
from ankita.analysis._text import (
    _ONE_PRONOUN_BEFORE,
    _ORDINAL,
    _WITH_UNIT,
    NUMBER_WORDS,
    number_value,
    stem,
    tokens,
)
from ankita.search._index import (
    lookup_for,
)

# Few words, so that random texts often share a start, an end, or all of it.
WORDS = [
    "i",
    "live",
    "in",
    "Oslo",
    "Rome",
    "the",
    "a",
    "my",
    "sister",
    "3",
    "three",
    "for",
    "years",
    "no",
    "longer",
    "moved",
    "to",
    "used",
    "work",
]
texts = st.lists(st.sampled_from(WORDS), max_size=9).map(" ".join)


def _keys(text: str) -> set[str]:
    """The definition: a key for every span of 1..3 tokens of the frame."""
    seq = frame_sequence(text)
    key_of = slot_keys(seq)
    return {key_of(i, j) for i, j in spans(len(seq))}


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(texts, texts)
def test_sharing_a_slot_is_sharing_a_slot_key(a, b):
    assert share_a_slot(a, b) == bool(_keys(a) & _keys(b)) == share_a_slot(b, a)


def test_sharing_a_slot_on_known_pairs():
    assert share_a_slot("I live in Oslo", "I live in Rome")
    assert share_a_slot("I live in Oslo", "I live in Oslo")
    assert share_a_slot("My sister lives in Oslo", "I live in Oslo")  # "my sister" / "i"
    assert not share_a_slot("I live in Oslo", "My sister works in Rome")
    assert not share_a_slot("", "I live in Oslo") and not share_a_slot("", "")
    assert not share_a_slot("I live in Oslo", "I live in Oslo for three years now")


def _number(tokens_: tuple[str, ...], i: int) -> str | None:
    """The definition, every form tried in turn."""
    word = tokens_[i]
    if word.isdigit():
        return str(int(word))
    if match := _ORDINAL.match(word):
        return str(int(match.group(1)))
    if match := _WITH_UNIT.match(word):
        return f"{int(match.group(1))}{match.group(2)}"
    if word not in NUMBER_WORDS:
        return None
    if word == "one" and i > 0 and tokens_[i - 1] in _ONE_PRONOUN_BEFORE:
        return None  # "this one"
    if word == "second" and i + 1 < len(tokens_) and tokens_[i + 1] in {"hand", "thought"}:
        return None
    return str(NUMBER_WORDS[word])


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "3",
                "03",
                "3rd",
                "21st",
                "5km",
                "11pm",
                "ten",
                "one",
                "second",
                "hand",
                "this",
                "3x",
                "km5",
                "x3",
                "the",
                "1990s",
            ]
        ),
        min_size=1,
        max_size=5,
    )
)
def test_a_number_is_read_as_before(words):
    toks = tuple(words)
    for i in range(len(toks)):
        assert number_value(toks, i) == _number(toks, i)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "no",
                "longer",
                "more",
                "used",
                "to",
                "any",
                "gave",
                "up",
                "these",
                "days",
                "not",
                "anymore",
                "quit",
                "i",
                "coffee",
            ]
        ),
        max_size=8,
    ).map(" ".join)
)
def test_change_phrases_are_found_as_before(text):
    # Without a negation before them, every change word and phrase is found; a negation may
    # only take some away ("not to give up").
    toks = tokens(text)
    found = {w for w in toks if w in CHANGE_OF_STATE} | {
        " ".join(p)
        for p in CHANGE_PHRASES
        if any(toks[i : i + len(p)] == p for i in range(len(toks) - len(p) + 1))
    }
    if not NEGATIONS & set(toks):
        assert change_words(text) == found
    else:
        assert change_words(text) <= found


def test_a_negated_change_states_none():
    assert change_words("Gina encourages him not to give up") == frozenset()
    assert change_words("She told him not to let anything stop him") == frozenset()
    # "not ... anymore" is still a change.
    assert change_words("I do not use it anymore") == {"anymore"}


# Words for texts where one span is replaced by another: stop words, filler, content words,
# numbers, names of one to three words, a multi-valued and an additive word.
SPAN_WORDS = [
    "i",
    "my",
    "sister",
    "lives",
    "live",
    "in",
    "on",
    "with",
    "for",
    "the",
    "is",
    "work",
    "Apollo",
    "New",
    "York",
    "City",
    "Lyon",
    "green",
    "tea",
    "3",
    "five",
    "years",
    "also",
    "like",
    "use",
    "running",
]
sequences = st.lists(st.sampled_from(SPAN_WORDS), min_size=1, max_size=8)


@pytest.mark.slow
@settings(max_examples=4000, deadline=None)
@given(sequences, st.data())
def test_a_value_finding_is_found_through_the_slots_the_new_fact_asks(old, data):
    """Whenever `check_value(stored, new)` reports a `value` finding, the stored fact is filed
    under a slot term that the new fact's lookup reads: its key, a tag that is none of the
    span's words, and not marked narrow when the new span asks only wide frames."""
    i = data.draw(st.integers(0, len(old) - 1))
    j = data.draw(st.integers(i + 1, min(i + 3, len(old))))
    new = (
        old[:i] + data.draw(st.lists(st.sampled_from(SPAN_WORDS), min_size=1, max_size=3)) + old[j:]
    )
    stored, text = " ".join(old), " ".join(new)
    if any(f.check == "value" for f in check_value(stored, text)):
        assert _found_through_slots(stored, text), (stored, text)


def _found_through_slots(stored: str, text: str) -> bool:
    asked = lookup_for(text).slots

    def read(term: str) -> bool:
        key, tag = term.split("#", 1)
        return any(
            k == key
            and tag.removeprefix(NARROW) not in words
            and not (wide and tag.startswith(NARROW))
            for k, words, wide in asked
        )

    return any(map(read, value_slot_keys(stored)))


def test_a_span_of_three_names_asks_only_wide_frames():
    """ "I work on A B C" asks the slot of "I work on X with Y" only among wide frames, where
    that fact is not: its frame holds one content word, too few for a three-word value."""
    stored, text = "I work on Apollo with Lyon", "I work on New York City"
    assert [f.check for f in check_value(stored, text)] == ["different"]
    (key,) = {k for k, _, wide in lookup_for(text).slots if wide}
    assert f"{key}#{NARROW}with" in value_slot_keys(stored)
    # Two content words in the span ask every frame.
    assert not any(wide for k, _, wide in lookup_for("I work on New York").slots if k == key)
    # So do three with a number: a value of numbers needs no wide frame.
    stored, text = "I run 5km every Monday", "I run 12 km uphill every Monday"
    assert [f.check for f in check_value(stored, text)] == ["value"]
    assert _found_through_slots(stored, text)


def test_a_span_holding_an_additive_word_asks_no_slot():
    """ "also" means one more value, not one replaced: no span holding it is asked (a span
    asked anyway only costs candidates, so the random tests above cannot see this)."""
    text = "My sister also lives in Lyon"
    assert value_spans(text) == (
        (0, 1, False),
        (2, 3, False),
        (2, 4, False),
        (2, 5, False),
        (3, 5, False),
        (4, 5, False),
    )


def test_the_narrow_mark_sorts_after_every_stop_tag():
    """A wide-only slot reads the range before the mark: every tag must sort before it."""
    tags = {stem(w) for w in STOP_WORDS} | {"", "*"}
    assert max(tags) < NARROW


# ASCII letters, digits, apostrophes and the punctuation a word may touch, in any case.
_ASCII_TEXT = st.text(
    alphabet=st.sampled_from(list("abcXYZiIkK09'_ -.,!?`\t")), min_size=0, max_size=40
)


@given(_ASCII_TEXT)
@settings(max_examples=400, deadline=None)
def test_the_words_of_an_ascii_text_are_those_of_the_general_pattern(text):
    # The language is asked of every fact, clause and piece: an ASCII text takes a cheaper
    # pattern and skips counting scripts, which must change nothing.
    general = WORD.findall(unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'"))
    assert words_of(text) == general
    assert _non_latin_script(text) is None


def test_the_words_of_a_text_beyond_ascii_keep_their_marks():
    assert words_of("दिल्ली में रहता हूँ") == ["दिल्ली", "में", "रहता", "हूँ"]
    assert words_of("Ich wohne in Köln, nicht in Bonn") == [
        "ich",
        "wohne",
        "in",
        "köln",
        "nicht",
        "in",
        "bonn",
    ]
    assert _non_latin_script("Я живу в Москве") == "ru"
