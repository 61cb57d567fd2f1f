"""Small HTTP servers on 127.0.0.1 that speak the providers' wire formats (for tests only).

Each server answers with a deterministic vector per text (letter counts), and can be told to
misbehave: fail with a status, hang past the timeout, send bad JSON, NaN or a wrong dimension.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def vector_for(text: str, dim: int = 8) -> list[float]:
    counts = [0.01] * dim
    for i, ch in enumerate(text.lower()):
        counts[(ord(ch) + i % 2) % dim] += 1.0
    return counts


class FakeProvider:
    """One server; `kind` is "ollama", "openai" or "cloudflare"."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.mode = "ok"  # ok | 500 | 500-once | 401 | hang | badjson | nan | dim | legacy | short
        self.requests: list[dict[str, Any]] = []
        self.dim = 8
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                status, payload = outer.answer(self.path, body)
                if status == "hang":
                    time.sleep(3)
                    status, payload = 200, {}
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def vectors(self, texts: list[str]) -> list[list[float]]:
        if self.mode == "nan":
            return [[float("nan")] * self.dim for _ in texts]
        dim = self.dim + 1 if self.mode == "dim" else self.dim
        vectors = [vector_for(t, dim) for t in texts]
        return vectors[:-1] if self.mode == "short" else vectors

    def answer(self, path: str, body: dict[str, Any]) -> tuple[Any, Any]:
        if self.mode == "500-once":
            self.mode = "ok"
            return 500, {"error": "busy"}
        if self.mode in ("500", "401"):
            return int(self.mode), {"error": "no"}
        if self.mode == "hang":
            return "hang", None
        if self.mode == "badjson":
            return 200, b"{not json"
        if self.kind == "ollama":
            if path == "/api/embed":
                if self.mode == "legacy":
                    return 404, b"404 page not found"
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                return 200, {"model": body["model"], "embeddings": self.vectors(texts)}
            if path == "/api/embeddings" and self.mode == "legacy":
                return 200, {"embedding": self.vectors([body["prompt"]])[0]}
            return 404, b"404 page not found"
        if self.kind == "openai":
            if path != "/v1/embeddings":
                return 404, {"error": "not found"}
            data = [
                {"object": "embedding", "index": i, "embedding": v}
                for i, v in enumerate(self.vectors(body["input"]))
            ]
            data.reverse()  # servers may answer out of order; `index` says where each goes
            return 200, {"object": "list", "data": data, "model": body["model"]}
        # cloudflare
        texts = body["text"] if isinstance(body["text"], list) else [body["text"]]
        if len(texts) > 100:
            return 400, {"success": False, "errors": [{"message": "too many"}]}
        vectors = self.vectors(texts)
        return 200, {
            "result": {"shape": [len(vectors), self.dim], "data": vectors},
            "success": True,
            "errors": [],
            "messages": [],
        }
