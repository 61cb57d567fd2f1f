"""The relay: runs every configured channel's adapter, answers what they receive through the
access policy and the companion, and drains the outbox on a timer.

Three kinds of thread, each with its own connection to the channel store: the adapters' (they
store what they receive), one handler (policy, then the companion, then the reply is queued and
the update marked handled in one transaction) and one drainer (sends what is due, every second
and whenever a reply is queued). One relay per channel store: a lock file keeps a second one out,
because two pollers of one Telegram bot make each other fail.
"""

from __future__ import annotations

import fcntl
import importlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ankita._errors import AnkitaError, ConfigError, InvalidInput, ModelError
from ankita._files import private_file
from ankita.companion.channels._adapter import Adapter, Ingest, Report, load_secrets
from ankita.companion.channels._channels import Channels, Inbound
from ankita.companion.channels._sending import Attempt, Permanent, SendResult, Sent, describe

# (message, its channel's configuration) -> the reply, or None to stay silent.
Respond = Callable[[Inbound, dict[str, Any]], "str | None"]
AdapterFactory = Callable[[dict[str, Any], Ingest, Report, "str | None"], Adapter]

ADAPTERS = {
    "telegram": ("._telegram", "TelegramAdapter"),
    "slack": ("._slack", "SlackAdapter"),
    "discord": ("._discord", "DiscordAdapter"),
}
SORRY = "Sorry, I can't answer right now: my model is not reachable. Please try again later."
UNREAD = "Sorry, I could not read that message; please say it another way."
# A message of control characters alone (escape sequences, NULs) leaves nothing to answer.
NOTHING_TO_READ = "That message held only control characters, so there was nothing to read."


def open_adapter(
    config: dict[str, Any], ingest: Ingest, report: Report, offset: str | None, **options: Any
) -> Adapter:
    """The adapter for a configured channel, with its secrets from the environment or file."""
    secrets = load_secrets(config["name"], config["platform"])
    # Imported on use: each platform's library is an optional extra.
    module, name = ADAPTERS[config["platform"]]
    try:
        cls: type[Adapter] = getattr(importlib.import_module(module, __package__), name)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"the {config['platform']} channel needs its library ({exc.name}): "
            "pip install 'ankita[channels]'"
        ) from None
    return cls(config["name"], secrets, ingest, report=report, offset=offset, **options)


