"""Sure and possible conflicts (docs/decisions.md, "Sure and possible conflicts"): a negation
conflicts for sure only when the negated proposition is what the other fact asserts of the same
subject. The pairs are our own, written in the shapes of three sources: memory streams of
third-person observations (LoCoMo's kind), first-person persona lines, and short
image-caption sentences with negation (SICK's kind)."""

import json

import httpx
import pytest
from click.testing import CliRunner

from ankita import Memory
from ankita.analysis._change import change_words
from ankita.analysis._claims import contradicting
from ankita.analysis._propositions import (
    decode,
    forget_known,
    parser_id,
    parses_run,
    propositions,
)
from ankita.analysis._reported import stated
from ankita.analysis._text import stem
from ankita.cli import cli
from ankita.server._server import create_app
from live import LiveServer

SURE = [
    # observation streams
    ("Maya does not own a car.", "Maya washed her car on Sunday before the trip."),
    ("Leo has never had a cat.", "Leo took his cat to the vet for a checkup."),
    ("Priya does not play the violin.", "Priya plays the violin in a quartet on weekends."),
    # persona lines
    ("I'm not allergic to shellfish", "I am allergic to shellfish"),
    ("I don't live in Leeds anymore", "I live in Leeds"),
    ("I am not married", "I am married"),
    ("I don't eat meat", "I eat meat every day"),
    # caption sentences
    ("A woman is not riding a horse", "A woman is riding a horse"),
    ("There is no dog running on the beach", "A dog is running on the beach"),
    # a place one has been to is one gone to; liking said as being a fan; objects in a list;
    # a common noun's plural and singular are one subject
    ("Sam has never been to Lisbon.", "Sam goes to Lisbon every spring."),
    ("Sam has never been to Lisbon.", "Sam visited Lisbon with his brother."),
    ("I'm not a fan of jazz", "I like jazz"),
    ("I enjoy the beach and the mountains", "I don't like mountains"),
    ("Two boys are not playing chess", "A boy is playing chess"),
    # an unknown name the small model reads as a noun in one sentence and a name in the other
    ("Dlphmrds meets us on Friday", "Dlphmrds does not meet us on Friday"),
    # the small model reads "Pat lives" as a noun phrase; the words are the negated ones
    ("Pat lives in Porto", "Pat does not live in Porto"),
    # ... and "I'm not vegan" as the noun "vegan" with "'m" (and its "not") under it
    ("I'm vegan", "I'm not vegan"),
    ("I am vegan", "I'm not a vegan"),
    ("Tom is a doctor", "Tom isn't a doctor"),
    # a possessive states having, of the one named: "Nate's girlfriend"
    ("Nate doesn't have a girlfriend.", "Nate's girlfriend Anna came to watch the tournament."),
]

# The denial of a kind of thing says nothing of another kind; the denial of the thing denies
# every kind of it.
OF_ANOTHER_KIND = [
    ("Nate doesn't like horror movies", "Nate likes action movies"),
    ("Joanna doesn't like spicy food", "Joanna likes Italian food"),
    ("I don't drink black coffee", "I drink coffee with milk"),
    ("Audrey doesn't have small dogs", "Audrey has big dogs"),
]
OF_THE_KIND = [
    ("I don't have a car", "I have a red car"),
    ("Maria doesn't speak Spanish", "Maria speaks fluent Spanish"),
    ("I don't like thrift stores", "I love thrifty stores"),
]

MENTIONED_ONLY = [
    # the negated word is in the other fact, but not as what it asserts of the subject
    ("Maya does not own a car.", "Maya thinks cars make cities loud."),
    ("Maya does not own a car.", "Maya works at a car-sharing startup."),
    ("Leo has never had a cat.", "Leo volunteers at a cat shelter on Saturdays."),
    ("Leo has never had a cat.", "Leo believes cats are good company for older people."),
    ("Nadia has never been to Rome.", "Nadia loves Roman history and reads about it."),
    ("Omar can't imagine life without his bike.", "Omar rides his bike to work."),
    ("Sam has never been to Lisbon.", "Sam's sister lives in Lisbon."),
    ("I'm not a fan of jazz", "I play jazz piano"),
]


@pytest.mark.parametrize("a, b", SURE)
def test_a_negated_proposition_asserted_by_the_other_fact_is_found(a, b):
    assert contradicting(a, b) is not None
    assert contradicting(b, a) is not None  # either order


@pytest.mark.parametrize("a, b", MENTIONED_ONLY)
def test_a_word_the_other_fact_only_mentions_is_not(a, b):
    assert contradicting(a, b) is None


