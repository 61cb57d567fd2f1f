"""A fuzzed conversation: generated input (control characters, escape sequences, lone
surrogates, RTL marks, 50 kB messages, emoji, empty lines, bursts) through the companion's turn,
each channel fake and `ankita chat` in a terminal. Every turn answers or says why, the next
ordinary message is answered, and the session resumes.

Bounded to a few examples in the quick loop; the `slow` variants run for ANKITA_FUZZ_SECONDS
each (5 by default, so the suite stays as quick; 120 for the ten-minute run the README gives)."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ankita import AnkitaError, Memory
from ankita.companion import Companion, ModelSettings, Persona, Transcripts, open_model
from ankita.companion.channels._channels import Channels
from ankita.companion.channels._relay import NOTHING_TO_READ, SORRY, UNREAD, Relay
from ankita.companion.chat._input import clean_message
from fakemodel import FakeModel, Say
from waiting import wait_for

FUZZ_SECONDS = float(os.environ.get("ANKITA_FUZZ_SECONDS", "5"))

# Pieces a real terminal, keyboard or chat client sends: escape sequences (arrows, colours, a
# window title, a bracketed paste), C0 controls, bidi and zero-width marks, lone surrogates,
# emoji sequences, other scripts, and an ordinary sentence.
PIECES = [
    "\x1b[D",
    "\x1b[A",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b]0;title\x07",
    "\x1b[200~",
    "\x1b[201~",
    "\x1bP",
    "\x1b",
    "\x00",
    "\x07",
    "\x08",
    "\t",
    "\x7f",
    "\x9b",
    "\u202e",
    "\u200f",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\ud800",
    "\udfff",
    "😀",
    "👩🏽‍💻",
    "🇫🇷",
    " ",
    "I live in Rome",
    "मैं दिल्ली में रहता हूँ",
    "أنا أعيش في القاهرة",
    "/",
]
# What a terminal or line editing reads as a command, not as text: typing these ends or
# suspends any program (Ctrl-C, Ctrl-D, Ctrl-Z, Ctrl-\), submits the line, stops output, or
# makes readline wait for the next key (Ctrl-V, Ctrl-R, Ctrl-S, Ctrl-X, Ctrl-]), which would
# take the Enter that follows as that key.
TERMINAL_KEYS = set("\x03\x04\x1a\x1c\n\r\x11\x13\x0f\x16\x12\x0e\x10\x18\x1d")

pieces = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
raw_text = st.text(
    alphabet=st.characters(codec=None, categories=["Cc", "Cs", "Cf", "So", "Zs", "Lo", "Ll"]),
    max_size=300,
)
messages = st.one_of(
    pieces,
    raw_text,
    st.tuples(pieces, raw_text).map("".join),
    st.just("\n\n  \n"),
    st.integers(45_000, 52_000).map(lambda n: ("abc 😀 " * n)[:n]),  # about 50 kB
)


def short(text: str) -> str:
    return f"ok {len(text)}"


def answer_briefly(body):
    """One short reply per message, whatever it held (a long echo would be sent in parts)."""
    return Say(short(body["messages"][-1]["content"]))


def for_a_while(test, quick_examples: int, slow: bool) -> None:
    """Run a hypothesis test for a few examples, or again and again for FUZZ_SECONDS under
    `slow` (each run draws new examples: no example database)."""
    bounded = settings(
        max_examples=quick_examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )(test)
    stop = time.monotonic() + FUZZ_SECONDS
    bounded()
    while slow and time.monotonic() < stop:
        bounded()


# -- the companion's turn ---------------------------------------------------------------------


def _companion_survives(tmp_path, slow):
    fake = FakeModel(answer_briefly)
    model = open_model(
        ModelSettings(provider="ollama", base_url=fake.url("ollama"), model="fake", timeout_s=10)
    )
    memory = Memory(tmp_path / "m.db", user="sam", embedder="none")
    transcripts = Transcripts(tmp_path / "chat.db")

    def companion():
        return Companion(memory, model, Persona.default(), transcripts, session="fuzz")

    @given(st.lists(messages, min_size=1, max_size=4))
    @example(["abc\x1b[D\x1b[DX", "\ud800", "\x1b[2J", "\u202eI live in Rome"])
    def turns(burst):
        chat = companion()
        for text in burst:
            try:
                turn = chat.send(text)
            except AnkitaError as exc:  # said why, in words
                assert str(exc) and "Traceback" not in str(exc)
                continue
            if clean_message(text).strip():
                assert turn.kind == "normal" and turn.text == short(clean_message(text).strip())
            else:
                assert turn.kind == "silent"  # nothing was left to send
        # The next ordinary message is answered, and so is one in a session taken up again.
        assert chat.send("Where do I live?").text == short("Where do I live?")
        again = companion()
        again.resume()
        assert again.send("and tomorrow?").text == short("and tomorrow?")

    try:
        for_a_while(turns, 15, slow)
    finally:
        transcripts.close()
        memory.close()
        fake.stop()


def test_the_companion_turn_survives_generated_input(tmp_path):
    _companion_survives(tmp_path, slow=False)


@pytest.mark.slow
def test_the_companion_turn_survives_generated_input_for_a_while(tmp_path):
    _companion_survives(tmp_path, slow=True)


# -- the channels -----------------------------------------------------------------------------


class Telegram:
    def __init__(self, monkeypatch):
        from fake_telegram import TOKEN, FakeTelegram

        self.fake = FakeTelegram()
        monkeypatch.setenv("ANKITA_TELEGRAM_API", self.fake.url)
        monkeypatch.setenv("ANKITA_TG_TOKEN", TOKEN)
        self.channel = ("tg", "telegram", "777")

    def say(self, text: str) -> None:
        self.fake.say(777, text)

    def replies(self) -> list[str]:
        return [m["text"] for m in self.fake.sent]


class Discord:
    def __init__(self, monkeypatch):
        from fake_discord import TOKEN, FakeDiscord

        self.fake = FakeDiscord()
        monkeypatch.setenv("ANKITA_DISCORD_API", self.fake.api)
        monkeypatch.setenv("ANKITA_DISCORD_GATEWAY", self.fake.gateway)
        monkeypatch.setenv("ANKITA_DC_TOKEN", TOKEN)
        self.channel = ("dc", "discord", "77")

    def say(self, text: str) -> None:
        self.fake.say("77", text)

    def replies(self) -> list[str]:
        return [m["content"] for m in self.fake.sent]


class Slack:
    def __init__(self, monkeypatch):
        from fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack

        self.fake = FakeSlack()
        monkeypatch.setenv("ANKITA_SLACK_API", self.fake.url)
        monkeypatch.setenv("ANKITA_SL_BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("ANKITA_SL_APP_TOKEN", APP_TOKEN)
        self.channel = ("sl", "slack", "U1")

    def say(self, text: str) -> None:
        self.fake.dm("U1", text)

    def replies(self) -> list[str]:
        return [p["text"] for p in self.fake.posted]


PLATFORMS = {"telegram": Telegram, "discord": Discord, "slack": Slack}
# A platform delivers no empty message; Slack and Discord cap a message's length.
channel_messages = messages.filter(lambda t: t.strip() and len(t) <= 3_500)


def _channels_survive(tmp_path, monkeypatch, responder, chat_model, name, slow):
    chat_model.brain = answer_briefly
    platform = PLATFORMS[name](monkeypatch)
    key, kind, sender = platform.channel
    store = Channels(tmp_path / "channels.db")
    store.add(
        key, kind, dm_policy="allowlist", group_policy="open", allow_from=[sender], user="sam"
    )
    store.close()
    reports: list[str] = []

    def start():
        relay = Relay(tmp_path / "channels.db", responder, report=reports.append, drain_every_s=0.1)
        relay.start()
        return relay

    relay = start()

    @given(st.lists(channel_messages, min_size=1, max_size=5))
    @example(["\ud800 a lone surrogate", "\x1b[31m\x1b[0m"])  # once dropped a message whole
    def burst(said):
        before = len(platform.replies())
        for text in said:  # back to back, as a burst
            platform.say(text)
        platform.say("Where do I live?")
        expected = before + len(said) + 1
        assert wait_for(lambda: len(platform.replies()) >= expected), (reports, platform.replies())
        got = platform.replies()[before:expected]
        for text, reply in zip(said, got, strict=False):
            # Answered (the model's one line) or told why, in words.
            assert reply.startswith("ok ") or reply in (UNREAD, NOTHING_TO_READ, SORRY), (
                text,
                reply,
            )
        assert got[-1] == short("Where do I live?")  # the next ordinary message

    try:
        for_a_while(burst, 3, slow)
        relay.stop()
        relay = start()  # the conversation resumes with a relay started again
        before = len(platform.replies())
        platform.say("and tomorrow?")
        assert wait_for(lambda: len(platform.replies()) > before)
        assert platform.replies()[before] == short("and tomorrow?")
    finally:
        relay.stop()
        platform.fake.stop()


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_each_channel_survives_generated_input(tmp_path, monkeypatch, responder, chat_model, name):
    _channels_survive(tmp_path, monkeypatch, responder, chat_model, name, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_each_channel_survives_generated_input_for_a_while(
    tmp_path, monkeypatch, responder, chat_model, name
):
    _channels_survive(tmp_path, monkeypatch, responder, chat_model, name, slow=True)


# -- `ankita chat` in a terminal --------------------------------------------------------------

# What a person can type: no terminal signal or line end (TERMINAL_KEYS), no surrogate (a
# terminal sends bytes of UTF-8), no NUL (tmux takes the keys as a command's argument), no
# paste that never ends (a terminal sends ESC [200~ only before a paste, and readline then
# takes Enter as text until ESC [201~), and not a command that ends or renews the chat.
typed_lines = messages.map(
    lambda t: "".join(
        c for c in t if c not in TERMINAL_KEYS and c != "\x00" and not 0xD800 <= ord(c) < 0xE000
    ).replace("\x1b[200~", "")[:1_500]
).filter(lambda t: t.strip() not in ("/quit", "/exit", "/new"))


def _chat_survives(tmp_path, slow):
    import shutil

    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            raise RuntimeError("tmux is missing: .ci/run installs it")
        pytest.skip("needs tmux")
    from test_chat_terminal import Terminal, chat_env

    fake = FakeModel(answer_briefly)
    env = chat_env(tmp_path, fake)
    term = Terminal(env, "chat", "--session", "fuzz")
    try:
        term.wait_for("you>")

        def said():
            return [
                [m["content"] for m in r["messages"] if m["role"] == "user"][-1]
                for r in fake.requests
            ]

        @given(st.lists(typed_lines, min_size=1, max_size=3))
        def typed(lines):
            for line in lines:
                asked = len(fake.requests)
                term.type_literally(line)
                # A line the chat sent on is answered on screen. (The screen, not the prompt
                # count: readline and the terminal may disagree on an emoji's width, and the
                # prompt is then drawn over.)
                if wait_for(lambda a=asked: len(fake.requests) > a, timeout=1.0):
                    reply = short(said()[asked])  # the turn's own request (a compaction follows)
                    assert wait_for(lambda r=reply: f"Ankita> {r}" in term.screen()), term.screen()
            # The next ordinary message is answered. Keys such as ESC p open a line-editing
            # mode (a history search) that takes the Enter; as a person would, leave it
            # (Ctrl-G), clear the line (Ctrl-U) and type it again.
            asked, shown = len(fake.requests), term.screen().count("Ankita> ok 16")
            term.type("Where do I live?")
            if not wait_for(lambda: "Where do I live?" in said()[asked:], timeout=3):
                term.press("C-g", "C-u")
                term.type("Where do I live?")
            assert wait_for(lambda: "Where do I live?" in said()[asked:]), term.screen()
            assert wait_for(lambda: term.screen().count("Ankita> ok 16") > shown), term.screen()
            term.clear()

        for_a_while(typed, 3, slow)
        term.press("C-g", "C-u")
        term.type("/quit")
        term.wait_for("EXITED 0")
    finally:
        term.close()
    again = Terminal(env, "chat", "--session", "fuzz")
    try:
        again.wait_for("resuming session fuzz")
        again.type("and tomorrow?")
        again.wait_for("Ankita> ok 13")
    finally:
        again.close()
        fake.stop()


def test_ankita_chat_survives_generated_typing(tmp_path):
    _chat_survives(tmp_path, slow=False)


@pytest.mark.slow
def test_ankita_chat_survives_generated_typing_for_a_while(tmp_path):
    _chat_survives(tmp_path, slow=True)
