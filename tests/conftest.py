from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ankita import Memory


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ANKITA_DB", "ANKITA_USER", "ANKITA_EMBEDDER", "ANKITA_DEDUP_THRESHOLD",
                 "ANKITA_CONFLICT_THRESHOLD", "ANKITA_STALE_AFTER_DAYS"):
        monkeypatch.delenv(name, raising=False)
    # Keep the default data folder inside the test's own directory.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def memory(db_path: Path, clock: Clock):
    with Memory(db_path, embedder="none", clock=clock) as m:
        yield m
