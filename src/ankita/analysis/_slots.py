"""One slot of one frame: the spans two facts fill differently, their filing keys, and the
`value` check (one value replaced in an otherwise identical sentence)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence

from ankita.analysis._change import (
    change_words,
    only_ends,
)
from ankita.analysis._cues import (
    ARTICLES,
    MANY,
    PEOPLE,
    WEAK_MULTI,
    Finding,
    numbers_in,
)
from ankita.analysis._lexicon import FUNCTION_WORDS, STOP_WORDS
from ankita.analysis._profile import Text, as_profile, per_text
from ankita.analysis._reported import stated
from ankita.analysis._similarity import match_words
from ankita.analysis._subjects import (
    verb_like,
)
from ankita.analysis._text import (
    TITLES,
    clauses,
    names,
    number_value,
    stem,
    tokens,
)


@per_text
def _frame_tokens(text: str) -> tuple[str, ...]:
    toks = tokens(stated(text))  # "Lena says her favorite band is X": Lena's favorite band
    out = []
    for i, word in enumerate(toks):
        if word in ARTICLES:
            continue
        number = number_value(toks, i)
        out.append(number if number is not None else word)
    return tuple(out)


MAX_SLOT = 3  # the `value` check looks at replaced spans of at most this many tokens


def _digest(parts: tuple[str, ...]) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).hexdigest()


def share_a_slot(a: Text, b: Text) -> bool:
    """Whether a span of 1..MAX_SLOT tokens of each frame has the same tokens before and after
    it on both sides (the same `slot_keys`): the precondition of a `value` finding.

    Read from the common start and end, without a key: with i tokens kept before the spans and
    t after, the spans are len - i - t long on each side, so some i <= common start and
    t <= common end must make both lengths 1..MAX_SLOT, and every sum i + t up to common start
    + common end can be made."""
    sa, sb = as_profile(a).frame_sequence, as_profile(b).frame_sequence
    shorter, longer = sorted((len(sa), len(sb)))
    kept = max(0, longer - MAX_SLOT)  # the fewest tokens the spans may leave around them
    if kept > shorter - 1:
        return False
    head = next((k for k in range(shorter) if sa[k] != sb[k]), shorter)
    tail = next((k for k in range(shorter) if sa[-1 - k] != sb[-1 - k]), shorter)
    return head + tail >= kept


def spans(length: int) -> list[tuple[int, int]]:
    """Every span (i, j) of 1..MAX_SLOT tokens in a sequence of `length` tokens."""
    return [(i, j) for i in range(length) for j in range(i + 1, min(i + MAX_SLOT, length) + 1)]


def slot_keys(seq: tuple[str, ...]) -> Callable[[int, int], str]:
    """The key of `seq` with tokens i..j replaced, for any i, j: the same for every
    replacement."""
    # Each prefix and suffix digested once: a sequence has ~3 spans per token, each two ends.
    heads = [_digest(seq[:i]) for i in range(len(seq) + 1)]
    tails = [_digest(seq[j:]) for j in range(len(seq) + 1)]
    return lambda i, j: heads[i] + tails[j]


@per_text
def frame_sequence(text: str) -> tuple[str, ...]:
    """The stemmed token sequence the `value` check aligns (articles out, numbers as digits)."""
    return tuple(stem(t) for t in _frame_tokens(text))


def check_value(a: Text, b: Text) -> list[Finding]:
    """The same frame with one value replaced: "I live in Prague" / "I live in Vienna"."""
    # Both findings below need one replaced span of at most 3 tokens in an otherwise equal
    # sequence, and then the two texts share that span's slot key: a set lookup, not a diff.
    if not share_a_slot(a, b):
        return []
    ta, tb = list(_frame_tokens(a)), list(_frame_tokens(b))
    sa, sb = frame_sequence(a), frame_sequence(b)
    # One span replaced: what is left between the common start and the common end, on both
    # sides, and nothing shared between the two spans (else it is more than one change).
    limit = min(len(sa), len(sb))
    i1 = next((k for k in range(limit) if sa[k] != sb[k]), limit)
    tail = next((k for k in range(limit - i1) if sa[-1 - k] != sb[-1 - k]), limit - i1)
    i2, j2 = len(sa) - tail, len(sb) - tail
    if i1 == i2 or i1 == j2 or set(sa[i1:i2]) & set(sb[i1:j2]):
        return []
    old, new = ta[i1:i2], tb[i1:j2]
    before, frame = ta[:i1], ta[:i1] + ta[i2:]
    if len(old) > 3 or len(new) > 3:
        return []
    old_c = [stem(w) for w in old if w not in STOP_WORDS]
    new_c = [stem(w) for w in new if w not in STOP_WORDS]
    if not old_c or not new_c or match_words(old_c, new_c):
        return []
    words = tuple(old_c + new_c)
    # Whatever else holds, one thing replaced by another is never the same fact: it blocks a
    # merge ("I like jazz" / "I like blues"), even where it is no conflict.
    different = [Finding("different", f"'{' '.join(old)}' vs '{' '.join(new)}'", words)]
    if any(w in MANY for w in frame + old + new):
        return different
    # Two endings in one frame both hold ("I quit working on X" / "... on Y").
    if only_ends(a) and only_ends(b):
        return different
    # "I use X" / "I use Y" can both hold; "I use X on my desktop" names one slot.
    after_c = [w for w in ta[i2:] if w not in STOP_WORDS]
    if not after_c and any(w in WEAK_MULTI for w in before):
        return different
    # Two different activities ("talking"/"laughing") describe more than one thing going on.
    if all(w.endswith("ing") for w in old + new if w not in STOP_WORDS):
        return different
    # The frame words here include filler ("my name is X"): they still say what X is.
    frame_c = [w for w in frame if w not in FUNCTION_WORDS]
    before_c = [w for w in before if w not in FUNCTION_WORDS and w not in TITLES]
    # The replaced part must be a value that follows its frame, not the relation itself:
    # "I [live] in Lisbon" / "I [work] in Lisbon" are two attributes, not two values. Only a
    # bare number needs no frame ("Anna is 30" / "Mum turned 31" replace more than that).
    bare_numbers = _only_numbers(tuple(old)) and _only_numbers(tuple(new))
    if not before_c and not bare_numbers:
        return different
    # Nor where the subject alone comes before and the span runs to the end: the whole
    # predicate is replaced ("Tom [likes hiking]" / "Tom [owns a boat]", "My brother [eats
    # meat]" / "... [hates jazz]"), two things said of one person. "Anna [loves] jazz" /
    # "Anna [hates] jazz" keep their object, so that stays one value replaced; a subject set
    # apart by a comma ("John, the guitar") is no sentence of its own; and a stated change
    # replaces what the other side says ("Anna lives in Lyon" / "Anna moved to Paris").
    # The same holds where the replaced span opens with the verb and is more than the verb,
    # whatever follows ("My sister Marta [lives] in Porto" / "... [is a teacher] in Porto"):
    # the relation changed. "Anna [loves] jazz" / "Anna [hates] jazz" keep the object.
    # A title belongs to the name after it: "My dentist is Dr. [Silva]" keeps its verb.
    lead = [w for w in before if w not in TITLES]
    if (
        lead
        and lead[-1] not in FUNCTION_WORDS
        and _only_subject(a, b, before_c)
        and (
            not any(w not in STOP_WORDS for w in ta[i2:])
            or ((verb_like(old[0]) or verb_like(new[0])) and (len(old) != len(new) or len(old) > 1))
        )
        and not change_words(a)
        and not change_words(b)
        and len(clauses(a)) == len(clauses(b)) == 1
        and not bare_numbers
    ):
        return different
    # Spans holding numbers may be long ("a 2015 Honda Civic" / "a 2019 Toyota Corolla").
    numbers = bool(numbers_in(" ".join(old)) and numbers_in(" ".join(new)))
    if not numbers and max(len(old_c), len(new_c)) > max(2, len(frame_c)):
        return different
    return [Finding("value", f"'{' '.join(old)}' vs '{' '.join(new)}' in the same frame", words)]


def _only_subject(a: Text, b: Text, words: list[str]) -> bool:
    """Every one of `words` is a person one has ("brother") or a name in either text."""
    named = names(a) | names(b)
    return all(w in PEOPLE or stem(w) in named for w in words)


def _only_numbers(span: tuple[str, ...]) -> bool:
    """Every content token of the span is a number ("is 30", "5km"): a value that needs no
    frame word before it. "Anna is 30" / "Mum turned 31" replace more than a number."""
    content = [k for k, w in enumerate(span) if w not in STOP_WORDS]
    return bool(content) and all(number_value(span, k) is not None for k in content)


def _stop_tag(ta: tuple[str, ...], sa: tuple[str, ...], i: int, j: int) -> str:
    """The stop words inside tokens i..j of a frame, as one tag: "" for none, the word for one,
    "*" for more. Two spans that share a word are not one value replaced by another."""
    stops = sorted({sa[k] for k in range(i, j) if ta[k] in STOP_WORDS})
    return "" if not stops else stops[0] if len(stops) == 1 else "*"


def value_slot_keys(text: str) -> frozenset[str]:
    """`slot key#stop tag` of the spans for which `check_value(text, other)` can report a
    `value` finding, whatever `other` is: each condition below is one of its own, read on this
    side alone. A stored fact is filed under these only (docs/index.md)."""
    ta, sa = _frame_tokens(text), frame_sequence(text)
    if any(w in MANY for w in ta):
        return frozenset()
    # Counted once per token, not once per span: content words up to each token, frame words
    # up to each token, and whether only stop words follow it.
    content, framing = _running(ta, STOP_WORDS), _running(ta, FUNCTION_WORDS)
    ends_stop = [True] * (len(ta) + 1)
    for k in range(len(ta) - 1, -1, -1):
        ends_stop[k] = ends_stop[k + 1] and ta[k] in STOP_WORDS
    keys, key_of = set(), slot_keys(sa)
    for i, j in spans(len(ta)):
        old, before = ta[i:j], ta[:i]
        old_c = content[j] - content[i]
        if not old_c:
            continue
        if ends_stop[j] and any(w in WEAK_MULTI for w in before):
            continue
        # Only a bare number needs no frame word before it; a span holding a number may be
        # long ("a 2015 Honda Civic").
        if not framing[i] and not _only_numbers(old):
            continue
        frame_c = framing[i] + framing[-1] - framing[j]
        if old_c > max(2, frame_c) and not numbers_in(" ".join(old)):
            continue
        # A span of MAX_SLOT content words without a number, on the other side, needs at least
        # as many in this frame: say which frames have fewer (`value_spans`).
        narrow = NARROW if frame_c < MAX_SLOT else ""
        keys.add(f"{key_of(i, j)}#{narrow}{_stop_tag(ta, sa, i, j)}")
    return frozenset(keys)


def _running(words: Sequence[str], left_out: Collection[str]) -> list[int]:
    """How many of the first k words are not in `left_out`, for each k from 0 to all."""
    counts = [0]
    for word in words:
        counts.append(counts[-1] + (word not in left_out))
    return counts


# Marks the slot key of a stored span whose frame holds fewer than MAX_SLOT content words. It
# sorts after every stop tag (stems of stop words, "" and "*"), so the keys of wide frames are
# one range of their own.
NARROW = "~"


def value_spans(text: str) -> tuple[tuple[int, int, bool], ...]:
    """(i, j, wide) for each span of `text`'s frame sequence from which `check_value(other,
    text)` can report a `value` finding, whatever `other` is; `wide` if only an `other` whose
    frame holds at least MAX_SLOT content words can (not `NARROW` in `value_slot_keys`). Each
    condition is one of the check's own, read on this side's span alone: a content word in it,
    no multi-valued or additive word in it, and a span of MAX_SLOT content words without a
    number needs as many content words in the frame."""
    tb = _frame_tokens(text)
    content, single = _running(tb, STOP_WORDS), _running(tb, MANY)
    out = []
    for i, j in spans(len(tb)):
        new_c = content[j] - content[i]
        # Fewer single-valued words than tokens: the span holds a multi-valued or additive one.
        if not new_c or single[j] - single[i] < j - i:
            continue
        out.append((i, j, new_c > 2 and not numbers_in(" ".join(tb[i:j]))))
    return tuple(out)


def content_sequence(text: Text) -> list[str]:
    toks = tokens(text)
    return [stem(w) for w in toks if w not in STOP_WORDS and not w.isdigit()]


@per_text
def content_set(text: str) -> frozenset[str]:
    return frozenset(content_sequence(text))
