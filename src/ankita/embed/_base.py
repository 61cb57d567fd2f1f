"""The embedder seam: one required method (`embed_batch`) and the checks every provider's output
passes before anything stores it."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

from ankita._errors import EmbedderError


class Embedder(ABC):
    """Turns texts into vectors. Subclasses implement `embed_batch` and set `model_id`."""

    model_id: str = ""

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""

    def embed_query_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for search queries; a model trained with its own query prefix overrides it."""
        return self.embed_batch(texts)

    def embed_checked(self, texts: Sequence[str], query: bool = False) -> list[list[float]]:
        """`embed_batch` (or `embed_query_batch`), with garbage (wrong count, ragged, NaN,
        zero vectors) refused."""
        try:
            embed = self.embed_query_batch if query else self.embed_batch
            vectors = embed(list(texts))
        except EmbedderError:
            raise
        except Exception as exc:  # any provider failure becomes one error type at the seam
            raise EmbedderError(f"{self.model_id}: {type(exc).__name__}: {exc}") from exc
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise EmbedderError(f"{self.model_id}: wrong number of vectors")
        dims = {len(v) if isinstance(v, (list, tuple)) else -1 for v in vectors}
        if len(dims) > 1 or 0 in dims or -1 in dims:
            raise EmbedderError(f"{self.model_id}: vectors of uneven or zero length")
        for v in vectors:
            if not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                for x in v
            ):
                raise EmbedderError(f"{self.model_id}: vector holds non-numbers")
            if not any(v):
                raise EmbedderError(f"{self.model_id}: zero vector")
        return [[float(x) for x in v] for v in vectors]
