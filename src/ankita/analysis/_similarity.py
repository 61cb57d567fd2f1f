"""Lexical similarity of SPEC §3: pure, deterministic, symmetric, in [0, 1]."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ankita.analysis._profile import Text, as_profile, per_text
from ankita.analysis._text import ACRONYM_MAX, content_words

PREFIX_MIN = 4  # postgres/postgresql match; car/cart do not
# After stemming, the English endings of one letter are -y (stemmed to "i": healthy) and -n
# (known, Korean); any other one more letter is another word (sing/single, plan/plant).
ONE_LETTER_ENDINGS = "in"
SHORT_FACT_WORDS = 3  # both facts at most this long may link on one shared word
SHORT_LINK_SCORE = 0.6
CONTAIN_SLOPE = 0.15


@dataclass(frozen=True)
class LexicalScore:
    """Every lexical measure of one pair, and which one won."""

    score: float
    jaccard: float
    containment: float
    short_link: float
    winner: str  # "jaccard" | "containment" | "sentence_containment" | "short_link" | "none"
    words_a: tuple[str, ...]
    words_b: tuple[str, ...]
    matches: tuple[tuple[str, str], ...]


def words_match(a: str, b: str) -> bool:
    """Equal, or the shorter is a prefix (at least 4 characters) of the longer, followed by more
    than one letter or by a one-letter ending."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(long_) == len(short) + 1 and long_[-1] not in ONE_LETTER_ENDINGS:
        return False
    return len(short) >= PREFIX_MIN and long_.startswith(short)


def match_words(a: Iterable[str], b: Iterable[str]) -> list[tuple[str, str]]:
    """A one-to-one matching between two word sets: exact matches first, then prefixes.

    The sides are put in a canonical order first so that the result never depends on which
    fact was passed first (the score must be symmetric).
    """
    one = a if isinstance(a, frozenset) else frozenset(a)
    two = b if isinstance(b, frozenset) else frozenset(b)
    same = one & two
    # Mostly no unmatched word of one side shares its first PREFIX_MIN letters with one of the
    # other's: then the matching is the equal words alone, and sets find those at C speed.
    heads = {w[:PREFIX_MIN] for w in one - same if len(w) >= PREFIX_MIN}
    if not heads or heads.isdisjoint([w[:PREFIX_MIN] for w in two - same]):
        return sorted((w, w) for w in same)
    return _match_in_order(one, two)


def initials_of(name: str, text: Text) -> bool:
    """`name` is an acronym of capitalised words in `text` ("usa" and "United States"): the
    initials, or the initials and one more letter for an uncapitalised tail ("of America")."""
    return len(name) <= ACRONYM_MAX and any(
        name.startswith(run) and len(name) <= len(run) + 1 for run in as_profile(text).acronyms
    )


def match_profiles(a: Text, b: Text) -> list[tuple[str, str]]:
    """`match_words` of two texts' content words, from their profiles: only the first letters
    both texts hold are looked at to tell whether a prefix match is possible."""
    a, b = as_profile(a), as_profile(b)
    one, two = a.content_words, b.content_words
    same = one & two
    heads_a, heads_b = a.word_heads, b.word_heads
    for head in heads_a.keys() & heads_b.keys():
        if any(w not in same for w in heads_a[head]) and any(w not in same for w in heads_b[head]):
            return _match_in_order(one, two)
    return sorted((w, w) for w in same)


def covered_by(word: str, text: Text) -> bool:
    """`count_covered((word,), content words of text) == 1`, from the text's profile."""
    profile = as_profile(text)
    return word in profile.content_words or (
        len(word) >= PREFIX_MIN
        and any(words_match(word, other) for other in profile.word_heads.get(word[:PREFIX_MIN], ()))
    )


def _match_in_order(a: frozenset[str], b: frozenset[str]) -> list[tuple[str, str]]:
    """`match_words` the long way: equal words, then each prefix in canonical order."""
    left, right = sorted(a), sorted(b)
    swapped = (len(right), right) < (len(left), left)
    if swapped:
        left, right = right, left
    pairs: list[tuple[str, str]] = []
    free = list(right)
    for word in left:
        if word in free:
            free.remove(word)
            pairs.append((word, word))
    taken = {p[0] for p in pairs}
    for word in left:
        # Equal words are matched above, so only a prefix match is left: both sides at least
        # PREFIX_MIN long and starting alike (a cheap test before the real one).
        if word in taken or len(word) < PREFIX_MIN:
            continue
        head = word[:PREFIX_MIN]
        for other in free:
            if other[:PREFIX_MIN] == head and words_match(word, other):
                free.remove(other)
                pairs.append((word, other))
                break
    if swapped:
        pairs = [(y, x) for x, y in pairs]
    return sorted(pairs)


def count_covered(words: Iterable[str], others: frozenset[str]) -> int:
    """How many of `words` match some word of `others` (many-to-one: an upper bound of the
    one-to-one matching)."""
    count = 0
    for word in words:
        if word in others or (
            len(word) >= PREFIX_MIN
            and any(
                other[:PREFIX_MIN] == word[:PREFIX_MIN] and words_match(word, other)
                for other in others
            )
        ):
            count += 1
    return count


