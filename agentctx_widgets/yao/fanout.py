"""``All`` / ``Any`` / ``Race``: a batch of blocking calls run at once, as Yao's goroutines run them.

Upstream (YaoApp/yao 5a3f9a6a) has four copies of the pattern; what they share is this module's
:func:`fan_out`, what differs is its arguments:

=========================================  ==========  ===============================  ==============
Yao                                        decisive    what ``Any`` / ``Race`` return   waits for rest
=========================================  ==========  ===============================  ==============
``agent/caller/orchestrator.go:31-206``    no error    one slot per request             yes (wg.Wait)
``agent/search/search.go:154-268``         has items,  one slot per request             yes (wg.Wait)
                                           no error
``agent/context/mcp.go:662-760``           no error    one slot per request             no (drained)
``agent/llm/jsapi.go:663-775``             no error    ``[success]`` / the errors /     no (drained)
                                                       ``[first]`` (:meth:`Batch.compact`)
=========================================  ==========  ===============================  ==============

A slot is the result of a call that finished before the decisive one (``Any``: the first success,
``Race``: the first to finish), or the decisive one; every other slot is ``None`` (JavaScript
``null``). Yao's collector keeps reading after the decisive result where it waits for the rest
(``orchestrator.go:126-133``), and each late goroutine's ``select`` between ``done`` and the buffered
channel picks at random (``:109-114``), so there a late slot is null or filled by chance; here it is
always ``None``, which is one of Yao's answers and the same every run. ``All`` fills every slot.

Here each call runs on a daemon thread of its own and gets its :class:`Slot`, whose ``cancel`` (a
``hooks.turn_core.StopSignal``: ``is_set()``, ``on_stop(callback)``) is set once the calling thread
stops waiting — when the batch returns (with ``wait_rest`` that is after every call finished, as Yao
lets each goroutine run to its end; without it the rest are told to stop, since nobody reads them
— Yao drains them in the background) and when the wait is stopped. The calling thread only waits, so

* what must run on it — a JavaScript hook's ``onChunk`` is served by the engine thread that made the
  bound call (``hooks/js_bridge.py``) — is passed through :meth:`Slot.here`: a call's thread queues
  the function, the calling thread runs it between waits and hands back its result (in order, one at
  a time, as Yao's handlers are called under the JavaScript isolate's lock);
* ``stopped()`` is asked between waits (every :data:`POLL` seconds): a non-empty answer (the
  request's stop, a hook's limit: ``hooks.js_bridge.bound_call_stopped``) cancels every call and
  raises :class:`FanOutStopped`; ``KeyboardInterrupt`` in the calling thread (a Python hook runs on the
  cell's thread) cancels them too and propagates. Calls still running then finish on their threads;
  their results are dropped.

An exception from a call is its slot's ``on_error(index, error)`` (Yao's ``recover()``: "agent call
panic recovered", ``"panic: …"``), whatever it raised: a call's thread always reports, so the wait ends.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field
from typing import Any, Literal

from ..hooks.turn_core import StopSignal

Mode = Literal["all", "any", "race"]
Call = Callable[["Slot"], Any]
"""One request: ``call(slot) -> result``, run on a thread of its own (:class:`Slot`)."""

POLL = 0.05
"""Seconds between two looks at ``stopped()`` while the calling thread waits."""

__all__ = ["POLL", "Batch", "FanOutStopped", "Slot", "fan_out", "has_no_error"]


class FanOutStopped(RuntimeError):
    """The wait was stopped (``stopped()`` answered ``why``); every call was told to cancel."""

    def __init__(self, why: str) -> None:
        super().__init__(f"the batch was stopped ({why}) before its calls finished")
        self.why = why


def has_no_error(result: Any) -> bool:
    """Yao's success for ``Any`` of agents, MCP tools and ``ctx.llm``: a result whose ``error`` is empty."""
    return result is not None and not (isinstance(result, dict) and result.get("error"))


@dataclass
class Batch:
    """What :func:`fan_out` gathered: ``slots`` (one per call, ``None`` where none is kept), the indexes
    in the order the calls finished (``order``, the kept ones) and the decisive index (``None`` for
    ``All`` and for an ``Any`` without a success)."""

    slots: list
    order: list[int] = field(default_factory=list)
    decisive: int | None = None

    def compact(self, mode: Mode) -> list:
        """``ctx.llm``'s shape (``agent/llm/jsapi.go:698-732, 761-774``): ``All`` every slot; ``Any`` the
        success alone, else every error in the order they came; ``Race`` the first result alone."""
        if mode == "all":
            return list(self.slots)
        if self.decisive is not None:
            return [self.slots[self.decisive]]
        return [self.slots[index] for index in self.order]


