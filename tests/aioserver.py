"""An aiohttp application served on 127.0.0.1 from its own thread and event loop, for the fake
platforms (Slack, Discord) that need websockets as well as HTTP."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from aiohttp import web


class AioServer:
    """Serves `app` on a free port; `call` runs a coroutine on the server's loop; `stop`
    closes the given websockets, the app and the loop."""

    def __init__(self, app: web.Application) -> None:
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(app)
        started = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self.thread.start()
        started.wait(10)

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        started.set()
        self.loop.run_forever()

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 5) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self, sockets: list[web.WebSocketResponse]) -> None:
        async def close() -> None:
            for ws in sockets:
                await ws.close()
            await self.runner.cleanup()

        self.call(close(), 10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
