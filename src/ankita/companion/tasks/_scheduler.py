"""Scheduled tasks and heartbeats, in SQLite, on an injected clock.

Definitions (`jobs`) are kept apart from runtime state (`job_state`) and history (`runs`).

- **At most once per occurrence.** A tick advances `next_run_at` and claims the run in one
  transaction, before the job runs. A crash after that is recovered once at the next start (the
  run is tried again, marked as a retry); a second crash of the same run marks it abandoned.
- **Late runs and downtime.** A run within its grace window (half the period, 2 min to 2 h)
  fires late. Past it, the missed occurrences collapse into one catch-up run, and the skip is
  recorded with its count.
- **Results at once.** When a run ends, its status and output are written and every subscriber
  is called before `tick` returns. The inbox gets the output unless the reply was `[SILENT]`.
- **Heartbeats.** When the runtime is busy, a heartbeat retries within seconds, never a whole
  interval later. Failures back off 30 s, 1 min, 5 min, 15 min, 60 min. Outside its active
  hours it is skipped, with the reason.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

from ankita._errors import AnkitaError, InvalidInput, NotFound
from ankita.companion._localdb import immediate, open_local
from ankita.companion.chat._replies import classify
from ankita.companion.tasks._schedule import (
    Job,
    check_schedule,
    check_target,
    grace_s,
    in_active_hours,
    iso_seconds,
    next_after,
    parse_iso,
)

BACKOFF_S = (30, 60, 300, 900, 3600)
BUSY_RETRY_S = 5
LEASE_S = 300

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS jobs (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL,
        schedule TEXT NOT NULL, tz TEXT NOT NULL, prompt TEXT NOT NULL, target TEXT NOT NULL,
        active_hours TEXT, enabled INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS job_state (
        job_id TEXT PRIMARY KEY, next_run_at TEXT, retry_at TEXT,
        failures INTEGER NOT NULL DEFAULT 0, last_status TEXT, last_run_at TEXT)""",
    """CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, slot TEXT NOT NULL,
        attempt INTEGER NOT NULL DEFAULT 1, status TEXT NOT NULL, reason TEXT,
        output TEXT, started_at TEXT NOT NULL, finished_at TEXT, claim_until TEXT)""",
    "CREATE INDEX IF NOT EXISTS runs_job ON runs (job_id, id)",
    """CREATE TABLE IF NOT EXISTS inbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, job_id TEXT NOT NULL,
        text TEXT NOT NULL, at TEXT NOT NULL)""",
]


Runner = Callable[[Job], str]  # returns the reply text; raises on failure
Busy = Callable[[], bool]


# (target, run id, text): hands a result to a channel; the run id makes a retry idempotent.
Deliver = Callable[[str, int, str], None]


