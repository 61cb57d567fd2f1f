"""What a user's message may hold before the companion reads it: one bad character never
breaks a conversation (an arrow key in a terminal without line editing sends `ESC [ D`)."""

from __future__ import annotations

import re

# Terminal escape sequences (CSI, OSC, and two-character ones), then any other control
# character but tab and newline, then halves of a surrogate pair no encoder can write.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_message(text: str) -> str:
    """The message with escape sequences, control characters and lone surrogates removed;
    what is left is what the user meant to type."""
    return _SURROGATE.sub("", _CONTROL.sub("", _ESCAPES.sub("", text)))
