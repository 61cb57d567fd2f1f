"""The in-memory vector index: exact cosine search over a store's vectors, block by block."""

import struct

import numpy as np

from ankita import Memory
from ankita._vectors import Nearby, VectorIndex
from test_write import Letters

TEXTS = ["I use Postgres", "My sister lives in Lyon", "I prefer dark mode", "Coffee at nine",
         "I run on Sundays", "My cat is called Miso", "I work at a bakery", "I hate olives",
         "The deadline is Friday", "I speak three languages", "Tea, not coffee"]


def exact(memory, probes, line):
    vectors = {f.id: memory.embedder.embed_batch([f.text])[0] for f in memory.list()}
    out = {}
    for fact_id, v in vectors.items():
        best = max(float(np.dot(v, p) / np.linalg.norm(v) / np.linalg.norm(p)) for p in probes)
        if best >= line:
            out[fact_id] = best
    return out


def test_search_over_several_blocks_equals_exact_cosine(db_path):
    with Memory(db_path, embedder=Letters(), detect_disagreement=False,
                dedup_threshold=1.0, conflict_threshold=1.0) as m:
        for text in TEXTS:
            m.remember(text)
        index = VectorIndex(m.user, "letters", block=3)  # 11 facts: four blocks, one partial
        index.sync(m.store)
        assert len(index.blocks) == 4
        probes = Letters().embed_batch(["I like dark coffee", "Lyon on Sundays"])
        for line in (0.0, 0.8, 0.9):
            found = index.above(probes, line)
            want = exact(m, probes, line)
            assert found.keys() == want.keys()
            assert all(abs(found[k] - want[k]) < 1e-5 for k in want)


def test_index_catches_up_with_later_writes(db_path):
    with Memory(db_path, embedder=Letters(), detect_disagreement=False,
                dedup_threshold=1.0, conflict_threshold=1.0) as m:
        m.remember(TEXTS[0])
        index = VectorIndex(m.user, "letters", block=2)
        index.sync(m.store)
        later = m.remember(TEXTS[1]).fact.id, m.remember(TEXTS[2]).fact.id
        index.sync(m.store)
        probe = Letters().embed_batch([TEXTS[2]])
        assert later[1] in index.above(probe, 0.999)
        assert set(index.above(probe, -1.0)) == {f.id for f in m.list()}


def test_a_probe_of_another_dimension_finds_nothing(db_path):
    with Memory(db_path, embedder=Letters()) as m:
        m.remember(TEXTS[0])
        index = VectorIndex(m.user, "letters")
        index.sync(m.store)
        assert index.above([[1.0, 0.0]], -1.0) == {}
        assert index.above([], -1.0) == {}


def test_nearby_reads_every_cosine_through_the_floor_as_the_search_does(db_path):
    with Memory(db_path, embedder=Letters(), detect_disagreement=False,
                dedup_threshold=1.0, conflict_threshold=1.0) as m:
        for text in TEXTS:
            m.remember(text)
        index = VectorIndex(m.user, "letters", block=4)
        index.sync(m.store)
        probe = Letters().embed_batch(["I like dark coffee"])[0]
        found = index.above([probe], 0.8)
        nearby = index.nearby(probe, 0.8)
        assert {i: nearby.get(i) for i in index.ids if nearby.get(i) is not None} == found
        ranked = sorted(found, key=lambda i: (-found[i], index.row_of[i]))
        assert nearby.best(3) == ranked[:3] and nearby.best(100) == ranked
        assert nearby.get("no-such-fact") is None


def test_nearby_best_keeps_ties_in_stored_order():
    nearby = Nearby.of({"a": 0.5, "b": 0.9, "c": 0.5, "d": 0.7, "e": 0.5})
    assert nearby.best(3) == ["b", "d", "a"]
    assert nearby.best(4) == ["b", "d", "a", "c"]
    assert nearby.get("e") == 0.5


def test_planned_writes_read_every_row_as_single_searches_do(db_path):
    """An import batch's searches are scored several per pass over the matrix (`plan`); each
    still reads every row, including rows added, and vectors renewed, after that pass."""
    with Memory(db_path, embedder=Letters(), detect_disagreement=False,
                dedup_threshold=1.0, conflict_threshold=1.0) as m:
        for text in TEXTS[:7]:
            m.remember(text)
        planned = VectorIndex(m.user, "letters", block=3)
        planned.sync(m.store)
        probe_sets = [Letters().embed_batch([t, f"{t} again and again"])
                      for t in ("I like dark coffee", "Lyon on Sundays", "Miso the cat")]
        planned.plan(probe_sets)
        before = planned.above(probe_sets[0], -1.0)
        assert len(planned._ahead) == 2  # the other two writes were scored in the same pass
        added = m.remember(TEXTS[8]).fact.id
        renewed = m.list()[0].id
        with m.store.transaction(m.user):
            m.store.put_vector(renewed, "letters", struct.pack("<26f", *range(26)), 26)
        planned.sync(m.store)
        fresh = VectorIndex(m.user, "letters", block=3)
        fresh.sync(m.store)
        for probes in probe_sets[1:]:
            got, want = planned.above(probes, -1.0), fresh.above(probes, -1.0)
            assert got.keys() == want.keys() and added in got
            assert all(abs(got[k] - want[k]) < 1e-6 for k in want)
        assert added not in before and len(before) == 7
        planned.plan([])
        assert planned._ahead == {} and planned._planned == {}
