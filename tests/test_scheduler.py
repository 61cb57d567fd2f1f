"""Scheduled tasks and heartbeats on a fake clock with a fake runner: at most once per
occurrence, crash recovery, catch-up, busy retry, backoff, [SILENT], results at once."""

import json
import threading
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from ankita import InvalidInput
from ankita.cli import cli
from ankita.companion.tasks._scheduler import BACKOFF_S, Scheduler


class Clock:
    def __init__(self):
        self.now = datetime(2026, 3, 2, 6, 0, tzinfo=timezone.utc)

    def __call__(self):
        return self.now

    def advance(self, **kwargs):
        self.now += timedelta(**kwargs)


class Crash(BaseException):
    """Stands for the process dying: nothing in the scheduler catches it."""


@pytest.fixture
def clock():
    return Clock()


def scheduler(tmp_path, clock, runner=lambda job: f"done: {job.prompt}", busy=None):
    return Scheduler(tmp_path / "tasks.db", runner, clock=clock, busy=busy)


def statuses(s, job_id=None):
    return [r.status for r in s.runs(job_id)]


def test_an_every_job_runs_once_per_occurrence_and_announces_at_once(tmp_path, clock):
    s = scheduler(tmp_path, clock)
    seen = []
    s.subscribe(seen.append)
    s.add("water", "every 1h", "Remind me to drink water")
    assert s.tick() == []
    clock.advance(hours=1)
    [run] = s.tick()
    assert (run.status, run.output) == ("ok", "done: Remind me to drink water")
    assert seen == [run]  # the subscriber has it before tick returns
    assert s.tick() == []  # the same occurrence never runs twice
    assert [text for _, _, text, _ in s.inbox()] == ["done: Remind me to drink water"]
    state = s.jobs()[0][1]
    assert state["next_run_at"] == "2026-03-02T08:00:00+00:00"


def test_a_crash_mid_run_is_recovered_once_and_never_repeated(tmp_path, clock):
    calls = []

    def dies_once(job):
        calls.append(job.id)
        if len(calls) == 1:
            raise Crash()
        return "finished"

    first = scheduler(tmp_path, clock, dies_once)
    first.add("report", "every 1h", "Daily report")
    clock.advance(hours=1)
    with pytest.raises(Crash):
        first.tick()
    # The process is gone; a new one starts after the claim's lease ran out.
    clock.advance(minutes=10)
    second = scheduler(tmp_path, clock, dies_once)
    assert second.tick() == []  # advanced before it ran: the slot is not run again by tick
    [retry] = second.recover()
    assert (retry.status, retry.attempt, retry.output) == ("ok", 2, "finished")
    assert statuses(second) == ["interrupted", "ok"]
    assert second.recover() == []  # recovered once, not again
    assert len(calls) == 2


def test_a_second_crash_of_the_same_run_abandons_it(tmp_path, clock):
    def always_dies(job):
        raise Crash()

    s = scheduler(tmp_path, clock, always_dies)
    s.add("report", "every 1h", "Daily report")
    clock.advance(hours=1)
    with pytest.raises(Crash):
        s.tick()
    clock.advance(minutes=10)
    with pytest.raises(Crash):
        scheduler(tmp_path, clock, always_dies).recover()
    clock.advance(minutes=10)
    assert scheduler(tmp_path, clock, always_dies).recover() == []
    assert statuses(s) == ["interrupted", "abandoned"]


def test_two_schedulers_on_one_store_run_an_occurrence_once(tmp_path, clock):
    ran = []
    gate = threading.Barrier(2)

    def runner(job):
        ran.append(job.id)
        return "ok"

    a, b = scheduler(tmp_path, clock, runner), scheduler(tmp_path, clock, runner)
    a.add("report", "every 1h", "Daily report")
    clock.advance(hours=1)
    results = []

    def tick(s):
        gate.wait()
        results.append(s.tick())

    threads = [threading.Thread(target=tick, args=(s,)) for s in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ran) == 1 and sorted(len(r) for r in results) == [0, 1]


