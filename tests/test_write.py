"""The write path of SPEC §2-5, one behaviour per test, on a real SQLite file."""

import multiprocessing
import sqlite3

import pytest

from ankita import NOTICE, Embedder, Fact, InvalidInput, Memory, NotFound
from ankita.store._sqlite import SCHEMA_VERSION


def test_database_is_postgres_merges_into_i_use_postgres(memory):
    first = memory.remember("I use Postgres")
    second = memory.remember("Database is Postgres")
    assert first.action == "created"
    assert second.action == "merged"
    assert second.merged_into == first.fact.id
    assert second.fact.mentions == 2
    assert second.method == "lexical" and second.score == 1.0
    assert len(memory.list()) == 1


def test_postgresql_merges_by_prefix(memory):
    first = memory.remember("I use Postgres")
    assert memory.remember("I use PostgreSQL").merged_into == first.fact.id


def test_merge_keeps_id_confirms_and_records_phrasing(memory, clock):
    first = memory.remember("I use Postgres")
    clock.advance(days=3)
    merged = memory.remember("Database is Postgres", source="chat")
    assert merged.fact.id == first.fact.id
    assert merged.fact.text == "I use Postgres"  # no new content words: text unchanged
    assert merged.fact.last_confirmed_at > first.fact.last_confirmed_at
    phrasings = [e.data.get("phrasing") for e in memory.history(first.fact.id)]
    assert "Database is Postgres" in phrasings


def test_a_chat_turn_restating_a_fact_merges_and_keeps_only_its_sentence(memory):
    first = memory.remember("I keep bees in my garden", kind="hobby")
    chat = memory.remember("Funny you ask. I keep bees in the garden.", kind="hobby")
    assert chat.action == "merged" and chat.fact.text == "I keep bees in my garden"
    more = memory.remember("Busy week! I keep bees in my garden behind the house.", kind="hobby")
    assert more.fact.id == first.fact.id
    assert more.fact.text == "I keep bees in my garden behind the house."
    merges = [e for e in memory.history(first.fact.id) if e.type == "merge"]
    assert merges[-1].data["phrasing"] == "Busy week! I keep bees in my garden behind the house."
    memory.remember("I grow tomatoes on my balcony", kind="hobby")
    changed = memory.remember("Long day. I no longer grow tomatoes on my balcony.", kind="hobby")
    assert changed.action == "conflict"  # the sentence is contained, and it disagrees


def test_text_grows_only_when_new_phrasing_holds_old_words_and_more(memory):
    first = memory.remember("I prefer dark mode in editors")
    grown = memory.remember("I prefer dark mode in editors and terminals")
    assert grown.action == "merged"
    assert grown.fact.text == "I prefer dark mode in editors and terminals"
    types = [e.type for e in memory.history(first.fact.id)]
    assert types == ["create", "merge", "text_change"]
    old = [e for e in memory.history(first.fact.id) if e.type == "text_change"][0]
    assert old.data["before"] == "I prefer dark mode in editors"


def test_two_word_facts_sharing_one_word_are_not_a_lexical_conflict(db_path):
    with Memory(db_path, embedder="none", detect_disagreement=False) as plain:
        plain.remember("Coffee lover")
        result = plain.remember("Coffee drinker")
    assert result.score == 0.6
    assert result.action == "created"


def test_plain_rules_flag_related_pair_with_lexical_evidence(db_path):
    with Memory(db_path, embedder="none", detect_disagreement=False) as plain:
        plain.remember("I deploy services to Kubernetes on Fridays", kind="work")
        result = plain.remember("I deploy services to Kubernetes on Mondays", kind="work")
    assert result.action == "conflict"
    assert "lexical evidence" in result.reason


def test_facts_of_different_kinds_never_conflict(memory):
    memory.remember("I live in Berlin", kind="location")
    result = memory.remember("I live in Munich", kind="work")
    assert result.action == "created"
    assert result.conflicts_with == ()
    assert memory.conflicts() == []


def test_negated_twin_is_a_conflict_not_a_merge(memory):
    first = memory.remember("I'm allergic to peanuts", kind="health")
    second = memory.remember("I'm not allergic to peanuts", kind="health")
    assert second.action == "conflict"
    assert second.conflicts_with == (first.fact.id,)
    assert "negation" in second.reason
    assert len(memory.list()) == 2


