"""SPEC §4.1 and §8: providers over real HTTP on loopback, failures, reindex, `auto`."""

import gc
import subprocess
import sys
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from ankita import ConfigError, Memory
from ankita.cli import cli
from ankita.embed._embedders import auto_name, resolve_embedder
from ankita.embed._remote import CloudflareEmbedder, OllamaEmbedder, OpenAIEmbedder
from providers import FakeProvider
from test_write import Letters


@pytest.fixture(params=["ollama", "openai", "cloudflare"])
def provider(request):
    server = FakeProvider(request.param)
    yield server
    server.close()


def make(server, **kwargs):
    if server.kind == "ollama":
        return OllamaEmbedder(server.url, "nomic-embed-text", **kwargs)
    if server.kind == "openai":
        return OpenAIEmbedder(server.url + "/v1", "text-embedding", api_key="sk-test", **kwargs)
    return CloudflareEmbedder("acct123", "cf-token", base=server.url + "/client/v4", **kwargs)


def stored_vectors(memory):
    return [tuple(r) for r in memory.store.query("SELECT fact_id, model, dim FROM vectors")]


def test_vectors_are_stored_with_the_model_identity(provider, db):
    embedder = make(provider)
    with Memory(db, embedder=embedder) as m:
        fact = m.remember("I use Postgres").fact
        rows = stored_vectors(m)
    assert rows == [(fact.id, embedder.model_id, 8)]
    assert embedder.model_id.startswith(provider.kind + ":")


def test_wire_format_of_each_provider(provider, db):
    with Memory(db, embedder=make(provider)) as m:
        m.remember("I use Postgres")
    request = provider.requests[-1]
    if provider.kind == "ollama":
        assert request["path"] == "/api/embed"
        assert request["body"] == {"model": "nomic-embed-text", "input": ["I use Postgres"]}
    elif provider.kind == "openai":
        assert request["path"] == "/v1/embeddings"
        assert request["body"] == {"model": "text-embedding", "input": ["I use Postgres"]}
        assert request["auth"] == "Bearer sk-test"
    else:
        assert request["path"] == "/client/v4/accounts/acct123/ai/run/@cf/baai/bge-base-en-v1.5"
        assert request["body"] == {"text": ["I use Postgres"]}
        assert request["auth"] == "Bearer cf-token"


def test_openai_answers_are_put_back_in_index_order():
    server = FakeProvider("openai")
    try:
        vectors = make(server).embed_batch(["alpha", "beta beta", "gamma"])
    finally:
        server.close()
    from providers import vector_for

    assert vectors == [vector_for("alpha"), vector_for("beta beta"), vector_for("gamma")]


def test_ollama_falls_back_to_the_legacy_route():
    server = FakeProvider("ollama")
    server.mode = "legacy"
    try:
        vectors = make(server).embed_batch(["one", "two"])
    finally:
        server.close()
    assert len(vectors) == 2
    assert [r["path"] for r in server.requests] == [
        "/api/embed",
        "/api/embeddings",
        "/api/embeddings",
    ]
    assert server.requests[1]["body"] == {"model": "nomic-embed-text", "prompt": "one"}


def test_cloudflare_sends_at_most_100_texts_per_call():
    server = FakeProvider("cloudflare")
    try:
        vectors = make(server).embed_batch([f"text {i}" for i in range(150)])
    finally:
        server.close()
    assert len(vectors) == 150
    assert [len(r["body"]["text"]) for r in server.requests] == [100, 50]


def test_one_retry_after_a_server_error(provider, db):
    provider.mode = "500-once"
    with Memory(db, embedder=make(provider)) as m:
        result = m.remember("I use Postgres")
    assert result.embedding_error is None
    assert len(provider.requests) == 2


