"""Invariants after any sequence of operations (hypothesis drives the sequences)."""

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ankita import AnkitaError, Memory
from ankita.analysis._decision import MERGE, compare_texts
from ankita.analysis._similarity import lexical_score
from conftest import fresh_schema

PHRASES = [
    "I live in Berlin",
    "I live in Munich",
    "I don't live in Berlin",
    "I use Postgres",
    "Database is Postgres",
    "I switched from Postgres to SQLite",
    "I like jazz",
    "I like blues",
    "I'm 28",
    "I'm 35",
    "I prefer tabs over spaces",
    "I prefer spaces over tabs",
    "My cat is called Miso",
]

ops = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.sampled_from(PHRASES), st.sampled_from(["fact", "tool"])),
        st.tuples(st.just("forget"), st.integers(0, 20), st.none()),
        st.tuples(st.just("clear"), st.integers(0, 20), st.integers(0, 20)),
        st.tuples(st.just("resolve"), st.integers(0, 20), st.integers(0, 20)),
        st.tuples(st.just("undo"), st.integers(1, 60), st.none()),
        st.tuples(st.just("pin"), st.integers(0, 20), st.none()),
    ),
    max_size=25,
)


def check_invariants(memory: Memory) -> None:
    facts = {f.id: f for f in memory.list(include_superseded=True)}
    for fact in facts.values():
        for other in fact.conflicts_with:
            assert other in facts, "link points at a missing fact"
            assert fact.id in facts[other].conflicts_with, "link is not symmetric"
            assert other != fact.id
    assert memory.doctor()["problems"] == []
    # No two facts that the store's own rule would merge: any sequence, undo included.
    kept = sorted(facts.values(), key=lambda f: f.created_at)
    for i, old in enumerate(kept):
        for new in kept[i + 1 :]:
            same = compare_texts(
                new.text, new.kind, old.text, old.kind, memory.settings, None, None
            )
            assert same.action != MERGE, (old.text, new.text)


EXAMPLES = int(os.environ.get("ANKITA_FUZZ_EXAMPLES", "60"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_links_stay_symmetric_and_valid_after_any_sequence(sequence):
    with tempfile.TemporaryDirectory() as folder:
        run_sequence(Path(folder) / "m.db", sequence)


@settings(
    max_examples=max(10, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(sequence=ops)
def test_the_same_holds_on_postgres(postgres_url, sequence):
    run_sequence(fresh_schema(postgres_url), sequence)


def run_sequence(location, sequence):
    with Memory(location, embedder="none") as memory:
        seen: list[str] = []
        for op, x, y in sequence:
            try:
                if op == "remember":
                    seen.append(memory.remember(x, kind=y).fact.id)
                elif op == "forget" and seen:
                    memory.forget(seen[x % len(seen)])
                elif op == "clear" and seen:
                    memory.clear_conflict(seen[x % len(seen)], seen[y % len(seen)])
                elif op == "resolve" and seen:
                    memory.resolve(seen[x % len(seen)], seen[y % len(seen)])
                elif op == "undo":
                    memory.undo(x)
                elif op == "pin" and seen:
                    memory.pin(seen[x % len(seen)])
            except AnkitaError:
                pass  # refused operations must leave the store valid too
            check_invariants(memory)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PHRASES), st.sampled_from(["fact", "tool", "habit"]))
def test_same_text_twice_is_one_fact(text, kind):
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "m.db", embedder="none") as memory,
    ):
        memory.remember(text, kind=kind)
        assert memory.remember(text, kind=kind).action == "merged"
        assert len(memory.list()) == 1


@given(st.sampled_from(PHRASES), st.sampled_from(PHRASES))
def test_phrase_similarity_is_symmetric(a, b):
    assert lexical_score(a, b).score == lexical_score(b, a).score
