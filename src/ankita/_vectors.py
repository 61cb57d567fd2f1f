"""An in-memory float32 matrix of one user's vectors for one model: exact cosine search.

Loaded lazily on first use, then caught up on every use from the store's never-reused vector
sequence, so writes by other processes are seen too. Rows of forgotten facts, or of facts whose
vector was dropped, may linger; they are harmless because candidates are always re-read from the
store. Beside each row it keeps the fact's kind and the index terms under `tags`, which a search
may require of the rows below a line (`Narrow`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._sql import SQLStore

BLOCK = 4096  # rows per block: growing adds a block and never copies the ones before


@dataclass(frozen=True)
class Narrow:
    """Rows at or above `line` all count; below it, only rows of `kind` that carry the index's
    flag or one of `tags` (or, if `every`, all rows of `kind`)."""

    line: float
    kind: str
    tags: frozenset[str]
    every: bool = False


class VectorIndex:
    def __init__(self, user: str, model: str, flag: str = "", tag_prefix: str = "",
                 block: int = BLOCK) -> None:
        self.user, self.model, self.block = user, model, block
        # Index terms kept beside the rows: one exact term as a flag, and every term under a
        # prefix as a tag.
        self.flag, self.tag_prefix = flag, tag_prefix
        self.seq = 0
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.dim: int | None = None
        self.blocks: list[Any] = []  # numpy arrays (block x dim); rows [0, len(ids)) in use
        self.kinds: list[Any] = []  # numpy int32 per block: a code from `kind_code`
        self.flags: list[Any] = []  # numpy bool per block
        self.kind_code: dict[str, int] = {}
        self.rows_tagged: dict[str, set[int]] = {}

    def sync(self, store: SQLStore) -> None:
        import numpy as np

        fresh = store.vectors_since(self.user, self.model, self.seq)
        if not fresh:
            return
        if self.dim is None:
            self.dim = len(fresh[0][2]) // 4
        changed: list[int] = []
        for seq, fact_id, blob, kind in fresh:
            vector = np.frombuffer(blob, dtype="<f4")
            if vector.shape[0] != self.dim:
                continue  # a stray dimension is refused at write time; never compared
            norm = float(np.linalg.norm(vector)) or 1.0
            row = self.row_of.get(fact_id)
            if row is None:
                row = len(self.ids)
                if row == len(self.blocks) * self.block:
                    self.blocks.append(np.zeros((self.block, self.dim), dtype=np.float32))
                    self.kinds.append(np.full(self.block, -1, dtype=np.int32))
                    self.flags.append(np.zeros(self.block, dtype=bool))
                self.ids.append(fact_id)
                self.row_of[fact_id] = row
            self.blocks[row // self.block][row % self.block] = vector / norm
            code = self.kind_code.setdefault(kind, len(self.kind_code))
            self.kinds[row // self.block][row % self.block] = code
            changed.append(row)
            self.seq = seq
        self._tag(store, changed, first=len(changed) == len(self.ids))

    def _tag(self, store: SQLStore, rows: list[int], first: bool) -> None:
        """Read the flag and tags of these rows' facts. A fact's vectors are dropped whenever
        its text changes, so what is read beside a vector stays true while the vector exists."""
        prefixes = [p for p in (self.flag, self.tag_prefix) if p]
        if not prefixes or not rows:
            return
        wanted = set(rows)
        for row in rows:
            self.flags[row // self.block][row % self.block] = False
        for tagged in self.rows_tagged.values():
            tagged -= wanted
        ids = None if first else [self.ids[r] for r in rows]  # first load: one range scan
        for fact_id, term in store.terms_under(self.user, prefixes, ids):
            at = self.row_of.get(fact_id)
            if at is None or at not in wanted:
                continue
            if term == self.flag:
                self.flags[at // self.block][at % self.block] = True
            elif self.tag_prefix and term.startswith(self.tag_prefix):
                self.rows_tagged.setdefault(term, set()).add(at)

    def above(self, vectors: Sequence[list[float]], line: float,
              narrow: Narrow | None = None) -> dict[str, float]:
        """Facts whose cosine with any of `vectors` is at least `line` (and that `narrow`
        lets through): the highest cosine of each."""
        import numpy as np

        if self.dim is None or not self.ids or not vectors:
            return {}
        q = np.asarray(vectors, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            return {}
        q /= np.clip(np.linalg.norm(q, axis=1, keepdims=True), 1e-12, None)
        qt = np.ascontiguousarray(q.T)
        tagged = self._tagged(narrow.tags) if narrow is not None else None
        found: dict[str, float] = {}
        for b, block in enumerate(self.blocks):
            start = b * self.block
            used = min(self.block, len(self.ids) - start)
            scores = (block[:used] @ qt).max(axis=1)
            keep = scores >= line
            if narrow is not None and tagged is not None:
                allowed = self.kinds[b][:used] == self.kind_code.get(narrow.kind, -2)
                if not narrow.every:
                    allowed &= self.flags[b][:used] | tagged[start:start + used]
                keep &= (scores >= narrow.line) | allowed
            for i in np.nonzero(keep)[0]:
                found[self.ids[start + int(i)]] = float(scores[i])
        return found

    def _tagged(self, tags: frozenset[str]) -> Any:
        """Rows that carry one of `tags`."""
        import numpy as np

        tagged = np.zeros(len(self.blocks) * self.block, dtype=bool)
        for tag in tags:
            rows = self.rows_tagged.get(tag)
            if rows:
                tagged[np.fromiter(rows, dtype=np.int64, count=len(rows))] = True
        return tagged
