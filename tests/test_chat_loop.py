"""`ankita chat`'s terminal loop against the fake model server: slash commands never reach the
model, a resumed session shows its last messages, /new and /retry, and Ctrl-C during a reply
cancels that reply and not the chat."""

import io
import os
import signal
import threading

from rich.console import Console

from ankita import Memory
from ankita.companion import Companion, ModelSettings, Persona, Transcripts, open_model
from ankita.companion.chat._chatloop import ChatLoop
from fakemodel import FakeModel, Say


def run_chat(tmp_path, fake, lines, session="default"):
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False)
    memory = Memory(tmp_path / "m.db", user="sam", embedder="none")
    transcripts = Transcripts(tmp_path / "chat.db")
    model = open_model(
        ModelSettings(provider="ollama", base_url=fake.url("ollama"), model="fake", timeout_s=10)
    )
    queue = list(lines)

    def read(prompt):
        if not queue:
            raise EOFError
        item = queue.pop(0)
        return item() if callable(item) else item

    def make(name):
        return Companion(memory, model, Persona.default(), transcripts, session=name)

    loop = ChatLoop(make, session, console, console, read=read)
    loop.run()
    transcripts.close()
    memory.close()
    return out.getvalue(), loop


def echo(body):
    return Say(f"You said: {body['messages'][-1]['content']}")


def test_slash_commands_never_reach_the_model(tmp_path):
    fake = FakeModel(echo)
    try:
        shown, _ = run_chat(tmp_path, fake, ["/help", "/nonsense", "/retry", "/quit", "hi"])
        assert fake.requests == []  # nothing was sent, and /quit ended before "hi"
        assert "/retry   ask the model again" in shown
        assert "unknown command /nonsense; /help lists them" in shown
        assert "nothing to retry yet" in shown
    finally:
        fake.stop()


def test_retry_asks_again_and_new_starts_a_conversation(tmp_path):
    fake = FakeModel(echo)
    try:
        shown, loop = run_chat(tmp_path, fake, ["tell me a joke", "/retry", "/new", "hello"])
        users = [r["messages"][-1]["content"] for r in fake.requests]
        assert users == ["tell me a joke", "tell me a joke", "hello"]
        assert shown.count("You said: tell me a joke") == 2
        assert loop.name.startswith("default-") and loop.companion.session.endswith(loop.name)
        assert "new conversation: default-" in shown
        # The new conversation does not carry the old one's turns to the model.
        assert all("joke" not in str(m) for m in fake.requests[-1]["messages"][1:])
    finally:
        fake.stop()


def test_a_resumed_session_shows_its_last_messages(tmp_path):
    fake = FakeModel(echo)
    try:
        run_chat(tmp_path, fake, ["I live in Berlin", "I drink green tea"])
        shown, _ = run_chat(tmp_path, fake, [])
        assert "resuming session default; the last messages:" in shown
        assert "you> I drink green tea" in shown
        assert "You said: I drink green tea" in shown
    finally:
        fake.stop()


def test_ctrl_c_during_a_reply_cancels_the_reply_not_the_chat(tmp_path):
    def brain(body):
        if "story" not in body["messages"][-1]["content"]:
            return Say("Still here.")
        # A real SIGINT, as the terminal sends, while the reply streams: timed from the
        # request's arrival, not from the input, so a slow machine's recall before it does
        # not let the whole story through first.
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        return Say("Once upon a time " * 6, gap_s=0.5)

    fake = FakeModel(brain)
    # A shell that starts the suite in the background hands it SIGINT ignored; the terminal's
    # Ctrl-C reaches a chat in the foreground, so the test restores Python's own handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        shown, _ = run_chat(tmp_path, fake, ["tell me a story", "are you there?"])
        assert "(reply cancelled; not kept in the conversation)" in shown
        assert "Still here." in shown  # the chat went on
        assert shown.count("Once upon a time") < 6  # the story stopped early
        kept = Transcripts(tmp_path / "chat.db")
        said = [(m.role, m.content) for m in kept.messages("sam.default") if m.kind == "turn"]
        kept.close()
        assert ("user", "tell me a story") in said
        assert not any("Once upon" in text for role, text in said if role == "assistant")
    finally:
        signal.signal(signal.SIGINT, previous)
        fake.stop()


def test_retry_puts_the_pending_conflict_question_again(tmp_path):
    """The reply being retried asked about a conflict: the retried prompt carries the question
    again, instead of losing it to the reply that is being replaced."""
    with Memory(tmp_path / "m.db", user="sam", embedder="none") as memory:
        memory.remember("I live in Berlin")
        memory.remember("I live in Munich")
    fake = FakeModel(echo)
    try:
        run_chat(tmp_path, fake, ["hello", "/retry"])
        systems = [r["messages"][0]["content"] for r in fake.requests]
        assert len(systems) == 2
        assert all("Ask sam, once and briefly, which is current" in s for s in systems)
    finally:
        fake.stop()


def test_a_silent_reply_prints_no_empty_name_and_says_so(tmp_path):
    fake = FakeModel(lambda body: Say("[SILENT]"))
    try:
        shown, _ = run_chat(tmp_path, fake, ["just thinking out loud"])
        named = [line for line in shown.splitlines() if line.startswith("Ankita>")]
        assert len(named) == 1 and "Tell me about your day" in named[0]  # the greeting only
        assert "(Ankita chose not to reply)" in shown
    finally:
        fake.stop()


def test_ctrl_c_at_the_prompt_ends_the_chat_with_a_word(tmp_path):
    def ctrl_c():
        raise KeyboardInterrupt

    fake = FakeModel(echo)
    try:
        shown, loop = run_chat(tmp_path, fake, ["hi", ctrl_c, "never read"])
        assert "chat ended; `ankita chat --session default` takes it up again" in shown
        assert loop.interrupted and len(fake.requests) == 1
    finally:
        fake.stop()
