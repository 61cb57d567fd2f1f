"""The companion around the memory engine: a personality card, a chat runtime on a local model
with the memory tools, sessions, compaction, reply classes and lanes.

The memory core never imports this package.
"""

from ankita.companion.chat._lanes import Lane, Lanes
from ankita.companion.chat._model import (
    ChatModel,
    ModelReply,
    ModelSettings,
    OllamaChat,
    OpenAIChat,
    ToolCall,
)
from ankita.companion.chat._model import open_model as open_model
from ankita.companion.chat._replies import Classified, classify
from ankita.companion.chat._runtime import Companion, Turn
from ankita.companion.chat._transcripts import Transcripts
from ankita.companion.persona._persona import (
    Persona,
    build_system_prompt,
    load_persona,
    save_persona,
)

__all__ = [
    "ChatModel",
    "Classified",
    "Companion",
    "Lane",
    "Lanes",
    "ModelReply",
    "ModelSettings",
    "OllamaChat",
    "OpenAIChat",
    "Persona",
    "ToolCall",
    "Transcripts",
    "Turn",
    "build_system_prompt",
    "classify",
    "load_persona",
    "open_model",
    "save_persona",
]
