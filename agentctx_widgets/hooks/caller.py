"""Run a turn on a worker thread while the calling thread runs the user's Python code and takes Ctrl-C.

Why: a Jupyter cell already runs inside an event loop, so ``run_turn`` drives its own loop on a worker
thread. Signals (the kernel's stop button sends SIGINT) reach only the main thread, and Python can
interrupt only code running there. So the calling thread does not just wait: it serves the turn's
*user code* — Python hooks and tools — which therefore runs where a cell's code always runs (a
``time.sleep`` in a tool is interrupted at once), and on ``KeyboardInterrupt`` it stops the turn: the
worker's task is cancelled (an async model stream is closed at its next await, so the provider stops
generating), a JavaScript hook is woken from ``time.Sleep``, and ``KeyboardInterrupt`` is raised
again in the cell once the turn has put the context back (bounded by :data:`STOP_GRACE`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from ..models.clients import open_pool

STOP_GRACE = 2.0
"""Seconds the calling thread waits for an interrupted turn to clean up before raising anyway."""

_CURRENT: contextvars.ContextVar[CallerThread | None] = contextvars.ContextVar("agentctx_caller", default=None)
_STOP = object()


async def call_user_code(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a hook or tool: on the calling thread when ``run_turn`` drives the turn, else right here.

    Coroutine functions (``async def``) always run on the turn's own loop.
    """
    if inspect.iscoroutinefunction(function):
        return await function(*args, **kwargs)
    caller = _CURRENT.get()
    result = function(*args, **kwargs) if caller is None else await caller.call(function, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


class CallerThread:
    """The calling thread's side: a queue of user-code jobs, served until the turn ends."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._refusing = False

    async def call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """(Worker loop.) Run ``function`` on the calling thread and await its result."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        if self._refusing:
            raise asyncio.CancelledError("the turn was interrupted")
        self._jobs.put((future, function, args, kwargs))
        return await asyncio.wrap_future(future)

    def serve(self) -> None:
        """(Calling thread.) Run jobs until :meth:`stop`; ``KeyboardInterrupt`` propagates to the caller."""
        while True:
            try:
                item = self._jobs.get(timeout=0.25)
            except queue.Empty:
                continue
            if item is _STOP:
                return
            future, function, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = function(*args, **kwargs)
            except KeyboardInterrupt:
                future.set_exception(asyncio.CancelledError("the turn was interrupted"))
                raise
            except BaseException as error:  # noqa: BLE001 - handed back to the turn, which reports it
                future.set_exception(error)
            else:
                future.set_result(result)

    def stop(self) -> None:
        """(Any thread.) End :meth:`serve`."""
        self._jobs.put(_STOP)

    def refuse(self) -> None:
        """After an interrupt: fail every queued and later job instead of running it."""
        self._refusing = True
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                item[0].cancel()


def run_on_worker(main: Callable[[], Coroutine[Any, Any, Any]], on_interrupt: Callable[[], None]) -> Any:
    """Run ``main()`` in a fresh event loop on a worker thread; serve user code here meanwhile.

    On ``KeyboardInterrupt`` here: ``on_interrupt()`` (wake what the task may be blocked in), cancel the
    task, wait up to :data:`STOP_GRACE` for it to finish cleaning up, then raise ``KeyboardInterrupt``.
    """
    caller = CallerThread()
    box: dict[str, Any] = {}
    started = threading.Event()

    async def entry() -> Any:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        _CURRENT.set(caller)
        async with open_pool():  # the turn's model clients, shared by its calls, closed with it
            return await main()

    def work() -> None:
        try:
            box["result"] = asyncio.run(entry())
        except BaseException as error:  # noqa: BLE001 - re-raised in the calling thread
            box["error"] = error
        finally:
            started.set()
            caller.stop()

    worker = threading.Thread(target=work, name="agentctx-run-turn", daemon=True)
    worker.start()
    try:
        caller.serve()
    except KeyboardInterrupt:
        caller.refuse()
        started.wait(STOP_GRACE)
        on_interrupt()
        loop, task = box.get("loop"), box.get("task")
        if loop is not None and task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop already closed: the turn ended on its own
                pass
        worker.join(STOP_GRACE)
        raise
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["result"]
