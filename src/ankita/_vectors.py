"""An in-memory float32 matrix of one user's vectors for one model: exact cosine search.

Loaded lazily on first use, then caught up on every use from the store's vector sequence, so
writes by other processes are seen too; read again whole after a rollback of this connection,
whose rolled-back sequence numbers may be taken again. Rows of forgotten facts, or of facts whose
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
AHEAD = 48  # probes of planned writes scored together in one pass over the matrix


@dataclass(frozen=True)
class Narrow:
    """Rows at or above `line` all count; below it, only rows of `kind` that carry the index's
    flag or one of `tags` (or, if `every`, all rows of `kind`). Rows that carry one of `drop`
    never count, whatever their cosine."""

    line: float
    kind: str
    tags: frozenset[str]
    every: bool = False
    drop: frozenset[str] = frozenset()


class Nearby:
    """The cosines of one query with stored vectors, at or above a floor: the best few in
    order, and any one fact's, without a mapping of them all (recall at scale)."""

    def __init__(self, ids: Sequence[str], scores: Any, row_of: dict[str, int],
                 floor: float) -> None:
        self.ids, self.scores, self.row_of, self.floor = ids, scores, row_of, floor

    @classmethod
    def of(cls, found: dict[str, float]) -> Nearby:
        """From a mapping that holds only facts at or above the floor (pgvector's answer)."""
        import numpy as np

        ids = list(found)
        return cls(ids, np.asarray([found[i] for i in ids], dtype=np.float64),
                   {i: n for n, i in enumerate(ids)}, float("-inf"))

    def best(self, count: int) -> list[str]:
        """The `count` facts of highest cosine; ties in the order the facts were stored."""
        import numpy as np

        rows = np.nonzero(self.scores >= self.floor)[0]
        if len(rows) > count:
            # Everything at or above the count-th best score, then the exact order of those.
            kth = np.partition(self.scores[rows], len(rows) - count)[len(rows) - count]
            rows = rows[self.scores[rows] >= kth]
        ordered = rows[np.lexsort((rows, -self.scores[rows]))][:count]
        return [self.ids[int(r)] for r in ordered]

    def get(self, fact_id: str) -> float | None:
        """This fact's cosine, or None if it is below the floor or has no vector."""
        row = self.row_of.get(fact_id)
        if row is None or row >= len(self.scores):
            return None
        score = float(self.scores[row])
        return score if score >= self.floor else None


