"""``ctx.workspace.Copy`` and ``ReadFile`` stop between chunks when the turn is stopped (issue 21: reads
"bounded in size and interruptible"), and a stopped or failed Copy leaves no half-written destination.

The stop comes from the workspace's own ``stop`` (a request's ``StopSignal``) or, in a JavaScript hook,
from the bridge (``hooks.js_bridge.bound_call_stopped``: the hook interrupted, or past its time or
wall-clock limit). Before, the copy ran to its end on the engine thread after a Ctrl-C had killed the
hook's worker (a kill cannot reach a host call running in the kernel), and wrote into its destination
as it went. Every wait here is for a state (a check counted, a temporary file seen), never for a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest

from agentctx_widgets.hooks.js_bridge import Bridge, Conversation, TurnTally
from agentctx_widgets.hooks.js_limits import Limits
from agentctx_widgets.yao import workspace as workspace_module
from agentctx_widgets.yao.values import YaoServiceError
from agentctx_widgets.yao.workspace import Workspace

pytestmark = pytest.mark.timeout(120)

CHUNK = 4096


class StopAfter:
    """A stop that is set from its ``checks``-th look on; ``then`` runs once, at that look."""

    def __init__(self, checks: int, then=None) -> None:
        self.checks, self.seen, self.then = checks, 0, then

    def is_set(self) -> bool:
        self.seen += 1
        if self.seen == self.checks and self.then is not None:
            self.then()
            return False
        return self.then is None and self.seen >= self.checks


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace_module, "COPY_CHUNK", CHUNK)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.bin").write_bytes(b"a" * (10 * CHUNK))  # 10 chunks
    return root


def test_a_stopped_copy_of_a_file_leaves_nothing_at_its_destination(ws):
    workspace = Workspace(ws, stop=StopAfter(4))  # three chunks copied, then the stop is seen
    with pytest.raises(YaoServiceError) as info:
        workspace.Copy("big.bin", "copy.bin")
    assert str(info.value) == (f"Copy failed: stopped (the turn was interrupted) after copying {3 * CHUNK} of "
                               f"{10 * CHUNK} bytes of {ws / 'big.bin'}; nothing was left at {ws / 'copy.bin'}")
    assert sorted(os.listdir(ws)) == ["big.bin"]  # no copy.bin, no temporary file
    assert workspace.stop.seen == 4  # it stopped at the first look after the stop, not at the end


def test_a_stopped_copy_onto_an_existing_file_leaves_that_file_as_it_was(ws):
    (ws / "copy.bin").write_text("the old content")
    with pytest.raises(YaoServiceError, match=r"^Copy failed: stopped \(the turn was interrupted\) after copying"):
        Workspace(ws, stop=StopAfter(2)).Copy("big.bin", "copy.bin")
    assert (ws / "copy.bin").read_text() == "the old content"
    assert sorted(os.listdir(ws)) == ["big.bin", "copy.bin"]


def test_a_whole_copy_replaces_the_destination_and_keeps_the_mode(ws):
    (ws / "big.bin").chmod(0o640)
    (ws / "copy.bin").write_text("the old content")
    Workspace(ws, stop=StopAfter(10**9)).Copy("big.bin", "copy.bin")
    assert (ws / "copy.bin").read_bytes() == (ws / "big.bin").read_bytes()
    assert (ws / "copy.bin").stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(ws)) == ["big.bin", "copy.bin"]


def test_a_stopped_copy_of_a_tree_removes_the_tree_it_created(ws):
    (ws / "d" / "sub").mkdir(parents=True)
    for name in ("a.bin", "sub/b.bin", "sub/c.bin"):
        (ws / "d" / name).write_bytes(b"x" * (3 * CHUNK))
    with pytest.raises(YaoServiceError, match=r"^Copy failed: stopped \(the turn was interrupted\) after copying "
                                              rf"{CHUNK} of {3 * CHUNK} bytes of {ws / 'd'}"):
        Workspace(ws, stop=StopAfter(6)).Copy("d", "d2")  # a.bin whole (4 looks), then one chunk of the next
    assert sorted(os.listdir(ws)) == ["big.bin", "d"]  # no d2, nothing half-copied inside it


def test_a_failed_tree_copy_into_an_existing_folder_leaves_that_folder(ws):
    (ws / "d").mkdir()
    (ws / "d" / "a.bin").write_bytes(b"x")
    (ws / "d2").mkdir()
    (ws / "d2" / "mine.txt").write_text("keep me")
    with pytest.raises(YaoServiceError, match=r"^Copy failed: File exists"):
        Workspace(ws).Copy("d", "d2")
    assert (ws / "d2" / "mine.txt").read_text() == "keep me"


def test_a_stopped_read_file_fails_naming_what_it_read(ws):
    with pytest.raises(YaoServiceError) as info:
        Workspace(ws, stop=StopAfter(3)).ReadFile("big.bin")
    assert str(info.value) == (f"ReadFile failed: stopped (the turn was interrupted) after reading {2 * CHUNK} of "
                               f"{10 * CHUNK} bytes of {ws / 'big.bin'}")
    assert len(Workspace(ws).ReadFile("big.bin")) == 10 * CHUNK  # unstopped, it reads the whole file


def _bound_copy(ws: Path, when_copying) -> tuple[bytes, Bridge, Conversation]:
    """A bound ``ctx.workspace.Copy`` served by the kernel's bridge (as a JavaScript hook's call is);
    ``when_copying(bridge, call)`` runs at the copy's second chunk."""
    bridge = Bridge(Limits(time_limit=5, wall_limit=60), {}, None, False)
    holder: dict = {}
    workspace = Workspace(ws, stop=StopAfter(2, lambda: when_copying(bridge, holder["call"])))
    ctx = SimpleNamespace(host_call=lambda path, args, on_chunk: getattr(workspace, path.split(".")[1])(*args))
    call = holder["call"] = Conversation(bridge.limits, "Create", ctx, TurnTally(ctx))
    reply = bridge._bound_call(call, orjson.dumps(["workspace.Copy", ["big.bin", "copy.bin"], False]))
    return reply, bridge, call


