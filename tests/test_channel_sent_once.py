"""A send cut short by a crash, after the platform took the message and before the outbox
recorded it, against the fake platforms on 127.0.0.1: Discord (its nonce) and Slack (the
message's metadata) show the message once; Telegram, which cannot tell, sends it again marked
as such. The 'crash' is an exception no handler catches, raised right after the real send."""

from __future__ import annotations

import pytest

from ankita.companion.channels._channels import Channels
from ankita.companion.channels._relay import open_adapter
from ankita.companion.channels._sending import RESENT_NOTE
from fake_discord import TOKEN as DISCORD_TOKEN
from fake_discord import FakeDiscord
from fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from fake_telegram import TOKEN as TELEGRAM_TOKEN
from fake_telegram import FakeTelegram


class Killed(BaseException):
    """The process dies: nothing in the outbox handles it, as nothing would run."""


adapter_chat = {"discord": "977", "slack": "DU1", "telegram": "42"}


def platform_of(platform):
    return lambda channel: platform


def cut_by_a_crash(store, adapter, platform):
    """Queue one message, send it for real, die before it is recorded, restart, drain."""
    store.enqueue("ch", adapter_chat[platform], "Your sister lives in Lyon.")

    def crash(channel, chat_id, text, attempt):
        adapter.send(chat_id, text, attempt)  # the platform has it...
        raise Killed  # ...and the process is gone before the outbox hears of it

    with pytest.raises(Killed):
        store.drain(crash, platform_of(platform))
    assert [m["status"] for m in store.outbox()] == ["sending"]
    assert store.release_claims() == 1  # what the restarted relay does first

    def send(channel, chat_id, text, attempt):
        return adapter.send(chat_id, text, attempt)

    assert store.drain(send, platform_of(platform)) == 1
    [row] = store.outbox()
    assert row["status"] == "sent" and row["maybe_sent"]
    return row


@pytest.fixture
def store(tmp_path):
    opened = Channels(tmp_path / "channels.db")
    yield opened
    opened.close()


def connected_and_cut(store, platform):
    """Channel "ch" on `platform`, its adapter connected (sending only), one send cut."""
    store.add("ch", platform, dm_policy="open")
    adapter = open_adapter(store.channel("ch"), lambda u, o: None, lambda line: None, None)
    try:
        adapter.connect(receive=False)
        return cut_by_a_crash(store, adapter, platform)
    finally:
        adapter.disconnect()


def test_discord_shows_a_message_cut_by_a_crash_once(store, monkeypatch):
    fake = FakeDiscord()
    monkeypatch.setenv("ANKITA_DISCORD_API", fake.api)
    monkeypatch.setenv("ANKITA_DISCORD_GATEWAY", fake.gateway)
    monkeypatch.setenv("ANKITA_CH_TOKEN", DISCORD_TOKEN)
    try:
        row = connected_and_cut(store, "discord")
    finally:
        fake.stop()
    [message] = fake.sent
    assert message["content"] == "Your sister lives in Lyon."
    assert row["platform_id"] == message["id"]  # the first message, handed back by its nonce


@pytest.fixture
def slack(store, monkeypatch):
    fake = FakeSlack()
    monkeypatch.setenv("ANKITA_SLACK_API", fake.url)
    monkeypatch.setenv("ANKITA_CH_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("ANKITA_CH_APP_TOKEN", APP_TOKEN)
    store.add("ch", "slack", dm_policy="open")
    yield fake
    fake.stop()


def test_slack_finds_a_message_cut_by_a_crash_and_does_not_post_it_again(store, slack):
    fake = slack
    adapter = open_adapter(store.channel("ch"), lambda u, o: None, lambda line: None, None)
    try:
        # Another message in the chat since, and one the bot sent before: neither is it.
        fake.posted.append({"channel": "DU1", "text": "older", "ts": "1.0", "metadata": None})
        row = cut_by_a_crash(store, adapter, "slack")
        # A message that may have been sent but was not (the crash came first) goes out.
        store.enqueue("ch", "DU1", "Never reached Slack.")
        store.db.execute("UPDATE outbox SET status = 'sending' WHERE text LIKE 'Never%'")
        store.release_claims()
        sent = store.drain(lambda c, chat, text, a: adapter.send(chat, text, a), lambda c: "slack")
    finally:
        adapter.disconnect()
    assert [m["text"] for m in fake.posted] == [
        "older",
        "Your sister lives in Lyon.",
        "Never reached Slack.",
    ]
    assert row["platform_id"] == fake.posted[1]["ts"] and sent == 1


def test_slack_sends_again_when_it_cannot_read_the_history(store, slack):
    fake = slack
    reports = []
    adapter = open_adapter(store.channel("ch"), lambda u, o: None, reports.append, None)
    fake.fail("conversations.history", 200, {"ok": False, "error": "missing_scope"})
    try:
        cut_by_a_crash(store, adapter, "slack")
    finally:
        adapter.disconnect()
    # Twice rather than never: the operator is told why.
    assert [m["text"] for m in fake.posted] == ["Your sister lives in Lyon."] * 2
    assert any("missing_scope" in line and "sending it" in line for line in reports)


def test_telegram_sends_a_message_cut_by_a_crash_again_saying_so(store, monkeypatch):
    fake = FakeTelegram()
    monkeypatch.setenv("ANKITA_TELEGRAM_API", fake.url)
    monkeypatch.setenv("ANKITA_CH_TOKEN", TELEGRAM_TOKEN)
    try:
        connected_and_cut(store, "telegram")
    finally:
        fake.stop()
    first, second = (m["text"] for m in fake.sent)
    assert first == "Your sister lives in Lyon."
    assert second == f"{RESENT_NOTE}\nYour sister lives in Lyon."