def test_a_predicate_alone_matches_only_a_clause_with_its_own_subject():
    # Where the rules found the negated word is the predicate itself, the objects need not
    # match ("the UK" / "the United Kingdom"); a clause with no subject of its own ("despite
    # not being successful") says that of nobody in particular.
    successful, flying = frozenset({stem("successful")}), frozenset({stem("flying"), "fly"})
    assert contradicting("Lena is not successful", "Lena was successful in the end", successful)
    assert contradicting("I am not flying to the UK", "I am flying to the United Kingdom", flying)
    # Nor does the predicate alone deny an object that names another thing.
    eat = frozenset({"eat"})
    assert contradicting("I don't eat pork", "I eat chicken", eat) is None
    assert (
        contradicting("Sam doesn't drink beer", "Sam drinks red wine", frozenset({"drink"})) is None
    )
    despite = "Lena applied again, despite not being successful last year."
    assert (
        contradicting(despite, "Lena was successful with the grant in the end.", successful) is None
    )
    assert contradicting(despite, "Lena is successful", successful) is None
    # Nor is a gerund said of nobody an assertion of its verb by anyone.
    drive = frozenset({stem("drive")})
    assert contradicting("Priya does not drive.", "Priya drives to work.", drive)
    assert (
        contradicting("Priya does not drive.", "Priya thinks driving is stressful.", drive) is None
    )
    # ... unless what it is belongs to someone: "Baking is my hobby" is the speaker's baking.
    bake = frozenset({stem("baked")})
    assert contradicting("I have never baked in my life.", "Baking is my hobby", bake)


@pytest.mark.parametrize("a, b", OF_ANOTHER_KIND)
def test_denying_one_kind_of_a_thing_says_nothing_of_another(a, b, memory):
    assert contradicting(a, b) is None and contradicting(b, a) is None
    memory.remember(a)
    assert memory.remember(b).conflicts_with == ()


@pytest.mark.parametrize("a, b", OF_THE_KIND)
def test_denying_a_thing_denies_every_kind_of_it(a, b):
    assert contradicting(a, b) is not None


def test_what_a_text_asserts():
    found = propositions("Leo took his cat to the vet.")
    assert any(p.predicate == "have" and p.obj == "cat" and not p.negated for p in found)
    negated = propositions("I don't live in Leeds anymore")
    assert any(p.negated and p.obj == "leed" or p.obj == "leeds" for p in negated)
    # "my" is the speaker's, whatever the sentence's subject.
    mine = propositions("My dog Max loves the park.")
    assert any(p.subject == "i" and p.predicate == "have" and p.obj == "dog" for p in mine)


# Two occasions of one kind of event, told in the simple past, may differ in when or how many
# and both hold; nothing in the words tells them from one event told two ways, so such a flag
# is kept for review, never asked about. A state told with two values, or one event in two
# places, is still a conflict.
TWO_OCCASIONS = [
    # observation streams
    ("Evan went to Canada in July.", "Evan went to Canada in August."),
    (
        "Nate won his first chess tournament in 2021.",
        "Nate won his second chess tournament in 2022.",
    ),
    # persona lines
    ("I ran a marathon in 2019", "In 2023 I ran a marathon"),
    # news sentences
    ("Acme shares fell 3 percent on Monday.", "Acme shares fell 5 percent on Tuesday."),
    # ... and one event told two ways, which the words cannot tell apart
    ("Tycho Brahe died in 1601.", "Tycho Brahe died in 1610."),
    # opposite events about one thing at two times: a loss and a win
    ("Nate lost the tournament in March.", "Nate won the tournament in May."),
    ("John's team lost the game on Friday.", "John's team won the game on Sunday."),
]
ONE_CLAIM = [
    ("My birthday is March 3", "My birthday is April 3"),
    ("Audrey has four dogs", "Audrey has five dogs"),
    ("I wake up at 6am every day", "I wake up at 9am every day"),
    ("Tycho Brahe died in Prague.", "Tycho Brahe died in Berlin."),
    ("Nate won the tournament.", "Nate lost the tournament."),
    ("Nate lost the final in March.", "Nate won the final in March."),
]


def test_what_is_told_as_an_event():
    went = propositions("Evan went to Canada in July.")
    assert any(p.past and p.predicate == "go" and p.obj == "canada" for p in went)
    for state in ("Evan was in Canada in July.", "Evan had a dog.", "Evan goes to Canada."):
        assert not any(p.past for p in propositions(state)), state


def written_after(memory, a, b):
    """What remembering b after a did."""
    memory.remember(a)
    return memory.remember(b).action


