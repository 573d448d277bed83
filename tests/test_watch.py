"""``watch``: a view following a session file that another process writes (tests/watch_writer.py).

The writer runs in its own interpreter and answers each step once its bytes are in the file; the
watcher runs here. Every check waits for a condition (what the Context or the view holds, how many
polls the watcher has made since a step) and fails after a generous deadline; nothing is timed.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentctx_widgets.context import Context
from agentctx_widgets.context.store import SessionFileError
from agentctx_widgets.widget import ContextView
from agentctx_widgets.widget.watch import Watcher, watch

TESTS = Path(__file__).parent
DEADLINE = 300.0  # only a hang reaches it: every wait ends on a state
HEADER = {"type": "context", "id": "s", "name": "s", "version": 1}


def user(text: str) -> dict[str, Any]:
    return {"type": 2, "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"type": 3, "content": [{"type": "text", "text": text}]}


def wait_for(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {DEADLINE:g} s waiting for {what}")
        time.sleep(0.01)


def wait_polls(watcher: Watcher, count: int = 2) -> None:
    """Wait until the watcher has looked at the file ``count`` more times."""
    target = watcher.polls + count
    wait_for(lambda: watcher.polls >= target, f"{count} more polls")


class Writer:
    """The writer process: ``do(op=..., ...)`` returns once the step's bytes are in the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([sys.executable, str(TESTS / "watch_writer.py"), str(path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def do(self, **command: Any) -> None:
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], DEADLINE)
        answer = self.process.stdout.readline() if ready else ""
        assert answer == "ok\n", f"writer did not finish {command['op']!r} (exit {self.process.poll()})"

    def stop(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def session(tmp_path):
    """(path, writer, start): ``start(**kwargs)`` watches the path; everything is stopped afterwards."""
    path = tmp_path / "s.jsonl"
    writer = Writer(path)
    watchers: list[Watcher] = []

    def start(**kwargs: Any) -> Watcher:
        watcher = watch(path, interval=kwargs.pop("interval", 0.02), **kwargs)
        watchers.append(watcher)
        return watcher

    yield path, writer, start
    for watcher in watchers:
        watcher.view.close()
        watcher.close()
    writer.stop()


def shown(watcher: Watcher) -> list:
    return watcher.view.state()["context"]


def diagnostics(watcher: Watcher) -> list[tuple[str, str]]:
    return [(item["code"], item["message"]) for item in watcher.view.state()["header"]["diagnostics"] or []]


def test_appends_with_pauses_reach_the_context_and_the_view(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("q0")])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 1, "the first message")
    expected = [user("q0")] + [assistant(f"a{i}") if i % 2 else user(f"q{i}") for i in range(1, 21)]
    writer.do(op="lines", lines=expected[1:], pause=0.01)
    wait_for(lambda: len(watcher.context) == 21, "21 messages")
    assert watcher.context.messages() == expected
    assert shown(watcher) == expected
    assert watcher.view.state()["header"]["count"] == 21
    assert watcher.lines_read == 22
    assert watcher.header == HEADER
    assert watcher.errors == []


def test_a_cut_line_is_held_until_its_newline_arrives(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("first")])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 1, "the first message")
    line = json.dumps(assistant("written in two parts")) + "\n"
    writer.do(op="raw", text=line[:17])
    wait_for(lambda: watcher.partial_bytes == 17, "the watcher to hold the first 17 bytes")
    wait_polls(watcher)
    assert watcher.context.messages() == [user("first")]
    assert shown(watcher) == [user("first")]
    assert watcher.errors == []
    writer.do(op="raw", text=line[17:])
    wait_for(lambda: len(watcher.context) == 2, "the completed line")
    assert shown(watcher) == [user("first"), assistant("written in two parts")]
    assert (watcher.partial_bytes, watcher.lines_read, watcher.errors) == (0, 3, [])


