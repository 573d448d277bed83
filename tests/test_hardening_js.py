"""Issue 11, the JavaScript side: nothing a hook does can hang, bloat or corrupt the kernel.

Each probe is bounded (small limits, pytest-timeout, floods and Ctrl-C in a child interpreter) and
asserts the exact error and that the next call works: native built-ins that never yield, at load time
and in a call; ``interrupt()`` and a real SIGINT; memory floods against the per-turn caps with the
kernel's peak RSS measured; host time counted against the time limit; ``time.Sleep`` past the wall
limit; a redefined ``JSON`` / ``toJSON`` / ``Error`` / ``Array``; a worker that dies under us; and a
Hypothesis fuzzer of hostile hook bodies.
"""

from __future__ import annotations

import functools
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_widgets import Context, Output, ScriptedModel, hooks_from_js, run_turn
from agentctx_widgets.hooks import (
    HookContext,
    HookError,
    HookLoadError,
    HookMemoryError,
    HookThrewError,
    HookTimeoutError,
)
from agentctx_widgets.hooks import js_engine
from agentctx_widgets.hooks.js_hooks import MAX_CONSOLE_BYTES, MAX_OUTPUT_BYTES, MAX_OUTPUT_MESSAGES

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing

TESTS = Path(__file__).parent
LIMIT, WALL = 0.5, 2.0
SLACK = 5.0
"""How long past a limit a call may end before a test calls it a hang. Not a speed check (a loaded machine
may take seconds to schedule the worker's kill): which limit fired is shown by the error's own message."""

NATIVE = {
    "join on a huge array-like": 'Array.prototype.join.call({length: 2**53-1}, "")',
    "String of a 2**32-1 array": "const a = []; a.length = 2**32-1; String(a)",
    "console.log of a 2**32-1 array": "const a = []; a.length = 2**32-1; console.log(a)",
    "reverse on a huge array-like": "Array.prototype.reverse.call({length: 2**53-1})",
    "copyWithin on a huge array-like": "Array.prototype.copyWithin.call({length: 2**53-1}, 0, 1)",
}


def call(hooks, name="Create", *args, output=None, **fields):
    output = output if output is not None else Output()
    sent: list[dict] = []
    output.add_sink(sent.extend)
    started = time.monotonic()
    try:
        result = asyncio.run(hooks.call(name, HookContext(output=output, **fields), *(args or ([],))))
        error = None
    except HookError as failure:
        result, error = None, failure
    seconds = time.monotonic() - started
    output.flush()
    return result, error, sent, seconds


def works(hooks) -> None:
    """The next call runs normally: it sends, flushes and returns."""
    result, error, sent, _ = call(hooks, "Create", [{"role": "user", "content": "hello"}])
    assert error is None, error
    assert result == {"messages": [{"role": "user", "content": "hello"}]}
    assert [m["props"]["content"] for m in sent] == ["create ok"]


def hook_source(attack: str) -> str:
    # the attack is on line 3, inside Create, and runs only when the last message says "attack"
    return ("function Create(ctx, messages) {\n"
            "  if (messages.length && messages[messages.length - 1].content === 'attack') {\n"
            f"    {attack};\n"
            "  }\n"
            "  ctx.Send('create ok');\n"
            "  return { messages };\n"
            "}\n")


ATTACK = [{"role": "user", "content": "attack"}]


