"""The index's questions are answered as their definition says (`_query.TermQuery`).

Random postings go into a real store; random questions are answered through the store's few
statements and the query's counting, by the in-memory copy of the postings (`_terms`) loaded
afresh and caught up from the change log, and by reading the definition of `Ask` and
`Question` against every posting. Words are drawn from two letters, so that many are prefixes
of others, and are often longer than a run (`_ask.RUN`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ankita.analysis._slots import (
    NARROW,
)
from ankita.search._index import (
    _group,
)
from ankita.search._query import (
    Question,
    TermQuery,
)
from ankita.search._terms import TermIndex
from ankita.store._ask import (
    RUN,
    Ask,
    Group,
)
from ankita.store._postgres import PostgresStore
from ankita.store._sqlite import SQLiteStore
from conftest import fresh_schema

TOP = "\U0010ffff"
FIELDS = ("c:", "o:", "n:", "h1:", "")
# Words around the length at which a long word's prefixes are read as one range (`RUN`),
# many of them prefixes of each other, and now and then any word of two letters.
POOL = (
    "a",
    "ab",
    "aba",
    "abab",
    "ababa",
    "ababab",
    "abababa",
    "abababaa",
    "abababab",
    "ababababa",
    "ababababb",
    "ababababab",
    "abababababb",
    "ababaaaaaaa",
    "abba",
    "abbabababab",
    "b",
    "babababababa",
)
words = st.one_of(st.sampled_from(POOL), st.text("ab", min_size=1, max_size=11))
# Groups as the index builds them (a word, its prefixes, its extensions), or any sets.
groups = st.one_of(
    st.builds(lambda ws: _group(set(ws)), st.frozensets(words, min_size=1, max_size=2)),
    st.builds(
        Group,
        st.frozensets(words, max_size=3),
        st.frozensets(words, max_size=2),
        st.one_of(st.none(), st.integers(1, 12)),
    ),
)
# An ask may leave out the facts filed under a flag: one of two, or a term some asks read.
FLAGS = ("nq:", "q:", "c:ab")
# A fact's size: one as filed, and now and then two or a large one.
SIZES = ("k:0", "k:1", "k:2", "k:3", "k:12")
asks = st.builds(
    Ask,
    st.lists(st.sampled_from(FIELDS), min_size=0, max_size=2, unique=True).map(tuple),
    st.lists(groups, max_size=3).map(tuple),
    st.integers(0, 3),
    st.booleans(),
    st.one_of(st.none(), st.sampled_from(FLAGS)),
    # Groups needed by the size a fact is filed under (`_ask.SIZE`).
    st.lists(st.integers(0, 4), max_size=4).map(tuple),
)
slots = st.lists(
    st.tuples(st.sampled_from(("k1", "k2")), st.frozensets(words, max_size=2), st.booleans()),
    max_size=2,
).map(tuple)
SLOT_FIELDS = ("s:", "se:")
questions = st.lists(
    st.builds(
        Question,
        st.lists(asks, max_size=4).map(tuple),
        st.lists(asks.map(lambda a: Ask(a.fields, a.groups, a.at_least)), max_size=2).map(tuple),
        slots,
        st.sampled_from([SLOT_FIELDS, SLOT_FIELDS[:1]]),
    ),
    min_size=1,
    max_size=2,
).map(tuple)
# Slot terms as filed: the key, then the stop tag, marked when the stored frame is narrow.
terms = st.one_of(
    st.builds(lambda f, w: f + w, st.sampled_from(FIELDS), words),
    st.builds(
        lambda f, k, n, w: f"{f}{k}#{n}{w}",
        st.sampled_from(SLOT_FIELDS),
        st.sampled_from(("k1", "k2")),
        st.sampled_from(("", NARROW)),
        st.one_of(words, st.sampled_from(("", "*"))),
    ),
    st.sampled_from(FLAGS),
    st.sampled_from(SIZES),
)
FACTS = [f"f{i}" for i in range(4)]
postings = st.lists(st.tuples(st.sampled_from(FACTS), terms), max_size=40, unique=True)


assert max(map(len, POOL)) > RUN + 2


def meets(held: set[str], ask: Ask) -> bool:
    """The definition: filed under a field + a word of at least `at_least` groups, and of
    at least `by_size[k]` for a fact filed under the size k (the last for a larger k, 0 if
    it is filed under none, the least if under several)."""

    def in_group(group: Group) -> bool:
        return any(f + w in held for f in ask.fields for w in group.exact) or any(
            f + w < t < f + w + TOP and len(t) - len(f) <= (group.longest or len(t))
            for f in ask.fields
            for w in group.ranges
            for t in held
        )

    sizes = [int(t[len("k:") :]) for t in held if t.startswith("k:")]
    size = min(sizes) if sizes else 0
    needed = ask.by_size[min(size, len(ask.by_size) - 1)] if ask.by_size else 0
    return sum(map(in_group, ask.groups)) >= max(1, ask.at_least, needed)


def defined(rows: list[tuple[str, str]], question_set: tuple[Question, ...]) -> set[str]:
    held: dict[str, set[str]] = {}
    for fact_id, term in rows:
        held.setdefault(fact_id, set()).add(term)
    found = set()
    for question in question_set:
        named = {f for f, ts in held.items() if any(meets(ts, a) for a in question.names)}
        for fact_id, ts in held.items():
            if any(
                meets(ts, a)
                and (not a.same_name or fact_id in named)
                and (a.unless is None or a.unless not in ts)
                for a in question.asks
            ):
                found.add(fact_id)
            for (key, skip, wide), field in itertools.product(question.slots, question.slot_fields):
                head = f"{field}{key}#"
                for t in ts:
                    tag = t[len(head) :] if t.startswith(head) else None
                    if tag is None or (wide and tag.startswith(NARROW)):
                        continue
                    if tag.removeprefix(NARROW) not in skip:
                        found.add(fact_id)
    return found


def answered(store, question_set: tuple[Question, ...], user: str = "u") -> set[str]:
    query = TermQuery(question_set)
    return query.answer(
        store.postings(user, query.terms, query.ranges, query.found_terms),
        lambda ask: store.counted(user, ask),
        store.groups_met,
        lambda term, ids: store.filed_under(user, term, ids),
        store.sizes,
    )


def check(
    store,
    rows,
    question_set,
    kept: TermIndex | None = None,
    reset: bool = False,
    told: frozenset[str] = frozenset(),
) -> None:
    """Answers from the store, from a fresh in-memory copy, and from `kept`: a copy that read
    the postings before these replaced them, and catches up from the change log, fact by fact
    or (with `reset`) from a note that every fact changed. The facts in `told` are logged with
    their terms, as this connection's own filings, which the copy takes instead of reading."""
    with store.transaction():
        store._run("DELETE FROM terms")
        store._run_many(
            'INSERT INTO terms ("user", term, fact_id) VALUES (?, ?, ?)',
            [("u", term, fact_id) for fact_id, term in rows]
            + [("someone else", term, "x" + fact_id) for fact_id, term in rows],
        )
        for fact_id in [None] if reset else FACTS:
            filed = frozenset(t for f, t in rows if f == fact_id) if fact_id in told else None
            store._log_terms(None if reset else "u", fact_id, filed)
    expected = defined(rows, question_set)
    assert answered(store, question_set) == expected
    fresh = TermIndex("u")
    fresh.sync(store)
    assert answered(fresh, question_set) == expected
    # A name ask's groups from the named facts' own terms, and from the postings, each always.
    for scan_terms in (0, 10**9):
        other = TermIndex("u", scan_terms=scan_terms)
        other.sync(store)
        assert answered(other, question_set) == expected, scan_terms
    if kept is not None:
        kept.sync(store)
        assert answered(kept, question_set) == expected
        assert contents(kept) == contents(fresh)


