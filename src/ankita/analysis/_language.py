"""Which language a fact is written in, and the tokens of a fact that is not in English.

English facts keep the tokenizer they always had (`_text`). Any other fact is folded (NFKC,
casefold, script-specific spellings), split into words that keep their combining marks (or,
for Chinese and Japanese, into cue words, script runs and character pairs), and each word is
glossed into the English cue the rules read ("nicht" -> "not", "wohne" -> "live", see
`_lexicon`), dropped as a stop word (the `stop-words` package's list for that language), or
stemmed by that language's Snowball stemmer (PyStemmer). So one set of rules serves every
language, and a word in Hindi is compared with a word in Hindi.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from ankita.analysis._lexicon import (
    ANYMORE,
    CHANGES,
    CJK_GLOSS,
    GLOSS,
    HINGLISH_CUES,
    HINGLISH_WEAK,
    NAME_PARTICLES,
    SNOWBALL,
    STOP_LISTS,
    STOP_WORDS,
    THIRD_PERSON,
    VERB_LAST,
    VERBS,
)
from ankita.analysis._profile import per_text

LANGUAGES = ("en", "hi", "hi-latn", "de", "es", "fr", "pt", "it", "nl", "ru", "id", "zh", "ja")
_LATIN = ("de", "es", "fr", "pt", "it", "nl", "id")
CJK = frozenset({"zh", "ja"})
# Models trained on English text only, by name: the two packaged ones, any MiniLM or "-en"
# model that does not say multilingual (Cloudflare's default bge-base-en-v1.5, Ollama's
# all-minilm), and Ollama's common English embedders. Any other model is trusted with every
# language (a remote model is the user's choice, and we cannot know what it read).
ENGLISH_ONLY_MODELS = frozenset({"local:minilm-l6-int8", "local:paraphrase-minilm-l3"})
_ENGLISH_NAME = re.compile(r"minilm|(?<![a-z])en(?![a-z])|nomic-embed-text|mxbai-embed-large")


def reads(model_id: str, languages: list[str]) -> bool:
    """Can this embedding model's cosine be trusted on facts in these languages?"""
    if all(lang == "en" for lang in languages):
        return True
    name = model_id.lower()
    english = model_id in ENGLISH_ONLY_MODELS or (
        bool(_ENGLISH_NAME.search(name)) and "multilingual" not in name
    )
    return not english


def _mark_ranges() -> str:
    """A regex class of every combining mark (Mn, Mc, Me) and the joiners Indic scripts use."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x300, 0x20000):
        if unicodedata.category(chr(code)).startswith("M"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    body = "".join(f"\\U{a:08x}-\\U{b:08x}" if a != b else f"\\U{a:08x}" for a, b in ranges)
    return body + "\u200c\u200d"


MARKS = _mark_ranges()
# A word is letters and digits with the marks that belong to them ("दिल्ली" stays whole).
_LETTER = rf"(?:[^\W_]|[{MARKS}])"
WORD = re.compile(rf"[^\W_]{_LETTER}*(?:'{_LETTER}+)*")
# `WORD` on a lower-cased ASCII text, where no mark can occur: the same words, a cheaper pattern.
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")


def _script(ch: str) -> str:
    code = ord(ch)
    if 0x0900 <= code <= 0x097F:
        return "deva"
    if 0x0400 <= code <= 0x04FF:
        return "cyrl"
    if 0x3040 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or code == 0xFF70:
        return "kana"
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
        return "han"
    return "latn" if ch.isalpha() else "other"


@lru_cache(maxsize=8)
def _stop_words(lang: str) -> frozenset[str]:
    from stop_words import get_stop_words

    if lang not in STOP_LISTS:
        return frozenset()
    return frozenset(fold(w, lang) for w in get_stop_words(STOP_LISTS[lang]))


@lru_cache(maxsize=8)
def _markers(lang: str) -> frozenset[str]:
    """Words that say a Latin-script text is in `lang` and could not be English."""
    words = _stop_words(lang) | set(GLOSS[lang]) | ANYMORE.get(lang, frozenset())
    return frozenset(w for w in words if len(w) > 1) - STOP_WORDS - NAME_PARTICLES


@lru_cache(maxsize=1)
def _identifier() -> Any:
    # Loaded on the first text that carries words of another language (0.7 s, once).
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(["en", *_LATIN])
    return ident


def words_of(text: str) -> list[str]:
    """The text's words, lower-cased after NFKC (`WORD`), as the language is told by them."""
    if text.isascii():  # NFKC leaves it as it is, and no mark can occur
        return _ASCII_WORD.findall(text.lower())
    return WORD.findall(unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'"))


def _non_latin_script(text: str) -> str | None:
    """The language its script says, if a non-Latin script holds more letters than Latin."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha() or unicodedata.category(ch).startswith("M"):
            kind = _script(ch)
            counts[kind] = counts.get(kind, 0) + 1
    latin = counts.get("latn", 0)
    if counts.get("deva", 0) > latin:
        return "hi"
    if counts.get("kana", 0) and counts.get("kana", 0) + counts.get("han", 0) > latin:
        return "ja"
    if counts.get("han", 0) > latin:
        return "zh"
    if counts.get("cyrl", 0) > latin:
        return "ru"
    return None


@per_text
def language(text: str) -> str:
    """The language of one fact: by script, else by words only that language has (py3langid
    choosing among the languages whose words appear). English unless another is clear."""
    # Every fact, clause and piece of a clause is asked: an ASCII text (most of them) holds
    # only Latin letters, so its scripts need not be counted.
    if not text.isascii():
        script = _non_latin_script(text)
        if script is not None:
            return script
    words = set(words_of(text))
    words |= {part for word in words if "'" in word for part in word.split("'")}
    hinglish = words & HINGLISH_CUES
    strong = len(hinglish - HINGLISH_WEAK)
    if strong >= 2 or (strong == 1 and words & (HINGLISH_WEAK | {"main", "mai", "maine"})):
        return "hi-latn"
    found = [lang for lang in _LATIN if words & _markers(lang)]
    if not found:
        return "en"
    ranked = _identifier().rank(text)
    return str(next(lang for lang, _ in ranked if lang == "en" or lang in found))


def fold(text: str, lang: str) -> str:
    """NFKC and casefold, plus the spellings one script writes two ways."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")
    if lang == "ru":
        text = text.replace("ё", "е")
    elif lang == "hi":
        # The nukta (फ़/फ) and chandrabindu (हूँ/हूं) are written either way.
        text = text.replace("\u093c", "").replace("\u0901", "\u0902")
    return text


