"""A turn's memory is gone once its result is dropped, even while the JavaScript engine's thread is still
inside its hand-off of the hook's failure (it holds the future and the exception until set_exception's
callbacks return, which can be after the turn ended: a thread that lost the GIL on a loaded machine).

Deterministic: the engine thread is held inside that hand-off until the child has measured."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

CHILD = r'''
import concurrent.futures, ctypes, gc, json, resource, sys, threading
from agentctx_widgets import Context, ScriptedModel, hooks_from_js, run_turn
from agentctx_widgets.hooks import js_engine

held, release = threading.Event(), threading.Event()

class SlowHandOff(concurrent.futures.Future):
    def _invoke_callbacks(self):
        super()._invoke_callbacks()  # the caller is woken here ...
        if threading.current_thread().name == "agentctx-quickjs" and self._exception is not None:
            held.set()
            release.wait(60)  # ... and this thread still holds the future and its exception

submit = js_engine.EngineThread.submit
def slow_submit(self, fn, *args):
    future = SlowHandOff()
    self._queue.put([future, fn, args])  # as EngineThread.submit does, with our future
    return future
def patched(self, fn, *args):
    if self.thread is None:
        submit(self, lambda: None).result()  # start the thread the normal way
    return slow_submit(self, fn, *args)
js_engine.EngineThread.submit = patched

def rss():
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
def trim():
    ctypes.CDLL("libc.so.6").malloc_trim(0)

source = """function Create(ctx, messages) {
  if (messages[messages.length - 1].content === "attack") {
    const s = "x".repeat(8000000); for (;;) ctx.Send({type: "text", props: {content: s}});
  }
}"""
hooks = hooks_from_js(source, time_limit=15, wall_limit=30)
run_turn(Context(), "hello", hooks=hooks, model=ScriptedModel(["fine"]))
gc.collect(); trim()
before = rss()
result = run_turn(Context(), "attack", hooks=hooks, model=ScriptedModel(["fine"]), check=False)
code = result.error["code"]
del result
was_held = held.wait(30)
gc.collect(); trim()
after = rss()
release.set()
print(json.dumps({"code": code, "held": was_held, "kept_mb": after - before}))
'''


def test_a_failed_turns_output_is_freed_while_the_engine_thread_still_hands_off_its_error():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD)], capture_output=True, text=True,
                          timeout=100, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["code"] == "HOOK_MEMORY" and seen["held"] is True, seen
    assert seen["kept_mb"] < 24, seen  # 64 MB of output messages: kept through the held exception's frames
