"""Turning a short fact into tokens and content words (pure functions, no I/O).

Everything that reads words goes through here, so similarity and disagreement see the same
tokens: lowercase, NFKC-normalised, contractions expanded ("don't" -> "do not").
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ankita.analysis._language import CJK, WORD, foreign_names, foreign_tokens, language, word_forms
from ankita.analysis._lexicon import FUNCTION_WORDS, STOP_WORDS
from ankita.analysis._profile import Text, per_text, raw_text

# Word forms are kept per word: a store's vocabulary is small next to its texts, and every
# text's words go through these.
WORDS_KEPT = 65536

# Words keep their combining marks (Devanagari vowel signs are marks, not separators).
_WORD = WORD
# Titles written before a name, with a period ("Dr. Smith"); `_subjects` reads past them.
TITLES = ("mr", "mrs", "ms", "dr", "prof")
# A title's or an initial's period ends no sentence or clause ("Dr. Smith", "J. K. Rowling").
_TITLE_DOT = "".join(rf"(?<!\b{t}\.)" for t in (*TITLES, "st", "jr", "sr"))
# An initial is one letter standing alone ("haven't." ends a sentence), never "I".
_TITLE_DOT += r"(?<!\s[A-HJ-Z]\.)(?<!^[A-HJ-Z]\.)"
_CLAUSE_BREAK = re.compile(
    rf"[,;:!?()\[\]\"\u3001\u3002]|\.{_TITLE_DOT}|\s-\s|\s—\s", re.IGNORECASE
)

# Contraction suffixes and what they expand to; "'s" is dropped (possessive or "is").
_SUFFIXES = (
    ("n't", "not"),
    ("'m", "am"),
    ("'re", "are"),
    ("'ve", "have"),
    ("'ll", "will"),
    ("'d", "would"),
    ("'s", ""),
)
_IRREGULAR = {
    "can't": ["can", "not"],
    "won't": ["will", "not"],
    "shan't": ["shall", "not"],
    "ain't": ["am", "not"],
    "cannot": ["can", "not"],
    "let's": ["let", "us"],
}
# Chat drops the apostrophe ("I dont drive"); the negation is still there.
_IRREGULAR.update(
    {
        f"{base}nt": [base, "not"]
        for base in (
            "do",
            "does",
            "did",
            "is",
            "are",
            "was",
            "were",
            "have",
            "has",
            "had",
            "could",
            "would",
            "should",
            "must",
        )
    }
)
_IRREGULAR.update({"cant": ["can", "not"], "wont": ["will", "not"]})

NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "twice": 2,
    "once": 1,
    "dozen": 12,
}
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th|s)$")
_WITH_UNIT = re.compile(r"^(\d+)(am|pm|h|k|kg|km|cm|mm|m|g|l|ml|min|mins|yo)$")
# "one" is a pronoun after these words ("no one", "the one"), not a number.
_ONE_PRONOUN_BEFORE = {
    "no",
    "some",
    "any",
    "every",
    "each",
    "which",
    "this",
    "that",
    "the",
    "another",
    "other",
    "someone",
    "anyone",
    "little",
    "last",
    "only",
}

# British spellings folded so that favourite/favorite are the same word.
_SPELLING = {
    "favourite": "favorite",
    "favourites": "favorites",
    "colour": "color",
    "colours": "colors",
    "neighbour": "neighbor",
    "neighbours": "neighbors",
    "grey": "gray",
    "theatre": "theater",
    "centre": "center",
    "organise": "organize",
    "realise": "realize",
    "travelling": "traveling",
    "programme": "program",
    "mum": "mother",
    "mummy": "mother",
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "dad": "father",
    "mom": "mother",
    "okay": "ok",
}
# Plurals fold with their singular ("dads" -> "fathers"), where the plural is regular.
_SPELLING.update(
    {
        k + "s": v + "s"
        for k, v in list(_SPELLING.items())
        if k[-1] not in "sy" and not k.endswith("ing")
    }
)
_OTHER_SPELLING = {v: k for k, v in _SPELLING.items()}  # what a folded word was written as

# "like" and "prefer" are filler for scoring ("I like X" ~ "X"); disagreement reads them.


def normalize(text: str) -> str:
    """NFKC, lowercase, and one kind of apostrophe."""
    text = unicodedata.normalize("NFKC", text).lower()
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")


@lru_cache(maxsize=WORDS_KEPT)
def _expand(word: str) -> tuple[str, ...]:
    # Cached: a store's vocabulary is small next to its texts, and every suffix is tried.
    if word in _IRREGULAR:
        return tuple(_IRREGULAR[word])
    for suffix, full in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix):
            base = word[: -len(suffix)]
            return (base, full) if full else (base,)
    return (word.strip("'"),)


@per_text
def tokens(text: str) -> tuple[str, ...]:
    """All word tokens of `text`, contractions expanded, spellings folded; a fact in another
    language than English is read by `_language` (its cue words glossed into English)."""
    lang = language(text)
    if lang != "en":
        return foreign_tokens(text, lang)
    out: list[str] = []
    for raw in _WORD.findall(normalize(text)):
        for word in _expand(raw):
            if word:
                out.append(_SPELLING.get(word, word))
    return tuple(out)


@per_text
def clauses(text: str) -> tuple[tuple[str, ...], ...]:
    """Tokens split at punctuation, so negation scope stops at a clause boundary."""
    lang = language(text)
    if lang != "en":
        return tuple(
            t for t in (foreign_tokens(part, lang) for part in _CLAUSE_BREAK.split(text)) if t
        )
    return tuple(t for t in (tokens(part) for part in _CLAUSE_BREAK.split(normalize(text))) if t)


_SENTENCE_END = re.compile(rf"(?:(?<=[!?])|(?<=\.){_TITLE_DOT})\s+", re.IGNORECASE)
# A clause ends at punctuation, before "but", and before a conjunction that opens a clause with
# a subject of its own ("... and I", "because she"); "a man and a woman" stays whole.
_CLAUSE_START = re.compile(
    rf"(?:(?<=[!?,;:])|(?<=\.){_TITLE_DOT})\s+"
    r"|\s+but\s+|\s+(?:and|so|because|while|although|though|when|if)\s+"
    r"(?=(?:i|you|he|she|we|they|it)\b)",
    re.IGNORECASE,
)


@per_text
def sentences(text: str) -> tuple[str, ...]:
    """The sentences of a text that has several (a chat turn), else none. A sentence ends at
    . ! or ? followed by a space, so "3.5" stays whole."""
    parts = tuple(part for part in _SENTENCE_END.split(text.strip()) if part.strip())
    return parts if len(parts) > 1 else ()


@per_text
def statements(text: str) -> tuple[str, ...]:
    """The clauses of a text that has several ("I love wine too, I went tasting in May"), else
    none: each may state one thing about the user, whatever the rest of a chat turn says."""
    parts = tuple(part.strip() for part in _CLAUSE_START.split(text.strip()) if part.strip())
    return parts if len(parts) > 1 else ()


@lru_cache(maxsize=WORDS_KEPT)
def stem(word: str) -> str:
    """A small suffix stripper, so lives/living/lived and movie/movies meet (not a lemmatiser)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix in ("ing", "ed"):
        # "spring" and "string" keep their ending: what would remain has no vowel.
        if (
            word.endswith(suffix)
            and len(word) - len(suffix) >= 3
            and any(c in "aeiouy" for c in word[: -len(suffix)])
        ):
            word = word[: -len(suffix)]
            # running -> run, but not fall -> fal
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            return word[:-1] if word.endswith("e") and len(word) >= 4 else word
    if word.endswith("ies") and len(word) >= 5:
        return word[:-3] + "i"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) >= 4:
        word = word[:-1]
    # happy/happier meet as "happi"; play/day/key keep their y (playing -> play).
    if word.endswith("y") and len(word) >= 4 and word[-2] not in "aeiou":
        word = word[:-1] + "i"
    return word


