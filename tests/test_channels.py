"""The channels core: policy and pairing, durable ingress, the outbox (retries, 429, permanent
failures, pacing, expiry, crash replay)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ankita import InvalidInput, NotFound
from ankita.companion.channels._channels import Channels, Inbound
from ankita.companion.channels._outbox import MAX_ATTEMPTS, SEND_LEASE
from ankita.companion.channels._sending import Permanent, RetryAfter, Sent, Transient, classify_http


@pytest.fixture
def channels(tmp_path, clock):
    store = Channels(tmp_path / "channels.db", clock)
    yield store
    store.close()


def dm(sender, text="hi", update="1", channel="tg"):
    return Inbound(channel, update, "dm", f"chat-{sender}", sender, text)


def test_an_unconfigured_channel_denies_everyone(channels):
    assert channels.check(dm("alice")).verdict == "deny"


def test_pairing_codes_are_approved_by_the_owner(channels, clock):
    channels.add("tg", "telegram", dm_policy="pairing")
    first = channels.check(dm("alice"))
    assert first.verdict == "pair" and "ankita channels pair" in first.reply
    code = first.reply.rsplit(" ", 1)[1]
    assert channels.check(dm("alice")).reply == first.reply  # the same code while pending
    assert channels.pair(code) == ("tg", "alice")
    assert channels.check(dm("alice")).verdict == "allow"
    with pytest.raises(NotFound):
        channels.pair(code)  # once only
    # At most three codes wait at a time, and codes expire after an hour.
    for sender in ("b", "c", "d"):
        channels.check(dm(sender))
    assert channels.check(dm("e")).reason == "too many pairing requests are waiting"
    late = channels.check(dm("b")).reply.rsplit(" ", 1)[1]
    clock.advance(hours=2)
    with pytest.raises(InvalidInput, match="expired"):
        channels.pair(late)


def test_allowlist_open_disabled_and_groups(channels):
    channels.add(
        "sl", "slack", dm_policy="allowlist", group_policy="allowlist", allow_from=["U1", "C9"]
    )
    assert channels.check(dm("U1", channel="sl")).verdict == "allow"
    assert channels.check(dm("U2", channel="sl")).verdict == "deny"
    group = Inbound("sl", "7", "group", "C9", "U2", "hi all")
    assert channels.check(group).verdict == "allow"
    assert channels.check(Inbound("sl", "8", "group", "C1", "U1", "x")).verdict == "deny"
    channels.add("dc", "discord", dm_policy="disabled", group_policy="open")
    assert channels.check(dm("x", channel="dc")).verdict == "deny"
    assert channels.check(Inbound("dc", "9", "group", "G", "x", "y")).verdict == "allow"
    with pytest.raises(InvalidInput):
        channels.add("bad", "irc")


def test_updates_are_stored_before_the_offset_moves_and_handled_once(channels):
    channels.add("tg", "telegram")
    new = channels.receive("tg", [dm("a", update="10"), dm("b", update="11")], "12")
    assert len(new) == 2 and channels.offset("tg") == "12"
    # The platform sends them again (the process died before acknowledging): stored once.
    assert channels.receive("tg", [dm("a", update="10")], "12") == []
    pending = channels.pending()
    assert [m.sender for _, m in pending] == ["a", "b"]
    channels.handled(pending[0][0])
    assert [m.sender for _, m in channels.pending()] == ["b"]  # survives a restart as well
    assert pending[1][1].session_key("telegram") == "telegram.tg.dm.chat-b"
    # Push platforms (Slack, Discord) have no offset to move.
    assert len(channels.receive("tg", [dm("c", update="12")])) == 1
    assert channels.offset("tg") == "12"


def test_a_reply_is_queued_and_its_update_handled_in_one_step(channels):
    channels.add("tg", "telegram", dm_policy="open")
    [ingress_id] = channels.receive("tg", [dm("a", update="1")], "2")
    channels.handled(ingress_id, ("tg", "chat-a", "hello"))
    assert channels.pending() == []
    # Handling it again (a crash between the model's answer and this step) queues nothing new.
    channels.handled(ingress_id, ("tg", "chat-a", "hello again"))
    assert [m["text"] for m in channels.outbox()] == ["hello"]
    assert channels.enqueue("tg", "1", "x", dedupe="run:7") == channels.enqueue(
        "tg", "1", "x", dedupe="run:7"
    )
    with pytest.raises(InvalidInput):
        channels.enqueue("tg", "", "no chat")


class Platform:
    """A scripted platform: answers per call, records what it acknowledged."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []
        self.attempts = []

    def __call__(self, channel, chat_id, text, attempt):
        self.calls.append(text)
        self.attempts.append(attempt)
        return self.answers.pop(0) if self.answers else Sent(str(len(self.calls)))


