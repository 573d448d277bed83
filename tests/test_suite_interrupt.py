"""Ctrl-C during Suite.check / Suite.record (issue 22): a real SIGINT, in a child process.

Each case records a small suite in a fresh interpreter, then checks (or records) it with hooks that block
on the cases named "slow" (a JavaScript ``time.Sleep`` of 30 s, or a Python ``time.sleep``), sends itself
SIGINT once the blocked hooks are provably running (they said so through a callable global, or the main
thread is inside the kernel's sleep), and prints what it saw as JSON. The run must stop the running cases,
start none of the queued ones, raise ``SuiteInterrupted`` (a ``KeyboardInterrupt``) whose report holds
the cases that finished, and close the hook sets it made. The times printed are hang guards only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).parent

PRELUDE = """
import json, os, signal, sys, tempfile, threading, time
from pathlib import Path
from agentctx_widgets import ScriptedModel, hooks_from_js, hooks_from_python
from agentctx_widgets.suite import Suite
from agentctx_widgets.suite.suite import SuiteInterrupted

MAIN_THREAD = threading.get_native_id()

def main_thread_sleeps():
    # as tests/test_interrupts.py: True once the main thread is inside the kernel's sleep
    task = f"/proc/self/task/{MAIN_THREAD}"
    with open(task + "/wchan") as wchan:
        where = wchan.read()
    if where not in ("", "0"):
        return "nanosleep" in where
    with open(task + "/syscall") as syscall:
        return syscall.read().split()[0] in ("230", "115")

pressed = {}

def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False

def all_gone(pids, bound=10.0):
    # closing a hook set stops its worker once its engine thread is done (asynchronously): wait for that
    ends = time.monotonic() + bound
    while any(alive(pid) for pid in pids) and time.monotonic() < ends:
        time.sleep(0.02)
    return not any(alive(pid) for pid in pids)

def interrupt_when(ready):
    def watch():
        while not ready():
            time.sleep(0.005)
        pressed["at"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=watch, daemon=True).start()

def echo(messages):
    return "You said: " + messages[-1]["content"][0]["text"]

BRIEF = 'function Create(ctx, messages) { return { messages: [{role: "system", content: "Be brief."}, ...messages] }; }'
SLOW = '''function Create(ctx, messages) {
  if (messages[messages.length - 1].content === "slow") { started(); time.Sleep(30000); }
  return { messages: [{role: "system", content: "Be brief."}, ...messages] };
}'''
CASES = [{"id": "fast-1", "turns": ["a", "b"]}, {"id": "fast-2", "turns": ["c"]},
         {"id": "slow-1", "turns": ["x", "slow"]}, {"id": "slow-2", "turns": ["slow"]},
         {"id": "queued-1", "turns": ["slow"]}, {"id": "queued-2", "turns": ["d"]},
         {"id": "queued-3", "turns": ["slow"]}]
folder = Path(tempfile.mkdtemp())
path = folder / "suite.jsonl"
Suite.record(path, CASES, model=ScriptedModel(echo), hooks=lambda: hooks_from_js(BRIEF), concurrency=1)
"""


def run_script(body: str) -> dict:
    script = PRELUDE + textwrap.dedent(body)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_ctrl_c_during_a_concurrent_check_stops_the_running_cases_and_reports_the_finished_ones():
    seen = run_script("""
        lock, calls, made = threading.Lock(), [], []
        def started():
            with lock:
                calls.append(threading.get_ident())
        def factory():
            hooks = hooks_from_js(SLOW, globals={"started": started})
            made.append(hooks)
            return hooks
        def both_sleeping():  # both pool threads are inside a slow case's 30 s sleep
            if len(calls) < 2:
                return False
            pids.update(hooks.worker_pid for hooks in made)
            return True
        pids = set()
        interrupt_when(both_sleeping)
        try:
            Suite(path).check(hooks=factory, concurrency=2)
            outcome = {"raised": None}
        except SuiteInterrupted as interrupted:
            report = interrupted.report
            outcome = {"raised": type(interrupted).__name__, "keyboard": isinstance(interrupted, KeyboardInterrupt),
                       "text": str(interrupted), "interrupted": report.interrupted, "total": report.total,
                       "cases": sorted(report.cases), "passed": report.passed, "ok": report.ok,
                       "stopped_in": time.monotonic() - pressed["at"]}
        outcome["slow_hooks_started"] = len(calls)
        pids.update(hooks.worker_pid for hooks in made)  # the replacements of the killed workers too
        pids.discard(None)
        outcome["hook_sets"], outcome["workers"], outcome["workers_gone"] = len(made), len(pids), all_gone(pids)
        after = Suite(path).check(hooks=lambda: hooks_from_js(BRIEF), concurrency=2)
        outcome["next_check"] = after.headline()
        print(json.dumps(outcome))
    """)
    assert seen["raised"] == "SuiteInterrupted" and seen["keyboard"] is True
    assert seen["stopped_in"] < 20  # a hang guard: the sleeps it stopped were 30 s
    assert seen["slow_hooks_started"] == 2  # the queued cases never started (queued-1 and -3 would sleep too)
    assert seen["interrupted"] is True and seen["ok"] is False and seen["total"] == 7
    assert seen["cases"] == ["fast-1", "fast-2"] == seen["passed"]  # the stopped slow cases are left out
    assert seen["text"].startswith("Suite.check interrupted: interrupted after 2 of 7 cases: 2 passed")
    assert seen["hook_sets"] == 2 and seen["workers"] >= 2 and seen["workers_gone"] is True
    assert seen["next_check"] == "7 cases: 7 passed"


def test_ctrl_c_during_a_check_on_the_calling_thread_stops_a_python_hook_in_its_sleep():
    seen = run_script("""
        sleeping = threading.Event()
        def create(ctx, messages):
            if messages[-1]["content"] == "slow":
                sleeping.set()
                time.sleep(30)
            return {"messages": [{"role": "system", "content": "Be brief."}, *messages]}
        interrupt_when(lambda: sleeping.is_set() and main_thread_sleeps())
        try:
            Suite(path).check(hooks=hooks_from_python({"create": create}), concurrency=1)
            outcome = {"raised": None}
        except SuiteInterrupted as interrupted:
            report = interrupted.report
            outcome = {"raised": "SuiteInterrupted", "headline": report.headline(), "passed": report.passed,
                       "stopped_in": time.monotonic() - pressed["at"]}
        print(json.dumps(outcome))
    """)
    assert seen["raised"] == "SuiteInterrupted" and seen["stopped_in"] < 20
    assert seen["passed"] == ["fast-1", "fast-2"]
    assert seen["headline"] == "interrupted after 2 of 7 cases: 2 passed"


def test_ctrl_c_during_record_writes_nothing():
    seen = run_script("""
        calls = []
        target = folder / "again.jsonl"
        interrupt_when(lambda: len(calls) == 2)
        try:
            Suite.record(target, CASES, model=ScriptedModel(echo), concurrency=2,
                         hooks=lambda: hooks_from_js(SLOW, globals={"started": lambda: calls.append(1)}))
            outcome = {"raised": None}
        except SuiteInterrupted as interrupted:
            outcome = {"raised": "SuiteInterrupted", "text": str(interrupted), "report": interrupted.report}
        outcome["written"] = target.exists()
        print(json.dumps(outcome))
    """)
    assert seen["raised"] == "SuiteInterrupted" and seen["report"] is None and seen["written"] is False
    assert seen["text"].startswith("Suite.record interrupted: 2 of 7 cases recorded; nothing written to ")