def contents(index: TermIndex) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each fact's terms and each term's facts, leaving out the empty."""
    by_fact = {index.ids[n]: set(held) for n, held in enumerate(index.held) if held}
    by_term = {term: {index.ids[n] for n in index._facts(term)} for term in index.facts_of}
    return by_fact, {term: ids for term, ids in by_term.items() if ids}


@pytest.mark.slow
def test_questions_are_answered_as_defined_on_sqlite(tmp_path):
    store = SQLiteStore(str(tmp_path / "terms.db"))
    # Merged into the large sorted list of terms every few new terms, so that merging is tried.
    kept = TermIndex("u", fresh_max=3)

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(postings, questions, st.booleans(), st.frozensets(st.sampled_from(FACTS)))
    def run(rows, question_set, reset, told):
        check(store, rows, question_set, kept, reset, told)

    try:
        run()
    finally:
        store.close()


def test_questions_are_answered_as_defined_on_postgres(postgres_url):
    store = PostgresStore(fresh_schema(postgres_url))
    kept = TermIndex("u", fresh_max=3)

    @settings(max_examples=60, deadline=None)
    @given(postings, questions, st.booleans(), st.frozensets(st.sampled_from(FACTS)))
    def run(rows, question_set, reset, told):
        check(store, rows, question_set, kept, reset, told)

    try:
        run()
    finally:
        store.close()


def test_a_same_name_ask_meets_a_word_by_its_extension(tmp_path):
    """Only facts answering a name count, and their words extend the ask's as prefixes."""
    store = SQLiteStore(str(tmp_path / "terms.db"))
    rows = [
        ("f1", "n:ada"),
        ("f1", "c:gardening"),
        ("f1", "c:roses"),
        ("f2", "c:gardening"),
        ("f2", "c:roses"),
        ("f3", "n:ada"),
        ("f3", "c:gard"),
        ("f3", "c:roses"),
    ]
    # f3's "gard" is neither one of the exact words nor an extension of one (strictly).
    ask = Ask(
        ("c:",),
        (
            Group(frozenset({"garden"}), frozenset({"gard"})),
            Group(frozenset({"rose"}), frozenset({"rose"})),
        ),
        2,
        same_name=True,
    )
    names = (Ask(("n:",), (Group(frozenset({"ada"}), frozenset()),)),)
    try:
        check(store, rows, (Question((ask,), names),))
        assert answered(store, (Question((ask,), names),)) == {"f1"}
    finally:
        store.close()


