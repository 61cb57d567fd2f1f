import pytest

import ankita


def test_public_api_is_curated_and_sorted():
    assert ankita.__all__ == sorted(ankita.__all__, key=lambda n: (not n.isupper(), n))
    for name in ankita.__all__:
        assert hasattr(ankita, name), name
    assert {"Memory", "Fact", "WriteResult", "Recall", "AnkitaError"} <= set(ankita.__all__)


def test_every_error_has_one_root_and_a_code():
    for name in (
        "InvalidInput",
        "ConfigError",
        "NotFound",
        "UndoError",
        "StoreError",
        "ModelError",
        "ChannelError",
    ):
        cls = getattr(ankita, name)
        assert issubclass(cls, ankita.AnkitaError)
        assert cls.code != ankita.AnkitaError.code


def test_core_does_not_import_cli():
    import importlib
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ankita, sys; print('ankita.cli' in sys.modules, 'click' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["False", "False"]
    importlib.import_module("ankita")


def test_settings_from_environment(monkeypatch):
    monkeypatch.setenv("ANKITA_DEDUP_THRESHOLD", "0.9")
    assert ankita.Settings.from_env().dedup_threshold == 0.9
    assert ankita.Settings.from_env(dedup_threshold=0.8).dedup_threshold == 0.8
    monkeypatch.setenv("ANKITA_DEDUP_THRESHOLD", "high")
    import pytest

    with pytest.raises(ankita.ConfigError):
        ankita.Settings.from_env()


def test_bad_settings_are_refused():
    import pytest

    with pytest.raises(ankita.ConfigError):
        ankita.Settings(dedup_threshold=1.5)
    with pytest.raises(ankita.ConfigError):
        ankita.Settings(dedup_threshold=0.5, conflict_threshold=0.6)
    with pytest.raises(ankita.ConfigError):
        ankita.Memory(":memory:", embedder="no-such-embedder")


def test_per_kind_thresholds(tmp_path):
    settings = ankita.Settings(per_kind={"tool": (0.99, 0.55)})
    with ankita.Memory(tmp_path / "m.db", embedder="none", settings=settings) as m:
        m.remember("I prefer dark mode in editors", kind="tool")
        # containment 0.875 merges under the default line but not under the tool's 0.99
        assert (
            m.remember("I prefer dark mode in editors and terminals", kind="tool").action
            == "created"
        )
        m.remember("I prefer dark mode in editors", kind="habit")
        assert (
            m.remember("I prefer dark mode in editors and terminals", kind="habit").action
            == "merged"
        )


@pytest.mark.slow
def test_the_wheel_carries_the_data_and_the_review_page(tmp_path):
    """An editable install reads files from the checkout; a real install reads the wheel."""
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(root), "--no-deps", "-q", "-w", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    [wheel] = tmp_path.glob("ankita-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "ankita/web/index.html",
        "ankita/web/review.js",
        "ankita/web/review.css",
        "ankita/data/pairs.jsonl",
        "ankita/data/minilm-vocab.txt",
        "ankita/py.typed",
    ):
        assert needed in names, needed


def test_actions_statuses_and_decisions_are_closed_sets_of_words(tmp_path):
    """One vocabulary per thing (issue 36): a write's action, a fact's status and a pair's
    decision are enums, each member equal to, printed as and serialised as its word."""
    import json

    from ankita import Action, Decision, Memory, Status

    with Memory(tmp_path / "m.db", embedder="none") as memory:
        first = memory.remember("I use Postgres at work")
        again = memory.remember("I use Postgres at work")
        stored = memory.get(first.fact.id)
        compared = memory.compare("I live in Berlin", "I don't live in Berlin")
    assert (first.action, again.action) == (Action.CREATED, Action.MERGED)
    assert type(first.action) is Action and again.action == "merged"
    assert type(stored.status) is Status and stored.status == "active"
    assert type(compared.action) is Decision and compared.action == "conflict"
    assert json.loads(json.dumps(again.to_dict()))["action"] == "merged"
    assert f"{again.action} / {stored.status}" == "merged / active"
    with pytest.raises(ValueError):
        ankita.Fact(**{**stored.to_dict(), "status": "deleted", "conflicts_with": ()})
