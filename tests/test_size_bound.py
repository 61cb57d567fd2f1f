"""The size bound of the two-shared-word asks (docs/scale.md, tier 1): a long fact needs more
shared words to decide against another long one, and every part a comparison may read of
either text keeps its own, smaller size."""

from __future__ import annotations

import pytest

from ankita import Memory
from ankita.analysis._gates import frames_may_reach
from ankita.search._index import groups_needed, index_terms, lookup_for, smallest_core

LINES = (0.3, 0.45, 0.5, 0.55, 0.7, 0.9)


@pytest.mark.parametrize("line", LINES)
def test_the_table_holds_the_least_count_whose_frames_may_reach_the_line(line):
    for core in range(25):
        table = groups_needed(core, line)
        for k in range(60):
            needed = table[min(k, len(table) - 1)]
            least = next(s for s in range(2, 100) if frames_may_reach(s, core, k, line))
            assert needed == least, (core, k, line)
            # Monotone: more shared words never stop the frames from reaching.
            assert all(frames_may_reach(s, core, k, line) for s in range(least, least + 20))


def _found_and_decided(tmp_path, old: str, new: str, kind: str = "hobby"):
    """For each of the index and the exhaustive comparison: whether the search hands `old`
    to the write of `new`, and what the write then does."""
    seen = []
    for mode in ("index", "exhaustive"):
        with Memory(tmp_path / f"{mode}.db", embedder="none", candidate_search=mode) as m:
            stored = m.remember(old, kind=kind).fact
            with m.store.transaction(m.user) as store:
                found = {f.id for f in m._search.candidates(store, new, kind, [], None)}
            result = m.remember(new, kind=kind)
            seen.append((stored.id in found, result.action, result.conflicts_with == (stored.id,)))
    return seen


def test_two_long_facts_sharing_two_words_are_not_compared(tmp_path):
    old = "Fishermen sell jazz records at the harbour market to tourists who swim at the beach"
    new = "Our neighbours play jazz by the harbour for hikers heading toward the mountain trail"
    index, exhaustive = _found_and_decided(tmp_path, old, new)
    assert index == (False, "created", False)
    assert exhaustive == (True, "created", False)


def test_a_short_clause_of_a_stored_fact_is_sized_on_its_own(tmp_path):
    """The stored fact is long, but its first clause is short and states what the new fact
    ends: the clause conflict needs only the three words they share."""
    old = (
        "I collect jazz vinyl records, and on weekends I drive out to flea markets across "
        "the whole region with my brother"
    )
    new = "I no longer collect jazz records from Brazil"
    assert smallest_core(old) < 5 < len([t for t in index_terms(old) if t.startswith("c:")])
    assert f"k:{smallest_core(old)}" in index_terms(old)
    index, exhaustive = _found_and_decided(tmp_path, old, new)
    assert index == exhaustive == (True, "conflict", True)


def test_a_chat_turn_asks_with_the_smallest_of_its_parts(tmp_path):
    """Six shared words, three in each clause of one sentence of a chat turn: neither clause
    shares enough on its own, so the whole turn asks with the size of its smallest part."""
    old = "Fishermen sell jazz records at the harbour market to tourists who swim at the beach"
    new = (
        "Most weekends my family drives to the coast and swims at the beach, and there we "
        "hunt for jazz records at the harbour market. It was lovely."
    )
    index, exhaustive = _found_and_decided(tmp_path, old, new)
    assert index == exhaustive == (True, "created", False)


def test_a_text_holding_an_opposite_asks_for_two_words_whatever_its_size(tmp_path):
    """An opposite pair is a finding of its own (`_gates.could_conflict`): a text holding a
    word with an opposite keeps the plain rule of two shared words."""
    with Memory(tmp_path / "m.db", embedder="none") as m:
        long_text = "Every winter my family drives to the coast and swims in the cold sea there"
        lookup = lookup_for(long_text)
        assert lookup.opposed_slot
        question = m._search._question(lookup, "hobby", smallest_core(long_text))
        two_words = [a for a in question.asks if a.at_least == 2]
        assert two_words and all(a.by_size == () for a in two_words)
        plain = "Most weekends my family drives to the coast and swims at the beach"
        assert not lookup_for(plain).opposed_slot
        question = m._search._question(lookup_for(plain), "hobby", smallest_core(plain))
        assert any(a.by_size for a in question.asks if a.at_least == 2)
