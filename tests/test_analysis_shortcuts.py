"""The text analysis's shortcuts give what their definitions give (hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ankita._disagree import (
    _CHANGE_PHRASES,
    CHANGE_OF_STATE,
    change_words,
    frame_sequence,
    share_a_slot,
    slot_key,
    spans,
)
from ankita._text import (
    _ONE_PRONOUN_BEFORE,
    _ORDINAL,
    _WITH_UNIT,
    NUMBER_WORDS,
    number_value,
    tokens,
)

# Few words, so that random texts often share a start, an end, or all of it.
WORDS = ["i", "live", "in", "Oslo", "Rome", "the", "a", "my", "sister", "3", "three", "for",
         "years", "no", "longer", "moved", "to", "used", "work"]
texts = st.lists(st.sampled_from(WORDS), max_size=9).map(" ".join)


def _keys(text: str) -> set[str]:
    """The definition: a key for every span of 1..3 tokens of the frame."""
    seq = frame_sequence(text)
    return {slot_key(seq, i, j) for i, j in spans(len(seq))}


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
@given(st.lists(st.sampled_from(["3", "03", "3rd", "21st", "5km", "11pm", "ten", "one",
                                 "second", "hand", "this", "3x", "km5", "x3", "the", "1990s"]),
                min_size=1, max_size=5))
def test_a_number_is_read_as_before(words):
    toks = tuple(words)
    for i in range(len(toks)):
        assert number_value(toks, i) == _number(toks, i)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["no", "longer", "more", "used", "to", "any", "gave", "up",
                                 "these", "days", "not", "anymore", "quit", "i", "coffee"]),
                max_size=8).map(" ".join))
def test_change_phrases_are_found_as_before(text):
    toks = tokens(text)
    found = {w for w in toks if w in CHANGE_OF_STATE} | {
        " ".join(p) for p in _CHANGE_PHRASES
        if any(toks[i:i + len(p)] == p for i in range(len(toks) - len(p) + 1))}
    assert change_words(text) == found
