"""Ankita: local-first memory for AI companions.

A new fact is compared with what is stored before it is written: near-identical facts merge,
related facts that disagree are kept side by side and flagged, and nothing is deleted or
rewritten automatically.
"""

from ankita._config import Settings
from ankita._errors import (
    AnkitaError,
    ChannelError,
    ConfigError,
    InvalidInput,
    ModelError,
    NotFound,
    StoreError,
    UndoError,
)
from ankita._memory import Memory
from ankita._models import (
    NOTICE,
    Action,
    Conflict,
    Event,
    Fact,
    Recall,
    RecalledFact,
    Status,
    WriteResult,
)
from ankita.analysis._comparison import Comparison, Decision
from ankita.analysis._cues import Finding
from ankita.embed._embedders import Embedder, register

__version__ = "0.1.0"

__all__ = [
    "NOTICE",
    "Action",
    "AnkitaError",
    "ChannelError",
    "Comparison",
    "ConfigError",
    "Conflict",
    "Decision",
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
    "Status",
    "StoreError",
    "UndoError",
    "WriteResult",
    "register",
]
