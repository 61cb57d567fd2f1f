"""The personality card (Character Card V2/V3), the one prompt builder, reply classes, and the
`ankita persona` commands."""

import json

import pytest
from click.testing import CliRunner

from ankita import InvalidInput
from ankita.cli import cli
from ankita.companion import Persona, build_system_prompt, classify

V2_CARD = {
    "spec": "chara_card_v2",
    "spec_version": "2.0",
    "data": {
        "name": "Mira",
        "description": "A night-owl astronomer.",
        "personality": "dry, warm",
        "scenario": "",
        "first_mes": "Evening, {{user}}.",
        "mes_example": "<START>\n{{user}}: Hi\n{{char}}: Look up.",
        "creator_notes": "",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": ["Yo."],
        "tags": ["space"],
        "creator": "someone",
        "character_version": "7",
        "character_book": {"entries": [{"keys": ["moon"]}]},
        "extensions": {"depth_prompt": {"depth": 4, "prompt": "x"}},
    },
    "unknown_top_level": {"kept": True},
}


def test_a_v2_card_survives_import_and_export_with_everything_it_had():
    card = Persona.from_dict(V2_CARD)
    exported = json.loads(card.to_json())
    assert exported["unknown_top_level"] == {"kept": True}
    for key, value in V2_CARD["data"].items():
        if key != "extensions":
            assert exported["data"][key] == value, key
    assert exported["data"]["extensions"]["depth_prompt"] == {"depth": 4, "prompt": "x"}
    assert exported["data"]["extensions"]["ankita"] == {}  # our settings: defaults apply
    assert card.setting("caring") == "high"
    assert Persona.from_json(card.to_json()).card == card.card  # a second round trip is exact


def test_bad_cards_and_settings_are_refused():
    with pytest.raises(InvalidInput, match="needs a name"):
        Persona.from_dict({"data": {"description": "nobody"}})
    with pytest.raises(InvalidInput, match="not JSON"):
        Persona.from_json("{nope")
    with pytest.raises(InvalidInput, match="teasing must be one of"):
        Persona.default().set("teasing", "cruel")
    with pytest.raises(InvalidInput, match="unknown field"):
        Persona.default().set("haircut", "short")
    with pytest.raises(InvalidInput, match="extensions.ankita"):
        Persona.from_dict({"data": {"name": "X", "extensions": {"ankita": "loud"}}})


def test_one_prompt_builder_for_every_front_end():
    card = Persona.default().set("reply_length", "medium").set("language", "German")
    prompt = build_system_prompt(
        card,
        "sam",
        "Known facts about the user:\n- [a1] I use Vim",
        question="Ask which is current.",
        summary="We met.",
    )
    assert prompt.startswith("You are Ankita, a companion who talks with sam")
    assert "answer in German, in a short paragraph" in prompt
    for part in ("I use Vim", "Ask which is current.", "We met.", "Example exchanges"):
        assert part in prompt
    assert "{{char}}" not in prompt and "{{user}}" not in prompt


def test_examples_keep_their_own_budget_whole_blocks_only():
    blocks = "".join(
        f"<START>\n{{{{user}}}}: question {i}\n{{{{char}}}}: answer {i} " + "la " * 40 + "\n"
        for i in range(30)
    )
    card = Persona.default().set("mes_example", blocks)
    kept = card.examples("sam", 300)
    assert 0 < kept.count("question") < 30 and "question 0" in kept
    assert kept.count("question") == kept.count("answer")  # never half an exchange
    # However long the chat, the examples are in the prompt: the budget is their own.
    prompt = build_system_prompt(card, "sam", "x" * 20000)
    assert "question 0" in prompt


@pytest.mark.parametrize(
    "reply,kind,text",
    [
        ("[SILENT]", "silent", ""),
        ("NO_REPLY", "silent", ""),
        ("[silent]", "silent", ""),
        ("[SILENT", "silent", ""),
        ("  no_reply. ", "silent", ""),
        ("", "silent", ""),
        ("<silent>", "silent", ""),
        ("(NO REPLY)", "silent", ""),
        ("[SILENT] Drink water!", "normal", "Drink water!"),
        ("Good night. NO_REPLY", "normal", "Good night."),
        ("Silent night is my favourite carol", "normal", "Silent night is my favourite carol"),
        ("I'll stay silent about it", "normal", "I'll stay silent about it"),
        ("Hello!", "normal", "Hello!"),
    ],
)
def test_reply_classes(reply, kind, text):
    verdict = classify(reply)
    assert (verdict.kind, verdict.text) == (kind, text)
    assert classify("anything", failed=True).kind == "error"


def test_persona_commands(tmp_path, monkeypatch):
    monkeypatch.setenv("ANKITA_PERSONA", str(tmp_path / "persona.json"))
    runner = CliRunner()
    shown = runner.invoke(cli, ["persona", "show", "--json"])
    assert json.loads(shown.output)["data"]["name"] == "Ankita"
    assert runner.invoke(cli, ["persona", "set", "teasing", "playful"]).exit_code == 0
    refused = runner.invoke(cli, ["persona", "set", "teasing", "cruel"])
    assert refused.exit_code == 2 and "teasing must be one of" in refused.output
    card_file = tmp_path / "mira.json"
    card_file.write_text(json.dumps(V2_CARD))
    assert runner.invoke(cli, ["persona", "import", str(card_file)]).exit_code == 0
    exported = json.loads(runner.invoke(cli, ["persona", "export"]).output)
    assert exported["data"]["name"] == "Mira" and exported["unknown_top_level"]["kept"]
    monkeypatch.setenv("EDITOR", "sed -i s/Mira/Nova/")
    assert runner.invoke(cli, ["persona", "edit"]).exit_code == 0
    assert json.loads((tmp_path / "persona.json").read_text())["data"]["name"] == "Nova"
    monkeypatch.setenv("EDITOR", "sed -i s/Nova//")  # an empty name: refused, nothing saved
    bad = runner.invoke(cli, ["persona", "edit"])
    assert bad.exit_code == 2 and "needs a name" in bad.output
    assert json.loads((tmp_path / "persona.json").read_text())["data"]["name"] == "Nova"