@pytest.mark.parametrize("mode", ["500", "401", "hang", "badjson", "nan", "short", "down"])
def test_a_failing_provider_never_blocks_a_write(provider, db, monkeypatch, mode):
    monkeypatch.setenv("ANKITA_EMBED_TIMEOUT", "0.5")
    embedder = make(provider)
    with Memory(db, embedder=embedder) as m:
        m.remember("I use Postgres")  # stored while the provider works
        provider.mode = mode
        if mode == "down":
            provider.close()
        result = m.remember("Database is Postgres")
        created = m.remember("My cat is called Miso")
        assert result.action == "merged" and result.method == "lexical"
        assert result.embedding_error and "reindex" in result.reason
        assert created.action == "created" and created.embedding_error
        assert len(stored_vectors(m)) == 1  # nothing half-stored for the failed writes
        if mode != "down":
            provider.mode = "ok"
            report = m.reindex()
            assert report["embedded"] == 1 and report["failed"] == 0
            assert len(stored_vectors(m)) == 2


def test_a_changed_dimension_is_refused_and_the_write_goes_on(db):
    server = FakeProvider("ollama")
    try:
        with Memory(db, embedder=make(server)) as m:
            m.remember("I use Postgres")
            server.mode = "dim"
            result = m.remember("My cat is called Miso")
    finally:
        server.close()
    assert result.action == "created"
    assert "dimensions" in result.embedding_error


def test_facts_without_a_vector_are_compared_lexically(db):
    server = FakeProvider("ollama")
    try:
        with Memory(db, embedder="none") as m:
            old = m.remember("I use Postgres").fact
        with Memory(db, embedder=make(server)) as m:
            result = m.remember("Database is Postgres")
            assert result.merged_into == old.id and result.method == "lexical"
            assert m.reindex()["embedded"] == 1
            assert m.reindex()["missing"] == 0
    finally:
        server.close()


def test_reindex_command_shows_json(db):
    server = FakeProvider("openai")
    try:
        with Memory(db, embedder="none") as m:
            for text in ("I use Postgres", "I live in Berlin", "My cat is called Miso"):
                m.remember(text)
        runner = CliRunner()
        result = runner.invoke(
            cli,
            ["--db", str(db), "reindex", "--json"],
            env={"EMBED_LOCAL_BASE": server.url + "/v1", "EMBED_LOCAL_MODEL": "text-embedding"},
        )
    finally:
        server.close()
    assert result.exit_code == 0, result.output
    assert '"embedded": 3' in result.output


def test_reindex_without_embedder_is_a_clear_error(db):
    result = CliRunner().invoke(cli, ["--db", str(db), "--embedder", "none", "reindex"])
    assert result.exit_code == 2 and "no embedder" in result.output


