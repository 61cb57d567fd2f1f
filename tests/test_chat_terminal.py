"""`ankita chat` in a real terminal (tmux), against the fake model server; and the one-screen
help when no model answers."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from ankita import Memory
from fakemodel import FakeModel

ANKITA = str(Path(sys.executable).with_name("ankita"))

if shutil.which("tmux") is None:
    if os.environ.get("CI"):
        raise RuntimeError("tmux is missing: .ci/run installs it")
    pytest.skip("needs tmux", allow_module_level=True)


class Env(dict):
    """The chat's environment, and the fake model server it talks to."""

    fake: FakeModel


def chat_env(tmp_path, fake):
    """The environment of an `ankita chat` whose model is `fake` and whose files are in
    tmp_path."""
    values = Env(
        {
            "ANKITA_CHAT_PROVIDER": "ollama",
            "ANKITA_CHAT_URL": fake.url("ollama"),
            "ANKITA_CHAT_MODEL": "fake",
            "ANKITA_DB": str(tmp_path / "memory.db"),
            "ANKITA_USER": "sam",
            "ANKITA_EMBEDDER": "none",
            "ANKITA_CHAT_DB": str(tmp_path / "chat.db"),
            "ANKITA_PERSONA": str(tmp_path / "persona.json"),
        }
    )
    values.fake = fake
    return values


@pytest.fixture
def env(tmp_path):
    fake = FakeModel()
    yield chat_env(tmp_path, fake)
    fake.stop()


class Terminal:
    def __init__(self, env, *args):
        self.name = f"ankita-{uuid.uuid4().hex[:8]}"
        # A tmux server of its own: a shared one exits when its last session is killed, and a
        # session started meanwhile fails ("server exited unexpectedly").
        self.socket_dir = tempfile.mkdtemp(prefix="tmux")
        self.tmux = ["tmux", "-S", os.path.join(self.socket_dir, "socket")]
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        command = f"env {exports} {ANKITA} {' '.join(args)}; echo EXITED $?; sleep 30"
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", self.name, "-x", "150", "-y", "50", command],
            check=True,
        )

    def screen(self):
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", self.name, "-S", "-200"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def wait_for(self, text, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if text in self.screen():
                return self.screen()
            time.sleep(0.1)
        raise AssertionError(f"never saw {text!r}; the screen:\n{self.screen()}")

    def type(self, line):
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, line, "Enter"], check=True)

    def type_literally(self, line):
        """The line's characters as keys (no key names: "Enter" in it is five letters)."""
        if line:
            subprocess.run([*self.tmux, "send-keys", "-t", self.name, "-l", line], check=True)
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "Enter"], check=True)

    def press(self, *keys):
        """Keys by tmux's names ("C-g", "Enter")."""
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    def clear(self):
        """Forget the screen so far, so the next look is short."""
        subprocess.run([*self.tmux, "clear-history", "-t", self.name], check=True)

    def close(self):
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)
        shutil.rmtree(self.socket_dir, ignore_errors=True)