def gone(pid: int, within: float = 2.0) -> bool:
    """The process ``pid`` no longer exists (killed and reaped), waiting at most ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid):
            return True
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.01)
    return False


def workers() -> set[int]:
    zygote = js_engine._ZYGOTE
    if zygote is None or not zygote.alive():
        return set()
    return {child.pid for child in psutil.Process(zygote.process.pid).children()}


# -- native built-ins that never yield -------------------------------------------------------------


@pytest.mark.parametrize("kind", list(NATIVE))
def test_a_native_hang_in_a_call_stops_at_its_limit_and_the_next_call_works(kind):
    hooks = hooks_from_js(hook_source(NATIVE[kind]), time_limit=LIMIT, wall_limit=WALL)
    pid = hooks.worker_pid
    _, error, sent, seconds = call(hooks, "Create", ATTACK)
    assert isinstance(error, HookTimeoutError)
    assert str(error) == (f"Create (line 1): ran longer than its {LIMIT} s time limit in code that does not yield "
                          "(a built-in on a huge array-like?); its engine process was stopped")
    assert error.code == "HOOK_TIMEOUT" and error.hook == "Create"
    assert LIMIT <= seconds < LIMIT + SLACK
    assert gone(pid)  # the core it burned is free again
    assert hooks.rebuilds == 1
    works(hooks)
    assert hooks.worker_pid not in (None, pid)  # a fresh engine served it
    hooks.close()


@pytest.mark.parametrize("kind", list(NATIVE))
def test_a_native_hang_at_load_time_fails_the_load_within_its_limit(kind):
    before = workers()
    started = time.monotonic()
    with pytest.raises(HookLoadError) as caught:
        hooks_from_js(NATIVE[kind] + ";\n" + hook_source("0"), time_limit=LIMIT, wall_limit=WALL)
    seconds = time.monotonic() - started
    assert str(caught.value) == ("hook: the top-level code ran past the time limit in code that does not yield (a "
                                 "built-in on a huge array-like?); its engine process was stopped")
    assert caught.value.code == "HOOK_TIMEOUT"
    assert seconds < LIMIT + SLACK
    deadline = time.monotonic() + 2
    while workers() - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not workers() - before  # no worker left spinning
    works(hooks_from_js(hook_source("0"), time_limit=LIMIT, wall_limit=WALL))


def test_the_wall_limit_stops_a_native_hang_when_it_comes_first():
    hooks = hooks_from_js(hook_source(NATIVE["join on a huge array-like"]), time_limit=10, wall_limit=0.4)
    _, error, _, seconds = call(hooks, "Create", ATTACK)
    assert str(error) == ("Create (line 1): ran longer than its 0.4 s wall-clock limit in code that does not yield "
                          "(a built-in on a huge array-like?); its engine process was stopped")
    assert seconds < 0.4 + SLACK
    works(hooks)


def test_interrupt_stops_a_native_hang_at_once():
    """The interrupt, not the 30 s time limit, ends the call: the error says so (the time is a hang guard)."""
    begun = threading.Event()
    hooks = hooks_from_js(hook_source("begin(); " + NATIVE["join on a huge array-like"]), time_limit=30,
                          wall_limit=60, globals={"begin": begun.set})
    pid = hooks.worker_pid
    outcome: dict = {}

    def run() -> None:
        outcome["result"] = call(hooks, "Create", ATTACK)
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    assert begun.wait(60)  # the next statement is the join
    interrupted = time.monotonic()
    hooks.interrupt()
    thread.join(60)
    _, error, _, _ = outcome["result"]
    assert str(error) == "Create (line 1): was interrupted (the turn was stopped)"
    assert isinstance(error, HookTimeoutError)
    assert outcome["ended"] - interrupted < SLACK  # far below the 30 s time limit
    assert gone(pid)
    works(hooks)


def test_interrupt_between_calls_keeps_the_engine_and_its_state():
    hooks = hooks_from_js("let calls = 0;\nfunction Create(ctx, m) { calls += 1; ctx.Send('call ' + calls); }")
    assert call(hooks)[2][0]["props"]["content"] == "call 1"
    hooks.interrupt()
    assert call(hooks)[2][0]["props"]["content"] == "call 2"
    assert hooks.rebuilds == 0


def child(script: str, *, timeout: float = 18) -> dict:
    """Run ``script`` in a fresh interpreter (bounded), return the JSON it printed last."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=TESTS.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_ctrl_c_stops_a_native_hang_in_a_turn_at_once_and_the_next_turn_works():
    seen = child("""
        import json, os, signal, threading, time
        from agentctx_widgets import Context, ScriptedModel, hooks_from_js, run_turn
        started = threading.Event()
        hooks = hooks_from_js('''
        function Create(ctx, messages) {
          if (messages[messages.length - 1].content === "hang") { begin(); Array.prototype.join.call({length: 2**53-1}, ""); }
          ctx.Send("create ok");
        }''', globals={"begin": started.set}, time_limit=30, wall_limit=60)
        pid = hooks.worker_pid
        def stop():
            started.wait(10)
            time.sleep(0.2)
            stop.at = time.monotonic()
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=stop, daemon=True).start()
        context = Context()
        try:
            run_turn(context, "hang", hooks=hooks, model=ScriptedModel(["zzz"]))
            raised = None
        except KeyboardInterrupt:
            raised = "KeyboardInterrupt"
        stopped = time.monotonic() - stop.at
        def alive():  # not gone, and not a zombie about to be reaped
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
            except OSError:  # gone (ENOENT), or going (ESRCH)
                return False
        deadline = time.monotonic() + 2
        while alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        alive = alive()
        after = run_turn(context, "hello", hooks=hooks, model=ScriptedModel(["fine"]))
        print(json.dumps({"raised": raised, "stopped": stopped, "alive": alive, "next_ok": after.ok,
                          "next": [m["props"].get("content") for m in after.output if not m.get("done")],
                          "messages": len(context)}))
    """)
    assert seen["raised"] == "KeyboardInterrupt"
    assert seen["stopped"] < 0.5  # at once: the worker is killed, not waited for
    assert seen["alive"] is False
    assert seen["next_ok"] is True and seen["next"] == ["create ok", "fine"]
    assert seen["messages"] == 2


