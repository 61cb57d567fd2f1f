"""Facts in the user's language (docs/languages.md): Unicode-correct words, the language of each
fact, cues glossed per language, the English model's cosine kept off facts it cannot read, and
the shipped multilingual pairs scored per language."""

import json

import pytest
from click.testing import CliRunner

from ankita import Memory
from ankita.analysis._language import WORD, foreign_tokens, language, reads
from ankita.analysis._subjects import subject
from ankita.analysis._text import content_words, number_value, tokens
from ankita.cli import cli


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I live in Boston", "en"),
        ("Justus von Liebig specializes in sociology.", "en"),  # a name particle is no German
        ("Tlaquepaque is in Mexico", "en"),
        ("मैं दिल्ली में रहता हूँ", "hi"),
        ("Mujhe chai pasand nahi hai", "hi-latn"),
        ("Main vegetarian hoon", "hi-latn"),
        ("Ich bin kein Vegetarier", "de"),
        ("No me gusta el té", "es"),
        ("Je ne suis pas végétarien", "fr"),
        ("Eu não gosto de chá", "pt"),
        ("Non mi piace il tè", "it"),
        ("Ik hou niet van thee", "nl"),
        ("Я не люблю чай", "ru"),
        ("Saya tidak suka teh", "id"),
        ("我不喜欢喝茶", "zh"),
        ("紅茶は好きではありません", "ja"),
    ],
)
def test_each_fact_is_read_in_its_own_language(text, expected):
    assert language(text) == expected


def test_devanagari_words_keep_their_vowel_signs():
    # "दिल्ली" was three letters when combining marks split words.
    assert WORD.findall("मैं दिल्ली में रहता हूँ") == ["मैं", "दिल्ली", "में", "रहता", "हूँ"]
    assert WORD.findall("தமிழ் நாடு") == ["தமிழ்", "நாடு"]
    assert not {"द", "ल"} & set(tokens("मैं दिल्ली में रहता हूँ"))


def test_a_hindi_reason_prints_whole_words():
    result = CliRunner().invoke(
        cli, ["--embedder", "none", "compare", "मैं दिल्ली में रहता हूँ", "मैं मुंबई में रहता हूँ"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("conflict")
    assert "'दिल्ली' vs 'मुंबई'" in result.output
    explained = CliRunner().invoke(
        cli, ["--embedder", "none", "compare", "--explain", "मैं दिल्ली में रहता हूँ", "मैं मुंबई में रहता हूँ"]
    )
    assert "finding: value: 'दिल्ली' vs 'मुंबई'" in explained.output


def test_numbers_in_other_scripts_are_numbers():
    toks = tokens("मेरी उम्र २८ साल है")
    assert number_value(toks, toks.index("२८")) == "28"
    assert "28" in content_words("मेरी उम्र २८ साल है")


def test_chinese_and_japanese_are_split_without_spaces():
    assert tokens("我住在上海") == ("i", "live", "上海")
    assert "not" in tokens("我不喜欢喝茶")
    # Japanese puts the verb last; its negation is moved where the rules read it.
    assert tokens("紅茶は好きではありません")[:2] == ("not", "like")


def test_nfkc_and_case_folding_apply_to_every_script():
    assert tokens("ＩＣＨ BIN KEIN VEGETARIER") == tokens("ich bin kein vegetarier")
    assert foreign_tokens("Мой брат живёт в Самаре", "ru") == foreign_tokens(
        "мой брат живет в самаре", "ru"
    )


@pytest.mark.parametrize("embedder", ["none", "local"])
@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("मुझे चाय पसंद है", "मुझे चाय पसंद नहीं है", "conflict"),  # was a merge (cosine 0.95)
        ("Ich bin Vegetarier", "Ich bin kein Vegetarier", "conflict"),  # was a merge
        ("मैं दिल्ली में रहता हूँ", "मैं मुंबई में रहता हूँ", "conflict"),
        ("Mujhe chai pasand hai", "Mujhe chai pasand nahi hai", "conflict"),
        ("Je fume", "Je ne fume plus", "conflict"),
        ("Ich trinke jeden Morgen Kaffee", "Jeden Morgen trinke ich Kaffee", "merged"),
        ("Mi hermana se llama Lucía", "Mi hermana trabaja en un banco", "created"),
        ("Ich mag Tee", "Ich mag Fußball", "created"),
    ],
)
def test_the_issue_pairs_are_decided_in_their_language(tmp_path, embedder, old, new, expected):
    memory = Memory(tmp_path / "m.db", embedder=embedder)
    memory.remember(old)
    assert memory.remember(new).action == expected