def test_transient_errors_retry_with_backoff_and_429_waits_as_told(channels, clock):
    platform = Platform(Transient("HTTP 502"), RetryAfter(7), Sent("m1"))
    channels.enqueue("tg", "42", "Good morning!")
    assert channels.drain(platform) == 0
    assert channels.outbox()[0]["status"] == "queued"
    clock.advance(seconds=4)
    assert channels.drain(platform) == 0 and len(platform.calls) == 1  # not due yet (5 s)
    clock.advance(seconds=1)
    assert channels.drain(platform) == 0 and channels.outbox()[0]["last_error"] == "retry after 7 s"
    clock.advance(seconds=7)
    assert channels.drain(platform) == 1
    [message] = channels.outbox()
    assert (message["status"], message["platform_id"], message["attempts"]) == ("sent", "m1", 3)
    assert channels.drain(platform) == 0 and len(platform.calls) == 3  # never sent again


def test_permanent_failures_are_parked_not_retried(channels, clock):
    platform = Platform(classify_http(400, "Bad Request: chat not found"))
    channels.enqueue("tg", "404", "hello?")
    channels.drain(platform)
    clock.advance(hours=1)
    channels.drain(platform)
    [message] = channels.outbox()
    assert message["status"] == "failed" and "chat not found" in message["last_error"]
    assert len(platform.calls) == 1


def test_too_many_attempts_fail_and_old_messages_expire(channels, clock):
    platform = Platform(*[Transient("HTTP 503")] * 10)
    channels.enqueue("tg", "1", "will fail")
    for _ in range(MAX_ATTEMPTS + 2):
        channels.drain(platform)
        clock.advance(minutes=3)
    assert channels.outbox()[0]["status"] == "failed"
    assert len(platform.calls) == MAX_ATTEMPTS
    channels.enqueue("tg", "1", "too late")
    clock.advance(hours=2)
    channels.drain(platform)
    assert channels.outbox()[1]["status"] == "expired"


def test_sends_are_paced_per_channel(channels, clock):
    platform = Platform()
    for i in range(3):
        channels.enqueue("tg", "1", f"message {i}")
    channels.enqueue("other", "1", "elsewhere")
    assert channels.drain(platform) == 2  # one for tg, one for the other channel
    clock.advance(seconds=1)
    assert channels.drain(platform) == 1
    clock.advance(seconds=1)
    assert channels.drain(platform) == 1
    assert [m["status"] for m in channels.outbox()] == ["sent"] * 4