def test_a_worker_that_dies_under_us_is_an_internal_error_naming_the_hook_and_the_next_call_works():
    hooks = hooks_from_js(hook_source("for (;;) {}"), time_limit=10, wall_limit=20)
    pid = hooks.worker_pid
    threading.Timer(0.3, os.kill, (pid, signal.SIGKILL)).start()
    _, error, _, seconds = call(hooks, "Create", ATTACK)
    assert type(error) is HookError and error.code == "HOOK_INTERNAL" and error.hook == "Create"
    assert re.fullmatch(r"Create \(line 1\): its JavaScript engine process ended unexpectedly \(.*\); a new one "
                        r"serves the next call", str(error)), str(error)
    assert seconds < 20  # ended by the kill, not by the 20 s wall limit (the message says which)
    works(hooks)


def test_the_worker_runs_under_os_limits_and_a_dropped_hook_set_takes_it_along():
    hooks = hooks_from_js(hook_source("0"), time_limit=3, memory_limit=32 * 1024 * 1024)
    works(hooks)
    pid = hooks.worker_pid
    limits = {line[:26].strip(): line[26:].split() for line in Path(f"/proc/{pid}/limits").read_text().splitlines()}
    cpu_soft, address_soft = limits["Max cpu time"][0], limits["Max address space"][0]
    assert cpu_soft != "unlimited" and int(cpu_soft) <= psutil.Process(pid).cpu_times().user + 3 + 2 + 1
    assert address_soft != "unlimited" and int(address_soft) < 4 * 1024**3
    del hooks
    assert gone(pid)


# -- bounded host memory ---------------------------------------------------------------------------

FLOOD_CHILD = """
import ctypes, gc, json, resource, sys, time
from agentctx_widgets import Context, ScriptedModel, hooks_from_js, run_turn

def rss():
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20

def peak():
    # VmHWM, the peak RSS of this process's own memory (ru_maxrss would include the forking parent's)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # VmHWM starts again from the RSS now
    except OSError:
        pass

def trim():
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # give back what the allocator keeps, to see what we keep
    except OSError:
        pass

source = {source!r}
hooks = hooks_from_js(source, time_limit=15, wall_limit=30)
run_turn(Context(), "hello", hooks=hooks, model=ScriptedModel(["fine"]))  # imports, first-turn caches
gc.collect(); trim()
before, blocks = rss(), sys.getallocatedblocks()
reset_peak()
started = time.monotonic()
result = run_turn(Context(), "attack", hooks=hooks, model=ScriptedModel(["fine"]), check=False)
seconds = time.monotonic() - started
peak_mb = peak()
error, kept, console = result.error, len(result.output), sum(len(line["text"]) for line in result.console)
del result
gc.collect(); trim()
after, blocks_after = rss(), sys.getallocatedblocks()
again = run_turn(Context(), "hello", hooks=hooks, model=ScriptedModel(["fine"]))
print(json.dumps({{"error": error, "kept": kept, "console": console, "seconds": seconds, "before": before,
                  "peak": peak_mb, "after": after, "blocks": blocks_after - blocks, "again": again.ok,
                  "again_output": [m["props"].get("content") for m in again.output if not m.get("done")]}}))
"""

