"""Discord end to end through discord.py against a fake Discord on 127.0.0.1 (REST and the
gateway websocket): a round trip with memory, guild messages only when the bot is mentioned, a
stranger refused, 429 waited out, 5xx retried, 403 parked."""

from __future__ import annotations

import time

import pytest

from ankita import ChannelError, Memory
from ankita.companion.channels._channels import Channels
from ankita.companion.channels._relay import Relay, open_adapter
from fake_discord import TOKEN, FakeDiscord
from fakemodel import Say


@pytest.fixture
def discord_server(monkeypatch):
    fake = FakeDiscord()
    monkeypatch.setenv("ANKITA_DISCORD_API", fake.api)
    monkeypatch.setenv("ANKITA_DISCORD_GATEWAY", fake.gateway)
    monkeypatch.setenv("ANKITA_DC_TOKEN", TOKEN)
    yield fake
    fake.stop()


@pytest.fixture
def relay(tmp_path, discord_server, responder):
    store = Channels(tmp_path / "channels.db")
    store.add(
        "dc",
        "discord",
        dm_policy="allowlist",
        group_policy="open",
        allow_from=["77", "78", "79"],
        user="sam",
    )
    store.close()
    reports = []
    running = Relay(tmp_path / "channels.db", responder, report=reports.append, drain_every_s=0.2)
    assert running.start() == {"dc": "ankita (id 1001)"}
    running.reports = reports
    yield running
    running.stop()


def test_a_direct_message_round_trip_with_memory(tmp_path, discord_server, relay):
    discord_server.say("77", "I live in Lyon")
    assert discord_server.wait_sent(1)[0]["content"] == "Got it, I'll remember that."
    discord_server.say("77", "Where do I live?")
    sent = discord_server.wait_sent(2)
    assert [(m["channel_id"], m["content"]) for m in sent] == [
        ("977", "Got it, I'll remember that."),
        ("977", "From what I remember: I live in Lyon."),
    ]
    assert discord_server.typing == ["977", "977"]
    # The gateway said who we are, with no privileged intent asked for.
    assert discord_server.identified[0]["token"] == TOKEN
    assert not discord_server.identified[0]["intents"] & (1 << 15)  # MESSAGE_CONTENT
    with Memory(tmp_path / "memory.db", user="sam", embedder="none") as memory:
        assert [f.text for f in memory.list()] == ["I live in Lyon"]
    assert not any(TOKEN in line for line in relay.reports)


def test_strangers_and_unmentioned_guild_messages_get_nothing(discord_server, relay, chat_model):
    discord_server.say("66", "hello, anyone?")
    discord_server.say("66", "talking among ourselves", channel="555", guild="444")
    discord_server.say(
        "66", "<@1001> I am a night owl", channel="555", guild="444", mention_bot=True
    )
    [reply] = discord_server.wait_sent(1)
    time.sleep(0.5)
    assert reply["channel_id"] == "555" and len(discord_server.sent) == 1
    assert len(chat_model.requests) == 2  # one turn (with its tool round), for the mention only
    assert any("ignored 66" in line for line in relay.reports)


@pytest.mark.slow
def test_rate_limits_are_waited_out_5xx_retried_and_403_parked(tmp_path, discord_server, relay):
    store = Channels(tmp_path / "channels.db")

    def row(index, predicate):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            rows = store.outbox()
            if len(rows) > index and predicate(rows[index]):
                return rows[index]
            time.sleep(0.05)
        raise AssertionError(store.outbox())

    discord_server.fail(
        429,
        {"message": "You are being rate limited.", "retry_after": 0.3, "global": False},
        {"X-RateLimit-Scope": "user", "Via": "1.1 google"},
    )
    discord_server.say("77", "I am learning Portuguese")
    first = row(0, lambda r: r["status"] == "sent")
    assert first["attempts"] == 1  # discord.py waited out the short 429 itself
    # A long one comes back to the outbox, which waits without holding the sender.
    discord_server.fail(
        429,
        {"message": "You are being rate limited.", "retry_after": 60, "global": False},
        {"X-RateLimit-Scope": "user", "Via": "1.1 google"},
    )
    discord_server.say("77", "I am a night owl")
    waiting = row(1, lambda r: r["last_error"] is not None)
    assert (waiting["status"], waiting["last_error"]) == ("queued", "retry after 60 s")
    # Later messages to that chat wait behind it (one chat, one order); other chats do not.
    discord_server.fail(503, {"message": "Service Unavailable"})
    discord_server.say("78", "Tell me more")
    second = row(2, lambda r: r["last_error"] is not None)
    assert (second["chat_id"], second["status"], second["attempts"]) == ("978", "queued", 1)
    assert "503" in second["last_error"]  # retried later by the outbox (after 5 s)
    discord_server.fail(403, {"message": "Missing Access", "code": 50001})
    discord_server.say("79", "And a joke")
    third = row(3, lambda r: r["status"] == "failed")
    assert third["last_error"] == "Discord: 403 Missing Access" and third["attempts"] == 1
    second = row(2, lambda r: r["status"] == "sent")
    assert second["attempts"] == 2
    waiting = store.outbox()[1]
    assert (waiting["status"], waiting["attempts"]) == ("queued", 1)  # still behind its 60 s
    store.close()
    assert [(m["channel_id"], m["content"]) for m in discord_server.sent] == [
        ("977", "Got it, I'll remember that."),
        ("978", "Tell me more!"),
    ]


def test_a_bad_token_is_a_clear_error_without_the_token(discord_server, monkeypatch):
    monkeypatch.setenv("ANKITA_DC_TOKEN", "wrong.discord-secret")
    adapter = open_adapter(
        {"name": "dc", "platform": "discord"}, lambda u, o: None, lambda line: None, None
    )
    with pytest.raises(ChannelError, match="refused") as caught:
        adapter.connect()
    adapter.disconnect()
    assert "discord-secret" not in str(caught.value)


def test_a_burst_is_answered_in_the_order_it_was_sent(discord_server, relay, chat_model):
    """Each message is stored from a worker thread: without an order they could overtake
    each other, and the companion would read the burst (and answer it) out of order."""
    chat_model.brain = lambda body: Say("re: " + body["messages"][-1]["content"])
    for i in range(16):
        discord_server.say("77", f"message {i}")
    sent = discord_server.wait_sent(16)
    assert [m["content"] for m in sent] == [f"re: message {i}" for i in range(16)]
