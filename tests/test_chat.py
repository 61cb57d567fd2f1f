"""The companion's chat runtime against a fake model server on 127.0.0.1, in both wire formats
(Ollama and OpenAI-compatible): memory in every turn, the conflict question, compaction,
[SILENT], lanes, sessions."""

import json
import random
import string
import threading
import time

import pytest

from ankita import ConfigError, Memory, ModelError
from ankita.companion import (
    Companion,
    Lanes,
    ModelSettings,
    Persona,
    Transcripts,
    open_model,
)
from ankita.companion.chat._runtime import FALLBACK_SUMMARY, FLUSH_PROMPT, KEEP_RECENT
from fakemodel import FakeModel, Say, scripted_brain


@pytest.fixture(params=["ollama", "openai"])
def provider(request):
    return request.param


@pytest.fixture
def fake():
    server = FakeModel()
    yield server
    server.stop()


def make(
    tmp_path,
    fake,
    provider,
    window=8192,
    session="default",
    lanes=None,
    deadline_s=None,
    memory=None,
    transcripts=None,
):
    settings = ModelSettings(
        provider=provider,
        base_url=fake.url(provider),
        model="fake",
        context_window=window,
        timeout_s=10,
    )
    memory = memory or Memory(tmp_path / "memory.db", user="sam", embedder="none")
    transcripts = transcripts or Transcripts(tmp_path / "chat.db")
    return Companion(
        memory,
        open_model(settings),
        Persona.default(),
        transcripts,
        session=session,
        lanes=lanes,
        deadline_s=deadline_s,
    )


def test_a_fact_said_twice_is_stored_once(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider)
    first = chat.send("I live in Berlin")
    again = chat.send("I live in Berlin")
    assert first.text == "Got it, I'll remember that."
    assert first.tool_calls[0].startswith('remember({"text": "I live in Berlin"}) -> Stored [')
    assert "Already known; merged into" in again.tool_calls[0]
    [fact] = chat.memory.list()
    assert fact.text == "I live in Berlin" and fact.mentions == 2
    # Tool schemas went to the model in its own format, and tool results came back to it.
    assert {t["function"]["name"] for t in fake.requests[0]["tools"]} >= {"remember", "recall"}
    assert any(m["role"] == "tool" for m in fake.requests[1]["messages"])


def test_memory_goes_into_every_prompt_with_the_notice(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider)
    chat.memory.remember("I live in Berlin")
    chat.memory.remember("I live in Munich")
    reply = chat.send("Where do I live these days?")
    system = fake.requests[-1]["messages"][0]["content"]
    assert "I live in Berlin" in system and "I live in Munich" in system
    assert "Ask the user which is current instead of asserting either." in system
    assert reply.asked_conflict is not None


def test_a_contradiction_is_asked_once_and_the_answer_resolves_it(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider)
    chat.send("I live in Berlin")
    said = chat.send("I live in Munich")
    assert "conflicts with" in said.tool_calls[0]
    asked = chat.send("Good morning")
    assert "Which one is current?" in asked.text and asked.asked_conflict is not None
    # The question names the pair in id order, which is random: answer for Munich.
    munich_second = asked.text.index("Munich") > asked.text.index("Berlin")
    answer = chat.send("The second one" if munich_second else "The first one")
    assert [c.split("(")[0] for c in answer.tool_calls] == ["list_conflicts", "resolve_conflict"]
    assert answer.text == "Got it, I've updated my memory."
    statuses = {f.text: f.status for f in chat.memory.list(include_superseded=True)}
    assert statuses == {"I live in Berlin": "superseded", "I live in Munich": "active"}
    assert chat.memory.conflicts() == []
    later = chat.send("How are you?")
    assert later.asked_conflict is None and "Which one" not in later.text


def test_the_question_is_asked_at_most_once_per_session(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider)
    chat.memory.remember("I love jazz")
    chat.memory.remember("I hate jazz")
    assert chat.send("Hello").asked_conflict is not None
    assert chat.send("Hello again").asked_conflict is None  # unanswered, but not nagged
    other = make(
        tmp_path,
        fake,
        provider,
        session="tomorrow",
        memory=chat.memory,
        transcripts=chat.transcripts,
    )
    assert other.send("Hello").asked_conflict is not None  # a new session may ask again


