"""The server's open memories: one per user, a lock each, the least recently used idle one
closed when too many are open."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ankita._memory import Memory
from ankita.embed._embedders import Embedder
from ankita.embed._judge import ContradictionJudge


class Users:
    """One `Memory` per user, sharing one embedder and one judge; a lock each, since a Memory
    holds one SQLite connection. Different users run in parallel. At most `keep_open` stay
    open: the least recently used idle one is closed first, so a server that has seen many
    users does not run out of file descriptors."""

    def __init__(
        self,
        path: str,
        embedder: Embedder | None,
        judge: ContradictionJudge | None = None,
        keep_open: int = 32,
    ) -> None:
        self.path, self.embedder, self.judge = path, embedder, judge
        self.keep_open = keep_open
        # user -> [memory, its lock, requests holding or waiting for it]
        self._memories: OrderedDict[str, list[Any]] = OrderedDict()
        self._guard = threading.Lock()

    @contextmanager
    def memory(self, user: str) -> Iterator[Memory]:
        with self._guard:
            if user not in self._memories:
                self._close_idle(self.keep_open - 1)
                self._memories[user] = [
                    Memory(
                        self.path,
                        user=user,
                        embedder=self.embedder or "none",
                        judge=self.judge or "off",
                    ),
                    threading.Lock(),
                    0,
                ]
            self._memories.move_to_end(user)
            entry = self._memories[user]
            entry[2] += 1  # counted under the guard, so it is never closed under a request
        try:
            with entry[1]:
                yield entry[0]
        finally:
            with self._guard:
                entry[2] -= 1

    def _close_idle(self, room: int) -> None:
        """Close idle memories, oldest use first, until at most `room` stay open."""
        for user, (memory, _, users) in list(self._memories.items()):
            if len(self._memories) <= room:
                return
            if users == 0:  # one in use is skipped, never waited for
                del self._memories[user]
                memory.close()

    def open_count(self) -> int:
        return len(self._memories)

    def close(self) -> None:
        for memory, _, _ in self._memories.values():
            memory.close()