def assert_kept_for_review(memory, a, b):
    """Writing b after a links them as a possible conflict only: no notice, no question."""
    first = memory.remember(a)
    written = memory.remember(b)
    assert written.action == "created", written.reason
    assert written.conflicts_with == () and written.possible_conflicts == (first.fact.id,)
    assert memory.recall(b).notice is None


@pytest.mark.parametrize("a, b", TWO_OCCASIONS)
def test_two_occasions_of_one_event_are_never_a_sure_conflict(a, b, memory):
    assert_kept_for_review(memory, a, b)


@pytest.mark.parametrize("a, b", ONE_CLAIM)
def test_a_state_or_one_event_told_two_ways_still_conflicts(a, b, memory):
    assert written_after(memory, a, b) == "conflict"


def write(memory, *texts):
    return [memory.remember(t) for t in texts]


# A change only wished, planned or tried (the complement of another verb, or under a modal)
# is kept for review, never asked about; a change stated as happening still conflicts.
INTENDED_CHANGE = [
    # observation streams
    ("Andrew lives in the city.", "Andrew wants to move out of the city."),
    ("Andrew lives in the city.", "Andrew would like to stop living in the city."),
    # persona lines
    ("I drink coffee every morning", "I'm trying to stop drinking coffee"),
    ("I work at the bank", "I might quit my job at the bank"),
]
STATED_CHANGE = [
    ("Andrew lives in the city.", "Andrew moved out of the city."),
    ("Gina works at the bakery.", "Gina quit her job at the bakery."),
    ("I drink coffee every morning", "I stopped drinking coffee"),
]


@pytest.mark.parametrize("a, b", INTENDED_CHANGE)
def test_a_change_only_intended_is_never_a_sure_conflict(a, b, memory):
    assert_kept_for_review(memory, a, b)


@pytest.mark.parametrize("a, b", STATED_CHANGE)
def test_a_change_stated_as_happening_conflicts(a, b, memory):
    assert written_after(memory, a, b) == "conflict"


# Two doings of one subject with one thing, told with two verbs, are two things done; one
# slot (a copula's complement, one verb's object, liking against hating) holds one value.
TWO_DOINGS = [
    # observation streams
    ("Melanie taught a yoga class on Sunday", "Melanie attended a yoga class on Sunday"),
    ("Jon sold his old bike", "Jon fixed his old bike"),
    # image captions
    ("A girl is riding a horse.", "The girl trotted the horse."),
]
# A value that differs only in the subject's phrase is said of two subjects.
TWO_SUBJECTS = [
    # knowledge statements
    ("The language of Jack Frost was Russian.", "The language of The Lanfier Colony is Russian."),
    ("The deadline for project Alpha is Friday", "The deadline for project Beta is Friday"),
    # image captions
    ("Three humans are walking a dog.", "Three people are walking a dog."),
]
ONE_SLOT = [
    (
        "In Republic of the Congo, an official language is French.",
        "In Republic of the Congo, an official language is Finnish.",
    ),
    ("I use Fedora on my desktop", "I use Arch on my desktop"),
    ("Anna loves jazz", "Anna hates jazz"),
    ("Nate won the tournament.", "Nate lost the tournament."),
    ("The deadline for project Alpha is Friday", "The deadline for project Alpha is Monday"),
]


@pytest.mark.parametrize("a, b", TWO_DOINGS)
def test_two_doings_with_one_thing_are_never_a_sure_conflict(a, b, memory):
    assert_kept_for_review(memory, a, b)


@pytest.mark.parametrize("a, b", TWO_SUBJECTS)
def test_a_value_of_the_subjects_phrase_is_never_a_sure_conflict(a, b, memory):
    assert written_after(memory, a, b) != "conflict"


@pytest.mark.parametrize("a, b", ONE_SLOT)
def test_one_slot_with_two_values_conflicts(a, b, memory):
    assert written_after(memory, a, b) == "conflict"


def test_an_end_only_the_cosine_ties_is_not_sure_alone(tmp_path):
    """A stated change that only ends something the other fact does not name, tied by the
    cosine of two short facts: kept for review. A new value named by meaning stays sure."""
    with Memory(tmp_path / "m.db", embedder="local", judge="off") as m:
        assert_kept_for_review(
            m,
            "Deborah doesn't go to the gym anymore",
            "Deborah teaches yoga at the community center",
        )
        m.remember("I'm a backend engineer")
        assert m.remember("I'm now a product manager").action == "conflict"
        m.remember("Ana works as a nurse")
        assert m.remember("Ana is now a teacher").action == "conflict"


