"""Reading a model's stream: what ``model.stream(messages)`` returned, opened and always closed.

A :class:`~agentctx_widgets.models.Model`'s ``stream`` may return a sync iterable, an async iterable,
or an awaitable of either. :func:`opened` gives the iterator to loop over and closes it on the way out
(``aclose`` / ``close``) — after an error, a ``break`` or an interrupt too — so an HTTP stream is never
left open for the garbage collector. :func:`events_of` is the same as one async iterator, for readers
that are not on a hot path (a recording, a hook's ``ctx.llm``): the turn loops themselves
(``hooks.turn_core``) loop over :func:`opened`'s iterator directly, one generator layer fewer per event.

``stop`` (any object with ``is_set()``, such as a ``threading.Event``) is a stop request from another
thread: a sync stream can only be stopped between its events, so it is checked before each one and
raises :class:`asyncio.CancelledError`, the same exception an async stream gets from a cancelled task.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

__all__ = ["Stop", "events_of", "is_async", "opened", "stopped"]


class Stop(Protocol):
    def is_set(self) -> bool: ...


def stopped() -> asyncio.CancelledError:
    """The exception a stop request ends a stream with."""
    return asyncio.CancelledError("interrupted")


def is_async(iterator: Any) -> bool:
    return hasattr(iterator, "__anext__")


@contextlib.asynccontextmanager
async def opened(stream: Any) -> AsyncIterator[Iterator[Any] | AsyncIterator[Any]]:
    """``stream`` (a model's ``stream(...)`` result) as an iterator, sync or async (:func:`is_async`),
    closed when the block ends however it ends."""
    if inspect.isawaitable(stream):
        stream = await stream
    if hasattr(stream, "__aiter__"):
        iterator: Any = stream.__aiter__()
        try:
            yield iterator
        finally:
            close = getattr(iterator, "aclose", None)
            if callable(close):
                await close()
    else:
        iterator = iter(stream)
        try:
            yield iterator
        finally:
            close = getattr(iterator, "close", None)
            if callable(close):
                close()


async def events_of(stream: Any, *, stop: Stop | None = None) -> AsyncIterator[Any]:
    """The events of ``stream``, sync or async, as one async iterator (closed with this one: use it
    under ``contextlib.aclosing``); a set ``stop`` ends it with :func:`stopped` before the next event."""
    async with opened(stream) as iterator:
        if is_async(iterator):
            async for event in iterator:
                if stop is not None and stop.is_set():
                    raise stopped()
                yield event
        else:
            for event in iterator:
                if stop is not None and stop.is_set():
                    raise stopped()
                yield event
