"""The companion around the memory engine: a personality card, a chat runtime on a local model
with the memory tools, sessions, compaction, reply classes and lanes.

The memory core never imports this package.
"""

from ankita.companion._lanes import Lane, Lanes
from ankita.companion._model import (
    ChatModel,
    ModelReply,
    ModelSettings,
    OllamaChat,
    OpenAIChat,
    ToolCall,
)
from ankita.companion._model import open_model as open_model
from ankita.companion._persona import Persona, build_system_prompt, load_persona, save_persona
from ankita.companion._replies import Classified, classify
from ankita.companion._runtime import Companion, Turn
from ankita.companion._transcripts import Transcripts

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
