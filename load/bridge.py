"""One asyncio loop in its own OS thread, and a way for Locust's greenlets to wait on it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import gevent

T = TypeVar("T")
POLL_S = 0.001  # the greenlet's wake-up step; latencies are timed on the loop, not here


class Bridge:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="load-asyncio", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run coroutine on the loop; the calling greenlet yields to the others meanwhile."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        while not future.done():
            gevent.sleep(POLL_S)
        return future.result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()
