"""A fake Telegram Bot API on 127.0.0.1: `getMe`, `getUpdates` (long polling with Telegram's
offset rule: asking from offset N confirms, and forgets, every update below N), `sendMessage`
and `sendChatAction`, with failures injected per method (429 with `retry_after`, 409 Conflict,
400 chat not found, 403 blocked).

Parameters arrive as Telegram accepts them: a form whose values are JSON, or a JSON body.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

TOKEN = "123456:TEST-token-abcdefghijklmnop"
BOT = {"id": 123456, "is_bot": True, "first_name": "Ankita", "username": "ankita_test_bot"}


class FakeTelegram:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.updates: list[dict[str, Any]] = []
        self.next_update = 1000
        self.sent: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.failures: dict[str, list[tuple[int, str, dict[str, Any]]]] = {}
        self.changed = threading.Condition()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._handle({})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                kind = self.headers.get("Content-Type", "")
                if "json" in kind:
                    params = json.loads(raw or b"{}")
                else:
                    params = {}
                    for key, values in parse_qs(raw.decode()).items():
                        try:
                            params[key] = json.loads(values[0])
                        except json.JSONDecodeError:
                            params[key] = values[0]
                self._handle(params)

            def _handle(self, params: dict[str, Any]) -> None:
                prefix, _, method = self.path.partition("/bot")[2].partition("/")
                if prefix != fake.token:
                    return self._answer(
                        401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
                    )
                status, body = fake.call(method.split("?")[0], params)
                self._answer(status, body)

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on a long poll (it is shutting down)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    # -- the Bot API ----------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.changed:
            self.calls.append((method, params))
            queued = self.failures.get(method)
            if queued:
                status, description, extra = queued.pop(0)
                return status, {
                    "ok": False,
                    "error_code": status,
                    "description": description,
                    **extra,
                }
        if method == "getMe":
            return 200, {"ok": True, "result": BOT}
        if method == "getUpdates":
            return 200, {"ok": True, "result": self._get_updates(params)}
        if method == "sendMessage":
            with self.changed:
                message = {
                    "message_id": len(self.sent) + 1,
                    "date": int(time.time()),
                    "chat": {"id": int(params["chat_id"]), "type": "private"},
                    "from": BOT,
                    "text": params["text"],
                }
                self.sent.append(message)
                self.changed.notify_all()
            return 200, {"ok": True, "result": message}
        if method == "sendChatAction":
            return 200, {"ok": True, "result": True}
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}

    def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        deadline = time.monotonic() + min(float(params.get("timeout") or 0), 2.0)
        with self.changed:
            # Asking from `offset` confirms every update below it: Telegram forgets them.
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
            while not self.updates and time.monotonic() < deadline:
                self.changed.wait(deadline - time.monotonic())
            return list(self.updates)

    # -- what tests do --------------------------------------------------------------------

    def say(
        self,
        user_id: int,
        text: str,
        chat_type: str = "private",
        chat_id: int | None = None,
        reply_to_bot: bool = False,
    ) -> int:
        """A user sends the bot a message: the update's id."""
        with self.changed:
            self.next_update += 1
            sender = {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}
            message: dict[str, Any] = {
                "message_id": self.next_update,
                "date": int(time.time()),
                "text": text,
                "chat": {"id": chat_id or user_id, "type": chat_type},
                "from": sender,
            }
            if reply_to_bot:
                message["reply_to_message"] = {
                    "message_id": 1,
                    "date": int(time.time()),
                    "chat": message["chat"],
                    "from": BOT,
                    "text": "earlier",
                }
            self.updates.append({"update_id": self.next_update, "message": message})
            self.changed.notify_all()
            return self.next_update

    def fail(self, method: str, status: int, description: str, **extra: Any) -> None:
        with self.changed:
            self.failures.setdefault(method, []).append((status, description, extra))

    def wait_sent(self, count: int, timeout: float = 15.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.sent) < count and time.monotonic() < deadline:
                self.changed.wait(deadline - time.monotonic())
            return list(self.sent)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
