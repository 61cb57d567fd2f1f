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

from ankita.store._sql import SQLStore

BLOCK = 4096  # rows per block: growing adds a block and never copies the ones before
AHEAD = 48  # probes of planned writes scored together in one pass over the matrix
# With this many rows, a search with a floor first bounds every row's cosine from a few
# directions, and reads whole only the rows whose bound reaches the floor (`_bounded`).
BASIS_MIN = 8192
RANK = 64  # directions of the bound: 1/6 of the matrix's bytes for 384 dimensions
SAMPLE = 4096  # rows the directions are found from
MARGIN = 1e-3  # far above float32 error in the bound, so that no row above the floor is lost


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

    def __init__(
        self, ids: Sequence[str], scores: Any, row_of: dict[str, int], floor: float
    ) -> None:
        self.ids, self.scores, self.row_of, self.floor = ids, scores, row_of, floor

    @classmethod
    def of(cls, found: dict[str, float]) -> Nearby:
        """From a mapping that holds only facts at or above the floor (pgvector's answer)."""
        import numpy as np

        ids = list(found)
        return cls(
            ids,
            np.asarray([found[i] for i in ids], dtype=np.float64),
            {i: n for n, i in enumerate(ids)},
            float("-inf"),
        )

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


def _extent(floor: Any) -> tuple[float, float]:
    """The lowest and highest of a floor given as one number or one a row."""
    import numpy as np

    if np.ndim(floor) == 0:
        return float(floor), float(floor)
    return (float(np.min(floor)), float(np.max(floor))) if len(floor) else (0.0, 0.0)


