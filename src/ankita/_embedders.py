"""The embedder seam: one required method, a registry, and `auto` selection (SPEC §8).

This release ships `none` only; providers register themselves with `register()`.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from ._errors import ConfigError


class Embedder(ABC):
    """Turns texts into vectors. Subclasses implement `embed_batch` and set `model_id`."""

    model_id: str = ""

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""

    def embed_checked(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed_batch`, with garbage (wrong count, ragged, NaN, zero vectors) refused."""
        vectors = self.embed_batch(list(texts))
        if len(vectors) != len(texts):
            raise ValueError(f"{self.model_id}: {len(vectors)} vectors for {len(texts)} texts")
        dims = {len(v) for v in vectors}
        if len(dims) > 1 or 0 in dims:
            raise ValueError(f"{self.model_id}: vectors of uneven or zero length")
        for v in vectors:
            if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in v):
                raise ValueError(f"{self.model_id}: vector holds non-numbers")
            if not any(v):
                raise ValueError(f"{self.model_id}: zero vector")
        return [[float(x) for x in v] for v in vectors]


_REGISTRY: dict[str, Callable[[], Embedder | None]] = {"none": lambda: None}


def register(name: str, factory: Callable[[], Embedder | None]) -> None:
    """Make an embedder available by name (`Memory(embedder=name)`, `--embedder name`)."""
    _REGISTRY[name] = factory


def available() -> list[str]:
    return sorted(_REGISTRY)


def resolve_embedder(choice: str | Embedder | None) -> Embedder | None:
    """An instance passes through; a name is looked up; `auto` picks as SPEC §8 says."""
    if isinstance(choice, Embedder):
        return choice
    name = choice if choice is not None else os.environ.get("ANKITA_EMBEDDER", "auto")
    if not isinstance(name, str):
        raise ConfigError(f"embedder must be a name or an Embedder, got {type(name).__name__}")
    name = name.strip().lower() or "auto"
    if name == "auto":
        # SPEC §8 order; this release has no remote provider or bundled model yet, so
        # `auto` takes `local` when one is registered and falls back to lexical-only.
        if "local" in _REGISTRY:
            return _REGISTRY["local"]()
        return None
    if name not in _REGISTRY:
        raise ConfigError(f"unknown or unavailable embedder {name!r}; available: "
                          f"{', '.join(available())}")
    return _REGISTRY[name]()
