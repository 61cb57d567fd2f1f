"""Several processes write one store at once: nothing acknowledged is lost, no duplicates, valid
links. ANKITA_STRESS_PROCS and ANKITA_STRESS_OPS make the run bigger (the closing-note figures
come from `ANKITA_STRESS_PROCS=8 ANKITA_STRESS_OPS=400`)."""

import itertools
import json
import multiprocessing
import os
import random
import time

import pytest

from ankita import AnkitaError, Memory, StoreError
from ankita.analysis._decision import MERGE, compare_texts

PROCS = int(os.environ.get("ANKITA_STRESS_PROCS", "4"))
OPS = int(os.environ.get("ANKITA_STRESS_OPS", "120"))

# Shared facts, their exact duplicates, paraphrases that merge, and ones that conflict.
PHRASES = [
    "I live in Berlin",
    "I live in Munich",
    "I live in Berlin",
    "I don't live in Berlin",
    "I use Postgres",
    "I use Postgres",
    "Database is Postgres",
    "I switched from Postgres to SQLite",
    "I love jazz",
    "I hate jazz",
    "I love jazz",
    "I'm 28 years old",
    "I'm 35 years old",
    "I prefer tabs over spaces",
    "I prefer spaces over tabs",
    "My sister lives in Lyon",
    "My sister lives in Paris",
    "I drink green tea every morning",
    "I drink coffee every morning",
    "My cat is called Miso",
    "My cat is called Tofu",
    "I work at Acme",
    "I work at Globex",
    "I run on Sundays",
    "I run on Mondays",
]


def worker(path, seed, ops, log_path, barrier):
    """Random remembers, forgets and resolves; every acknowledged write is logged, flushed."""
    rng = random.Random(seed)
    mine: list[str] = []
    with (
        Memory(path, embedder="none", user="shared") as memory,
        open(log_path, "w", encoding="utf-8") as log,
    ):
        barrier.wait(120)  # every process is up before the first write: a real race
        log.write(json.dumps({"op": "start", "t": time.monotonic()}) + "\n")
        for _ in range(ops):
            roll = rng.random()
            try:
                if roll < 0.7:
                    text = rng.choice(PHRASES)
                    result = memory.remember(text, kind=rng.choice(["fact", "fact", "tool"]))
                    if result.action != "merged":
                        mine.append(result.fact.id)
                    entry = {
                        "op": "remember",
                        "text": text,
                        "action": result.action,
                        "fact": result.fact.id,
                        "event": result.event_id,
                    }
                elif roll < 0.85 and mine:
                    fact = memory.forget(mine.pop(rng.randrange(len(mine))))
                    entry = {"op": "forget", "fact": fact.id}
                else:
                    pairs = memory.conflicts()
                    if not pairs:
                        continue
                    pair = rng.choice(pairs)
                    kept = memory.resolve(keep=pair.a.id, over=pair.b.id)
                    entry = {"op": "resolve", "fact": kept.id, "over": pair.b.id}
            except StoreError:
                raise  # a busy store must be waited for, never reported as a failed write
            except AnkitaError as exc:
                # Another process got there first (forgot or resolved it): a clean refusal.
                entry = {"op": "refused", "error": type(exc).__name__}
            log.write(json.dumps(entry) + "\n")
            log.flush()
        log.write(json.dumps({"op": "end", "t": time.monotonic()}) + "\n")


@pytest.mark.slow
def test_processes_writing_one_store_lose_nothing(tmp_path, db):
    path = db  # a SQLite file, or a PostgreSQL schema: the same guarantees on both
    Memory(path, embedder="none").close()  # create the schema once, before the race
    context = multiprocessing.get_context("spawn")
    logs = [tmp_path / f"worker{i}.jsonl" for i in range(PROCS)]
    barrier = context.Barrier(PROCS)
    procs = [
        context.Process(target=worker, args=(path, i, OPS, str(logs[i]), barrier))
        for i in range(PROCS)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(600)
    assert [p.exitcode for p in procs] == [0] * PROCS, "a writer failed (see its traceback)"

    entries = [json.loads(line) for log in logs for line in log.read_text().splitlines()]
    remembered = [e for e in entries if e["op"] == "remember"]
    starts = [e["t"] for e in entries if e["op"] == "start"]
    ends = [e["t"] for e in entries if e["op"] == "end"]
    assert max(starts) < min(ends), "the writers never overlapped"
    with Memory(path, embedder="none", user="shared") as memory:
        report = memory.doctor()
        assert report["ok"], report["problems"]
        facts = {f.id: f for f in memory.list(include_superseded=True)}
        forgotten = {e["fact"] for e in entries if e["op"] == "forget"}
        for entry in remembered:
            # The write's own event stands, on the fact it named; that fact is there, or a
            # forget acknowledged later removed it.
            event = memory.store.event("shared", entry["event"])
            assert event is not None and event.fact_id == entry["fact"], entry
            assert event.undone_by is None
            if entry["action"] == "merged":
                assert event.type == "merge" and event.data["phrasing"] == entry["text"]
            else:
                assert event.type == "create" and event.data["text"] == entry["text"]
            assert entry["fact"] in facts or entry["fact"] in forgotten, entry
        # Each acknowledged write is exactly one event: nothing duplicated.
        assert len({e["event"] for e in remembered}) == len(remembered)
        for fact in facts.values():
            assert fact.mentions == 1 + sum(
                1 for e in remembered if e["fact"] == fact.id and e["action"] == "merged"
            )
        # No two active facts that the store's own rule would have merged.
        active = [f for f in facts.values() if f.status == "active"]
        for old, new in itertools.combinations(sorted(active, key=lambda f: f.created_at), 2):
            decision = compare_texts(
                new.text, new.kind, old.text, old.kind, memory.settings, None, None
            )
            assert decision.action != MERGE, (old.text, new.text, decision.reason)
