"""Batcher: collect items and flush them together: at `max_size` items or after `max_wait`
seconds from the first item of a batch, whichever comes first.

`await batcher.add(item)` returns the flush's result for the batch the item went into
(or raises its exception), so each caller still learns how its own item ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Batcher(Generic[T, R]):
    def __init__(
        self, flush: Callable[[list[T]], Awaitable[R]], *, max_size: int, max_wait: float
    ) -> None:
        if max_size < 1 or max_wait <= 0:
            raise ValueError("max_size must be >= 1 and max_wait > 0")
        self._flush = flush
        self._max_size = max_size
        self._max_wait = max_wait
        self._items: list[T] = []
        self._waiters: list[asyncio.Future[R]] = []
        self._timer: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        return len(self._items)

    async def add(self, item: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._items.append(item)
        self._waiters.append(future)
        if len(self._items) >= self._max_size:
            self._start_flush()
        elif self._timer is None:
            self._timer = asyncio.create_task(self._flush_later())
        return await future

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._max_wait)
        self._timer = None
        self._start_flush()

    def _start_flush(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        self._timer = None
        items, waiters = self._items, self._waiters
        self._items, self._waiters = [], []
        if items:
            task = asyncio.create_task(self._run(items, waiters))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run(self, items: list[T], waiters: list[asyncio.Future[R]]) -> None:
        try:
            result = await self._flush(items)
        except BaseException as error:
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_exception(error)
            if isinstance(error, asyncio.CancelledError):
                raise
            return
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(result)

    async def drain(self, timeout: float | None = None) -> bool:
        """Flush what is queued now and wait for every running flush; with `timeout`,
        cancel the flushes still running after that many seconds. True when every flush
        ended on its own."""
        self._start_flush()
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self._running:
            left = None if deadline is None else max(deadline - loop.time(), 0)
            _, still_running = await asyncio.wait(set(self._running), timeout=left)
            if still_running and deadline is not None and loop.time() >= deadline:
                for task in still_running:
                    task.cancel()
                await asyncio.gather(*still_running, return_exceptions=True)
                return False
        return True
