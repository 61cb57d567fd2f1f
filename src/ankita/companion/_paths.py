"""Where the companion keeps its files: beside the memory store unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

from ankita._config import default_db_path


def data_dir() -> Path:
    return default_db_path().parent


def persona_path() -> Path:
    return Path(os.environ.get("ANKITA_PERSONA") or data_dir() / "persona.json")


def chat_db_path() -> Path:
    return Path(os.environ.get("ANKITA_CHAT_DB") or data_dir() / "chat.db")


def tasks_db_path() -> Path:
    return Path(os.environ.get("ANKITA_TASKS_DB") or data_dir() / "tasks.db")


def channels_db_path() -> Path:
    return Path(os.environ.get("ANKITA_CHANNELS_DB") or data_dir() / "channels.db")
