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


def png_with(card: dict, keyword: str) -> bytes:
    """A PNG as card sites share them: the card's JSON, base64, in a tEXt chunk."""
    import base64
    import struct
    import zlib

    from ankita.companion.persona._cardpng import blank_image

    def chunk(kind, body):
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    image = blank_image()
    text = keyword.encode() + b"\x00" + base64.b64encode(json.dumps(card).encode())
    return image[:-12] + chunk(b"tEXt", text) + image[-12:]  # before IEND


@pytest.mark.parametrize("keyword", ["chara", "ccv3"])
def test_a_png_card_is_imported_and_a_card_exported_as_png(tmp_path, monkeypatch, keyword):
    import io

    from PIL import Image

    monkeypatch.setenv("ANKITA_PERSONA", str(tmp_path / "persona.json"))
    (tmp_path / "mira.png").write_bytes(png_with(V2_CARD, keyword))
    runner = CliRunner()
    imported = runner.invoke(cli, ["persona", "import", str(tmp_path / "mira.png")])
    assert imported.exit_code == 0, imported.output
    assert "now Mira" in imported.output
    out = tmp_path / "out.png"
    assert runner.invoke(cli, ["persona", "export", str(out)]).exit_code == 0
    # A real PNG decoder reads the image, and both chunks hold the card.
    picture = Image.open(io.BytesIO(out.read_bytes()))
    picture.load()
    assert picture.size == (1, 1)
    for name in ("chara", "ccv3"):
        import base64

        card = json.loads(base64.b64decode(picture.text[name]))
        assert card["data"]["name"] == "Mira" and card["unknown_top_level"] == {"kept": True}
    again = runner.invoke(cli, ["persona", "import", str(out)])
    assert again.exit_code == 0 and "now Mira" in again.output


def test_a_png_without_a_card_or_damaged_is_a_clear_error(tmp_path, monkeypatch):
    from ankita.companion.persona._cardpng import blank_image

    monkeypatch.setenv("ANKITA_PERSONA", str(tmp_path / "persona.json"))
    runner = CliRunner()
    plain = tmp_path / "plain.png"
    plain.write_bytes(blank_image())
    result = runner.invoke(cli, ["persona", "import", str(plain)])
    assert result.exit_code == 2 and "no character card in it" in result.output
    broken = tmp_path / "broken.png"
    broken.write_bytes(png_with(V2_CARD, "chara")[:-30])
    result = runner.invoke(cli, ["persona", "import", str(broken)])
    assert result.exit_code == 2 and ("cut short" in result.output or "damaged" in result.output)
    binary = tmp_path / "noise.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    result = runner.invoke(cli, ["persona", "import", str(binary)])
    assert result.exit_code == 2 and "neither a PNG image nor UTF-8 JSON" in result.output
    assert not (tmp_path / "persona.json").exists()  # nothing was saved


def test_post_history_instructions_come_after_the_history():
    from ankita.companion.persona._persona import post_history

    card = Persona.from_dict(
        {**V2_CARD, "data": {**V2_CARD["data"], "post_history_instructions": "Stay with {{user}}."}}
    )
    assert "Stay with" not in build_system_prompt(card, "sam")
    assert post_history(card, "sam") == {"role": "system", "content": "Stay with sam."}
    assert post_history(Persona.default(), "sam") is None


def test_lorebook_entries_come_in_when_their_keys_are_said():
    card = Persona.from_dict(
        {
            **V2_CARD,
            "data": {
                **V2_CARD["data"],
                "character_book": {
                    "entries": [
                        {"keys": ["moon", "lunar"], "content": "{{char}} keeps a moon diary."},
                        {
                            "keys": ["comet"],
                            "content": "A comet once named after her.",
                            "enabled": False,
                        },
                        {"keys": [], "content": "She lives in Lisbon.", "constant": True},
                        {"keys": ["tea"], "content": "x " * 2000},  # over the budget: left out
                    ]
                },
            },
        }
    )
    assert card.lore("what about the comet and tea?", "sam") == ["She lives in Lisbon."]
    assert card.lore("Look at the MOON tonight", "sam") == [
        "Mira keeps a moon diary.",
        "She lives in Lisbon.",
    ]
    prompt = build_system_prompt(card, "sam", lore=card.lore("the moon", "sam"))
    assert "Background (from the card's lorebook):\nMira keeps a moon diary." in prompt


def test_alternate_greetings_are_used_and_stable_per_session():
    card = Persona.from_dict(
        {**V2_CARD, "data": {**V2_CARD["data"], "alternate_greetings": ["Hey {{user}}.", "Yo."]}}
    )
    seen = {card.greeting("sam", f"session-{i}") for i in range(30)}
    assert seen == {"Evening, sam.", "Hey sam.", "Yo."}
    assert card.greeting("sam", "evening") == card.greeting("sam", "evening")
    assert card.greeting("sam") == "Evening, sam."  # no session: the first message


def test_an_exported_card_is_private_and_a_bad_target_changes_nothing(tmp_path, monkeypatch):
    """A card may hold what the user told it about themselves: the file is 0600, written
    beside its target and renamed, and a target that cannot be written is a clear error."""
    import os
    import stat

    monkeypatch.setenv("ANKITA_PERSONA", str(tmp_path / "persona.json"))
    old = os.umask(0o022)
    try:
        runner = CliRunner()
        for name in ("card.json", "card.png"):
            out = tmp_path / name
            result = runner.invoke(cli, ["persona", "export", str(out)])
            assert result.exit_code == 0, result.output
            assert stat.S_IMODE(out.stat().st_mode) == 0o600
            assert not (tmp_path / f"{name}.partial").exists()
        assert json.loads((tmp_path / "card.json").read_text())["data"]["name"] == "Ankita"
        (tmp_path / "a-file").write_text("not a folder")
        failed = runner.invoke(cli, ["persona", "export", str(tmp_path / "a-file" / "card.json")])
        assert failed.exit_code == 2 and "cannot write" in failed.output
        assert "Traceback" not in failed.output
        assert (tmp_path / "a-file").read_text() == "not a folder"
    finally:
        os.umask(old)


def test_original_in_a_cards_system_prompt_is_ankitas_own_opening_line():
    keeps = Persona.from_dict(
        {
            **V2_CARD,
            "data": {**V2_CARD["data"], "system_prompt": "{{original}} Talk like a pirate."},
        }
    )
    prompt = build_system_prompt(keeps, "sam")
    assert "{{original}}" not in prompt and "Talk like a pirate." in prompt
    assert "a companion who talks with sam and remembers what sam tells you" in prompt
    replaces = Persona.from_dict(
        {**V2_CARD, "data": {**V2_CARD["data"], "system_prompt": "Talk like a pirate."}}
    )
    assert "remembers what sam tells you" not in build_system_prompt(replaces, "sam")
