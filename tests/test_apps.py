"""open_app against a temporary XDG tree of synthetic .desktop files, with a recording
launcher (nothing is really started)."""

import json
import os

import pytest
from click.testing import CliRunner

from ankita import InvalidInput, Memory
from ankita.cli import cli
from ankita.companion._apps import AppIndex, discover


def desktop(folder, name, **fields):
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[Desktop Entry]", "Type=" + fields.pop("Type", "Application")]
    lines += [f"{k}={v}" for k, v in fields.items()]
    (folder / name).write_text("\n".join(lines) + "\n")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    home, system = tmp_path / "home" / "applications", tmp_path / "usr" / "applications"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "usr"))
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "GNOME")
    desktop(
        system,
        "org.gnome.Calculator.desktop",
        Name="Calculator",
        GenericName="Calculator",
        Keywords="math;sums;",
        Exec="gnome-calculator %U",
    )
    desktop(
        system,
        "firefox.desktop",
        Name="Firefox Web Browser",
        GenericName="Web Browser",
        Exec="firefox %u",
    )
    desktop(system, "hidden.desktop", Name="Hidden Thing", Exec="hidden", Hidden="true")
    desktop(system, "nodisplay.desktop", Name="Background Helper", Exec="helper", NoDisplay="true")
    desktop(
        system,
        "missing.desktop",
        Name="Not Installed",
        Exec="nothere",
        TryExec="/definitely/not/here",
    )
    desktop(system, "kde-only.desktop", Name="Konsole", Exec="konsole", OnlyShowIn="KDE;")
    desktop(system, "link.desktop", Name="A Website", Type="Link", URL="https://example.org")
    desktop(
        system / "kde",
        "writer.desktop",
        Name="LibreOffice Writer",
        Exec="lowriter %F",
        Keywords="word;document;",
    )
    desktop(system, "other-calculator.desktop", Name="Calc (copy)", Exec="gnome-calculator %U")
    # The user's own copy of an id wins over the system's.
    desktop(home, "firefox.desktop", Name="Firefox", Exec="firefox --private-window %u")
    desktop(system, "code.desktop", Name="Visual Studio Code", Exec="code %F")
    desktop(system, "codium.desktop", Name="VSCodium", Exec="codium %F")
    desktop(
        system,
        "org.gnome.TextEditor.desktop",
        Name="GNOME Text Editor",
        Exec="gnome-text-editor %U",
    )
    desktop(system, "org.kde.kate.desktop", Name="Kate Text Editor", Exec="kate %U")
    return tmp_path


def recording():
    launched = []
    return launched, launched.append


def test_discovery_honours_the_desktop_entry_rules(tree):
    apps = {app.id: app for app in discover("linux")}
    assert set(apps) == {
        "org.gnome.Calculator",
        "firefox",
        "kde-writer",
        "code",
        "codium",
        "org.gnome.TextEditor",
        "org.kde.kate",
    }
    assert apps["firefox"].argv == ("firefox", "--private-window")  # first found wins
    assert apps["org.gnome.Calculator"].argv == ("gnome-calculator",)  # field codes gone
    assert apps["org.gnome.Calculator"].aliases == ("Calculator", "math", "sums")


def test_sure_matches_launch_and_unsure_ones_ask(tree):
    launched, launch = recording()
    index = AppIndex("linux", launch=launch)
    assert index.open("calculator").kind == "launch"
    assert index.open("firefx").kind == "launch"  # a typo, still clearly one app
    assert index.open("sums").kind == "launch"  # an alias (Keywords)
    assert launched == [
        ("gnome-calculator",),
        ("firefox", "--private-window"),
        ("gnome-calculator",),
    ]
    tie = index.open("code")  # exact id: no doubt
    assert tie.kind == "launch"
    assert index.open("vscod").app.name == "VSCodium"  # close to one name only
    unsure = index.open("text editor")  # two apps fit equally well
    assert (
        unsure.kind == "ask"
        and "GNOME Text Editor" in unsure.message
        and "Kate Text Editor" in unsure.message
    )
    assert index.open("photoshop").kind == "none"
    assert len(launched) == 5  # asking never launches
    with pytest.raises(InvalidInput):
        index.open("   ")


def test_the_index_refreshes_when_the_folders_change(tree):
    launched, launch = recording()
    index = AppIndex("linux", launch=launch)
    assert index.open("gimp").kind == "none"
    new = tree / "home" / "applications"
    desktop(
        new,
        "gimp.desktop",
        Name="GNU Image Manipulation Program",
        GenericName="GIMP",
        Exec="gimp-2.10 %U",
    )
    os.utime(new, (os.stat(new).st_atime, os.stat(new).st_mtime + 5))
    assert index.open("gimp").kind == "launch" and launched == [("gimp-2.10",)]


def test_windows_shortcuts_and_mac_bundles(tmp_path):
    start = tmp_path / "Start Menu" / "Programs"
    (start / "Accessories").mkdir(parents=True)
    (start / "Accessories" / "Notepad.lnk").write_bytes(b"L")
    (start / "Notepad.lnk").write_bytes(b"L")
    windows = discover("win32", [start])
    assert [a.name for a in windows] == ["Notepad"]  # the same shortcut twice: offered once
    (tmp_path / "Applications" / "Safari.app").mkdir(parents=True)
    [safari] = discover("darwin", [tmp_path / "Applications"])
    assert safari.argv[:2] == ("open", "-a") and safari.name == "Safari"


