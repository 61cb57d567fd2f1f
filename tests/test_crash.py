"""A writer killed with SIGKILL at random moments: the store opens, doctor is clean, and every
write acknowledged before the kill is there. ANKITA_CRASH_KILLS sets how many kills per test
(the closing-note figures come from `ANKITA_CRASH_KILLS=40`)."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from ankita import Memory

KILLS = int(os.environ.get("ANKITA_CRASH_KILLS", "8"))
BATCH = 25

# The child prints one ACK line after each call returns (each write committed by then).
SINGLE = """
import sys
from ankita import Memory
path, start = sys.argv[1], int(sys.argv[2])
with Memory(path, embedder="none") as memory:
    for i in range(start, start + 100000):
        r = memory.remember(f"k{i}x w{i}y z{i}q", kind="note")  # no shared words: fast
        print("ACK", i, r.fact.id, r.event_id, flush=True)
"""

BULK = """
import sys
from ankita import Memory
path, start, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [{"text": f"r{i}x p{i}y s{i}q"} for i in range(start, start + 5000)]
with Memory(path, embedder="none") as memory:
    memory.import_rows(rows, batch_size=batch,
                       progress=lambda done, total: print("ACK", done, flush=True))
"""


def run_and_kill(script, args, rng):
    """Start the child, let it write for a random while, SIGKILL it, return its ACK lines."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + rng.uniform(0.6, 2.0)  # start-up takes about half a second
    lines = []
    assert child.stdout is not None
    os.set_blocking(child.stdout.fileno(), False)
    while time.monotonic() < deadline:
        chunk = child.stdout.readline()
        if chunk:
            lines.append(chunk)
        else:
            time.sleep(0.001)
    child.send_signal(signal.SIGKILL)
    child.wait()
    os.set_blocking(child.stdout.fileno(), True)
    lines += child.stdout.readlines()  # ACKs printed before the kill, still in the pipe
    child.stdout.close()
    # A non-blocking read may return part of a line, the rest coming with the next read: join
    # before splitting, or an ACK cut in two is lost and the writes look unacknowledged.
    whole = "".join(lines).splitlines(keepends=True)
    return [line.split() for line in whole if line.startswith("ACK") and line.endswith("\n")]


@pytest.mark.slow
def test_single_writes_survive_sigkill(tmp_path):
    rng = random.Random(7)
    path = tmp_path / "crash.db"
    acked: dict[str, int] = {}
    start = 0
    for _ in range(KILLS):
        for _, i, fact_id, event_id in run_and_kill(SINGLE, [path, start], rng):
            acked[fact_id] = int(event_id)
            start = max(start, int(i) + 1)
        with Memory(path, embedder="none") as memory:
            report = memory.doctor()
            assert report["ok"], report["problems"]
            stored = {f.id for f in memory.list()}
            assert set(acked) <= stored, "an acknowledged write was lost"
            for fact_id, event_id in acked.items():
                assert memory.store.event("default", event_id).fact_id == fact_id
            # A write cut off by the kill is all there or not at all: its fact has its event.
            assert all(memory.history(fid) for fid in stored)
            start = max(start, len(stored))
    assert len(acked) > KILLS, "the child never got to write"


@pytest.mark.slow
def test_bulk_import_survives_sigkill_a_whole_batch_at_a_time(tmp_path):
    rng = random.Random(11)
    path = tmp_path / "bulk.db"
    start = 0
    for _ in range(KILLS):
        acks = run_and_kill(BULK, [path, start, BATCH], rng)
        acked = int(acks[-1][1]) if acks else 0
        with Memory(path, embedder="none") as memory:
            report = memory.doctor()
            assert report["ok"], report["problems"]
            texts = {f.text for f in memory.list()}
            for i in range(start, start + acked):
                assert f"r{i}x p{i}y s{i}q" in texts
            written = sum(1 for i in range(start, start + 5000) if f"r{i}x p{i}y s{i}q" in texts)
            # Batches commit whole: the kill may cost the batch in flight, never half of one.
            assert written % BATCH == 0 and acked <= written <= acked + BATCH
            start += written
    assert start > 0, "the child never got to write"