def test_a_long_word_is_read_as_a_range_from_its_first_letters(db):
    """A long word's prefixes of RUN letters or more, and its extensions, are one range; the
    words in that range that are neither do not count, for a one-word ask or a counting one."""
    long = "abababababb"
    assert len(long) > RUN + 2
    store = PostgresStore(db) if db.startswith("postgresql") else SQLiteStore(db)
    rows = [
        ("f1", "c:" + long[:10]),
        ("f1", "c:roses"),
        ("f2", "c:ababababb"),
        ("f2", "c:rose"),
        ("f3", "c:" + long + "c"),
        ("f3", "c:rose"),
        ("f4", "c:abab"),
        ("f4", "c:rosebud"),
        ("f5", "c:" + long[:9]),
        ("f6", "c:" + long[:7] + "a"),
    ]
    groups = (_group({long}), _group({"rose"}))
    try:
        for ask, expected in [
            (Ask(("c:",), groups, 2), {"f1", "f3", "f4"}),
            (Ask(("c:",), groups[:1]), {"f1", "f3", "f4", "f5"}),
        ]:
            check(store, rows, (Question((ask,)),))
            assert answered(store, (Question((ask,)),)) == expected
    finally:
        store.close()


def test_a_slot_key_counts_every_tag_but_the_writes_own_words(db):
    """The store leaves out the tags every clause asking for the key excludes, and only those."""
    store = PostgresStore(db) if db.startswith("postgresql") else SQLiteStore(db)
    rows = [
        ("f1", "s:k1#with"),
        ("f2", "s:k1#for"),
        ("f3", "s:k1#a"),
        ("f4", "s:k2#with"),
        ("f5", "s:k1#"),
        ("f6", "se:k1#a"),
        ("f7", f"s:k1#{NARROW}"),
        ("f8", f"s:k1#{NARROW}with"),
        ("f9", f"s:k1#{NARROW}for"),
    ]
    one, other = (
        Question((), (), (("k1", frozenset({"with"}), False),)),
        Question((), (), (("k1", frozenset({"for"}), False),)),
    )
    # A fact that only ends something asks no slot filed by another such fact.
    ending = Question((), (), (("k1", frozenset({"with"}), False),), ("s:",))
    # A span of three content words without a number asks only the keys of wide frames.
    wide = Question((), (), (("k1", frozenset({"with"}), True),))
    try:
        for question_set, expected in [
            ((one,), {"f2", "f3", "f5", "f6", "f7", "f9"}),
            ((one, other), {"f1", "f2", "f3", "f5", "f6", "f7", "f8", "f9"}),
            ((ending,), {"f2", "f3", "f5", "f7", "f9"}),
            ((wide,), {"f2", "f3", "f5", "f6"}),
            ((wide, one), {"f2", "f3", "f5", "f6", "f7", "f9"}),
        ]:
            check(store, rows, question_set)
            assert answered(store, question_set) == expected
    finally:
        store.close()