def test_late_within_grace_runs_and_downtime_collapses_into_one_catch_up(tmp_path, clock):
    s = scheduler(tmp_path, clock)
    s.add("report", "every 1h", "Hourly check")
    clock.advance(hours=1, minutes=20)  # 20 min late; grace for an hourly job is 30 min
    assert statuses(s) == [] and [r.status for r in s.tick()] == ["ok"]
    clock.advance(hours=10)  # the machine was off
    runs = s.tick()
    assert [r.status for r in runs] == ["skipped", "ok"]
    assert runs[0].reason.startswith("missed 9 occurrence(s)")  # 10 were due: 9 + catch-up
    assert s.tick() == []
    assert s.jobs()[0][1]["next_run_at"] == "2026-03-02T18:00:00+00:00"


def test_a_busy_runtime_makes_a_heartbeat_retry_within_seconds(tmp_path, clock):
    busy = {"now": True}
    s = scheduler(tmp_path, clock, busy=lambda: busy["now"])
    s.add("check-in", "every 30m", "How is the user doing?", kind="heartbeat")
    clock.advance(minutes=30)
    [waiting] = s.tick()
    assert waiting.status == "busy" and "retry in 5 s" in waiting.reason
    clock.advance(seconds=5)
    [again] = s.tick()
    assert again.status == "busy"  # still busy: again in seconds, not dropped
    busy["now"] = False
    clock.advance(seconds=5)
    [ran] = s.tick()
    assert ran.status == "ok"
    # The next regular beat was not pushed a whole interval away.
    assert s.jobs()[0][1]["next_run_at"] == "2026-03-02T07:00:00+00:00"


def test_failures_back_off(tmp_path, clock):
    def fails(job):
        raise RuntimeError("model down")

    s = scheduler(tmp_path, clock, fails)
    s.add("check-in", "every 1d", "Hi", kind="heartbeat")
    clock.advance(days=1)
    waits = []
    for _ in range(6):
        [run] = [r for r in s.tick() if r.status == "error"]
        retry = datetime.fromisoformat(s.jobs()[0][1]["retry_at"])
        waits.append(int((retry - clock.now).total_seconds()))
        clock.now = retry
    assert waits == [*BACKOFF_S, BACKOFF_S[-1]]
    assert "model down" in run.reason


def test_a_backoff_longer_than_the_interval_is_followed(tmp_path, clock):
    calls = []

    def down(job):
        calls.append(clock.now)
        raise RuntimeError("model down")

    s = scheduler(tmp_path, clock, down)
    s.add("check-in", "every 30s", "Hi", kind="heartbeat")
    start = clock.now
    for _ in range(2 * 60 * 10):  # ten minutes, a tick every half second
        clock.advance(seconds=0.5)
        s.tick()
    # Every 30 s before the fix; now after 30, 60 and 300 s of waiting: 4 runs in 10 minutes.
    offsets = [round((at - start).total_seconds()) for at in calls]
    assert offsets == [30, 60, 120, 420]
    assert all(run.status == "error" for run in s.runs())
    # The model is back: the retry succeeds and the slots run at their interval again.
    s.runner = lambda job: "hello"
    clock.advance(seconds=900 - (clock.now - start).total_seconds() + 420)
    assert [r.status for r in s.tick()] == ["ok"]
    clock.advance(seconds=30)
    assert [r.status for r in s.tick()] == ["ok"]


def test_silent_replies_are_recorded_and_post_nothing(tmp_path, clock):
    s = scheduler(tmp_path, clock, lambda job: "[SILENT]")
    s.add("check-in", "every 1h", "Anything to say?", kind="heartbeat")
    clock.advance(hours=1)
    [run] = s.tick()
    assert run.status == "silent" and run.output == "[SILENT]"
    assert s.inbox() == []


def test_heartbeats_keep_their_active_hours(tmp_path, clock):
    s = scheduler(tmp_path, clock)
    s.add(
        "check-in",
        "every 1h",
        "Hi",
        kind="heartbeat",
        tz="Europe/Berlin",
        active_hours="08:00-22:00",
    )
    clock.advance(hours=1)  # 07:00 UTC is 08:00 in Berlin: inside
    assert [r.status for r in s.tick()] == ["ok"]
    clock.now = datetime(2026, 3, 2, 21, 0, tzinfo=timezone.utc)  # 22:00 in Berlin
    assert [(r.status, r.reason) for r in s.tick()][-1] == ("skipped", "outside active hours")