def test_a_crash_mid_send_sends_again_but_never_an_acknowledged_message(tmp_path, clock):
    first = Channels(tmp_path / "c.db", clock)
    first.enqueue("tg", "1", "acknowledged")
    first.enqueue("tg", "2", "in flight")
    first.drain(Platform())  # the first is sent and recorded; pacing holds the second
    first_key = first.db.execute("SELECT send_key FROM outbox WHERE id = 2").fetchone()[0]
    first.db.execute(
        "UPDATE outbox SET status = 'sending', next_attempt_at = ? WHERE id = 2",
        ((clock.now + SEND_LEASE).isoformat(),),
    )  # then the crash
    first.close()
    clock.advance(seconds=2)
    again = Channels(tmp_path / "c.db", clock)
    platform = Platform()
    assert again.drain(platform) == 0  # another process may still be sending it: wait
    clock.advance(seconds=SEND_LEASE.total_seconds())
    assert again.drain(platform) == 1
    assert platform.calls == ["in flight"]  # the acknowledged message was not sent twice
    assert [m["status"] for m in again.outbox()] == ["sent", "sent"]
    # The platform is told the attempt may repeat one it already has, under the same key.
    [attempt] = platform.attempts
    assert attempt.maybe_sent and attempt.key == first_key
    again.close()


def test_every_attempt_of_a_message_carries_its_own_key(channels, clock):
    platform = Platform(Transient("HTTP 502"), Transient("timed out", maybe_sent=True))
    channels.enqueue("tg", "1", "first")
    channels.enqueue("tg", "2", "second")
    channels.drain(platform)  # first: 502; second: timed out (maybe delivered)
    clock.advance(seconds=6)
    channels.drain(platform)
    clock.advance(seconds=2)  # paced: one send a second on a channel
    channels.drain(platform)
    assert platform.calls == ["first", "second", "first", "second"]
    first, second, first_again, second_again = platform.attempts
    assert first.key == first_again.key and second.key == second_again.key
    assert first.key != second.key and len(first.key) <= 25  # Discord's nonce limit
    # A refused request was certainly not delivered; a timed-out one may have been.
    assert not first_again.maybe_sent and second_again.maybe_sent
    assert [m["maybe_sent"] for m in channels.outbox()] == [False, True]


def test_claims_released_at_start_are_marked_as_maybe_sent(channels):
    channels.enqueue("tg", "1", "in flight")
    channels.db.execute("UPDATE outbox SET status = 'sending'")  # a crash while sending
    assert channels.release_claims() == 1
    platform = Platform()
    assert channels.drain(platform) == 1
    assert platform.attempts[0].maybe_sent


@pytest.mark.parametrize(
    "status,text,kind",
    [
        (429, "Too Many Requests", RetryAfter),
        (500, "oops", Transient),
        (502, "bad gateway", Transient),
        (400, "Bad Request: chat not found", Permanent),
        (403, "Forbidden: bot was blocked by the user", Permanent),
        (404, "Not Found", Permanent),
    ],
)
def test_http_answers_are_classified(status, text, kind):
    assert isinstance(classify_http(status, text, 3), kind)


