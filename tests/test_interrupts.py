"""Interrupting a turn with a real SIGINT (what the kernel's stop button sends), in a child process.

Each case runs a script in a fresh interpreter: it starts a turn, sends itself SIGINT once the turn
is provably busy (the stream has started, the hook or tool is running), and prints what it saw as
JSON. The turn must stop, close the HTTP stream, commit nothing and raise KeyboardInterrupt in the
calling code; the next turn must work. Latency is measured in bench/models.py, not asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

PRELUDE = """
import json, os, signal, sys, threading, time
sys.path.insert(0, {tests!r})
from wire_server import WireServer, Reply
from agentctx_widgets import Context, ScriptedModel, hooks_from_js, run_turn
from agentctx_widgets.models import OpenAIChatModel

class View:
    def __init__(self): self.pending = []
    def write(self, messages): pass
    def set_pending(self, message): self.pending.append(None if message is None else json.loads(json.dumps(message)))

def interrupt_when(ready):
    def watch():
        while not ready():
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=watch, daemon=True).start()

def turn(context, text, **kwargs):
    try:
        result = run_turn(context, text, **kwargs)
        return {{"raised": None, "ok": result.ok, "error": result.error}}
    except KeyboardInterrupt:
        return {{"raised": "KeyboardInterrupt"}}

def chunk(text):
    return ('data: {{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
            '"choices":[{{"index":0,"delta":{{"content":"%s"}},"finish_reason":null}}]}}\\n\\n' % text)
"""


def run_script(body: str) -> dict:
    script = PRELUDE.format(tests=str(TESTS)) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_interrupting_a_streaming_model_closes_the_stream_commits_nothing_and_raises():
    seen = run_script("""
        body = [chunk("w%d " % i) for i in range(400)]  # 20 s at 50 ms a chunk
        with WireServer(Reply(body, delay=0.05)) as server:
            context, view = Context(), View()
            model = OpenAIChatModel("m", base_url=server.url, api_key="test")
            interrupt_when(lambda: any(p and p["content"] and "w3 " in p["content"][0]["text"] for p in view.pending))
            outcome = turn(context, "hi", model=model, view=view)
            server.disconnected.wait(5)
            after = run_turn(context, "again", model=ScriptedModel(["fine"]))
            print(json.dumps({**outcome, "disconnected": server.disconnected.is_set(),
                              "last_pending": view.pending[-1], "context_after_interrupt": after.model_messages,
                              "next_ok": after.ok, "requests": len(server.requests)}))
    """)
    assert seen["raised"] == "KeyboardInterrupt"
    assert seen["disconnected"] is True  # the HTTP stream was closed before the server finished writing it
    partial = seen["last_pending"]
    assert partial["type"] == 3 and partial["error"] == {"message": "interrupted"}
    assert partial["content"][0]["text"].startswith("w0 w1 w2 w3 ") and "w399" not in partial["content"][0]["text"]
    # nothing was committed: the next turn's model saw the first user input (merged with the second) only
    assert seen["context_after_interrupt"] == [{"type": 2, "content": [{"type": "text", "text": "hi\n\nagain"}]}]
    assert seen["next_ok"] is True and seen["requests"] == 1


def test_interrupting_a_javascript_hook_in_time_sleep_wakes_it_and_the_next_turn_works():
    seen = run_script("""
        hooks = hooks_from_js('''
        function Create(ctx, messages) {
          if (messages[messages.length - 1].content.endsWith("sleep")) { ctx.Send("sleeping"); ctx.Flush(); time.Sleep(30000); }
          ctx.Send("awake");
        }''')
        context = Context()
        started = time.monotonic()
        class Sink:
            sent = []
            def write(self, messages): self.sent.extend(m["props"].get("content") for m in messages)
        sink = Sink()
        interrupt_when(lambda: "sleeping" in sink.sent)
        outcome = turn(context, "please sleep", hooks=hooks, model=ScriptedModel(["zzz"]), view=sink)
        stopped = time.monotonic() - started
        after = run_turn(context, "and wake up", hooks=hooks, model=ScriptedModel(["hello"]))
        print(json.dumps({**outcome, "stopped_before_the_sleep_ended": stopped < 30, "next_ok": after.ok,
                          "next_output": [m["props"].get("content") for m in after.output if not m.get("done")],
                          "messages": len(context)}))
    """)
    assert seen["raised"] == "KeyboardInterrupt"
    assert seen["stopped_before_the_sleep_ended"] is True
    assert seen["next_ok"] is True and seen["next_output"] == ["awake", "hello"]
    assert seen["messages"] == 2  # the merged user message and the second turn's reply


def test_interrupting_a_long_python_tool_stops_it_and_commits_no_round():
    seen = run_script("""
        running = threading.Event()
        def slow_lookup(query: str) -> str:
            \"\"\"Looks something up, slowly.\"\"\"
            running.set()
            time.sleep(30)
            return "found"
        model = ScriptedModel([{"tool_calls": [{"id": "c1", "name": "slow_lookup", "arguments": {"query": "x"}}]}, "done"])
        context = Context()
        started = time.monotonic()
        interrupt_when(running.is_set)
        outcome = turn(context, "look it up", model=model, tools=[slow_lookup])
        print(json.dumps({**outcome, "stopped_before_the_tool_ended": time.monotonic() - started < 30,
                          "context": context.messages()}))
    """)
    assert seen["raised"] == "KeyboardInterrupt"
    assert seen["stopped_before_the_tool_ended"] is True
    assert seen["context"] == [{"type": 2, "content": [{"type": "text", "text": "look it up"}]}]


def test_interrupting_agentctx_run_prints_one_line_and_leaves_the_context_unchanged():
    seen = run_script("""
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.utils.capture import capture_output
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "agentctx_widgets")
        slow = ScriptedModel(["a very long answer " * 50], chunk_size=4, delay=0.05)
        shell.user_ns.update(slow=slow, conv=Context(), fast=ScriptedModel(["short"]))
        shell.run_line_magic("agentctx", 'run conv "first" --model fast')
        before = shell.user_ns["conv"].messages()
        interrupt_when(lambda: len(slow.calls) == 1)
        with capture_output() as out:
            shell.run_line_magic("agentctx", 'run conv "second" --model slow')
        print(json.dumps({"stderr": out.stderr, "unchanged": shell.user_ns["conv"].messages() == before,
                          "length": len(before)}))
    """)
    assert seen["stderr"] == ("agentctx: run: interrupted; the partial reply was not committed and the context "
                              "is unchanged\n")
    assert seen["unchanged"] is True and seen["length"] == 2
