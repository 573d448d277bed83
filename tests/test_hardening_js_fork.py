"""Issue 21, the JavaScript engine's processes: forks and a kernel's death.

- ``os.fork()`` after a hook set was used: a turn in the child used to hang for ever (the engine thread
  does not exist in a child; the worker's socket is the parent's). Now the child gets a fresh worker, and
  the parent keeps its own, untouched, JavaScript state included — also when the fork comes in the middle
  of a call, with the hook set's locks held.
- A kernel SIGKILLed during a native hang used to leave its worker burning a core until ``RLIMIT_CPU``.
  Now the zygote sees its control socket end and the worker dies with it (the parent-death signal, and
  the lifeline pipe alone when that is off), also when a forked child of the kernel still lives.

Every wait has a generous bound that only ends a hang (a child that hangs is killed and the test fails);
nothing asserts a duration.
"""

from __future__ import annotations

import functools
import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from agentctx_widgets import Context, Output, ScriptedModel, hooks_from_js, run_turn
from agentctx_widgets.hooks import js_hooks

run_turn = functools.partial(run_turn, check=False)

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork() is POSIX only")]

TESTS = Path(__file__).parent
HANG = 120.0
"""Seconds before a wait is called a hang (never reached when things work)."""

COUNTER = """
let calls = 0;
function Create(ctx, messages) {
  const last = messages.length ? messages[messages.length - 1].content : "";
  if (last === "block") block();
  calls += 1;
  ctx.Send("call " + calls);
  return { messages };
}
"""
"""A hook with global JavaScript state: which worker served a call shows in what it sends."""


def turn(hooks, text: str = "hello") -> dict:
    """A real turn with ``hooks``: what it sent, whether it ended well, and the worker that served it."""
    result = run_turn(Context(), text, hooks=hooks, model=ScriptedModel(["fine"]))
    return {"ok": result.ok, "sent": [m["props"].get("content") for m in result.output if not m.get("done")],
            "worker": hooks.worker_pid}


def in_a_fork(work) -> dict:
    """Run ``work()`` in a forked child; its JSON answer comes back through a pipe, and the child ends
    with ``os._exit``. A child that does not answer within :data:`HANG` is killed and the test fails."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 0
        try:
            os.close(read)
            answer = json.dumps({"answer": work()})
        except BaseException as error:  # noqa: BLE001 - reported to the parent
            answer, status = json.dumps({"error": f"{type(error).__name__}: {error}"}), 1
        try:
            os.write(write, answer.encode())
        finally:
            os._exit(status)
    os.close(write)
    chunks: list[bytes] = []
    deadline = time.monotonic() + HANG
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                pytest.fail(f"the forked child did not answer within {HANG} s (it hung); it was killed")
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    reply = json.loads(b"".join(chunks) or b'{"error": "the child said nothing"}')
    assert "error" not in reply, reply["error"]
    return reply["answer"]


def test_a_turn_in_a_forked_child_gets_a_fresh_worker_and_the_parent_keeps_its_own():
    hooks = hooks_from_js(COUNTER, globals={"block": lambda: None})
    try:
        assert turn(hooks)["sent"] == ["call 1", "fine"]
        parent_worker = hooks.worker_pid

        def child() -> dict:
            before = hooks.worker_pid  # the parent's worker is not the child's
            first, second = turn(hooks), turn(hooks)
            hooks.interrupt()  # between calls: nothing to stop, and never the parent's worker
            hooks.close()
            return {"before": before, "first": first, "second": second, "pid": os.getpid()}

        seen = in_a_fork(child)
        assert seen["before"] is None
        # a fresh worker, loaded from the source: its JavaScript state starts again
        assert seen["first"] == {"ok": True, "sent": ["call 1", "fine"], "worker": seen["first"]["worker"]}
        assert seen["first"]["worker"] not in (None, parent_worker)
        assert seen["second"] == {"ok": True, "sent": ["call 2", "fine"], "worker": seen["first"]["worker"]}
        # the parent's worker lived through the child's calls, interrupt and close: same process, same state
        assert psutil.Process(parent_worker).status() != psutil.STATUS_ZOMBIE
        assert turn(hooks) == {"ok": True, "sent": ["call 2", "fine"], "worker": parent_worker}
        assert hooks.rebuilds == 0
    finally:
        hooks.close()


def test_a_fork_in_the_middle_of_a_call_leaves_the_child_no_held_lock_and_the_call_ends_in_the_parent():
    blocked, release = threading.Event(), threading.Event()

    def block() -> None:  # runs on the parent's engine thread, inside the call, with its locks held
        blocked.set()
        release.wait(HANG)

    hooks = hooks_from_js(COUNTER, globals={"block": block}, time_limit=HANG, wall_limit=2 * HANG)
    try:
        assert turn(hooks)["sent"] == ["call 1", "fine"]
        parent_worker = hooks.worker_pid
        running: dict = {}
        caller = threading.Thread(target=lambda: running.update(turn(hooks, "block")), daemon=True)
        caller.start()
        assert blocked.wait(HANG), "the hook never reached block()"

        seen = in_a_fork(lambda: turn(hooks))
        assert seen["ok"] is True and seen["sent"] == ["call 1", "fine"]
        assert seen["worker"] not in (None, parent_worker)

        release.set()
        caller.join(HANG)
        assert not caller.is_alive()
        assert running == {"ok": True, "sent": ["call 2", "fine"], "worker": parent_worker}
        assert turn(hooks)["sent"] == ["call 3", "fine"]
    finally:
        release.set()
        hooks.close()


def test_a_forked_child_that_drops_the_hook_set_leaves_the_parents_worker_alone():
    hooks = hooks_from_js(COUNTER, globals={"block": lambda: None})
    try:
        assert turn(hooks)["sent"] == ["call 1", "fine"]
        parent_worker = hooks.worker_pid

        def child() -> str:
            # what dropping the hook set does (its finalizer), before any call: the slot still holds the
            # worker inherited from the parent, which must not be signalled
            js_hooks._finalize(hooks._engine, hooks._slot)
            return "dropped"

        assert in_a_fork(child) == "dropped"
        assert turn(hooks) == {"ok": True, "sent": ["call 2", "fine"], "worker": parent_worker}
    finally:
        hooks.close()


# -- a kernel killed during a native hang ------------------------------------------------------------

KERNEL = """
import asyncio, json, os, sys, threading, time
from agentctx_widgets import Output, hooks_from_js
from agentctx_widgets.hooks import HookContext, js_engine
js_engine.DEATH_SIGNAL = {death_signal}
fork_first = {fork_first}
started = threading.Event()
hooks = hooks_from_js(
    "function Create(ctx, m) {{ begin(); Array.prototype.join.call({{length: 2**53-1}}, ''); }}",
    globals={{"begin": started.set}}, time_limit=600, wall_limit=600)