def test_channel_commands(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ankita.cli import cli

    monkeypatch.setenv("ANKITA_CHANNELS_DB", str(tmp_path / "ch.db"))
    runner = CliRunner()
    added = runner.invoke(cli, ["channels", "add", "tg", "--platform", "telegram"])
    assert added.exit_code == 0 and "direct messages pairing" in added.output
    import json

    [listed] = json.loads(runner.invoke(cli, ["channels", "list", "--json"]).output)
    assert listed["dm_policy"] == "pairing" and listed["outbox"] == {}
    assert "ANKITA_TG_TOKEN" in listed["secrets"]
    monkeypatch.setenv("ANKITA_TG_TOKEN", "123:secret-value")
    shown = runner.invoke(cli, ["channels", "list"]).output
    assert "secrets: set" in shown and "secret-value" not in shown
    secrets = tmp_path / "secrets.env"
    secrets.write_text("ANKITA_TG_TOKEN=123:from-file\n")
    secrets.chmod(0o644)
    monkeypatch.delenv("ANKITA_TG_TOKEN")
    monkeypatch.setenv("ANKITA_SECRETS", str(secrets))
    assert "chmod 600" in runner.invoke(cli, ["channels", "list"]).output
    secrets.chmod(0o600)
    assert "secrets: set" in runner.invoke(cli, ["channels", "list"]).output
    store = Channels(tmp_path / "ch.db")
    code = store.check(dm("alice")).reply.rsplit(" ", 1)[1]
    store.close()
    paired = runner.invoke(cli, ["channels", "pair", code])
    assert paired.exit_code == 0 and "paired alice on tg" in paired.output
    store = Channels(tmp_path / "ch.db")
    store.enqueue("tg", "chat-alice", "hello")
    store.db.execute("UPDATE outbox SET status = 'sending'")  # a crash while sending
    store.release_claims()
    store.close()
    listed = runner.invoke(cli, ["channels", "outbox"]).output
    assert "queued  attempts 0  maybe sent before" in listed
    [row] = json.loads(runner.invoke(cli, ["channels", "outbox", "--json"]).output)
    assert row["maybe_sent"] is True and row["text"] == "hello"
    assert runner.invoke(cli, ["channels", "pair", "NOPE"]).exit_code == 3
    assert runner.invoke(cli, ["channels", "remove", "tg"]).exit_code == 0
    assert runner.invoke(cli, ["channels", "remove", "tg"]).exit_code == 3
    assert json.loads(runner.invoke(cli, ["channels", "list", "--json"]).output) == []


def test_an_outbox_of_an_earlier_version_gains_the_idempotency_key(tmp_path, clock):
    import sqlite3

    old = sqlite3.connect(tmp_path / "old.db")
    old.execute("""CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, chat_id TEXT NOT NULL,
        text TEXT NOT NULL, created_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL, status TEXT NOT NULL, platform_id TEXT,
        last_error TEXT)""")
    old.execute(
        "INSERT INTO outbox (channel, chat_id, text, created_at, next_attempt_at, "
        "status) VALUES ('tg', '1', 'queued before', ?, ?, 'queued')",
        (clock.now.isoformat(), clock.now.isoformat()),
    )
    old.commit()
    old.close()
    store = Channels(tmp_path / "old.db", clock)
    store.enqueue("tg", "1", "after", dedupe="k")
    store.enqueue("tg", "1", "after", dedupe="k")
    assert [m["text"] for m in store.outbox()] == ["queued before", "after"]
    platform = Platform()
    assert store.drain(platform) == 1  # paced: one a drain
    clock.advance(seconds=5)
    assert store.drain(platform) == 1
    # The row from before has a key all the same, stable across attempts.
    assert [a.key for a in platform.attempts] == ["ak-1", platform.attempts[1].key]
    assert platform.attempts[1].key.startswith("ak-") and platform.attempts[1].key != "ak-2"
    store.close()


def test_long_replies_go_out_in_parts_within_the_platform_limit(channels):
    from ankita.companion.channels._outbox import MAX_LENGTH

    channels.add("dc", "discord", dm_policy="open")
    paragraph = "I remember that you like long walks by the river. " * 30
    text = (paragraph + "\n\n") * 3
    channels.enqueue("dc", "7", text, dedupe="run:1")
    channels.enqueue("dc", "7", text, dedupe="run:1")  # the same key: nothing new
    parts = [m["text"] for m in channels.outbox()]
    assert len(parts) == 3 and all(len(p) <= MAX_LENGTH["discord"] for p in parts)
    assert "".join(parts).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )


@given(st.text(alphabet=st.sampled_from("ab .\n!?"), max_size=400), st.integers(8, 60))
def test_split_keeps_every_character_but_the_whitespace_at_cuts(text, limit):
    from ankita.companion.channels._sending import split_message

    parts = split_message(text, limit)
    assert all(0 < len(p) <= limit for p in parts)
    assert "".join(parts).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
        "\n", ""
    )


