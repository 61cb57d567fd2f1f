"""The offline `local` embedder: a real packaged model, real vectors."""

import dataclasses

import numpy as np
import pytest

from ankita import ConfigError, Memory
from ankita.embed._local import LocalEmbedder


@pytest.fixture(scope="module")
def local():
    return LocalEmbedder()


def test_real_vectors_are_unit_length_and_384_wide(local):
    vectors = np.array(local.embed_batch(["I use Postgres", "My cat is called Miso"]))
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_paraphrase_scores_above_unrelated(local):
    a, b, c = np.array(
        local.embed_batch(
            ["I prefer dark mode", "Dark mode is my preference", "My cat is called Miso"]
        )
    )
    assert a @ b > 0.9
    assert a @ c < 0.3


def test_batch_and_single_give_the_same_vector(local):
    single = np.array(local.embed_batch(["I live in Berlin"])[0])
    batched = np.array(
        local.embed_batch(
            [
                "I live in Berlin",
                "a much longer sentence to pad the batch with more tokens than the first",
            ]
        )[0]
    )
    assert np.allclose(single, batched, atol=1e-4)


def test_a_wrong_checksum_refuses_the_model():
    embedder = LocalEmbedder()
    embedder.spec = dataclasses.replace(embedder.spec, sha256="0" * 64)
    with pytest.raises(ConfigError, match="sha256"):
        embedder.embed_batch(["x"])


def test_unknown_local_model_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown local model"):
        Memory(":memory:", embedder="local:nope")


def test_semantic_merge_and_compare_offline(db_path, local):
    with Memory(db_path, embedder=local) as m:
        m.remember("I prefer dark mode", kind="preference")
        merged = m.remember("Dark mode is my preference", kind="preference")
        assert merged.action == "merged"
        compared = m.compare("I'm vegetarian", "I don't eat meat")
        assert compared.method == "embedding:local:minilm-l6-int8"
        assert compared.action != "merge"


def test_recall_finds_a_fact_by_meaning(db_path, local):
    with Memory(db_path, embedder=local) as m:
        m.remember("I'm vegetarian", kind="health")
        m.remember("My cat is called Miso", kind="pet")
        m.remember("I drive a blue Honda", kind="tool")
        result = m.recall("what food should I cook for dinner", limit=1)
    assert [r.fact.text for r in result.facts] == ["I'm vegetarian"]


def test_a_large_batch_keeps_each_texts_own_vector_in_order(local):
    texts = [("word " * (i % 17 + 1)) + f"number {i}" for i in range(75)]  # several runs
    together = np.array(local.embed_batch(texts))
    alone = np.array([local.embed_batch([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-4)
