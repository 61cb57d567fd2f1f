"""Candidate search never misses what the exhaustive comparison finds (SPEC §2.2).

The same random writes, forgets and resolves go to two stores: one searching its index, one
comparing every stored fact. Every decision must be identical: the action, the fact merged into
and the facts flagged (ids mapped by creation order).
"""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ankita import AnkitaError, Embedder, Memory, Settings
from ankita.analysis._decision import compare_texts
from ankita.dev._bench import (
    _embed_rate,
    _in_child,
    _parts,
    _peak_rss_mb,
    _serving,
    import_bound,
    run_size,
)
from ankita.search._index import (
    index_terms,
    lookup_for,
)
from conftest import fresh_schema
from factgen import facts
from test_write import Letters


def run_both(tmp_path, seed, n, embedder=None, locations=None, index="index", rows=None, **options):
    rng = random.Random(seed)
    modes = (index, "exhaustive")
    where = locations or [tmp_path / f"{mode}.db" for mode in modes]
    stores = [
        Memory(place, embedder=embedder or "none", candidate_search=mode, **options)
        for place, mode in zip(where, modes, strict=True)
    ]
    order: list[list[str]] = [[], []]  # fact ids in creation order, per store
    decisions = 0
    try:
        for text, kind in rows or facts(n, seed):
            results = [m.remember(text, kind=kind) for m in stores]
            mapped = []
            for ids, result in zip(order, results, strict=True):
                if result.action != "merged":
                    ids.append(result.fact.id)
                position = {fid: i for i, fid in enumerate(ids)}
                mapped.append(
                    (
                        result.action,
                        position.get(result.merged_into or ""),
                        sorted(position[c] for c in result.conflicts_with),
                    )
                )
            assert mapped[0] == mapped[1], (text, kind, results[0].reason, results[1].reason)
            decisions += 1
            roll = rng.random()
            if roll < 0.05 and order[0]:
                k = rng.randrange(len(order[0]))
                for m, ids in zip(stores, order, strict=True):
                    try:
                        m.forget(ids[k])
                    except AnkitaError:
                        pass
            elif roll < 0.10 and len(order[0]) > 1:
                k, j = rng.sample(range(len(order[0])), 2)
                outcomes = []
                for m, ids in zip(stores, order, strict=True):
                    try:
                        m.resolve(keep=ids[k], over=ids[j])
                        outcomes.append("ok")
                    except AnkitaError as exc:
                        outcomes.append(type(exc).__name__)
                assert outcomes[0] == outcomes[1]
    finally:
        for m in stores:
            m.close()
    return decisions


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_index_and_exhaustive_decide_identically_lexical(tmp_path, seed):
    assert run_both(tmp_path, seed, 250) == 250


@pytest.mark.slow
@pytest.mark.parametrize("index", ["index", "memory", "store"])
def test_index_and_exhaustive_decide_identically_on_real_style_facts(tmp_path, index):
    """Long facts of a few named people (`ankita bench --style real`): most of a write's
    candidates open with another name, which the index leaves out (`named_apart_under`)."""
    from ankita.dev._corpus import make_facts

    real = make_facts("real", 5, 300, None, 300)
    rows = [real.next() for _ in range(300)]
    assert run_both(tmp_path, 9, 300, index=index, rows=rows) == 300


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_postings_in_memory_and_exhaustive_decide_identically(tmp_path, seed):
    """The same proof with the index's postings held in memory from the first write, caught
    up from the change log after every merge, forget and resolve (`_terms`)."""
    assert run_both(tmp_path, 300 + seed, 250, index="memory") == 250


@pytest.mark.parametrize("seed", range(2))
def test_index_and_exhaustive_decide_identically_at_other_lines(tmp_path, seed):
    """The index asks for more short facts when the conflict line is lower (docs/scale.md)."""
    assert run_both(tmp_path, 50 + seed, 250, conflict_threshold=0.5, dedup_threshold=0.8) == 250


