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
import os
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from ..models.clients import LoopClients, open_pool, use_pool

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
    """Run ``main()`` in an event loop of its own thread; serve user code here meanwhile.

    The loop is one of the process's kept ones (:class:`KeptLoop`): the first no other turn holds — so the
    model clients of one turn, and their connections, serve the next — or a new kept one when turns run at
    once from several threads (a suite's cases), up to :data:`MAX_KEPT_LOOPS`; beyond that a fresh loop
    for this turn alone. On ``KeyboardInterrupt`` here: ``on_interrupt()`` (wake what
    the task may be blocked in), cancel the task, wait up to :data:`STOP_GRACE` for it to finish cleaning
    up, then raise ``KeyboardInterrupt``.
    """
    kept = _claim_kept_loop()
    lease = None if kept is None else Lease(kept)
    try:
        return _drive(main, on_interrupt, lease)
    finally:
        if lease is not None:
            lease.abandon()  # gives the loop back only if the task never started (else the task does, ending)


def _drive(main: Callable[[], Coroutine[Any, Any, Any]], on_interrupt: Callable[[], None],
           lease: Lease | None) -> Any:
    caller = CallerThread()
    box: dict[str, Any] = {}
    started = threading.Event()
    finished = threading.Event()

    async def entry() -> None:
        if lease is not None and not lease.start():
            return  # the calling thread gave up before this ran, and gave the loop back
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        _CURRENT.set(caller)
        before = asyncio.all_tasks()
        try:
            async with (use_pool(lease.kept.pool) if lease is not None else open_pool()):  # the turn's clients
                box["result"] = await main()
        except BaseException as error:  # noqa: BLE001 - re-raised in the calling thread (and a kept loop lives on)
            box["error"] = error
        finally:
            if lease is not None:
                try:
                    await _cancel_tasks_since(before)  # what asyncio.run does when a fresh loop's turn ends
                finally:
                    lease.kept.release()

    def done() -> None:
        started.set()
        finished.set()
        caller.stop()

    wait: Callable[..., Any] = finished.wait
    try:
        if lease is None:
            worker = threading.Thread(target=_run_fresh, args=(entry, box, done), name="agentctx-run-turn",
                                      daemon=True)
            worker.start()
            wait = worker.join
        else:
            asyncio.run_coroutine_threadsafe(entry(), lease.kept.loop).add_done_callback(lambda _future: done())
        caller.serve()
    except KeyboardInterrupt:
        caller.refuse()
        if lease is None or not lease.abandon():  # a task that has not started now never will
            started.wait(STOP_GRACE)
            on_interrupt()
            cancel_task(box.get("loop"), box.get("task"))
            wait(STOP_GRACE)
        raise
    wait()
    if "error" in box:
        raise box["error"]
    if "result" not in box:
        raise RuntimeError("the turn's task ended without a result")
    return box["result"]


def _run_fresh(entry: Callable[[], Coroutine[Any, Any, None]], box: dict, done: Callable[[], None]) -> None:
    """(A thread of its own.) The turn on a fresh loop, for a turn beyond the kept loops."""
    try:
        asyncio.run(entry())
    except BaseException as error:  # noqa: BLE001 - re-raised in the calling thread
        box.setdefault("error", error)
    finally:
        done()


class Lease:
    """Who gives a kept loop back: the turn's task, as it ends — not the calling thread when it stops
    waiting, for after a Ctrl-C a task may outlive :data:`STOP_GRACE`, and a next turn on the same loop
    would have its tasks cancelled by that task's end — or the calling thread, if it gives up before the
    task started (a Ctrl-C while it was being scheduled; the task, if it runs later, does nothing)."""

    def __init__(self, kept: KeptLoop) -> None:
        self.kept = kept
        self._state = "pending"
        self._lock = threading.Lock()

    def start(self) -> bool:
        """(The loop.) May the task run? False when the calling thread already gave the loop back."""
        with self._lock:
            if self._state == "abandoned":
                return False
            self._state = "running"
            return True

    def abandon(self) -> bool:
        """(The calling thread, on Ctrl-C or leaving.) Give the loop back if the task has not started (then
        it never will: True); False when it has, or the loop was given back already."""
        with self._lock:
            if self._state != "pending":
                return False
            self._state = "abandoned"
        self.kept.release()
        return True


async def _cancel_tasks_since(before: set) -> None:
    current = asyncio.current_task()
    leftover = [task for task in asyncio.all_tasks() if task not in before and task is not current]
    for task in leftover:
        task.cancel()
    if leftover:
        await asyncio.gather(*leftover, return_exceptions=True)


class KeptLoop:
    """A kept event loop for turns, on its own daemon thread, with its model clients.

    Why kept: an async SDK client belongs to its loop, so with a fresh loop per turn every turn built a
    client and opened a connection (a TLS handshake to a remote provider). Turns take it one at a time;
    what a turn leaves running is cancelled when it ends, as ``asyncio.run`` would. A forked child makes
    its own (the thread does not exist there)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pool = LoopClients()
        self.busy = False
        self.pid = os.getpid()
        self.thread = threading.Thread(target=self.loop.run_forever, name="agentctx-turn-loop", daemon=True)
        self.thread.start()

    def usable(self) -> bool:
        return self.pid == os.getpid() and self.thread.is_alive() and not self.loop.is_closed()

    def release(self) -> None:
        with _KEPT_LOCK:
            self.busy = False


_KEPT_LOCK = threading.Lock()
_kept: list[KeptLoop] = []

MAX_KEPT_LOOPS = 16
"""How many kept loops turns running at once may hold (a suite checks cases on many threads); a turn
beyond them runs on a fresh loop of its own."""


def _claim_kept_loop() -> KeptLoop | None:
    """A free kept loop, marked busy (a new one while fewer than :data:`MAX_KEPT_LOOPS` are kept), or None
    when every one is held. The first free one is taken, so a lone turn always gets the same loop and the
    model clients (and connections) of the turn before it."""
    with _KEPT_LOCK:
        _kept[:] = [kept for kept in _kept if kept.usable()]
        free = next((kept for kept in _kept if not kept.busy), None)
        if free is None and len(_kept) < MAX_KEPT_LOOPS:
            free = KeptLoop()
            _kept.append(free)
        if free is not None:
            free.busy = True
        return free


def _after_fork_in_child() -> None:
    global _KEPT_LOCK, _kept
    _KEPT_LOCK, _kept = threading.Lock(), []  # the parent's loop threads are not here; its lock may be held


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def cancel_task(loop: asyncio.AbstractEventLoop | None, task: asyncio.Task | None) -> None:
    """Cancel ``task`` on ``loop`` from another thread; nothing when either is missing or the loop already
    closed (the work ended on its own)."""
    if loop is None or task is None:
        return
    try:
        loop.call_soon_threadsafe(task.cancel)
    except RuntimeError:
        pass
