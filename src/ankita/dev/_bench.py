"""`ankita bench`: build stores of generated facts and measure the write and recall paths.

Each store size runs in its own child process, so its peak RSS is its own. Figures per size:
remember and recall p50/p95 through the index, bulk import facts/s, peak RSS, the same writes
through the exhaustive reference (speed-up, and whether every decision matched), and a fresh
process that serves the built store (its peak RSS, remember and recall p50).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ankita._memory import IMPORT_BATCH, Memory
from ankita.analysis._profile import PROFILES_KEPT
from ankita.analysis._propositions import parse_seconds, parses_run
from ankita.dev._clock import reference_ms as cpu_reference_ms
from ankita.dev._corpus import FactGenerator, make_facts
from ankita.search._index import index_terms


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)


def _timed_writes(
    memory: Memory, writes: list[tuple[str, str]], order: list[str] | None = None
) -> tuple[list[float], list[Any], list[str]]:
    """Each write's milliseconds and decision, and the ids of the facts created so far.
    `order` holds those of the writes before these (when a run is split in parts)."""
    samples, decisions, order = [], [], list(order or [])
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

        decisions.append(
            (
                result.action,
                mapped(result.merged_into),
                sorted(mapped(c) for c in result.conflicts_with),
            )
        )
    return samples, decisions, order


def _reference_part(
    place: str, embedder: str, judge: str, writes: list[tuple[str, str]], order: list[str]
) -> tuple[list[float], list[Any]]:
    """Some of the writes through the exhaustive reference, on a store as it was before them
    (runs in a child process of its own)."""
    with Memory(place, embedder=embedder, judge=judge, candidate_search="exhaustive") as reference:
        samples, decisions, _ = _timed_writes(reference, writes, order)
    return samples, decisions


def _peak_rss_mb() -> float:
    """This process's peak resident memory, MB. Linux's VmHWM belongs to the running program;
    `ru_maxrss` would also hold the RSS of the process it was started from (Linux carries it
    across exec), which a child started by a large bench process must not report."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes there, else KB


def _serving(
    place: str, embedder: str, judge: str, writes: list[tuple[str, str]], queries: list[str]
) -> dict[str, Any]:
    """A fresh process serving the built store: its writes' and recalls' milliseconds, and
    its peak RSS (the model, the vectors and the postings it loads, and what they cost)."""
    with Memory(place, embedder=embedder, judge=judge) as memory:
        memory.recall("warm-up")
        parses, seconds = parses_run(), parse_seconds()
        remember_ms, _, _ = _timed_writes(memory, writes)
        # What parsing cost these writes: the stored facts' parses are read, not made.
        parsed = {"parses": parses_run() - parses, "parse_s": parse_seconds() - seconds}
        recall_ms = _timed_recalls(memory, queries)
    return {
        "remember_ms": remember_ms,
        "recall_ms": recall_ms,
        "peak_rss_mb": _peak_rss_mb(),
    } | parsed