@lru_cache(maxsize=16)
def _stemmer(lang: str) -> Any:
    if lang not in SNOWBALL:
        return None
    import Stemmer

    return Stemmer.Stemmer(SNOWBALL[lang])


@lru_cache(maxsize=16)
def _gloss(lang: str) -> dict[str, str]:
    """The language's glosses, their words folded as the text is (nukta, ß, case)."""
    return {fold(word, lang): english for word, english in GLOSS[lang].items()}


def _verb_second(out: list[str]) -> list[str]:
    """Negations and verbs moved to just after the subject ("i", "my sister"), changes first:
    the order of an English fact, which the rules read."""
    k = 0
    while k < len(out) and out[k] in ("i", "me", "my"):
        k += 1
    if 0 < k < len(out) and out[k - 1] == "my" and out[k] in _OWNED:
        k += 1
    rest = out[k:]
    negations = [t for t in rest if t in ("not", "no")]
    verbs = sorted((t for t in rest if t in VERBS), key=lambda t: t not in CHANGES)
    others = [t for t in rest if t not in VERBS and t not in ("not", "no")]
    return out[:k] + negations + verbs + others


_ELISION = re.compile(r"^(qu|jusqu|lorsqu|puisqu|[ldjnsmtc])'(.+)$")
_NEGATION_GLOSSES = frozenset({"not", "no", "not anymore"})
_OWNED = frozenset(
    {
        "sister",
        "brother",
        "mother",
        "father",
        "wife",
        "husband",
        "son",
        "car",
        "neighbor",
        "colleague",
        "boss",
        "partner",
        "child",
        "parents",
        "pets",
        "daughter",
        "friend",
        "dog",
        "cat",
        "home",
        "name",
    }
)


def _words(text: str, lang: str) -> list[str]:
    out: list[str] = []
    for word in WORD.findall(text):
        match = _ELISION.match(word) if lang in ("fr", "it") else None
        out.extend(match.groups() if match else (word,))
    return out


@lru_cache(maxsize=1)
def _cjk_pattern(lang: str) -> re.Pattern[str]:
    keys = sorted(CJK_GLOSS[lang], key=len, reverse=True)
    return re.compile("|".join(re.escape(k) for k in keys))


_CJK_RUN = re.compile(
    r"[\u4e00-\u9fff\u3400-\u4dbf]+|[\u30a0-\u30ff\u31f0-\u31ff\uff70]+"
    r"|[\u3040-\u309f]+|\d+|(?:(?![\u3040-\u30ff\u3400-\u9fff])[^\W\d_])+"
)


