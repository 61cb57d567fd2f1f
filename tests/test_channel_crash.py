"""`ankita channels run` killed with SIGKILL and started again, against the fake Telegram: queued
replies survive and go out once, an acknowledged reply is never sent again, and an update sent
while the relay was down is answered after the restart. Also: scheduled-task results reach a
chat, and `ankita channels test`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankita.cli import cli
from ankita.companion.channels._channels import Channels
from fake_telegram import TOKEN, FakeTelegram
from waiting import wait_for


@pytest.fixture
def env(tmp_path, monkeypatch, chat_model):
    telegram = FakeTelegram()
    values = {
        "ANKITA_DB": str(tmp_path / "memory.db"),
        "ANKITA_USER": "sam",
        "ANKITA_EMBEDDER": "none",
        "ANKITA_CHANNELS_DB": str(tmp_path / "channels.db"),
        "ANKITA_CHAT_DB": str(tmp_path / "chat.db"),
        "ANKITA_TASKS_DB": str(tmp_path / "tasks.db"),
        "ANKITA_PERSONA": str(tmp_path / "persona.json"),
        "ANKITA_TELEGRAM_API": telegram.url,
        "ANKITA_TG_TOKEN": TOKEN,
        "ANKITA_CHAT_URL": chat_model.url("ollama"),
        "ANKITA_CHAT_MODEL": "fake",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    yield telegram, values
    telegram.stop()


def outbox(path):
    store = Channels(path)
    try:
        return store.outbox()
    finally:
        store.close()


def start(values, log: Path, *extra: str):
    with log.open("a") as err:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "ankita", "channels", "run", *extra],
            env={**os.environ, **values},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


@pytest.mark.slow
def test_the_outbox_survives_a_kill(tmp_path, env):
    telegram, values = env
    assert (
        CliRunner()
        .invoke(cli, ["channels", "add", "tg", "--platform", "telegram", "--dm", "open"])
        .exit_code
        == 0
    )
    log = tmp_path / "relay.log"
    relay = start(values, log)
    try:
        telegram.say(42, "I live in Lyon")
        assert telegram.wait_sent(1)  # acknowledged by Telegram
        for _ in range(4):
            telegram.fail("sendMessage", 502, "Bad Gateway")
        telegram.say(42, "I am a night owl")
        telegram.say(42, "Where do I live?")
        assert wait_for(
            lambda: (
                [(m["status"], bool(m["last_error"])) for m in outbox(values["ANKITA_CHANNELS_DB"])]
                ==
                # The third waits behind the second: one chat, one order.
                [("sent", False), ("queued", True), ("queued", False)]
            )
        ), log.read_text()
    finally:
        relay.send_signal(signal.SIGKILL)
        relay.wait(10)
    telegram.failures.clear()
    telegram.say(42, "I am learning Portuguese")  # arrives while nothing runs
    relay = start(values, log)
    try:
        assert len(telegram.wait_sent(4, timeout=30)) == 4, log.read_text()
        time.sleep(1.5)  # a second send of anything would show up by now
    finally:
        relay.send_signal(signal.SIGTERM)
        assert relay.wait(30) == 0
    # Each once, in the order the messages came.
    assert [m["text"] for m in telegram.sent] == [
        "Got it, I'll remember that.",
        "Got it, I'll remember that.",
        "From what I remember: I live in Lyon; I am a night owl.",
        "Got it, I'll remember that.",
    ]
    rows = outbox(values["ANKITA_CHANNELS_DB"])
    assert [m["status"] for m in rows] == ["sent"] * 4
    assert TOKEN not in log.read_text()


def test_a_second_relay_on_one_store_is_refused(tmp_path, env):
    telegram, values = env
    CliRunner().invoke(cli, ["channels", "add", "tg", "--platform", "telegram"])
    log = tmp_path / "relay.log"
    first = start(values, log)
    try:
        assert wait_for(lambda: "connected as" in log.read_text()), log.read_text()
        second = subprocess.run(
            [sys.executable, "-m", "ankita", "channels", "run"],
            env={**os.environ, **values},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2 and "another `ankita channels run`" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(30)


@pytest.mark.slow
def test_scheduled_results_reach_a_chat_once(tmp_path, env):
    telegram, values = env
    runner = CliRunner()
    runner.invoke(
        cli,
        ["channels", "add", "tg", "--platform", "telegram", "--dm", "open"]
        + ["--allow", "42", "--allow", "43"],
    )
    refused = runner.invoke(
        cli,
        ["tasks", "add", "x", "--every", "1d", "--action", "conflicts", "--to", "channel:nope:42"],
    )
    assert refused.exit_code == 3 and "no channel named 'nope'" in refused.output
    # A chat nobody allowed or paired has written from: a typo, refused.
    stranger = runner.invoke(
        cli,
        ["tasks", "add", "x", "--every", "1d", "--action", "conflicts", "--to", "channel:tg:99"],
    )
    assert stranger.exit_code == 2 and "a task posts only to such chats" in stranger.output
    assert (
        runner.invoke(
            cli,
            ["tasks", "add", "x", "--every", "1d", "--action", "conflicts", "--to", "telegram:42"],
        ).exit_code
        == 2
    )
    job = json.loads(
        runner.invoke(
            cli,
            [
                "tasks",
                "add",
                "morning",
                "--every",
                "1d",
                "--action",
                "conflicts",
                "--to",
                "channel:tg:42",
                "--json",
            ],
        ).output
    )
    run = json.loads(runner.invoke(cli, ["tasks", "run-now", job["id"], "--json"]).output)
    assert run["status"] == "ok"
    [queued] = outbox(values["ANKITA_CHANNELS_DB"])
    assert (queued["chat_id"], queued["text"]) == ("42", "No conflicts wait for an answer.")
    # One process runs the channels and the tasks: a job due in two seconds reaches chat 43.
    soon = (datetime.now(timezone.utc) + timedelta(seconds=2)).isoformat(timespec="seconds")
    assert (
        runner.invoke(
            cli,
            [
                "tasks",
                "add",
                "soon",
                "--at",
                soon,
                "--action",
                "conflicts",
                "--to",
                "channel:tg:43",
            ],
        ).exit_code
        == 0
    )
    log = tmp_path / "relay.log"
    relay = start(values, log, "--with-tasks")
    try:
        sent = telegram.wait_sent(2)
        time.sleep(1.5)
    finally:
        relay.send_signal(signal.SIGTERM)
        relay.wait(30)
    assert [(m["chat"]["id"], m["text"]) for m in telegram.sent] == [
        (42, "No conflicts wait for an answer."),
        (43, "No conflicts wait for an answer."),
    ]
    assert len(sent) == 2


def test_channels_test_checks_credentials_and_sends_one_message(env, monkeypatch):
    telegram, _ = env
    runner = CliRunner()
    runner.invoke(cli, ["channels", "add", "tg", "--platform", "telegram"])
    checked = runner.invoke(cli, ["channels", "test", "tg", "--to", "42"])
    assert checked.exit_code == 0, checked.output
    assert "connected to telegram as @ankita_test_bot" in checked.output
    assert telegram.sent[0]["chat"]["id"] == 42
    monkeypatch.setenv("ANKITA_TG_TOKEN", "1:bad-token-secret")
    refused = runner.invoke(cli, ["channels", "test", "tg"])
    assert refused.exit_code == 7 and "refused" in refused.output
    assert "bad-token-secret" not in refused.output
    monkeypatch.delenv("ANKITA_TG_TOKEN")
    missing = runner.invoke(cli, ["channels", "test", "tg"])
    assert missing.exit_code == 2 and "ANKITA_TG_TOKEN" in missing.output


def test_an_unknown_channel_name_is_refused_and_frees_the_store(tmp_path, env):
    from ankita import InvalidInput
    from ankita.companion.channels._relay import Relay

    CliRunner().invoke(cli, ["channels", "add", "tg", "--platform", "telegram"])
    relay = Relay(tmp_path / "channels.db", lambda message, config: None, only=["nope"])
    with pytest.raises(InvalidInput, match="no channel named nope"):
        relay.start()
    again = Relay(tmp_path / "channels.db", lambda message, config: None, only=["tg"])
    assert again.start() == {"tg": "@ankita_test_bot"}  # the lock was released
    again.stop()