def test_many_terms_and_ranges_take_several_statements(tmp_path):
    """More terms than one list holds and more ranges than one statement holds."""
    store = SQLiteStore(str(tmp_path / "terms.db"))
    rows = [(f"f{i % 50}", f"c:w{i:04d}") for i in range(1500)]
    ask = Ask(
        ("c:",),
        tuple(Group(frozenset({f"w{i:04d}"}), frozenset({f"w{i:03d}"})) for i in range(0, 1500, 7)),
    )
    try:
        for question_set in [(Question((ask,)),), (Question((Ask(ask.fields, ask.groups, 3),)),)]:
            check(store, rows, question_set)
    finally:
        store.close()


def test_an_ask_leaves_out_the_facts_filed_under_its_flag(db):
    """Counting asks and one-word asks alike; another ask of the question still finds them."""
    store = PostgresStore(db) if db.startswith("postgresql") else SQLiteStore(db)
    rows = [
        ("f1", "c:rose"),
        ("f1", "c:tulip"),
        ("f1", "nq:"),
        ("f2", "c:rose"),
        ("f2", "c:tulip"),
        ("f3", "c:rose"),
        ("f3", "nq:"),
        ("f3", "a:home"),
        ("f4", "h1:rose"),
    ]
    groups = (_group({"rose"}), _group({"tulip"}))
    two, one = Ask(("c:",), groups, 2, unless="nq:"), Ask(("c:", "h1:"), groups, unless="nq:")
    home = Ask(("",), (Group(frozenset({"a:home"}), frozenset()),))
    try:
        for question_set, expected in [
            ((Question((two,)),), {"f2"}),
            ((Question((one,)),), {"f2", "f4"}),
            ((Question((two, home)),), {"f2", "f3"}),
            ((Question((Ask(("c:",), groups, 2),)),), {"f1", "f2"}),
        ]:
            check(store, rows, question_set)
            assert answered(store, question_set) == expected
    finally:
        store.close()