FLOODS = {
    # (attack, cap text, most the kernel's peak RSS may grow, in MB)
    "8 MB sends in a loop": ('const s = "x".repeat(8000000); for (;;) ctx.Send({type: "text", props: {content: s}})',
                             f"sent more than {MAX_OUTPUT_BYTES:,} bytes of output messages in one turn "
                             "(the max_output_bytes cap)", 250),
    "console.log flood": ('const s = "y".repeat(100000); for (;;) console.log(s)',
                          f"wrote more than {MAX_CONSOLE_BYTES:,} bytes to the console in one turn "
                          "(the max_console_bytes cap)", 60),
    "10 million small sends": ('for (let i = 0; i < 1e7; i++) ctx.Send({type: "text", props: {content: "z"}, '
                               'id: "m" + i})',
                               f"sent more than {MAX_OUTPUT_MESSAGES:,} output messages in one turn "
                               "(the max_output_messages cap)", 300),
}


@pytest.mark.parametrize("kind", list(FLOODS))
def test_a_memory_flood_hits_its_cap_with_the_kernels_memory_bounded(kind):
    attack, cap, most_mb = FLOODS[kind]
    seen = child(FLOOD_CHILD.format(source=hook_source(attack)))
    assert seen["error"] == {"message": f"Create (line 3): {cap}", "code": "HOOK_MEMORY", "name": "HookMemoryError",
                             "hook": "Create", "line": 3}
    assert seen["peak"] - seen["before"] < most_mb, seen
    assert seen["after"] - seen["before"] < 24, seen  # the kernel's memory comes back once the result is dropped
    assert seen["blocks"] < 5000, seen  # ... and no Python object of the turn is kept
    if kind == "console.log flood":
        assert seen["console"] <= MAX_CONSOLE_BYTES
    elif kind == "10 million small sends":
        assert seen["kept"] == MAX_OUTPUT_MESSAGES + 1  # what was sent up to the cap, and the error message
    assert seen["again"] is True and seen["again_output"] == ["create ok", "fine"]
    print(f"{kind}: {seen['seconds']:.2f} s, kernel peak RSS +{seen['peak'] - seen['before']:.0f} MB, "
          f"+{seen['after'] - seen['before']:.1f} MB after the turn")


def test_caps_are_per_turn_across_the_hooks_of_one_turn_and_settable():
    source = """
    function Create(ctx, messages) { for (let i = 0; i < 600; i++) ctx.Send({type: "text", props: {content: "c"}, id: "c" + i}); }
    function Done(ctx, messages, response) {
      for (let i = 0; i < 600; i++) ctx.Send({type: "text", props: {content: "d"}, id: "d" + i});
    }"""
    hooks = hooks_from_js(source, max_output_messages=1000)
    result = run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["ok"]))
    assert result.error["hook"] == "Done" and result.error["code"] == "HOOK_MEMORY"
    assert result.error["message"] == ("Done (line 4): sent more than 1,000 output messages in one turn "
                                       "(the max_output_messages cap)")
    assert sum(1 for m in result.output if m.get("id", "").startswith("d")) == 400  # up to the cap, no more
    # a new turn starts from zero
    hooks2 = hooks_from_js(source.replace("600", "400"), max_output_messages=1000)
    for _ in range(3):
        assert run_turn(Context(), "hi", hooks=hooks2, model=ScriptedModel(["ok"])).ok


def test_a_cap_fails_the_call_even_when_the_hook_catches_it():
    hooks = hooks_from_js(hook_source('try { for (;;) ctx.Send("x"); } catch (e) { ctx.Send("caught") } '
                                      'return {}'), max_output_messages=50)
    _, error, sent, _ = call(hooks, "Create", ATTACK)
    assert isinstance(error, HookMemoryError)
    assert str(error) == ("Create (line 3): sent more than 50 output messages in one turn "
                          "(the max_output_messages cap)")
    assert len(sent) == 50  # the 50 under the cap reached the Output; nothing after it
    works(hooks)


def test_one_message_over_max_send_bytes_is_refused_at_its_send_catchably():
    hooks = hooks_from_js(hook_source('try { ctx.Send("x".repeat(2000)); } catch (e) { ctx.Send(e.message); }'),
                          max_send_bytes=1000)
    result, error, sent, _ = call(hooks, "Create", ATTACK)
    assert error is None
    assert [m["props"]["content"] for m in sent] == [
        "Send failed: the message is 2,004 bytes of JSON, over the 1,000-byte limit (max_send_bytes)", "create ok"]


# -- sends in batches --------------------------------------------------------------------------------


class FailingSink:
    """Fails its first write."""

    def __init__(self) -> None:
        self.writes = 0

    def write(self, messages):
        self.writes += 1
        if self.writes == 1:
            raise RuntimeError("the view is gone")