@pytest.mark.parametrize(
    "token", ["[SILENT]", "NO_REPLY", "[silent", "no_reply.", "  [ SILENT ]  "]
)
def test_silent_replies_never_reach_the_user(tmp_path, fake, provider, token):
    fake.brain = lambda body: Say(token)
    chat = make(tmp_path, fake, provider)
    shown: list[str] = []
    turn = chat.send("Just thinking out loud", on_delta=shown.append)
    assert turn.kind == "silent" and turn.text == "" and shown == []
    last = chat.transcripts.messages(chat.session)[-1]
    assert last.kind == "silent" and last.content == token  # recorded, never shown


def test_a_token_beside_real_words_is_removed_while_streaming(tmp_path, fake, provider):
    fake.brain = lambda body: Say("[SILENT] Actually, one thing: drink some water today!")
    chat = make(tmp_path, fake, provider)
    shown: list[str] = []
    turn = chat.send("hm", on_delta=shown.append)
    assert turn.kind == "normal"
    assert "".join(shown) == turn.text == "Actually, one thing: drink some water today!"


def chatty(flush_fact=None, failing_summary=False):
    """The scripted brain, plus a memory flush that saves a fact, and optionally a summariser
    that always fails."""

    def brain(body):
        messages = body["messages"]
        if failing_summary and str(messages[0]["content"]).startswith("Summarise"):
            return Say(status=500)
        if (
            messages[-1]["role"] == "user"
            and messages[-1]["content"] == FLUSH_PROMPT
            and flush_fact
        ):
            return Say(tool_calls=[("remember", {"text": flush_fact})])
        if messages[-1]["role"] == "tool" and any(
            m.get("content") == FLUSH_PROMPT for m in messages
        ):
            return Say("[SILENT]")
        return scripted_brain(body)

    return brain


def request_for(fake, text):
    """The chat request that carried the user's `text` last (not a summary or flush)."""
    return next(
        r["messages"] for r in reversed(fake.requests) if r["messages"][-1].get("content") == text
    )


def long_chat(chat, turns=10):
    for i in range(turns):
        chat.send(f"Let me tell you a long story, part {i}: " + "and then it rained " * 12 + "?")


def test_compaction_flushes_memory_keeps_the_question_and_recent_turns(tmp_path, fake, provider):
    fake.brain = chatty(flush_fact="My favourite colour is green")
    chat = make(tmp_path, fake, provider, window=900)
    chat.memory.remember("I live in Berlin")
    chat.memory.remember("I live in Munich")
    question = chat.send("Hi there")
    assert question.asked_conflict is not None
    asked_text = question.text
    long_chat(chat)
    kinds = [m.kind for m in chat.transcripts.messages(chat.session)]
    assert "summary" in kinds and "flush" in kinds
    # The silent flush turn saved a durable fact before anything was summarised.
    assert "My favourite colour is green" in [f.text for f in chat.memory.list()]
    chat.send("And what now?")
    prompt = request_for(fake, "And what now?")
    system = prompt[0]["content"]
    assert "Earlier in this conversation (summary):" in system
    said = [m["content"] for m in prompt[1:]]
    assert asked_text in said  # the pending question stays verbatim
    assert "Hi there" not in said  # older turns were summarised away
    assert len(said) <= KEEP_RECENT + 3
    # Nothing was deleted: the transcript still holds every turn.
    assert any(m.content == "Hi there" for m in chat.transcripts.messages(chat.session))


def test_a_failing_summary_never_wipes_the_context(tmp_path, fake, provider):
    fake.brain = chatty(failing_summary=True)
    chat = make(tmp_path, fake, provider, window=900)
    long_chat(chat)
    chat.send("Still there?")
    prompt = request_for(fake, "Still there?")
    assert FALLBACK_SUMMARY in prompt[0]["content"]
    said = [m["content"] for m in prompt[1:] if m["role"] in ("user", "assistant")]
    assert len(said) >= KEEP_RECENT and said[-1] == "Still there?"
    errors = [m for m in chat.transcripts.messages(chat.session) if m.kind == "error"]
    assert errors and "summary failed" in errors[0].content
    assert sum(1 for m in chat.transcripts.messages(chat.session) if m.role == "user") == 11