def test_an_extension_counts_up_to_the_groups_longest(db):
    """A group of initials ("us") meets a stored name of at most one more letter ("usa"), not
    a longer one ("usability"): one-word asks, counting asks and asks of named facts alike."""
    store = PostgresStore(db) if db.startswith("postgresql") else SQLiteStore(db)
    rows = [
        ("f1", "n:usa"),
        ("f1", "c:rose"),
        ("f2", "n:usability"),
        ("f2", "c:rose"),
        ("f3", "n:us"),
        ("f4", "n:usb"),
        ("f4", "c:rose"),
    ]
    initials = Group(frozenset({"us"}), frozenset({"us"}), 3)
    rose = _group({"rose"})
    named = (Ask(("n:",), (Group(frozenset(), frozenset({"us"})),)),)  # f1, f2 and f4
    try:
        for question_set, expected in [
            ((Question((Ask(("n:",), (initials,)),)),), {"f1", "f3", "f4"}),
            ((Question((Ask(("n:", "c:"), (initials, rose), 2),)),), {"f1", "f4"}),
            (
                (Question((Ask(("n:", "c:"), (initials, rose), 2, same_name=True),), named),),
                {"f1", "f4"},
            ),
        ]:
            check(store, rows, question_set)
            assert answered(store, question_set) == expected
    finally:
        store.close()


def _unsized(question: Question) -> Question:
    return replace(question, asks=tuple(replace(a, by_size=()) for a in question.asks))


def test_a_name_asks_groups_are_met_alike_both_ways_on_real_style_facts(tmp_path):
    """`TermIndex.groups_met` reads either the named facts' own terms or the asked terms'
    postings; on long facts of a few named people both must give the store's answer."""
    from ankita import Memory
    from ankita._config import Settings
    from ankita.dev._corpus import make_facts
    from ankita.search._candidates import CandidateSearch

    real = make_facts("real", 3, 300, None, 300)
    path = str(tmp_path / "real.db")
    with Memory(path, embedder="none") as memory:
        memory.import_rows([{"text": t, "kind": k} for t, k in (real.next() for _ in range(300))])
    store = SQLiteStore(path)
    try:
        ids = sorted(f.id for f in store.list_facts("default", limit=None, links=False))
        by_terms, by_postings = (TermIndex("default", scan_terms=s) for s in (0, 10**9))
        by_terms.sync(store)
        by_postings.sync(store)
        asked = sized = unsized = 0
        for text, kind in (real.next() for _ in range(40)):
            for question in CandidateSearch("default", Settings()).query(text, kind).questions:
                for ask in question.asks:
                    if ask.same_name and ask.fields:
                        expected = store.groups_met(ids, ask)
                        assert by_terms.groups_met(ids, ask) == expected
                        assert by_postings.groups_met(ids, ask) == expected
                        asked += bool(expected)
            # Long facts: the words needed depend on each fact's size (`Ask.by_size`).
            questions = CandidateSearch("default", Settings()).query(text, kind).questions
            found = answered(store, questions, "default")
            assert found == answered(by_terms, questions, "default")
            assert found == answered(by_postings, questions, "default")
            sized += len(found)
            unsized += len(answered(store, tuple(map(_unsized, questions)), "default"))
        assert asked >= 40
        assert 40 <= sized < 0.75 * unsized
        assert by_terms.sizes(ids) == store.sizes(ids)
        assert len(set(store.sizes(ids).values())) >= 3
    finally:
        store.close()


def test_the_terms_of_facts_under_fields_are_the_same_in_sql_and_in_memory(db):
    """`terms_of` asks its fields in SQL; no field at all names no term, as the in-memory
    postings answer, and None names every term."""
    store = PostgresStore(db) if db.startswith("postgresql") else SQLiteStore(db)
    rows = [("f1", "c:rose"), ("f1", "o:anna"), ("f2", "c:roses"), ("f2", "n:2"), ("f3", "o:x")]
    try:
        check(store, rows, ())
        kept = TermIndex("u")
        kept.sync(store)
        ids = ["f1", "f2", "f3"]
        for fields in (None, (), ("c:",), ("o:", "n:")):
            in_sql = sorted(store.terms_of(ids, fields))
            assert in_sql == sorted(kept.terms_of(ids, fields)), fields
        assert store.terms_of(ids, ()) == [] and len(store.terms_of(ids)) == len(rows)
    finally:
        store.close()
