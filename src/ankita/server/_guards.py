"""What stands before the routes: API tokens (only their hash is stored), the request body
limit, the guard that refuses a browser's cross-site writes, and what counts as loopback."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import secrets
from datetime import datetime, timezone
from typing import Any

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from ankita._validate import validate_user
from ankita.store._sql import SQLStore

MAX_BODY = 64 * 1024
BODY_TIMEOUT_S = 10.0  # the longest pause inside a request's body


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(store: SQLStore, user: str, label: str | None = None) -> str:
    """A new token for `user`; only its hash is stored, so this is the one time it is seen."""
    validate_user(user)
    token = "ank_" + secrets.token_urlsafe(32)
    with store.transaction():
        store.add_token(
            hash_token(token), user, label, datetime.now(timezone.utc).isoformat(timespec="seconds")
        )
    return token


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BodyLimit:
    """Read a request's body whole before any route runs: over `limit` bytes it is refused
    with 413, declared or streamed (a chunked body has no length to read first), and a body
    that stalls for `timeout` seconds with 408."""

    def __init__(
        self, app: ASGIApp, limit: int = MAX_BODY, timeout: float = BODY_TIMEOUT_S
    ) -> None:
        self.app, self.limit, self.timeout = app, limit, timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _refuse(scope, receive, send, 413, "too_large", self._too_large())
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), self.timeout)
            except asyncio.TimeoutError:
                stalled = f"the request body stalled for {self.timeout:g} s"
                await _refuse(scope, receive, send, 408, "timeout", stalled)
                return
            if message["type"] != "http.request":
                return  # the client went away before its body was whole
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.limit:
                await _refuse(scope, receive, send, 413, "too_large", self._too_large())
                return
            if not message.get("more_body"):
                break
        whole: list[Message] = [{"type": "http.request", "body": b"".join(chunks)}]

        async def replay() -> Message:
            # The body once, whole; then what the client sends next (its disconnect).
            return whole.pop() if whole else await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"request body over {self.limit} bytes"


_CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _host_name(netloc: str) -> str:
    """'127.0.0.1:8765' -> '127.0.0.1', '[::1]:80' -> '::1', 'Evil.Example.' -> 'evil.example'."""
    if netloc.startswith("["):
        return netloc[1:].partition("]")[0]
    return netloc.rpartition(":")[0] if netloc.count(":") == 1 else netloc


class BrowserGuard:
    """What a web page in the user's browser could do to a server on loopback, refused:
    a state-changing request from another origin (cross-site request forgery), a body that is
    not JSON (a form post needs no preflight), and, while no token is required, a `Host` that is
    not a loopback name (DNS rebinding: evil.example resolving to 127.0.0.1)."""

    def __init__(self, app: ASGIApp, state: Any) -> None:
        self.app, self.state = app, state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        problem = self.refusal(scope["method"], headers)
        if problem:
            status, code, message = problem
            await JSONResponse({"error": {"code": code, "message": message}}, status)(
                scope, receive, send
            )
            return
        await self.app(scope, receive, send)

    def refusal(self, method: str, headers: dict[str, str]) -> tuple[int, str, str] | None:
        host = headers.get("host", "")
        if self.state.anonymous and not is_loopback(_host_name(host).rstrip(".").lower()):
            return (
                421,
                "wrong_host",
                f"Host {host!r} is not a loopback name; without tokens "
                "this server answers only requests addressed to 127.0.0.1 or localhost",
            )
        if method not in _CHANGES:
            return None
        origin = headers.get("origin")
        if origin is not None and origin.partition("://")[2] != host:
            return (
                403,
                "cross_origin",
                f"a request from {origin!r} may not change this "
                "memory: only pages served by this server, or clients that send no Origin",
            )
        has_body = (
            headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers
        )
        kind = headers.get("content-type", "").partition(";")[0].strip().lower()
        if has_body and not (kind == "application/json" or kind.endswith("+json")):
            return (
                415,
                "not_json",
                f"the body must be JSON (Content-Type application/json), not {kind or 'untyped'}",
            )
        return None


async def _refuse(
    scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
) -> None:
    response = JSONResponse({"error": {"code": code, "message": message}}, status)
    await response(scope, receive, send)


class TimedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for each request's head: a client that
    trickles header lines (or opens a connection and says nothing) is closed after
    HEAD_TIMEOUT_S instead of holding a connection for as long as it likes."""

    HEAD_TIMEOUT_S = 10.0  # a request's line and headers, from connection (or last response) on

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._head_deadline()

    def _head_deadline(self) -> None:
        waiting_for = self.scope  # replaced when the next request's head is whole
        self.loop.call_later(self.HEAD_TIMEOUT_S, self._head_late, waiting_for)

    def _head_late(self, waiting_for: object) -> None:
        if self.scope is waiting_for and not self.transport.is_closing():
            self.transport.close()
