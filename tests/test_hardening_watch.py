"""A watched file full of bad lines (issue 21): reported as the read goes, in bounded memory, and a
watcher that dies says so.

Before: ~10 MB of short bad lines (``x\\n``) were all gathered before any was reported (1.6-2.0 GB,
nothing shown after 30 s), and at 1 GB the watcher thread died of ``MemoryError`` with nothing saying
so (``alive=False``, ``bad_lines=0``).
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentctx_widgets.context import Context
from agentctx_widgets.context import follow
from agentctx_widgets.context.follow import SessionFollower
from agentctx_widgets.widget.watch import Watcher

pytestmark = pytest.mark.timeout(120)  # a hang fails the test, as in the other hardening tests

HANG = 100.0  # only a hang ends a wait (before the 120 s timeout, naming what never happened); no wait is a budget


def user(text: str) -> bytes:
    return orjson.dumps({"type": 2, "content": [{"type": "text", "text": text}]}) + b"\n"


def until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + HANG
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.01)


def closed(watcher: Watcher) -> None:
    """``close()`` returns once the polling thread has ended (it waits for it; nothing is left running)."""
    watcher.close()
    assert not watcher._thread.is_alive() and not watcher.alive



def test_bad_lines_past_twenty_are_counted_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(user("before") + b"x\n" * 200_000 + user("after"))
    follower = SessionFollower(path, Context())
    tracemalloc.start()
    try:
        found = follower.poll()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    listed = [item for item in found if item["code"] == "watch_bad_line"]
    [summary] = [item for item in found if item["code"] == "watch_bad_lines"]
    assert len(listed) == follow.BAD_LINES_PER_POLL
    assert listed[0]["where"] == f"{path}:2" and "line 2 is not valid JSON" in listed[0]["message"]
    assert summary["message"] == f"{path}: {200_000 - 20} more bad lines skipped (lines 22–200001)"
    assert follower.bad_lines == 200_000
    assert [m["content"][0]["text"] for m in follower.context.messages()] == ["before", "after"]  # nothing lost
    assert peak < 8 * 1024 * 1024, peak  # 200,000 diagnostics kept would be over 100 MB


def test_a_big_append_is_read_and_reported_a_slice_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow, "POLL_BYTES", 64 << 10)
    monkeypatch.setattr(follow, "READ_CHUNK", 16 << 10)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x\n" * (3 << 16) + user("the end"))  # 384 KiB: six polls' worth
    follower = SessionFollower(path, Context())
    first = follower.poll()
    assert follower.behind and follower.bad_lines == 1 << 15  # the first 64 KiB: reported before the rest is read
    assert any(item["code"] == "watch_bad_lines" for item in first)
    while follower.behind:
        follower.poll()
    assert follower.bad_lines == 3 << 16
    assert follower.context.at(0)["content"][0]["text"] == "the end"


def test_the_watcher_reads_on_at_once_while_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow, "POLL_BYTES", 64 << 10)
    monkeypatch.setattr(follow, "READ_CHUNK", 16 << 10)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x\n" * (2 << 16) + user("the end"))
    watcher = Watcher(path, interval=3600.0)  # a read that had to wait out the interval would never finish
    try:
        until(lambda: len(watcher.context) == 1, "the whole file read")
        assert watcher.bad_lines == 2 << 16 and watcher.alive
        assert len(watcher.errors) <= 4 * (follow.BAD_LINES_PER_POLL + 1)
    finally:
        closed(watcher)


def test_a_watcher_that_dies_says_so_on_the_object_and_in_the_view(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(user("hello"))
    watcher = Watcher(path, interval=0.01)
    try:
        until(lambda: len(watcher.context) == 1, "the first line read")

        def die() -> list:
            raise SystemExit("the thread was told to exit")  # not an Exception: the poll's own guard lets it through

        watcher._follower.poll = die  # type: ignore[method-assign]
        until(lambda: not watcher.alive, "the watcher stopped")
        assert watcher.error == "SystemExit: the thread was told to exit"
        assert "stopped (SystemExit: the thread was told to exit)" in repr(watcher)
        shown = watcher.view.state()["header"]["diagnostics"] or []
        assert any(item["code"] == "watch_died" for item in shown)
    finally:
        closed(watcher)