def test_a_sink_failing_in_a_batched_flush_is_thrown_at_that_or_a_later_flush_or_fails_the_call():
    # a Flush is not waited for: its failure is thrown at the first Flush of the hook after the kernel has
    # reported it (that Flush itself when the kernel is quick; surely after a synchronous host call) and
    # otherwise fails the call at its end. It is never lost.
    hooks = hooks_from_js("""
function Create(ctx, messages) {
  const caught = [];
  function flush(label) {
    try { ctx.Flush(); } catch (e) { caught.push(label + ": " + e.message.split(" (")[0]); }
  }
  ctx.Send("one");
  if (messages.length) { ctx.Flush(); return; }
  flush("first");
  sync();
  ctx.Send("two");
  flush("second");
  report(caught);
}""", globals={"sync": lambda: None, "report": reports.append})
    reports.clear()
    assert asyncio.run(hooks.call("Create", HookContext(output=Output([FailingSink()])), [])) is None
    assert reports in ([["first: ctx.Flush: 1 output sink(s) failed during flush"]],
                       [["second: ctx.Flush: 1 output sink(s) failed during flush"]])
    with pytest.raises(HookThrewError) as caught:  # nothing catches it: the call fails with it
        asyncio.run(hooks.call("Create", HookContext(output=Output([FailingSink()])), [{"role": "user"}]))
    assert str(caught.value).endswith("Error: ctx.Flush: 1 output sink(s) failed during flush "
                                      "(FailingSink: RuntimeError('the view is gone'))")


reports: list = []


class CheckingSink:
    def write(self, messages):
        pass

    def check(self, message):
        if message["props"].get("content") == "no":
            raise ValueError("this client refuses 'no'")


def test_a_sink_with_its_own_check_makes_every_send_a_round_trip_thrown_at_the_send():
    hooks = hooks_from_js("""
function Create(ctx, messages) {
  ctx.Send("yes");
  try { ctx.Send("no"); } catch (e) { ctx.Send("caught: " + e.message); }
}""")
    output = Output()
    output.add_sink(CheckingSink())
    _, error, sent, _ = call(hooks, "Create", [], output=output)
    assert error is None
    assert [m["props"]["content"] for m in sent] == ["yes", "caught: Send failed: this client refuses 'no'"]


# -- time in host calls, and the deadline checked in each -----------------------------------------


def test_time_in_host_calls_counts_against_the_time_limit():
    hooks = hooks_from_js(hook_source("for (;;) slow()"), time_limit=0.6, wall_limit=30,
                          globals={"slow": lambda: time.sleep(0.1)})
    _, error, _, seconds = call(hooks, "Create", ATTACK)
    assert str(error) == "Create (line 3): ran longer than its 0.6 s time limit (an endless loop?)"
    assert 0.6 <= seconds < 0.6 + SLACK
    works(hooks)


def test_a_host_call_past_the_deadline_fails_at_once_even_if_caught():
    hooks = hooks_from_js(hook_source("for (;;) { try { slow(); } catch (e) {} }"), time_limit=0.3, wall_limit=30,
                          globals={"slow": lambda: time.sleep(0.2)})
    _, error, _, seconds = call(hooks, "Create", ATTACK)
    assert str(error) == "Create (line 3): ran longer than its 0.3 s time limit (an endless loop?)"
    assert seconds < 0.3 + 0.2 + SLACK


def test_time_sleep_past_the_wall_limit_fails_with_a_timeout_and_the_next_call_works():
    hooks = hooks_from_js(hook_source('ctx.Send("before"); ctx.Flush(); time.Sleep(10000); ctx.Send("after")'),
                          wall_limit=2)
    _, error, sent, seconds = call(hooks, "Create", ATTACK)
    assert isinstance(error, HookTimeoutError) and error.code == "HOOK_TIMEOUT"
    assert re.fullmatch(r"Create \(line 3\): time\.Sleep\(10000\) would end past its 2\.0 s wall-clock limit "
                        r"\([12]\.\d\d s left\)", str(error)), str(error)
    assert [m["props"]["content"] for m in sent] == ["before"]
    works(hooks)


def test_time_sleep_past_the_wall_limit_fails_the_turn_even_when_caught():
    hooks = hooks_from_js(hook_source('try { time.Sleep(5000); } catch (e) {} return {}'), wall_limit=1)
    result = run_turn(Context(), "attack", hooks=hooks, model=ScriptedModel(["fine"]))
    assert result.ok is False and result.error["code"] == "HOOK_TIMEOUT" and result.error["hook"] == "Create"
    assert "wall-clock limit" in result.error["message"]
    assert run_turn(Context(), "hello", hooks=hooks, model=ScriptedModel(["fine"])).ok


