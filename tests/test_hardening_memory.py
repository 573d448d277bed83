"""Kernel memory under a long stream: what the view keeps is about the text, not a record per delta.

Measured with tracemalloc (Python allocations only, so the numbers are the same on every machine).
The browser load test (tests/browser/test_load.py) reports the process's RSS through the real stack.
"""

from __future__ import annotations

import gc
import tracemalloc
import warnings

import pytest
from fakes import FakeScheduler

from agentctx_widgets import Output
from agentctx_widgets.widget.stream import StreamProtocol

DELTAS = 20_000
IDS = 100


def delta(i: int) -> dict:
    return {"id": f"m{i % IDS}", "type": "text", "props": {"content": "abcd "}, "delta": True,
            "delta_path": "content", "delta_action": "append"}


def starts() -> list[dict]:
    return [{"id": f"m{k}", "type": "text", "props": {"content": ""}} for k in range(IDS)]


def traced_growth(run) -> int:
    """Bytes still allocated after ``run()`` (what it keeps), over what was allocated before it."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        keep = run()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del keep
    return after - before


def quiet_protocol() -> StreamProtocol:
    header = {"name": "t", "count": 0, "tokens": 0, "window": None, "model": None}
    timers = FakeScheduler()  # never advanced: the clock stands still and no timer runs
    return StreamProtocol(lambda message: None, lambda state: None, lambda context: dict(header),
                          clock=timers.clock, schedule=timers)


def test_the_view_stream_keeps_about_the_text_not_the_deltas():
    def run():
        proto = quiet_protocol()
        for message in starts():
            proto.output(message)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for i in range(DELTAS):
                proto.output(delta(i))
        proto.settle()
        return proto

    text = 5 * DELTAS
    assert traced_growth(run) < 10 * text + 512 * 1024  # measured: ~0.3 MB for 100 KB of text


def test_an_output_stream_keeps_about_the_text_not_the_deltas():
    def run():
        out = Output(sinks=[lambda messages: None])
        for message in starts():
            out.send(message)
        for i in range(DELTAS):
            out.send(delta(i))
            out.flush()
        return out

    text = 5 * DELTAS
    assert traced_growth(run) < 10 * text + 512 * 1024
