"""A cosine merge between long facts needs more when the new fact holds words that no word of
the old one stands for, read word by word by the embedder (docs/decisions.md, "A cosine merge
between long facts"): a merge keeps only the old text."""

import pytest

from ankita import Memory, Settings
from ankita._errors import EmbedderError
from ankita._novelty import WordNovelty
from ankita.analysis._decision import compare_texts
from ankita.embed._base import Embedder

MODEL = "local:minilm-l6-int8"
SIGNED_UP = "Ravi signed up for a guitar course and finds it therapeutic for self-expression."
WROTE_A_SONG = "Ravi wrote a song in guitar class and finds it relaxing."
IN_HIS_COURSE = "Ravi wrote a song in his guitar course and finds it therapeutic."
BAKING = "Lena started a baking class and finds it therapeutic for stress and creativity."
BAKED = "Lena baked a lemon tart in baking class and finds baking relaxing and creative."


@pytest.fixture(scope="module")
def novelty():
    with Memory(":memory:", embedder="local", judge="off") as memory:
        yield memory._writer.novelty


def test_words_with_no_counterpart_are_counted(novelty):
    assert novelty(WROTE_A_SONG, SIGNED_UP) == 4  # wrote, song, class, relaxing
    assert novelty(IN_HIS_COURSE, SIGNED_UP) == 2  # wrote, song
    assert novelty(BAKED, BAKING) == 2  # baked, lemon tart's words are near "baking"
    assert novelty("Ravi plays guitar", "Ravi plays guitar") == 0


def test_a_long_merge_with_new_words_needs_the_higher_line(novelty):
    settings = Settings()
    # At a cosine between the merge line and the novel-words line, two long facts merge
    # only when the new one adds at most two words the old one has nothing close to.
    plain = compare_texts(WROTE_A_SONG, "fact", SIGNED_UP, "fact", settings, 0.86, MODEL)
    read = compare_texts(
        WROTE_A_SONG, "fact", SIGNED_UP, "fact", settings, 0.86, MODEL, novelty=novelty
    )
    assert plain.action == "merge" and read.action != "merge"
    assert ("new words, none close in the old fact: 4 <= 2", False) in read.gates  # --explain
    assert ("score 0.86 >= merge line 0.88", False) in read.gates
    above = compare_texts(
        WROTE_A_SONG, "fact", SIGNED_UP, "fact", settings, 0.885, MODEL, novelty=novelty
    )
    assert above.action == "merge"
    kept = compare_texts(
        IN_HIS_COURSE, "fact", SIGNED_UP, "fact", settings, 0.86, MODEL, novelty=novelty
    )
    assert kept.action == "merge"  # "wrote a song" alone is new


def test_short_facts_and_other_languages_are_not_read_word_by_word(novelty):
    calls = []

    def counting(new, old):
        calls.append((new, old))
        return novelty(new, old)

    settings = Settings()
    compare_texts(
        "Ravi plays the guitar",
        "fact",
        "Ravi plays guitar",
        "fact",
        settings,
        0.86,
        MODEL,
        novelty=counting,
    )
    compare_texts(
        "Ravi a écrit une chanson en classe de guitare et trouve la guitare relaxante.",
        "fact",
        "Ravi s'est inscrit à un cours de guitare et le trouve thérapeutique pour s'exprimer.",
        "fact",
        settings,
        0.86,
        "multilingual-e5-small-q4",
        novelty=counting,
    )
    assert calls == []


class Broken(Embedder):
    model_id = "broken"

    def embed_batch(self, texts):
        raise EmbedderError("provider down")


def test_a_failing_embedder_leaves_the_words_alone_to_decide():
    novelty = WordNovelty(Broken())
    assert novelty(WROTE_A_SONG, SIGNED_UP) is None
    settings = Settings()
    read = compare_texts(
        WROTE_A_SONG, "fact", SIGNED_UP, "fact", settings, 0.86, MODEL, novelty=novelty
    )
    assert read.action == "merge"  # as without the reading


def test_the_novel_merge_line_is_checked():
    with pytest.raises(Exception, match="novel_merge_line"):
        Settings(novel_merge_line=1.5)
