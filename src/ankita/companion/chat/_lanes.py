"""Lanes: named work queues with their own worker limit and a watchdog.

A chat session, background work (and later the scheduler and the voice process) each run in a
lane. A job that overruns its deadline is given up: its caller gets a TimeoutError, its worker
slot is replaced, and the lane goes on with the next job. One stuck call (a hung model) can
therefore never freeze the other lanes, nor its own lane for longer than the deadline.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

DEFAULT_DEADLINE_S = 180.0


@dataclass
class _Job:
    fn: Callable[[], Any]
    future: Future[Any]
    deadline_s: float


class Lane:
    def __init__(self, name: str, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError("a lane needs at least one worker")
        self.name, self.workers = name, workers
        self.jobs: queue.Queue[_Job | None] = queue.Queue()
        self.abandoned = 0  # workers given up on by the watchdog (still running, ignored)
        self._closed = False
        for _ in range(workers):
            self._spawn()

    def _spawn(self) -> None:
        threading.Thread(target=self._work, name=f"lane-{self.name}", daemon=True).start()

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            if not job.future.set_running_or_notify_cancel():
                continue
            done = threading.Event()
            result: dict[str, Any] = {}

            def run(
                job: _Job = job, result: dict[str, Any] = result, done: threading.Event = done
            ) -> None:
                try:
                    result["value"] = job.fn()
                except BaseException as exc:  # handed to the caller, never lost
                    result["error"] = exc
                done.set()

            runner = threading.Thread(target=run, name=f"job-{self.name}", daemon=True)
            runner.start()
            if not done.wait(job.deadline_s):
                # The watchdog: the caller is told now; the stuck thread is left behind.
                self.abandoned += 1
                job.future.set_exception(
                    TimeoutError(
                        f"lane {self.name}: a job ran past its {job.deadline_s:g} s deadline"
                    )
                )
                continue
            if "error" in result:
                job.future.set_exception(result["error"])
            else:
                job.future.set_result(result.get("value"))

    def submit(self, fn: Callable[[], Any], deadline_s: float = DEFAULT_DEADLINE_S) -> Future[Any]:
        if self._closed:
            raise RuntimeError(f"lane {self.name} is closed")
        future: Future[Any] = Future()
        self.jobs.put(_Job(fn, future, deadline_s))
        return future

    def close(self) -> None:
        self._closed = True
        for _ in range(self.workers):
            self.jobs.put(None)


class Lanes:
    """Lanes by name, made on first use: `session:<name>` serialises one chat, `background`
    takes memory flushes and summaries."""

    def __init__(self, limits: dict[str, int] | None = None) -> None:
        self.limits = limits or {}
        self._lanes: dict[str, Lane] = {}
        self._guard = threading.Lock()

    def lane(self, name: str) -> Lane:
        with self._guard:
            if name not in self._lanes:
                prefix = name.split(":", 1)[0]
                self._lanes[name] = Lane(name, self.limits.get(name, self.limits.get(prefix, 1)))
            return self._lanes[name]

    def run(self, name: str, fn: Callable[[], Any], deadline_s: float = DEFAULT_DEADLINE_S) -> Any:
        """Run `fn` in the lane and wait for it (a little past its deadline at most)."""
        return self.lane(name).submit(fn, deadline_s).result(timeout=deadline_s + 5)

    def close(self) -> None:
        for lane in self._lanes.values():
            lane.close()
