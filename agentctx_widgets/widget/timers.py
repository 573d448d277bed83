"""One daemon thread that runs every stream protocol's timers, in due order.

Why not a ``threading.Timer`` per timer: a stream arms a trailing flush timer in every 30 ms batch
window, and each ``Timer.start()`` creates a thread and blocks the caller until that thread has run
(measured here: ~0.45 ms each, more when the cores are busy) — on the thread that is streaming. Here
arming a timer is a heap push; the thread is started once. A forked child starts empty, as it would
with ``threading.Timer`` (threads do not survive a fork).
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
import warnings
from collections.abc import Callable


class ScheduledCall:
    """A call the timer thread makes once it is due, unless cancelled first."""

    __slots__ = ("fn", "cancelled")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        """Do not make the call (a no-op once it was made)."""
        self.cancelled = True


class TimerThread:
    """Runs scheduled calls on one daemon thread; a call that raises is reported as a warning and the
    thread goes on. Calls run one at a time, so a slow one delays the others (ours only take a lock
    and send one message)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._order = itertools.count()  # ties keep the order they were scheduled in
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._wake = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, ScheduledCall]] = []
        self._thread: threading.Thread | None = None

    def schedule(self, delay: float, fn: Callable[[], None]) -> ScheduledCall:
        """Call ``fn`` on the timer thread once ``delay`` seconds have passed."""
        call = ScheduledCall(fn)
        entry = (self._clock() + delay, next(self._order), call)
        with self._wake:
            heapq.heappush(self._heap, entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="agentctx-widgets-timers", daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:  # due before whatever the thread waits for
                self._wake.notify()
        return call

    def _next_due(self) -> ScheduledCall:
        with self._wake:
            while True:
                if not self._heap:
                    self._wake.wait()
                    continue
                wait = self._heap[0][0] - self._clock()
                if wait <= 0:
                    return heapq.heappop(self._heap)[2]
                self._wake.wait(wait)

    def _run(self) -> None:
        while True:
            call = self._next_due()
            if call.cancelled:
                continue
            try:
                call.fn()
            except Exception as error:  # noqa: BLE001 - one failed call must not stop every view's timers
                warnings.warn(f"agentctx-widgets timer call {call.fn!r} failed: {error!r}", RuntimeWarning,
                              stacklevel=1)


SHARED = TimerThread()
"""The process's one timer thread (``stream.thread_timer`` schedules on it)."""
