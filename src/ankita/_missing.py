"""Vectors as stored, and embedding the facts that lack one from a model: what `reindex` does
for the English model and the backfill for the multilingual one."""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ankita._errors import EmbedderError
from ankita.analysis._similarity import cosine
from ankita.embed._base import Embedder
from ankita.store._sql import SQLStore


def pack_vector(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def dimension_error(store: SQLStore, model: str, vectors: Sequence[list[float]]) -> str | None:
    """Why these vectors cannot be stored, if a provider changed its dimension under the same
    model id; else None."""
    known = store.vector_dim(model)
    for vector in vectors:
        if known is not None and len(vector) != known:
            return f"{model}: {len(vector)} dimensions, but this store holds {known} for that model"
    return None


def embed_missing(
    store: SQLStore,
    user: str,
    embedder: Embedder,
    batch_size: int,
    progress: Callable[[int, int], None] | None,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Embed every fact of `user` that has no vector from `embedder`'s model.

    Embedding happens outside the write lock, batch by batch, each batch stored in one short
    transaction; a fact whose text changed or that was forgotten meanwhile is skipped, so a
    vector never belongs to the wrong text. Resumable: a run stopped (`stop`) keeps what it
    stored, and the next one goes on."""
    model = embedder.model_id
    todo = store.facts_without_vector(user, model)
    done = failed = 0
    errors: list[str] = []
    for start in range(0, len(todo), batch_size):
        if stop is not None and stop.is_set():
            break
        batch = todo[start : start + batch_size]
        try:
            vectors = embedder.embed_checked([text for _, text in batch])
            wrong = dimension_error(store, model, vectors)
            if wrong is not None:
                raise EmbedderError(wrong)
        except EmbedderError as exc:
            failed += len(batch)
            errors.append(str(exc))
        else:
            with store.transaction(user) as tx:
                for (fact_id, text), vector in zip(batch, vectors, strict=True):
                    current = tx.get_fact(user, fact_id)
                    if current is not None and current.text == text:
                        tx.put_vector(fact_id, model, pack_vector(vector), len(vector))
                        done += 1
        if progress is not None:
            progress(min(start + batch_size, len(todo)), len(todo))
    return {
        "model": model,
        "missing": len(todo),
        "embedded": done,
        "failed": failed,
        "errors": errors[:5],
    }


def array_of(vector: Sequence[float]) -> Any:
    """A fresh vector as a float64 array, exactly as given."""
    import numpy as np

    return np.asarray(vector, dtype=np.float64)


def stored_array(blob: bytes) -> Any:
    """A stored vector as a float32 array, without a Python float per component."""
    import numpy as np

    return np.frombuffer(blob, dtype="<f4")


def cosine_with(probes: Sequence[Any], blob: bytes) -> float:
    """A stored fact's cosine with a write: the text as a whole, or one of its sentences, the
    closer one counting. Both the decision and the judge's ranking read it here, so the two
    candidate searches see one number for a pair."""
    stored = stored_array(blob)
    return max(cosine(p, stored) for p in probes)