class Relay:
    def __init__(
        self,
        path: str | Path,
        respond: Respond,
        make_adapter: AdapterFactory = open_adapter,
        report: Report | None = None,
        drain_every_s: float = 1.0,
        only: list[str] | None = None,
    ) -> None:
        self.path = str(path)
        self.respond = respond
        self.make_adapter = make_adapter
        self.report = report if report is not None else (lambda line: None)
        self.drain_every_s = drain_every_s
        self.only = only
        self.adapters: dict[str, Adapter] = {}
        self.stopping = threading.Event()
        self.work = threading.Event()
        self.outgoing = threading.Event()
        self.threads: list[threading.Thread] = []
        self._ingress = Channels(self.path)
        self._ingress_lock = threading.Lock()
        self._lock_file: Any = None

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> dict[str, str]:
        """Connect every channel (or the named ones): their identities on the platforms."""
        self._lock_file = open(private_file(self.path + ".lock"), "w")  # noqa: SIM115 - held
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            raise InvalidInput(
                "another `ankita channels run` is using this channel store"
            ) from None
        identities = {}
        try:
            released = self._ingress.release_claims()
            if released:
                self.report(f"outbox: {released} message(s) interrupted by a crash will be sent")
            configs = self._ingress.configured()
            if self.only:
                unknown = set(self.only) - {c["name"] for c in configs}
                if unknown:
                    raise InvalidInput(f"no channel named {', '.join(sorted(unknown))}")
                configs = [c for c in configs if c["name"] in self.only]
            for config in configs:
                adapter = self.make_adapter(
                    config,
                    self._ingest_for(config["name"]),
                    self.report,
                    self._ingress.offset(config["name"]),
                )
                self.adapters[config["name"]] = adapter
                identities[config["name"]] = adapter.connect(receive=True)
        except BaseException:
            self.stop()
            raise
        for target, name in (
            (self._handle_loop, "relay-handler"),
            (self._drain_loop, "relay-drainer"),
        ):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self.threads.append(thread)
        self.work.set()  # updates stored before a restart are answered now
        return identities

    def stop(self) -> None:
        self.stopping.set()
        self.work.set()
        self.outgoing.set()
        for thread in self.threads:
            thread.join(30)
        for adapter in self.adapters.values():
            adapter.disconnect()
        self._ingress.close()
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def __enter__(self) -> Relay:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- receiving ------------------------------------------------------------------------

    def _ingest_for(self, channel: str) -> Ingest:
        def ingest(updates: list[Inbound], next_offset: str | None) -> None:
            with self._ingress_lock:  # one connection shared by the adapters' threads
                new = self._ingress.receive(channel, updates, next_offset)
            if new:
                self.work.set()

        return ingest

    def _handle_loop(self) -> None:
        store = Channels(self.path)
        try:
            while not self.stopping.is_set():
                self.work.wait(1.0)
                self.work.clear()
                for ingress_id, message in store.pending():
                    if self.stopping.is_set():
                        break
                    self._handle(store, ingress_id, message)
        finally:
            store.close()

    def _handle(self, store: Channels, ingress_id: int, message: Inbound) -> None:
        config = store.channel(message.channel)
        decision = store.check(message)
        if decision.verdict == "deny" or config is None:
            self.report(f"{message.channel}: ignored {message.sender} ({decision.reason})")
            store.handled(ingress_id)
            return
        if decision.verdict == "pair":
            self.report(f"{message.channel}: {message.sender} asked to pair")
            reply: str | None = decision.reply
        else:
            adapter = self.adapters.get(message.channel)
            if adapter is not None:
                adapter.typing(message.chat_id)
            try:
                reply = self.respond(message, config)
            except ModelError as exc:
                self.report(f"{message.channel}: the model failed: {exc}")
                reply = SORRY
            except AnkitaError as exc:
                # A word to the user: that one message failed, the chat goes on.
                self.report(f"{message.channel}: could not answer {message.sender}: {exc}")
                reply = UNREAD
        store.handled(ingress_id, (message.channel, message.chat_id, reply) if reply else None)
        if reply:
            self.outgoing.set()

    # -- sending --------------------------------------------------------------------------

    def _drain_loop(self) -> None:
        store = Channels(self.path)
        try:
            while not self.stopping.is_set():
                try:
                    store.drain(self._send, self._platform_of)
                except AnkitaError as exc:
                    self.report(f"outbox: {exc}")
                self.outgoing.wait(self.drain_every_s)
                self.outgoing.clear()
        finally:
            store.close()

    def _platform_of(self, channel: str) -> str:
        adapter = self.adapters.get(channel)
        return adapter.platform if adapter else "telegram"

    def _send(self, channel: str, chat_id: str, text: str, attempt: Attempt) -> SendResult:
        adapter = self.adapters.get(channel)
        if adapter is None:
            return Permanent(f"channel {channel} is not configured or not running")
        result = adapter.send(chat_id, text, attempt)
        if not isinstance(result, Sent):
            self.report(f"{channel}: sending to {chat_id}: {describe(result)}")
        return result


class CompanionResponder:
    """Answers each conversation as the companion, in a transcript session of its own
    (platform.channel.chat_type.chat_id) and with the memory of the channel's user."""

    def __init__(
        self, open_memory: Callable[[str], Any], model: Any, persona_path: Path, chat_db: Path
    ) -> None:
        from ankita.companion.chat._lanes import Lanes

        self.open_memory = open_memory
        self.model = model
        self.persona_path = persona_path
        self.chat_db = chat_db
        self.memories: dict[str, Any] = {}
        self.lanes = Lanes()
        self._transcripts: Any = None

    def __call__(self, message: Inbound, config: dict[str, Any]) -> str | None:
        from ankita.companion.chat._input import clean_message
        from ankita.companion.chat._runtime import Companion
        from ankita.companion.chat._transcripts import Transcripts
        from ankita.companion.persona._persona import load_persona

        if message.text.strip() and not clean_message(message.text).strip():
            return NOTHING_TO_READ  # every message is answered or told why
        user = config["user"]
        memory = self.memories.get(user) or self.memories.setdefault(user, self.open_memory(user))
        if self._transcripts is None:
            self._transcripts = Transcripts(self.chat_db)
        companion = Companion(
            memory,
            self.model,
            load_persona(self.persona_path),
            self._transcripts,
            session=message.session_key(config["platform"]),
            lanes=self.lanes,
        )
        turn = companion.send(message.text)
        return turn.text if turn.kind == "normal" and turn.text else None

    def close(self) -> None:
        self.lanes.close()
        for memory in self.memories.values():
            memory.close()
        if self._transcripts is not None:
            self._transcripts.close()
