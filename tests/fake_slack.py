"""A fake Slack on 127.0.0.1: the Web API methods the adapter uses (`auth.test`,
`apps.connections.open`, `chat.postMessage` with its message metadata, `conversations.history`,
with injected failures such as a 429 with Retry-After or `channel_not_found`) and a Socket Mode
websocket that sends `hello`, delivers event envelopes and records every acknowledgement, with
the moment it came.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from aioserver import AioServer

BOT_TOKEN = "xoxb-1111-2222-secretbotvalue"
APP_TOKEN = "xapp-1-A1-3333-secretappvalue"
BOT_USER = "UBOT1"


class FakeSlack:
    def __init__(self) -> None:
        self.posted: list[dict[str, Any]] = []
        self.acks: dict[str, float] = {}  # envelope id -> when acknowledged
        self.failures: dict[str, list[tuple[int, dict[str, Any], dict[str, str]]]] = {}
        self.sockets: list[web.WebSocketResponse] = []
        self.connected = threading.Event()
        self.changed = threading.Condition()
        self.server = AioServer(self._app())
        self.port = self.server.port
        self.url = f"http://127.0.0.1:{self.port}/api/"

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_get("/link", self._socket)
        return app

    # -- Web API --------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        raw = await request.read()
        if request.method == "GET":
            form: dict[str, Any] = dict(request.query)
        elif request.content_type == "application/json":
            form = json.loads(raw) if raw else {}
        else:
            form = dict(await request.post())
        queued = self.failures.get(method)
        if queued:
            status, body, headers = queued.pop(0)
            return web.json_response(body, status=status, headers=headers)
        if method == "apps.connections.open":
            if token != APP_TOKEN:
                return web.json_response({"ok": False, "error": "invalid_auth"})
            return web.json_response(
                {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link?ticket=t1"}
            )
        if token != BOT_TOKEN:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        if method == "auth.test":
            return web.json_response(
                {
                    "ok": True,
                    "url": "https://fake.slack.com/",
                    "team": "Fake Team",
                    "user": "ankita",
                    "team_id": "T1",
                    "user_id": BOT_USER,
                    "bot_id": "B1",
                }
            )
        if method == "conversations.history":
            # Newest first, as Slack answers; metadata only when asked for.
            with_metadata = form.get("include_all_metadata") in ("1", "true", True)
            messages = [
                {
                    "type": "message",
                    "user": BOT_USER,
                    "text": m["text"],
                    "ts": m["ts"],
                    **({"metadata": m["metadata"]} if with_metadata and m["metadata"] else {}),
                }
                for m in reversed(self.posted)
                if m["channel"] == form["channel"]
            ][: int(form.get("limit", 100))]
            return web.json_response({"ok": True, "messages": messages, "has_more": False})
        if method == "chat.postMessage":
            with self.changed:
                ts = f"{time.time():.6f}"
                self.posted.append(
                    {
                        "channel": form["channel"],
                        "text": form["text"],
                        "ts": ts,
                        "metadata": form.get("metadata"),
                    }
                )
                self.changed.notify_all()
            return web.json_response(
                {
                    "ok": True,
                    "channel": form["channel"],
                    "ts": ts,
                    "message": {"text": form["text"], "ts": ts},
                }
            )
        return web.json_response({"ok": False, "error": "unknown_method"}, status=404)

    # -- Socket Mode ----------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "connection_info": {"app_id": "A1"},
                "debug_info": {"host": "fake", "approximate_connection_time": 3600},
            }
        )
        self.connected.set()
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                if "envelope_id" in data:
                    with self.changed:
                        self.acks[data["envelope_id"]] = time.monotonic()
                        self.changed.notify_all()
        return ws

    def deliver(self, event: dict[str, Any], event_id: str | None = None, retry: int = 0) -> str:
        """Slack delivers an event over the socket: the envelope id."""
        envelope = str(uuid.uuid4())
        payload = {
            "token": "verification",
            "team_id": "T1",
            "api_app_id": "A1",
            "event": {"event_ts": event.get("ts", "1"), **event},
            "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:8]}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": "T1", "user_id": BOT_USER, "is_bot": True}],
        }
        body = {
            "envelope_id": envelope,
            "type": "events_api",
            "payload": payload,
            "accepts_response_payload": False,
            "retry_attempt": retry,
            "retry_reason": "timeout" if retry else "",
        }
        self.connected.wait(10)
        self.server.call(self.sockets[-1].send_json(body))
        return envelope

    def dm(self, user: str, text: str, event_id: str | None = None, retry: int = 0) -> str:
        return self.deliver(
            {
                "type": "message",
                "channel": f"D{user}",
                "channel_type": "im",
                "user": user,
                "text": text,
                "ts": f"{time.time():.6f}",
            },
            event_id,
            retry,
        )

    # -- what tests do --------------------------------------------------------------------

    def fail(
        self, method: str, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self.failures.setdefault(method, []).append((status, body, headers or {}))

    def wait(self, predicate: Any, timeout: float = 15.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate() and time.monotonic() < deadline:
                self.changed.wait(0.1)  # the predicate may watch something else than this fake
            return bool(predicate())

    def stop(self) -> None:
        self.server.stop(self.sockets)