@pytest.mark.parametrize("seed", range(2))
def test_index_and_exhaustive_decide_identically_with_vectors(tmp_path, seed):
    assert run_both(tmp_path, 100 + seed, 150, embedder=Letters()) == 150


@pytest.mark.parametrize("seed", range(2))
def test_the_vector_bound_keeps_every_decision(tmp_path, seed, monkeypatch):
    # From the 20th vector on, searches read whole only the rows their bound lets through.
    monkeypatch.setattr("ankita.search._vectors.BASIS_MIN", 20)
    monkeypatch.setattr("ankita.search._vectors.RANK", 4)
    assert run_both(tmp_path, 300 + seed, 150, embedder=Letters()) == 150


@pytest.mark.parametrize("mode", ["index", "exhaustive"])
@pytest.mark.parametrize(
    "earlier,later,check",
    [
        # No shared word: only cosine relates them, as the frame of the opposites ("after" is a
        # stop word, so the lexical tiers never file it) or of a stated change.
        ("My meetings are after lunch", "My calls are before noon", "opposites"),
        # The stored fact states a change; the new one neither negates nor states one.
        ("I no longer cycle to work", "Biking to the office daily", "change_of_state"),
    ],
)
def test_vectors_find_a_polar_partner_that_shares_no_word(tmp_path, mode, earlier, later, check):
    with Memory(tmp_path / "m.db", embedder=Letters(), candidate_search=mode) as m:
        m.remember("My cat is called Miso")
        first = m.remember(earlier)
        result = m.remember(later)
    # Found either way; a change whose slot only the cosine names is kept for review.
    linked = result.conflicts_with + result.possible_conflicts
    assert linked == (first.fact.id,) and check in result.reason
    assert (result.action == "conflict") == (check != "change_of_state")


class Sisters(Embedder):
    """A real, tiny embedder: one axis for "sister", one for "rent" (stands in for a
    provider)."""

    model_id = "sisters"

    def embed_batch(self, texts):
        return [
            [1.0 if w in t.lower() else 0.0 for w in ("sister", "rent")] + [0.01] for t in texts
        ]


@pytest.mark.parametrize("mode", ["index", "exhaustive"])
def test_vectors_skip_other_people_but_not_the_one_a_fact_names(tmp_path, mode):
    """The vector tier drops facts about someone the new fact does not name; a fact of the
    user's that names the person still meets them by cosine."""
    with Memory(tmp_path / "m.db", embedder=Sisters(), candidate_search=mode) as m:
        hers = m.remember("My sister is renting a flat in Lyon", kind="home").fact
        new = "I moved in with my sister"
        with m.store.transaction(m.user) as store:
            vector = m.embedder.embed_batch([new])[0]
            found = {
                f.id
                for f in m._search.candidates(store, new, "home", [vector], m.embedder.model_id)
            }
        assert hers.id in found
        # Found, and not flagged, however close in meaning: her renting and the user's move
        # are two people's facts (SPEC §4.4), and the move went to where she is.
        moved = m.remember(new, kind="home")
        assert moved.action == "created", moved.reason
        assert moved.conflicts_with == () and moved.possible_conflicts == ()
        # Close in meaning (renting), but about the user, who does not name the sister.
        other = m.remember("I quit renting a studio in Oslo", kind="home")
        assert other.action == "created", other.reason


@pytest.mark.parametrize(
    "seed,vectors,index",
    [(0, False, "index"), (1, False, "index"), (2, True, "index"), (3, False, "memory")],
)
@pytest.mark.slow
def test_index_and_exhaustive_decide_identically_on_postgres(postgres_url, seed, vectors, index):
    """The same proof on PostgreSQL: its term ranges and pgvector search miss nothing."""
    where = [fresh_schema(postgres_url), fresh_schema(postgres_url)]
    n = 150 if vectors else 250
    assert (
        run_both(
            None,
            200 + seed,
            n,
            embedder=Letters() if vectors else None,
            locations=where,
            index=index,
        )
        == n
    )


