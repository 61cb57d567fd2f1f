"""The multilingual backfill of a large store: time, throughput and memory, beside the English
model's own `reindex` of the same store measured in the same run (absolute times differ up to
3x between machines; the ratio does not). Prints JSON; a benchmark, not a test.

    python benchmarks/multilingual_backfill.py [--facts 10000] [--batch 32]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from ankita import Memory
from ankita.dev._corpus import RealStyleGenerator


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """This process's resident memory now (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def timed_reindex(memory: Memory, multilingual: bool, batch: int) -> dict:
    last = [0.0]

    def progress(done: int, total: int) -> None:
        # Progress as a user sees it, every tenth of the way.
        if done == total or done - last[0] >= total / 10:
            last[0] = done
            print(f"  {done}/{total}", file=sys.stderr, flush=True)

    rss_before, now_before = peak_rss_mb(), rss_mb()
    started = time.perf_counter()
    report = memory.reindex(batch_size=batch, progress=progress, multilingual=multilingual)
    took = time.perf_counter() - started
    return {
        "model": report["model"],
        "embedded": report["embedded"],
        "seconds": round(took, 1),
        "ms_per_fact": round(1000 * took / max(1, report["embedded"]), 2),
        "peak_rss_mb_before": round(rss_before, 1),
        "peak_rss_mb_after": round(peak_rss_mb(), 1),
        "rss_mb_before": round(now_before, 1),
        "rss_mb_after": round(rss_mb(), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memory.db"
        generator = RealStyleGenerator(7, args.facts)
        rows = [{"text": generator.next()[0]} for _ in range(args.facts)]
        with Memory(path, embedder="none", multilingual="off") as memory:
            memory.remember_many(rows)
            stored = memory.count()
        out = {"facts": stored, "batch": args.batch}
        with Memory(path, embedder="local", multilingual="off") as memory:
            print("reference: the English model's reindex", file=sys.stderr)
            out["english_reindex"] = timed_reindex(memory, False, args.batch)
        with Memory(path, embedder="local", multilingual="auto") as memory:
            print("the multilingual backfill", file=sys.stderr)
            out["multilingual_backfill"] = timed_reindex(memory, True, args.batch)
            out["store_mb"] = round(path.stat().st_size / 2**20, 1)
        out["ratio"] = round(
            out["multilingual_backfill"]["seconds"] / out["english_reindex"]["seconds"], 2
        )
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
