"""A fake Discord on 127.0.0.1: the REST routes discord.py calls at login and to send
(`/users/@me`, `/oauth2/applications/@me`, `/channels/{id}/messages`, `/channels/{id}/typing`,
with injected failures) and a gateway websocket that follows the protocol: HELLO, then READY
after IDENTIFY, heartbeats acknowledged, and MESSAGE_CREATE dispatches with sequence numbers.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from aiohttp import WSMsgType, web

from aioserver import AioServer

TOKEN = "MTAwMQ.fake.discord-secret-token-value"
BOT = {
    "id": "1001",
    "username": "ankita",
    "discriminator": "0",
    "avatar": None,
    "global_name": None,
    "bot": True,
}


def _user(user_id: str) -> dict[str, Any]:
    return {
        "id": user_id,
        "username": f"user{user_id}",
        "discriminator": "0",
        "avatar": None,
        "global_name": None,
    }


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # Exactly "application/json", as Discord sends it: discord.py parses nothing else.
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


class FakeDiscord:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.typing: list[str] = []
        self.identified: list[dict[str, Any]] = []
        self.failures: list[tuple[int, dict[str, Any], dict[str, str]]] = []
        self.sockets: list[web.WebSocketResponse] = []
        self.sequence = 1
        self.next_id = 5000
        self.ready = threading.Event()
        self.changed = threading.Condition()
        self.server = AioServer(self._app())
        self.port = self.server.port
        self.api = f"http://127.0.0.1:{self.port}/api/v10"
        self.gateway = f"ws://127.0.0.1:{self.port}/gateway"

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_post("/api/v10/channels/{channel}/messages", self._send)
        app.router.add_post("/api/v10/channels/{channel}/typing", self._typing)
        app.router.add_get("/gateway", self._gateway)
        return app

    # -- REST -----------------------------------------------------------------------------

    def _authorised(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {TOKEN}"

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        return _json(BOT)

    async def _application(self, request: web.Request) -> web.Response:
        return _json(
            {
                "id": BOT["id"],
                "name": "ankita",
                "description": "",
                "icon": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": _user("1"),
                "verify_key": "00",
                "flags": 0,
                "interactions_endpoint_url": None,
            }
        )

    async def _send(self, request: web.Request) -> web.Response:
        if self.failures:
            status, body, headers = self.failures.pop(0)
            return _json(body, status=status, headers=headers)
        body = await request.json()
        with self.changed:
            # Discord's `enforce_nonce`: a second message with a nonce seen in the last few
            # minutes gets the first message back, and nothing new is created.
            nonce = body.get("nonce")
            if body.get("enforce_nonce") and nonce is not None:
                first = next((m for m in self.sent if m.get("nonce") == str(nonce)), None)
                if first is not None:
                    return _json(first)
            self.next_id += 1
            message = self._message(
                str(self.next_id), request.match_info["channel"], BOT, body["content"]
            )
            if nonce is not None:
                message["nonce"] = str(nonce)
            self.sent.append(message)
            self.changed.notify_all()
        return _json(message)

    async def _typing(self, request: web.Request) -> web.Response:
        self.typing.append(request.match_info["channel"])
        return web.Response(status=204)

    # -- gateway --------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                continue
            data = json.loads(frame.data)
            if data["op"] == 1:  # heartbeat
                await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
            elif data["op"] == 2:  # identify
                self.identified.append(data["d"])
                await ws.send_json(
                    {
                        "op": 0,
                        "t": "READY",
                        "s": self._next(),
                        "d": {
                            "v": 10,
                            "user": BOT,
                            "guilds": [],
                            "session_id": "session-1",
                            "resume_gateway_url": f"ws://127.0.0.1:{self.port}/gateway",
                            "application": {"id": BOT["id"], "flags": 0},
                            "private_channels": [],
                        },
                    }
                )
                self.ready.set()
        return ws

    def _next(self) -> int:
        self.sequence += 1
        return self.sequence

    def _message(
        self,
        message_id: str,
        channel: str,
        author: dict[str, Any],
        content: str,
        mentions: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": message_id,
            "channel_id": channel,
            "author": author,
            "content": content,
            "timestamp": "2026-11-30T09:00:00.000000+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": mentions or [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": [],
        }

    def say(
        self,
        user_id: str,
        content: str,
        channel: str | None = None,
        guild: str | None = None,
        mention_bot: bool = False,
    ) -> str:
        """A user writes: a direct message, or in a guild channel. The message's id."""
        self.ready.wait(10)
        self.next_id += 1
        message = self._message(
            str(self.next_id),
            channel or f"9{user_id}",
            _user(user_id),
            content,
            [BOT] if mention_bot else [],
        )
        if guild:
            message["guild_id"] = guild
        event = {"op": 0, "t": "MESSAGE_CREATE", "s": self._next(), "d": message}
        self.server.call(self.sockets[-1].send_json(event))
        return message["id"]

    # -- what tests do --------------------------------------------------------------------

    def fail(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self.failures.append((status, body, headers or {}))

    def wait_sent(self, count: int, timeout: float = 15.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.sent) < count and time.monotonic() < deadline:
                self.changed.wait(0.1)
            return list(self.sent)

    def stop(self) -> None:
        self.server.stop(self.sockets)