def test_a_retrying_message_holds_back_later_ones_to_the_same_chat(channels, clock):
    platform = Platform(Transient("HTTP 502"))
    channels.enqueue("tg", "1", "first part")
    channels.enqueue("tg", "1", "second part")
    channels.enqueue("tg", "2", "another chat")
    clock.advance(seconds=1)
    channels.drain(platform)  # the first part fails; the second must not overtake it
    clock.advance(seconds=2)
    channels.drain(platform)
    assert platform.calls == ["first part", "another chat"]
    clock.advance(seconds=5)
    channels.drain(platform)
    clock.advance(seconds=2)
    channels.drain(platform)
    assert platform.calls == ["first part", "another chat", "first part", "second part"]


def test_moving_a_channel_to_another_users_memory_unpairs_its_senders(channels):
    channels.add("tg", "telegram", dm_policy="pairing", user="alice")
    code = channels.check(dm("sam")).reply.rsplit(" ", 1)[1]
    channels.pair(code)
    assert channels.check(dm("sam")).verdict == "allow"
    # The same user again (a policy change) keeps the pairing.
    assert channels.add("tg", "telegram", dm_policy="pairing", user="alice") == 0
    assert channels.check(dm("sam")).verdict == "allow"
    # Another user's memory: sam paired to talk to alice's, not bob's.
    assert channels.add("tg", "telegram", dm_policy="pairing", user="bob") == 1
    assert channels.check(dm("sam")).verdict == "pair"
    with pytest.raises(InvalidInput):
        channels.add("tg", "telegram", user="bob\n")


def test_paired_senders_are_listed_and_revoked(channels, clock, tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from ankita.cli import cli

    channels.add("tg", "telegram", dm_policy="pairing")
    for sender in ("sam", "ravi"):
        channels.pair(channels.check(dm(sender)).reply.rsplit(" ", 1)[1])
        clock.advance(minutes=1)
    assert [s for s, _ in channels.senders("tg")] == ["sam", "ravi"]  # oldest first
    channels.unpair("tg", "sam")
    assert channels.check(dm("sam")).verdict == "pair"  # must pair again
    assert channels.check(dm("ravi")).verdict == "allow"
    with pytest.raises(NotFound, match="not paired"):
        channels.unpair("tg", "sam")
    # The same through the commands.
    monkeypatch.setenv("ANKITA_CHANNELS_DB", str(tmp_path / "channels.db"))
    runner = CliRunner()
    listed = runner.invoke(cli, ["channels", "senders", "tg", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [row["sender"] for row in json.loads(listed.output)] == ["ravi"]
    assert runner.invoke(cli, ["channels", "unpair", "tg", "ravi"]).exit_code == 0
    assert runner.invoke(cli, ["channels", "senders", "tg"]).output.strip() == "no paired senders"
    gone = runner.invoke(cli, ["channels", "unpair", "tg", "ravi"])
    assert gone.exit_code == 3 and "not paired" in gone.output
    unknown = runner.invoke(cli, ["channels", "senders", "nope"])
    assert unknown.exit_code == 3 and "no channel named 'nope'" in unknown.output


def test_a_task_may_post_only_to_chats_the_channel_lets_in(channels):
    channels.add("tg", "telegram", dm_policy="pairing", allow_from=["555"])
    assert channels.known_chat("tg", "555")  # allowlisted
    channels.receive("tg", [dm("sam", update="1"), dm("eve", update="2")])
    assert not channels.known_chat("tg", "chat-sam")  # wrote, but not paired yet
    channels.pair(channels.check(dm("sam")).reply.rsplit(" ", 1)[1])
    assert channels.known_chat("tg", "chat-sam")
    assert not channels.known_chat("tg", "chat-eve")  # a stranger's chat
    assert not channels.known_chat("tg", "chat-nobody")
    assert not channels.known_chat("nope", "555")
    channels.add("op", "telegram", dm_policy="open")
    channels.receive("op", [dm("eve", update="3", channel="op")])
    assert channels.known_chat("op", "chat-eve")  # an open channel lets anyone in