@pytest.mark.parametrize("mode", ["index", "exhaustive"])
def test_two_facts_that_only_end_something_meet_on_no_slot(tmp_path, mode):
    """Two endings in one frame both hold ("I quit working on Apollo" / "... on Zephyr"): no
    `value` finding, so a fact that only ends something skips the slots of such facts."""
    with Memory(tmp_path / "m.db", embedder="none", candidate_search=mode) as m:
        ended = m.remember("I quit working on Apollo", kind="work").fact
        with m.store.transaction(m.user) as store:
            found = {
                f.id
                for f in m._search.candidates(store, "I quit working on Zephyr", "work", [], None)
            }
        assert (ended.id in found) == (mode == "exhaustive")
        # A fact that does not only end something still asks the slots of those that do.
        assert m._search._question(
            lookup_for("I quit working on Zephyr now"), "work"
        ).slot_fields == (
            "s:",
            "se:",
        )
        assert m._search._question(lookup_for("I quit working on Zephyr"), "work").slot_fields == (
            "s:",
        )
        assert "se:" in {t[:3] for t in index_terms(ended.text)}
        result = m.remember("I quit working on Zephyr", kind="work")
        assert result.action == "created" and not result.conflicts_with


@pytest.mark.parametrize("mode", ["index", "exhaustive"])
@pytest.mark.parametrize("first", [0, 1])
def test_an_ending_meets_what_it_ended_on_one_shared_word(tmp_path, mode, first):
    """ "My dad quit smoking" ends what "My dad smokes cigars on the porch" asserts, and they
    share one word besides their subject: the index finds the pair either way round (`ed:`)."""
    asserted, ending = "My dad smokes cigars on the porch.", "My dad quit smoking last year."
    texts = (asserted, ending) if first == 0 else (ending, asserted)
    with Memory(tmp_path / "m.db", embedder="none", candidate_search=mode, judge="off") as m:
        stored = m.remember(texts[0]).fact
        result = m.remember(texts[1])
        assert result.action == "conflict" and result.conflicts_with == (stored.id,)
    assert "ed:" in index_terms(ending) and "ed:" not in index_terms(asserted)


@pytest.mark.parametrize("mode", ["index", "exhaustive"])
def test_two_name_bound_facts_meet_only_through_a_name(tmp_path, mode):
    """Two facts that each hold a name the other lacks and each state a change make no
    change-of-state finding, and a name opening either side keeps the name rule too: such
    facts meet only through a name. A named fact that states no change and opens with no name
    still meets a named change ("My friend is called Zeni" / "My friend Kalo moved")."""
    with Memory(tmp_path / "m.db", embedder="none", candidate_search=mode) as m:
        moved = m.remember("My friend Zeni moved to Maloburg", kind="location").fact
        called = m.remember("My friend is called Zeni", kind="location").fact
        opens = m.remember("Ilse is my friend", kind="location").fact
        both = m.remember("My friend Vera moved to Osloburg, I live in Oslo", kind="location").fact
        new = "My friend Kalo moved to Tebuburg"
        with m.store.transaction(m.user) as store:
            found = {f.id for f in m._search.candidates(store, new, "location", [], None)}
            # A fact opening with a name skips the open changes too.
            found_by_name = {
                f.id for f in m._search.candidates(store, "Olga is my friend", "location", [], None)
            }
        # A fact with a clause that states no change is not flagged, so it is still asked.
        assert found >= {called.id, both.id}
        assert (moved.id in found) == (opens.id in found) == (mode == "exhaustive")
        assert (moved.id in found_by_name) == (mode == "exhaustive")
        assert "nq:" in index_terms(moved.text) and "nq:" in index_terms(opens.text)
        assert "nq:" not in index_terms(both.text) and "nq:" not in index_terms(called.text)
        # Found, and not flagged: a move of Kalo names no slot of the friend called Zeni.
        result = m.remember(new, kind="location")
        assert result.action == "created", result.reason


