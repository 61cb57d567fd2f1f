"""SQLite's write-ahead log is copied back into the database file by a thread of its own, so
that no write waits for the copy (`_sqlite._Checkpointer`)."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path

from ankita import Memory
from ankita.store._sqlite import _Checkpointer


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ankita-checkpoint"]


def _wait_for(condition, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def _file_alone(path: Path, tmp_path: Path) -> list[str]:
    """The facts a copy of the database file holds without its log: what was copied back."""
    alone = tmp_path / "alone.db"
    shutil.copy(path, alone)
    db = sqlite3.connect(alone)
    try:
        return sorted(r[0] for r in db.execute("SELECT text FROM facts"))
    except sqlite3.DatabaseError:  # not even the schema yet, or copied in mid-checkpoint
        return []
    finally:
        db.close()


def test_commits_are_copied_back_into_the_file_by_the_thread(tmp_path):
    path = tmp_path / "m.db"
    texts = [f"I keep a notebook called Volume{i} on shelf {i}" for i in range(40)]
    with Memory(path, embedder="none") as m:
        for text in texts:
            m.remember(text)
        checkpointer = m.store._checkpointer
        assert checkpointer is not None and _threads()
        # Far under the writer's own limit: only the thread can have copied these.
        assert _wait_for(lambda: _file_alone(path, tmp_path) == sorted(texts))
        assert checkpointer.passes >= 1
    assert not _threads()  # closing the store ends its thread


def test_the_thread_ends_when_idle_and_comes_back_with_the_next_write(tmp_path, monkeypatch):
    monkeypatch.setattr(_Checkpointer, "IDLE_S", 0.1)
    path = tmp_path / "m.db"
    with Memory(path, embedder="none") as m:
        m.remember("I use Postgres")
        assert _wait_for(lambda: not _threads())
        m.remember("My sister lives in Lyon")
        assert _threads()
        assert _wait_for(lambda: "My sister lives in Lyon" in _file_alone(path, tmp_path))


def test_a_reader_holding_the_log_blocks_no_write(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path, embedder="none") as m:
        m.remember("I use Postgres")
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM facts").fetchone() == (1,)
        for i in range(30):
            m.remember(f"I keep a notebook called Volume{i} on shelf {i}")
        assert len(m.list()) == 31
        # The reader still sees its snapshot; once it ends, the rest is copied back.
        assert reader.execute("SELECT count(*) FROM facts").fetchone() == (1,)
        reader.execute("COMMIT")
        reader.close()
        m.remember("My sister lives in Lyon")
        assert _wait_for(lambda: len(_file_alone(path, tmp_path)) == 32)


def test_a_store_in_memory_has_no_thread():
    with Memory(":memory:", embedder="none") as m:
        m.remember("I use Postgres")
        assert m.store._checkpointer is None and not _threads()