def count_shared(a: Text, b: Text) -> int:
    """`count_covered(content words of a, content words of b)`, from the two profiles: only
    words whose first letters both texts hold are compared one by one."""
    a, b = as_profile(a), as_profile(b)
    words_b, heads_b = b.content_words, b.word_heads
    count = len(a.content_words & words_b)
    for head in a.word_heads.keys() & heads_b.keys():
        alike = heads_b[head]
        for word in a.word_heads[head]:
            if word not in words_b and any(words_match(word, other) for other in alike):
                count += 1
    return count


@per_text
def word_heads(text: str) -> dict[str, tuple[str, ...]]:
    """The text's content words of at least PREFIX_MIN letters, by their first PREFIX_MIN."""
    heads: dict[str, list[str]] = {}
    for word in sorted(content_words(text)):
        if len(word) >= PREFIX_MIN:
            heads.setdefault(word[:PREFIX_MIN], []).append(word)
    return {head: tuple(words) for head, words in heads.items()}


def _overlap(a: frozenset[str], b: frozenset[str], m: int) -> tuple[float, float]:
    """Jaccard and containment of two non-empty word sets with `m` > 0 words matched."""
    jaccard = m / (len(a) + len(b) - m)
    n, longest = min(len(a), len(b)), max(len(a), len(b))
    # Fires only when every word of the shorter fact is in the longer one, and never for a
    # one-word fact: half-way between the coverage ratio and 1, so one extra word still merges
    # a 3-word preference but a long sentence that merely mentions the words does not.
    containment = containment_score(n, longest) if m == n and n >= 2 else 0.0
    return jaccard, containment


def score_words(
    a: frozenset[str],
    b: frozenset[str],
    in_order: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
    matched: list[tuple[str, str]] | None = None,
) -> LexicalScore:
    """Best of Jaccard, containment and the short-fact link over two content-word sets
    (`in_order`: both sorted, and `matched`: their `match_words`, if known)."""
    matches = match_words(a, b) if matched is None else matched
    m = len(matches)
    words_a, words_b = in_order or (tuple(sorted(a)), tuple(sorted(b)))
    if not a or not b or m == 0:
        return LexicalScore(0.0, 0.0, 0.0, 0.0, "none", words_a, words_b, tuple(matches))
    jaccard, containment = _overlap(a, b, m)
    longest = max(len(a), len(b))
    short_link = SHORT_LINK_SCORE if longest <= SHORT_FACT_WORDS else 0.0
    score, winner = max(
        (jaccard, "jaccard"), (containment, "containment"), (short_link, "short_link")
    )
    return LexicalScore(
        round(score, 6),
        round(jaccard, 6),
        round(containment, 6),
        short_link,
        winner,
        words_a,
        words_b,
        tuple(matches),
    )


def containment_score(n: int, longest: int) -> float:
    """All `n >= 2` words of the shorter side inside `longest` words: 1 for the same words,
    minus 0.15 per (n - 1) extra words doubled, so short facts decay faster."""
    return max(0.0, 1 - CONTAIN_SLOPE * (longest - n) / (2 * (n - 1)))


def lexical_score(a: Text, b: Text) -> LexicalScore:
    """Lexical similarity of two texts: over their whole content words, and also, when one of
    them has several sentences, the containment between the other and one of those sentences
    ("I restore old boats" and "Oh nice. I restore old boats too."): a chat
    turn that restates a fact in one sentence says nothing else about it in the others."""
    a, b = as_profile(a), as_profile(b)
    whole = score_words(
        a.content_words, b.content_words, (a.sorted_words, b.sorted_words), match_profiles(a, b)
    )
    best = whole.score
    for short, long_ in ((a, b), (b, a)):
        parts = long_.sentences
        words = short.content_words if parts else frozenset()
        for part in parts:
            part_words = content_words(part)
            m = len(match_words(words, part_words)) if words and part_words else 0
            if m:  # as `score_words` rounds them
                jaccard, containment = _overlap(words, part_words, m)
                best = max(best, round(containment, 6), round(jaccard, 6))
    if best > whole.score:
        return replace(whole, score=best, winner="sentence_containment")
    return whole


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """Cosine similarity clipped to [0, 1], in float64; 0 for mismatched or zero vectors.
    Either side may be a list or a numpy array (a stored float32 vector, unconverted)."""
    import numpy as np

    a, b = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or not a.size:
        return 0.0
    nu, nv = float(np.sqrt(a @ a)), float(np.sqrt(b @ b))
    if nu == 0 or nv == 0:
        return 0.0
    return max(0.0, min(1.0, float(a @ b) / (nu * nv)))


def calibrate(
    cosine_: float, model_lines: tuple[float, float], target_lines: tuple[float, float]
) -> float:
    """Map a model's cosine onto the lexical scale, piecewise linearly, so that the model's own
    (merge, conflict) lines land on the lexical ones and "the higher score wins" is fair.
    Cosine scales differ between models; this is where each model's measured lines enter."""
    model_merge, model_conflict = model_lines
    merge, conflict = target_lines
    if cosine_ >= model_merge:
        span = 1.0 - model_merge
        return merge + (cosine_ - model_merge) / span * (1.0 - merge) if span > 0 else merge
    if cosine_ >= model_conflict:
        return conflict + (cosine_ - model_conflict) / (model_merge - model_conflict) * (
            merge - conflict
        )
    return cosine_ / model_conflict * conflict if model_conflict > 0 else 0.0
