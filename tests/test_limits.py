"""A full disk and a read-only store: a clear error, nothing half-written, the store intact.

Both use real file systems (a tiny tmpfs, a read-only bind mount), which needs root; CI runs as
root. Elsewhere they are skipped with the reason.
"""

import contextlib
import hashlib
import os
import subprocess

import pytest

from ankita import Memory, StoreError
from ankita.store._sqlite import SQLiteStore


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextlib.contextmanager
def mounted(target, *args):
    target.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not _mount(*args, str(target)):
        pytest.skip("needs root to mount a file system")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


def fill(folder):
    """Take every free byte of the file system, in a file we can delete later."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass  # ENOSPC: the disk is full now
    finally:
        os.close(fd)
    return filler


def test_full_disk_refuses_the_write_and_keeps_every_earlier_one(tmp_path):
    with mounted(tmp_path / "small", "-t", "tmpfs", "-o", "size=1m", "tmpfs") as disk:
        memory = Memory(disk / "m.db", embedder="none")
        kept = [
            memory.remember(f"My friend number {i} is called {w}").fact.id
            for i, w in enumerate(["Ada", "Bo", "Cy", "Di", "Ed"])
        ]
        filler = fill(disk)
        refused = 0
        for i in range(200):  # SQLite may still have room in pages it holds; go until it fails
            try:
                memory.remember(f"Long note {i}: " + "lorem ipsum dolor " * 100)
            except StoreError as exc:
                assert "no space left" in str(exc) and "nothing was written" in str(exc)
                refused += 1
                break
        assert refused == 1, "a full disk never refused a write"
        before = {f.id: f for f in memory.list()}
        assert set(kept) <= set(before)
        # The refused write left nothing behind: no fact, no event, no index entry.
        assert not any(f.text.startswith(f"Long note {i}:") for f in before.values())
        assert memory.doctor()["problems"] == []
        memory.close()

        filler.unlink()  # space again: the same store works on, with everything it had
        with Memory(disk / "m.db", embedder="none") as again:
            assert {f.id for f in again.list()} == set(before)
            assert again.remember("I live in Berlin").action == "created"
            assert again.doctor()["problems"] == []


def test_read_only_store_is_a_clear_error_and_stays_byte_identical(tmp_path):
    source = tmp_path / "src"
    with Memory(source / "m.db", embedder="none") as memory:
        memory.remember("I live in Berlin")
    digest = hashlib.sha256((source / "m.db").read_bytes()).hexdigest()
    with mounted(tmp_path / "ro", "--bind", "-o", "ro", str(source)) as ro:
        if os.access(ro, os.W_OK):
            pytest.skip("this kernel ignored the read-only bind")
        for attempt in (
            lambda: Memory(ro / "m.db", embedder="none"),
            lambda: SQLiteStore(ro / "m.db"),
        ):
            with pytest.raises(StoreError, match="read-only"):
                attempt()
    assert hashlib.sha256((source / "m.db").read_bytes()).hexdigest() == digest
    with Memory(source / "m.db", embedder="none") as memory:
        assert [f.text for f in memory.list()] == ["I live in Berlin"]


def test_a_file_that_is_not_a_store_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"These are my notes, not a database.\n" * 200)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="damaged or not an Ankita store"):
        Memory(path, embedder="none")
    assert path.read_bytes() == before