@pytest.mark.parametrize("mode", ["index", "exhaustive"])
def test_initials_meet_a_name_of_at_most_one_more_letter(tmp_path, mode):
    """ "United States" may be "US" or "USA" (`_decision._initials_of`), never "Usability"."""
    with Memory(tmp_path / "m.db", embedder="none", candidate_search=mode) as m:
        usa = m.remember("Paula loves the USA", kind="work").fact
        longer = m.remember("Paula loves Usability", kind="work").fact
        # Not opening with another name: "Otto visited ..." would leave Paula's facts out.
        new = "We visited the United States"
        with m.store.transaction(m.user) as store:
            found = {f.id for f in m._search.candidates(store, new, "work", [], None)}
        assert usa.id in found and (longer.id in found) == (mode == "exhaustive")
        assert m.remember(new, kind="work").action == "created"


def test_index_sees_facts_written_by_another_connection(tmp_path):
    with (
        Memory(tmp_path / "m.db", embedder=Letters()) as first,
        Memory(tmp_path / "m.db", embedder=Letters()) as second,
    ):
        first.remember("Evil plans for Friday", kind="habit")
        second.recall("plans")  # loads second's vector index
        made = first.remember("I live in Berlin", kind="location").fact
        result = second.remember("I live in Munich", kind="location")
        assert result.conflicts_with == (made.id,)


def test_vector_index_reads_again_after_a_rollback(tmp_path):
    """The index read a vector of a transaction that rolled back; the next write takes its
    sequence number again, and must still be found (here by its vector alone)."""
    with Memory(tmp_path / "m.db", embedder=Letters()) as m:
        m.remember("My cat is called Miso")
        with pytest.raises(RuntimeError), m.store.transaction(m.user):
            m.remember("Evil plans for Friday", kind="habit")
            m.remember("I keep bees on the roof", kind="hobby")  # its search reads the above
            raise RuntimeError("abandoned")
        first = m.remember("My meetings are after lunch")
        result = m.remember("My calls are before noon")
    assert result.conflicts_with == (first.fact.id,)