@pytest.mark.parametrize(
    "a,b,check",
    [
        ("I live in Berlin", "I live in Munich", "value"),
        ("I prefer tabs over spaces", "I prefer spaces over tabs", "swapped"),
        ("I'm 28", "I'm 35", "numbers"),
        ("I use Firefox", "I switched from Firefox to Chrome", "change_of_state"),
        ("I prefer light mode", "I prefer dark mode", "opposites"),
        # A move to a named place states a home, sharing no word with the one it replaces.
        ("I live in Berlin", "I moved to Lisbon", "attribute: home"),
        ("I moved to Lisbon last year", "I live in Porto now", "attribute: home"),
        # ... and so does a named person's, kept under the name.
        ("Priya lives in a small flat in Leeds", "Priya moved to Manchester", "home@priya"),
        ("Ana works at the museum", "Ana works at a bakery now", "employer@ana"),
        # "like" is filler, yet its opposite names the same slot.
        ("I like dancing", "I hate dancing", "opposites"),
    ],
)
def test_disagreeing_pairs_are_flagged_with_the_reason(memory, a, b, check):
    memory.remember(a)
    result = memory.remember(b)
    assert result.action == "conflict"
    assert check in result.reason


def test_compatible_neighbours_are_not_flagged(memory):
    memory.remember("I like jazz")
    assert memory.remember("I like blues").action == "created"


@pytest.mark.parametrize(
    "a,b,flagged",
    [
        ("Anna is 30 years old", "Marek is 41 years old", False),
        ("I lived in Oslo for 3 years", "I lived in Rome for 5 years", False),
        ("Anna is allergic to cats", "Marek is not allergic to cats", False),
        ("I swim with Anna on Mondays", "I swim with Marek on Fridays", False),
        ("Anna quit smoking cigars", "Marek smokes a pipe", False),
        # A named person's home is theirs: not the user's, nor another person's, nor their
        # sister's; and a move to the home stated replaces nothing.
        ("I live in Leeds", "Priya moved to Manchester", False),
        ("Priya lives in Leeds", "Marcus moved to Manchester", False),
        ("Priya lives in Leeds", "Priya's sister moved to Manchester", False),
        ("Priya lives in Leeds", "Priya moved to Leeds in 2019", False),
        # A stated change where the names are not the subject: one thing changed.
        ("I drive a Toyota", "I switched to driving a Honda", True),
        ("My sister Anna lives in Lyon", "My sister Anna moved to Paris", True),
        # A stated change replaces one value: two names apart on each side are two things.
        ("I work on Apollo with Anna", "I quit working on Zephyr with Marek", False),
        # A change that only ends something names what ended.
        ("I work on Zephyr with Anna", "I quit working on Apollo", False),
        ("I use Vim", "I stopped using Emacs", False),
        ("I use Vim", "I stopped using Vim", True),
        ("I work on Apollo with Anna", "I quit working on Apollo", True),
        # Two endings in one frame both hold; two moves do not.
        ("I quit working on Apollo", "I quit working on Zephyr", False),
        ("I no longer live in Oslo", "I no longer live in Rome", False),
        ("I moved to Oslo", "I moved to Rome", True),
        # The same name, or the name is the replaced value: still one subject.
        ("Anna is 30 years old", "Anna is 31 years old", True),
        ("My sister lives in Lyon", "My sister lives in Paris", True),
        # An acronym of the other side's capitalised words is the same name.
        ("I am moving to the United Kingdom", "I am not moving to the UK", True),
        ("I am flying to the United Kingdom", "I am not flying to the UK", True),
        ("I am flying to the UK", "I am not flying to the United Kingdom", True),
        ("I am flying to the United States", "I am not flying to the USA", True),
        ("I am flying to the USA", "I am not flying to the United States", True),
        # Two people's ages: more than a number replaced, and no frame before it.
        ("Anna is 30 years old", "Marek was 31 years old", False),
        ("Anna is 30 years old", "Mum turned 31 years old", False),
        # A value holding a number may be long.
        ("My bike is a 2012 Trek Domane", "My bike is a 2020 Canyon Endurace", True),
        # A name that only starts with the other side's initials is another name.
        ("Thea is vegetarian", "Tom Hanks is not vegetarian", False),
        # The name both open with says whose the claim is, not what it is.
        ("Sam goes running on Mondays", "Sam goes swimming on Fridays", False),
        ("Melanie has been married for 5 years", "Melanie has been painting for 10 years", False),
        ("Sam goes running on Mondays", "Sam goes running on Fridays", True),
        # A name's relative is one person in both facts.
        ("Caroline's sister is 30 years old", "Caroline's sister is 31 years old", True),
    ],
)
def test_the_same_statement_about_two_named_things_is_no_conflict(memory, a, b, flagged):
    memory.remember(a)
    result = memory.remember(b)
    assert (result.action == "conflict") is flagged, result.reason