@dataclass(frozen=True)
class Run:
    id: int
    job_id: str
    slot: str
    attempt: int
    status: str  # running | ok | silent | error | delivery_failed | skipped | interrupted |
    #              abandoned | busy
    reason: str | None
    output: str | None
    started_at: str
    finished_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Scheduler:
    def __init__(
        self,
        path: str | Path,
        runner: Runner,
        clock: Callable[[], datetime] | None = None,
        busy: Busy | None = None,
        deliver: Deliver | None = None,
    ) -> None:
        self.path = str(path)
        self.deliver = deliver
        self.runner = runner
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self.busy = busy or (lambda: False)
        self.subscribers: list[Callable[[Run], None]] = []
        self.db = open_local(self.path, _SCHEMA, "task store")

    def close(self) -> None:
        self.db.close()

    def subscribe(self, callback: Callable[[Run], None]) -> None:
        """Called with every run the moment it is finished (or skipped)."""
        self.subscribers.append(callback)

    # -- definitions ----------------------------------------------------------------------

    def add(
        self,
        name: str,
        schedule: str,
        prompt: str,
        kind: str = "task",
        tz: str = "UTC",
        target: str = "inbox",
        active_hours: str | None = None,
    ) -> Job:
        if kind not in ("task", "heartbeat"):
            raise InvalidInput("kind must be task or heartbeat")
        if not name.strip() or not prompt.strip():
            raise InvalidInput("a job needs a name and a prompt")
        check_target(target)
        check_schedule(schedule, tz)
        if active_hours is not None and kind != "heartbeat":
            # Only a heartbeat waits for active hours: on a task they would be ignored.
            raise InvalidInput("active hours apply to heartbeats only (add --heartbeat)")
        if active_hours is not None:
            try:
                start, _, end = active_hours.partition("-")
                time.fromisoformat(start), time.fromisoformat(end)
            except ValueError:
                raise InvalidInput("active hours look like 08:00-22:00") from None
        now = self.clock()
        job = Job(
            uuid.uuid4().hex[:12],
            name.strip(),
            kind,
            schedule.strip(),
            tz,
            prompt.strip(),
            target,
            active_hours,
            True,
            iso_seconds(now),
        )
        if (first := next_after(job, now)) is None:  # a one-shot in the past would never run
            raise InvalidInput(f"{schedule!r} is in the past ({tz}): it would never run")
        with immediate(self.db):
            self.db.execute(
                "INSERT INTO jobs VALUES (?,?,?,?,?,?,?,?,1,?)",
                (
                    job.id,
                    job.name,
                    job.kind,
                    job.schedule,
                    job.tz,
                    job.prompt,
                    job.target,
                    job.active_hours,
                    iso_seconds(now),
                ),
            )
            self.db.execute(
                "INSERT INTO job_state (job_id, next_run_at) VALUES (?, ?)",
                (job.id, iso_seconds(first) if first else None),
            )
        return job

    def remove(self, job_id: str) -> None:
        with immediate(self.db):
            if self.db.execute("DELETE FROM jobs WHERE id = ?", (job_id,)).rowcount == 0:
                raise NotFound(f"no task {job_id}")
            self.db.execute("DELETE FROM job_state WHERE job_id = ?", (job_id,))

    def jobs(self) -> list[tuple[Job, dict[str, Any]]]:
        rows = self.db.execute(
            "SELECT j.id, j.name, j.kind, j.schedule, j.tz, j.prompt, j.target, "
            "j.active_hours, j.enabled, j.created_at, s.next_run_at, s.retry_at, s.failures, "
            "s.last_status, s.last_run_at FROM jobs j JOIN job_state s ON s.job_id = j.id "
            "ORDER BY j.created_at, j.id"
        )
        return [
            (
                Job(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9]),
                {
                    "next_run_at": r[10],
                    "retry_at": r[11],
                    "failures": r[12],
                    "last_status": r[13],
                    "last_run_at": r[14],
                },
            )
            for r in rows
        ]

    def job(self, job_id: str) -> Job:
        for job, _ in self.jobs():
            if job.id == job_id:
                return job
        raise NotFound(f"no task {job_id}")

    def runs(self, job_id: str | None = None, limit: int = 50) -> list[Run]:
        sql = (
            "SELECT id, job_id, slot, attempt, status, reason, output, started_at, "
            "finished_at FROM runs"
        )
        params: tuple[Any, ...] = ()
        if job_id:
            sql += " WHERE job_id = ?"
            params = (job_id,)
        rows = self.db.execute(sql + " ORDER BY id DESC LIMIT ?", (*params, limit)).fetchall()
        return [Run(*r) for r in reversed(rows)]

    def runs_after(self, after: int, limit: int = 100) -> list[Run]:
        """Runs finished (or skipped) with an id above `after`, oldest first: what a viewer
        has not seen yet."""
        rows = self.db.execute(
            "SELECT id, job_id, slot, attempt, status, reason, output, started_at, finished_at "
            "FROM runs WHERE id > ? AND status != 'running' ORDER BY id LIMIT ?",
            (after, limit),
        ).fetchall()
        return [Run(*r) for r in rows]

    def inbox(self) -> list[tuple[int, str, str, str]]:
        return [
            (r[0], r[1], r[2], r[3])
            for r in self.db.execute("SELECT id, job_id, text, at FROM inbox ORDER BY id")
        ]

    # -- running --------------------------------------------------------------------------

    def recover(self) -> list[Run]:
        """Runs claimed by a process that died: tried once more, or abandoned if already a
        retry. Call at start-up."""
        now = self.clock()
        done = []
        for run_id, job_id, slot, attempt, claim in self.db.execute(
            "SELECT id, job_id, slot, attempt, claim_until FROM runs WHERE status = 'running'"
        ).fetchall():
            if claim and parse_iso(claim) > now:
                continue  # another scheduler may still be working on it
            status = "interrupted" if attempt == 1 else "abandoned"
            self._finish(run_id, status, None, "the process stopped during this run")
            if attempt == 1:
                try:
                    job = self.job(job_id)
                except NotFound:
                    continue
                done.append(self._execute(job, slot, attempt=2))
        return done

    def tick(self) -> list[Run]:
        """Run every job that is due. Returns the runs it finished or skipped."""
        now = self.clock()
        out: list[Run] = []
        for job, state in self.jobs():
            if not job.enabled:
                continue
            due_retry = state["retry_at"] and parse_iso(state["retry_at"]) <= now
            due_slot = state["next_run_at"] and parse_iso(state["next_run_at"]) <= now
            # Backing off after failures: its slots wait for the retry, which runs as one.
            if state["failures"] and state["retry_at"]:
                due_slot = False
            if not due_retry and not due_slot:
                continue
            out += self._due(job, state, now, bool(due_slot))
        return out

    def _due(self, job: Job, state: dict[str, Any], now: datetime, slot_due: bool) -> list[Run]:
        out: list[Run] = []
        slot = parse_iso(state["next_run_at"]) if slot_due else parse_iso(state["retry_at"])
        missed = 0
        if slot_due and (now - slot).total_seconds() > grace_s(job, slot):
            # Downtime: count what was missed, run once now as the catch-up.
            cursor = slot
            while (nxt := next_after(job, cursor)) is not None and nxt <= now:
                missed += 1
                cursor = nxt
        held = state["next_run_at"] and parse_iso(state["next_run_at"]) <= now  # during a backoff
        following = (
            next_after(job, now)
            if slot_due or held
            else (parse_iso(state["next_run_at"]) if state["next_run_at"] else None)
        )
        claimed = None
        with immediate(self.db):
            # Advance and claim in one transaction, before running: a crash from here on
            # leaves a claimed run that `recover` finishes once, never a second run.
            taken = self.db.execute(
                "UPDATE job_state SET next_run_at = ?, retry_at = NULL WHERE job_id = ? "
                "AND next_run_at IS ? AND retry_at IS ?",
                (
                    iso_seconds(following) if following else None,
                    job.id,
                    state["next_run_at"],
                    state["retry_at"],
                ),
            ).rowcount
            if not taken:
                return out  # another scheduler advanced it first: this occurrence is theirs
            if missed:
                out.append(
                    self._record(
                        job,
                        slot,
                        "skipped",
                        f"missed {missed} occurrence(s) while not running; "
                        "collapsed into one catch-up run",
                    )
                )
            if job.kind == "heartbeat" and not in_active_hours(job, now):
                out.append(self._record(job, slot, "skipped", "outside active hours"))
            elif job.kind == "heartbeat" and self.busy():
                # Never dropped, never pushed a whole interval away: retried in seconds.
                retry = now + timedelta(seconds=BUSY_RETRY_S)
                self.db.execute(
                    "UPDATE job_state SET retry_at = ? WHERE job_id = ?",
                    (iso_seconds(retry), job.id),
                )
                out.append(
                    self._record(
                        job,
                        slot,
                        "busy",
                        f"a conversation turn is running; retry in {BUSY_RETRY_S} s",
                    )
                )
            else:
                claimed = self._claim(job, iso_seconds(slot), 1)
        if claimed is not None:
            out.append(self._run_claimed(job, claimed))
        return out

    def run_now(self, job_id: str) -> Run:
        job = self.job(job_id)
        return self._execute(job, iso_seconds(self.clock()))

    def _execute(self, job: Job, slot: str, attempt: int = 1) -> Run:
        with immediate(self.db):
            run_id = self._claim(job, slot, attempt)
        return self._run_claimed(job, run_id)

    def _claim(self, job: Job, slot: str, attempt: int) -> int:
        now = self.clock()
        return int(
            self.db.execute(
                "INSERT INTO runs (job_id, slot, attempt, status, started_at, claim_until) "
                "VALUES (?, ?, ?, 'running', ?, ?) RETURNING id",
                (
                    job.id,
                    slot,
                    attempt,
                    iso_seconds(now),
                    iso_seconds(now + timedelta(seconds=LEASE_S)),
                ),
            ).fetchone()[0]
        )

    def _run_claimed(self, job: Job, run_id: int) -> Run:
        try:
            reply = self.runner(job)
        except Exception as exc:  # a failed run is recorded and backed off, never lost
            return self._failed(job, run_id, f"{type(exc).__name__}: {exc}")
        verdict = classify(reply)
        if verdict.kind == "silent":
            run = self._finish(run_id, "silent", reply, "the reply was [SILENT]; nothing posted")
        else:
            try:
                self._deliver(job, run_id, verdict.text)
            except (sqlite3.Error, AnkitaError) as exc:
                return self._finish(run_id, "delivery_failed", verdict.text, str(exc))
            run = self._finish(run_id, "ok", verdict.text, None)
        self.db.execute("UPDATE job_state SET failures = 0 WHERE job_id = ?", (job.id,))
        return run

    def _failed(self, job: Job, run_id: int, reason: str) -> Run:
        row = self.db.execute("SELECT failures FROM job_state WHERE job_id = ?", (job.id,))
        failures = row.fetchone()[0] + 1
        wait = BACKOFF_S[min(failures, len(BACKOFF_S)) - 1]
        retry = self.clock() + timedelta(seconds=wait)
        self.db.execute(
            "UPDATE job_state SET failures = ?, retry_at = ? WHERE job_id = ?",
            (failures, iso_seconds(retry), job.id),
        )
        return self._finish(run_id, "error", None, f"{reason}; retry in {wait} s")

    def _deliver(self, job: Job, run_id: int, text: str) -> None:
        if job.target != "inbox":
            if self.deliver is None:
                raise InvalidInput(f"nothing delivers to {job.target} in this process")
            self.deliver(job.target, run_id, text)
            return
        self.db.execute(
            "INSERT INTO inbox (run_id, job_id, text, at) VALUES (?, ?, ?, ?)",
            (run_id, job.id, text, iso_seconds(self.clock())),
        )

    def _record(self, job: Job, slot: datetime, status: str, reason: str) -> Run:
        now = iso_seconds(self.clock())
        run_id = self.db.execute(
            "INSERT INTO runs (job_id, slot, status, reason, started_at, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            (job.id, iso_seconds(slot), status, reason, now, now),
        ).fetchone()[0]
        return self._announce(run_id)

    def _finish(self, run_id: int, status: str, output: str | None, reason: str | None) -> Run:
        now = iso_seconds(self.clock())
        self.db.execute(
            "UPDATE runs SET status = ?, output = ?, reason = ?, finished_at = ?, "
            "claim_until = NULL WHERE id = ?",
            (status, output, reason, now, run_id),
        )
        job_id = self.db.execute("SELECT job_id FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
        self.db.execute(
            "UPDATE job_state SET last_status = ?, last_run_at = ? WHERE job_id = ?",
            (status, now, job_id),
        )
        return self._announce(run_id)

    def _announce(self, run_id: int) -> Run:
        row = self.db.execute(
            "SELECT id, job_id, slot, attempt, status, reason, output, "
            "started_at, finished_at FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        run = Run(*row)
        for callback in list(self.subscribers):
            callback(run)
        return run
