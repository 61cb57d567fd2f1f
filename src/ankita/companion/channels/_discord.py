"""Discord through discord.py: the gateway websocket (no inbound port) and the REST API.

No privileged intent is needed: a bot reads the text of direct messages and of guild messages
that mention it without `message_content`, and those are the only ones it answers. The gateway
has no acknowledgements; discord.py resumes a dropped session, and Discord replays what was
missed. discord.py also waits out 429s itself before it gives up.

`ANKITA_DISCORD_API` and `ANKITA_DISCORD_GATEWAY` point the library elsewhere (a proxy, or a
test server). discord.py keeps both addresses on its classes, so they apply to the whole process.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from ankita._errors import ChannelError
from ankita.companion.channels._adapter import Adapter, LoopThread
from ankita.companion.channels._channels import Inbound
from ankita.companion.channels._sending import (
    Attempt,
    Permanent,
    RetryAfter,
    SendResult,
    Sent,
    Transient,
)

READY_TIMEOUT_S = 30
MAX_LIBRARY_WAIT_S = 10.0


def _point_library(api: str | None, gateway: str | None) -> None:
    import yarl
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    if api:
        Route.BASE = api.rstrip("/")
    if gateway:
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)


class DiscordAdapter(Adapter):
    platform = "discord"

    def __init__(
        self, *args: Any, api: str | None = None, gateway: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        _point_library(
            api or os.environ.get("ANKITA_DISCORD_API"),
            gateway or os.environ.get("ANKITA_DISCORD_GATEWAY"),
        )
        self.loop = LoopThread(f"discord-{self.channel}")
        self.client: Any = None

    def connect(self, receive: bool = True) -> str:
        try:
            self.identity = self.loop.call(self._start(receive), READY_TIMEOUT_S + 10)
        except ChannelError:
            raise
        except Exception as exc:
            raise ChannelError(self.redact(f"cannot reach Discord: {exc}")) from None
        return self.identity

    async def _start(self, receive: bool) -> str:
        import discord

        # No member lists are needed, so none are fetched at start-up.
        # Short rate limits are waited out by discord.py; longer ones come back to the outbox.
        self.client = client = discord.Client(
            intents=discord.Intents.default(),
            chunk_guilds_at_startup=False,
            max_ratelimit_timeout=MAX_LIBRARY_WAIT_S,
        )

        # Each message is stored in its own worker thread; the lock (its waiters queue in
        # arrival order) keeps a burst in the order Discord sent it, so replies follow suit.
        in_order = asyncio.Lock()

        @client.event
        async def on_message(message: Any) -> None:
            inbound = self._normalise(message)
            if inbound is not None:
                async with in_order:
                    await asyncio.to_thread(self.ingest, [inbound], None)

        try:
            await client.login(self.secrets["TOKEN"])
            if receive:
                asyncio.get_running_loop().create_task(self._run(client))
                await asyncio.wait_for(client.wait_until_ready(), READY_TIMEOUT_S)
        except discord.LoginFailure as exc:
            await client.close()
            raise ChannelError(self.redact(f"Discord refused the bot token: {exc}")) from None
        except BaseException:
            await client.close()  # nothing half-open is left behind
            raise
        me = client.user
        if me is None:
            raise ChannelError("Discord did not say who the bot is")
        return f"{me.name} (id {me.id})"

    async def _run(self, client: Any) -> None:
        try:
            await client.connect(reconnect=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.report(f"stopped: the Discord gateway failed ({exc})")

    def _normalise(self, message: Any) -> Inbound | None:
        import discord

        me = self.client.user
        if message.author.bot or message.author.id == me.id or not message.content:
            return None
        text = message.content
        direct = isinstance(message.channel, discord.DMChannel)
        if not direct:
            if not any(user.id == me.id for user in message.mentions):
                return None  # in guilds the companion answers only when mentioned
            text = re.sub(rf"<@!?{me.id}>", " ", text).strip()
            if not text:
                return None
        return Inbound(
            self.channel,
            str(message.id),
            "dm" if direct else "group",
            str(message.channel.id),
            str(message.author.id),
            text,
        )

    def disconnect(self) -> None:
        if self.client is not None:
            try:
                self.loop.call(self.client.close(), 10)
            except Exception as exc:  # closing goes on; the loop is stopped below anyway
                self.report(f"closing: {exc}")
        self.loop.close()

    def send(self, chat_id: str, text: str, attempt: Attempt | None = None) -> SendResult:
        import aiohttp
        import discord

        if not chat_id.isdigit():
            return Permanent(f"{chat_id!r} is not a Discord channel id")
        # The outbox key as the nonce: discord.py sends it with `enforce_nonce`, so Discord
        # answers a second attempt within minutes with the first message instead of a copy.
        options = {"nonce": attempt.key} if attempt is not None else {}
        try:
            message = self.loop.call(
                self.client.get_partial_messageable(int(chat_id)).send(text, **options),
                self.send_timeout_s,
            )
        except discord.RateLimited as exc:
            return RetryAfter(exc.retry_after)
        except (discord.Forbidden, discord.NotFound) as exc:
            return Permanent(f"Discord: {exc.status} {exc.text}")
        except discord.DiscordServerError as exc:
            return Transient(f"Discord: {exc.status} {exc.text}")
        except discord.HTTPException as exc:
            if exc.status == 429:
                return Transient("Discord: still rate limited after the library's retries")
            return Permanent(f"Discord: {exc.status} {exc.text}")
        except TimeoutError:
            return Transient("Discord did not answer in time", maybe_sent=True)
        except (aiohttp.ClientError, OSError) as exc:
            return Transient(self.redact(f"cannot reach Discord: {exc}"))
        return Sent(str(message.id))

    def typing(self, chat_id: str) -> None:
        if not chat_id.isdigit():
            return
        try:
            self.loop.call(self.client.http.send_typing(int(chat_id)), 10)
        except Exception as exc:  # typing is a courtesy; the reply still goes out
            self.report(f"typing indicator failed: {exc}")