@dataclass
class Slot:
    """What one call gets: its ``index``, its ``cancel`` signal (the calling thread stopped waiting: stop
    when you can) and ``here(function, *args)``, which runs ``function`` on the calling thread."""

    index: int
    cancel: StopSignal
    here: Callable[..., Any]


class _Waiter:
    """The calling thread's side: results and trampolined functions arrive on one queue."""

    def __init__(self, count: int) -> None:
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.cancels = [StopSignal() for _ in range(count)]
        self.owner = threading.get_ident()
        self.lock = threading.Lock()
        self.closed = False

    def here(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run ``function(*args)`` on the calling thread (at once when called there) and return its result;
        once the batch is over nobody runs it there: :class:`FanOutStopped`."""
        if threading.get_ident() == self.owner:
            return function(*args)
        future: Future = Future()
        with self.lock:
            if self.closed:
                raise FanOutStopped("the batch is over")
            self.inbox.put(("here", future, function, args))
        try:
            return future.result()
        except CancelledError:
            raise FanOutStopped("the batch is over") from None

    def close(self) -> None:
        """The calling thread stops waiting: every call is cancelled, a queued or later :meth:`here` fails."""
        with self.lock:
            self.closed = True
        for cancel in self.cancels:
            cancel.set()
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return
            if item[0] == "here":
                item[1].cancel()

    def take(self, stopped: Callable[[], str | None] | None) -> tuple[int, Any]:
        """The next finished call's ``(index, result)``, running trampolined functions meanwhile."""
        while True:
            why = stopped() if stopped is not None else None
            if why:
                raise FanOutStopped(why)
            try:
                item = self.inbox.get(timeout=POLL)
            except queue.Empty:
                continue
            if item[0] == "done":
                return item[1], item[2]
            _, future, function, args = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(function(*args))
                except BaseException as error:  # noqa: BLE001 - raised in the call's thread
                    future.set_exception(error)
                    if isinstance(error, KeyboardInterrupt):
                        raise


def fan_out(calls: Sequence[Call], mode: Mode, *, succeeded: Callable[[Any], bool] = has_no_error,
            wait_rest: bool = False, stopped: Callable[[], str | None] | None = None,
            on_error: Callable[[int, BaseException], Any] | None = None) -> Batch:
    """Run ``calls`` at once and gather them as ``mode`` says (see the module docstring).

    ``succeeded(result)`` decides ``Any`` (:func:`has_no_error`; ``ctx.search`` also wants items);
    ``wait_rest`` waits for the calls after the decisive one (dropping their results), as
    ``orchestrator.go`` and ``search.go`` do; without it the batch returns at once and they finish in the
    background (``mcp.go``, ``llm/jsapi.go``), told by ``cancel``. ``on_error(index, error)`` is the slot
    of a call that raised (default: ``{"error": "<Type>: <text>"}``). ``stopped()`` is asked between
    waits; a non-empty answer raises :class:`FanOutStopped`.
    """
    if mode not in ("all", "any", "race"):
        raise ValueError(f"fan_out(mode=…): expected 'all', 'any' or 'race', got {mode!r}")
    batch = Batch([None] * len(calls))
    if not calls:
        return batch
    waiter = _Waiter(len(calls))
    try:  # a thread that cannot start leaves the ones started told to stop
        for index, call in enumerate(calls):
            _start(waiter, index, call, on_error or _error_slot)
        _gather(waiter, batch, mode, succeeded, wait_rest, stopped)
    finally:
        waiter.close()  # decided, stopped or interrupted: what still runs is not wanted
    return batch


def _start(waiter: _Waiter, index: int, call: Call, on_error: Callable[[int, BaseException], Any]) -> None:
    slot = Slot(index, waiter.cancels[index], waiter.here)

    def run() -> None:
        if slot.cancel.is_set():  # the wait ended before this call started: it does not start (orchestrator.go:99-104)
            waiter.inbox.put(("done", index, None))
            return
        try:
            result = call(slot)
        except BaseException as error:  # noqa: BLE001 - Yao's recover(): the slot carries the failure
            result = on_error(index, error)
        waiter.inbox.put(("done", index, result))

    threading.Thread(target=run, name=f"yao-fanout-{index}", daemon=True).start()


def _gather(waiter: _Waiter, batch: Batch, mode: Mode, succeeded: Callable[[Any], bool], wait_rest: bool,
            stopped: Callable[[], str | None] | None) -> None:
    remaining = len(batch.slots)
    while remaining:
        index, result = waiter.take(stopped)
        remaining -= 1
        if batch.decisive is not None:
            continue  # after the decisive result: dropped (one of Yao's answers, see the module docstring)
        batch.slots[index] = result
        batch.order.append(index)
        if mode == "race" or (mode == "any" and succeeded(result)):
            batch.decisive = index
            if not wait_rest:
                return


def _error_slot(index: int, error: BaseException) -> dict:
    return {"error": f"{type(error).__name__}: {error}"}