def test_index_is_built_for_an_existing_store(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    with Memory(path, embedder="none") as m:
        m.remember("I use Postgres")
    con = sqlite3.connect(path)
    con.execute("DELETE FROM terms")  # as if written before the index existed
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.execute("DROP TABLE terms")
    con.commit()
    con.close()
    with Memory(path, embedder="none") as m:
        assert m.remember("I use PostgreSQL").action == "merged"


def _pool():
    from test_properties import PHRASES

    pool = (
        [t for t, _ in facts(300, 11)]
        + PHRASES
        + [
            "The turtle follows the fish today",
            "The fish follows the turtle today",
            "I quit coffee",
            "I drink coffee every morning",
            "I'm vegetarian",
            "I started eating meat again",
            "My name is Ravi",
            "My name is Arjun",
            "I'm 28",
            "I'm 35 years",
            "I no longer drive to work on Mondays",
            "I drive to work",
        ]
    )
    return st.sampled_from(pool)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(_pool(), _pool(), st.booleans(), st.sampled_from(["fact", "tool"]))
def test_the_analysis_gate_never_changes_a_decision(a, b, plain, kind_a):
    chosen = Settings(detect_disagreement=not plain)
    gated = compare_texts(b, "fact", a, kind_a, chosen)
    full = compare_texts(b, "fact", a, kind_a, chosen, analyse_all=True)
    assert gated.action == full.action, (a, b, full.reason)


@pytest.mark.slow
def test_bench_command_prints_the_documented_json(db):
    import json

    from click.testing import CliRunner

    from ankita.cli import cli

    result = CliRunner().invoke(
        cli,
        [
            "--db",
            db,
            "--embedder",
            "none",
            "bench",
            "--facts",
            "60",
            "--writes",
            "20",
            "--writers",
            "2",
            "--writer-writes",
            "10",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert report["backend"] == ("postgresql" if db.startswith("postgresql") else "sqlite")
    concurrent = report["concurrent"]
    assert concurrent["different_users_facts_per_s"] > 0
    assert concurrent["same_user_facts_per_s"] > 0
    run = report["runs"][0]
    for field in (
        "facts",
        "reference_ms",
        "remember_p50_ms",
        "remember_p95_ms",
        "recall_p50_ms",
        "recall_p95_ms",
        "import_facts_per_s",
        "peak_rss_mb",
        "exhaustive_speedup",
        "decisions_identical",
        "postings_load_s",
        "serving_peak_rss_mb",
        "serving_remember_p50_ms",
        "serving_recall_p50_ms",
    ):
        assert field in run, field
    assert run["facts"] == 60 and run["decisions_identical"] is True
    assert run["serving_peak_rss_mb"] > 0 and run["serving_remember_p50_ms"] > 0
    assert run["reference_ms"] > 0
    # The import's thread spends at most the import's own time on the CPU (2% for rounding).
    assert 0 < run["import_write_cpu_ms_per_fact"] <= 1020 / run["import_facts_per_s"]
    assert run["analysis_ms_per_fact"] > 0


def test_a_child_process_reports_its_own_peak_memory_not_its_parents():
    """Linux carries `ru_maxrss` across exec: a child started by a bench process that holds a
    large store would report that process's memory as its own."""
    ballast = b"\1" * (256 * 2**20)  # written, so resident, not just reserved
    status, peak = _in_child(_peak_rss_mb)
    assert status == "ok" and 0 < peak < 200, peak
    assert _peak_rss_mb() > len(ballast) / 2**20


def test_the_serving_process_writes_and_recalls_on_the_built_store(tmp_path):
    """The bench's serving figures come from writes that land in the built store and from
    recalls that read it, each timed once."""
    place = str(tmp_path / "built.db")
    with Memory(place, embedder="none") as memory:
        memory.remember("I live in Lyon")
    served = _serving(
        place,
        "none",
        "auto",
        [("I drink tea at noon", "fact"), ("I live in Lyon", "fact")],
        ["Lyon", "tea"],
    )
    assert len(served["remember_ms"]) == 2 and len(served["recall_ms"]) == 2
    assert served["peak_rss_mb"] > 0
    with Memory(place, embedder="none") as memory:
        facts = memory.list()
        assert sorted(f.text for f in facts) == ["I drink tea at noon", "I live in Lyon"]
        assert [f.mentions for f in facts if f.text == "I live in Lyon"] == [2]


@pytest.mark.slow
def test_the_reference_runs_in_parts_and_still_reads_every_write(db):
    """Cut in parts that run side by side, each from a copy of the store as the index left
    it, the reference still decides every write; a part that decided otherwise shows."""
    assert _parts(7, 3) == [(0, 3), (3, 6), (6, 7)] and _parts(0, 2) == []
    assert _parts(5, 1) == [(0, 5)]
    run = run_size(
        120, "none", 40, 40, server=db if db.startswith("postgresql") else None, workers=2
    )
    assert run["exhaustive_parts"] == 2 and run["decisions_compared"] == 40
    assert run["decisions_identical"] is True and run["exhaustive_speedup"] > 0


def test_bench_plots_latency_against_store_size(tmp_path):
    from click.testing import CliRunner

    from ankita.cli import cli

    chart = tmp_path / "latency.png"
    result = CliRunner().invoke(
        cli,
        [
            "--embedder",
            "none",
            "bench",
            "--facts",
            "30,60",
            "--writes",
            "10",
            "--writers",
            "0",
            "--plot",
            str(chart),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_measures_the_embedders_own_throughput(tmp_path):
    """With an embedder, import is compared with what embedding alone reaches."""
    texts = [f"fact number {i}" for i in range(300)]
    with Memory(tmp_path / "a.db", embedder=Letters()) as memory:
        rate, cpu_ms = _embed_rate(memory, texts)
        assert rate > 0 and cpu_ms > 0
    with Memory(tmp_path / "b.db", embedder="none") as memory:
        assert _embed_rate(memory, texts) is None


def test_the_import_bound_shares_the_cores_and_keeps_the_writes_in_order():
    # Two cores, 5 ms of CPU to embed a fact and 2.5 ms to write it: the cores' time binds.
    assert import_bound(2.5, 5.0, 2) == pytest.approx(2000 / 7.5)
    # Eight cores and slow writes: one writer, one fact after another, binds.
    assert import_bound(3.0, 1.0, 8) == pytest.approx(1000 / 3)
    assert import_bound(0.0, 4.0, 2) == pytest.approx(500)
    assert import_bound(0.0, 0.0, 2) == math.inf


def _named_pool():
    from ankita.dev._corpus import make_facts

    real = make_facts("real", 3, 400, None, 400)
    return st.sampled_from(
        [real.next()[0] for _ in range(400)]
        + [
            "Jon thanks Gina for her help",
            "Gina supports Jon with his shop",
            "Gina does not support Jon anymore",
            "Locker 12 code is 4821",
            "Locker 13 code is 4821",
            "Locker 12 code is 9000",
            "Caroline is not going to the concert, and Melanie is",
            "Melanie moved to Lyon; Caroline stayed in Paris",
            "Caroline moved to Lyon",
            "Melanie lives in Paris",
            # Each names the other's person: one clause of each may still disagree.
            "Jon visited Gina at her new flat in the old town last winter. The bakery "
            "downstairs sells bread",
            "Gina thanked Jon for the lovely flowers and the long walk by the river. The "
            "bakery does not sell bread",
        ]
    )


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(
    _named_pool(),
    _named_pool(),
    st.one_of(st.none(), st.floats(0, 1)),
    st.sampled_from(["fact", "tool"]),
)
def test_two_facts_named_apart_are_never_compared_into_a_merge_or_conflict(a, b, cos, kind_a):
    # The write skips such pairs (`_gates.named_apart`): every analysis, any cosine, creates.
    from ankita.analysis._gates import named_apart

    model = None if cos is None else "test-model"
    chosen = Settings(embedding_lines={"test-model": (0.9, 0.7)})
    full = compare_texts(b, "fact", a, kind_a, chosen, cos, model, analyse_all=True)
    if named_apart(a, b):
        assert full.action == "create", (a, b, full.reason)


def test_facts_that_name_each_others_person_are_still_compared():
    from ankita.analysis._gates import named_apart

    a = (
        "Jon visited Gina at her new flat in the old town last winter. The bakery downstairs "
        "sells bread"
    )
    b = (
        "Gina thanked Jon for the lovely flowers and the long walk by the river. The bakery "
        "does not sell bread"
    )
    assert not named_apart(a, b)
    assert named_apart(a, "Gina thanked Sam for the flowers. The bakery does not sell bread")
    assert compare_texts(b, "fact", a, "fact", Settings()).action == "conflict"


@pytest.mark.parametrize("mode", ["index", "memory", "store"])
def test_the_index_leaves_out_facts_about_another_named_person(tmp_path, mode):
    stored = [
        "Gina went camping with her family at the lake last summer",
        "Melanie went camping with her family at the lake last summer",
        "Melanie went camping with Caroline at the lake last summer",
        "We went camping at the lake with the kids last summer",
    ]
    with Memory(tmp_path / "m.db", embedder="none", candidate_search=mode) as m:
        assert {m.remember(text).action for text in stored} <= {"created", "conflict"}
        new = "Caroline went camping with Melanie and her kids at the lake last summer"
        with m.store.transaction(m.user) as store:
            found = {f.text for f in m._search.candidates(store, new, "fact", [], None)}
        # Gina's fact is about someone the new one does not name; Melanie's are read (the
        # write then skips the one that does not name Caroline), and so is the unnamed one.
        assert found == set(stored[1:])
        assert m.remember(new).reason.startswith("same fact")