# An end of one value and another value of the same verb both hold; an end of the very
# value the other fact asserts does not.
ENDED_ANOTHER = [
    ("Dave no longer works at the garage.", "Dave works at a car restoration shop."),
    ("I stopped playing the piano.", "I play the guitar."),
    ("I don't write poetry anymore.", "I write screenplays."),
    # ... or the other only dreams of it
    (
        "John loves basketball and dreams of playing professionally.",
        "John doesn't play video games anymore because he is too busy.",
    ),
]
ENDED_THE_SAME = [
    ("Tim stopped playing basketball after his injury.", "Tim plays basketball every week."),
    ("I no longer work at Google.", "I work at Google."),
    ("I love playing chess.", "I stopped playing chess."),
    ("Maria likes volunteering at the shelter.", "Maria no longer volunteers at the shelter."),
    # what it says came instead is no value that ended
    ("Andrew works in finance.", "Andrew quit his finance job to work at an animal shelter."),
]


@pytest.mark.parametrize("a, b", ENDED_ANOTHER)
def test_an_end_of_another_value_is_never_a_sure_conflict(a, b, memory):
    assert written_after(memory, a, b) != "conflict"


@pytest.mark.parametrize("a, b", ENDED_THE_SAME)
def test_an_end_of_the_same_value_conflicts(a, b, memory):
    assert written_after(memory, a, b) == "conflict"


# An end "for" a span of time is a pause: what it stops goes on after it. The same end told
# without the span, or "for" a reason, is still an end.
PAUSED = [
    # observation streams
    (
        "Audrey walks her dogs every evening.",
        "Audrey stopped walking her dogs for two days because of the storm.",
    ),
    ("Jon works at the bank.", "Jon left his job at the bank for a year to travel."),
    # persona lines
    ("I go to the gym on Mondays.", "I stopped going to the gym for a week because I was sick."),
    ("I drink coffee every morning.", "I gave up coffee for a few weeks."),
]
ENDED_FOR_GOOD = [
    ("Audrey walks her dogs every evening.", "Audrey stopped walking her dogs."),
    ("Jon works at the bank.", "Jon left his job at the bank to travel."),
    ("I eat meat.", "I stopped eating meat for ethical reasons."),
    ("I drink coffee every morning.", "I gave up coffee."),
]


@pytest.mark.parametrize("embedder", ["none", "local"])
def test_a_pause_is_never_a_sure_conflict_and_an_end_still_is(embedder, tmp_path):
    for number, (a, b) in enumerate(PAUSED + ENDED_FOR_GOOD):
        with Memory(tmp_path / f"{embedder}{number}.db", embedder=embedder) as m:
            first = m.remember(a)
            written = m.remember(b)
            if (a, b) in PAUSED:
                assert written.action == "created", (a, b, written.reason)
                assert written.possible_conflicts in ((), (first.fact.id,))
                assert m.recall(b).notice is None
            else:
                assert written.action == "conflict", (a, b, written.reason)


def test_a_pause_ends_nothing_it_governs():
    paused = propositions("I stopped going to the gym for a week because I was sick.")
    assert {p.predicate for p in paused} >= {stem("pause"), "go"}
    assert stem("stop") not in {p.predicate for p in paused}
    ended = propositions("I stopped eating meat for ethical reasons.")
    assert (stem("stop"), "meat") in {(p.predicate, p.obj) for p in ended}


def test_a_plan_or_another_wish_does_not_answer_a_denial(memory):
    # What is only planned is not yet done; a denied wish of one doing is not answered by a
    # wish of another. The same doing, done or wished, is.
    # Mulling a doing over ("thinking about trying it") is no more doing it than planning it.
    denied = frozenset({"concert", "want", "skydiv", "paris", "car"})
    pairs = [
        ("James has never been to a concert.", "James is planning to go to a concert."),
        ("Nate doesn't want to stop gaming.", "Nate wants to win the next tournament."),
        ("Priya has never tried skydiving.", "Priya is thinking about trying skydiving."),
        ("Omar has never been to Paris.", "Omar is thinking of going to Paris next summer."),
        ("Lea doesn't own a car.", "Lea is thinking about buying a car."),
    ]
    for a, b in pairs:
        assert contradicting(a, b, denied) is None, (a, b)
        assert written_after(memory, a, b) != "conflict", (a, b)
    for a, b in [
        ("James has never been to a concert.", "James went to a concert with his sister."),
        ("Nate doesn't want to move.", "Nate wants to move to Berlin."),
        ("Lea doesn't own a car.", "Lea bought a car last week."),
    ]:
        assert contradicting(a, b, denied) is not None, (a, b)
        assert written_after(memory, a, b) == "conflict", (a, b)