def test_a_bad_line_is_reported_once_by_its_number_and_skipped(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("before")])
    writer.do(op="raw", text="{not json\n")
    writer.do(op="lines", lines=[{"type": 9, "content": "no"}, assistant("after")])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 2, "the good lines")
    writer.do(op="lines", lines=[user("later")])
    wait_for(lambda: len(watcher.context) == 3, "a later line")
    wait_polls(watcher)
    assert watcher.context.messages() == [user("before"), assistant("after"), user("later")]
    assert [(e["code"], e["where"]) for e in watcher.errors] == [
        ("watch_bad_line", f"{path}:3"), ("watch_bad_line", f"{path}:4")]
    assert watcher.errors[0]["message"] == f"{path} line 3 is not valid JSON; skipped"
    assert watcher.errors[1]["message"].startswith(f"{path} line 4 is not a message (")
    assert diagnostics(watcher) == [(e["code"], e["message"]) for e in watcher.errors]
    assert watcher.bad_lines == 2


def test_truncation_restarts_from_the_new_start_and_says_so(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER] + [user(f"old {i}") for i in range(5)])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 5, "the old messages")
    size = path.stat().st_size
    writer.do(op="rewrite", lines=[HEADER, user("new")])
    wait_for(lambda: watcher.context.messages() == [user("new")], "the new file's message")
    assert shown(watcher) == [user("new")]
    assert watcher.restarts == 1 and watcher.lines_read == 2
    new_size = path.stat().st_size
    assert diagnostics(watcher) == [(
        "watch_restarted",
        f"{path} was cut short ({new_size} bytes, {size} read): restarted from its first line (5 entries cleared)")]


def test_a_file_rewritten_past_what_was_read_restarts_too(session):
    """Cut to 0 and rewritten longer between two polls: the size alone does not show it."""
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("short")])
    watcher = start(interval=0.5)
    wait_for(lambda: len(watcher.context) == 1, "the first message")
    wait_polls(watcher, 1)
    longer = [HEADER, user("replaced " * 20), assistant("and more")]
    writer.do(op="rewrite", lines=longer)
    wait_for(lambda: watcher.context.messages() == longer[1:], "the rewritten file's messages")
    assert [code for code, _ in diagnostics(watcher)] == ["watch_restarted"]
    assert diagnostics(watcher)[0][1].startswith(f"{path} was rewritten in place: ")
    assert watcher.restarts == 1


def test_rotation_by_rename_and_a_new_file_restarts(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("one"), assistant("two")])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 2, "the first file")
    writer.do(op="rotate", lines=[HEADER, user("rotated")])
    wait_for(lambda: watcher.context.messages() == [user("rotated")], "the new file")
    writer.do(op="lines", lines=[assistant("appended to the new one")])
    wait_for(lambda: len(watcher.context) == 2, "an append to the new file")
    assert shown(watcher) == [user("rotated"), assistant("appended to the new one")]
    assert diagnostics(watcher) == [("watch_restarted", f"{path} is a new file (rotated, or removed and created "
                                                        f"again): restarted from its first line (2 entries cleared)")]


def test_delete_then_create_keeps_the_old_messages_until_the_new_file_starts_over(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("old")])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 1, "the first file")
    writer.do(op="delete")
    wait_for(lambda: [c for c, _ in diagnostics(watcher)] == ["watch_removed"], "the removal to be shown")
    wait_polls(watcher)
    assert watcher.context.messages() == [user("old")]
    writer.do(op="create", lines=[HEADER, user("again")])
    wait_for(lambda: watcher.context.messages() == [user("again")], "the re-created file")
    assert [c for c, _ in diagnostics(watcher)] == ["watch_removed", "watch_restarted"]
    assert shown(watcher) == [user("again")]


def test_a_file_that_does_not_exist_yet_is_waited_for(session):
    path, writer, start = session
    watcher = start()
    wait_polls(watcher, 3)
    assert (len(watcher.context), watcher.errors, diagnostics(watcher)) == (0, [], [])
    writer.do(op="create", lines=[HEADER, user("hello")])
    wait_for(lambda: watcher.context.messages() == [user("hello")], "the file to appear")
    assert watcher.restarts == 0 and diagnostics(watcher) == []


