"""`ankita serve`: the memory API over HTTP (FastAPI), with per-user bearer tokens.

Every route calls one `Memory` method; errors are translated in one place (`_error`). A request
acts as the user its token belongs to, never another. Without any token in the store the server
runs in single-user mode, and only on a loopback address.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Body, Depends, FastAPI, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ankita import __version__
from ankita._errors import (
    AnkitaError,
    ConfigError,
    EmbedderError,
    InvalidInput,
    JudgeError,
    NotFound,
    StoreError,
    UndoError,
)
from ankita._memory import Memory
from ankita._models import Fact
from ankita._validate import validate_user
from ankita.analysis._plain import event_words, partner_of
from ankita.embed._embedders import Embedder, resolve_embedder
from ankita.embed._judge import resolve_judge
from ankita.server._guards import (
    BODY_TIMEOUT_S,
    BodyLimit,
    BrowserGuard,
    hash_token,
    is_loopback,
)
from ankita.server._review import add_review_page
from ankita.server._users import Users
from ankita.store._open import open_store

log = logging.getLogger("ankita.server")
STATUS: list[tuple[type[AnkitaError], int]] = [
    (InvalidInput, 400),
    (NotFound, 404),
    (UndoError, 409),
    (EmbedderError, 502),
    (JudgeError, 502),
    (StoreError, 503),
    (AnkitaError, 500),
]
T = TypeVar("T")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactIn(_Strict):
    text: str = Field(description="The fact, 1-2000 characters.")
    kind: str = Field("fact", description="A lowercase slug: preference, tool, location, ...")
    pinned: bool = False
    source: str | None = Field(
        "api", description='Who wrote it (chat, user, import, ...); "api" unless given.'
    )


class RecallIn(_Strict):
    query: str
    limit: int = Field(8, ge=1, le=200)
    kinds: list[str] | None = None


class PersonaIn(_Strict):
    card: dict[str, Any] = Field(description="A Character Card V2/V3 document.")


class ResolveIn(_Strict):
    keep: str = Field(description="The id to keep: one of the two facts in the path.")


class KeepNewerIn(_Strict):
    pairs: list[tuple[str, str]] = Field(
        description="Flagged pairs [a, b] (1-1000); of each, the side said last is kept."
    )


def current_user(request: Request) -> str:
    """The user of the request's bearer token (or the default user in single-user mode)."""
    state = request.app.state
    header = request.headers.get("authorization", "")
    with state.auth_lock:
        if state.anonymous and state.auth_store.token_count() > 0:
            # Once a token exists, revoking the last one must not reopen a running server.
            state.anonymous = False
        if not header and state.anonymous:
            return str(state.default_user)  # single-user mode: loopback only
        scheme, _, token = header.partition(" ")
        user = (
            state.auth_store.token_user(hash_token(token.strip()))
            if scheme.lower() == "bearer" and token.strip()
            else None
        )
    if user is None:
        raise StarletteHTTPException(
            401, "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"}
        )
    return str(user)


UserDep = Annotated[str, Depends(current_user)]


def owner(request: Request, user: UserDep) -> str:
    """The companion's card, tasks and runs are the installation's, whose owner is the user
    the server runs as (`ankita --user NAME serve`); another user's token may not see them."""
    if user != request.app.state.default_user:
        raise StarletteHTTPException(
            403,
            "the companion's card and tasks belong to the user this server runs as, "
            "not to this token's user",
        )
    return user


OwnerDep = Annotated[str, Depends(owner)]