REPORTED = [
    ("Lena's favorite band is Radiohead.", "Lena says her favorite band is Arctic Monkeys."),
    ("Audrey lives in Denver.", "Audrey mentioned that she moved to Austin."),
    ("Tom works at Google.", "Tom said that he works at a small bakery now."),
]


@pytest.mark.parametrize("a, b", REPORTED)
def test_a_value_reported_as_said_conflicts_as_if_said_directly(a, b, tmp_path):
    # Through a write, so the index meets the pair too, in each order.
    for n, (first_text, second_text) in enumerate(((a, b), (b, a))):
        with Memory(tmp_path / f"{n}.db", embedder="none") as memory:
            first = memory.remember(first_text)
            written = memory.remember(second_text)
        assert written.action == "conflict", (first_text, second_text, written.reason)
        assert written.conflicts_with == (first.fact.id,)


def test_what_a_fact_states_when_it_reports_speech():
    assert stated("Audrey mentioned that she moved to Austin.") == "Audrey moved to Austin."
    assert stated("Lena says her favorite band is X") == "Lena's favorite band is X"
    assert stated("John told Maria that he quit") == "John quit"
    # What was shared or mentioned, not a clause: the text as it is.
    for text in (
        "Gina shared her excitement about the studio",
        "Maria mentioned her brother in the call",
        "Caroline mentioned the importance of peace",
        "I said I live in Berlin",
    ):
        assert stated(text) == text


def test_what_a_verb_of_saying_reports_is_stated(memory):
    # An observation often reports what its person said: the clause is asserted, not wished.
    said = propositions("Lena says her favorite band is Arctic Monkeys.")
    assert any(p.predicate == "be" and p.obj == "monkey" and not p.intended for p in said)
    said = propositions("Jon mentioned losing his job last spring.")
    assert any(p.predicate == stem("lose") and p.obj == "job" and not p.intended for p in said)
    # A wish stays a wish, and what one is told to do is no report.
    wished = propositions("Jon wants to lose weight.")
    assert [p.intended for p in wished if p.predicate == stem("lose")] == [True]
    told = propositions("Maria told John to get a dog.")
    assert [p.intended for p in told if p.predicate == "have" and p.obj == "dog"] == [True]
    for a, b in [
        ("Gina works at Door Dash.", "Gina mentioned that she quit her job at Door Dash."),
        ("Tim plays basketball every weekend.", "Tim said that he stopped playing basketball."),
    ]:
        first = memory.remember(a)
        written = memory.remember(b)
        assert written.action == "conflict" and written.conflicts_with == (first.fact.id,), (
            a,
            b,
            written.reason,
        )


def test_a_move_replaces_only_a_home(memory):
    # A fact that states no home, and shares with the move only where it went, is not what
    # the move replaces; a home, or what the move says it left, is.
    for a, b in [
        (
            "Joanna got a job offer at a bookstore downtown.",
            "Joanna moved closer to the bookstore.",
        ),
        ("Joanna moved to a new apartment.", "Joanna's new apartment has a balcony."),
    ]:
        assert written_after(memory, a, b) != "conflict", (a, b)
    for a, b in [
        ("I live in Porto.", "I moved to Lisbon."),
        ("The deadline is Friday", "The deadline moved to next Wednesday"),
        ("I use PostgreSQL at work", "We moved from Postgres to MySQL at work"),
    ]:
        assert written_after(memory, a, b) == "conflict", (a, b)


def test_a_beginning_and_an_end_told_in_the_past_both_hold(memory):
    assert_kept_for_review(
        memory,
        "Joanna started a new screenplay about a road trip.",
        "Joanna finished the road trip screenplay and sent it to a producer.",
    )
    # At one time, not told as two past events, they still conflict.
    assert written_after(memory, "The race is starting.", "The race is finishing.") == "conflict"


def test_what_is_thought_is_the_clause_it_takes():
    # A denied thought denies only the same thought: its clause is its object.
    assert (
        contradicting(
            "Jon thinks Gina's store is amazing.", "Jon doesn't think he could run a store."
        )
        is None
    )
    assert contradicting("I don't think I can swim", "I think I can swim") is not None


# A denial of having, being or going, whose object the other fact only mentions under another
# predicate of the same subject: no link at all, not even a possible one.
LIGHT_DENIAL_MENTIONED = [
    # observation streams
    ("Leo has never had a cat.", "Leo believes cats are good company."),
    ("Andrew does not have any pets.", "Andrew believes that pets bring a lot of joy."),
    ("Calvin has never been to Boston.", "Calvin admires the old architecture in Boston."),
    # ... whoever else the other fact says the subject has: a person is no kind of thing, and
    # "their" after a singular subject is not its
    ("Leo has never had a cat.", "Leo and his sister volunteered at a cat shelter."),
    ("Andrew does not have any pets.", "Andrew sees pets as friends, valuing their role."),
    # persona lines
    ("I have never been to Japan", "I love Japanese food"),
    ("I'm not a vegan", "I cook vegan food for my sister"),
    ("I don't have a car", "My brother and I fixed cars in his garage"),
]


