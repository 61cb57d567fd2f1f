"""Writes in bulk: batches embedded one ahead and written one transaction each, exactly as one
`remember` each."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from ankita._errors import EmbedderError
from ankita._models import WriteResult
from ankita._validate import check_write
from ankita._write import NewFact, Writer
from ankita.analysis._text import sentences

IMPORT_BATCH = 256  # facts embedded in one call and written in one transaction
Row = tuple[str, str, bool, str | None]  # text, kind, pinned, source; validated


@contextmanager
def _collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off for one import batch, then back as it was."""
    # A batch leaves thousands of analysed texts in the text caches; a collection every few
    # hundred of them would traverse every cached entry again (docs/index.md).
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def write_rows(
    writer: Writer,
    rows: list[dict[str, Any]],
    batch_size: int = IMPORT_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[WriteResult]:
    """Rows ({"text", "kind"?, "pinned"?, "source"?}) written in order, one batch of results
    at a time, so a large import need not hold every result. Validates every row before it
    returns (not when first iterated)."""
    checked = [
        (
            *check_write(
                r.get("text"), r.get("kind") or "fact", r.get("pinned", False), r.get("source")
            ),
            r.get("pinned", False),
            r.get("source"),
        )
        for r in rows
    ]
    batches = [checked[at : at + batch_size] for at in range(0, len(checked), batch_size)]
    return _write_batches(writer, batches, len(checked), progress)


def _write_batches(
    writer: Writer,
    batches: list[list[Row]],
    total: int,
    progress: Callable[[int, int], None] | None,
) -> Iterator[WriteResult]:
    done = 0
    model = writer.embedder.model_id if writer.embedder is not None else None
    if writer.multilingual is not None:
        writer.multilingual.in_use(writer.store)  # read here: the pool's thread may not
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = pool.submit(_embed_rows, writer, batches[0]) if batches else None
        for number, batch in enumerate(batches):
            assert ahead is not None
            vectors, parts, error, across = ahead.result()
            # The next batch is embedded while this one is written: the model or the network
            # call releases the GIL, and a vector does not depend on the store.
            ahead = (
                pool.submit(_embed_rows, writer, batches[number + 1])
                if number + 1 < len(batches)
                else None
            )
            results = []
            with _collection_paused(), writer.store.transaction(writer.user):
                if model:
                    # Scored several at a time in one pass over the vectors held in memory.
                    writer.search.plan(
                        writer.store,
                        model,
                        [[v, *x] for v, x in zip(vectors, parts, strict=True) if v is not None],
                    )
                try:
                    for (text, kind, pinned, source), vector, extra, other in zip(
                        batch, vectors, parts, across, strict=True
                    ):
                        new = NewFact(text, kind, pinned, source, vector, extra, error, other)
                        results.append(writer.write(new))
                finally:
                    if model:
                        writer.search.plan(writer.store, model, [])
            done += len(results)
            if progress is not None:
                progress(done, total)
            # Yielded after the commit: a caller that stops early leaves no transaction open.
            yield from results


def _embed_rows(
    writer: Writer, batch: Sequence[Row]
) -> tuple[list[list[float] | None], list[list[list[float]]], str | None, list[list[float] | None]]:
    """(vector of each text, its sentences' vectors, the embedder's error, each text's
    multilingual vector) for one batch, in one call: each text, then its sentences."""
    vectors: list[list[float] | None] = [None] * len(batch)
    parts: list[list[list[float]]] = [[] for _ in batch]
    across = writer.embed_across([t for t, *_ in batch], elsewhere=True)
    if writer.embedder is None:
        return vectors, parts, None, across
    spans = [[t, *sentences(t)] for t, *_ in batch]
    try:
        flat = writer.embedder.embed_checked([x for span in spans for x in span])
    except EmbedderError as exc:
        return vectors, parts, str(exc), across
    at = 0
    for i, span in enumerate(spans):
        vectors[i], parts[i] = flat[at], flat[at + 1 : at + len(span)]
        at += len(span)
    return vectors, parts, None, across