class VectorIndex:
    def __init__(self, user: str, model: str, flag: str = "",
                 tag_prefixes: Sequence[str] = (), block: int = BLOCK) -> None:
        self.user, self.model, self.block = user, model, block
        # Index terms kept beside the rows: one exact term as a flag, and every term under
        # one of the prefixes as a tag.
        self.flag, self.tag_prefixes = flag, tuple(tag_prefixes)
        self.seq = 0
        self.rollbacks = 0  # the store's count of rollbacks when last caught up
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.dim: int | None = None
        self.blocks: list[Any] = []  # numpy arrays (block x dim); rows [0, len(ids)) in use
        self.kinds: list[Any] = []  # numpy int32 per block: a code from `kind_code`
        self.flags: list[Any] = []  # numpy bool per block
        self.kind_code: dict[str, int] = {}
        self.rows_tagged: dict[str, set[int]] = {}
        # The last query's cosines: a write searches twice with the same probes (candidates,
        # then the judge's closest facts), and one pass over the matrix serves both.
        self._last: tuple[tuple[bytes, int, int], Any] | None = None
        # An import's coming writes (`plan`): their probes in order, the scores already
        # computed for some of them (rows scored, renewals seen then, scores), and the rows
        # renewed since the plan was made.
        self._planned: dict[bytes, Any] = {}
        self._ahead: dict[bytes, tuple[int, int, Any]] = {}
        self._renewed: list[int] = []

    def sync(self, store: SQLStore) -> None:
        import numpy as np

        if self.rollbacks != store.rollbacks:
            # This connection rolled back rows this index may have read, and their sequence
            # numbers can be taken again: read every vector again (rows are overwritten).
            self.seq, self.rollbacks = 0, store.rollbacks
        fresh = store.vectors_since(self.user, self.model, self.seq)
        if not fresh:
            return
        if self.dim is None:
            self.dim = len(fresh[0][2]) // 4
        changed: list[int] = []
        renewed: list[int] = []  # rows that already held a vector of this fact
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
            else:
                renewed.append(row)
                if self._planned:
                    self._renewed.append(row)
            self.blocks[row // self.block][row % self.block] = vector / norm
            code = self.kind_code.setdefault(kind, len(self.kind_code))
            self.kinds[row // self.block][row % self.block] = code
            changed.append(row)
            self.seq = seq
        self._tag(store, changed, renewed, first=len(changed) == len(self.ids))

    def _tag(self, store: SQLStore, rows: list[int], renewed: list[int], first: bool) -> None:
        """Read the flag and tags of these rows' facts (forgetting what `renewed` rows held).
        A fact's vectors are dropped whenever its text changes, so what is read beside a
        vector stays true while the vector exists."""
        prefixes = [p for p in (self.flag, *self.tag_prefixes) if p]
        if not prefixes or not rows:
            return
        wanted = set(rows)
        if renewed:
            for row in renewed:
                self.flags[row // self.block][row % self.block] = False
            for tagged in self.rows_tagged.values():
                tagged.difference_update(renewed)
        ids = None if first else [self.ids[r] for r in rows]  # first load: one range scan
        for fact_id, term in store.terms_under(self.user, prefixes, ids):
            at = self.row_of.get(fact_id)
            if at is None or at not in wanted:
                continue
            if term == self.flag:
                self.flags[at // self.block][at % self.block] = True
            elif term.startswith(self.tag_prefixes):
                self.rows_tagged.setdefault(term, set()).add(at)

    def above(self, vectors: Sequence[list[float]], line: float,
              narrow: Narrow | None = None) -> dict[str, float]:
        """Facts whose cosine with any of `vectors` is at least `line` (and that `narrow`
        lets through): the highest cosine of each."""
        import numpy as np

        qt = self._query(vectors)
        if qt is None:
            return {}
        tagged = self._tagged(narrow.tags) if narrow is not None and not narrow.every else None
        dropped = self._tagged(narrow.drop) if narrow is not None and narrow.drop else None
        found: dict[str, float] = {}
        every = self._scores(qt, planned=True)
        for b in range(len(self.blocks)):
            start, used = b * self.block, self._used(b)
            scores = every[start:start + used]
            keep = scores >= line
            if narrow is not None:
                allowed = self.kinds[b][:used] == self.kind_code.get(narrow.kind, -2)
                if tagged is not None:
                    allowed &= self.flags[b][:used] | tagged[start:start + used]
                keep &= (scores >= narrow.line) | allowed
                if dropped is not None:
                    keep &= ~dropped[start:start + used]
            for i in np.nonzero(keep)[0]:
                found[self.ids[start + int(i)]] = float(scores[i])
        return found

    def nearby(self, vector: list[float], floor: float) -> Nearby:
        """Every row's cosine with `vector`, read through a floor."""
        import numpy as np

        qt = self._query([vector])
        if qt is None:
            return Nearby([], np.zeros(0), {}, floor)
        return Nearby(self.ids, self._scores(qt), self.row_of, floor)

    def closest(self, vectors: Sequence[list[float]], kind: str, floor: float,
                count: int) -> list[str]:
        """Rows of `kind` among the `count` of highest cosine with any of `vectors`, at or above
        `floor`, with every row within 1e-4 of the last of them: a superset of the exact best
        `count`, whatever float32 rounding does."""
        import numpy as np

        qt = self._query(vectors)
        code = self.kind_code.get(kind)
        if qt is None or code is None:
            return []
        scores = self._scores(qt, planned=True)
        kinds = np.concatenate([k[:self._used(b)] for b, k in enumerate(self.kinds)])
        rows = np.nonzero((kinds == code) & (scores >= floor - 1e-4))[0]
        if len(rows) > count:
            kth = np.partition(scores[rows], len(rows) - count)[len(rows) - count]
            rows = rows[scores[rows] >= kth - 1e-4]
        return [self.ids[int(r)] for r in rows]

    def plan(self, probe_sets: Sequence[Sequence[list[float]]]) -> None:
        """The probes of the writes about to come (an import batch), in order; an empty list
        ends the plan. The first search of a planned write scores it together with the next
        few in one pass over the matrix: at 100k rows a pass is memory-bound (about 18 ms
        here), and one pass for AHEAD writes costs little more than for one."""
        self._planned, self._ahead, self._renewed = {}, {}, []
        for probes in probe_sets:
            qt = self._query(probes)
            if qt is not None:
                self._planned.setdefault(qt.tobytes(), qt)

    def _scores(self, qt: Any, planned: bool = False) -> Any:
        """Every row's highest cosine with the probes `qt` (remembered for the next call).
        A `planned` search (a write's candidates) may use scores computed ahead in one pass
        with other probes; float32 sums in another order differ by far less than the 1e-4
        that every candidate search leaves below its line."""
        import numpy as np

        key = (qt.tobytes(), len(self.ids), self.seq)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        if planned and key[0] in self._planned:
            rows, renewals, scores = self._from_plan(key[0])
            # Rows added since, and rows whose vector was renewed since, are scored now.
            if rows < len(self.ids):
                scores = np.concatenate([scores, self._rows_scores(qt, rows, len(self.ids))])
            for row in set(self._renewed[renewals:]):
                if row < rows:
                    scores[row] = self._rows_scores(qt, row, row + 1)[0]
        else:
            scores = self._rows_scores(qt, 0, len(self.ids))
        self._last = (key, scores)
        return scores

    def _from_plan(self, key: bytes) -> tuple[int, int, Any]:
        """This planned probe set's scores: with it, the next planned sets not scored yet are
        scored in the same pass (each is used once, then dropped)."""
        import numpy as np

        if key not in self._ahead:
            keys = list(self._planned)
            batch: list[bytes] = []
            bounds = [0]  # column where each of the batch's probe sets starts, and the end
            for k in keys[keys.index(key):]:
                if bounds[-1] >= AHEAD:
                    break
                if k not in self._ahead:
                    batch.append(k)
                    bounds.append(bounds[-1] + self._planned[k].shape[1])
            both = np.concatenate([self._planned[k] for k in batch], axis=1)
            # Block by block, so only one block's products with every probe are held at once.
            maxima: list[list[Any]] = [[] for _ in batch]
            for b, block in enumerate(self.blocks):
                product = block[:self._used(b)] @ both
                for n in range(len(batch)):
                    maxima[n].append(product[:, bounds[n]:bounds[n + 1]].max(axis=1))
            for k, parts in zip(batch, maxima, strict=True):
                self._ahead[k] = (len(self.ids), len(self._renewed), np.concatenate(parts))
        del self._planned[key]
        return self._ahead.pop(key)

    def _rows_scores(self, qt: Any, start: int, end: int) -> Any:
        """Rows [start, end): each one's highest cosine with the probes `qt`."""
        import numpy as np

        parts = []
        for b, block in enumerate(self.blocks):
            low, high = max(start, b * self.block), min(end, b * self.block + self._used(b))
            if low < high:
                parts.append((block[low - b * self.block:high - b * self.block] @ qt).max(axis=1))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def _used(self, number: int) -> int:
        """Rows in use in block `number`."""
        return min(self.block, len(self.ids) - number * self.block)

    def _query(self, vectors: Sequence[list[float]]) -> Any:
        """The probes as unit columns (dim x probes), or None if none can be compared: one
        way for every search, so that all read the same cosine for a pair."""
        import numpy as np

        if self.dim is None or not self.ids or not vectors:
            return None
        q = np.asarray(vectors, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            return None
        q /= np.clip(np.linalg.norm(q, axis=1, keepdims=True), 1e-12, None)
        return np.ascontiguousarray(q.T)

    def _tagged(self, tags: frozenset[str]) -> Any:
        """Rows that carry one of `tags`."""
        import numpy as np

        tagged = np.zeros(len(self.blocks) * self.block, dtype=bool)
        for tag in tags:
            rows = self.rows_tagged.get(tag)
            if rows:
                tagged[np.fromiter(rows, dtype=np.int64, count=len(rows))] = True
        return tagged