@pytest.mark.parametrize("a, b", LIGHT_DENIAL_MENTIONED)
def test_a_denial_of_having_or_going_only_mentioned_is_no_link(a, b, memory):
    first, second = write(memory, a, b)
    assert second.action == "created", second.reason
    assert second.conflicts_with == () and second.possible_conflicts == ()
    assert memory.conflict_count() == 0 and memory.conflict_count(possible=True) == 0
    assert memory.recall(b).notice is None


def test_a_denial_asserted_or_of_what_exists_still_links(memory):
    # Said of the subject by the other fact (a possessive), it is a sure conflict; "there is
    # no X" is denied by any X doing anything, so it is kept for review at least.
    _, had = write(memory, "Leo has never had a cat.", "Leo took his cat to the vet.")
    assert had.action == "conflict"
    _, washed = write(memory, "Maya does not own a car.", "Maya and her brother washed her car.")
    assert washed.action == "conflict"
    _, theirs = write(memory, "They don't have a dog", "They walk their dog every morning")
    assert theirs.action == "conflict"
    _, beach = write(memory, "There is no dog on the beach", "A dog is running on the beach")
    assert beach.conflicts_with or beach.possible_conflicts


def test_a_denied_verb_with_another_object_is_never_a_sure_conflict(memory):
    memory.remember("I don't eat pork")
    written = memory.remember("I eat chicken every week")
    assert written.action == "created" and written.conflicts_with == ()


def test_a_write_keeps_a_possible_conflict_apart(memory):
    no_car, mention, washed = write(
        memory,
        "Maya does not own a car.",
        "Maya thinks cars make cities loud, and she does not want one.",
        "Maya washed her car on Sunday before the trip.",
    )
    assert no_car.action == "created"
    # Flagged by the negation rule, but nothing about owning one: possible, not asked about.
    if mention.possible_conflicts:
        assert mention.action == "created" and mention.conflicts_with == ()
        assert "possible conflict" in mention.reason
    assert washed.action == "conflict" and washed.conflicts_with == (no_car.fact.id,)
    assert memory.conflict_count() == 1
    recall = memory.recall("Does Maya own a car?")
    assert recall.notice is not None


def test_possible_conflicts_raise_no_notice_and_can_be_promoted_and_undone(memory):
    first, second = write(
        memory, "Leo does not like cats.", "Leo feeds the neighbour's cat every morning."
    )
    assert second.action == "created" and second.possible_conflicts == (first.fact.id,)
    assert memory.get(first.fact.id).conflicts_with == ()
    assert memory.conflict_count() == 0 and memory.conflict_count(possible=True) == 1
    (pair,) = memory.conflicts(possible=True)
    assert {pair.a.id, pair.b.id} == {first.fact.id, second.fact.id}
    assert memory.recall("Leo cat").notice is None
    promoted = memory.promote(first.fact.id, second.fact.id)
    assert {promoted.a.id, promoted.b.id} == {first.fact.id, second.fact.id}
    assert memory.conflict_count() == 1 and memory.recall("Leo cat").notice is not None
    event = memory.history(first.fact.id)[-1]
    assert event.type == "promote"
    memory.undo(event.id)
    assert memory.conflict_count() == 0 and memory.conflict_count(possible=True) == 1
    # A clear of a possible conflict, undone, brings it back as possible.
    memory.clear_conflict(first.fact.id, second.fact.id)
    assert memory.conflict_count(possible=True) == 0
    memory.undo(memory.history(first.fact.id)[-1].id)
    assert memory.conflict_count() == 0 and memory.conflict_count(possible=True) == 1


def test_a_possible_conflict_survives_export_and_import(tmp_path):
    with Memory(tmp_path / "a.db", embedder="none") as m:
        write(m, "Leo does not like cats.", "Leo feeds the neighbour's cat every morning.")
        dump = list(m.export())
    assert [r["link"].get("possible") for r in dump if "link" in r] == [True]
    with Memory(tmp_path / "b.db", embedder="none") as copy:
        copy.restore(dump)
        assert copy.conflict_count() == 0 and copy.conflict_count(possible=True) == 1