def test_a_javascript_hooks_copy_stops_at_its_time_limit(ws):
    def past_the_limit(_bridge, call):
        call.start -= 10  # the hook's 5 s of time are spent (its clock, moved; no waiting)

    reply, _, _ = _bound_copy(ws, past_the_limit)
    assert orjson.loads(reply[1:])[:2] == [1, f"Copy failed: stopped (the hook's time limit) after copying {CHUNK} "
                                               f"of {10 * CHUNK} bytes of {ws / 'big.bin'}; nothing was left at "
                                               f"{ws / 'copy.bin'}"]
    assert sorted(os.listdir(ws)) == ["big.bin"]


def test_a_javascript_hooks_copy_stops_when_the_hook_is_interrupted(ws):
    reply, bridge, _ = _bound_copy(ws, lambda bridge, _call: bridge.wake.set())  # what JsHooks.interrupt() sets
    assert orjson.loads(reply[1:])[1].startswith(f"Copy failed: stopped (the turn was interrupted) after copying "
                                                 f"{CHUNK} of {10 * CHUNK} bytes")
    assert sorted(os.listdir(ws)) == ["big.bin"]
    # outside a bound call there is nothing to stop: a Python caller's Copy runs whole
    Workspace(ws).Copy("big.bin", "copy.bin")
    assert (ws / "copy.bin").stat().st_size == 10 * CHUNK


SIGINT_CHILD = """
import glob, json, os, signal, sys, tempfile, threading, time
from pathlib import Path
from types import SimpleNamespace
from agentctx_widgets import Context, ScriptedModel
from agentctx_widgets.yao import workspace as workspace_module
from agentctx_widgets.yao.runner import run_assistant
from agentctx_widgets.yao.typescript import load_ts_module_set

workspace_module.COPY_CHUNK = 64 * 1024  # more looks at the stop; the copy is the same
work = Path(sys.argv[1])
src = Path(tempfile.mkdtemp())
(src / "index.ts").write_text('''
function Create(ctx: any, messages: any[]): any {
  const text = messages[messages.length - 1].content;
  if (text === "copy") {
    ctx.workspace.Copy("big.bin", "copy.bin");
    return { metadata: { copied: true } };
  }
  ctx.workspace.Copy("small.txt", "small-copy.txt");
  return { metadata: { read: ctx.workspace.ReadFile("small-copy.txt") } };
}
function Next(ctx: any, payload: any): any { return { data: ctx.metadata }; }
''')
hooks = load_ts_module_set(src)
assistant = SimpleNamespace(id="t.copy", prompts=[], connector="", options={}, mcp=None,
                            services={"workspace": str(work)})

def copying():  # the copy has begun: its temporary file (or, before, the destination itself) exists
    return bool(glob.glob(str(work / ".copy.bin.*"))) or (work / "copy.bin").exists()

def watch():
    while not copying():
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=watch, daemon=True).start()
context = Context()
try:
    run_assistant(context, "copy", assistant=assistant, hooks=hooks, model=ScriptedModel(["unused"]))
    outcome = "returned"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
committed = context.messages()
# the same hook set's next request waits for its engine thread: once it answered, the copy is over
after = run_assistant(Context(), "small", assistant=assistant, hooks=hooks, model=ScriptedModel(["fine"]))
print(json.dumps({"outcome": outcome, "context": committed, "next_ok": after.ok, "next": after.next,
                  "error": after.error, "files": sorted(os.listdir(work))}))
"""


def test_sigint_during_a_typescript_hooks_copy_of_200_mb_stops_it_and_the_next_request_works(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with open(work / "big.bin", "wb") as big:  # sparse: 200 MB, under MAX_COPY_BYTES, no disk
        big.truncate(200 * 1024 * 1024)
    (work / "small.txt").write_text("small and fine")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SIGINT_CHILD), str(work)], capture_output=True,
                          text=True, timeout=90, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["outcome"] == "KeyboardInterrupt"
    assert len(seen["context"]) == 1  # the input only: nothing of the stopped request was committed
    assert seen["next_ok"] is True, seen["error"]
    assert seen["next"] == {"read": "small and fine"}
    # the copy stopped before its end (a whole one is renamed into place) and left no temporary file
    assert seen["files"] == ["big.bin", "small-copy.txt", "small.txt"]
