"""What every platform adapter is: the interface, where its secrets come from, how its errors are
kept free of them, and the event-loop thread the asynchronous platform libraries run in.

Secrets are read from the environment first, then from a `KEY=VALUE` file (`ANKITA_SECRETS`,
by default `secrets.env` beside the memory store) that must not be readable by group or others.
They never appear in a log line, an error or a stored row: every text that leaves an adapter goes
through `Redactor`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from ankita._errors import InvalidInput
from ankita.companion._paths import data_dir
from ankita.companion.channels._channels import Inbound
from ankita.companion.channels._sending import Attempt, SendResult

T = TypeVar("T")

# Store the updates (and move the platform's offset when it has one) before acknowledging them.
Ingest = Callable[[list[Inbound], "str | None"], None]
# A short line about the adapter's state (connected, retrying, stopped), for the operator.
Report = Callable[[str], None]

SECRET_NAMES = {
    "telegram": ("TOKEN",),
    "discord": ("TOKEN",),
    "slack": ("BOT_TOKEN", "APP_TOKEN"),
}


def secrets_path() -> Path:
    return Path(os.environ.get("ANKITA_SECRETS") or data_dir() / "secrets.env")


def secret_key(channel: str, name: str) -> str:
    """The variable that holds a channel's secret: ANKITA_<CHANNEL>_<NAME>."""
    return f"ANKITA_{channel.upper().replace('-', '_')}_{name}"


def _read_secrets_file(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise InvalidInput(f"{path} holds secrets but others can read it: run chmod 600 {path}")
    values = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise InvalidInput(f"{path}, line {number}: expected KEY=VALUE")
        values[key.strip()] = value.strip().strip('"').strip("'")
    return values


def load_secrets(channel: str, platform: str, path: Path | None = None) -> dict[str, str]:
    """A channel's secrets by name (TOKEN, or BOT_TOKEN and APP_TOKEN for Slack)."""
    from_file = _read_secrets_file(path or secrets_path())
    found, missing = {}, []
    for name in SECRET_NAMES[platform]:
        key = secret_key(channel, name)
        value = os.environ.get(key) or from_file.get(key)
        if value:
            found[name] = value
        else:
            missing.append(key)
    if missing:
        raise InvalidInput(
            f"channel {channel} ({platform}) needs {', '.join(missing)} in the "
            f"environment or in {path or secrets_path()} (mode 600)"
        )
    return found


class Redactor:
    """Removes secrets from any text an adapter reports or raises."""

    def __init__(self, secrets: dict[str, str]) -> None:
        self.values = sorted((v for v in secrets.values() if v), key=len, reverse=True)

    def __call__(self, text: object) -> str:
        out = str(text)
        for value in self.values:
            out = out.replace(value, "[secret]")
        return out


# The loggers of the libraries the adapters use. httpx, for one, logs every request URL at
# INFO, and Telegram puts the token in the URL.
LIBRARY_LOGGERS = (
    "httpx",
    "httpcore",
    "telegram",
    "slack_sdk",
    "slack_bolt",
    "discord",
    "aiohttp",
    "websockets",
)


_REDACTORS: list[Redactor] = []
_factory_installed = threading.Lock()


def redact_library_logs(redact: Redactor) -> None:
    """Keep secrets out of the libraries' log records, whatever logging is configured: records
    of those loggers (and their children, which a logger filter would miss) are cleaned as they
    are made."""
    with _factory_installed:
        if not _REDACTORS:
            previous = logging.getLogRecordFactory()

            def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
                record = previous(*args, **kwargs)
                if record.name.split(".")[0] in LIBRARY_LOGGERS:
                    try:
                        text = record.getMessage()
                    except Exception:  # a malformed record is the library's to report
                        return record
                    clean = text
                    for redactor in list(_REDACTORS):
                        clean = redactor(clean)
                    if clean != text:
                        record.msg, record.args = clean, ()
                return record

            logging.setLogRecordFactory(factory)
        if all(r.values != redact.values for r in _REDACTORS):
            _REDACTORS.append(redact)


class LoopThread:
    """An asyncio loop in a daemon thread: the platform libraries are asynchronous, the relay
    is not, so calls cross over with `call` and wait for their result."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self.loop.is_running():
            try:
                self.call(cancel_all(), 10)
            except Exception:  # noqa: S110 - closing must finish whatever a task did
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
        if not self.loop.is_running():
            self.loop.close()


class Adapter(ABC):
    """One platform connection. `connect` checks the credentials and starts receiving;
    received messages go to `ingest` already normalised, and only those meant for the companion
    (direct messages, and group messages that mention it)."""

    platform: str

    def __init__(
        self,
        channel: str,
        secrets: dict[str, str],
        ingest: Ingest,
        report: Report | None = None,
        offset: str | None = None,
        send_timeout_s: float = 30.0,
    ) -> None:
        self.channel = channel
        self.secrets = secrets
        self.redact = Redactor(secrets)
        redact_library_logs(self.redact)
        self.ingest = ingest
        self._report = report if report is not None else (lambda line: None)
        self.start_offset = offset
        self.send_timeout_s = send_timeout_s
        self.identity: str | None = None

    def report(self, line: str) -> None:
        self._report(f"{self.channel}: {self.redact(line)}")

    @abstractmethod
    def connect(self, receive: bool = True) -> str:
        """Check the credentials (and start receiving): the bot's name on the platform."""

    @abstractmethod
    def disconnect(self) -> None: ...

    @abstractmethod
    def send(self, chat_id: str, text: str, attempt: Attempt | None = None) -> SendResult:
        """Send one message; `attempt` (from the outbox) is its key and whether an earlier
        attempt may have reached the platform."""

    def typing(self, chat_id: str) -> None:  # noqa: B027 - most platforms have one, not all
        """Show that a reply is being written, where the platform can (best effort)."""
        return None