@pytest.mark.parametrize(
    "old, new",
    [
        ("Vivo en Madrid", "Ana vive en Lisboa"),
        ("Trabajo en un banco", "Trabaja en una escuela"),
        ("Moro em Lisboa", "Ana mora no Porto"),
        ("Abito a Roma", "Giulia abita a Torino"),
    ],
)
def test_a_verb_in_the_third_person_is_not_the_user_whose_pronoun_was_dropped(tmp_path, old, new):
    # Spanish, Portuguese and Italian drop "I"; "vive" is "lives", so the fact is Ana's.
    assert subject(old) == "self" and subject(new) != "self"
    memory = Memory(tmp_path / "m.db", embedder="none")
    memory.remember(old)
    assert memory.remember(new).action == "created"


def test_the_english_model_is_not_trusted_on_other_languages():
    assert reads("local:minilm-l6-int8", ["en"])
    assert not reads("local:minilm-l6-int8", ["en", "hi"])
    assert reads("ollama:some-multilingual-model", ["hi"])
    # English models by name: Cloudflare's default, Ollama's MiniLM; a multilingual MiniLM reads.
    assert not reads("cloudflare:@cf/baai/bge-base-en-v1.5", ["de"])
    assert not reads("ollama:all-minilm", ["ru"])
    assert reads("openai:paraphrase-multilingual-minilm-l12-v2", ["ru"])
    assert reads("cloudflare:@cf/baai/bge-m3", ["zh"])
    pair = ["compare", "--explain", "--json", "मुझे चाय पसंद है", "मुझे चाय पसंद नहीं है"]
    result = CliRunner().invoke(cli, pair, env={"ANKITA_MULTILINGUAL": "off"})
    assert result.exit_code == 0, result.output
    gates = {g["gate"]: g["passed"] for g in json.loads(result.output)["gates"]}
    assert gates["the model reads the facts' language (hi)"] is False
    # With the multilingual space (the default), its model reads the pair instead.
    read = json.loads(CliRunner().invoke(cli, pair).output)
    gates = {g["gate"]: g["passed"] for g in read["gates"]}
    assert gates["the model reads the facts' language (hi)"] is True and read["cosine"] > 0.9


def test_a_language_switch_inside_one_store(tmp_path):
    memory = Memory(tmp_path / "m.db", embedder="none")
    memory.remember("I live in Berlin")
    memory.remember("Ich wohne in Hamburg")
    memory.remember("मैं दिल्ली में रहता हूँ")
    texts = [r.fact.text for r in memory.recall("दिल्ली", limit=3).facts]
    assert texts[0] == "मैं दिल्ली में रहता हूँ"


@pytest.mark.slow
def test_multilingual_pairs_meet_their_targets():
    for embedder in ("none", "local"):
        result = CliRunner().invoke(
            cli, ["--embedder", embedder, "eval", "--multilingual", "--json"]
        )
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert report["macro_f1"] >= 0.80, (embedder, report["macro_f1"])
        assert report["wrong_merge_rate"] <= 0.03, (embedder, report["wrong_merge_rate"])
        sources = report["by_source"]
        assert len(sources) == 13  # English and twelve others
        for source, figures in sources.items():
            assert figures["pairs"] >= 15, source
            assert figures["macro_f1"] >= 0.70, (embedder, source, figures)


def test_multilingual_flag_refuses_a_file(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"a": "x", "b": "y", "label": "neither"}\n')
    result = CliRunner().invoke(cli, ["eval", "--multilingual", str(path)])
    assert result.exit_code == 2
    assert "--multilingual" in result.output
