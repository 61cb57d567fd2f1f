"""Memory across languages (docs/languages.md, "Across languages"): the multilingual space
beside the English one, its backfill, cross-language recall and decisions, on both backends."""

import json
import threading

import pytest
from click.testing import CliRunner

from ankita import ConfigError, Memory
from ankita._errors import EmbedderError
from ankita.cli import cli
from ankita.embed._base import Embedder
from ankita.embed._multilingual import E5_MODEL, MultilingualE5, resolve_multilingual

ENGLISH = [
    "I drive a grey Honda City",
    "I work as a nurse in Pune",
    "My sister lives in Lyon",
    "I play badminton on Sundays",
]
PEANUTS = "मुझे मूंगफली से एलर्जी है"  # I am allergic to peanuts


class Counting(Embedder):
    """The real e5 model, counting what it is asked to embed."""

    model_id = E5_MODEL

    def __init__(self, fail: bool = False) -> None:
        self.inner, self.texts, self.fail = MultilingualE5(), [], fail

    def embed_batch(self, texts):
        self.texts += list(texts)
        if self.fail:
            raise EmbedderError("multilingual provider down")
        return self.inner.embed_batch(texts)

    def embed_query_batch(self, texts):
        self.texts += list(texts)
        return self.inner.embed_query_batch(texts)


def vectors(memory):
    return memory.store.facts_without_vector(memory.user, E5_MODEL)


def test_an_english_only_store_never_computes_a_multilingual_vector(db):
    counting = Counting()
    with Memory(db, embedder="none", multilingual=counting) as memory:
        for text in ENGLISH:
            memory.remember(text)
        memory.recall("What car do I drive?")
        assert counting.texts == []
        assert not memory.store.has_vectors(memory.user, E5_MODEL)


def test_a_fact_in_hindi_is_found_by_an_english_question(db):
    with Memory(db, embedder="none", multilingual=Counting()) as memory:
        for text in ENGLISH:
            memory.remember(text)
        memory.remember(PEANUTS)
        memory.reindex(multilingual=True)  # whatever the background run has not done yet
        assert vectors(memory) == []  # every older English fact got its vector too
        top = memory.recall("What am I allergic to?", limit=3).facts[0].fact.text
        assert top == PEANUTS
        asked = memory.recall("मेरी कार कौन सी है?", limit=5).facts  # which car do I have?
        assert "I drive a grey Honda City" in [f.fact.text for f in asked]


def test_without_the_space_the_hindi_fact_is_not_found(tmp_path):
    with Memory(tmp_path / "m.db", embedder="none", multilingual="off") as memory:
        for text in [*ENGLISH, PEANUTS]:
            memory.remember(text)
        assert PEANUTS not in [f.fact.text for f in memory.recall("What am I allergic to?").facts]


def test_a_duplicate_in_another_language_merges_and_a_different_fact_does_not(db):
    with Memory(db, embedder="none", multilingual=Counting()) as memory:
        first = memory.remember("Me gusta el jazz")
        again = memory.remember("Me encanta el jazz")
        assert again.action == "merged" and again.merged_into == first.fact.id
        assert E5_MODEL in again.reason
        memory.remember(PEANUTS)
        nuts = memory.remember("Ich bin allergisch gegen Nüsse")  # nuts are not peanuts
        assert nuts.action == "created"


def test_a_failing_multilingual_provider_never_blocks_a_write(tmp_path):
    with Memory(tmp_path / "m.db", embedder="none", multilingual=Counting(fail=True)) as memory:
        result = memory.remember(PEANUTS)
        assert result.action == "created" and memory.count() == 1
        report = memory.reindex(multilingual=True)
        assert report["failed"] == 1 and "provider down" in report["errors"][0]


def test_the_backfill_is_resumable_and_shows_progress(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path, embedder="none", multilingual="off") as memory:
        for n in range(9):
            memory.remember(f"{ENGLISH[n % 4]} and fact number {n} about item{n}")
    with Memory(path, embedder="none", multilingual=Counting()) as memory:
        stop, seen = threading.Event(), []

        def progress(done, total):
            seen.append((done, total))
            stop.set()  # stop after the first batch, as a closed memory does

        space = memory.multilingual
        first = space.backfill(memory.store, progress, stop=stop, batch_size=4)
        assert first["embedded"] == 4 and seen == [(4, 9)]
        assert len(vectors(memory)) == 5
        second = memory.reindex(multilingual=True, batch_size=4)
        assert second["missing"] == 5 and second["embedded"] == 5 and vectors(memory) == []


