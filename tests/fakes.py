"""The suite's one fake clock and one fake scheduler: time moves only when a test moves it.

``FakeClock`` answers both clock contracts the package takes: seconds (``clock()``, the widget's
``Callable[[], float]``) and ``yao.clock.Clock`` (``wall_ms()`` / ``mono_ns()``), which everything in
``yao/`` takes (the request's events, trace, memory TTLs, ``ctx.llm``'s ``created``, the CUI's fold).

``FakeScheduler`` is a ``Schedule`` (``schedule(delay, fn)`` returns a handle with ``cancel()``;
widget/stream.py, widget/saved_output.py). Its timers run only inside ``advance(seconds)``, and they run
as a real timer thread runs them: one at a time in the order they fall due (ties in the order they were
made), each with the clock standing at its due time, including timers that a running timer makes if they
fall due before the end; then the clock stands at the end. Nothing sleeps, nothing runs on a thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

WALL_MS = 1767225600000
"""The fake wall clock at ``now`` = 0 (2026-01-01T00:00:00Z in ms), so timestamps are exact."""


class FakeClock:
    """Seconds in ``now``; ``tick`` adds that much before every reading (distinct, exact times). The wall
    clock reads ``wall_ms`` + ``now`` (``FakeClock(10.0, wall_ms=0).wall_ms()`` is 10000); the monotonic one
    ``now`` in nanoseconds."""

    def __init__(self, now: float = 0.0, *, tick: float = 0.0, wall_ms: int = WALL_MS) -> None:
        self.now = now
        self.tick = tick
        self.wall = wall_ms

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def __call__(self) -> float:
        self.now += self.tick
        return self.now

    def ms(self) -> int:
        return round(self() * 1000)

    def mono_ns(self) -> int:
        return round(self() * 1_000_000_000)

    def wall_ms(self) -> int:
        return self.wall + self.ms()


@dataclass
class Timer:
    due: float
    delay: float
    """The delay the code asked for."""
    fn: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeScheduler:
    """Timers on ``clock`` (a fresh ``FakeClock(now)`` by default) that run only in ``advance``."""

    def __init__(self, clock: FakeClock | None = None, *, now: float = 0.0) -> None:
        self.clock = clock if clock is not None else FakeClock(now)
        self._timers: list[Timer] = []  # in the order made

    @property
    def now(self) -> float:
        return self.clock.now

    def __call__(self, delay: float, fn: Callable[[], None]) -> Timer:
        timer = Timer(self.clock.now + delay, delay, fn)
        self._timers.append(timer)
        return timer

    def delays(self) -> list[float]:
        """The delays asked for by the timers still waiting, in the order they were made."""
        return [t.delay for t in self._timers if not t.cancelled]

    def advance(self, seconds: float) -> int:
        """Move the clock ``seconds`` on, running each timer that falls due on the way; returns how many ran."""
        end = self.clock.now + seconds
        ran = 0
        while due := [t for t in self._timers if not t.cancelled and t.due <= end]:
            timer = min(due, key=lambda t: t.due)  # min keeps the first made among equal due times
            self._timers.remove(timer)
            self.clock.now = max(self.clock.now, timer.due)
            timer.fn()
            ran += 1
        self.clock.now = end
        return ran