class VectorIndex:
    def __init__(
        self,
        user: str,
        model: str,
        flag: str = "",
        tag_prefixes: Sequence[str] = (),
        block: int = BLOCK,
        basis_min: int | None = None,
        rank: int | None = None,
    ) -> None:
        self.user, self.model, self.block = user, model, block
        # The bound (`_bounded`): `rank` orthonormal directions (dim x rank, found from the
        # rows once there are `basis_min`), each row's coordinates along them, and the length
        # of what they leave out of the row.
        self.basis_min = BASIS_MIN if basis_min is None else basis_min
        self.rank = RANK if rank is None else rank
        self.basis: Any = None
        self.coords: list[Any] = []  # numpy arrays (block x rank)
        self.rest: list[Any] = []  # numpy float32 per block
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
        self._last: tuple[tuple[bytes, int, int], float, Any] | None = None
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
                    if self.basis is not None:
                        self.coords.append(
                            np.zeros((self.block, self.basis.shape[1]), dtype=np.float32)
                        )
                        self.rest.append(np.zeros(self.block, dtype=np.float32))
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
        if self.basis is None and len(self.ids) >= self.basis_min:
            self._find_basis()
        elif self.basis is not None:
            self._project(changed)
        self._tag(store, changed, renewed, first=len(changed) == len(self.ids))

    def _find_basis(self) -> None:
        """The directions that hold most of the rows (from an even sample of them), and every
        row's coordinates along them. Any orthonormal directions keep the bound true; these
        keep it tight, and are kept as rows come, which may make it a little looser."""
        import numpy as np

        picked = np.arange(0, len(self.ids), max(1, len(self.ids) // SAMPLE))
        sample = np.concatenate(
            [
                self.blocks[b][picked[picked // self.block == b] % self.block]
                for b in range(len(self.blocks))
            ]
        ).astype(np.float64)
        rank = min(self.rank, self.dim or 0, len(sample))
        _, _, vt = np.linalg.svd(sample, full_matrices=False)
        self.basis = np.ascontiguousarray(vt[:rank].T, dtype=np.float32)
        self.coords = [np.zeros((self.block, rank), dtype=np.float32) for _ in self.blocks]
        self.rest = [np.zeros(self.block, dtype=np.float32) for _ in self.blocks]
        self._project(range(len(self.ids)))

    def _project(self, rows: Sequence[int]) -> None:
        """Coordinates and left-out length of these rows (unit vectors)."""
        import numpy as np

        by_block: dict[int, list[int]] = {}
        for row in rows:
            by_block.setdefault(row // self.block, []).append(row % self.block)
        for b, local in by_block.items():
            at = np.asarray(local, dtype=np.int64)
            coords = self.blocks[b][at] @ self.basis
            self.coords[b][at] = coords
            self.rest[b][at] = np.sqrt(np.maximum(0.0, 1.0 - (coords * coords).sum(axis=1)))

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

    def above(
        self, vectors: Sequence[list[float]], line: float, narrow: Narrow | None = None
    ) -> dict[str, float]:
        """Facts whose cosine with any of `vectors` is at least `line` (and that `narrow`
        lets through): the highest cosine of each."""
        import numpy as np

        qt = self._query(vectors)
        if qt is None:
            return {}
        tagged = self._tagged(narrow.tags) if narrow is not None and not narrow.every else None
        dropped = self._tagged(narrow.drop) if narrow is not None and narrow.drop else None
        # Each row's own floor: the line if `narrow` lets it through below its line, else
        # that line; none for a dropped row. The bound then skips most rows whole.
        floors: Any = line
        if narrow is not None:
            floors = np.empty(len(self.ids), dtype=np.float32)
            for b in range(len(self.blocks)):
                start, used = b * self.block, self._used(b)
                allowed = self.kinds[b][:used] == self.kind_code.get(narrow.kind, -2)
                if tagged is not None:
                    allowed &= self.flags[b][:used] | tagged[start : start + used]
                floors[start : start + used] = np.where(allowed, line, max(line, narrow.line))
                if dropped is not None:
                    floors[start : start + used][dropped[start : start + used]] = np.inf
        every = self._scores(qt, planned=True, floor=floors)
        keep = every >= floors
        return {self.ids[int(i)]: float(every[i]) for i in np.nonzero(keep)[0]}

    def nearby(self, vector: list[float], floor: float) -> Nearby:
        """Every row's cosine with `vector`, read through a floor."""
        import numpy as np

        qt = self._query([vector])
        if qt is None:
            return Nearby([], np.zeros(0), {}, floor)
        return Nearby(self.ids, self._scores(qt, floor=floor), self.row_of, floor)

    def closest(
        self, vectors: Sequence[list[float]], kind: str, floor: float, count: int
    ) -> list[str]:
        """Rows of `kind` among the `count` of highest cosine with any of `vectors`, at or above
        `floor`, with every row within 1e-4 of the last of them: a superset of the exact best
        `count`, whatever float32 rounding does."""
        import numpy as np

        qt = self._query(vectors)
        code = self.kind_code.get(kind)
        if qt is None or code is None:
            return []
        scores = self._scores(qt, planned=True, floor=floor - 1e-4)
        kinds = np.concatenate([k[: self._used(b)] for b, k in enumerate(self.kinds)])
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

    def _scores(self, qt: Any, planned: bool = False, floor: Any = float("-inf")) -> Any:
        """Every row's highest cosine with the probes `qt`, exact at or above `floor` (one
        number, or one a row); below it, a row may hold any number below its floor
        (remembered for the next call).
        A `planned` search (a write's candidates) may use scores computed ahead in one pass
        with other probes; float32 sums in another order differ by far less than the 1e-4
        that every candidate search leaves below its line."""
        import numpy as np

        key = (qt.tobytes(), len(self.ids), self.seq)
        lowest, highest = _extent(floor)
        if self._last is not None and self._last[0] == key and self._last[1] <= lowest:
            return self._last[2]
        if planned and key[0] in self._planned:
            rows, renewals, scores = self._from_plan(key[0])
            # Rows added since, and rows whose vector was renewed since, are scored now.
            if rows < len(self.ids):
                scores = np.concatenate([scores, self._rows_scores(qt, rows, len(self.ids))])
            for row in set(self._renewed[renewals:]):
                if row < rows:
                    scores[row] = self._rows_scores(qt, row, row + 1)[0]
            highest = float("-inf")  # every row's is exact
        else:
            scores = self._bounded(qt, floor)
            if scores is None:
                scores, highest = self._rows_scores(qt, 0, len(self.ids)), float("-inf")
        # Exact for any later search whose floor is at least every row's floor here.
        self._last = (key, highest, scores)
        return scores

    def _bounded(self, qt: Any, floor: Any) -> Any:
        """Every row's highest cosine with `qt` where it may reach `floor`, else -1; None when
        the bound would not save a pass over the matrix.

        For unit vectors split into their parts along the directions and the rest, the cosine
        is the product of the parts along them plus that of the rests, which is at most the
        product of the rests' lengths. So that sum bounds each row's cosine from `rank`
        numbers a row, and only the rows whose bound reaches the floor are read whole."""
        import numpy as np

        if self.basis is None or (not np.ndim(floor) and floor == float("-inf")):
            return None
        along = self.basis.T @ qt  # rank x probes
        left = np.sqrt(np.maximum(0.0, 1.0 - (along * along).sum(axis=0)))
        scores = np.full(len(self.ids), -1.0, dtype=np.float32)
        for b, block in enumerate(self.blocks):
            used = self._used(b)
            bound = (self.coords[b][:used] @ along + np.outer(self.rest[b][:used], left)).max(
                axis=1
            )
            start = b * self.block
            low = floor[start : start + used] if np.ndim(floor) else floor
            rows = np.nonzero(bound >= low - MARGIN)[0]
            if len(rows) > used // 2:  # gathering them would cost more than the block
                scores[start : start + used] = (block[:used] @ qt).max(axis=1)
            elif len(rows):
                scores[start + rows] = (block[rows] @ qt).max(axis=1)
        return scores

    def _from_plan(self, key: bytes) -> tuple[int, int, Any]:
        """This planned probe set's scores: with it, the next planned sets not scored yet are
        scored in the same pass (each is used once, then dropped)."""
        import numpy as np

        if key not in self._ahead:
            keys = list(self._planned)
            batch: list[bytes] = []
            bounds = [0]  # column where each of the batch's probe sets starts, and the end
            for k in keys[keys.index(key) :]:
                if bounds[-1] >= AHEAD:
                    break
                if k not in self._ahead:
                    batch.append(k)
                    bounds.append(bounds[-1] + self._planned[k].shape[1])
            both = np.concatenate([self._planned[k] for k in batch], axis=1)
            # Block by block, so only one block's products with every probe are held at once.
            maxima: list[list[Any]] = [[] for _ in batch]
            for b, block in enumerate(self.blocks):
                product = block[: self._used(b)] @ both
                for n in range(len(batch)):
                    maxima[n].append(product[:, bounds[n] : bounds[n + 1]].max(axis=1))
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
                parts.append((block[low - b * self.block : high - b * self.block] @ qt).max(axis=1))
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