@pytest.mark.parametrize(
    "env,expected",
    [
        ({"EMBED_LOCAL_BASE": "http://localhost:11434"}, "ollama"),
        ({"EMBED_LOCAL_BASE": "http://localhost:1234/v1"}, "openai"),
        ({"EMBED_LOCAL_BASE": "http://localhost:1234/v1/"}, "openai"),
        ({"CLOUDFLARE_ACCOUNT_ID": "a", "CLOUDFLARE_API_TOKEN": "t"}, "cloudflare"),
        ({"CLOUDFLARE_ACCOUNT_ID": "a"}, "local"),
        ({}, "local"),
    ],
)
def test_auto_selection_follows_spec_order(monkeypatch, env, expected):
    for name in (
        "EMBED_LOCAL_BASE",
        "EMBED_LOCAL_MODEL",
        "CLOUDFLARE_ACCOUNT_ID",
        "CLOUDFLARE_API_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert auto_name() == expected


def test_remote_configuration_errors_are_clear(monkeypatch):
    monkeypatch.setenv("EMBED_LOCAL_BASE", "localhost:11434")
    monkeypatch.setenv("EMBED_LOCAL_MODEL", "m")
    with pytest.raises(ConfigError, match="http"):
        resolve_embedder("ollama")
    monkeypatch.delenv("CLOUDFLARE_API_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="CLOUDFLARE"):
        resolve_embedder("cloudflare")


def test_import_ankita_loads_no_model_runtime():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ankita, sys; print(any(m in sys.modules "
            "for m in ('onnxruntime', 'tokenizers', 'httpx', 'numpy')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"


class FlakyLetters(Letters):
    """Letter counts, but the calls numbered in `failing` raise (a provider that drops out)."""

    def __init__(self, failing=()):
        self.failing, self.calls = set(failing), 0

    def embed_batch(self, texts):
        self.calls += 1
        if self.calls in self.failing:
            raise ConnectionError("provider went away")
        return super().embed_batch(texts)


IMPORTED = [
    "I use Postgres",
    "Database is Postgres",
    "I live in Berlin",
    "I live in Munich",
    "My sister lives in Lyon",
    "I prefer dark mode",
    "Dark mode is my preference",
    "I do not live in Munich",
    "Coffee at nine",
    "My cat is called Miso",
]


def test_import_embeds_ahead_yet_decides_and_stores_as_one_remember_each(tmp_path):
    """Batches are embedded one ahead of the writing: same decisions, same vectors."""
    with (
        Memory(tmp_path / "one.db", embedder=Letters()) as one,
        Memory(tmp_path / "many.db", embedder=Letters()) as many,
    ):
        singly = [one.remember(t) for t in IMPORTED]
        batched = many.remember_many([{"text": t} for t in IMPORTED], batch_size=3)
        assert [(r.action, r.fact.text, r.score) for r in batched] == [
            (r.action, r.fact.text, r.score) for r in singly
        ]
        vectors = []
        for m in (one, many):
            stored = m.store.vectors_of([f.id for f in m.list()], "letters")
            vectors.append({f.text: stored[f.id] for f in m.list()})
    assert vectors[0] == vectors[1] and len(vectors[0]) == len(IMPORTED) - 2


def test_a_provider_failing_for_one_batch_of_an_import_blocks_nothing(tmp_path):
    with Memory(tmp_path / "m.db", embedder=FlakyLetters(failing={2})) as m:
        results = m.remember_many([{"text": t} for t in IMPORTED[:6]], batch_size=2)
        embedded = m.store.vectors_of([r.fact.id for r in results], "letters")
    assert [r.embedding_error is not None for r in results] == [
        False,
        False,
        True,
        True,
        False,
        False,
    ]
    assert "provider went away" in results[2].embedding_error
    assert set(embedded) == {results[i].fact.id for i in (0, 1, 4, 5)}


class GcWatch:
    """A clock that notes whether the cyclic collector is on each time a write reads it, and
    fails at the write `failing` (counted from 1)."""

    def __init__(self, failing: int = 0) -> None:
        self.seen: list[bool] = []
        self.failing = failing

    def __call__(self) -> datetime:
        self.seen.append(gc.isenabled())
        if len(self.seen) == self.failing:
            raise RuntimeError("clock broke")
        return datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("enabled", [True, False])
def test_import_pauses_the_collector_for_its_writes_and_puts_it_back(tmp_path, enabled):
    """The collector is off while a batch is written (docs/scale.md, round 13) and as it was
    after, also when a write fails."""
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        clock = GcWatch()
        with Memory(tmp_path / "m.db", embedder=None, clock=clock) as m:
            m.remember_many([{"text": t} for t in IMPORTED], batch_size=4)
            assert gc.isenabled() == enabled
            during = list(clock.seen)
            m.remember("I drive a red car")  # a single write leaves the collector alone
            broken = GcWatch(failing=3)
            m.clock = broken
            with pytest.raises(RuntimeError, match="clock broke"):
                m.remember_many([{"text": t} for t in ("A one", "B two", "C three")])
            assert gc.isenabled() == enabled
            texts = {f.text for f in m.list()}
    finally:
        (gc.enable if was else gc.disable)()
    assert len(during) >= len(IMPORTED) and not any(during)
    assert set(clock.seen[len(during) :]) == {enabled}
    assert len(broken.seen) == 3 and not any(broken.seen)
    assert "A one" not in texts  # the failed batch wrote nothing