# -- a sealed host bridge --------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["top level", "in the hook"])
def test_a_replaced_json_changes_nothing_the_hook_sends_and_no_later_turn_fails(where):
    sabotage = 'JSON.stringify = function () { return "{}"; }; JSON.parse = function () { return 7; };'
    source = ("" if where == "in the hook" else sabotage + "\n") + """
function Create(ctx, messages) {
  """ + (sabotage if where == "in the hook" else "") + """
  ctx.Send({type: "text", props: {content: "sent " + JSON.stringify({a: 1})}});
  ctx.Flush();
  console.log({b: [2]});
  return { messages };
}"""
    hooks = hooks_from_js(source)
    for _ in range(2):
        result = run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["fine"]))
        assert result.ok, result.error
        assert [m["props"].get("content") for m in result.output if not m.get("done")] == ["sent {}", "fine"]
        assert [line["text"] for line in result.console] == ['{"b":[2]}']


def test_object_prototype_tojson_is_the_hooks_own_never_the_bridges():
    hooks = hooks_from_js("""
Object.prototype.toJSON = function () { return "HACKED"; };
function Create(ctx, messages) {
  Array.prototype.toJSON = function () { return "HACKED"; };
  Date.prototype.toISOString = function () { return "HACKED"; };
  ctx.Send({type: "text", props: {content: JSON.stringify({a: 1}), when: new Date(0), list: [1, {b: 2}],
            mine: {toJSON() { return "own"; }}}});
  return { messages };
}""")
    result, error, sent, _ = call(hooks, "Create", [{"role": "user", "content": "x"}])
    assert error is None
    assert result == {"messages": [{"role": "user", "content": "x"}]}  # the return value: not HACKED either
    assert sent == [{"type": "text", "props": {"content": '"HACKED"', "when": "1970-01-01T00:00:00.000Z",
                                               "list": [1, {"b": 2}], "mine": "own"}}]
    assert call(hooks, "Create", [])[1] is None  # and the next call is as healthy


def test_replaced_built_ins_do_not_reach_the_bridge():
    hooks = hooks_from_js("""
let Keep = null;
function Create(ctx, messages) {
  if (Keep === null) {
  Keep = TypeError;
  Function.prototype.apply = null; Function.prototype.call = null; Function.prototype.toString = null;
  Array.isArray = null; Object.keys = null; Object.defineProperty = null; Reflect.apply = null;
  String.prototype.slice = null; Array.prototype.push = null; Array.prototype.join = null;
  Object.defineProperty = null;
  Error = null; Array = null; Object = null; String = null; JSON = null; Promise = null; Reflect = null;
  }
  ctx.Send("still sending");
  console.log("still logging", [1]);
  throw new Keep("thrown after all that");
}""")
    for _ in range(2):
        _, error, sent, _ = call(hooks, "Create", [])
        assert isinstance(error, HookThrewError) and error.name == "TypeError"
        assert str(error) == "Create (line 14): TypeError: thrown after all that"
        assert [m["props"]["content"] for m in sent] == ["still sending"]
        assert [line["text"] for line in hooks.take_console()] == ["still logging [1]"]


def test_hostile_thrown_and_returned_values_are_described_not_fatal():
    hooks = hooks_from_js("""
function Create(ctx, messages) {
  if (messages.length === 0) throw new Proxy({}, { get() { throw new Error("trap"); }, getPrototypeOf() { throw 1; } });
  if (messages.length === 1) return { get messages() { throw new Error("getter"); } };
  throw { get code() { throw 2; }, toString() { throw 3; } };
}""")
    _, error, _, _ = call(hooks, "Create", [])
    assert isinstance(error, HookError) and error.hook == "Create"
    _, error, _, _ = call(hooks, "Create", [{"role": "user", "content": "x"}])
    assert str(error) == "Create (line 2): returned a value that is not JSON (getter)"
    _, error, _, _ = call(hooks, "Create", [{"role": "user", "content": "x"}] * 2)
    assert isinstance(error, HookThrewError) and error.code == "HOOK_THREW"
    assert str(error) == "Create (line 3): threw a non-Error value (object): [a value that cannot be shown]"


