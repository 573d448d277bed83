"""Today's Yao ``ctx`` inside TypeScript hooks (agentctx_widgets/yao/binding.py and the prelude's bound
members): real assistant directories under tests/fixtures/yao_binding, loaded by load_assistant, their
``src/`` in QuickJS through load_ts_module_set, run by run_assistant with the binding's ``hook_ctx``.

Expected values come from Yao 5a3f9a6a's sources, cited at each test: agent/context/jsapi.go (the ctx
and its output methods), context/output.go (the lifecycle events), jsapi_llm.go / agent/llm/jsapi.go
(ctx.llm and onChunk), jsapi_agent.go (onChunk's return and throw), trace/jsapi (trace objects).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agentctx_widgets import Context, ScriptedModel
from agentctx_widgets.hooks import HookTimeoutError
from agentctx_widgets.yao.api_generation import MixedApiError
from agentctx_widgets.yao.assistant import load_assistant
from agentctx_widgets.yao.binding import BindingCallError, current_context, hook_context_for, script_api
from agentctx_widgets.yao.runner import YaoTurnResult, run_assistant
from agentctx_widgets.yao.services import Mcp, MemoryStore, Search
from agentctx_widgets.yao.typescript import load_ts_module_set

ASSISTANTS = Path(__file__).parent / "fixtures" / "yao_binding" / "assistants" / "tests"


class Recorder:
    """The client: the runner's messages (send) and the hook ctx's output batches (write), in order."""

    def __init__(self) -> None:
        self.items: list[dict] = []

    def send(self, message: dict) -> None:
        self.items.append(message)

    def write(self, batch: list[dict]) -> None:
        self.items.extend(batch)

    def shapes(self) -> list[tuple]:
        """(event name or type, message id, chunk id, delta action) of everything but stream_start/end."""
        out = []
        for item in self.items:
            props = item.get("props") or {}
            if item.get("type") == "event":
                if props["event"] in ("stream_start", "stream_end"):
                    continue
                data = props["data"]
                out.append((props["event"], data.get("message_id") or data.get("block_id")))
            else:
                out.append((item["type"], item.get("message_id"), item.get("chunk_id"), item.get("delta_action")))
        return out


@pytest.fixture(scope="module")
def current() -> Any:
    assistant = load_assistant(ASSISTANTS / "binding-current")
    hooks = load_ts_module_set(assistant.script.parent)
    try:
        yield assistant, hooks
    finally:
        hooks.close()


def run_current(current: Any, scenario: str, *, services: dict | None = None) -> tuple[YaoTurnResult, Recorder, Any]:
    assistant, hooks = current
    client = Recorder()
    ctx = hook_context_for(hooks, sinks=[client], chat_id="chat-1", authorized={"user_id": "u1"}, services=services)
    assert ctx is not None
    result = run_assistant(Context(name="binding"), scenario, assistant=assistant,
                           connectors={"deepseek.v3": ScriptedModel(["ok"], chunk_size=100)},
                           hooks_of=lambda a: hooks, hook_ctx=ctx, id_generator=ctx.output.ids, output=client)
    assert result.ok, result.error
    return result, client, ctx


def test_a_typescript_assistant_is_given_todays_api() -> None:
    """api_generation's rule over every module of src/: the current fixture uses SendStream and Send's
    value (today's), the seed fixture SendGroup / Flush (the seed's)."""
    current_hooks = load_ts_module_set(ASSISTANTS / "binding-current" / "src")
    seed_hooks = load_ts_module_set(ASSISTANTS / "binding-seed" / "src")
    try:
        choice = script_api(current_hooks)
        assert choice.api == "current" and choice.decided_by == "script"
        assert (16, "the value of ctx.Send") in choice.evidence  # src/index.ts:16 `const hello = ctx.Send(`
        assert script_api(seed_hooks).api == "seed"
        assert hook_context_for(seed_hooks, sinks=[]) is None
    finally:
        current_hooks.close()
        seed_hooks.close()


def test_output_methods_return_ids_the_hook_uses(current: Any) -> None:
    """jsapi.go:252-746 through the bridge: Send returns the id (used by Replace), SendStream's id takes
    Append / End / Merge / Set, BlockID's id groups two messages, EndBlock closes it; MessageID and
    ThreadID take their counters' next ids. The events are output.go's: Send is message_start, the
    message, message_end at once (:17-223); SendStream leaves the message open until End, whose final
    content is an append delta before message_end (:342-406); block_start precedes the first message
    of a block, block_end counts its 2 messages (:95-122, :451-477). One counter per request
    (utils.go:10-50): the hook's MessageID took M4, so the model's message is M5, its chunk C10."""
    result, client, ctx = run_current(current, "output")
    assert result.next["kept"] == {"block": "B1", "hello": "M1", "menu": "M2", "card": "M3", "next": "M4",
                                   "thread": "T1"}
    assert result.next["answer"] == "ok"
    assert client.shapes() == [
        ("block_start", "B1"),
        ("message_start", "M1"), ("text", "M1", "C1", None), ("message_end", "M1"),
        ("text", "M1", "C2", "replace"),
        ("message_start", "M2"), ("text", "M2", "C3", None), ("text", "M2", "C4", "append"),
        ("text", "M2", "C5", "append"), ("text", "M2", "C6", "append"), ("message_end", "M2"),
        ("message_start", "M3"), ("card", "M3", "C7", None), ("card", "M3", "C8", "merge"),
        ("card", "M3", "C9", "set"), ("message_end", "M3"),
        ("block_end", "B1"),
        ("message_start", "M5"), ("text", "M5", "C10", None), ("message_end", "M5"),
    ]
    by_id = {(m["props"]["event"], m["props"]["data"].get("message_id") or m["props"]["data"].get("block_id")):
             m["props"]["data"] for m in client.items if m.get("type") == "event"}
    # End's message_end carries what the buffer gathered: the first content and every append (buffer.go:224-266)
    assert by_id[("message_end", "M2")]["extra"] == {"content": "# Menu\n- one\n- two\ndone"}
    assert by_id[("message_end", "M2")]["chunk_count"] == 4
    assert "extra" not in by_id[("message_end", "M3")]  # a card has no string content
    assert by_id[("block_end", "B1")]["message_count"] == 2
    setting = next(m for m in client.items if m.get("delta_action") == "set")
    assert (setting["delta_path"], setting["props"]) == ("props.count", {"count": 2})
    replaced = next(m for m in client.items if m.get("delta_action") == "replace")
    assert (replaced["block_id"], replaced["props"]) == ("B1", {"content": "Hello again"})  # inherits the block


def test_argument_errors_reach_the_script_as_yaos_errors(current: Any) -> None:
    """Each text is Yao's bridge.JsException, a plain Error: jsapi.go:258, jsapi_helpers.go:46 (after
    "invalid message: ", :264), :25 (after "invalid content: ", :479), :467, :358, :363, :590, :612,
    :725 (EndBlock's block_id), :793 (memory Get). Today's ctx has no SendGroup / Flush (:48-62) and no
    workspace without one (:163-170); ctx.sandbox fails only when called, naming why."""
    result, client, _ = run_current(current, "errors")
    kept = result.next["kept"]
    assert kept == {
        "send_nothing": "Error: Send requires a message argument",
        "send_untyped": "Error: invalid message: message.type is required and must be a string",
        "append_number": "Error: invalid content: message must be a string or object",
        "append_one": "Error: Append requires messageId and content arguments",
        "end_nothing": "Error: End requires a messageId argument",
        "end_number": "Error: messageId must be a string",
        "set_no_path": "Error: Set requires messageId, data, and path arguments",
        "set_empty_path": "Error: path cannot be empty for Set operation",
        "end_block_number": "Error: block_id must be a string",
        "memory_get": "Error: Get requires a key argument",
        "sandbox": kept["sandbox"],
        "send_group": "undefined",
        "flush": "undefined",
        "workspace": "undefined",
    }
    assert kept["sandbox"].startswith("Error: ctx.sandbox.Exec is not available here: ")
    # nothing a refused call sent: only the one open message and its end, then the model's
    assert client.shapes()[:3] == [("message_start", "M1"), ("text", "M1", "C1", None), ("message_end", "M1")]
    assert [shape for shape in client.shapes() if shape[0] == "text"] == [("text", "M1", "C1", None),
                                                                         ("text", "M2", "C2", None)]


def test_services_from_a_hook(current: Any, tmp_path: Path) -> None:
    """ctx.memory (jsapi.go:790-970: Incr from nothing is 1, Set is undefined, Get of a missing key
    null), ctx.trace (trace/jsapi/trace.go:33-52: id, Add gives a node whose methods chain and whose
    Add makes a child, node.go:44-59; the manager's Info returns ctx.trace), ctx.workspace, ctx.mcp,
    ctx.search, ctx.agent.Call with onChunk (jsapi_agent.go:170-198), ctx.llm.Stream with onChunk
    (jsapi_llm.go:114-160): the hook's onChunk runs as each chunk comes, its ctx.Append lands before
    the chunk itself reaches the client (agent/llm/jsapi.go:405-419), and returning 1 at the second
    chunk stops the stream, that chunk never sent. ctx.Release() is undefined (jsapi.go:179-216)."""
    store = MemoryStore()
    mcp, tool_calls = Mcp(), []
    mcp.register("weather", {"forecast": lambda arguments: tool_calls.append(arguments) or {"temp": 21}})
    search = Search()
    search.register("web", lambda query, options: {"items": [{"title": query, "limit": options.get("limit")}]})
    agent_calls = []

    def agents(agent_id: str, messages: list, options: dict, on_message: Any) -> dict:
        agent_calls.append((agent_id, messages))
        on_message({"type": "text", "props": {"content": "sub"}})
        return {"completion": {"content": "helped"}}

    hook_model = ScriptedModel(["Hello world!"], chunk_size=5)
    result, client, ctx = run_current(current, "services", services={
        "store": store, "mcp": mcp, "search": search, "agents": agents, "workspace": tmp_path,
        "connectors": {"deepseek.v3": hook_model}})
    kept = result.next["kept"]
    assert kept == {
        "visits": 1, "set_undefined": True, "missing_null": True, "node": "N1", "chained": True, "child": "N2",
        "same": True, "trace": "T1", "notes": "from the hook", "forecast": {"temp": 21},
        "found": {"items": [{"title": "yao agents", "limit": 1}]}, "heard": ["sub"], "helper": "helped",
        "live": "M1", "pieces": ["Hello", " worl"], "content": "Hello worl", "released": True,
    }
    # the Python side of each call
    user = ctx.services.memory.user
    assert (user.Get("visits"), user.Get("last")) == (1, {"topic": "weather"})
    assert (tmp_path / "notes.txt").read_text() == "from the hook"
    assert tool_calls == [{"city": "Paris"}]
    assert agent_calls == [("tests.helper", [{"role": "user", "content": "sub question"}])]
    nodes = ctx.services.trace.nodes
    assert (nodes["N1"]["label"], nodes["N1"]["icon"], nodes["N1"]["status"], nodes["N1"]["output"]) == (
        "Lookup", "search", "completed", {"found": 2})
    assert (nodes["N2"]["label"], nodes["N2"]["parent_ids"]) == ("Part", ["N1"])
    assert hook_model.calls == [[{"type": 2, "content": [{"type": "text", "text": "Say hello"}]}]]
    # the sub-agent's message reaches the client as it wrote it, with its thread_id (a stack id: a UUID)
    # (agent/caller/jsapi.go:114-130, agent/context/output.go:86-89)
    (sub,) = [m for m in client.items if m.get("props") == {"content": "sub"}]
    assert len(sub["thread_id"]) == 36
    # 'Hello world!' in chunks of 5: 'Hello' (C2, M2) then ' worl' (C4), stopped by onChunk's 1
    assert client.shapes()[1:8] == [
        ("message_start", "M1"), ("text", "M1", "C1", None),
        ("text", "M1", "C3", "append"),  # onChunk's Append of 'HELLO'
        ("text", "M2", "C2", None),      # then the chunk itself, to the client
        ("text", "M1", "C5", "append"),  # onChunk's Append of ' WORL'; ' worl' (C4) was stopped
        ("message_end", "M1"),
        ("message_start", "M3"),         # the model's answer, after the hook's M1 and ctx.llm's M2
    ]
    live_end = next(m for m in client.items if m.get("props", {}).get("event") == "message_end")
    assert live_end["props"]["data"]["extra"] == {"content": "HELLO WORL"}


def test_a_seed_script_keeps_the_seed_api() -> None:
    """A script written for the seed (Send / SendGroup / Flush, Yao of 2025-11-26) runs with the
    runner's default HookContext: its messages reach the request's output and its ctx has none of
    today's members."""
    assistant = load_assistant(ASSISTANTS / "binding-seed")
    hooks = load_ts_module_set(assistant.script.parent)
    try:
        assert hook_context_for(hooks, sinks=[]) is None
        client = Recorder()
        result = run_assistant(Context(name="seed"), "hi", assistant=assistant,
                               connectors={"deepseek.v3": ScriptedModel(["ok"], chunk_size=100)},
                               hooks_of=lambda a: hooks, output=client)
        assert result.ok, result.error
        assert result.next == {"send_stream": "undefined", "memory": "undefined", "send_group": "function"}
        contents = [m.get("props", {}).get("content") for m in result.messages]
        assert "seed hello" in contents and "in the group" in contents
    finally:
        hooks.close()


def test_a_script_using_both_apis_is_refused_naming_both_files(tmp_path: Path) -> None:
    (tmp_path / "index.ts").write_text('import { part } from "./part";\n'
                                       "function Create(ctx: any) {\n  const id = ctx.SendStream('x');\n"
                                       "  part(ctx);\n  return null;\n}\n")
    (tmp_path / "part.ts").write_text("export function part(ctx: any) {\n  ctx.Flush();\n}\n")
    hooks = load_ts_module_set(tmp_path)
    try:
        with pytest.raises(MixedApiError) as caught:
            script_api(hooks)
        text = str(caught.value)
        assert f"ctx.SendStream ({tmp_path.name}/index.ts:3)" in text and f"ctx.Flush ({tmp_path.name}/part.ts:2)" in text
        assert script_api(hooks, explicit="seed").api == "seed"
    finally:
        hooks.close()


def test_the_bound_members_are_sealed(tmp_path: Path) -> None:
    """A script that replaces String.prototype.split and puts a forged reply value and ctx members on
    Object.prototype at load time changes nothing: the members are built from own properties of the
    table with the built-ins captured first; the table and the host are out of the script's reach."""
    (tmp_path / "index.ts").write_text(
        'String.prototype.split = function () { return ["evil"]; };\n'
        'Object.defineProperty(Object.prototype, "v", { get() { return "forged"; }, configurable: true });\n'
        '(Object.prototype as any).memory = { chat: { Get: () => "forged" } };\n'
        "function Create(ctx: any) {\n"
        '  const id = ctx.Send("hi");\n'
        '  ctx.memory.chat.Set("k", 2);\n'
        "  const untouched = (Object.prototype as any).memory.chat.Get() === \"forged\";\n"
        "  return { metadata: { id, k: ctx.memory.chat.Get(\"k\"), host: typeof (globalThis as any).__agentctx_host,\n"
        '    own: Object.prototype.hasOwnProperty.call(ctx, "memory"), untouched,\n'
        '    keys: Object.keys(ctx).filter((k) => ["methods", "callbacks", "drop", "values", "node"].includes(k)) } };\n'
        "}\n")
    hooks = load_ts_module_set(tmp_path)
    try:
        written: list[dict] = []
        ctx = current_context(sinks=[written.extend], chat_id="c")
        answer = asyncio.run(hooks.call("Create", ctx, []))
        assert answer == {"metadata": {"id": "M1", "k": 2, "host": "undefined", "own": True, "untouched": True,
                                       "keys": []}}
        assert [m.get("props", {}).get("content") for m in written if m["type"] == "text"] == ["hi"]
    finally:
        hooks.close()


def test_host_call_reaches_only_the_mounted_methods() -> None:
    """call_service's table bounds the bridge (service_calls.METHODS); a namespace the request lacks
    (no user id: Yao leaves ctx.memory.user out) and anything outside the table are refused by name."""
    ctx = current_context(sinks=[], chat_id="c")
    assert ctx.host_call("memory.chat.Incr", ["n"]) == 1
    for path in ("memory.user.Get", "services.__init__", "output.flush", "trace.node.__class__"):
        with pytest.raises(BindingCallError) as caught:
            ctx.host_call(path, ["k"])
        assert str(caught.value) == f"ctx.{path} is not a method of this request's ctx"
    table = ctx.host_members()
    for path in [*table["methods"], *(f"trace.node.{name}" for name in table["node"])]:  # each one is reachable
        try:
            ctx.host_call(path, [])
        except BindingCallError as error:  # Yao's argument errors, "not available here" ...
            assert "is not a method" not in str(error), path
    assert "memory.user.Get" not in table["methods"] and "memory.chat.Get" in table["methods"]
    assert "workspace.ReadFile" not in table["methods"]  # no workspace passed (jsapi.go:163-170)
    assert table["values"] == {"trace.id": "T1"} and table["callbacks"]["llm.Stream"] == 2


def test_an_endless_onchunk_is_stopped_by_the_time_limit_and_the_next_call_works(tmp_path: Path) -> None:
    """onChunk runs in the worker under the hook's limits: a loop inside it is the hook's time limit,
    named at its .ts line; the fresh engine then serves the next call."""
    (tmp_path / "index.ts").write_text(
        "function Create(ctx: any, messages: any[]) {\n"
        '  if (messages.length === 0) return { metadata: { fine: ctx.MessageID() } };\n'
        '  ctx.llm.Stream("m", [{ role: "user", content: "x" }], {\n'
        "    onChunk: (msg: any) => {\n"
        "      while (true) {}\n"
        "    },\n"
        "  });\n"
        "  return null;\n"
        "}\n")
    hooks = load_ts_module_set(tmp_path, time_limit=1.5)
    try:
        ctx = current_context(sinks=[], chat_id="c", services={"model": ScriptedModel(["Hello"], chunk_size=5)})
        with pytest.raises(HookTimeoutError) as caught:
            asyncio.run(hooks.call("Create", ctx, [{"role": "user", "content": "go"}]))
        assert caught.value.line == 5 and caught.value.file == f"{tmp_path.name}/index.ts"
        assert asyncio.run(hooks.call("Create", ctx, [])) == {"metadata": {"fine": "M2"}}
    finally:
        hooks.close()


def test_an_onchunk_that_throws_stops_the_stream_and_is_not_rethrown(tmp_path: Path) -> None:
    """jsapi_agent.go:183-186: an error from the callback stops the stream (the chunk is not sent) and
    the call returns its result; the throw is reported as a console warning."""
    (tmp_path / "index.ts").write_text(
        "function Create(ctx: any) {\n"
        '  const result = ctx.llm.Stream("m", [{ role: "user", content: "x" }], {\n'
        '    onChunk: (msg: any) => { throw new Error("no thanks"); },\n'
        "  });\n"
        "  return { metadata: { content: result.content } };\n"
        "}\n")
    hooks = load_ts_module_set(tmp_path)
    try:
        written: list[dict] = []
        ctx = current_context(sinks=[written.extend], chat_id="c",
                              services={"model": ScriptedModel(["Hello world"], chunk_size=5)})
        assert asyncio.run(hooks.call("Create", ctx, [])) == {"metadata": {"content": "Hello"}}
        assert written == []  # the first chunk was stopped before it reached the client
        assert [line["text"] for line in hooks.take_console()] == [
            "onChunk threw Error: no thanks; the stream stopped (Yao stops on a callback error and does not rethrow it)"]
    finally:
        hooks.close()


def test_a_result_over_a_kilobyte_crosses_back_to_python() -> None:
    """QuickJS-NG keeps a long concatenation as a rope string, which the Python binding cannot read
    ("Unknown quickjs tag: -6"); the prelude's result envelope is such a concatenation, so a seed hook
    returning ~1.3 KB failed as an internal error before the prelude flattened what it hands back."""
    from agentctx_widgets import Output
    from agentctx_widgets.hooks import HookContext, hooks_from_js

    hooks = hooks_from_js('function Create(ctx, m) { return { a: "x".repeat(300) + "y", b: "z".repeat(1000) }; }')
    try:
        answer = asyncio.run(hooks.call("Create", HookContext(output=Output()), []))
        assert answer == {"a": "x" * 300 + "y", "b": "z" * 1000}
    finally:
        hooks.close()


class SlowModel:
    """A model that waits before each of its three chunks (a remote model, as the hook sees it)."""

    def __init__(self, pause: float) -> None:
        self.pause = pause

    def stream(self, messages: list, *, options: Any = None) -> Any:
        yield {"type": "text_start", "contentIndex": 0}
        for piece in ("a", "b", "c"):
            time.sleep(self.pause)
            yield {"type": "text_delta", "contentIndex": 0, "delta": piece}
        yield {"type": "text_end", "contentIndex": 0}
        yield {"type": "done"}


def test_waiting_on_a_model_is_not_the_hooks_time_but_its_callbacks_are(tmp_path: Path) -> None:
    """ctx.llm / agent / mcp / search wait on the outside world: like time.Sleep, that wait does not
    count against time_limit (a model slower than the limit still answers), while the JavaScript its
    onChunk runs does (the endless onChunk above is stopped). Each onChunk makes a host call, where the
    worker checks the deadline: counted, the second chunk (0.5 s in) would be past the 0.3 s limit."""
    (tmp_path / "index.ts").write_text(
        "function Create(ctx: any) {\n"
        "  const seen: string[] = [];\n"
        '  const result = ctx.llm.Stream("m", [{ role: "user", content: "x" }], {\n'
        "    onChunk: (msg: any) => { seen.push(msg.props.content); ctx.memory.chat.Set(\"last\", seen.length); return 0; },\n"
        "  });\n"
        "  return { metadata: { seen, content: result.content } };\n"
        "}\n")
    hooks = load_ts_module_set(tmp_path, time_limit=0.3)
    try:
        ctx = current_context(sinks=[], chat_id="c", services={"model": SlowModel(0.25)})  # 0.75 s in all
        answer = asyncio.run(hooks.call("Create", ctx, []))
        assert answer == {"metadata": {"seen": ["a", "b", "c"], "content": "abc"}}
        assert ctx.services.memory.chat.Get("last") == 3
    finally:
        hooks.close()


def test_an_onchunk_that_streams_again_and_parallel_trace_nodes(tmp_path: Path) -> None:
    """Callbacks nest: an onChunk calling ctx.llm.Stream with its own onChunk gets that stream's chunks
    first (the innermost waiting callback answers), then the outer stream goes on. ctx.trace.Parallel
    returns node objects (trace/jsapi/trace.go:44, node.go:44-59) branching from the current node
    (manager.go:219-320), each with its own chained methods."""
    (tmp_path / "index.ts").write_text(
        "function Create(ctx: any) {\n"
        "  const outer: string[] = [];\n"
        "  const inner: string[] = [];\n"
        '  ctx.llm.Stream("m", [{ role: "user", content: "x" }], {\n'
        "    onChunk: (msg: any) => {\n"
        "      outer.push(msg.props.content);\n"
        "      if (outer.length === 1) {\n"
        '        ctx.llm.Stream("m", [{ role: "user", content: "y" }], { onChunk: (m: any) => { inner.push(m.props.content); return 0; } });\n'
        "      }\n"
        "      return 0;\n"
        "    },\n"
        "  });\n"
        '  ctx.trace.Add({ q: 1 }, { label: "Root" });\n'
        '  const nodes = ctx.trace.Parallel([{ data: { a: 1 }, option: { label: "A" } }, { data: { b: 2 }, option: { label: "B" } }]);\n'
        '  nodes[1].Info("on B").Complete();\n'
        "  return { metadata: { outer, inner, ids: nodes.map((n: any) => n.id) } };\n"
        "}\n")
    hooks = load_ts_module_set(tmp_path)
    try:
        ctx = current_context(sinks=[], chat_id="c", services={"model": ScriptedModel(["abc", "xyz"], chunk_size=1)})
        answer = asyncio.run(hooks.call("Create", ctx, []))
        assert answer == {"metadata": {"outer": ["a", "b", "c"], "inner": ["x", "y", "z"], "ids": ["N2", "N3"]}}
        nodes = ctx.services.trace.nodes
        assert [(nodes[n]["label"], nodes[n]["parent_ids"]) for n in ("N2", "N3")] == [("A", ["N1"]), ("B", ["N1"])]
        assert (nodes["N2"]["status"], nodes["N3"]["status"]) == ("running", "completed")
        assert [(log["node_id"], log["message"]) for log in ctx.services.trace.logs] == [("N3", "on B")]
    finally:
        hooks.close()


def test_an_interrupt_while_onchunk_sleeps_stops_the_call_and_the_next_call_works(tmp_path: Path) -> None:
    """Ctrl-C (interrupt()) during a stream whose onChunk sleeps: the sleep is woken, the worker killed,
    the call fails as interrupted, and a fresh engine serves the next call (js_hooks' contract)."""
    import threading

    (tmp_path / "index.ts").write_text(
        'import { time } from "@yao/runtime";\n'
        "function Create(ctx: any, messages: any[]) {\n"
        "  if (messages.length === 0) return { metadata: { after: ctx.MessageID() } };\n"
        '  ctx.llm.Stream("m", [{ role: "user", content: "x" }], {\n'
        "    onChunk: (msg: any) => { time.Sleep(20000); return 0; },\n"
        "  });\n"
        "  return null;\n"
        "}\n")
    hooks = load_ts_module_set(tmp_path, wall_limit=60)
    try:
        ctx = current_context(sinks=[], chat_id="c", services={"model": ScriptedModel(["abc"], chunk_size=1)})
        timer = threading.Timer(0.3, hooks.interrupt)
        timer.start()
        try:
            with pytest.raises(HookTimeoutError, match="was interrupted"):
                asyncio.run(hooks.call("Create", ctx, [{"role": "user", "content": "go"}]))
        finally:
            timer.cancel()
        assert asyncio.run(hooks.call("Create", ctx, [])) == {"metadata": {"after": "M2"}}  # ctx.llm took M1
    finally:
        hooks.close()