@pytest.mark.parametrize(
    "a,b,flagged",
    [
        # The whole predicate replaced after the subject: two things said of one person.
        ("Tom likes hiking", "Tom owns a boat", False),
        ("My brother eats meat", "My brother hates jazz", False),
        ("My brother lives in Paris", "My brother eats meat", False),
        # One value replaced in a frame that holds its verb or its object, or a bare number.
        ("Anna loves jazz", "Anna hates jazz", True),
        ("My sister is a doctor", "My sister is a teacher", True),
        ("Anna is 30", "Anna is 31", True),
        # A subject set apart by a comma is no sentence: the rest is its one value.
        ("John Smith, the guitar", "John Smith, the piano", True),
        # Nothing before the span at all.
        ("30 years", "31 years", True),
        # A stated change replaces what the other side says of the person.
        ("My brother lives in Paris", "My brother moved to Rome", True),
    ],
)
def test_a_whole_predicate_replaced_is_two_things_about_one_person(memory, a, b, flagged):
    assert _flagged_after(memory, a, b, "relationship") == (flagged, a, b)


def _flagged_after(memory, a, b, kind="fact"):
    """Whether remembering `b` after `a` flags a conflict, with the pair (shown on failure)."""
    memory.remember(a, kind=kind)
    return memory.remember(b, kind=kind).action == "conflict", a, b


@pytest.mark.parametrize(
    "a,b,flagged",
    [
        ("My sister does not eat meat", "My brother eats meat", False),
        ("My sister is vegetarian", "My brother is not vegetarian", False),
        ("My sister does not eat meat", "My sister eats meat", True),
        # An attribute of the user, whoever else the other fact names.
        ("I am single", "My wife and I live in Oslo", True),
        # One person denies having whom the other fact is about: not two people.
        ("Nate doesn't have a girlfriend", "Nate's girlfriend Anna came to the tournament", True),
        ("Nate doesn't have a girlfriend", "Nate's brother has a girlfriend", False),
    ],
)
def test_a_negation_about_two_people_is_no_conflict(memory, a, b, flagged):
    assert _flagged_after(memory, a, b) == (flagged, a, b)
    if not flagged:
        assert "different people" in memory.compare(a, b).reason


@pytest.mark.parametrize(
    "a,b",
    [
        # A past spelled as its base ("quit"), or an adverb before the verb: still a name's fact.
        ("Joanna quit her job at the bank", "Joanna's sister works at the bank"),
        ("Caroline recently quit her job at the bank", "Caroline's mom works at the bank"),
    ],
)
def test_a_name_and_its_verb_say_whom_a_fact_is_about(memory, a, b):
    assert _flagged_after(memory, a, b) == (False, a, b)


# Names the parser or the word lists read as something else: "Will" and "May" are modals in
# lowercase, and the small parser reads "Pat lives" and "Sunny lives" as noun phrases.
@pytest.mark.parametrize("name", ["Will", "May", "Pat", "Sunny", "Xiuying", "Dlphmrds"])
def test_a_name_that_is_also_a_word_is_still_one_person(memory, name):
    memory.remember("Anna meets us on Friday")
    assert memory.remember(f"{name} meets us on Friday").action == "created"
    memory.remember(f"{name} lives in Porto")
    assert memory.remember(f"{name} does not live in Porto").action == "conflict"
    memory.remember("I had lunch with Grace today")
    assert memory.remember(f"I had lunch with {name} today").action == "created"