def create_app(
    path: str | Path,
    default_user: str = "default",
    embedder: str | Embedder | None = "auto",
    anonymous: bool = True,
    judge: str | None = None,
    body_timeout: float = BODY_TIMEOUT_S,
) -> FastAPI:
    """The ASGI app. Tokens are looked up in the same store as the facts. With `anonymous`
    (loopback only) and no token in the store, requests without a token act as
    `default_user`; once a token exists, every request needs one. A request body that
    pauses `body_timeout` seconds is answered 408."""
    path = str(path)
    validate_user(default_user)
    users = Users(path, resolve_embedder(embedder), resolve_judge(judge))
    auth_store = open_store(path)
    auth_lock = threading.Lock()
    persona_lock = threading.Lock()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        users.close()
        auth_store.close()

    # No /docs or /redoc: FastAPI's pages load their scripts from a CDN; /openapi.json stays.
    app = FastAPI(
        title="Ankita memory",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        description="Remember, merge, flag conflicts, recall. Every route under /v1 "
        "needs `Authorization: Bearer <token>` once tokens exist.",
    )
    app.state.auth_store, app.state.auth_lock = auth_store, auth_lock
    app.state.anonymous = anonymous and auth_store.token_count() == 0
    app.state.default_user, app.state.users = default_user, users
    app.add_middleware(BrowserGuard, state=app.state)
    app.add_middleware(BodyLimit, timeout=body_timeout)

    def _error(status: int, code: str, message: str) -> JSONResponse:
        return JSONResponse({"error": {"code": code, "message": message}}, status)

    @app.exception_handler(AnkitaError)
    async def ankita_error(request: Request, exc: AnkitaError) -> JSONResponse:
        status = next(s for cls, s in STATUS if isinstance(exc, cls))
        if isinstance(exc, StoreError):
            # The store's own words name its file or database URL: they stay in the log.
            log.warning("store error on %s %s: %s", request.method, request.url.path, exc)
            return _error(
                status,
                exc.code,
                "the store could not complete this request; "
                "nothing was changed (the server's log has the reason)",
            )
        return _error(status, exc.code, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        details = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        return _error(422, "invalid_request", details)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {
            400: "invalid_request",
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            405: "method_not_allowed",
        }.get(exc.status_code, "http_error")
        return JSONResponse(
            {"error": {"code": code, "message": str(exc.detail)}},
            exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, "internal_error", "internal error")  # never a stack trace

    def run(user: str, call: Callable[[Memory], T]) -> T:
        with users.memory(user) as memory:
            return call(memory)

    add_review_page(app)

    @app.get("/healthz", tags=["meta"])
    def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__}

    @app.get("/v1/persona", tags=["persona"])
    def get_persona(user: OwnerDep) -> dict[str, Any]:
        """The companion's personality card (one per installation)."""
        from ankita.companion.state import read_card

        return read_card()

    @app.put("/v1/persona", tags=["persona"])
    def put_persona(user: OwnerDep, body: PersonaIn) -> dict[str, Any]:
        """Replace the card; it is checked first, and unknown fields are kept as sent."""
        from ankita.companion.state import write_card

        with persona_lock:
            return write_card(body.card)

    def task_store() -> Any:
        from ankita.companion.state import tasks

        def read_only(job: Any) -> str:
            raise InvalidInput("the server shows tasks; `ankita tasks run` runs them")

        return tasks(read_only)

    @app.get("/v1/tasks", tags=["tasks"])
    def list_tasks(user: OwnerDep) -> list[dict[str, Any]]:
        """Scheduled tasks with their next run and last status."""
        tasks = task_store()
        try:
            return [{**job.__dict__, **state} for job, state in tasks.jobs()]
        finally:
            tasks.close()

    @app.get("/v1/tasks/runs", tags=["tasks"])
    def task_runs(
        user: OwnerDep,
        after: int = Query(0, ge=0, le=2**62),
        limit: int = Query(100, ge=1, le=1000),
    ) -> list[dict[str, Any]]:
        """Finished runs with an id above `after`: poll it to see results as they land."""
        tasks = task_store()
        try:
            return [run.to_dict() for run in tasks.runs_after(after, limit)]
        finally:
            tasks.close()

    @app.get("/v1/me", tags=["meta"])
    def me(user: UserDep) -> dict[str, Any]:
        """The user this request acts as."""
        return {"user": user}

    @app.post("/v1/facts", tags=["facts"])
    def remember(user: UserDep, body: FactIn) -> dict[str, Any]:
        return run(
            user,
            lambda m: m.remember(
                body.text, kind=body.kind, pinned=body.pinned, source=body.source
            ).to_dict(),
        )

    def with_stale(memory: Memory, fact: Fact) -> dict[str, Any]:
        return {**fact.to_dict(), "stale": memory.is_stale(fact)}

    @app.get("/v1/facts", tags=["facts"])
    def list_facts(
        user: UserDep,
        response: Response,
        kind: str | None = None,
        all: bool = Query(False, description="Include superseded facts."),
        q: str | None = Query(
            None,
            description="Keep facts whose text contains this (ASCII letters case-insensitively).",
        ),
        limit: int | None = Query(None, ge=1, le=100_000),
        offset: int = Query(0, ge=0, le=2**62),
        sort: Literal["said", "text", "kind", "status", "mentions", "confirmed", "created"] = Query(
            "said", description="Order by this."
        ),
        desc: bool = Query(False, description="Largest (or latest) first."),
        pinned_first: bool = Query(False, description="Pinned facts first."),
        only: Literal["pinned", "conflicting"] | None = Query(
            None, description="Keep only pinned or only conflicting facts."
        ),
    ) -> list[dict[str, Any]]:
        """A page of facts; `X-Total-Count` says how many match in all."""

        def page(m: Memory) -> list[dict[str, Any]]:
            response.headers["X-Total-Count"] = str(m.count(kind, all, q, only))
            return [
                with_stale(m, f)
                for f in m.list(
                    kind=kind,
                    include_superseded=all,
                    search=q,
                    limit=limit,
                    offset=offset,
                    order=sort,
                    descending=desc,
                    pinned_first=pinned_first,
                    only=only,
                )
            ]

        return run(user, page)

    @app.get("/v1/kinds", tags=["facts"])
    def kinds(
        user: UserDep, all: bool = Query(False, description="Count superseded facts.")
    ) -> dict[str, int]:
        """Every kind of the user's facts, with how many (not only those of one page)."""
        return run(user, lambda m: m.kinds(include_superseded=all))

    @app.get("/v1/facts/{fact_id}", tags=["facts"])
    def get_fact(user: UserDep, fact_id: str) -> dict[str, Any]:
        return run(user, lambda m: with_stale(m, m.get(fact_id)))

    @app.delete("/v1/facts/{fact_id}", tags=["facts"])
    def forget(user: UserDep, fact_id: str) -> dict[str, Any]:
        return run(user, lambda m: m.forget(fact_id).to_dict())

    @app.post("/v1/facts/{fact_id}/pin", tags=["facts"])
    def pin(user: UserDep, fact_id: str) -> dict[str, Any]:
        return run(user, lambda m: m.pin(fact_id).to_dict())

    @app.delete("/v1/facts/{fact_id}/pin", tags=["facts"])
    def unpin(user: UserDep, fact_id: str) -> dict[str, Any]:
        return run(user, lambda m: m.unpin(fact_id).to_dict())

    @app.get("/v1/facts/{fact_id}/history", tags=["history"])
    def history(
        user: UserDep,
        fact_id: str,
        response: Response,
        limit: int | None = Query(None, ge=1, le=10_000),
        offset: int = Query(0, ge=0, le=2**62),
        newest_first: bool = Query(False, description="The latest event first."),
    ) -> list[dict[str, Any]]:
        """The fact's events (all, or a page; `X-Total-Count` says how many), each with
        `partner` (the other fact it names, with its text) and `words` (the event told in
        plain words)."""

        def page(m: Memory) -> list[dict[str, Any]]:
            events = history_in_words(m, fact_id, limit, offset, newest_first)
            response.headers["X-Total-Count"] = str(m.history_count(fact_id))
            return events

        return run(user, page)

    @app.post("/v1/undo/{event_id}", tags=["history"])
    def undo(user: UserDep, event_id: int) -> dict[str, Any]:
        return run(user, lambda m: m.undo(event_id).to_dict())

    @app.get("/v1/conflicts", tags=["conflicts"])
    def conflicts(
        user: UserDep,
        response: Response,
        limit: int = Query(200, ge=1, le=1000),
        offset: int = Query(0, ge=0, le=2**62),
        fact: str | None = Query(None, description="Only the pairs of this fact."),
        possible: bool = Query(False, description="Possible conflicts instead of sure ones."),
    ) -> list[dict[str, Any]]:
        """A page of flagged pairs (sure conflicts, or with `possible=true` the possible
        ones, never in recall's notice), the newest flag first; `X-Total-Count` says how many
        there are in all."""

        def page(m: Memory) -> list[dict[str, Any]]:
            response.headers["X-Total-Count"] = str(m.conflict_count(fact, possible))
            return [c.to_dict() for c in m.conflicts(limit, offset, fact, possible)]

        return run(user, page)

    @app.post("/v1/conflicts/keep-newer", tags=["conflicts"])
    def keep_newer(user: UserDep, body: KeepNewerIn) -> dict[str, Any]:
        """Settle many pairs at once: of each, the side said last is kept."""
        kept = run(user, lambda m: m.keep_newer(body.pairs))
        return {"kept": [f.id for f in kept]}

    @app.post("/v1/conflicts/{a}/{b}/promote", tags=["conflicts"])
    def promote(user: UserDep, a: str, b: str) -> dict[str, Any]:
        """A possible conflict is a real one: it joins the sure ones (undoable)."""
        return run(user, lambda m: m.promote(a, b).to_dict())

    @app.delete("/v1/conflicts/{a}/{b}", tags=["conflicts"])
    def clear_conflict(user: UserDep, a: str, b: str) -> dict[str, Any]:
        run(user, lambda m: m.clear_conflict(a, b))
        return {"cleared": [a, b]}

    @app.post("/v1/conflicts/{a}/{b}/resolve", tags=["conflicts"])
    def resolve(user: UserDep, a: str, b: str, body: ResolveIn) -> dict[str, Any]:
        if body.keep not in (a, b) or a == b:
            raise InvalidInput("keep must be one of the two facts in the path")
        over = b if body.keep == a else a
        return run(user, lambda m: m.resolve(keep=body.keep, over=over).to_dict())

    @app.post("/v1/recall", tags=["recall"])
    def recall(user: UserDep, body: Annotated[RecallIn, Body()]) -> dict[str, Any]:
        return run(
            user, lambda m: m.recall(body.query, limit=body.limit, kinds=body.kinds).to_dict()
        )

    return app


def history_in_words(
    memory: Memory,
    fact_id: str,
    limit: int | None = None,
    offset: int = 0,
    newest_first: bool = False,
) -> list[dict[str, Any]]:
    """A fact's events, each with the other fact it names and a line in plain words."""
    events = memory.history(fact_id, limit, offset, newest_first)
    texts: dict[str, str] = {}
    for partner in {p for e in events if (p := partner_of(e, fact_id)) is not None}:
        try:
            texts[partner] = memory.get(partner).text
        except NotFound:
            pass  # forgotten since: the line says so
    out = []
    for event in events:
        other = partner_of(event, fact_id)
        out.append(
            {
                **event.to_dict(),
                "words": event_words(event, fact_id, texts),
                "partner": None if other is None else {"id": other, "text": texts.get(other)},
            }
        )
    return out


def check_bind(host: str, store_path: str) -> None:
    """Refuse to listen beyond loopback unless every request will need a token."""
    if is_loopback(host):
        return
    store = open_store(store_path)
    try:
        if store.token_count() == 0:
            raise ConfigError(
                f"refusing to listen on {host} without tokens: anyone on the "
                "network could read this memory. Create one with "
                "`ankita token create --user NAME`, or bind 127.0.0.1."
            )
    finally:
        store.close()
