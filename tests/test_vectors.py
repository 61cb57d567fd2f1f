"""The in-memory vector index: exact cosine search over a store's vectors, block by block."""

import struct

import numpy as np

from ankita import Memory
from ankita.search._vectors import Narrow, Nearby, VectorIndex
from test_write import Letters

TEXTS = [
    "I use Postgres",
    "My sister lives in Lyon",
    "I prefer dark mode",
    "Coffee at nine",
    "I run on Sundays",
    "My cat is called Miso",
    "I work at a bakery",
    "I hate olives",
    "The deadline is Friday",
    "I speak three languages",
    "Tea, not coffee",
]


def exact(memory, probes, line):
    vectors = {f.id: memory.embedder.embed_batch([f.text])[0] for f in memory.list()}
    out = {}
    for fact_id, v in vectors.items():
        best = max(float(np.dot(v, p) / np.linalg.norm(v) / np.linalg.norm(p)) for p in probes)
        if best >= line:
            out[fact_id] = best
    return out


def test_search_over_several_blocks_equals_exact_cosine(db_path):
    with Memory(
        db_path,
        embedder=Letters(),
        detect_disagreement=False,
        dedup_threshold=1.0,
        conflict_threshold=1.0,
    ) as m:
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
    with Memory(
        db_path,
        embedder=Letters(),
        detect_disagreement=False,
        dedup_threshold=1.0,
        conflict_threshold=1.0,
    ) as m:
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
    with Memory(
        db_path,
        embedder=Letters(),
        detect_disagreement=False,
        dedup_threshold=1.0,
        conflict_threshold=1.0,
    ) as m:
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
    with Memory(
        db_path,
        embedder=Letters(),
        detect_disagreement=False,
        dedup_threshold=1.0,
        conflict_threshold=1.0,
    ) as m:
        for text in TEXTS[:7]:
            m.remember(text)
        planned = VectorIndex(m.user, "letters", block=3)
        planned.sync(m.store)
        probe_sets = [
            Letters().embed_batch([t, f"{t} again and again"])
            for t in ("I like dark coffee", "Lyon on Sundays", "Miso the cat")
        ]
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


WORDS = [
    "postgres",
    "lyon",
    "sister",
    "coffee",
    "sunday",
    "miso",
    "bakery",
    "olives",
    "friday",
    "zebra",
    "quartz",
    "jukebox",
    "waffle",
    "kayak",
    "vixen",
    "gym",
]


def _store_of(path, count):
    """A store of `count` facts of 1-3 random words, with vectors of letter counts."""
    import random

    rng = random.Random(5)
    with Memory(
        path,
        embedder=Letters(),
        detect_disagreement=False,
        dedup_threshold=1.0,
        conflict_threshold=1.0,
    ) as m:
        for n in range(count):
            words = rng.sample(WORDS, rng.randint(1, 3))
            kind = "tool" if n % 5 == 0 else "fact"
            m.remember(" ".join(words) + f" number{n}", kind=kind)
    return path


def test_the_bound_skips_rows_and_keeps_every_search_exact(tmp_path):
    """Once an index holds `basis_min` rows, a search with a floor reads whole only the rows
    whose bound from a few directions reaches it; every search finds what a full pass finds.
    Three directions of 26 leave most of each row out, so the bound is loose here and both
    paths (rows skipped, blocks read whole) are taken."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ankita.store._sqlite import SQLiteStore

    store = SQLiteStore(str(_store_of(tmp_path / "m.db", 60)))
    user = "default"
    full = VectorIndex(user, "letters", flag="q:", tag_prefixes=("p:",), block=8, basis_min=10**9)
    bounded = VectorIndex(
        user, "letters", flag="q:", tag_prefixes=("p:",), block=8, basis_min=40, rank=3
    )
    full.sync(store)
    bounded.sync(store)
    assert bounded.basis is not None and full.basis is None
    kinds = {}
    skipped = []

    def read_kinds():
        kinds.update(store._run("SELECT id, kind FROM facts").fetchall())

    read_kinds()

    @settings(max_examples=300, deadline=None)
    @given(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.floats(-0.2, 1.0),
        st.floats(-0.2, 1.0),
        st.sampled_from(["fact", "tool"]),
        st.booleans(),
    )
    def run(words, line, merge_line, kind, every):
        probes = Letters().embed_batch([" ".join(words), words[0]])
        narrow = Narrow(max(line, merge_line), kind, frozenset(), every=every)
        for index in (full, bounded):
            index._last = None
        every_score = full.above(probes, -1.0)
        for chosen in (None, narrow):
            got, want = bounded.above(probes, line, chosen), full.above(probes, line, chosen)
            assert got.keys() == want.keys()
            assert all(abs(got[k] - want[k]) < 1e-5 for k in want)
            # The definition: at or above the line, and below `narrow`'s line only a fact of
            # its kind (no fact here carries the flag or a tag).
            assert want.keys() == {
                i
                for i, cos in every_score.items()
                if cos >= line
                and (chosen is None or cos >= chosen.line or (every and kinds[i] == kind))
            }
        skipped.append(int((bounded._last[2] == -1.0).sum()))
        near, near_full = bounded.nearby(probes[0], line), full.nearby(probes[0], line)
        assert near.best(5) == near_full.best(5)
        assert bounded.closest(probes, kind, line, 4) == full.closest(probes, kind, line, 4)

    try:
        run()
        # Later rows are projected too, on the directions found before.
        with Memory(
            store.path,
            embedder=Letters(),
            detect_disagreement=False,
            dedup_threshold=1.0,
            conflict_threshold=1.0,
        ) as m:
            for n in range(12):
                m.remember(f"{WORDS[n]} {WORDS[-n]} later{n}")
        full.sync(store)
        bounded.sync(store)
        read_kinds()
        run()
    finally:
        store.close()
    assert max(skipped) > 0  # the bound did skip rows
