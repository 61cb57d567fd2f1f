"""SPEC §6: relevance, pins, staleness, conflict partners, the exact notice, the prompt."""

import random

import pytest

from ankita import NOTICE, InvalidInput, Memory


def test_notice_text_is_exact():
    assert NOTICE == (
        "Some facts conflict with each other. "
        "Ask the user which is current instead of asserting either."
    )


def test_relevant_facts_rank_first(memory):
    memory.remember("I use Postgres for the billing service", kind="tool")
    memory.remember("My cat is called Miso", kind="pet")
    memory.remember("I drink green tea", kind="habit")
    result = memory.recall("postgres billing")
    assert result.facts[0].fact.text == "I use Postgres for the billing service"
    assert all("Miso" not in r.fact.text for r in result.facts)


def test_pinned_facts_are_always_included(memory):
    memory.remember("My name is Ravi", kind="identity", pinned=True)
    for i in range(12):
        memory.remember(f"Project {i} uses Postgres version {i + 9}", kind=f"k{i}")
    result = memory.recall("Postgres", limit=3)
    texts = [r.fact.text for r in result.facts]
    assert "My name is Ravi" in texts
    assert len([r for r in result.facts if not r.pinned]) == 3


def test_stale_facts_are_marked_and_ranked_lower_but_pins_never_go_stale(memory, clock):
    old = memory.remember("I use Postgres at work", kind="tool").fact
    pinned = memory.remember("I use Vim for Postgres scripts", kind="editor", pinned=True).fact
    clock.advance(days=200)
    fresh = memory.remember("Postgres at work runs on version 16", kind="infra").fact
    result = memory.recall("postgres at work")
    by_id = {r.fact.id: r for r in result.facts}
    assert by_id[old.id].stale
    assert not by_id[pinned.id].stale
    assert not by_id[fresh.id].stale
    order = [r.fact.id for r in result.facts]
    assert order.index(fresh.id) < order.index(old.id)


def test_a_merge_refreshes_staleness(memory, clock):
    memory.remember("I use Postgres")
    clock.advance(days=200)
    memory.remember("Database is Postgres")
    assert not memory.recall("postgres").facts[0].stale


def test_conflict_partners_are_pulled_in_and_the_notice_needs_the_query_on_both(memory):
    a = memory.remember("I use Postgres", kind="tool").fact
    b = memory.remember("I switched from Postgres to SQLite", kind="tool").fact
    result = memory.recall("SQLite")
    ids = [r.fact.id for r in result.facts]
    assert ids == [b.id, a.id]
    assert result.facts[1].via_conflict
    assert result.conflicts == (tuple(sorted((a.id, b.id))),)
    # The partner is shown, marked, but only a query that reaches both sides asks the user.
    assert result.notice is None and "CONFLICTS with" in result.to_prompt()
    both = memory.recall("Postgres")
    assert not any(r.via_conflict for r in both.facts) and both.notice == NOTICE


def test_a_pinned_conflict_raises_the_notice_only_when_the_query_is_about_it(memory):
    memory.remember("I am allergic to peanuts", pinned=True)
    memory.remember("I am not allergic to peanuts", pinned=True)
    memory.remember("My favourite colour is green")
    colour = memory.recall("favourite colour")
    assert colour.facts[0].fact.text == "My favourite colour is green"
    assert len(colour.facts) == 3 and colour.conflicts and colour.notice is None
    assert memory.recall("allergic to peanuts").notice == NOTICE


