"""Slack end to end through slack-bolt Socket Mode against a fake Slack on 127.0.0.1: events are
acknowledged only after they are stored, a redelivered event is answered once, a stranger is
refused, 429 waits for Retry-After and channel_not_found is parked."""

from __future__ import annotations

import time

import pytest

from ankita import Memory
from ankita.companion.channels._channels import Channels
from ankita.companion.channels._relay import Relay, open_adapter
from fake_slack import APP_TOKEN, BOT_TOKEN, BOT_USER, FakeSlack
from fakemodel import Say


@pytest.fixture
def slack(monkeypatch):
    fake = FakeSlack()
    monkeypatch.setenv("ANKITA_SLACK_API", fake.url)
    monkeypatch.setenv("ANKITA_SL_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("ANKITA_SL_APP_TOKEN", APP_TOKEN)
    yield fake
    fake.stop()


@pytest.fixture
def relay(tmp_path, slack, responder):
    store = Channels(tmp_path / "channels.db")
    store.add(
        "sl", "slack", dm_policy="allowlist", group_policy="open", allow_from=["U1"], user="sam"
    )
    store.close()
    stored_at = {}
    reports = []

    def make(config, ingest, report, offset):
        def timed(updates, next_offset):
            ingest(updates, next_offset)
            for update in updates:
                stored_at[update.update_id] = time.monotonic()

        return open_adapter(config, timed, report, offset)

    running = Relay(
        tmp_path / "channels.db",
        responder,
        make_adapter=make,
        report=reports.append,
        drain_every_s=0.2,
    )
    assert running.start() == {"sl": "ankita in Fake Team"}
    running.stored_at, running.reports = stored_at, reports
    yield running
    running.stop()


def test_a_message_round_trip_acknowledged_only_after_it_is_stored(tmp_path, slack, relay):
    envelope = slack.dm("U1", "I live in Lyon", event_id="Ev1")
    assert slack.wait(lambda: len(slack.posted) == 1)
    assert slack.posted[0] == {
        "channel": "DU1",
        "text": "Got it, I'll remember that.",
        "ts": slack.posted[0]["ts"],
        "metadata": slack.posted[0]["metadata"],
    }
    assert slack.posted[0]["metadata"]["event_type"] == "ankita_outbox"
    assert envelope in slack.acks and slack.acks[envelope] >= relay.stored_at["Ev1"]
    # Slack did not see the ack in time and sends the event again: answered once.
    again = slack.dm("U1", "I live in Lyon", event_id="Ev1", retry=1)
    assert slack.wait(lambda: again in slack.acks)
    slack.dm("U1", "Where do I live?", event_id="Ev2")
    assert slack.wait(lambda: len(slack.posted) == 2)
    time.sleep(0.5)
    assert [p["text"] for p in slack.posted] == [
        "Got it, I'll remember that.",
        "From what I remember: I live in Lyon.",
    ]
    with Memory(tmp_path / "memory.db", user="sam", embedder="none") as memory:
        assert [f.text for f in memory.list()] == ["I live in Lyon"]
    assert not any(BOT_TOKEN in line or APP_TOKEN in line for line in relay.reports)


def test_strangers_other_bots_and_unaddressed_channel_messages_get_nothing(
    slack, relay, chat_model
):
    slack.dm("U2", "hi, who are you?")
    slack.deliver(
        {
            "type": "message",
            "channel": "DU1",
            "channel_type": "im",
            "bot_id": "B9",
            "user": "U9",
            "text": "I am a bot",
            "ts": "2",
        }
    )
    slack.deliver(
        {
            "type": "message",
            "channel": "C1",
            "channel_type": "channel",
            "user": "U1",
            "text": "lunch anyone?",
            "ts": "3",
        }
    )
    mention = slack.deliver(
        {
            "type": "message",
            "channel": "C1",
            "channel_type": "channel",
            "user": "U3",
            "text": f"<@{BOT_USER}> I am a night owl",
            "ts": "4",
        }
    )
    assert slack.wait(lambda: len(slack.posted) == 1)
    assert slack.wait(lambda: mention in slack.acks)
    time.sleep(0.5)
    assert slack.posted[0]["channel"] == "C1"
    assert len(chat_model.requests) == 2  # the mention only: one turn, with its tool round
    assert any("ignored U2" in line for line in relay.reports)
    assert len(slack.acks) == 4  # everything is acknowledged, answered or not


def test_429_waits_for_retry_after_and_channel_not_found_is_parked(tmp_path, slack, relay):
    slack.fail("chat.postMessage", 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
    slack.dm("U1", "I am learning Portuguese")
    started = time.monotonic()
    assert slack.wait(lambda: len(slack.posted) == 1)
    assert time.monotonic() - started >= 1.0
    slack.fail("chat.postMessage", 200, {"ok": False, "error": "channel_not_found"})
    slack.dm("U1", "Tell me a joke")
    store = Channels(tmp_path / "channels.db")
    assert slack.wait(lambda: any(m["status"] == "failed" for m in store.outbox()), 10)
    rows = store.outbox()
    store.close()
    assert [(m["status"], m["attempts"]) for m in rows] == [("sent", 2), ("failed", 1)]
    assert rows[1]["last_error"] == "Slack: channel_not_found"


def test_bad_tokens_are_clear_errors_without_the_token(slack, monkeypatch):
    from ankita import ChannelError

    monkeypatch.setenv("ANKITA_SL_BOT_TOKEN", "xoxb-wrong-secretvalue")
    adapter = open_adapter(
        {"name": "sl", "platform": "slack"}, lambda u, o: None, lambda line: None, None
    )
    with pytest.raises(ChannelError, match="invalid_auth") as caught:
        adapter.connect()
    assert "secretvalue" not in str(caught.value)


def test_a_burst_is_answered_in_the_order_it_was_sent(slack, relay, chat_model):
    """Socket Mode hands events to a pool of listeners: stored out of order, a burst would be
    read (and answered) out of order."""
    chat_model.brain = lambda body: Say("re: " + body["messages"][-1]["content"])
    for i in range(16):
        slack.dm("U1", f"message {i}", event_id=f"Ev{i}")
    assert slack.wait(lambda: len(slack.posted) == 16)
    assert [p["text"] for p in slack.posted] == [f"re: message {i}" for i in range(16)]
