"""What stands before the routes: API tokens (only their hash is stored), the request body
limit, the guard that refuses a browser's cross-site writes, and what counts as loopback."""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
from datetime import datetime, timezone
from typing import Any

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ankita._validate import validate_user
from ankita.store._sql import SQLStore

MAX_BODY = 64 * 1024


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
    """Refuse request bodies over `limit` bytes with 413, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(scope, receive, send, self.limit)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge()
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(scope, receive, send, self.limit)


class _TooLarge(Exception):
    pass


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


async def _too_large(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    response = JSONResponse(
        {"error": {"code": "too_large", "message": f"request body over {limit} bytes"}}, 413
    )
    await response(scope, receive, send)