@pytest.mark.parametrize("who", ["Dr. Smith", "Mr. Okafor", "Ms. Li"])
def test_a_title_or_an_initial_ends_no_sentence(memory, who):
    # Read as a sentence of its own, "Dr." made two facts about Dr. Smith one frame with two
    # values ("lives in Porto" vs "works at Google").
    memory.remember(f"{who} lives in Porto")
    written = memory.remember(f"{who} works at Google")
    assert written.action == "created" and not written.possible_conflicts
    assert memory.remember(f"{who} does not live in Porto").action == "conflict"


@pytest.mark.parametrize(
    "a,b,flagged",
    [
        # A title belongs to the name after it: the verb stays in the frame.
        ("My dentist is Dr. Silva", "My dentist is Dr. Costa", True),
        ("My landlord is Mr Silva", "My landlord is Mr Costa", True),
        # Only the name after the title replaced: two people, one thing said of each.
        ("Dr. Silva likes hiking", "Dr. Costa likes hiking", False),
    ],
)
def test_a_title_belongs_to_the_name_it_comes_before(memory, a, b, flagged):
    assert _flagged_after(memory, a, b) == (flagged, a, b)


@pytest.mark.parametrize(
    "later", ["I moved to a bigger team at work", "I moved to my parents' old room"]
)
def test_a_move_to_no_named_place_states_no_home(memory, later):
    memory.remember("I live in Berlin")
    assert memory.remember(later).action == "created"


def test_a_move_to_the_home_already_stated_replaces_nothing(memory):
    memory.remember("I live in Berlin")
    written = memory.remember("I moved to Berlin in 2019")
    assert written.action == "created" and not written.possible_conflicts


@pytest.mark.parametrize(
    "a,b",
    [
        ("Caroline is 25 years old", "Caroline's sister is 30 years old"),
        ("Deborah's mother passed away in 2019", "Deborah's father passed away in 2015"),
    ],
)
def test_a_named_persons_relative_is_someone_else(memory, a, b):
    memory.remember(a)
    written = memory.remember(b)
    assert written.action == "created" and written.conflicts_with == ()


def test_a_month_that_is_also_a_modal_is_read_as_one(memory):
    memory.remember("My birthday is in May")
    assert memory.remember("My birthday is in June").action == "conflict"
    memory.remember("Will you call me on Friday")  # a question's modal is no name
    assert memory.remember("Can you call me on Friday").action == "merged"


@pytest.mark.parametrize(
    "a,b,why",
    [
        # The frame is related; what keeps them apart is the names, and the reason says so.
        (
            "Anna does not eat meat",
            "Marek eats meat",
            "but about different names ('anna' vs 'marek')",
        ),
        (
            "Anna likes tea",
            "Marek does not like tea",
            "but about different names ('anna' vs 'marek')",
        ),
        # Here the frame itself is too little.
        (
            "I run on Sundays at the lake",
            "I swim on Wednesdays at the lake",
            "is not about one subject (frame 0.33 < 0.55)",
        ),
    ],
)
def test_a_disagreement_left_unflagged_says_what_kept_it_apart(memory, a, b, why):
    """As `ankita compare` explains it (a write may not even meet the other fact)."""
    comparison = memory.compare(a, b)
    assert comparison.action == "create" and why in comparison.reason, comparison.reason


@pytest.mark.parametrize("line,flagged", [(0.5, True), (0.55, False)])
@pytest.mark.parametrize(
    "a,b", [("Anna is 30", "Anna's age is 31"), ("Anna's age is 31", "Anna is 30")]
)
def test_one_shared_word_between_short_facts_at_the_conflict_line(db, a, b, line, flagged):
    """Frames {anna} and {anna, age}: Jaccard 0.5, a conflict only where the line is 0.5."""
    with Memory(db, embedder="none", conflict_threshold=line) as memory:
        memory.remember(a)
        result = memory.remember(b)
    assert (result.action == "conflict") is flagged, result.reason