forked = None
if fork_first:  # a child of the kernel that outlives it, holding whatever it inherited
    forked = os.fork()
    if forked == 0:
        time.sleep(600)
        os._exit(0)
threading.Thread(target=lambda: asyncio.run(hooks.call("Create", HookContext(output=Output()), [])),
                 daemon=True).start()
started.wait(60)
print(json.dumps({{"worker": hooks.worker_pid, "zygote": js_engine._ZYGOTE.process.pid, "forked": forked}}),
      flush=True)
time.sleep(600)
"""


def gone(pid: int) -> bool:
    """Not running any more: no such process, or a zombie waiting to be reaped (it uses no CPU)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("how", ["parent-death signal", "lifeline pipe alone", "with a forked child alive"])
def test_a_kernel_sigkilled_in_a_native_hang_leaves_no_process_behind(how):
    script = KERNEL.format(death_signal=how != "lifeline pipe alone", fork_first=how == "with a forked child alive")
    kernel = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE, text=True,
                              cwd=TESTS.parent)
    pids: dict = {}
    try:
        line = kernel.stdout.readline()
        assert line, "the kernel child ended before its hook started"
        pids = json.loads(line)
        worker = psutil.Process(pids["worker"])
        assert worker.ppid() == pids["zygote"]
        busy = worker.cpu_times()
        deadline = time.monotonic() + HANG  # the hang is native: the worker burns CPU
        while sum(worker.cpu_times()[:2]) <= sum(busy[:2]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(worker.cpu_times()[:2]) > sum(busy[:2])

        kernel.kill()
        kernel.wait(HANG)
        deadline = time.monotonic() + HANG
        while not (gone(pids["worker"]) and gone(pids["zygote"])) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(pids["worker"]), f"the worker {pids['worker']} outlived its kernel ({how})"
        assert gone(pids["zygote"]), f"the zygote {pids['zygote']} outlived its kernel ({how})"
    finally:
        if kernel.poll() is None:
            kernel.kill()
            kernel.wait()
        for name in ("worker", "zygote", "forked"):
            if pids.get(name):
                try:
                    os.kill(pids[name], signal.SIGKILL)
                except OSError:
                    pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_new_worker_arms_sigkill_on_its_parents_death_and_exits_if_its_parent_is_already_gone():
    import ctypes

    from agentctx_widgets.hooks import js_worker

    def armed() -> int:
        parent = os.getppid()
        js_worker._die_with_parent(parent)
        sig = ctypes.c_int(-1)
        ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
        return sig.value

    assert in_a_fork(armed) == signal.SIGKILL

    pid = os.fork()
    if pid == 0:  # told its parent is another process: as if the zygote died before the signal was armed
        try:
            js_worker._die_with_parent(os.getppid() + 1)
        finally:
            os._exit(0)
    deadline = time.monotonic() + HANG
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the child did not end")
    assert os.waitstatus_to_exitcode(done[1]) == 1
