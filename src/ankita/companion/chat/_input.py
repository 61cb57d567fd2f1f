"""What a user's message may hold before the companion reads it: one bad character never
breaks a conversation (an arrow key in a terminal without line editing sends `ESC [ D`)."""

from __future__ import annotations

import re

from ankita._validate import SURROGATE, TERMINAL_CONTROL

# Terminal escape sequences (CSI, OSC, and two-character ones); then any other control
# character but tab and newline, and halves of a surrogate pair no encoder can write.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")


def clean_message(text: str) -> str:
    """The message with escape sequences, control characters and lone surrogates removed;
    what is left is what the user meant to type."""
    return SURROGATE.sub("", TERMINAL_CONTROL.sub("", _ESCAPES.sub("", text)))
