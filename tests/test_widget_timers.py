"""The one timer thread behind StreamProtocol's default scheduler: due order, cancel, a failing call.

Each test waits on an event for the call it expects (never on time) and checks which calls ran, in
which order; the delays only decide that order.
"""

from __future__ import annotations

import threading

import pytest

from agentctx_widgets.widget.stream import thread_timer
from agentctx_widgets.widget.timers import TimerThread

WAIT = 300.0  # seconds a test waits for an expected call before failing (it normally takes milliseconds)


def recorder(calls: list[str], name: str, done: threading.Event | None = None):
    def call() -> None:
        calls.append(name)
        if done is not None:
            done.set()
    return call


def test_calls_run_in_due_order_not_in_scheduling_order():
    timers = TimerThread()
    calls: list[str] = []
    done = threading.Event()
    timers.schedule(0.2, recorder(calls, "late", done))
    timers.schedule(0.0, recorder(calls, "now"))
    timers.schedule(0.05, recorder(calls, "soon"))
    assert done.wait(WAIT)
    assert calls == ["now", "soon", "late"]


def test_a_cancelled_call_is_never_made():
    timers = TimerThread()
    calls: list[str] = []
    done = threading.Event()
    cancelled = timers.schedule(0.05, recorder(calls, "cancelled"))
    timers.schedule(0.1, recorder(calls, "after", done))
    cancelled.cancel()
    assert done.wait(WAIT)
    assert calls == ["after"]


def test_a_call_that_raises_is_reported_and_later_calls_still_run():
    timers = TimerThread()
    calls: list[str] = []
    done = threading.Event()

    def boom() -> None:
        calls.append("boom")
        raise RuntimeError("broken")

    with pytest.warns(RuntimeWarning, match="broken"):
        timers.schedule(0.0, boom)
        timers.schedule(0.05, recorder(calls, "next", done))
        assert done.wait(WAIT)
    assert calls == ["boom", "next"]


def test_the_default_scheduler_uses_one_thread_for_every_timer():
    calls: list[str] = []
    done = threading.Event()
    names: set[str] = set()

    def named(name: str, event: threading.Event | None = None):
        def call() -> None:
            names.add(threading.current_thread().name)
            recorder(calls, name, event)()
        return call

    before = threading.active_count()
    for index in range(20):
        thread_timer(0.01, named(str(index)))
    thread_timer(0.05, named("last", done))
    assert threading.active_count() <= before + 1  # at most the timer thread itself, started once
    assert done.wait(WAIT)
    assert calls == [str(index) for index in range(20)] + ["last"]
    assert names == {"agentctx-widgets-timers"}
