"""Files and folders Ankita creates are its owner's alone (0600 / 0700), whatever the umask,
and a file that replaces another is written beside it first and renamed, so a failure (a full
disk, a crash) leaves the old one whole."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folder(path: str | Path) -> Path:
    """Create `path` and any missing parents as 0700; folders that exist are left as they are
    (they may be the user's own, such as their home)."""
    folder = Path(path).expanduser()
    missing = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):
            created.mkdir(mode=FOLDER_MODE)
            os.chmod(created, FOLDER_MODE)  # mkdir's mode passes through the umask
    return folder


def private_file(path: str | Path) -> Path:
    """Create `path` empty as 0600 if it does not exist (before SQLite opens it: SQLite gives
    its journal and WAL files the database file's mode)."""
    target = Path(path).expanduser()
    private_folder(target.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))
    return target


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a private partial file beside `path`; when the block ends without an error it is
    flushed to disk and renamed over `path`, otherwise removed."""
    final = Path(path).expanduser()
    partial = final.with_name(final.name + ".partial")
    partial.unlink(missing_ok=True)
    private_file(partial)
    try:
        yield partial
        with open(partial, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(partial, final)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