def test_the_cli_lists_and_promotes_possible_conflicts(tmp_path):
    base = ["--db", str(tmp_path / "m.db"), "--embedder", "none"]
    runner = CliRunner()
    runner.invoke(cli, [*base, "remember", "Leo does not like cats."])
    out = runner.invoke(cli, [*base, "remember", "Leo feeds the neighbour's cat every morning."])
    assert out.exit_code == 0 and "possible conflict with" in out.output
    assert runner.invoke(cli, [*base, "conflicts"]).output.strip() == "no conflicts"
    listed = json.loads(runner.invoke(cli, [*base, "conflicts", "--possible", "--json"]).output)
    assert len(listed) == 1
    a, b = listed[0]["a"]["id"], listed[0]["b"]["id"]
    promoted = runner.invoke(cli, [*base, "promote", a, b])
    assert promoted.exit_code == 0, promoted.output
    assert len(json.loads(runner.invoke(cli, [*base, "conflicts", "--json"]).output)) == 1
    again = runner.invoke(cli, [*base, "promote", a, b])
    assert again.exit_code == 3 and "not flagged as a possible conflict" in again.output


def test_possible_conflicts_over_http(tmp_path):
    path = tmp_path / "m.db"
    live = LiveServer(create_app(path, embedder="none"))
    try:
        with httpx.Client(base_url=live.url, timeout=10) as client:
            _possible_conflicts_over(client)
    finally:
        live.stop()


def _possible_conflicts_over(client):
    client.post("/v1/facts", json={"text": "Leo does not like cats."})
    written = client.post(
        "/v1/facts", json={"text": "Leo feeds the neighbour's cat every morning."}
    ).json()
    assert written["action"] == "created" and len(written["possible_conflicts"]) == 1
    assert written["fact"]["source"] == "api"  # a door names itself when the caller does not
    sure = client.get("/v1/conflicts")
    possible = client.get("/v1/conflicts", params={"possible": "true"})
    assert sure.json() == [] and sure.headers["X-Total-Count"] == "0"
    assert len(possible.json()) == 1 and possible.headers["X-Total-Count"] == "1"
    a, b = possible.json()[0]["a"]["id"], possible.json()[0]["b"]["id"]
    assert client.post(f"/v1/conflicts/{a}/{b}/promote").status_code == 200
    assert len(client.get("/v1/conflicts").json()) == 1
    assert client.post(f"/v1/conflicts/{a}/{b}/promote").status_code == 404


def test_a_stored_fact_is_parsed_once(memory, db):
    """What the parser read in a fact is kept with it: a later process (here, the parses this
    one knows dropped, as a new process has none) reads it back and parses only the new text."""
    stored = memory.remember("Leo has never had a cat.").fact
    first = memory.remember("Leo took his cat to the vet for a checkup.")
    assert first.conflicts_with and first.conflicts_with == (stored.id,)
    with Memory(db, embedder="none", user=memory.user) as later:
        rows = later.store.parses_of([stored.id, first.fact.id], parser_id())
        assert set(rows) == {stored.id, first.fact.id}
        forget_known()
        before = parses_run()
        again = later.remember("Leo feeds the neighbour's cat every morning.")
        third = later.remember("Leo volunteers at a cat shelter on Saturdays.")
        # Only the two new texts were parsed; the stored ones came back from the store.
        assert parses_run() - before == 2
        assert again.fact.id in later.store.parses_of([again.fact.id], parser_id())
        assert third.action.value == "created"


def test_a_fact_parsed_by_a_comparison_that_flags_nothing_keeps_its_parse(memory, db):
    """Not only flagged facts: every stored fact a write parsed keeps its parse, and a later
    process reads it back before comparing, so it is never parsed again."""
    stored = memory.remember("Jon loves watching dance videos.").fact
    ending = memory.remember("Jon no longer teaches dance classes.")
    # The ending was read against the stored fact (one word shared) and ends nothing it says.
    assert not ending.conflicts_with and not ending.possible_conflicts
    assert stored.id in memory.store.parses_of([stored.id], parser_id())
    with Memory(db, embedder="none", user=memory.user) as later:
        forget_known()
        before = parses_run()
        later.remember("Jon quit teaching dance at the studio.")
        assert parses_run() - before == 1  # the new text alone


def test_a_parse_read_from_another_text_or_parser_is_read_again(memory, db):
    fact = memory.remember("Maya does not own a car.").fact
    memory.remember("Maya washed her car on Sunday before the trip.")
    store = memory.store
    with store.transaction(memory.user):
        # As if the fact had been stored by an older parser, and its text since changed.
        store.put_parses([(fact.id, "an-older-parser", "0" * 32, "[]")])
    forget_known()
    before = parses_run()
    result = memory.remember("Maya drove her car to work.")
    assert parses_run() - before >= 2  # the stale row was not trusted
    rows = store.parses_of([fact.id], parser_id())
    assert fact.id in rows and decode(rows[fact.id][1]) == propositions(fact.text)
    assert result.fact.id


