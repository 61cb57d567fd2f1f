"""`ankita bench --real FILE`: what one write of a real memory stream's fact costs, beside
as many generated facts written in the same run."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from ankita._memory import Memory
from ankita.dev._bench import _percentile
from ankita.dev._corpus import FactGenerator


def _write_cost(memory: Memory, texts: list[tuple[str, str]]) -> tuple[list[float], float]:
    """Each write's wall milliseconds, in order, and the CPU seconds they took together; the
    memory is closed after."""
    samples, cpu = [], 0.0
    with memory:
        for text, kind in texts:
            wall, used = time.perf_counter(), time.thread_time()
            memory.remember(text, kind=kind)
            cpu += time.thread_time() - used
            samples.append((time.perf_counter() - wall) * 1000)
    return samples, cpu


def real_write_cost(path: str, embedder: str, judge: str) -> dict[str, Any]:
    """Write the facts of a real memory stream (`_stream.load_streams`) in order, one fresh
    store per stream, and as the reference of the same run as many generated facts
    (`FactGenerator`) into one fresh store per stream of the same length: real facts are
    longer and more alike than generated ones, and cost more a write."""
    from ankita.dev._stream import load_streams

    streams = load_streams(path)
    samples: dict[str, list[float]] = {"real": [], "generated": []}
    cpu = {"real": 0.0, "generated": 0.0}
    with tempfile.TemporaryDirectory(prefix="ankita-bench-") as folder:
        for number, stream in enumerate(streams):
            facts = [(text, "fact") for text, _ in stream.facts]
            generator = FactGenerator(number, len(facts))
            for label, rows in (("real", facts), ("generated", [generator.next() for _ in facts])):
                place = str(Path(folder) / f"{label}{number}.db")
                ms, used = _write_cost(Memory(place, embedder=embedder, judge=judge), rows)
                samples[label] += ms
                cpu[label] += used
    out: dict[str, Any] = {"streams": len(streams), "facts": len(samples["real"])}
    for label, ms in samples.items():
        out[f"{label}_p50_ms"] = _percentile(ms, 0.5)
        out[f"{label}_p95_ms"] = _percentile(ms, 0.95)
        out[f"{label}_cpu_ms_per_write"] = round(1000 * cpu[label] / max(1, len(ms)), 3)
    out["real_vs_generated_cpu"] = round(
        out["real_cpu_ms_per_write"] / max(1e-6, out["generated_cpu_ms_per_write"]), 2
    )
    return out
