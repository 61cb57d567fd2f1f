"""Sustained remember+recall requests/s against `ankita serve` on loopback.

Starts the server as a child process on a free port (its own store, one token per client
user), then runs N client threads, each alternating POST /v1/facts and POST /v1/recall for a
fixed time. Prints JSON: requests/s, latency percentiles, the error count, and `lost`: writes
the server acknowledged whose fact or history event is missing from the store once the server
has stopped (both must be 0).

    python benchmarks/serve_load.py [--clients 8] [--seconds 20] [--embedder none|local]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _served import serve

WORDS = [
    "Postgres",
    "Berlin",
    "jazz",
    "Rust",
    "tea",
    "Lyon",
    "Neovim",
    "climbing",
    "Kyoto",
    "dark mode",
    "Spotify",
    "a ThinkPad",
    "the gym",
    "sourdough",
    "chess",
    "Lisbon",
]
VERBS = ["I use", "I like", "I live near", "My sister loves", "I visit", "My team picked"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--embedder", default="none")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="ankita-load-")
    db = str(Path(folder) / "load.db")
    tokens = []
    for i in range(args.clients):
        out = subprocess.run(
            [sys.executable, "-m", "ankita", "--db", db, "token", "create", "--user", f"user{i}"],
            capture_output=True,
            text=True,
            check=True,
        )
        tokens.append(out.stdout.strip())
    server, base = serve(db, args.embedder)
    latencies: list[float] = []
    errors: list[str] = []
    acknowledged: list[tuple[int, str, int]] = []  # (client, fact id, event id)
    lock = threading.Lock()
    stop = time.perf_counter() + args.seconds

    def client(i: int) -> None:
        rng = random.Random(i)
        with httpx.Client(
            base_url=base, timeout=30, headers={"Authorization": f"Bearer {tokens[i]}"}
        ) as http:
            while time.perf_counter() < stop:
                text = f"{rng.choice(VERBS)} {rng.choice(WORDS)} since {rng.randint(1990, 2026)}"
                for method, path, body in (
                    ("POST", "/v1/facts", {"text": text}),
                    ("POST", "/v1/recall", {"query": rng.choice(WORDS)}),
                ):
                    start = time.perf_counter()
                    try:
                        response = http.request(method, path, json=body)
                        ok = response.status_code == 200
                        detail = response.text[:200]
                        if ok and path == "/v1/facts":
                            result = response.json()
                            with lock:
                                acknowledged.append((i, result["fact"]["id"], result["event_id"]))
                    except httpx.HTTPError as exc:
                        ok, detail = False, repr(exc)
                    elapsed = (time.perf_counter() - start) * 1000
                    with lock:
                        latencies.append(elapsed)
                        if not ok:
                            errors.append(detail)

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    server.terminate()
    server.wait(10)
    lost = count_lost(db, acknowledged)
    latencies.sort()
    print(
        json.dumps(
            {
                "clients": args.clients,
                "seconds": round(wall, 1),
                "embedder": args.embedder,
                "requests": len(latencies),
                "requests_per_s": round(len(latencies) / wall, 1),
                "p50_ms": round(statistics.median(latencies), 1),
                "p95_ms": round(latencies[int(len(latencies) * 0.95)], 1),
                "errors": len(errors),
                "first_errors": errors[:3],
                "acknowledged_writes": len(acknowledged),
                "lost": lost,
            },
            indent=2,
        )
    )


def count_lost(db: str, acknowledged: list[tuple[int, str, int]]) -> int:
    """Acknowledged writes whose fact or event the stopped server's store does not hold."""
    from ankita import Memory

    lost = 0
    for client in sorted({c for c, _, _ in acknowledged}):
        memory = Memory(db, user=f"user{client}", embedder="none")
        try:
            ids = {f.id for f in memory.list(include_superseded=True)}
            for c, fact, event in acknowledged:
                if c == client and (
                    fact not in ids or event not in {e.id for e in memory.history(fact)}
                ):
                    lost += 1
        finally:
            memory.close()
    return lost


if __name__ == "__main__":
    main()