def test_a_store_that_uses_the_space_resumes_its_backfill_in_the_background(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path, embedder="none", multilingual="off") as memory:
        for text in ENGLISH:
            memory.remember(text)
    with Memory(path, embedder="none", multilingual=Counting()) as memory:
        memory.remember(PEANUTS)  # turns the space on: older facts are embedded meanwhile
        memory._backfill.thread.join(timeout=60)
        assert vectors(memory) == []


def test_a_background_backfill_that_fails_says_so(tmp_path, caplog):
    path = tmp_path / "m.db"
    with Memory(path, embedder="none", multilingual="off") as memory:
        for text in ENGLISH:
            memory.remember(text)
    with Memory(path, embedder="none", multilingual=Counting()) as memory:
        stop = threading.Event()
        # One fact embedded: the store uses the space, three facts still lack a vector.
        memory.multilingual.backfill(memory.store, lambda *_: stop.set(), stop, batch_size=1)
    with Memory(path, embedder="none", multilingual=Counting(fail=True)) as memory:
        memory._backfill.thread.join(timeout=60)
        assert memory._backfill.report["failed"] == 3 and len(vectors(memory)) == 3
    warned = [r.getMessage() for r in caplog.records if r.name == "ankita.multilingual"]
    assert warned == [
        "the multilingual backfill could not embed 3 facts (multilingual provider down); "
        "the next memory opened, or `ankita reindex --multilingual`, tries again"
    ]


def test_reindex_multilingual_from_the_cli(tmp_path):
    path = str(tmp_path / "m.db")
    with Memory(path, embedder="none", multilingual="off") as memory:
        memory.remember(PEANUTS)
        memory.remember("I drive a grey Honda City")
    runner = CliRunner()
    out = runner.invoke(
        cli, ["--db", path, "--embedder", "none", "reindex", "--multilingual", "--json"]
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["model"] == E5_MODEL and report["embedded"] == 2


def test_the_choice_of_multilingual_model(monkeypatch):
    assert resolve_multilingual("off") == (None, False)
    embedder, every = resolve_multilingual("on")
    assert embedder.model_id == E5_MODEL and every
    monkeypatch.setenv("ANKITA_MULTILINGUAL", "off")
    assert resolve_multilingual(None) == (None, False)
    with pytest.raises(ConfigError):
        resolve_multilingual("no-such-model")


def test_cross_language_recall_eval_is_scored_per_language_pair(tmp_path):
    out = CliRunner().invoke(
        cli,
        ["--embedder", "none", "eval", "--recall", "--json", _recall_set()],
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["hit@5"] >= 0.85
    assert {"hi>en", "hi-latn>en", "en>hi"} <= set(report["by_group"])
    assert len({g.split(">")[0] for g in report["by_group"]}) >= 10  # languages of the facts


def _recall_set():
    from importlib import resources

    return str(resources.files("ankita") / "data" / "recall_multilingual.jsonl")


def test_a_remote_embedder_can_serve_as_the_multilingual_one(tmp_path, monkeypatch):
    from providers import FakeProvider

    server = FakeProvider("ollama")
    monkeypatch.setenv("EMBED_LOCAL_BASE", server.url)
    monkeypatch.setenv("EMBED_LOCAL_MODEL", "bge-m3")
    try:
        with Memory(tmp_path / "m.db", embedder="none", multilingual="ollama") as memory:
            memory.remember("I drive a grey Honda City")
            assert server.requests == []  # English only so far: nothing asked of it
            memory.remember(PEANUTS)
            memory.reindex(multilingual=True)
            model = memory.multilingual.model
            assert memory.store.facts_without_vector(memory.user, model) == []
            asked = [t for r in server.requests for t in r["body"].get("input", [])]
            assert PEANUTS in asked and "I drive a grey Honda City" in asked
    finally:
        server.close()


def test_the_recall_eval_leaves_an_english_store_english(tmp_path):
    from ankita.dev._recall_eval import run_recall
    from ankita.dev._stream import Stream

    counting = Counting()
    facts = tuple((text, frozenset({str(n)})) for n, text in enumerate(ENGLISH))
    stream = Stream("english", facts, (("What car do I drive?", frozenset({"0"}), 4),))
    report = run_recall(
        [stream],
        lambda s: Memory(tmp_path / "r.db", embedder="none", multilingual=counting),
    )
    assert report["hit@5"] == 1.0 and counting.texts == []
