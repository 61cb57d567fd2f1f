"""What reading a fact's language costs a write: language detection and the analysis of one
text (tokens), first sight of each text (caches cleared), beside a whole `remember` with
`--embedder none` timed in the same run as the reference. English facts come from a stream
file (LoCoMo JSON or JSONL of {text}) if given, else from generated facts; the other languages
from the shipped multilingual pairs. Also the one-off cost of loading the language model.
Prints JSON; a benchmark, not a test.

    python benchmarks/language_cost.py [--stream FILE] [--limit 600]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ankita import Memory
from ankita.analysis._language import foreign_tokens, language
from ankita.analysis._text import tokens
from ankita.dev._eval import builtin_multilingual_path


def english_facts(stream: str | None, limit: int) -> list[str]:
    if stream:
        from ankita.dev._stream import load_streams

        return [text for s in load_streams(stream) for text, _ in s.facts][:limit]
    from write_cost import facts  # the generated facts of the write benchmark beside this one

    return facts(limit, 3)


def foreign_facts(limit: int) -> dict[str, list[str]]:
    texts: dict[str, list[str]] = {}
    for line in builtin_multilingual_path().read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        lang = row["source"].removeprefix("multilingual-")
        for key in ("a", "b"):
            if row[key] not in texts.setdefault(lang, []):
                texts[lang].append(row[key])
    return {lang: rows[:limit] for lang, rows in texts.items() if lang != "en"}


def _microseconds(texts: list[str]) -> dict[str, float]:
    """Median µs per text for detection alone and for the whole token analysis, uncached."""
    detect, analyse = [], []
    for text in texts:
        language.cache_clear()
        start = time.perf_counter()
        language(text)
        detect.append((time.perf_counter() - start) * 1e6)
        language.cache_clear()
        foreign_tokens.cache_clear()
        tokens.cache_clear()
        start = time.perf_counter()
        tokens(text)
        analyse.append((time.perf_counter() - start) * 1e6)
    return {
        "detect_us_p50": round(statistics.median(detect), 1),
        "tokens_us_p50": round(statistics.median(analyse), 1),
    }


def remember_ms(texts: list[str]) -> float:
    """Reference: p50 of a whole write with the lexical rules, into a store of these facts."""
    samples = []
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "bench.db", embedder="none") as memory,
    ):
        for text in texts:
            start = time.perf_counter()
            memory.remember(text)
            samples.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(samples), 3)


def cold_load_ms() -> dict[str, float]:
    """A fresh process: detecting an English fact, then a German one (loads py3langid)."""
    code = (
        "import time; from ankita.analysis._language import language; t=time.perf_counter();"
        "language('I like green tea'); e=time.perf_counter();"
        "language('Ich trinke keinen Kaffee mehr'); g=time.perf_counter();"
        "print((e-t)*1000, (g-e)*1000)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first_english, first_other = (float(x) for x in out.stdout.split())
    return {"first_english_ms": round(first_english, 1), "first_other_ms": round(first_other, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", help="LoCoMo JSON or JSONL of English facts")
    parser.add_argument("--limit", type=int, default=600)
    args = parser.parse_args()
    english = english_facts(args.stream, args.limit)
    foreign = foreign_facts(args.limit)
    # Warm the word caches and load py3langid once, as a running store has.
    for text in english + [t for rows in foreign.values() for t in rows]:
        tokens(text)
    reference = remember_ms(english)
    result: dict[str, object] = {
        "remember_none_p50_ms": reference,
        "english": {"texts": len(english), **_microseconds(english)},
    }
    for lang, texts in sorted(foreign.items()):
        result[lang] = {"texts": len(texts), **_microseconds(texts)}
    english_stats = result["english"]
    result["english_tokens_share_of_write"] = round(
        english_stats["tokens_us_p50"] / 1000 / reference, 4
    )  # type: ignore[index]
    result["cold"] = cold_load_ms()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
