"""The one clock contract of ``yao/``: where a request's times come from, injectable so tests are exact.

Yao reads two clocks: the wall clock for timestamps (``time.Now().UnixMilli()``: events, trace nodes, a
completion's ``created``, memory TTLs) and the monotonic one for durations (``time.Since``: a message's
``duration_ms``). Every part here takes a :class:`Clock` and asks it for whichever it needs, in the unit
it needs, so one fake clock serves them all.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    """``wall_ms`` for timestamps (Unix milliseconds), ``mono_ns`` for durations (monotonic nanoseconds)."""

    def wall_ms(self) -> int: ...

    def mono_ns(self) -> int: ...


class SystemClock:
    """The machine's clocks."""

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def mono_ns(self) -> int:
        return time.monotonic_ns()


SYSTEM_CLOCK = SystemClock()
