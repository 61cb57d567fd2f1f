"""Telegram through python-telegram-bot's `Bot`: long polling (no inbound port), with the offset
kept by the channel store so an update is stored before Telegram is told to forget it.

Only the Bot API client of the library is used, not its `Application`: that one acknowledges
updates itself, before Ankita could store them.
"""

from __future__ import annotations

import asyncio
import os
import warnings
from datetime import timedelta
from typing import Any

from ankita._errors import ChannelError
from ankita.companion.channels._adapter import Adapter, LoopThread
from ankita.companion.channels._channels import Inbound
from ankita.companion.channels._outbox import MAX_LENGTH
from ankita.companion.channels._sending import (
    RESENT_NOTE,
    Attempt,
    Permanent,
    RetryAfter,
    SendResult,
    Sent,
    Transient,
)

# The library's documented opt-in to time periods as timedelta: without it, building a
# RetryAfter error itself emits a deprecation warning.
os.environ.setdefault("PTB_TIMEDELTA", "true")

POLL_S = 25  # long-poll wait on Telegram's side
BACKOFF_S = (1, 2, 5, 10, 30)
DEFAULT_API = "https://api.telegram.org"


def _seconds(value: object) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(str(value))


def retry_after_s(exc: Any) -> float:
    """`RetryAfter.retry_after` in seconds (a timedelta, or an int if PTB_TIMEDELTA is off)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _seconds(exc.retry_after)


class TelegramAdapter(Adapter):
    platform = "telegram"

    def __init__(
        self,
        *args: Any,
        api: str | None = None,
        poll_s: int = POLL_S,
        backoff_s: tuple[float, ...] = BACKOFF_S,
        conflict_wait_s: float = 30,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.backoff_s, self.conflict_wait_s = backoff_s, conflict_wait_s
        from telegram import Bot
        from telegram.request import HTTPXRequest

        base = (api or os.environ.get("ANKITA_TELEGRAM_API") or DEFAULT_API).rstrip("/")
        self.poll_s = poll_s
        # Two request pools, as the library advises: the long poll must not starve sends.
        self.bot = Bot(
            self.secrets["TOKEN"],
            base_url=f"{base}/bot",
            request=HTTPXRequest(connect_timeout=10, read_timeout=20),
            get_updates_request=HTTPXRequest(connect_timeout=10, read_timeout=poll_s + 10),
        )
        self.loop = LoopThread(f"telegram-{self.channel}")
        self.username = ""
        self.bot_id = 0
        self.stopping = False

    def connect(self, receive: bool = True) -> str:
        from telegram.error import BadRequest, NetworkError, TelegramError

        try:
            me = self.loop.call(self._initialize(), self.send_timeout_s)
        except BadRequest as exc:  # an answer, though PTB files it under NetworkError
            raise ChannelError(self.redact(f"Telegram refused the bot: {exc}")) from None
        except NetworkError as exc:  # also TimedOut: no answer is no refusal
            raise ChannelError(self.redact(f"cannot reach Telegram: {exc}")) from None
        except TelegramError as exc:
            raise ChannelError(self.redact(f"Telegram refused the bot: {exc}")) from None
        except Exception as exc:
            raise ChannelError(self.redact(f"cannot reach Telegram: {exc}")) from None
        self.username, self.bot_id = me.username or "", me.id
        self.identity = f"@{self.username}"
        if receive:
            self.loop.spawn(self._poll())
        return self.identity

    async def _initialize(self) -> Any:
        await self.bot.initialize()
        return self.bot.bot

    def disconnect(self) -> None:
        self.stopping = True
        self.loop.close()

    async def _poll(self) -> None:
        from telegram.error import Conflict, Forbidden, InvalidToken, TelegramError

        offset = int(self.start_offset) if self.start_offset else None
        failures = 0
        while not self.stopping:
            try:
                updates = await self.bot.get_updates(
                    offset=offset, timeout=self.poll_s, allowed_updates=["message"]
                )
            except asyncio.CancelledError:
                raise
            except (InvalidToken, Forbidden) as exc:
                self.report(f"stopped: Telegram refused the token ({exc})")
                return
            except Conflict:
                # Another process polls with this token, or a webhook is set: wait, not spin.
                self.report(
                    "another poller or a webhook holds this bot; retrying in "
                    f"{self.conflict_wait_s:g} s"
                )
                await asyncio.sleep(self.conflict_wait_s)
                continue
            except TelegramError as exc:
                wait = (
                    retry_after_s(exc)
                    if type(exc).__name__ == "RetryAfter"
                    else self.backoff_s[min(failures, len(self.backoff_s) - 1)]
                )
                failures += 1
                self.report(f"polling failed ({exc}); retrying in {wait:g} s")
                await asyncio.sleep(wait)
                continue
            failures = 0
            if not updates:
                continue
            next_offset = max(u.update_id for u in updates) + 1
            inbound = [m for m in (self._normalise(u) for u in updates) if m is not None]
            # Stored (with the new offset) before the next getUpdates confirms them to Telegram.
            await asyncio.to_thread(self.ingest, inbound, str(next_offset))
            offset = next_offset

    def _normalise(self, update: Any) -> Inbound | None:
        message = update.message
        if message is None or not message.text or message.from_user is None:
            return None
        if message.from_user.is_bot or message.chat.type == "channel":
            return None
        group = message.chat.type != "private"
        text = message.text
        if group:
            mention = f"@{self.username}".lower()
            replied = (
                message.reply_to_message is not None
                and message.reply_to_message.from_user is not None
                and message.reply_to_message.from_user.id == self.bot_id
            )
            if mention not in text.lower() and not replied:
                return None  # in groups the companion answers only when addressed
            text = text.replace(f"@{self.username}", "").strip() or text
        return Inbound(
            self.channel,
            str(update.update_id),
            "group" if group else "dm",
            str(message.chat.id),
            str(message.from_user.id),
            text,
        )

    def send(self, chat_id: str, text: str, attempt: Attempt | None = None) -> SendResult:
        from telegram.error import BadRequest, Forbidden, InvalidToken, TelegramError

        # Telegram has no idempotency key and no way to read back what a bot sent: a message
        # an earlier attempt may have delivered goes again, saying so (docs/channels.md).
        limit = MAX_LENGTH[self.platform]
        if attempt is not None and attempt.maybe_sent and len(RESENT_NOTE) + 1 + len(text) <= limit:
            text = f"{RESENT_NOTE}\n{text}"
        try:
            message = self.loop.call(
                self.bot.send_message(chat_id=chat_id, text=text), self.send_timeout_s
            )
        except (BadRequest, Forbidden, InvalidToken) as exc:
            return Permanent(self.redact(f"{type(exc).__name__}: {exc}"))
        except TelegramError as exc:
            if type(exc).__name__ == "RetryAfter":
                return RetryAfter(retry_after_s(exc))
            timed_out = type(exc).__name__ == "TimedOut"  # the request may have arrived
            return Transient(self.redact(f"{type(exc).__name__}: {exc}"), maybe_sent=timed_out)
        except TimeoutError:
            return Transient("Telegram did not answer in time", maybe_sent=True)
        return Sent(str(message.message_id))

    def typing(self, chat_id: str) -> None:
        try:
            self.loop.call(self.bot.send_chat_action(chat_id=chat_id, action="typing"), 10)
        except Exception as exc:  # typing is a courtesy; the reply still goes out
            self.report(f"typing indicator failed: {exc}")
