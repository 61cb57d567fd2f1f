"""Telegram end to end against a fake Bot API on 127.0.0.1, through python-telegram-bot: a
stranger is refused until paired, then talks with the companion (memory included); 409 and 429
are survived; the token never shows up in what the relay reports."""

from __future__ import annotations

import logging
import time

import pytest

from ankita import Memory
from ankita.companion.channels._channels import Channels
from ankita.companion.channels._relay import Relay, open_adapter
from fake_telegram import TOKEN, FakeTelegram


@pytest.fixture
def telegram(monkeypatch):
    fake = FakeTelegram()
    monkeypatch.setenv("ANKITA_TELEGRAM_API", fake.url)
    monkeypatch.setenv("ANKITA_TG_TOKEN", TOKEN)
    yield fake
    fake.stop()


class Reports(list):
    def __call__(self, line):
        self.append(line)


def quick(config, ingest, report, offset):
    # Short waits after a 409 or a network error, so the test does not sit out real back-off.
    return open_adapter(config, ingest, report, offset, conflict_wait_s=0.2, backoff_s=(0.1,))


def start_relay(tmp_path, reports, responder, user="sam"):
    store = Channels(tmp_path / "channels.db")
    store.add("tg", "telegram", dm_policy="pairing", user=user)
    store.close()
    return Relay(
        tmp_path / "channels.db", responder, make_adapter=quick, report=reports, drain_every_s=0.2
    )


def test_a_stranger_pairs_then_talks_with_the_companion(
    tmp_path, telegram, chat_model, responder, caplog
):
    caplog.set_level(logging.DEBUG)  # the libraries log request URLs, which hold the token
    reports = Reports()
    relay = start_relay(tmp_path, reports, responder)
    assert relay.start() == {"tg": "@ankita_test_bot"}
    try:
        telegram.say(777, "hello?")
        [pairing] = telegram.wait_sent(1)
        assert pairing["chat"]["id"] == 777 and "ankita channels pair" in pairing["text"]
        assert chat_model.requests == []  # a stranger never reaches the companion
        code = pairing["text"].rsplit(" ", 1)[1]
        store = Channels(tmp_path / "channels.db")
        assert store.pair(code) == ("tg", "777")
        store.close()

        telegram.say(777, "I live in Lyon")
        assert telegram.wait_sent(2)[1]["text"] == "Got it, I'll remember that."
        telegram.say(777, "Where do I live?")
        assert telegram.wait_sent(3)[2]["text"] == "From what I remember: I live in Lyon."
    finally:
        relay.stop()
    with Memory(tmp_path / "memory.db", user="sam", embedder="none") as memory:
        assert [f.text for f in memory.list()] == ["I live in Lyon"]
    assert any(method == "sendChatAction" for method, _ in telegram.calls)
    store = Channels(tmp_path / "channels.db")
    assert store.offset("tg") == str(telegram.next_update + 1)
    assert [m["status"] for m in store.outbox()] == ["sent"] * 3
    store.close()
    assert not any(TOKEN in line for line in reports)
    assert "getUpdates" in caplog.text and TOKEN not in caplog.text


def test_group_messages_are_answered_only_when_the_bot_is_addressed(tmp_path, telegram, responder):
    store = Channels(tmp_path / "channels.db")
    store.add("tg", "telegram", dm_policy="disabled", group_policy="open")
    store.close()
    relay = Relay(tmp_path / "channels.db", responder, make_adapter=quick, drain_every_s=0.2)
    relay.start()
    try:
        telegram.say(5, "lunch anyone?", chat_type="supergroup", chat_id=-1001)
        telegram.say(5, "@ankita_test_bot I am vegetarian", chat_type="supergroup", chat_id=-1001)
        telegram.say(6, "and you?", chat_type="supergroup", chat_id=-1001, reply_to_bot=True)
        sent = telegram.wait_sent(2)
        time.sleep(0.5)
    finally:
        relay.stop()
    assert [(m["chat"]["id"], m["text"]) for m in telegram.sent] == [
        (-1001, "Got it, I'll remember that."),
        (-1001, "From what I remember: I am vegetarian."),
    ]
    assert len(sent) == 2


def test_409_and_429_are_survived_and_nothing_is_lost_or_doubled(tmp_path, telegram, responder):
    reports = Reports()
    telegram.fail(
        "getUpdates",
        409,
        "Conflict: terminated by other getUpdates request; make "
        "sure that only one bot instance is running",
    )
    telegram.fail(
        "sendMessage", 429, "Too Many Requests: retry after 1", parameters={"retry_after": 1}
    )
    relay = start_relay(tmp_path, reports, responder)
    store = Channels(tmp_path / "channels.db")
    store.add("tg", "telegram", dm_policy="allowlist", allow_from=["42"], user="sam")
    relay.start()
    try:
        telegram.say(42, "I am learning Portuguese")
        started = time.monotonic()
        [reply] = telegram.wait_sent(1)
        waited = time.monotonic() - started
    finally:
        relay.stop()
    assert reply["text"] == "Got it, I'll remember that."
    assert waited >= 1.0  # Telegram's retry_after was honoured
    [row] = store.outbox()
    assert (row["status"], row["attempts"]) == ("sent", 2)
    store.close()
    assert any("another poller" in line for line in reports), reports
    assert any("retry after 1 s" in line for line in reports), reports
    assert not any(TOKEN in line for line in reports)


def test_a_bad_token_is_a_clear_error_without_the_token(tmp_path, telegram, monkeypatch):
    from ankita import ChannelError

    monkeypatch.setenv("ANKITA_TG_TOKEN", "999:wrong-token-value")
    adapter = open_adapter(
        {"name": "tg", "platform": "telegram"}, lambda u, o: None, lambda line: None, None
    )
    with pytest.raises(ChannelError) as caught:
        adapter.connect(receive=False)
    adapter.disconnect()
    assert "refused" in str(caught.value) and "wrong-token-value" not in str(caught.value)


def test_an_unreachable_api_is_not_called_a_refusal(tmp_path, monkeypatch):
    import socket

    from ankita import ChannelError

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANKITA_TELEGRAM_API", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANKITA_TG_TOKEN", TOKEN)
    store = Channels(tmp_path / "channels.db")
    store.add("tg", "telegram", dm_policy="pairing")
    config = store.channel("tg")
    store.close()
    adapter = quick(config, lambda rows, offset: None, Reports(), None)
    try:
        with pytest.raises(ChannelError, match="cannot reach Telegram") as caught:
            adapter.connect(receive=False)
        assert "refused" not in str(caught.value) and TOKEN not in str(caught.value)
    finally:
        adapter.disconnect()
