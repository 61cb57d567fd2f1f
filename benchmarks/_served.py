"""`ankita serve` as a child process on a free loopback port, for the benchmarks that drive it
over HTTP (serve_load.py, review_page.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(db: str, embedder: str = "none") -> tuple[subprocess.Popen[bytes], str]:
    """The server on `db`, once it answers /healthz, and its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "ankita", "--db", db, "--embedder", embedder]
    server = subprocess.Popen([*command, "serve", "--port", str(port)], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return server, base
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start")
