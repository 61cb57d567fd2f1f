"""The voice state machine: pure, driven by events and an injected clock.

    STANDBY --wake word--> LISTENING --speech ends--> PROCESSING --reply--> SPEAKING
       ^                                                                      |
       |                      (mic muted while speaking, plus a short tail)   v
       +---- follow-up window expires (25 s) ---- FOLLOW_UP <--- speech done -+
                                                      |
                                                      +-- speech (no wake word) --> PROCESSING

A stop word cancels speech at any point and returns to the follow-up window. In standby the
hint "Say Ankita first" is shown; speech without the wake word is ignored there. Every
transition returns the actions the caller must take (start listening, mute, speak, cancel...),
so engines and tests share one logic with no audio at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ankita._errors import InvalidInput, NotFound

STANDBY, LISTENING, PROCESSING, SPEAKING, FOLLOW_UP = (
    "standby",
    "listening",
    "processing",
    "speaking",
    "follow_up",
)
HINT = "Say Ankita first"


@dataclass(frozen=True)
class VoiceSettings:
    wake_words: tuple[str, ...] = ("ankita",)
    # Short and distinct: the offline recogniser confuses longer phrases with the wake word.
    stop_words: tuple[str, ...] = ("stop", "cancel")
    follow_up_s: float = 25.0
    mute_tail_s: float = 0.5  # the mic stays muted this long after speech, against echo
    listen_timeout_s: float = 8.0  # woken but nothing said: back to standby


@dataclass
class Voice:
    """Feed it events; it returns the actions to take, in order."""

    clock: Callable[[], float]
    settings: VoiceSettings = field(default_factory=VoiceSettings)
    state: str = STANDBY
    muted_until: float = 0.0
    deadline: float | None = None  # when the current listening or follow-up window ends
    log: list[tuple[float, str, str]] = field(default_factory=list)  # (time, event, new state)

    def hint(self) -> str | None:
        return HINT if self.state == STANDBY else None

    def start(self) -> list[tuple[str, str]]:
        """A session begins in standby: say how to wake it."""
        return [("show_hint", HINT)] if self.state == STANDBY else []

    def mic_muted(self) -> bool:
        return self.state == SPEAKING or self.clock() < self.muted_until

    def _go(self, state: str, event: str, window: float | None = None) -> None:
        self.state = state
        self.deadline = self.clock() + window if window is not None else None
        self.log.append((self.clock(), event, state))

    def _words(self, text: str) -> str:
        return " ".join(text.lower().translate(str.maketrans(",.?!", "    ")).split())

    def _has(self, text: str, phrases: tuple[str, ...]) -> str | None:
        words = f" {self._words(text)} "
        return next((p for p in phrases if f" {p} " in words), None)

    def tick(self, at: float | None = None) -> list[tuple[str, str]]:
        """Time passes: windows expire. `at` is when speech began, if someone is speaking: a
        window is judged at the start of what was said, so a long sentence begun in time counts."""
        when = self.clock() if at is None else at
        if self.deadline is not None and when >= self.deadline:
            if self.state in (LISTENING, FOLLOW_UP):
                self._go(STANDBY, "window expired")
                return [("show_hint", HINT)]
        return []

    def _only_stop(self, words: str) -> bool:
        return words in self.settings.stop_words

    def heard(self, text: str, started: float | None = None) -> list[tuple[str, str]]:
        """A transcript from the speech engine (or injected); `started` is when it was begun."""
        actions = self.tick(started)
        if self.mic_muted():
            # Our own voice through the speakers: only a stop word gets through.
            if self._has(text, self.settings.stop_words) and self.state == SPEAKING:
                return actions + self.stop()
            return actions + [("ignored", "microphone muted")]
        stop = self._has(text, self.settings.stop_words)
        if stop and self.state in (PROCESSING, SPEAKING):
            return actions + self.stop()
        if self.state == STANDBY:
            wake = self._has(text, self.settings.wake_words)
            if wake is None:
                # Once: the window that just expired (in `tick`) has shown it already.
                hint = [] if ("show_hint", HINT) in actions else [("show_hint", HINT)]
                return actions + [("ignored", "no wake word"), *hint]
            rest = self._words(text).split(wake, 1)[1].strip()
            if self._only_stop(rest):
                rest = ""  # "ankita, stop" with nothing to stop: a stop word is never a question
            if not rest:
                self._go(LISTENING, "wake word", self.settings.listen_timeout_s)
                return actions + [("listen", "")]
            self._go(PROCESSING, "wake word with a command")
            return actions + [("ask", rest)]
        if self.state in (LISTENING, FOLLOW_UP):
            command = self._words(text)
            for wake in self.settings.wake_words:  # saying the name again is fine
                if command.startswith(wake + " "):
                    command = command[len(wake) + 1 :]
            if not command or command in self.settings.wake_words:
                return actions + [("listen", "")]
            if self._only_stop(command):
                # Nothing is being said or worked on: a stop word is never sent to the model.
                return actions + [("ignored", "nothing to stop"), ("listen", "")]
            self._go(PROCESSING, "command" if self.state == LISTENING else "follow-up")
            return actions + [("ask", command)]
        return actions + [("ignored", f"busy ({self.state})")]

    def reply(self, text: str) -> list[tuple[str, str]]:
        """The companion answered: speak it, with the microphone muted."""
        if self.state != PROCESSING:
            return [("ignored", "no question is waiting")]
        if not text:
            self._go(FOLLOW_UP, "silent reply", self.settings.follow_up_s)
            return [("listen", "")]
        self._go(SPEAKING, "reply")
        return [("mute", ""), ("speak", text)]

    def spoken(self) -> list[tuple[str, str]]:
        """Speech finished: unmute after a short tail, then the follow-up window opens."""
        if self.state != SPEAKING:
            return []
        self.muted_until = self.clock() + self.settings.mute_tail_s
        self._go(FOLLOW_UP, "speech done", self.settings.follow_up_s)
        return [("unmute_after", str(self.settings.mute_tail_s)), ("listen", "")]

    def stop(self) -> list[tuple[str, str]]:
        """A stop word: cancel what is being said or worked on, keep listening a while."""
        was = self.state
        self.muted_until = self.clock() + self.settings.mute_tail_s
        self._go(FOLLOW_UP, "stop word", self.settings.follow_up_s)
        cancel = [("cancel_speech", "")] if was == SPEAKING else [("cancel_request", "")]
        return cancel + [("unmute_after", str(self.settings.mute_tail_s)), ("listen", "")]

    def failed(self, reason: str) -> list[tuple[str, str]]:
        """The engine or the model failed: never stuck, back to standby with the hint."""
        self._go(STANDBY, f"failure: {reason}")
        return [("show_hint", HINT)]


def read_inputs(inputs: Sequence[str]) -> list[tuple[str, str | float]]:
    """A session's inputs, every one checked before any is used: ("silence", seconds) for
    `+N`, ("wav", path) for a WAV file, ("text", transcript) for anything else."""
    out: list[tuple[str, str | float]] = []
    for item in inputs:
        if item.startswith("+"):
            try:
                seconds = float(item[1:])
            except ValueError:
                seconds = math.nan
            if not math.isfinite(seconds) or seconds < 0:
                raise InvalidInput(f"{item!r}: +N takes a number of seconds, 0 or more")
            out.append(("silence", seconds))
        elif item.lower().endswith(".wav"):
            if not Path(item).is_file():
                raise NotFound(f"no WAV file {item!r}")
            out.append(("wav", item))
        else:
            out.append(("text", item))
    return out