def test_cron_and_at_schedules_in_a_time_zone(tmp_path, clock):
    s = scheduler(tmp_path, clock)
    s.add("morning", "cron 0 9 * * *", "Good morning summary", tz="Europe/Berlin")
    s.add("dentist", "at 2026-03-02T15:30", "Dentist at 16:00", tz="Europe/Berlin")
    states = {job.name: state for job, state in s.jobs()}
    assert states["morning"]["next_run_at"] == "2026-03-02T08:00:00+00:00"
    assert states["dentist"]["next_run_at"] == "2026-03-02T14:30:00+00:00"
    clock.now = datetime(2026, 3, 2, 14, 30, tzinfo=timezone.utc)
    s.tick()
    assert {job.name: state for job, state in s.jobs()}["dentist"]["next_run_at"] is None


@pytest.mark.parametrize(
    "schedule,tz,message",
    [
        ("every 5", "UTC", "every takes"),
        ("every 2s", "UTC", "at least 10 seconds"),
        ("cron 61 * * * *", "UTC", "not a cron expression"),
        ("at tomorrow", "UTC", "ISO time"),
        ("at 2020-01-01T09:00", "UTC", "in the past"),
        ("at 2026-03-02T06:30", "Europe/Berlin", "in the past"),  # 05:30 UTC
        ("sometimes", "UTC", "a schedule is"),
        ("every 1h", "Mars/Olympus", "unknown time zone"),
    ],
)
def test_bad_schedules_are_refused(tmp_path, clock, schedule, tz, message):
    s = scheduler(tmp_path, clock)
    with pytest.raises(InvalidInput, match=message):
        s.add("x", schedule, "prompt", tz=tz)
    assert s.jobs() == []


def test_the_tasks_commands_show_a_finished_run_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("ANKITA_TASKS_DB", str(tmp_path / "tasks.db"))
    runner = CliRunner()
    added = runner.invoke(
        cli, ["tasks", "add", "conflicts", "--every", "1d", "--action", "conflicts", "--json"]
    )
    assert added.exit_code == 0, added.output
    job_id = json.loads(added.output)["id"]
    listed = json.loads(runner.invoke(cli, ["tasks", "list", "--json"]).output)
    assert listed[0]["name"] == "conflicts" and listed[0]["next_run_at"]
    ran = runner.invoke(
        cli,
        [
            "--db",
            str(tmp_path / "m.db"),
            "--embedder",
            "none",
            "tasks",
            "run-now",
            job_id,
            "--json",
        ],
    )
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.output)["status"] == "ok"
    runs = json.loads(runner.invoke(cli, ["tasks", "runs", "--json"]).output)
    assert runs[-1]["status"] == "ok" and "No conflicts" in runs[-1]["output"]
    inbox = json.loads(runner.invoke(cli, ["tasks", "inbox", "--json"]).output)
    assert [m["text"] for m in inbox] == [runs[-1]["output"]]
    assert runner.invoke(cli, ["tasks", "remove", job_id]).exit_code == 0
    assert json.loads(runner.invoke(cli, ["tasks", "list", "--json"]).output) == []
    missing = runner.invoke(cli, ["tasks", "remove", "nope"])
    assert missing.exit_code == 3


