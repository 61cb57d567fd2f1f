"""The voice engines in a supervised child process, behind bounded queues with deadlines.

Speech recognition and synthesis run in their own process. A request that gets no answer within
its deadline restarts that process, as does a child that died, and the caller gets a clear
error. So a hung or crashed engine never holds up chat turns or scheduled work: those never wait
on this process, and it comes back by itself.
"""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import time
from collections.abc import Callable, Sequence
from typing import Any

from ankita._errors import AnkitaError

QUEUE_SIZE = 8


class VoiceError(AnkitaError):
    """The voice process did not answer (it is restarted), or refused a request."""

    code = "voice_error"


def serve(requests: Any, results: Any, phrases: Sequence[str], dictation: str) -> None:
    """The child: recognise WAV files and speak text to WAV files, one request at a time."""
    from ankita.companion.voice._speech import Recognizer, read_wav, speak_to_file, synthesize

    recognizer = Recognizer(phrases, dictation=dictation)
    while True:
        item = requests.get()
        if item is None:
            return
        number, op, args = item
        try:
            if op == "transcribe":
                pcm, rate = read_wav(args[0])
                results.put((number, "ok", recognizer.transcribe(pcm, rate)))
            elif op == "transcribe_timed":  # [(second it began, text)] per utterance
                pcm, rate = read_wav(args[0])
                results.put((number, "ok", recognizer.transcribe_timed(pcm, rate)))
            elif op == "recognise":  # one 16 kHz utterance from a live loop
                results.put((number, "ok", recognizer.recognise(args[0])))
            elif op == "synthesize":
                results.put((number, "ok", synthesize(args[0])))
            elif op == "speak":
                results.put((number, "ok", str(speak_to_file(args[0], args[1]))))
            elif op == "ping":
                results.put((number, "ok", "pong"))
            else:
                results.put((number, "error", f"unknown request {op!r}"))
        except Exception as exc:  # reported to the caller, the child lives on
            results.put((number, "error", f"{type(exc).__name__}: {exc}"))


class VoiceProcess:
    """Starts, calls and restarts the child."""

    def __init__(
        self,
        phrases: Sequence[str] = (),
        deadline_s: float = 30.0,
        target: Callable[..., None] = serve,
        dictation: str = "pocketsphinx",
    ) -> None:
        self.phrases, self.deadline_s, self.target = list(phrases), deadline_s, target
        self.dictation = dictation
        self.context = multiprocessing.get_context("spawn")
        self.restarts = 0
        self._numbers = itertools.count(1)
        self._start()

    def _start(self) -> None:
        self.requests = self.context.Queue(QUEUE_SIZE)
        self.results = self.context.Queue()
        self.process = self.context.Process(
            target=self.target,
            daemon=True,
            args=(self.requests, self.results, self.phrases, self.dictation),
        )
        self.process.start()

    def restart(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.restarts += 1
        self._start()

    def call(self, op: str, *args: Any, deadline_s: float | None = None) -> Any:
        if not self.process.is_alive():
            self.restart()
        number = next(self._numbers)
        try:
            self.requests.put((number, op, args), timeout=1)
        except queue.Full:
            self.restart()
            raise VoiceError("the voice process is not keeping up; it was restarted") from None
        wait = deadline_s if deadline_s is not None else self.deadline_s
        end = time.monotonic() + wait
        while True:
            try:
                got, status, value = self.results.get(timeout=0.2)
            except queue.Empty:
                if not self.process.is_alive():  # it crashed: no need to wait out the deadline
                    self.restart()
                    raise VoiceError(
                        f"the voice process died during {op}; it was restarted"
                    ) from None
                if time.monotonic() >= end:
                    self.restart()
                    raise VoiceError(
                        f"the voice process did not answer {op} within {wait:g} s; it was restarted"
                    ) from None
                continue
            if got == number:
                break  # answers to requests given up on earlier are dropped
        if status != "ok":
            raise VoiceError(str(value))
        return value

    def close(self) -> None:
        try:
            self.requests.put(None, timeout=1)
        except queue.Full:
            pass
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