def test_inherited_traps_cannot_break_the_bridge():
    # getters on Object.prototype for every name the bridge reads or builds descriptors with
    hooks = hooks_from_js("""
const keys = ["0", "1", "2", "3", "ok", "error", "value", "abort", "thrown", "get", "set", "writable",
              "enumerable", "configurable", "name", "code", "messages", "Send", "type", "props"];
for (let i = 0; i < keys.length; i++) {
  const key = keys[i];
  Object.defineProperty(Object.prototype, key, { __proto__: null, get() { throw new Error("trap " + key); },
                                                 set(v) { throw new Error("trap set " + key); } });
}
function Create(ctx, messages) { ctx.Send("a"); ctx.Flush(); ctx.Send({type: "text", props: {content: "b"}}); return {}; }
""")
    for _ in range(2):
        result, error, sent, _ = call(hooks, "Create", [])
        assert error is None and result == {}
        assert [m["props"]["content"] for m in sent] == ["a", "b"]


# -- the fuzzer ------------------------------------------------------------------------------------

STATEMENTS = [
    'Array.prototype.join.call({length: 2**53-1}, "")',
    "{ const a = []; a.length = 2**32-1; String(a); }",
    "{ const a = []; a.length = 2**32-1; console.log(a); }",
    "Array.prototype.reverse.call({length: 2**53-1})",
    "Array.prototype.copyWithin.call({length: 2**53-1}, 0, 1)",
    "for (;;) {}",
    "for (;;) { try { for (;;) {} } catch (e) {} }",
    'for (;;) ctx.Send({type: "text", props: {content: "z"}})',
    'for (;;) { ctx.Send("z"); ctx.Flush(); }',
    'for (;;) console.log("flood")',
    '{ const s = "x".repeat(300000); for (;;) ctx.Send(s); }',
    "time.Sleep(50)",
    "time.Sleep(100000)",
    "slow()",
    "for (;;) slow()",
    'JSON.stringify = () => "{}"',
    'Object.prototype.toJSON = () => "HACKED"',
    "Error = null",
    "Array = null",
    'throw "a string"',
    "throw new Error('boom')",
    "throw { get code() { throw 1; } }",
    "(function down(n) { return down(n + 1) + 1; })(0)",
    "{ const a = []; for (;;) a.push(new Array(100000).fill(1)); }",
    'ctx.Send("ok")',
    "ctx.Flush()",
    "ctx.Send({type: 42})",
    'Object.defineProperty(Object.prototype, "get", {__proto__: null, get() { throw 1; }, configurable: true})',
    'ctx.Send(new Proxy({type: "text"}, {get(target, key) { for (;;) {} }}))',
    'ctx.Send({type: "text", props: {big: "x".repeat(2000000)}})',
]


@st.composite
def hostile_bodies(draw):
    statements = draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=3))
    body = ";\n    ".join(statements)
    if draw(st.booleans()):
        body = f"try {{ {body}; }} catch (e) {{ ctx.Send('caught'); }}"
    at_load = draw(st.booleans())
    return body, at_load


FUZZ_LIMIT, FUZZ_WALL = 0.3, 0.8


@pytest.mark.timeout(300)  # a hang guard only
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(hostile_bodies())
def test_fuzzed_hostile_hooks_end_within_their_limits_and_the_next_call_works(case):
    body, at_load = case
    source = hook_source(body) if not at_load else (
        "const ctx = {Send() {}, Flush() {}};\n" + body.replace("ctx.Send('caught')", "0") + ";\n" + hook_source("0"))
    options = dict(time_limit=FUZZ_LIMIT, wall_limit=FUZZ_WALL, memory_limit=16 * 1024 * 1024,
                   max_output_messages=2000, max_output_bytes=1024 * 1024, max_console_bytes=64 * 1024,
                   globals={"slow": lambda: time.sleep(0.05)})
    bound = FUZZ_WALL + SLACK
    started = time.monotonic()
    try:
        hooks = hooks_from_js(source, **options)
    except HookLoadError:
        assert time.monotonic() - started < bound, body
        hooks = hooks_from_js(hook_source("0"), **options)
    else:
        assert time.monotonic() - started < bound, body
        _, error, _, seconds = call(hooks, "Create", ATTACK)
        assert seconds < bound, (body, seconds, error)
        assert error is None or isinstance(error, HookError), body
        assert error is None or error.code != "HOOK_INTERNAL", (body, error)
    works(hooks)
    hooks.close()