def test_to_prompt_marks_conflicts_and_ends_with_the_notice(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    prompt = memory.recall("I live in Munich").to_prompt()
    lines = prompt.splitlines()
    assert lines[-1] == NOTICE
    assert f"- [{b.id}] I live in Munich (CONFLICTS with [{a.id}])" in lines
    assert f"- [{a.id}] I live in Berlin (CONFLICTS with [{b.id}])" in lines


def test_no_notice_without_conflicts(memory):
    memory.remember("I live in Berlin")
    result = memory.recall("Berlin")
    assert result.notice is None
    assert NOTICE not in result.to_prompt()


def test_kinds_filter(memory):
    memory.remember("I use Postgres", kind="tool")
    memory.remember("Postgres meetups on Tuesdays", kind="habit")
    result = memory.recall("postgres", kinds=["habit"])
    assert [r.fact.kind for r in result.facts] == ["habit"]


def test_query_without_content_words_returns_recent_facts(memory, clock):
    memory.remember("I live in Berlin")
    clock.advance(minutes=1)
    memory.remember("My cat is called Miso")
    result = memory.recall("what about me?", limit=1)
    assert [r.fact.text for r in result.facts] == ["My cat is called Miso"]


@pytest.mark.parametrize("query", ['"', "*", "NEAR(a b)", "a AND OR NOT", ";--", "x' OR 1=1"])
def test_search_syntax_in_queries_is_just_text(memory, query):
    memory.remember("I use Postgres")
    assert memory.recall(query).facts is not None


def test_bad_recall_arguments(memory):
    for bad in (0, 201, "5", True):
        with pytest.raises(InvalidInput):
            memory.recall("x", limit=bad)
    with pytest.raises(InvalidInput):
        memory.recall(None)
    with pytest.raises(InvalidInput):
        memory.recall("x", kinds=["Not A Kind"])


def test_empty_store_recalls_nothing(memory):
    result = memory.recall("anything")
    assert result.facts == () and result.to_prompt() == ""


def test_list_search_limit_and_bad_arguments(memory, clock):
    memory.remember("I drink green tea")
    memory.remember("Ich wohne in MÜNCHEN")
    assert [f.text for f in memory.list(search="Tea")] == ["I drink green tea"]
    assert [f.text for f in memory.list(search="MÜNCHEN")] == ["Ich wohne in MÜNCHEN"]
    assert len(memory.list(limit=1)) == 1
    for bad in [
        {"limit": 0},
        {"limit": True},
        {"limit": "3"},
        {"search": 5},
        {"search": "x" * 2001},
    ]:
        with pytest.raises(InvalidInput):
            memory.list(**bad)
    fact = memory.list()[0]
    assert not memory.is_stale(fact)
    clock.advance(days=400)
    assert memory.is_stale(fact)


def test_another_users_better_matches_do_not_crowd_out_ours(db):
    """The full-text ranking first looks at the best matches of every user; when another user
    holds more of them than recall keeps, ours must still be found."""
    rng = random.Random(5)
    letters = "bcdfghjklmnpqrstvwxz"
    with Memory(db, user="other", embedder="none") as other:
        other.remember_many(
            [
                {"text": "".join(rng.choice(letters) for _ in range(7)) + " coffee"}
                for _ in range(450)
            ]
        )
    with Memory(db, user="me", embedder="none") as me:
        mine = me.remember("I drink my coffee slowly at my desk every single morning").fact
        forgotten = me.remember("Coffee tasting notes from the old roastery downtown").fact
        me.forget(forgotten.id)
        found = me.recall("coffee")
    assert [f.fact.id for f in found.facts] == [mine.id]


def test_search_returns_the_best_of_our_active_facts_whichever_rows_it_reads(tmp_path):
    """The full-text search reads the best matches of every user a chunk at a time; whether
    the first chunk, both chunks or the join answer, the facts are this user's best active
    ones, in rank order, exactly as ranking the join over all of them gives."""
    db = str(tmp_path / "memory.db")
    rng = random.Random(11)
    letters = "bcdfghjklmnpqrstvwxz"

    def filler(count: int) -> str:
        return " ".join("".join(rng.choice(letters) for _ in range(6)) for _ in range(count))

    for user, count in (("other", 150), ("me", 300)):
        with Memory(db, user=user, embedder="none") as memory:
            # Lengths vary, so the two users' facts interleave in bm25 order.
            memory.remember_many(
                [{"text": f"coffee {filler(rng.randint(1, 9))}"} for _ in range(count)]
            )
    with Memory(db, user="me", embedder="none") as me:
        for fact in me.list()[::3]:
            me.forget(fact.id)
        joined = [
            r[0]
            for r in me.store.query(
                "SELECT f.id FROM facts_fts JOIN facts f ON f.seq = facts_fts.rowid WHERE "
                "facts_fts MATCH '\"coffee\"*' AND f.user = 'me' AND f.status = 'active' "
                "ORDER BY bm25(facts_fts), f.seq"
            )
        ]
        assert len(joined) == 200
        for limit in (5, 120, 200):
            found = me.store.search("me", ["coffee"], limit)
            assert [f.id for f, _ in found] == joined[:limit]
            assert all(f.user == "me" and f.status == "active" for f, _ in found)
            assert [r for _, r in found] == sorted(r for _, r in found)


def test_equal_scores_come_newest_confirmed_first_whatever_the_ids(memory, clock):
    # Ids are random: ordering ties by them made one memory answer in another order each run.
    animals = ["cat", "dog", "owl", "fox", "rat", "bee"]
    for animal in animals:
        memory.remember(f"My {animal} chases kayaks", kind=animal)
        clock.advance(minutes=1)
    recalled = memory.recall("kayaks", limit=10).facts
    assert len({r.score for r in recalled}) == 1
    assert [r.fact.kind for r in recalled] == animals[::-1]