def test_a_chat_in_a_terminal_remembers_asks_and_resumes(env):
    term = Terminal(env, "chat")
    try:
        term.wait_for("Hi! I'm Ankita.")
        term.type("I live in Berlin")
        term.wait_for("Got it, I'll remember that.")
        term.wait_for("memory: remember(")
        term.type("I live in Munich")
        term.wait_for("my memory already says something different")
        term.type("Good morning")
        screen = term.wait_for("Which one is current?")
        assert "[SILENT]" not in screen
        term.type("/quit")
        term.wait_for("EXITED 0")
    finally:
        term.close()
    again = Terminal(env, "chat")
    try:
        term = again
        term.wait_for("resuming session default; the last messages:")
        term.wait_for("Which one is current?")  # the last messages, shown again
        term.type("be quiet please")  # the scripted model answers [SILENT]
        term.wait_for("you> be quiet please\n  (Ankita chose not to reply)\nyou>")  # no empty name
        term.type("Where do I live?")
        # Taken up again, the conversation asks its open question once more (the silent turn
        # did not use it up: the one on screen so far is the history shown), then answers.
        deadline = time.time() + 20
        while term.screen().count("Which one is current?") < 2 and time.time() < deadline:
            time.sleep(0.1)
        assert term.screen().count("Which one is current?") == 2, term.screen()
        term.type("Where do I live?")
        screen = term.wait_for("From what I remember:")
        assert "SILENT" not in screen.upper().replace("SILENTLY", "")
        term.type("/quit")
        term.wait_for("EXITED 0")
    finally:
        again.close()
    with Memory(env["ANKITA_DB"], user="sam", embedder="none") as memory:
        assert sorted(f.text for f in memory.list()) == ["I live in Berlin", "I live in Munich"]
        assert len(memory.conflicts()) == 1
    # `ankita chat` offers the model open_app, as `ankita voice` does.
    offered = {t["function"]["name"] for t in env.fake.requests[0]["tools"]}
    assert {"remember", "recall", "open_app"} <= offered


def test_without_a_model_chat_explains_how_to_get_one(tmp_path):
    result = subprocess.run(
        [ANKITA, "--db", str(tmp_path / "m.db"), "chat"],
        env={
            **os.environ,
            "ANKITA_CHAT_URL": "http://127.0.0.1:9",
            "ANKITA_CHAT_DB": str(tmp_path / "chat.db"),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 6
    assert "none answered at http://127.0.0.1:9" in result.stdout
    assert "ollama pull" in result.stdout and "ANKITA_CHAT_PROVIDER=openai" in result.stdout
    assert len(result.stdout.splitlines()) <= 25  # one screen
    assert "Traceback" not in result.stderr


def test_arrow_keys_edit_the_line_and_a_control_character_never_breaks_the_chat(env):
    term = Terminal(env, "chat")
    try:
        term.wait_for("Hi! I'm Ankita.")
        # Left arrow twice, then X: line editing moves the cursor, no escape reaches the chat.
        subprocess.run([*term.tmux, "send-keys", "-t", term.name, "I live in Rome"], check=True)
        subprocess.run([*term.tmux, "send-keys", "-t", term.name, "Left", "Left", "X"], check=True)
        subprocess.run([*term.tmux, "send-keys", "-t", term.name, "Enter"], check=True)
        term.wait_for("Got it, I'll remember that.")
        # A line of nothing but an escape sequence: a word, nothing sent, the chat goes on.
        subprocess.run([*term.tmux, "send-keys", "-t", term.name, "-l", "\x1b[2J"], check=True)
        subprocess.run([*term.tmux, "send-keys", "-t", term.name, "Enter"], check=True)
        term.type("Where do I live?")
        screen = term.wait_for("From what I remember:")
        assert "error" not in screen
        term.type("/quit")
        term.wait_for("EXITED 0")
    finally:
        term.close()
    with Memory(env["ANKITA_DB"], user="sam", embedder="none") as memory:
        assert [f.text for f in memory.list()] == ["I live in RoXme"]


def test_a_fact_said_in_hindi_reaches_the_prompt_of_an_english_question(env):
    peanuts = "मुझे मूंगफली से एलर्जी है"  # I am allergic to peanuts
    with Memory(env["ANKITA_DB"], user="sam", embedder="none") as memory:
        for text in ("I drive a grey Honda City", "My sister lives in Lyon", peanuts):
            memory.remember(text)
    term = Terminal(env, "chat")
    try:
        term.wait_for("Hi! I'm Ankita.")
        term.type("What am I allergic to?")
        term.wait_for("From what I remember:")
        term.type("/quit")
        term.wait_for("EXITED 0")
    finally:
        term.close()
    asked = [r for r in env.fake.requests if "allergic" in json.dumps(r, ensure_ascii=False)]
    system = asked[-1]["messages"][0]["content"]
    assert peanuts in system