# Chinese grammatical particles, which end a word wherever they stand (a stop list's single
# characters also include 上 and 下, which are inside words: 上海).
_ZH_PARTICLES = re.compile("[的了在是都也很和就着过吗呢吧啊把被给一]")


def _cjk_tokens(text: str, lang: str) -> list[str]:
    """Cue words glossed; the rest split into script runs: a katakana run is a word, hiragana
    is grammar (particles, endings); Chinese Han runs split at stop characters; Han runs
    longer than two characters become overlapping pairs (no dictionary needed)."""
    gloss, stops = CJK_GLOSS[lang], _stop_words(lang)
    out: list[str] = []
    at = 0
    for match in [*_cjk_pattern(lang).finditer(text), None]:
        end = match.start() if match else len(text)
        for run in _CJK_RUN.findall(text[at:end]):
            kind = _script(run[0])
            if kind == "kana" and "\u3040" <= run[0] <= "\u309f":
                continue  # hiragana: particles and endings
            if kind == "han":
                for part in _ZH_PARTICLES.split(run) if lang == "zh" else [run]:
                    if part not in stops:
                        out.extend(
                            [part]
                            if len(part) <= 2
                            else [part[i : i + 2] for i in range(len(part) - 1)]
                        )
                continue
            if run not in stops:
                out.append(run)
        if match:
            out.extend(gloss[match.group()].split())
            at = match.end()
    return [t for t in out if t]


def foreign_tokens(text: str, lang: str) -> tuple[str, ...]:
    """The tokens of a fact in `lang` (not English), as the rules read them."""
    folded = fold(text, lang)
    words: list[str] = []
    if lang in CJK:
        out = _cjk_tokens(folded, lang)
    else:
        gloss, stops, stemmer = _gloss(lang), _stop_words(lang), _stemmer(lang)
        words = _words(folded, lang)
        negated = any(gloss.get(w) in _NEGATION_GLOSSES for w in words)
        out = []
        for word in words:
            if word in gloss:
                out.extend(gloss[word].split())
            elif negated and word in ANYMORE.get(lang, ()):
                out.append("anymore")
            elif word not in stops and not (lang == "fr" and word == "pas"):
                out.append(stemmer.stemWord(word) if stemmer and not word.isdigit() else word)
    # Possession after the noun ("kakak saya") or implied (Japanese kin terms): "my <noun>".
    for i in range(len(out) - 1):
        if out[i] in _OWNED and out[i + 1] == "i" and lang == "id":
            out[i], out[i + 1] = "my", out[i]
        elif out[i] == "i" and out[i + 1] in _OWNED and lang == "zh":
            out[i] = "my"
    if lang == "ja" and out and out[0] in _OWNED:
        out.insert(0, "my")
    if lang in VERB_LAST:
        out = _verb_second(out)
    # Spanish, Portuguese and Italian drop the pronoun: "Vivo en Madrid" is "I live in Madrid";
    # but "Ana vive en Lisboa" is Ana's, so a verb in the third person leaves it out.
    if (
        lang in THIRD_PERSON
        and out
        and not {"i", "my", "me"} & set(out)
        and THIRD_PERSON[lang].isdisjoint(words)
    ):
        out.insert(0, "i")
    return tuple(out)


def word_forms(text: str, lang: str) -> list[tuple[str, str]]:
    """(token, word as written) for each word of a fact in `lang` that is no cue word."""
    gloss, stemmer = _gloss(lang), _stemmer(lang)
    out = []
    for raw in _words(unicodedata.normalize("NFKC", text), lang):
        word = fold(raw, lang)
        if word not in gloss:
            out.append((stemmer.stemWord(word) if stemmer else word, raw))
    return out


def foreign_names(text: str, lang: str) -> tuple[str, ...]:
    """Capitalised words that are no cue and no stop word, as tokens (German capitalises
    every noun, and CJK and Devanagari have no capitals: none there)."""
    if lang in ("de", "hi", "ru", "zh", "ja"):
        return ()
    gloss, stops, stemmer = _gloss(lang), _stop_words(lang), _stemmer(lang)
    out = []
    for raw in _words(unicodedata.normalize("NFKC", text), lang):
        word = fold(raw, lang)
        if raw[:1].isupper() and word not in gloss and word not in stops:
            out.append(stemmer.stemWord(word) if stemmer else word)
    return tuple(out)
