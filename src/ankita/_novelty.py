"""What a new fact says that an old one does not, read word by word by the embedder: the
count of its words that no word of the old fact is close to in meaning (docs/decisions.md,
"A cosine merge between long facts"). A merge keeps the old text, so such words would be lost
from what recall reads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ankita._errors import EmbedderError
from ankita.analysis._text import plain_words
from ankita.embed._embedders import Embedder

WORD_CLOSE = 0.5  # a word with no counterpart at least this close (cosine) is new
WORDS_KEPT = 20_000  # word vectors a process keeps (about 30 MB at 384 dimensions)


class WordNovelty:
    """`novelty(new, old)` for `compare_texts`, with each word embedded once per process."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, new: str, old: str) -> int | None:
        """The new text's words that no word of the old one is close to; None when the
        embedder fails (the decision then stands on its words alone)."""
        import numpy as np

        new_words, old_words = sorted(plain_words(new)), sorted(plain_words(old))
        if not new_words or not old_words:
            return len(new_words)
        try:
            found = self._read(new_words + old_words)
        except EmbedderError:
            return None
        closest = (
            np.array([found[w] for w in new_words]) @ np.array([found[w] for w in old_words]).T
        )
        return int((closest.max(axis=1) < WORD_CLOSE).sum())

    def _read(self, words: list[str]) -> dict[str, Any]:
        import numpy as np

        with self._lock:
            known = {w: self._vectors[w] for w in words if w in self._vectors}
            for w in known:
                self._vectors.move_to_end(w)
        missing = sorted(set(words) - known.keys())
        if missing:
            for word, vector in zip(missing, self.embedder.embed_checked(missing), strict=True):
                unit = np.asarray(vector, dtype=np.float64)
                norm = float(np.linalg.norm(unit))
                known[word] = unit / norm if norm else unit
            with self._lock:
                for word in missing:
                    self._vectors[word] = known[word]
                while len(self._vectors) > WORDS_KEPT:
                    self._vectors.popitem(last=False)
        return known
