import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ankita.analysis._similarity import _match_in_order, lexical_score, match_words, words_match
from ankita.analysis._text import acronyms, content_words, statements


def test_filler_words_are_dropped():
    assert content_words("I use Postgres") == content_words("Database is Postgres")
    assert content_words("I use Postgres") == {"postgr"}


def test_folded_words_fold_in_the_plural_too():
    assert content_words("my dads") == content_words("my fathers") == {"father"}
    assert content_words("our neighbours") == content_words("our neighbors")


def test_prefix_rule_needs_four_characters():
    assert words_match("postgres", "postgresql")
    assert words_match("migrat", "migration")
    assert not words_match("car", "cart")


def test_one_more_letter_is_another_word_unless_it_is_an_ending():
    # After stemming, English endings of one letter are -y (stemmed to "i") and -n.
    assert words_match("health", "healthi") and words_match("korea", "korean")
    for short, long_ in (
        ("sing", "singl"),
        ("plan", "plant"),
        ("star", "start"),
        ("hear", "heart"),
    ):
        assert not words_match(short, long_), (short, long_)
    assert lexical_score("I am single.", "I also like to sing.").score < 0.5
    assert lexical_score("I plan to travel", "I plant trees").score < 0.5


def test_postgres_and_postgresql_score_one():
    assert lexical_score("I use Postgres", "I use PostgreSQL").score == 1.0


def test_containment_fires_for_a_repeated_preference_with_more_words():
    s = lexical_score("I prefer dark mode in editors", "dark mode in my editors and terminals")
    assert s.winner == "containment"
    assert s.containment == 1 - 0.15 * (4 - 3) / (2 * (3 - 1))


def test_containment_decays_with_the_extra_words_and_faster_for_short_facts():
    # Three words inside seven still merge (0.85); two words inside five do not.
    three = lexical_score(
        "I restore wooden boats", "Saturday I restore wooden boats with friends near home"
    )
    assert three.winner == "containment" and three.score == 0.85
    two = lexical_score("I use Postgres at work", "Postgres at work runs on version 16")
    assert two.containment == 1 - 0.15 * 3 / 2 and two.score < 0.85


def test_one_word_fact_does_not_swallow_a_long_sentence():
    s = lexical_score("Postgres", "We spent the weekend debugging Postgres replication lag")
    assert s.containment == 0.0
    assert s.short_link == 0.0
    assert s.score < 0.55


def test_short_facts_link_on_one_shared_word_at_point_six():
    s = lexical_score("Coffee lover", "Coffee drinker")
    assert s.short_link == 0.6 and s.score == 0.6


def test_unrelated_facts_score_zero():
    assert lexical_score("I use Postgres", "My cat is called Miso").score == 0.0


texts = st.text(alphabet=st.sampled_from(list("abcdefg postgres IUSE'n't,.")), max_size=40)


@settings(deadline=None)  # the first text in another language loads its identifier (0.7 s)
@given(texts, texts)
def test_similarity_is_symmetric_and_in_range(a, b):
    ab, ba = lexical_score(a, b), lexical_score(b, a)
    assert ab.score == ba.score
    assert 0.0 <= ab.score <= 1.0


@settings(deadline=None)
@given(st.text(max_size=60))
def test_similarity_never_fails_on_any_text(a):
    assert 0.0 <= lexical_score(a, a + " extra").score <= 1.0


def test_a_fact_restated_in_one_sentence_of_a_chat_turn_is_contained():
    fact = "I keep bees in my garden"
    turn = "Funny you ask, the weather was awful today. I keep bees in the garden."
    s = lexical_score(fact, turn)
    assert s.winner == "sentence_containment" and s.score >= 0.85
    assert lexical_score(turn, fact).score == s.score  # symmetric
    # One sentence of the turn that restates part of a longer stored fact counts the same way.
    assert (
        lexical_score(
            "I keep bees and grow tomatoes in my garden",
            "So much rain this week! I keep bees in my garden.",
        ).score
        >= 0.85
    )


def test_sentence_containment_needs_two_sentences_and_two_words():
    whole = lexical_score(
        "I keep bees in my garden",
        "I keep bees in my garden and the neighbours complain about them",
    )
    assert whole.winner != "sentence_containment"
    one_word = lexical_score("Bees", "Busy week. Bees everywhere in the garden.")
    assert one_word.score < 0.55
    # A decimal point is not the end of a sentence.
    assert (
        lexical_score("Python 3.5 at work", "We run Python 3.5 at work").winner
        != "sentence_containment"
    )


def test_a_sentence_that_says_exactly_a_one_word_fact_scores_one():
    s = lexical_score("I am in the army.", "Hmm, interesting. I am in the army!")
    assert s.score == 1.0 and s.winner == "sentence_containment"


@pytest.mark.parametrize(
    "text,parts",
    [
        ("I like tea, but I hate coffee", ("I like tea,", "but I hate coffee")),
        ("I like tea but I hate coffee", ("I like tea", "I hate coffee")),
        ("I left early because I was tired", ("I left early", "I was tired")),
        ("Nice! I love wine and I drink it daily", ("Nice!", "I love wine", "I drink it daily")),
        # A conjunction between two nouns, or one without a subject after it, joins no clauses.
        ("A man and a woman are walking", ()),
        ("I cook and clean on Sundays", ()),
        ("I use Python 3.5 at work", ()),
        # A title's or an initial's period ends nothing; a contraction's or "I"'s does.
        ("Dr. Smith and Mr. J. K. Okafor met", ()),
        ("I haven't. That sounds fun", ("I haven't.", "That sounds fun")),
        ("So am I. I love it", ("So am I.", "I love it")),
    ],
)
def test_statements_split_a_text_into_its_clauses(text, parts):
    assert statements(text) == parts


def test_initials_skip_a_capitalised_function_word():
    # "The" opens the sentence; it is not part of the name.
    assert acronyms("The United States is large") == {"us"}
    assert acronyms("I moved to New York, then to Los Angeles") == {"ny", "la"}
    assert acronyms("My Tuesday") == frozenset()


PREFIXED = [
    "post",
    "postgr",
    "postgresql",
    "car",
    "cart",
    "cartoon",
    "liv",
    "live",
    "lives",
    "living",
    "abcd",
    "abcde",
    "abcdef",
    "abce",
    "sun",
    "sunday",
    "sundays",
]


@given(
    st.frozensets(st.sampled_from(PREFIXED), max_size=8),
    st.frozensets(st.sampled_from(PREFIXED), max_size=8),
)
def test_the_matching_of_equal_words_alone_is_taken_only_when_no_prefix_could_match(a, b):
    # Words that are often prefixes of each other: both paths of match_words run.
    assert match_words(a, b) == _match_in_order(set(a), set(b))
    assert match_words(a, b) == sorted((y, x) for x, y in match_words(b, a))
