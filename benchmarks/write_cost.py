"""Added cost of embedding one write: `remember` timed with `--embedder none` and `local` in one
run, on stores of the same generated facts. Prints JSON; a benchmark, not a test.

    python benchmarks/write_cost.py [--facts 300] [--writes 100]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from ankita import Memory

SUBJECTS = ["my sister", "my brother", "my manager", "my best friend", "I", "my partner"]
VERBS = ["lives in", "works at", "prefers", "uses", "likes", "visits"]
OBJECTS = [
    "Lyon",
    "Berlin",
    "Postgres",
    "dark mode",
    "jazz",
    "Spotify",
    "Neovim",
    "Kyoto",
    "green tea",
    "the gym on Mondays",
    "a ThinkPad",
    "Obsidian",
    "Lisbon",
    "Rust",
]


def facts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"since {rng.randint(1990, 2026)}"
        for _ in range(n)
    ]


def timed_writes(embedder: str, stored: list[str], writes: list[str]) -> list[float]:
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "bench.db", embedder=embedder) as memory,
    ):
        for text in stored:
            memory.remember(text)
        memory.remember("warm-up: load the model before timing")
        samples = []
        for text in writes:
            start = time.perf_counter()
            memory.remember(text)
            samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=300)
    parser.add_argument("--writes", type=int, default=100)
    args = parser.parse_args()
    stored, writes = facts(args.facts, 1), facts(args.writes, 2)
    result: dict[str, object] = {"stored_facts": args.facts, "writes": args.writes}
    for embedder in ("none", "local"):
        samples = sorted(timed_writes(embedder, stored, writes))
        result[embedder] = {
            "p50_ms": round(statistics.median(samples), 2),
            "p90_ms": round(samples[int(len(samples) * 0.9)], 2),
        }
    none_p50 = result["none"]["p50_ms"]  # type: ignore[index]
    local_p50 = result["local"]["p50_ms"]  # type: ignore[index]
    result["added_p50_ms"] = round(local_p50 - none_p50, 2)
    result["ratio_p50"] = round(local_p50 / none_p50, 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