def test_a_context_saving_in_another_process_is_mirrored_edits_included(session):
    """The writer is a real ``Context.save()``: merges become context.replace lines, truncate a
    context.truncate line; the mirror must end equal to what ``Context.load`` reads from the file."""
    path, writer, start = session
    writer.do(op="context", id="s")
    writer.do(op="append", messages=[user("a")])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 1, "the first save")
    writer.do(op="append", messages=[assistant("b")])
    writer.do(op="append", messages=[assistant("c")])  # merges into "b": a context.replace line
    wait_for(lambda: watcher.context.messages() == [user("a"), assistant("b\n\nc")], "the merge")
    writer.do(op="truncate", length=1)
    writer.do(op="append", messages=[assistant("d")])
    wait_for(lambda: watcher.context.messages() == [user("a"), assistant("d")], "truncate, then append")
    assert watcher.context.messages() == Context.load(path).messages()
    assert shown(watcher) == [user("a"), assistant("d")]
    assert watcher.errors == [] and watcher.restarts == 0


def test_close_stops_the_thread_and_the_view_keeps_what_was_read(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("kept")])
    watcher = start()
    wait_for(lambda: len(watcher.context) == 1, "the message")
    watcher.close()
    assert watcher.alive is False
    writer.do(op="lines", lines=[user("not followed")])
    assert shown(watcher) == [user("kept")]


def test_closing_the_view_stops_the_thread(session):
    path, writer, start = session
    watcher = start()
    wait_polls(watcher, 1)
    watcher.view.close()
    wait_for(lambda: not watcher.alive, "the thread to stop")


def test_an_existing_view_is_pointed_at_the_watched_file(session):
    path, writer, start = session
    writer.do(op="lines", lines=[HEADER, user("into the given view")])
    view = ContextView(Context([user("before")]))
    watcher = start(view=view)
    assert watcher.view is view
    wait_for(lambda: view.state()["context"] == [user("into the given view")], "the given view to follow")


def test_bad_arguments_are_refused_before_anything_starts(tmp_path):
    with pytest.raises(SessionFileError, match=f"watch: {tmp_path} is a directory"):
        watch(tmp_path)
    with pytest.raises(ValueError, match="interval must be a positive number of seconds, got 0"):
        watch(tmp_path / "s.jsonl", interval=0)
    with pytest.raises(TypeError, match="view must be a ContextView, got str"):
        watch(tmp_path / "s.jsonl", view="view")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got int"):
        watch(3)


BLOCKING = """
import json, sys, threading, time
from agentctx_widgets.widget import ContextView
from agentctx_widgets.widget.watch import watch

view = ContextView()

def announce():
    while len(view.state()["context"]) < 2:
        time.sleep(0.01)
    print("watching", flush=True)

threading.Thread(target=announce, daemon=True).start()
watcher = watch(sys.argv[1], view=view, interval=0.02, block=True)
print(json.dumps({"alive": watcher.alive, "messages": watcher.context.messages(),
                  "threads": [t.name for t in threading.enumerate() if t.name.startswith("agentctx watch")]}))
"""


def test_the_blocking_form_returns_on_a_real_sigint_and_stops_its_thread(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (HEADER, user("x"), assistant("y"))))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(BLOCKING), str(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        ready, _, _ = select.select([child.stdout], [], [], DEADLINE)
        assert ready and child.stdout.readline() == "watching\n", child.stderr.read() if child.poll() else ""
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=DEADLINE)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err[-3000:]
    assert json.loads(out) == {"alive": False, "messages": [user("x"), assistant("y")], "threads": []}


def test_the_blocking_form_returns_when_the_view_is_closed(tmp_path):
    view = ContextView()

    def close_once_watching() -> None:
        wait_for(lambda: any(t.name == "agentctx watch s.jsonl" for t in threading.enumerate()), "the thread")
        view.close()

    closer = threading.Thread(target=close_once_watching, daemon=True)
    closer.start()
    watcher = watch(tmp_path / "s.jsonl", view=view, interval=0.02, block=True)
    closer.join(DEADLINE)
    assert watcher.alive is False
    assert not any(t.name == "agentctx watch s.jsonl" for t in threading.enumerate())
