"""A QuickJS-NG context with a time limit that coexists with Python callbacks.

The ``quickjs`` binding's own ``set_time_limit`` refuses every call into Python while a limit is
set ("Can not call into Python with a time limit set"), and hook code calls ``ctx.Send`` all the
time. So we install our own QuickJS interrupt handler (``JS_SetInterruptHandler``, exported by the
binding's shared library) through ``ctypes``. It charges only the time spent *running JavaScript*:
time inside host callbacks (``time.Sleep``, ``ctx.Flush`` reaching a slow view, a helper global)
is paused. A second, wall-clock limit bounds the whole call, sleeps included.

QuickJS runtimes must stay on one thread, so each engine owns a single worker thread (with an
8 MB C stack, room for the JS stack limit) and every call runs there.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import queue
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import _quickjs
import quickjs

_THREAD_STACK = 8 * 1024 * 1024
_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_LIB: Any = None


def _lib() -> Any:
    global _LIB
    if _LIB is None:
        lib = ctypes.CDLL(_quickjs.__file__)
        lib.JS_GetRuntimeOpaque.restype = ctypes.c_void_p
        lib.JS_GetRuntimeOpaque.argtypes = [ctypes.c_void_p]
        lib.JS_SetInterruptHandler.restype = None
        lib.JS_SetInterruptHandler.argtypes = [ctypes.c_void_p, _HANDLER, ctypes.c_void_p]
        _LIB = lib
    return _LIB


class Budget:
    """Time left for one call: JavaScript time (paused during host calls) and wall time."""

    def __init__(self) -> None:
        self.armed = False
        self.tripped: str | None = None  # "time" or "wall" once the handler interrupted
        self._js_left = 0.0
        self._js_since = 0.0
        self._wall_deadline = 0.0
        self._in_host = 0
        self._interrupted = False

    def interrupt(self) -> None:
        """(Any thread.) Stop the running call at its next JavaScript instruction."""
        self._interrupted = True

    def arm(self, js_seconds: float, wall_seconds: float) -> None:
        now = time.monotonic()
        self._js_left, self._js_since = js_seconds, now
        self._wall_deadline = now + wall_seconds
        self._in_host, self.tripped, self.armed, self._interrupted = 0, None, True, False

    def disarm(self) -> None:
        self.armed = False

    def pause(self) -> None:
        if self._in_host == 0:
            self._js_left -= time.monotonic() - self._js_since
        self._in_host += 1

    def resume(self) -> None:
        self._in_host -= 1
        if self._in_host == 0:
            self._js_since = time.monotonic()

    def wall_left(self) -> float:
        return self._wall_deadline - time.monotonic() if self.armed else float("inf")

    def exceeded(self) -> bool:
        """Called by QuickJS every few thousand instructions: 1 stops the script."""
        if not self.armed or self._in_host:
            return False
        now = time.monotonic()
        if self._interrupted:
            self.tripped = "interrupt"
        elif now > self._wall_deadline:
            self.tripped = "wall"
        elif self._js_left - (now - self._js_since) < 0:
            self.tripped = "time"
        return self.tripped is not None


class JsEngine:
    """One QuickJS context on its own thread, with memory, stack and time limits."""

    def __init__(self, *, memory_limit: int, stack_limit: int) -> None:
        self.memory_limit = memory_limit
        self.stack_limit = stack_limit
        self.budget = Budget()
        self.context: Any = None
        self.call_fn: Any = None  # the prelude's __agentctx_call, kept here so it dies with the context
        self._handler = _HANDLER(lambda _rt, _opaque: 1 if self.budget.exceeded() else 0)
        self._executor = _EngineThread()

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        """Run ``fn(*args)`` on the engine thread."""
        return self._executor.submit(fn, *args)

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the engine thread and wait for it."""
        return self.submit(fn, *args).result()

    def new_context(self) -> Any:
        """(Engine thread.) A fresh QuickJS context with the limits and the interrupt handler."""
        context = quickjs.Context()
        context.set_memory_limit(self.memory_limit)
        context.set_max_stack_size(self.stack_limit)
        self._install_interrupt(context)
        self.context = context
        return context

    def close(self) -> None:
        """Free the QuickJS context on the engine thread (never from another), then stop it.
        Safe to call from a finalizer and more than once."""
        self._executor.close(self._release)

    def _release(self) -> None:
        self.context = None
        self.call_fn = None

    def _install_interrupt(self, context: Any) -> None:
        lib = _lib()
        # PyJsContextObject starts with PyObject_HEAD, then ``JSRuntime *runtime``; the binding
        # stores the context object as the runtime's opaque, which lets us verify the guess.
        runtime = ctypes.c_void_p.from_address(id(context) + 2 * ctypes.sizeof(ctypes.c_void_p)).value
        if not runtime or lib.JS_GetRuntimeOpaque(runtime) != id(context):
            warnings.warn(
                "agentctx_widgets: cannot install the QuickJS interrupt handler on this quickjs "
                "build; JavaScript hooks run without a time limit",
                RuntimeWarning,
                stacklevel=3,
            )
            return
        lib.JS_SetInterruptHandler(runtime, self._handler, None)


class _EngineThread:
    """A single worker thread fed by a ``SimpleQueue``.

    Not a ``ThreadPoolExecutor``: its ``submit`` takes a process-wide lock, and an engine closed
    by a garbage-collection finalizer that runs *inside* another ``submit`` would deadlock on it.
    ``SimpleQueue.put`` is safe to call from finalizers. The thread has an 8 MB C stack (QuickJS
    recursion needs room below the JS stack limit) and is a daemon, so it never blocks exit.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self.closed = False
        previous = threading.stack_size()
        try:
            threading.stack_size(_THREAD_STACK)
            self.thread = threading.Thread(target=self._loop, name="agentctx-quickjs", daemon=True)
            self.thread.start()
        finally:
            threading.stack_size(previous)

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        if self.closed:
            raise RuntimeError("this JavaScript engine is closed")
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put([future, fn, args])  # a list: the thread empties it before answering (see _run_one)
        return future

    def close(self, last: Callable[[], None]) -> None:
        """Run ``last`` on the thread after the queued work, then end the thread."""
        if not self.closed:
            self.closed = True
            self._queue.put([None, last, ()])

    def _loop(self) -> None:
        while self._run_one(self._queue.get()):
            pass  # each item is handled in its own frame so nothing of it outlives its turn

    @staticmethod
    def _run_one(item: list) -> bool:
        future, fn, args = item
        item.clear()  # drop the work's references before the caller wakes: a dropped JsHooks is freed at once
        if future is None:
            fn()
            return False
        if future.set_running_or_notify_cancel():
            try:
                result = fn(*args)
            except BaseException as error:  # noqa: BLE001 - handed to the waiting caller
                fn = args = None
                future.set_exception(error)
            else:
                fn = args = None
                future.set_result(result)
        return True