def _timed_recalls(memory: Memory, queries: list[str]) -> list[float]:
    """Each recall's milliseconds."""
    samples = []
    for query in queries:
        start = time.perf_counter()
        memory.recall(query)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _parts(count: int, workers: int) -> list[tuple[int, int]]:
    """`count` writes cut into at most `workers` runs of consecutive writes."""
    size = -(-count // max(1, workers)) if count else 0
    return [(at, min(count, at + size)) for at in range(0, count, size)] if size else []


class Places:
    """Where bench stores live: temporary SQLite files, or new schemas in a PostgreSQL
    database (dropped afterwards)."""

    def __init__(self, server: str | None) -> None:
        self.server = server
        self.folder = Path(tempfile.mkdtemp(prefix="ankita-bench-"))
        self.made: list[str] = []

    def new(self, name: str) -> str:
        if self.server is None:
            return str(self.folder / f"{name}.db")
        from ankita.store._postgres import create_schema

        self.made.append(create_schema(self.server, "ankita_bench"))
        return self.made[-1]

    def snapshot(self, memory: Memory, source: str, name: str) -> str:
        """A copy of the store at `source`, open in `memory`, as it is now (same facts, ids)."""
        if self.server is None:
            return memory.backup(self.folder / f"{name}.db")
        return self.copy(source, name)

    def copy(self, source: str, name: str) -> str:
        """A second store holding the same facts with the same ids: a file copy, or an
        export restored into a new schema."""
        if self.server is None:
            shutil.copy(source, self.folder / f"{name}.db")
            return str(self.folder / f"{name}.db")
        target = self.new(name)
        with Memory(source, embedder="none") as memory:
            dump = list(memory.export(vectors=True))
        with Memory(target, embedder="none") as memory:
            memory.restore(dump)
        return target

    def close(self) -> None:
        from ankita.store._postgres import drop_schema

        for url in self.made:
            drop_schema(url)
        shutil.rmtree(self.folder, ignore_errors=True)


def run_size(
    size: int,
    embedder: str,
    writes: int,
    exhaustive_writes: int,
    seed: int = 7,
    server: str | None = None,
    judge: str = "auto",
    workers: int | None = None,
    style: str = "short",
    corpus: str | None = None,
) -> dict[str, Any]:
    """One store size, measured end to end (runs in a child process), on generated facts of
    `style` or on the facts of `corpus`."""
    places = Places(server)
    try:
        generator = make_facts(style, seed, size, corpus, size + 3 * writes)
        rows = [
            {"text": t, "kind": k, "source": "bench"}
            for t, k in (generator.next() for _ in range(size))
        ]
        main = places.new("bench")
        with Memory(main, embedder=embedder, judge=judge) as memory:
            judge_id = (
                memory.judge.model_id
                if memory.judge is not None and memory.embedder is not None
                else "off"
            )
            memory.remember("warm-up fact so that models and caches are loaded")
            start, cpu = time.perf_counter(), time.thread_time()
            # The bulk import path (`ankita import`), which counts results as they come: a
            # list of every result would be the bench's memory, not the store's.
            counts = memory.import_rows(rows)
            import_rate = size / (time.perf_counter() - start)
            # This thread only writes: an embedder runs in another one while it waits.
            write_ms = (time.thread_time() - cpu) * 1000 / size
            facts = counts["created"] + counts["conflict"]  # a merge adds no fact
            embedding = _embed_rate(memory, [r["text"] for r in rows])
            tests = [generator.next() for _ in range(writes)]
            queries = [generator.next()[0].split(" ", 2)[-1] for _ in range(writes)]
            later = [generator.next() for _ in range(writes)]  # the serving process's writes
            # Texts this process has not seen, with the caches as the import left them.
            analysis_ms = _analysis_ms(memory, later)
        compared = min(exhaustive_writes, writes)
        # The reference's writes, cut in parts that run side by side: each part starts from
        # a copy of the store as the index left it before the part's first write. If every
        # decision before it matched, that is the store the reference would have made.
        parts = _parts(compared, workers or (1 if compared < 100 else min(4, os.cpu_count() or 1)))
        starts: dict[int, tuple[str, list[str]]] = {}
        remember_ms: list[float] = []
        indexed: list[Any] = []
        order: list[str] = []
        reference = cpu_reference_ms()  # in the same run as the timed writes (docs/scale.md)
        with Memory(main, embedder=embedder, judge=judge) as memory:
            memory.recall("warm-up")
            firsts = {at for at, _ in parts}
            cuts = sorted({0, *firsts}) + [writes]
            for at, end in zip(cuts, cuts[1:], strict=False):
                if at in firsts:
                    starts[at] = (places.snapshot(memory, main, f"reference{at}"), order)
                samples, decisions, order = _timed_writes(memory, tests[at:end], order)
                remember_ms += samples
                indexed += decisions
            recall_ms = _timed_recalls(memory, queries)
            # Once per process, inside one of the timed writes (docs/scale.md).
            load_s = memory._search.terms.load_seconds
        # Before the reference runs: its scan of every stored fact is not what a user runs.
        peak_rss = _peak_rss_mb()
        # A process that only opens the store and serves it, as `ankita serve` does after an
        # `ankita import`: its memory holds no import. Alone on the machine, like the above.
        status, served = _in_child(_serving, main, embedder, judge, later, queries)
        if status != "ok":
            raise RuntimeError(f"the serving process failed: {served}")
        # The reference reads every stored text on every write: caches that hold them all.
        answers = _in_children(
            _reference_part,
            [(starts[at][0], embedder, judge, tests[at:end], starts[at][1]) for at, end in parts],
            {"ANKITA_TEXT_CACHE": str(max(PROFILES_KEPT, size + writes))},
        )
        reference_ms: list[float] = []
        exhaustive: list[Any] = []
        for status, payload in answers:
            if status != "ok":
                raise RuntimeError(f"the exhaustive reference failed: {payload}")
            reference_ms += payload[0]
            exhaustive += payload[1]
        same = indexed[:compared] == exhaustive
        return {
            "facts": size,
            "stored_after_import": facts,
            "embedder": embedder,
            "judge": judge_id,
            "reference_ms": reference,
            "remember_p50_ms": _percentile(remember_ms, 0.5),
            "remember_p95_ms": _percentile(remember_ms, 0.95),
            "recall_p50_ms": _percentile(recall_ms, 0.5),
            "recall_p95_ms": _percentile(recall_ms, 0.95),
            "import_facts_per_s": round(import_rate, 1),
            "peak_rss_mb": round(peak_rss, 1),
            "serving_peak_rss_mb": round(served["peak_rss_mb"], 1),
            "serving_remember_p50_ms": _percentile(served["remember_ms"], 0.5),
            "serving_recall_p50_ms": _percentile(served["recall_ms"], 0.5),
            "serving_parses_per_write": round(served["parses"] / max(1, len(later)), 3),
            "serving_parse_ms_per_write": round(1000 * served["parse_s"] / max(1, len(later)), 3),
            "postings_load_s": round(load_s, 3),
            "exhaustive_remember_p50_ms": _percentile(reference_ms, 0.5) if compared else None,
            "exhaustive_speedup": round(
                statistics.median(reference_ms) / statistics.median(remember_ms[:compared]), 1
            )
            if compared
            else None,
            "exhaustive_parts": len(parts),
            "decisions_compared": compared,
            "decisions_identical": same,
            "import_write_cpu_ms_per_fact": round(write_ms, 3),
            "analysis_ms_per_fact": round(analysis_ms, 3),
        } | (_embedding_fields(import_rate, write_ms, *embedding) if embedding else {})
    finally:
        places.close()


def _embed_rate(memory: Memory, texts: list[str], sample: int = 2048) -> tuple[float, float] | None:
    """The embedder's own throughput on the import's texts, in the import's batches (what an
    import that is bound by embedding would reach), and the CPU time it spends on a text, over
    all its threads."""
    if memory.embedder is None:
        return None
    chosen = texts[:sample]
    start, cpu = time.perf_counter(), time.process_time()
    for at in range(0, len(chosen), IMPORT_BATCH):
        memory.embedder.embed_batch(chosen[at : at + IMPORT_BATCH])
    return (
        len(chosen) / (time.perf_counter() - start),
        (time.process_time() - cpu) * 1000 / len(chosen),
    )


def _analysis_ms(memory: Memory, facts: list[tuple[str, str]]) -> float:
    """What a write computes from its text alone, before and for the store: the query of the
    lexical tiers and the terms it is filed under, in ms a text."""
    start = time.perf_counter()
    for text, kind in facts:
        memory._search.query(text, kind)
        index_terms(text)
    return (time.perf_counter() - start) * 1000 / max(1, len(facts))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def import_bound(write_ms: float, embed_ms: float, cores: int) -> float:
    """The most facts/s an import can reach when each fact costs `embed_ms` of CPU to embed
    (spread over any cores) and `write_ms` to write (one thread, in order): the cores' time
    is shared by both, and the writes never run side by side."""
    shared = cores * 1000 / (embed_ms + write_ms) if embed_ms + write_ms > 0 else math.inf
    return min(shared, 1000 / write_ms) if write_ms > 0 else shared


def _embedding_fields(
    import_rate: float, write_ms: float, embed_rate: float, embed_ms: float
) -> dict[str, Any]:
    bound = import_bound(write_ms, embed_ms, _cores())
    return {
        "embedder_texts_per_s": round(embed_rate, 1),
        "import_vs_embedder": round(import_rate / embed_rate, 2),
        "embedder_cpu_ms_per_text": round(embed_ms, 3),
        # What the import could reach on these cores at this write cost (docs/scale.md).
        "import_bound_vs_embedder": round(min(bound, embed_rate) / embed_rate, 2),
    }


def _child(queue: Any, target: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        queue.put(("ok", target(*args)))
    except Exception as exc:  # report, do not hang the parent
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def _in_child(target: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    return _in_children(target, [args])[0]


def _in_children(
    target: Callable[..., Any], arg_lists: list[tuple[Any, ...]], env: dict[str, str] | None = None
) -> list[tuple[str, Any]]:
    """`target` run once per argument tuple, each in a new process, all at once; `env` is
    added to their environment (read when they import ankita)."""
    context = multiprocessing.get_context("spawn")
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    try:
        runs = []
        for args in arg_lists:
            queue = context.Queue()
            child = context.Process(target=_child, args=(queue, target, args))
            child.start()
            runs.append((queue, child))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    answers = [queue.get() for queue, _ in runs]
    for _, child in runs:
        child.join()
    return answers


def _writer(location: str, user: str, seed: int, count: int, barrier: Any) -> None:
    generator = FactGenerator(seed, count)
    rows = [generator.next() for _ in range(count)]
    with Memory(location, user=user, embedder="none") as memory:
        barrier.wait()
        for text, kind in rows:
            memory.remember(text, kind=kind)


def concurrent_writes(server: str | None, processes: int, writes: int) -> dict[str, Any]:
    """Facts/s when `processes` writers remember at once: each as its own user, then all as
    one user (whose writes must take turns: compare-and-write is atomic per user)."""
    out: dict[str, Any] = {"processes": processes, "writes_per_process": writes}
    context = multiprocessing.get_context("spawn")
    for label, same in (("different_users", False), ("same_user", True)):
        places = Places(server)
        try:
            location = places.new(label)
            Memory(location, embedder="none").close()  # the schema exists before the race
            barrier = context.Barrier(processes + 1)
            children = [
                context.Process(
                    target=_writer,
                    args=(location, "bench" if same else f"bench{i}", 100 + i, writes, barrier),
                )
                for i in range(processes)
            ]
            for child in children:
                child.start()
            barrier.wait()
            start = time.perf_counter()
            for child in children:
                child.join()
            elapsed = time.perf_counter() - start
            if any(child.exitcode != 0 for child in children):
                out[f"{label}_error"] = "a writer process failed"
                continue
            out[f"{label}_facts_per_s"] = round(processes * writes / elapsed, 1)
        finally:
            places.close()
    return out


def bench(
    sizes: list[int],
    embedder: str,
    writes: int,
    exhaustive_writes: int,
    on_size: Callable[[int], None] | None = None,
    server: str | None = None,
    writers: int = 0,
    writer_writes: int = 200,
    judge: str = "auto",
    style: str = "short",
    corpus: str | None = None,
) -> dict[str, Any]:
    """Every size in its own process, smallest first; then, if asked, `writers` processes
    writing at once. `server` is a PostgreSQL URL, or None for temporary SQLite files."""
    runs = []
    for size in sizes:
        if on_size:
            on_size(size)
        status, payload = _in_child(
            run_size,
            size,
            embedder,
            writes,
            min(writes, exhaustive_writes),
            7,
            server,
            judge,
            None,
            style,
            corpus,
        )
        runs.append(payload if status == "ok" else {"facts": size, "error": payload})
    report: dict[str, Any] = {
        "backend": "postgresql" if server else "sqlite",
        "facts_from": corpus or f"generated, {style} style",
        "runs": runs,
    }
    if writers:
        if on_size:
            on_size(-writers)
        report["concurrent"] = concurrent_writes(server, writers, writer_writes)
    return report
