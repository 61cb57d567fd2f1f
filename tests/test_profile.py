"""One analysis per text: a text's profile holds every per-text result, each computed once,
and a pair compared through profiles decides exactly as one compared through strings."""

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ankita  # noqa: F401  (every analysis registers its field on import)
from ankita._config import Settings
from ankita.analysis._decision import compare_texts
from ankita.analysis._profile import TextProfile, as_profile, profile_of, raw_text
from ankita.analysis._text import content_words, tokens
from ankita.search import _index  # noqa: F401  (registers the index's fields)

TEXTS = [
    "My sister lives in Lyon",
    "My sister moved to Paris last year, and she loves it",
    "I don't eat meat anymore. I'm a vegetarian now.",
    "Caroline went hiking last week and got into a bad spot with some people",
    "मुझे चाय पसंद है",
    "Ich wohne in Berlin",
]


def _fields() -> set[str]:
    return {
        name
        for name, value in vars(TextProfile).items()
        if type(value).__name__ == "cached_property"
    }


def test_every_field_a_profile_declares_is_an_analysis_and_the_reverse():
    declared = set(TextProfile.__annotations__) - {"text"}
    assert declared == _fields()


@pytest.mark.parametrize("text", TEXTS)
def test_an_analysis_runs_once_per_text_and_reads_the_same_through_text_or_profile(text):
    profile = profile_of(text)
    assert profile_of(text) is profile and as_profile(profile) is profile
    assert raw_text(profile) == raw_text(text) == text
    words = content_words(text)
    # The same object each time: computed once, then kept with the profile.
    assert content_words(profile) is words is profile.content_words
    assert tokens(profile) is tokens(text)
    for name in _fields():
        assert getattr(profile, name) is getattr(profile, name)


def test_a_profile_cannot_be_changed():
    profile = profile_of("I use Postgres")
    with pytest.raises(AttributeError, match="immutable"):
        profile.text = "I use MySQL"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        profile.content_words = frozenset()  # type: ignore[misc]
    assert profile.text == "I use Postgres" and "postgr" in " ".join(profile.content_words)


WORDS = st.sampled_from(
    "I my sister Anna Lyon Paris moved to live lives in not no longer love hate coffee tea "
    "vegetarian meat 30 31 on Monday Tuesday work at Google quit and but , .".split()
)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12), st.lists(WORDS, min_size=1, max_size=12))
def test_profiles_and_strings_decide_alike(a, b):
    old, new = " ".join(a), " ".join(b)
    config = Settings()
    by_text = compare_texts(new, "fact", old, "fact", config, analyse_all=True)
    by_profile = compare_texts(
        profile_of(new), "fact", profile_of(old), "fact", config, analyse_all=True
    )
    assert by_text == by_profile


def test_the_number_of_profiles_kept_is_checked_when_ankita_is_imported():
    for bad in ("abc", "10", "-5", "\u00b2"):
        done = subprocess.run(
            [sys.executable, "-c", "import ankita"],
            capture_output=True,
            text=True,
            env={**os.environ, "ANKITA_TEXT_CACHE": bad},
        )
        assert done.returncode != 0 and "ANKITA_TEXT_CACHE must be a whole number" in done.stderr
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from ankita.analysis._profile import PROFILES_KEPT, profile_of; "
            "print(PROFILES_KEPT, profile_of.cache_info().maxsize)",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "ANKITA_TEXT_CACHE": "200000"},
    )
    assert done.stdout.split() == ["200000", "200000"]