def test_a_heartbeat_never_interrupts_a_live_conversation_turn(tmp_path, clock):
    from ankita import Memory
    from ankita.companion import Companion, ModelSettings, Persona, Transcripts, open_model
    from fakemodel import FakeModel, Say

    in_turn, finish = threading.Event(), threading.Event()

    def brain(body):
        in_turn.set()
        finish.wait(10)
        return Say("Here I am.")

    fake = FakeModel(brain)
    transcripts = Transcripts(tmp_path / "chat.db")
    chat = Companion(
        Memory(tmp_path / "m.db", embedder="none"),
        open_model(
            ModelSettings(
                provider="openai", base_url=fake.url("openai"), model="fake", timeout_s=10
            )
        ),
        Persona.default(),
        transcripts,
    )
    watcher = Transcripts(tmp_path / "chat.db")  # as another process would see it
    beats = []
    s = scheduler(
        tmp_path,
        clock,
        lambda job: beats.append(job.id) or "Just checking in!",
        busy=lambda: watcher.busy(datetime.now(timezone.utc)),
    )
    s.add("check-in", "every 30m", "Check in", kind="heartbeat")
    talking = threading.Thread(target=chat.send, args=("Tell me a story",))
    talking.start()
    assert in_turn.wait(10)
    clock.advance(minutes=30)
    assert [r.status for r in s.tick()] == ["busy"] and beats == []
    finish.set()
    talking.join(10)
    clock.advance(seconds=5)
    assert [r.status for r in s.tick()] == ["ok"] and len(beats) == 1
    fake.stop()


def test_a_prompt_task_asks_the_companion_with_its_memory(tmp_path, monkeypatch):
    from ankita import Memory
    from fakemodel import FakeModel

    fake = FakeModel()
    for name, value in {
        "ANKITA_TASKS_DB": tmp_path / "tasks.db",
        "ANKITA_CHAT_DB": tmp_path / "chat.db",
        "ANKITA_CHAT_URL": fake.url("ollama"),
        "ANKITA_CHAT_MODEL": "fake",
    }.items():
        monkeypatch.setenv(name, str(value))
    with Memory(tmp_path / "m.db", user="sam", embedder="none") as memory:
        memory.remember("I live in Lyon")
    runner = CliRunner()
    base = ["--db", str(tmp_path / "m.db"), "--user", "sam", "--embedder", "none", "tasks"]
    job = json.loads(
        runner.invoke(
            cli, [*base, "add", "where", "--every", "1d", "--prompt", "Where do I live?", "--json"]
        ).output
    )
    run = json.loads(runner.invoke(cli, [*base, "run-now", job["id"], "--json"]).output)
    assert run["status"] == "ok" and run["output"] == "From what I remember: I live in Lyon."
    fake.stop()
    # With the model gone, the run is an error that backs off, not a crash.
    failed = json.loads(runner.invoke(cli, [*base, "run-now", job["id"], "--json"]).output)
    assert failed["status"] == "error" and "retry in 30 s" in failed["reason"]


def test_tasks_run_once_runs_what_is_due_and_exits(tmp_path, monkeypatch):
    monkeypatch.setenv("ANKITA_TASKS_DB", str(tmp_path / "tasks.db"))
    runner = CliRunner()
    added = runner.invoke(cli, ["tasks", "add", "later", "--every", "1d", "--action", "conflicts"])
    assert added.exit_code == 0, added.output
    args = ["--db", str(tmp_path / "m.db"), "--embedder", "none", "tasks", "run", "--once"]
    once = runner.invoke(cli, args)
    assert once.exit_code == 0, once.output
    assert "0 run(s) finished; nothing else is due" in once.output


def test_active_hours_on_a_plain_task_are_refused(tmp_path, clock):
    s = scheduler(tmp_path, clock)
    with pytest.raises(InvalidInput, match="heartbeats only"):
        s.add("x", "every 1h", "prompt", active_hours="08:00-22:00")
    assert s.jobs() == []
    beat = s.add("y", "every 1h", "check in", kind="heartbeat", active_hours="08:00-22:00")
    assert beat.active_hours == "08:00-22:00"


def test_tasks_list_shows_the_retry_while_backing_off(tmp_path, clock, monkeypatch):
    def fails(job):
        raise RuntimeError("model down")

    s = scheduler(tmp_path, clock, fails)
    s.add("check-in", "every 1h", "Hi", kind="heartbeat")
    clock.advance(hours=1)
    s.tick()
    retry = s.jobs()[0][1]["retry_at"]
    monkeypatch.setenv("ANKITA_TASKS_DB", str(tmp_path / "tasks.db"))
    listed = CliRunner().invoke(cli, ["tasks", "list"])
    assert listed.exit_code == 0, listed.output
    assert f"retry {retry}" in listed.output and "last error" in listed.output
