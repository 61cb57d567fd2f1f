"""Ankita: local-first memory for AI companions.

A new fact is compared with what is stored before it is written: near-identical facts merge,
related facts that disagree are kept side by side and flagged, and nothing is deleted or
rewritten automatically.
"""

from ._config import Settings
from ._decision import Comparison
from ._disagree import Finding
from ._embedders import Embedder, register
from ._errors import (
    AnkitaError,
    ChannelError,
    ConfigError,
    InvalidInput,
    ModelError,
    NotFound,
    StoreError,
    UndoError,
)
from ._memory import Memory
from ._models import NOTICE, Conflict, Event, Fact, Recall, RecalledFact, WriteResult

__version__ = "0.1.0"

__all__ = [
    "NOTICE",
    "AnkitaError",
    "ChannelError",
    "Comparison",
    "ConfigError",
    "Conflict",
    "Embedder",
    "Event",
    "Fact",
    "Finding",
    "InvalidInput",
    "Memory",
    "ModelError",
    "NotFound",
    "Recall",
    "RecalledFact",
    "Settings",
    "StoreError",
    "UndoError",
    "WriteResult",
    "register",
]