def number_value(tokens_: tuple[str, ...], i: int) -> str | None:
    """The number a token stands for ("ten" -> "10", "3rd" -> "3"), or None."""
    word = tokens_[i]
    # Every form below but a number word starts with a digit: most words are neither.
    if word[:1].isdigit():
        if word.isdigit():
            return str(int(word))
        match = _ORDINAL.match(word)
        if match:
            return str(int(match.group(1)))
        match = _WITH_UNIT.match(word)
        if match:  # "11pm", "5km": the unit stays, so 11pm and 11am differ
            return f"{int(match.group(1))}{match.group(2)}"
        return None
    if word in NUMBER_WORDS:
        if word == "one" and i > 0 and tokens_[i - 1] in _ONE_PRONOUN_BEFORE:
            return None
        if word == "second" and i + 1 < len(tokens_) and tokens_[i + 1] in {"hand", "thought"}:
            return None
        return str(NUMBER_WORDS[word])
    return None


@per_text
def content_words(text: str) -> frozenset[str]:
    """The words that carry a fact's meaning: stop-words dropped, numbers as digits."""
    toks = tokens(text)
    out = set()
    for i, word in enumerate(toks):
        number = number_value(toks, i)
        if number is not None:
            out.add(number)
        elif word not in STOP_WORDS and len(word) > 1:
            out.add(stem(word))
    if _MODAL_NAMES.intersection(toks) and language(text) == "en":  # most texts hold neither
        out.update(_capitalised_modals(text))
    return frozenset(out)


# Modals that are also a name or a month when capitalised ("lunch with Will", "May has a
# cat", "born in May"): without them, facts about Will and about Grace share every word.
_MODAL_NAMES = frozenset({"will", "may"})
_SUBJECT_PRONOUNS = frozenset({"i", "you", "we", "he", "she", "they", "it", "there"})


