"""The exceptions Ankita raises.

AnkitaError                 every error this package raises on purpose
├── InvalidInput            bad text, kind, user, id or setting; nothing was changed
│   └── ConfigError         a setting or environment variable is unusable
├── NotFound                no such fact or event for this user
├── UndoError               that event cannot be undone (already undone, or state moved on)
├── EmbedderError           a provider gave no usable vectors (writes go on lexically)
├── JudgeError              the contradiction judge could not read a pair (writes go on)
├── ModelError              no chat model answered (unreachable, refused, timed out)
├── ChannelError            a messaging platform refused the bot or cannot be reached
└── StoreError              the database cannot be opened, is too new, or stays locked
"""

from __future__ import annotations


class AnkitaError(Exception):
    """Root of every error Ankita raises on purpose; `code` is stable for adapters."""

    code = "ankita_error"


class InvalidInput(AnkitaError, ValueError):
    """The input was refused; nothing was written."""

    code = "invalid_input"


class ConfigError(InvalidInput):
    """A setting or environment variable is unusable."""

    code = "invalid_config"


class NotFound(AnkitaError, LookupError):
    """No such fact or event for this user."""

    code = "not_found"


class UndoError(AnkitaError):
    """The event cannot be undone."""

    code = "undo_refused"


class EmbedderError(AnkitaError):
    """A provider could not give vectors (down, refused, timed out, or answered nonsense)."""

    code = "embedder_error"


class JudgeError(AnkitaError):
    """The contradiction judge's runtime failed on a pair; the write goes on without it."""

    code = "judge_error"


class ModelError(AnkitaError):
    """The chat model could not answer: not reachable, refused the request, or timed out."""

    code = "model_error"


class ChannelError(AnkitaError):
    """A messaging platform (Telegram, Discord, Slack) refused the credentials or cannot be
    reached."""

    code = "channel_error"


class StoreError(AnkitaError):
    """The store cannot be used (locked too long, unreadable, or from a newer version)."""

    code = "store_error"
