"""The in-memory copy of the postings (`_terms.TermIndex`) stays in step with the store.

Whatever changes a fact's postings (a write, a merge, a forget, an undo, another process, a
rolled-back transaction), the next write through the copy decides as the store would have.
tests/test_term_query.py checks its answers against the definition; tests/test_scale.py runs
the random writes of the exhaustive comparison through it.
"""

import pytest

from ankita import InvalidInput, Memory
from ankita.search._candidates import LOAD_AFTER
from ankita.search._index import (
    index_terms,
)
from ankita.search._terms import TermIndex


def memory(path, mode="memory"):
    return Memory(path, embedder="none", candidate_search=mode)


def test_a_write_by_another_connection_is_found(tmp_path):
    with memory(tmp_path / "m.db") as first, memory(tmp_path / "m.db") as second:
        second.remember("My sister lives in Lyon")  # second holds the postings from here on
        assert second._search.terms.loaded
        made = first.remember("I use Postgres at work").fact
        result = second.remember("I use PostgreSQL at work")
        assert (result.action, result.merged_into) == ("merged", made.id)


def test_a_merge_that_grows_a_fact_is_followed(tmp_path):
    with memory(tmp_path / "m.db") as first, memory(tmp_path / "m.db") as second:
        second.remember("My sister lives in Lyon")
        made = first.remember("I prefer dark mode in editors").fact
        second.remember("I water the garden on Sundays")  # reads the fact as first written
        grown = first.remember("I prefer dark mode in editors and terminals")
        assert grown.action == "merged" and "terminals" in grown.fact.text
        result = second.remember("I prefer dark mode in editors and terminals")
        assert (result.action, result.merged_into) == ("merged", made.id)
        terms = second._search.terms
        assert any("terminal" in term for term in terms.held[terms.number[made.id]])


def test_a_forgotten_fact_and_its_undo_are_followed(tmp_path):
    with memory(tmp_path / "m.db") as first, memory(tmp_path / "m.db") as second:
        made = second.remember("I drink coffee every morning").fact
        second.remember("My cat sleeps all day")  # reads the fact
        first.forget(made.id)
        second.remember("My sister lives in Lyon")  # reads the forget
        terms = second._search.terms
        assert terms.held[terms.number[made.id]] == ()
        first.undo(first.history(made.id)[-1].id)  # the fact is back
        result = second.remember("I drink coffee every single morning")
        assert made.id in {result.merged_into, *result.conflicts_with}


def test_a_rolled_back_write_is_read_again(tmp_path):
    """A copy read the rows of a transaction that rolled back; their sequence numbers are
    taken again by the next writes, which it must not skip."""
    with memory(tmp_path / "m.db") as m:
        m.remember("I water the garden on Sundays")
        with pytest.raises(RuntimeError), m.store.transaction(m.user):
            m.remember("I collect old maps")
            m.remember("My cat sleeps all day")  # this lookup reads the row above
            raise RuntimeError("abandoned")
        made = m.remember("I play chess with my brother").fact
        result = m.remember("I play chess with my brother on Fridays")
        assert (result.action, result.merged_into) == ("merged", made.id)
        assert m.remember("I collect old maps").action == "created"


def test_the_number_of_a_rolled_back_filing_taken_by_another_connection(tmp_path):
    """This connection's own filings are taken instead of reading them back; after a
    rollback, the number of one of them may be another connection's next write."""
    with memory(tmp_path / "m.db") as first, memory(tmp_path / "m.db") as second:
        first.remember("I water the garden on Sundays")
        with pytest.raises(RuntimeError), first.store.transaction(first.user):
            first.remember("I collect old maps")
            raise RuntimeError("abandoned")
        with first.store.transaction(first.user):
            first._search.terms.sync(first.store)  # reloaded, up to the write before
        made = second.remember("I play chess with my brother").fact  # takes that number
        result = first.remember("I play chess with my brother on Fridays")
        assert (result.action, result.merged_into) == ("merged", made.id)


def test_own_filings_are_taken_without_reading_them_back(tmp_path):
    with memory(tmp_path / "m.db") as m:
        m.remember("I water the garden on Sundays")
        terms = m._search.terms
        reads = []
        original = m.store.terms_of
        m.store.terms_of = lambda ids, fields=None: reads.append(ids) or original(ids, fields)
        made = m.remember("I play chess with my brother").fact
        result = m.remember("I play chess with my brother on Fridays")
        assert (result.action, result.merged_into) == ("merged", made.id)
        assert not reads
        assert set(terms.held[terms.number[made.id]]) == index_terms(made.text)


def test_postings_move_into_memory_after_a_few_writes(tmp_path):
    with memory(tmp_path / "m.db", "index") as m:
        for i in range(LOAD_AFTER):
            m.remember(f"My locker number {i} is by door {i}")
        assert not m._search.terms.loaded
        m.remember("My locker is blue")
        assert m._search.terms.loaded
        assert m.remember("My locker is blue").action == "merged"
    with memory(tmp_path / "s.db", "store") as m:
        for i in range(LOAD_AFTER + 2):
            m.remember(f"My locker number {i} is by door {i}")
        assert not m._search.terms.loaded


def test_an_unknown_mode_is_refused(tmp_path):
    with pytest.raises(InvalidInput, match="'memory'"):
        Memory(tmp_path / "m.db", embedder="none", candidate_search="ram")
    assert not (tmp_path / "m.db").exists()


def test_a_copy_answers_only_for_its_user(tmp_path):
    with memory(tmp_path / "m.db") as m:
        m.remember("I use Postgres")
        index = TermIndex("someone else")
        index.sync(m.store)
        assert index.ids == []
        with pytest.raises(ValueError, match="someone else"):
            index.postings("default", ["c:postgres"], [])
