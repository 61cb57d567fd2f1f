"""`ankita bench`: build stores of generated facts and measure the write and recall paths.

Each store size runs in its own child process, so its peak RSS is its own. Figures per size:
remember and recall p50/p95 through the index, bulk import facts/s, peak RSS, and the same
writes through the exhaustive reference (speed-up, and whether every decision matched).
"""

from __future__ import annotations

import multiprocessing
import random
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._memory import Memory

_SYLLABLES = ["ka", "lo", "mi", "ra", "ten", "vo", "sun", "bel", "dor", "ia", "qu", "zen",
              "mar", "os", "ti", "fen", "gra", "lu", "pe", "sha", "wy", "no", "ber", "cal"]
_NOUNS = ["coffee", "tea", "jazz", "blues", "chess", "climbing", "running", "sushi", "pizza",
          "dark mode", "light mode", "tabs", "spaces", "trains", "planes", "podcasts", "novels",
          "hiking", "yoga", "piano", "guitar", "cycling", "gardening", "baking", "painting"]
_RELATIONS = ["sister", "brother", "son", "daughter", "partner", "manager", "best friend",
              "neighbour", "cousin", "dentist", "mentor", "landlord"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


class FactGenerator:
    """Personal facts over a vocabulary that grows with the store (synthetic names, places and
    tools), with repeats, paraphrases and changed values of earlier facts mixed in."""

    def __init__(self, seed: int, size: int) -> None:
        self.rng = random.Random(seed)
        width = max(50, size // 20)
        self.places = [_name(self.rng, 3) + "burg" for _ in range(width)]
        self.people = [_name(self.rng, 2) for _ in range(width)]
        self.tools = [_name(self.rng, 2) + "DB" for _ in range(width // 2)]
        self.topics = [_name(self.rng, 3) for _ in range(width)]
        self.history: list[tuple[str, str]] = []

    def _fresh(self) -> tuple[str, str]:
        r = self.rng
        person, place, tool = r.choice(self.people), r.choice(self.places), r.choice(self.tools)
        topic, noun, relation = r.choice(self.topics), r.choice(_NOUNS), r.choice(_RELATIONS)
        options = [
            ("location", f"My {relation} {person} lives in {place}"),
            ("location", f"I lived in {place} for {r.randint(2, 15)} years"),
            ("relationship", f"My {relation} is called {person}"),
            ("relationship", f"{person} is my {relation}"),
            ("tool", f"I use {tool} for the {topic} project"),
            ("tool", f"The {topic} service stores its data in {tool}"),
            ("preference", f"I like {noun} with {person}"),
            ("preference", f"{person} prefers {noun} over {r.choice(_NOUNS)}"),
            ("habit", f"I go {noun} with {person} on {r.choice(_DAYS)}s"),
            ("habit", f"I practise {noun} {r.randint(2, 9)} times a week in {place}"),
            ("work", f"I work on {topic} with {person}"),
            ("work", f"The {topic} deadline is {r.choice(_DAYS)}"),
            ("project", f"The {topic} release uses {tool} version {r.randint(1, 20)}"),
            ("health", f"{person} is allergic to {noun}"),
            ("identity", f"{person} is {r.randint(18, 90)} years old"),
        ]
        kind, text = r.choice(options)
        return text, kind

    def next(self) -> tuple[str, str]:
        roll = self.rng.random()
        if self.history and roll < 0.08:  # a repeat: must merge
            return self.rng.choice(self.history)
        if self.history and roll < 0.14:  # a changed value: usually a conflict
            text, kind = self.rng.choice(self.history)
            words = text.split()
            i = self.rng.randrange(len(words))
            words[i] = self.rng.choice(self.places + self.people)
            return " ".join(words), kind
        fact = self._fresh()
        self.history.append(fact)
        return fact


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)


def _timed_writes(memory: Memory, writes: list[tuple[str, str]]) -> tuple[list[float], list[Any]]:
    samples, decisions, order = [], [], []
    for text, kind in writes:
        start = time.perf_counter()
        result = memory.remember(text, kind=kind)
        samples.append((time.perf_counter() - start) * 1000)
        if result.action != "merged":
            order.append(result.fact.id)
        position = {fid: i for i, fid in enumerate(order)}
        # Ids of new facts differ between the two stores: map them by creation order.
        def mapped(fact_id: str | None, position: dict[str, int] = position) -> str:
            return f"new{position[fact_id]}" if fact_id in position else str(fact_id)

        decisions.append((result.action, mapped(result.merged_into),
                          sorted(mapped(c) for c in result.conflicts_with)))
    return samples, decisions


def run_size(size: int, embedder: str, writes: int, exhaustive_writes: int,
             seed: int = 7) -> dict[str, Any]:
    """One store size, measured end to end (runs in a child process)."""
    folder = Path(tempfile.mkdtemp(prefix="ankita-bench-"))
    try:
        generator = FactGenerator(seed, size)
        rows = [{"text": t, "kind": k, "source": "bench"} for t, k in
                (generator.next() for _ in range(size))]
        with Memory(folder / "bench.db", embedder=embedder) as memory:
            memory.remember("warm-up fact so that models and caches are loaded")
            start = time.perf_counter()
            memory.remember_many(rows)
            import_rate = size / (time.perf_counter() - start)
            facts = len(memory.list(include_superseded=True))
        shutil.copy(folder / "bench.db", folder / "reference.db")
        tests = [generator.next() for _ in range(writes)]
        queries = [generator.next()[0].split(" ", 2)[-1] for _ in range(writes)]
        with Memory(folder / "bench.db", embedder=embedder) as memory:
            memory.recall("warm-up")
            remember_ms, indexed = _timed_writes(memory, tests)
            recall_ms = []
            for query in queries:
                start = time.perf_counter()
                memory.recall(query)
                recall_ms.append((time.perf_counter() - start) * 1000)
        with Memory(folder / "reference.db", embedder=embedder,
                    candidate_search="exhaustive") as reference:
            reference_ms, exhaustive = _timed_writes(reference, tests[:exhaustive_writes])
        same = indexed[:exhaustive_writes] == exhaustive
        compared = min(exhaustive_writes, writes)
        return {
            "facts": size, "stored_after_import": facts, "embedder": embedder,
            "remember_p50_ms": _percentile(remember_ms, 0.5),
            "remember_p95_ms": _percentile(remember_ms, 0.95),
            "recall_p50_ms": _percentile(recall_ms, 0.5),
            "recall_p95_ms": _percentile(recall_ms, 0.95),
            "import_facts_per_s": round(import_rate, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "exhaustive_remember_p50_ms": _percentile(reference_ms, 0.5),
            "exhaustive_speedup": round(statistics.median(reference_ms)
                                        / statistics.median(remember_ms[:compared]), 1),
            "decisions_compared": compared,
            "decisions_identical": same,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _child(queue: Any, args: tuple[Any, ...]) -> None:
    try:
        queue.put(("ok", run_size(*args)))
    except Exception as exc:  # report, do not hang the parent
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def bench(sizes: list[int], embedder: str, writes: int, exhaustive_writes: int,
          on_size: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Every size in its own process, smallest first."""
    context = multiprocessing.get_context("spawn")
    runs = []
    for size in sizes:
        if on_size:
            on_size(size)
        queue = context.Queue()
        child = context.Process(target=_child, args=(queue, (size, embedder, writes,
                                                              min(writes, exhaustive_writes))))
        child.start()
        status, payload = queue.get()
        child.join()
        runs.append(payload if status == "ok" else {"facts": size, "error": payload})
    return {"runs": runs}