def test_the_summary_request_itself_fits_the_window(tmp_path, fake, provider):
    fake.brain = chatty()
    chat = make(tmp_path, fake, provider, window=900)
    long_chat(chat, turns=14)
    summaries = [
        r for r in fake.requests if str(r["messages"][0]["content"]).startswith("Summarise")
    ]
    assert summaries
    assert all(len(str(r["messages"])) // 4 <= 900 for r in summaries)


def test_a_hung_call_in_one_lane_does_not_block_another(tmp_path, fake, provider):
    release = threading.Event()

    def brain(body):
        if "hang" in str(body["messages"][-1].get("content")):
            release.wait(20)
            return Say("sorry, I was away")
        return Say("Hello!")

    fake.brain = brain
    lanes = Lanes()
    stuck = make(tmp_path, fake, provider, session="stuck", lanes=lanes, deadline_s=1.5)
    other = make(
        tmp_path,
        fake,
        provider,
        session="other",
        lanes=lanes,
        memory=stuck.memory,
        transcripts=stuck.transcripts,
    )
    outcome = {}

    def hang():
        try:
            stuck.send("please hang")
        except TimeoutError as exc:
            outcome["stuck"] = str(exc)

    started = time.monotonic()
    waiter = threading.Thread(target=hang)
    waiter.start()
    time.sleep(0.2)
    assert other.send("hi").text == "Hello!"  # the other lane answers while one hangs
    assert time.monotonic() - started < 1.5
    waiter.join(10)
    assert "deadline" in outcome["stuck"]
    # The stuck lane itself moves on to its next job once the watchdog gave up.
    assert stuck.send("hi again").text == "Hello!"
    release.set()
    lanes.close()


def test_an_unreachable_model_is_a_clear_error(tmp_path, provider):
    settings = ModelSettings(
        provider=provider, base_url="http://127.0.0.1:9", model="x", timeout_s=2
    )
    model = open_model(settings)
    with pytest.raises(ModelError, match="no chat model reachable at http://127.0.0.1:9"):
        model.ping()
    chat = Companion(
        Memory(tmp_path / "m.db", embedder="none"),
        model,
        Persona.default(),
        Transcripts(tmp_path / "chat.db"),
    )
    with pytest.raises(ModelError):
        chat.send("Hello?")
    assert chat.transcripts.messages(chat.session)[-1].kind == "error"


def test_a_server_error_is_a_clear_error(tmp_path, fake, provider):
    fake.brain = lambda body: Say(status=503)
    chat = make(tmp_path, fake, provider)
    with pytest.raises(ModelError, match="answered HTTP 503"):
        chat.send("Hello?")


def test_sessions_resume_with_their_history(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider, session="kitchen")
    assert chat.greeting().startswith("Hi! I'm Ankita.")
    chat.send("I drink green tea every morning")
    chat.transcripts.close()
    again = make(tmp_path, fake, provider, session="kitchen", memory=chat.memory)
    assert again.greeting() is None  # once per session
    again.send("What do I drink?")
    said = [m["content"] for m in fake.requests[-1]["messages"][1:]]
    assert "I drink green tea every morning" in said
    assert "I drink green tea every morning" in fake.requests[-1]["messages"][0]["content"]


def test_with_many_conflicts_the_newest_unasked_one_is_asked(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider)
    rng = random.Random(5)
    for _ in range(60):
        name = "".join(rng.choice(string.ascii_lowercase) for _ in range(8)).capitalize()
        chat.memory.remember(f"{name} meets us on Friday")
        chat.memory.remember(f"{name} does not meet us on Friday")
    assert chat.memory.conflict_count() == 60
    # This session already asked about the first 55 pairs: the next question is the 56th,
    # past the first page of pairs.
    newest = chat.memory.conflicts(limit=56)
    chat.transcripts.put(
        chat.session, "asked", json.dumps([f"{p.a.id}|{p.b.id}" for p in newest[:55]])
    )
    asked = chat.send("Hello")
    assert asked.asked_conflict == (newest[55].a.id, newest[55].b.id)


def test_the_spec_names_of_the_chat_model_work_and_the_provider_is_read_off_the_url(
    tmp_path, monkeypatch
):
    for name in ("ANKITA_CHAT_URL", "ANKITA_CHAT_PROVIDER", "ANKITA_CHAT_MODEL", "ANKITA_CHAT_KEY"):
        monkeypatch.delenv(name, raising=False)
    fake = FakeModel()
    try:
        monkeypatch.setenv("ANKITA_LLM_BASE", fake.url("openai"))
        monkeypatch.setenv("ANKITA_LLM_MODEL", "fake-model")
        monkeypatch.setenv("ANKITA_LLM_API_KEY", "sk-test")
        settings = ModelSettings.from_env()
        assert (settings.provider, settings.base_url, settings.model, settings.api_key) == (
            "openai",
            fake.url("openai"),
            "fake-model",
            "sk-test",
        )
        chat = make(tmp_path, fake, "openai")
        assert chat.send("I live in Berlin").text == "Got it, I'll remember that."
        monkeypatch.setenv("ANKITA_LLM_BASE", fake.url("ollama"))
        assert ModelSettings.from_env().provider == "ollama"
        # The more specific name wins over SPEC's general one.
        monkeypatch.setenv("ANKITA_CHAT_MODEL", "chosen")
        assert ModelSettings.from_env().model == "chosen"
        # An Ollama provider named with an OpenAI-style URL is a clear error, not a bare 404.
        monkeypatch.setenv("ANKITA_CHAT_PROVIDER", "ollama")
        monkeypatch.setenv("ANKITA_LLM_BASE", fake.url("openai"))
        with pytest.raises(ConfigError, match="an Ollama base has no /v1"):
            ModelSettings.from_env()
    finally:
        fake.stop()


def test_a_silent_turn_does_not_use_up_the_question(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider)
    chat.memory.remember("I love jazz")
    chat.memory.remember("I hate jazz")
    quiet = chat.send("be quiet please")  # the scripted model answers [SILENT]
    assert quiet.kind == "silent" and quiet.asked_conflict is None
    assert chat.send("Hello").asked_conflict is not None  # asked now, by a reply that speaks


def test_a_resumed_conversation_may_ask_its_question_once_more(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider)
    chat.memory.remember("I love jazz")
    chat.memory.remember("I hate jazz")
    assert chat.send("Hello").asked_conflict is not None
    assert chat.send("Hello again").asked_conflict is None
    chat.resume()  # what `ankita chat` does when it takes a session up again
    assert chat.send("Good morning").asked_conflict is not None


@pytest.mark.slow
def test_a_turn_holds_a_short_busy_lease_renewed_while_it_runs(tmp_path, monkeypatch):
    from datetime import datetime, timedelta, timezone

    from ankita.companion.chat import _runtime

    monkeypatch.setattr(_runtime, "BUSY_LEASE_S", 1.5)  # renewed every 0.5 s
    fake = FakeModel(lambda body: Say("Once upon a time " * 6, gap_s=1.1))
    try:
        chat = make(tmp_path, fake, "ollama")
        other = Transcripts(tmp_path / "chat.db")  # what a heartbeat's process sees
        seen = []
        done = threading.Event()

        def watch():
            while not done.is_set():
                now = datetime.now(timezone.utc)
                for until in other.busy_marks():
                    seen.append((other.busy(now), until - now))
                time.sleep(0.05)

        watcher = threading.Thread(target=watch)
        watcher.start()
        started = time.monotonic()
        chat.send("tell me a story")
        took = time.monotonic() - started
        done.set()
        watcher.join()
        assert took > 2 * 1.5  # the turn outlived two leases...
        # ...was marked busy all along, never for more than a lease ahead...
        assert seen and all(is_busy for is_busy, _ in seen)
        assert all(left <= timedelta(seconds=1.5) for _, left in seen)
        # ...and the mark was cleared when it ended.
        assert not other.busy(datetime.now(timezone.utc)) and other.busy_marks() == []
        # A mark nobody renews (its process was killed) lapses within the lease.
        _runtime.mark_busy(other, True)
        assert other.busy(datetime.now(timezone.utc))
        assert not other.busy(datetime.now(timezone.utc) + timedelta(seconds=1.6))
        other.close()
    finally:
        fake.stop()


def test_compaction_runs_only_when_it_frees_real_room(tmp_path, fake, provider):
    fake.brain = chatty()
    chat = make(tmp_path, fake, provider, window=2048)
    assert chat.window_warning() is None
    long_chat(chat, turns=30)
    summaries = [
        r for r in fake.requests if str(r["messages"][0]["content"]).startswith("Summarise")
    ]
    # Some summaries, but not one (and a flush) per turn: each replaces a real share of room.
    assert 1 <= len(summaries) <= 10
    assert len(fake.requests) <= 30 + 2 * len(summaries)


def test_a_window_too_small_for_the_fixed_prompt_is_said_once(tmp_path, fake, provider):
    chat = make(tmp_path, fake, provider, window=1024)
    warning = chat.window_warning()
    assert warning is not None and "context window (1024 tokens)" in warning
    assert f"take about {chat.fixed_tokens()}" in warning
    assert chat.fixed_tokens() > 0.6 * 1024


def test_the_user_is_named_and_post_history_instructions_close_the_request(
    tmp_path, fake, provider
):
    card = Persona.default().set("post_history_instructions", "Keep it brief, {{user}}.")
    chat = make(tmp_path, fake, provider)
    chat.persona = card
    chat.send("Hello")
    sent = fake.requests[-1]["messages"]
    assert sent[-2] == {"role": "user", "content": "Hello"}
    assert sent[-1] == {"role": "system", "content": "Keep it brief, sam."}
    assert "Keep it brief" not in sent[0]["content"]
    # The memory's user "default" names nobody; the card's user_name wins over either.
    nobody = make(tmp_path, fake, provider, memory=Memory(tmp_path / "d.db", embedder="none"))
    assert nobody.user_name == "the user"
    named = Companion(
        Memory(tmp_path / "d.db", embedder="none"),
        nobody.model,
        Persona.default().set("user_name", "Ravi"),
        Transcripts(tmp_path / "named.db"),
    )
    assert named.user_name == "Ravi"
    named.send("Hello")
    assert "talks with Ravi" in fake.requests[-1]["messages"][0]["content"]


def test_control_characters_never_poison_a_session(tmp_path, fake):
    chat = make(tmp_path, fake, "ollama")
    turn = chat.send("I live in \x1b[31mRome\x1b[0m\x00")
    assert turn.kind != "silent"
    stored = [m.content for m in chat.transcripts.messages(chat.session) if m.role == "user"]
    assert stored == ["I live in Rome"]
    # A message stored before messages were cleaned (an older version) still resumes.
    chat.transcripts.add(chat.session, "user", "abc\x1b[D\x1b[DX")
    again = make(tmp_path, fake, "ollama", transcripts=chat.transcripts, memory=chat.memory)
    assert again.send("Where do I live?").kind != "silent"
    assert again.send("\x1b[2J").kind == "silent"  # nothing left to say: nothing sent


def test_a_turn_ending_never_clears_another_turns_mark(tmp_path):
    from datetime import datetime, timezone

    from ankita.companion.chat import _runtime

    transcripts = Transcripts(tmp_path / "chat.db")
    _runtime.mark_busy(transcripts, True, "chat-turn")
    _runtime.mark_busy(transcripts, True, "task-turn")
    _runtime.mark_busy(transcripts, False, "task-turn")  # a task ends in the same tick
    assert transcripts.busy(datetime.now(timezone.utc))  # the chat's turn still holds it
    _runtime.mark_busy(transcripts, False, "chat-turn")
    assert not transcripts.busy(datetime.now(timezone.utc))
    transcripts.close()