@pytest.mark.parametrize(
    "a,b,flagged",
    [
        ("My colleague is called Priya", "My colleague is called Tomasz", False),
        ("My cousin is called Lena", "My cousin is called Ivo", False),
        ("My husband is called Ivo", "My husband is called Tomasz", True),
    ],
)
def test_people_one_has_several_of_are_not_one_value(memory, a, b, flagged):
    memory.remember(a, kind="relationship")
    result = memory.remember(b, kind="relationship")
    assert (result.action == "conflict") is flagged, result.reason


def test_links_are_symmetric(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    assert memory.get(a.id).conflicts_with == (b.id,)
    assert memory.get(b.id).conflicts_with == (a.id,)


def test_forget_removes_the_id_from_every_partner(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    c = memory.remember("I live in Hamburg").fact
    assert set(memory.get(c.id).conflicts_with) == {a.id, b.id}
    memory.forget(c.id)
    assert memory.get(a.id).conflicts_with == (b.id,)
    assert memory.get(b.id).conflicts_with == (a.id,)
    with pytest.raises(NotFound):
        memory.get(c.id)
    assert [e.type for e in memory.history(c.id)][-1] == "forget"


def test_clear_conflict_removes_both_sides(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.clear_conflict(b.id, a.id)
    assert memory.get(a.id).conflicts_with == ()
    assert memory.get(b.id).conflicts_with == ()
    with pytest.raises(NotFound):
        memory.clear_conflict(a.id, b.id)


def test_resolve_supersedes_and_hides_from_recall(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    kept = memory.resolve(keep=b.id, over=a.id)
    assert kept.conflicts_with == ()
    assert memory.get(a.id).status == "superseded"
    assert [f.id for f in memory.list()] == [b.id]
    assert {f.id for f in memory.list(include_superseded=True)} == {a.id, b.id}
    recalled = memory.recall("where do I live, Berlin or Munich?")
    assert [r.fact.id for r in recalled.facts] == [b.id]
    assert recalled.notice is None


def test_resolve_is_undone_by_undo(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.resolve(keep=b.id, over=a.id)
    resolve_event = memory.history(a.id)[-1]
    assert resolve_event.type == "resolve"
    memory.undo(resolve_event.id)
    assert memory.get(a.id).status == "active"
    assert memory.get(a.id).conflicts_with == (b.id,)
    assert memory.recall("Berlin Munich").notice == NOTICE


def test_changing_your_mind_back_reactivates_and_flags_again(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.resolve(keep=b.id, over=a.id)
    back = memory.remember("I live in Berlin")
    assert back.action == "merged" and back.merged_into == a.id
    assert memory.get(a.id).status == "active"
    assert memory.get(a.id).conflicts_with == (b.id,)
    assert "active again" in back.reason


def test_a_new_fact_is_not_flagged_against_a_superseded_one(memory):
    a = memory.remember("I live in Berlin").fact
    b = memory.remember("I live in Munich").fact
    memory.resolve(keep=b.id, over=a.id)
    c = memory.remember("I live in Hamburg")
    assert c.conflicts_with == (b.id,)


def test_remembering_the_same_text_twice_makes_one_fact(memory):
    memory.remember("My sister lives in Lyon", kind="relationship")
    again = memory.remember("  My sister lives in Lyon ", kind="relationship")
    assert again.action == "merged"
    assert len(memory.list()) == 1


def test_pinned_write_merging_into_fact_pins_it(memory):
    first = memory.remember("I use Postgres")
    assert memory.remember("I use Postgres", pinned=True).fact.pinned
    assert memory.get(first.fact.id).pinned


@pytest.mark.parametrize(
    "text", ["", "   ", "x" * 2001, None, 42, b"bytes", "a\x00b", "bad \ud800 surrogate"]
)
def test_bad_text_is_refused_and_nothing_is_written(memory, text):
    with pytest.raises(InvalidInput):
        memory.remember(text)
    assert memory.list() == []


@pytest.mark.parametrize("kind", ["", "Tool", "../etc", "a.b", "x" * 40, None, 3])
def test_bad_kind_is_refused(memory, kind):
    with pytest.raises(InvalidInput):
        memory.remember("I use Postgres", kind=kind)
    assert memory.list() == []


@pytest.mark.parametrize("user", ["", "a/b", "../x", "a.b", "x" * 65])
def test_bad_user_is_refused(db_path, user):
    with pytest.raises(InvalidInput):
        Memory(db_path, user=user, embedder="none")


def test_text_of_2000_characters_is_accepted(memory):
    assert memory.remember("y" * 2000).fact.text == "y" * 2000


def test_users_never_meet(db_path):
    with (
        Memory(db_path, user="alice", embedder="none") as alice,
        Memory(db_path, user="bob", embedder="none") as bob,
    ):
        a = alice.remember("I live in Berlin")
        assert bob.remember("I live in Berlin").action == "created"
        assert bob.remember("I live in Munich").conflicts_with != (a.fact.id,)
        with pytest.raises(NotFound):
            bob.get(a.fact.id)
        assert len(alice.list()) == 1


class Exploding(Embedder):
    model_id = "exploding"

    def embed_batch(self, texts):
        raise ConnectionError("provider down")


class Garbage(Embedder):
    model_id = "garbage"

    def embed_batch(self, texts):
        return [[float("nan"), 1.0] for _ in texts]


class Letters(Embedder):
    """A real, tiny embedder: counts of letters a-z (stands in for a provider)."""

    model_id = "letters"

    def embed_batch(self, texts):
        return [
            [float(t.lower().count(c)) + 0.01 for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts
        ]


@pytest.mark.parametrize("embedder", [Exploding(), Garbage()])
def test_a_failing_embedder_never_blocks_a_write(db_path, embedder):
    with Memory(db_path, embedder=embedder) as m:
        first = m.remember("I use Postgres")
        second = m.remember("Database is Postgres")
    assert first.action == "created"
    assert second.action == "merged" and second.method == "lexical"


def test_embedding_score_wins_when_higher_and_records_the_model(db_path):
    with Memory(db_path, embedder=Letters()) as m:
        m.remember("Garden party tonight", kind="habit")
        result = m.remember("Danger art party night", kind="habit")
    assert result.action == "merged"
    assert result.method == "embedding:letters" and result.score > 0.85


def test_cosine_conflict_needs_vectors_on_both_facts(db_path):
    # Both embedded: plain rules flag the pair on embedding evidence alone.
    with Memory(db_path, user="both", embedder=Letters(), detect_disagreement=False) as m:
        m.remember("Kayak trip", kind="habit")
        both = m.remember("Hiking map", kind="habit")
    assert both.action == "conflict" and both.method == "embedding:letters"
    # Stored before the embedder existed: no vector, so the score is lexical and no conflict.
    with Memory(db_path, user="mixed", embedder="none", detect_disagreement=False) as m:
        m.remember("Kayak trip", kind="habit")
    with Memory(db_path, user="mixed", embedder=Letters(), detect_disagreement=False) as m:
        mixed = m.remember("Hiking map", kind="habit")
    assert mixed.action == "created" and mixed.method == "lexical"


def _write_same_fact(path: str, n: int) -> None:
    with Memory(path, embedder="none") as m:
        for _ in range(n):
            m.remember("My sister lives in Lyon", kind="relationship")


def test_two_processes_writing_the_same_fact_make_one_fact(db_path):
    Memory(db_path, embedder="none").close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_same_fact, args=(str(db_path), 10)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Memory(db_path, embedder="none") as m:
        facts = m.list()
    assert len(facts) == 1 and facts[0].mentions == 20


def test_store_uses_wal_and_a_schema_version(db_path):
    with Memory(db_path, embedder="none") as memory:
        memory.remember("I use Postgres")
    con = sqlite3.connect(db_path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    version = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)
    con.close()


def test_a_newer_schema_is_refused(db_path):
    from ankita import StoreError

    Memory(db_path, embedder="none").close()
    con = sqlite3.connect(db_path)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="schema 99"):
        Memory(db_path, embedder="none")


def test_a_newer_postgres_schema_is_refused_and_passwords_never_shown(postgres_url):
    import psycopg

    from ankita import StoreError
    from conftest import fresh_schema

    url = fresh_schema(postgres_url)
    Memory(url, embedder="none").close()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema 99"):
        Memory(url, embedder="none")
    secret = url.replace("postgres:@", "postgres:hunter2@")
    with pytest.raises(StoreError) as refused:
        Memory(secret.replace("host=", "host=/nonexistent"), embedder="none")
    assert "hunter2" not in str(refused.value) and "***" in str(refused.value)


@pytest.mark.parametrize(
    "a,b,flagged",
    [
        ("I live in Porto", "I live with my partner in Braga", True),
        ("I live near the park in Porto", "I live in Porto near the park", False),
        ("I'm 34", "I am in my thirties", False),
        ("I am 41", "I turned 45 last week", True),
        ("I'm single", "My husband cooks every Sunday", True),
        ("My favourite film is Alien", "My favourite film is Heat", True),
        ("My favourite film is Alien", "My favourite book is Dune", False),
        ("I work at a bakery", "My brother works at a bank", False),
        ("I work at a bakery", "I work for the city council", True),
        ("I live in Porto", "My sister lives in Braga", False),
        # A home stated with auxiliaries between the speaker and the verb.
        ("I live in Leeds", "I've been living in York since March", True),
        ("I live in Leeds", "I have just moved to York", True),
        # The name of one of the user's people or animals, however it is said.
        ("My wife's name is Ana", "My wife is called Rita", True),
        ("My dog is called Rex", "My dog's name is Bruno", True),
        ("My dog is called Rex", "My dog's name is Rex", False),
        ("My dog is called Rex", "My cat's name is Bruno", False),
        # Not people one mostly has several of, nor one introduced among others.
        ("My friend is called Sam", "My friend's name is Tom", False),
        ("I have a cat named Spook", "My cat is named Arizona", False),
    ],
)
def test_single_valued_attributes_of_the_user(memory, a, b, flagged):
    memory.remember(a)
    result = memory.remember(b)
    assert (result.action == "conflict") is flagged, result.reason
    if flagged:
        assert "attribute" in result.reason


class Topics(Embedder):
    """A real, tiny embedder: one axis per topic word found (stands in for a provider)."""

    model_id = "topics"
    AXES = (("hive", "bee"), ("weather", "rain"), ("traffic", "bus"), ("football", "match"))

    def embed_batch(self, texts):
        return [
            [1.0 if any(w in t.lower() for w in words) else 0.0 for words in self.AXES] + [0.01]
            for t in texts
        ]


@pytest.mark.parametrize("search", ["index", "exhaustive"])
def test_one_sentence_of_a_chat_turn_matches_by_meaning(db, search):
    with Memory(db, embedder=Topics(), candidate_search=search) as m:
        stored = m.remember("Beekeeping is my hobby", kind="hobby").fact
        # As a whole the turn is about four things (cosine 0.5, below the conflict line), but
        # one sentence is about exactly the stored fact; no word is shared with it.
        turn = m.remember(
            "Awful weather today. The bus was late. The match was dull. I look after hives.",
            kind="hobby",
        )
        assert turn.action == "merged" and turn.fact.id == stored.id
        assert turn.method == "embedding:topics"
        single = m.remember("Weather, the bus, the match and hives were on my mind", kind="hobby")
        assert single.action == "created"  # one sentence: only the whole counts


@pytest.mark.parametrize("search", ["index", "exhaustive"])
@pytest.mark.parametrize(
    "stored,new,flagged",
    [
        # One clause of each turn states the thing; the rest is small talk.
        (
            "I love wine too! I went tasting in Napa last spring.",
            "OK, but I do not even like wine anyways.",
            True,
        ),
        ("Baking is my hobby, my pecan pie wins prizes", "I have never baked in my life.", True),
        ("Nice, I like dancing because I feel free", "That sounds fun, but I hate dancing", True),
        # A capital that opens a sentence is no name ("Ha", "Honestly").
        (
            "Ha, sounds fun. I love karaoke, my brother sings too",
            "Honestly, I can't stand karaoke",
            True,
        ),
        # Clauses that share a word without disagreeing, and a negation about something else.
        (
            "I love wine too! I went tasting in Napa last spring.",
            "Red wine is what I drink at dinner, with friends",
            False,
        ),
        (
            "Baking is my hobby, my pecan pie wins prizes",
            "I never travel in winter, baking keeps me busy",
            False,
        ),
        # A clause may leave its subject behind: two turns naming two things are two things.
        ("Theatre Nova, founded in Lisbon.", "The Orb was started in Lisbon.", False),
    ],
)
def test_a_clause_of_a_chat_turn_can_disagree_with_a_clause_of_another(
    db_path, search, stored, new, flagged
):
    with Memory(db_path, embedder="none", candidate_search=search) as m:
        first = m.remember(stored)
        result = m.remember(new)
    if flagged:
        assert result.action == "conflict" and result.conflicts_with == (first.fact.id,)
        assert "one clause of each disagrees" in result.reason
    else:
        assert result.action == "created", result.reason


def test_a_one_word_fact_merges_into_the_sentence_that_says_exactly_it(memory):
    first = memory.remember("I am in the army.")
    turn = memory.remember("Hmm, interesting. I am in the army!")
    assert turn.action == "merged" and turn.fact.id == first.fact.id
    assert memory.remember("Hmm, the army food is bland.").action == "created"


@pytest.mark.parametrize(
    "a,b,action",
    [
        # The passive names the doer last: the same roles, not swapped ones.
        ("A man is playing the guitar", "The guitar is being played by a man", "merged"),
        ("The turtle follows the fish", "The fish follows the turtle", "conflict"),
        # Word order across clauses is free.
        (
            "I watched the movie Alien five times",
            "Alien is my favourite movie ever, I watched it five times",
            "merged",
        ),
        # "a cat" is one cat: related, and no disagreement.
        ("I have two dogs and one cat", "Two dogs and a cat, they are my babies", "created"),
        ("I have two dogs and one cat", "I have two dogs and two cats", "conflict"),
        # A negation ends where a new subject opens a clause.
        ("I work as a museum guide", "When I am not reading I work as a museum guide", "merged"),
        # "gave" alone states no change; "gave up" does.
        ("My wife gave me a watch", "My wife gave me a watch for my birthday", "merged"),
        ("I play chess on Sundays", "I gave up chess on Sundays", "conflict"),
    ],
)
def test_word_order_numbers_and_scope_read_as_people_mean_them(memory, a, b, action):
    memory.remember(a)
    result = memory.remember(b)
    assert result.action == action, result.reason


@pytest.mark.parametrize("search", ["index", "exhaustive"])
def test_facts_about_different_people_never_merge_or_conflict_by_meaning(db_path, search):
    with Memory(db_path, embedder=Letters(), candidate_search=search) as m:
        colleague = m.remember("My colleague lives in Porto", kind="location").fact
        mine = m.remember("I live in Porto", kind="location")
        assert mine.action == "created" and "different people" in mine.reason
        # A stated change is close in meaning to the colleague's fact, but about the user.
        moved = m.remember("I moved to Lisbon", kind="location")
        assert moved.action == "conflict" and moved.conflicts_with == (mine.fact.id,)
        assert colleague.id not in moved.conflicts_with
        # Naming the other's person is the same fact, however it is phrased.
        m.remember("I live with my sister", kind="home")
        assert m.remember("My sister lives with me", kind="home").action == "merged"


def test_a_fact_read_back_is_an_ordinary_frozen_fact(memory):
    """Rows become facts without the dataclass's __init__ (a fast path): they must still be
    equal to, hash like and refuse changes like facts built the usual way."""
    import dataclasses

    stored = memory.get(memory.remember("I use Postgres at work", kind="tool").fact.id)
    built = Fact(**{f.name: getattr(stored, f.name) for f in dataclasses.fields(Fact)})
    assert stored == built and hash(stored) == hash(built) and repr(stored) == repr(built)
    assert stored.to_dict() == built.to_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        stored.text = "changed"  # type: ignore[misc]


def test_a_clock_replaced_after_opening_is_the_one_writes_use(tmp_path):
    """The write engine holds the embedder, judge and clock; a memory's attributes are that one
    copy, so replacing one on an open memory changes what its writes use."""
    from datetime import datetime, timezone

    with Memory(tmp_path / "m.db", embedder="none") as m:
        m.clock = lambda: datetime(2030, 5, 6, 7, 8, tzinfo=timezone.utc)
        assert m.remember("I live in Lyon").fact.created_at.startswith("2030-05-06T07:08")
