"""The review page at `/`: three static files that read and write only through the /v1 API.

The page needs no authentication itself (it holds no data); every request it makes carries the
token the user typed, kept in the browser's session storage.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from fastapi import FastAPI
from fastapi.responses import Response

# The page loads nothing from anywhere but this server, and nothing may frame it.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/review.js": ("review.js", "text/javascript; charset=utf-8"),
    "/review.css": ("review.css", "text/css; charset=utf-8"),
}


def _read(name: str) -> bytes:
    return resources.files("ankita").joinpath("web").joinpath(name).read_bytes()


def _endpoint(body: bytes, media_type: str) -> Callable[[], Response]:
    # A factory, so each route keeps its own file and FastAPI sees no parameters.
    def serve() -> Response:
        return Response(body, media_type=media_type, headers=HEADERS)

    return serve


def add_review_page(app: FastAPI) -> None:
    """Serve the page's files; they are read once, at start-up."""
    for route, (name, media_type) in FILES.items():
        app.add_api_route(
            route, _endpoint(_read(name), media_type), methods=["GET"], include_in_schema=False
        )