def test_apps_commands(tree):
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, ["apps", "list", "--json"]).output)
    assert "Calculator" in [a["name"] for a in listed]
    asked = runner.invoke(cli, ["apps", "open", "text", "editor", "--dry-run"])
    assert asked.exit_code == 0 and "which one did you mean" in asked.output
    sure = runner.invoke(cli, ["apps", "open", "calculator", "--dry-run"])
    assert sure.exit_code == 0 and "would run: gnome-calculator" in sure.output
    none = runner.invoke(cli, ["apps", "open", "photoshop", "--dry-run"])
    assert none.exit_code == 3 and "no installed app" in none.output


def test_the_companion_opens_apps_and_asks_when_unsure(tree, tmp_path):
    from ankita import Memory
    from ankita.companion import Companion, ModelSettings, Persona, Transcripts, open_model
    from fakemodel import FakeModel, Say

    def brain(body):
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Say(last["content"])
        return Say(tool_calls=[("open_app", {"name": last["content"].split("open ", 1)[1]})])

    fake = FakeModel(brain)
    launched, launch = recording()
    chat = Companion(
        Memory(tmp_path / "m.db", embedder="none"),
        open_model(ModelSettings(provider="ollama", base_url=fake.url("ollama"), model="fake")),
        Persona.default(),
        Transcripts(tmp_path / "chat.db"),
        apps=AppIndex("linux", launch=launch),
    )
    assert chat.send("please open the calculator").text == "Opening Calculator."
    assert launched == [("gnome-calculator",)]
    assert "open_app" in {t["function"]["name"] for t in fake.requests[0]["tools"]}
    unsure = chat.send("please open text editor")
    assert unsure.text.startswith("Not sure which app: ask the user which one did you mean")
    assert launched == [("gnome-calculator",)]
    fake.stop()


def test_field_codes_inside_an_argument_are_gone_too(tree):
    system = tree / "usr" / "applications"
    desktop(system, "viewer.desktop", Name="Viewer", Exec="viewer --file=%f --title=100%% %U")
    [viewer] = [a for a in discover("linux") if a.id == "viewer"]
    assert viewer.argv == ("viewer", "--file=", "--title=100%")


def test_a_terminal_app_runs_in_a_terminal_or_is_not_offered(tree, tmp_path, monkeypatch):
    system = tree / "usr" / "applications"
    desktop(system, "htop.desktop", Name="Htop", Exec="htop", Terminal="true")
    monkeypatch.setenv("PATH", str(tmp_path / "no-terminals"))
    assert "htop" not in {a.id for a in discover("linux")}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xterm").write_text("#!/bin/sh\n")
    (bin_dir / "xterm").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    [htop] = [a for a in discover("linux") if a.id == "htop"]
    assert htop.argv == ("xterm", "-e", "htop")


def test_names_in_the_users_language(tree, monkeypatch):
    system = tree / "usr" / "applications"
    desktop(
        system,
        "org.gnome.Calculator.desktop",
        **{"Name": "Calculator", "Name[de]": "Rechner", "Keywords[de]": "Mathe;"},
        Exec="gnome-calculator %U",
    )
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    launched, launch = recording()
    index = AppIndex("linux", launch=launch)
    calculator = index.open("rechner")
    assert calculator.kind == "launch" and calculator.app.name == "Rechner"
    assert index.open("calculator").kind == "launch"  # the untranslated name still works
    assert index.open("mathe").kind == "launch"
    assert launched == [("gnome-calculator",)] * 3


def test_a_query_that_is_not_a_name_launches_nothing(tree):
    launched, launch = recording()
    index = AppIndex("linux", launch=launch)
    for query in ("calculator; rm -rf /", "calculator && reboot", "$(calculator)", "calc\nrm"):
        with pytest.raises(InvalidInput, match="not an app name"):
            index.open(query)
    assert launched == []


def test_a_missing_program_is_a_clear_error_never_a_traceback(tree, tmp_path):
    from ankita import NotFound
    from ankita.companion import Companion, ModelSettings, Persona, Transcripts, open_model
    from ankita.companion._apps import _default_launch
    from fakemodel import FakeModel, Say

    system = tree / "usr" / "applications"
    desktop(system, "gone.desktop", Name="Gone Away", Exec=str(tmp_path / "not-installed"))
    index = AppIndex("linux", launch=_default_launch)
    with pytest.raises(NotFound, match="could not open Gone Away"):
        index.open("gone away")
    result = CliRunner().invoke(cli, ["apps", "open", "gone", "away"])
    assert result.exit_code == 3 and "could not open Gone Away" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)

    # Through the model's open_app tool: the error goes back to the model, the session goes on.
    def brain(body):
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Say(last["content"])
        if "open" in last["content"]:
            return Say(tool_calls=[("open_app", {"name": "gone away"})])
        return Say("Still here.")

    fake = FakeModel(brain)
    chat = Companion(
        Memory(tmp_path / "m.db", embedder="none"),
        open_model(ModelSettings(provider="ollama", base_url=fake.url("ollama"), model="fake")),
        Persona.default(),
        Transcripts(tmp_path / "chat.db"),
        apps=index,
    )
    failed = chat.send("please open gone away")
    assert failed.text.startswith("error (not_found): could not open Gone Away")
    assert chat.send("are you there?").text == "Still here."
    fake.stop()