def _capitalised_modals(text: str) -> set[str]:
    """The modals written as a name (capitalised, not before a pronoun: "Will you ..." and
    "May I ..." ask a question)."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text))
    return {
        raw.lower()
        for raw, after in zip(words, [*words[1:], ""], strict=False)
        if raw.lower() in _MODAL_NAMES
        and raw[:1].isupper()
        and raw[1:].islower()
        and after.lower() not in _SUBJECT_PRONOUNS
    }


def plain_words(text: str) -> frozenset[str]:
    """The content words as written (lowercased, not stemmed, no numbers): what a word model
    reads."""
    return frozenset(w for w in tokens(text) if w not in STOP_WORDS and len(w) > 1 and w.isalpha())


def search_words(text: Text) -> frozenset[str]:
    """What a query looks up in the full-text index: its content words and, for a word whose
    spelling `tokens` folded (colour -> color), the other spelling too, since the index holds
    each fact as it was written ("favourite colour" found nothing in "My favourite colour")."""
    out = set(content_words(text))
    for word in tokens(text):
        other = _OTHER_SPELLING.get(word)
        if other is not None:
            out.add(stem(other))
    return frozenset(out)


@per_text
def token_stems(text: str) -> frozenset[str]:
    """The stem of every token."""
    return frozenset(stem(token) for token in tokens(text))


@per_text
def sorted_words(text: str) -> tuple[str, ...]:
    """The content words in order, as scores and reasons show them."""
    return tuple(sorted(content_words(text)))


# "I" is capitalised but names no one the other fact could lack.
_FIRST_PERSON = frozenset({"I", "I'm", "I've", "I'll", "I'd"})


def _name_form(raw: str) -> str | None:
    """The content-word form of a capitalised word as written, or None if it is not one."""
    if not raw[:1].isupper() or raw in _FIRST_PERSON:
        return None
    word = _expand(normalize(raw))[0]
    return stem(_SPELLING.get(word, word))


@per_text
def names(text: str) -> frozenset[str]:
    """Content words written with a capital letter ("Lyon", "Priya", "Postgres"), stemmed as
    content words are. Sentence-initial words count too: a fact's first word is mostly its
    subject, and two subjects with different names are two different things."""
    content = content_words(text)
    lang = language(text)
    if lang != "en":
        return frozenset(stem(w) for w in foreign_names(text, lang)) & content
    forms = (_name_form(raw) for raw in _WORD.findall(unicodedata.normalize("NFKC", text)))
    return frozenset(f for f in forms if f is not None and f in content)


@per_text
def inner_names(text: str) -> frozenset[str]:
    """The names written with a capital letter inside a sentence, not at its start: in a chat
    turn, a capital that opens a sentence is mostly an interjection ("Ha", "Honestly")."""
    content = content_words(text)
    lang = language(text)
    if lang != "en":
        return frozenset(stem(w) for w in foreign_names(text, lang)[1:]) & content
    found: set[str] = set()
    for sentence in _SENTENCE_END.split(unicodedata.normalize("NFKC", text.strip())):
        for raw in _WORD.findall(sentence)[1:]:
            form = _name_form(raw)
            if form is not None and form in content:
                found.add(form)
    return frozenset(found)


def leading_name(text: Text) -> bool:
    """Does the text open with a name ("Anna quit smoking"), its subject?"""
    lang = language(text)
    if lang != "en":
        first_token = tokens(text)[:1]
        return bool(first_token) and stem(first_token[0]) in names(text)
    first = _WORD.search(unicodedata.normalize("NFKC", raw_text(text)))
    return first is not None and _name_form(first.group()) in names(text)


ACRONYM_MAX = 6  # longest name read as an acronym ("usa", "nasa")


@per_text
def acronyms(text: str) -> frozenset[str]:
    """Initials of each run of capitalised words, lowercased ("the United States" -> "us"), so
    that an acronym ("USA") can be recognised as the same name."""
    runs, run = [], ""
    for raw in re.findall(r"\S+", unicodedata.normalize("NFKC", text)):
        word = raw.strip("\"'()[],.;:!?")
        # A capitalised function word ("The", "My") is a sentence start, not part of a name.
        if word[:1].isupper() and word not in _FIRST_PERSON and word.lower() not in FUNCTION_WORDS:
            run += word[0].lower()
            if raw[-1] in ",.;:!?":  # punctuation ends the run
                runs.append(run)
                run = ""
        else:
            if len(run) >= 2:
                runs.append(run)
            run = ""
    runs.append(run)
    return frozenset(r for r in runs if len(r) >= 2)


_QUOTED = re.compile(r"'([^']*)'")


def shown_words(reason: str, *texts: Text) -> str:
    """A reason with the stemmed words of facts not in English shown as written ('दिल्ल' ->
    'दिल्ली'): a user reads words, not stems. English reasons are left as they are."""
    forms: dict[str, str] = {}
    for text in texts:
        lang = language(text)
        if lang != "en" and lang not in CJK:
            for token, raw in word_forms(raw_text(text), lang):
                forms.setdefault(token, raw)
                forms.setdefault(stem(token), raw)
    if not forms:
        return reason
    return _QUOTED.sub(
        lambda m: "'" + " ".join(forms.get(w, w) for w in m.group(1).split()) + "'", reason
    )