# An ending conflicts with the fact that asserts what ended, of the same subject, however few
# words the two share; an ending of something the other does not assert (another doing with
# the same thing, another kind of it, or only a mention) is never asked about.
ENDED_ASSERTED = [
    # observation streams
    (
        "Maria goes to the gym every Saturday morning with her sister.",
        "Maria stopped going to the gym after her surgery.",
    ),
    ("Priya works at a startup in Berlin as a designer.", "Priya left the startup in October."),
    # first-person lines
    (
        "I usually go running on Tuesday and Thursday mornings.",
        "I stopped running because of a knee injury.",
    ),
    ("My dad smokes cigars on the porch.", "My dad quit smoking last year."),
]
ENDED_NOT_ASSERTED = [
    ("I don't drink coffee anymore.", "I prefer tea over coffee."),
    ("Nate watches football every Sunday with his friends.", "Nate doesn't play football anymore."),
    (
        "Jon no longer teaches dance classes at the studio.",
        "Jon teaches hip hop classes to teenagers every Wednesday.",
    ),
    ("Priya left the startup in October.", "Priya likes the startup's office dog."),
]


@pytest.mark.parametrize("embedder", ["none", "local"])
@pytest.mark.parametrize("a, b", ENDED_ASSERTED)
def test_an_end_of_what_the_other_asserts_conflicts(a, b, embedder, tmp_path):
    with Memory(tmp_path / "m.db", embedder=embedder, judge="off") as m:
        assert written_after(m, a, b) == "conflict"


@pytest.mark.parametrize("embedder", ["none", "local"])
@pytest.mark.parametrize("a, b", ENDED_NOT_ASSERTED)
def test_an_end_of_what_the_other_does_not_assert_is_never_sure(a, b, embedder, tmp_path):
    with Memory(tmp_path / "m.db", embedder=embedder, judge="off") as m:
        assert written_after(m, a, b) != "conflict"


# "Now" alone says what is so at present: a state replaces a state, and a doing replaces the
# same doing; another doing may go on beside it.
NOW_ANOTHER_DOING = [
    ("I love Japanese food, especially ramen.", "I'm learning Japanese with a tutor now."),
    ("I'm terrible at languages.", "I'm learning Japanese with a tutor now."),
    ("Sam loves fantasy novels.", "Sam is reading a lot of science fiction now."),
]
NOW_THE_SAME = [
    ("I work remotely from home", "I work from the office every day now"),
    ("Tom eats cheese every day.", "Tom is vegan now."),
    ("Ana works as a nurse", "Ana is now a teacher"),
]


@pytest.mark.parametrize("a, b", NOW_ANOTHER_DOING)
def test_now_with_another_doing_is_never_a_sure_conflict(a, b, tmp_path):
    with Memory(tmp_path / "m.db", embedder="local", judge="off") as m:
        assert written_after(m, a, b) != "conflict"


@pytest.mark.parametrize("a, b", NOW_THE_SAME)
def test_now_with_the_same_slot_conflicts(a, b, tmp_path):
    with Memory(tmp_path / "m.db", embedder="local", judge="off") as m:
        assert written_after(m, a, b) == "conflict"


# A switch conflicts with what it switched from, not with what it switched to.
def test_a_switch_agrees_with_where_it_went(tmp_path):
    with Memory(tmp_path / "m.db", embedder="local", judge="off") as m:
        for went in ("My favourite editor is Neovim.", "Mark plays padel with his colleagues."):
            m.remember(went)
        assert m.remember("I switched from VS Code to Neovim last month.").action != "conflict"
        assert m.remember("Mark switched from tennis to padel this summer.").action != "conflict"
    with Memory(tmp_path / "n.db", embedder="local", judge="off") as m:
        m.remember("Mark plays tennis every Tuesday.")
        assert m.remember("Mark switched from tennis to padel this summer.").action == "conflict"


def test_dropping_something_off_is_a_visit_not_an_end(memory):
    """ "Dropped off baked goods at the shelter" ends nothing the shelter facts assert."""
    memory.remember("Maria has been volunteering at a homeless shelter, finding it rewarding.")
    written = memory.remember("Maria dropped off baked goods at a homeless shelter last week.")
    assert written.action != "conflict" and not written.possible_conflicts
    assert change_words("Maria dropped off baked goods.") == frozenset()
    assert change_words("Maria dropped the pottery class.") == {"dropped"}
