"""An in-memory float32 matrix of one user's vectors for one model: exact cosine search.

Loaded lazily on first use, then caught up on every use from the store's never-reused vector
sequence, so writes by other processes are seen too. Rows of forgotten facts may linger; they
are harmless because candidates are always re-read from the store.
"""

from __future__ import annotations

from typing import Any

from ._sql import SQLStore


class VectorIndex:
    def __init__(self, user: str, model: str) -> None:
        self.user, self.model = user, model
        self.seq = 0
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.matrix: Any = None  # numpy array (capacity x dim), rows [0, len(ids)) in use

    def sync(self, store: SQLStore) -> None:
        import numpy as np

        fresh = store.vectors_since(self.user, self.model, self.seq)
        if not fresh:
            return
        dim = len(fresh[0][2]) // 4
        if self.matrix is None:
            self.matrix = np.zeros((max(1024, len(fresh) * 2), dim), dtype=np.float32)
        for seq, fact_id, blob in fresh:
            vector = np.frombuffer(blob, dtype="<f4")
            if vector.shape[0] != self.matrix.shape[1]:
                continue  # a stray dimension is refused at write time; never compared
            norm = float(np.linalg.norm(vector)) or 1.0
            row = self.row_of.get(fact_id)
            if row is None:
                row = len(self.ids)
                if row == self.matrix.shape[0]:
                    grown = np.zeros((row * 2, self.matrix.shape[1]), dtype=np.float32)
                    grown[:row] = self.matrix
                    self.matrix = grown
                self.ids.append(fact_id)
                self.row_of[fact_id] = row
            self.matrix[row] = vector / norm
            self.seq = seq

    def above(self, vector: list[float], line: float) -> dict[str, float]:
        """Facts whose cosine with `vector` is at least `line`."""
        import numpy as np

        if self.matrix is None or not self.ids:
            return {}
        q = np.asarray(vector, dtype=np.float32)
        if q.shape[0] != self.matrix.shape[1]:
            return {}
        q /= float(np.linalg.norm(q)) or 1.0
        scores = self.matrix[: len(self.ids)] @ q
        hits = np.nonzero(scores >= line)[0]
        return {self.ids[i]: float(scores[i]) for i in hits}
