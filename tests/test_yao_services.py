"""The services of a Yao hook's ``ctx`` (agentctx_widgets.yao.services and its modules).

Upstream expectations are ported from YaoApp/yao 5a3f9a6a; each test names the file and lines.
Expected values are worked out by hand from the inputs (chunk sizes, clock values), not copied.
"""

from __future__ import annotations

import os

import pytest
from fakes import FakeClock

from agentctx_widgets.models import ScriptedModel
from agentctx_widgets.yao.ids import counters
from agentctx_widgets.yao.memory import JS_METHODS as MEMORY_METHODS
from agentctx_widgets.yao.service_calls import METHODS
from agentctx_widgets.yao.memory import MemoryStore
from agentctx_widgets.yao.services import Mcp, Search, YaoServices
from agentctx_widgets.yao.trace import Trace
from agentctx_widgets.yao.values import NotAvailableHere, YaoServiceError
from agentctx_widgets.yao.workspace import Workspace


# -- memory -------------------------------------------------------------------------------------

def test_memory_values_round_trip():
    """agent/context/jsapi_memory_integration_test.go:18-64 and :66-102: strings, numbers, booleans, objects."""
    memory = MemoryStore().memory(user_id="user1", team_id="team1", chat_id="chat1", context_id="ctx1")
    memory.user.Set("name", "John")
    memory.user.Set("age", 30)
    memory.user.Set("active", True)
    memory.team.Set("settings", {"theme": "dark", "language": "en"})
    assert [memory.user.Get("name"), memory.user.Get("age"), memory.user.Get("active")] == ["John", 30, True]
    assert memory.team.Get("settings") == {"theme": "dark", "language": "en"}
    assert memory.user.Get("missing") is None


def test_memory_counters_keys_clear_getdel():
    """jsapi_memory_integration_test.go:228-271 (Incr 1, +5 = 6, Decr 2 = 4), :273-316 (3 keys),
    :318-356 (Clear → Len 0), :358-398 (GetDel returns the value, then Get is null)."""
    user = MemoryStore().memory(user_id="u").user
    assert [user.Incr("counter"), user.Incr("counter", 5), user.Decr("counter", 2)] == [1, 6, 4]
    user.Clear()
    for key, value in (("a", 1), ("b", 2), ("c", 3)):
        user.Set(key, value)
    assert (user.Keys(), user.Len()) == (["a", "b", "c"], 3)
    user.Clear()
    assert user.Len() == 0
    user.Set("token", "secret123")
    assert (user.GetDel("token"), user.Get("token"), user.Has("token")) == ("secret123", None, False)


def test_memory_incr_reads_a_non_number_as_zero_and_truncates():
    """gou store/xun/xun.go Incr/toInt64: a string counts as 0, 2.7 as 2, a float delta is truncated."""
    user = MemoryStore().memory(user_id="u").user
    user.Set("s", "text")
    user.Set("f", 2.7)
    assert (user.Incr("s"), user.Incr("f", 1.9)) == (1, 3)


def test_memory_namespaces_are_isolated_and_absent_without_an_id():
    """memory_integration_test.go:33-44 (an empty id leaves the namespace out), :108-146 (user1/user2),
    :292-317 (Del "file:*" deletes only that user's matching keys); jsapi_memory_integration_test.go:400-443."""
    store = MemoryStore()
    partial = store.memory(user_id="user1", chat_id="chat1")
    assert (partial.present(), partial.team, partial.context) == (("user", "chat"), None, None)
    one, two = store.memory(user_id="iso-pat1").user, store.memory(user_id="iso-pat2").user
    for ns in (one, two):
        ns.Set("file:1", "data1")
        ns.Set("file:2", "data2")
        ns.Set("other", "x")
    one.Del("file:*")
    assert (one.Keys(), two.Keys()) == (["other"], ["file:1", "file:2", "other"])
    one.Clear()
    assert two.Len() == 3


def test_memory_context_is_per_request_and_cleared_on_release():
    """agent/context/context.go:93-99: releasing a request clears its context namespace only; the next
    request (a new context id) starts with an empty one while user and chat memory persist."""
    store = MemoryStore()
    first = YaoServices(store=store, user_id="u", chat_id="c", context_id="ctx-a")
    first.memory.context.Set("query", "hi")
    first.memory.user.Set("theme", "dark")
    first.memory.chat.Set("topic", "ai")
    second = YaoServices(store=store, user_id="u", chat_id="c", context_id="ctx-b")
    assert second.memory.context.Get("query") is None  # another request's context
    first.Release()  # what a hook calls: nothing happens
    assert first.memory.context.Get("query") == "hi"
    first.release()  # the end of the request
    assert [first.memory.context.Len(), second.memory.user.Get("theme"), second.memory.chat.Get("topic")] == [0, "dark", "ai"]


def test_services_for_a_request_take_ids_from_the_hook_context():
    """agent/context/context.go:23-48 and jsapi_memory_integration_test.go:473-517: user and team ids
    from the authorized info, the chat id from the request; without authorized info no user/team."""
    from agentctx_widgets.hooks.hook_context import HookContext

    store = MemoryStore()
    signed_in = HookContext(chat_id="chat789", authorized={"user_id": "user123", "team_id": "team456"})
    services = YaoServices.for_request(signed_in, context_id="ctx-1", store=store)
    assert [(ns.space, ns.id) for ns in (services.memory.user, services.memory.team, services.memory.chat,
                                         services.memory.context)] == [
        ("user", "user123"), ("team", "team456"), ("chat", "chat789"), ("context", "ctx-1")]
    anonymous = YaoServices.for_request(HookContext(chat_id="c"), context_id="ctx-2", store=store)
    assert anonymous.memory.present() == ("chat", "context")
    with pytest.raises(TypeError, match=r"^ctx\.authorized\.user_id: expected a string, got int$"):
        YaoServices.for_request(HookContext(authorized={"user_id": 7}), context_id="x")


def test_memory_ttl_expires_with_the_clock():
    """memory_integration_test.go:383-402: a 100 ms TTL is there before and gone after 150 ms. The JS
    binding takes milliseconds (jsapi.go:824-829); 0 means the space's default (memory.go:11-16):
    context 30 min, chat 24 h, user none."""
    clock = FakeClock(1000.0, wall_ms=0)
    memory = MemoryStore(clock=clock).memory(user_id="u", chat_id="c", context_id="x")
    memory.context.Set("temp", "value", 100)
    memory.context.Set("default", 1)
    memory.chat.Set("chat", 1)
    memory.user.Set("user", 1)
    memory.user.Set("forever", 1, -5)  # a negative TTL sets no expiry
    assert memory.context.Get("temp") == "value"
    clock.advance(0.150)
    assert (memory.context.Get("temp"), memory.context.Has("temp"), memory.context.Keys()) == (None, False, ["default"])
    clock.advance(30 * 60)  # past the context default (30 min), not the chat one
    assert (memory.context.Len(), memory.chat.Get("chat")) == (0, 1)
    clock.advance(24 * 3600)
    assert (memory.chat.Get("chat"), memory.user.Keys()) == (None, ["user", "forever"])


def test_memory_argument_errors_are_yaos():
    """jsapi.go:793, 815, 843, 859, 904, 929, 953: the binding's exception texts; keys are String()ed."""
    user = MemoryStore().memory(user_id="u").user
    for call, text in ((lambda: user.Get(), "Get requires a key argument"),
                       (lambda: user.Set("k"), "Set requires key and value arguments"),
                       (lambda: user.Del(), "Del requires a key argument"),
                       (lambda: user.Has(), "Has requires a key argument"),
                       (lambda: user.Incr(), "Incr requires a key argument"),
                       (lambda: user.Decr(), "Decr requires a key argument"),
                       (lambda: user.GetDel(), "GetDel requires a key argument")):
        with pytest.raises(YaoServiceError) as caught:
            call()
        assert str(caught.value) == text
    user.Set(1, "one")
    assert user.Get("1") == "one"
    with pytest.raises(YaoServiceError, match="^Failed to convert value: "):
        user.Set("bad", object())
    assert user.Keys() == ["1"]  # the refused Set left nothing behind


# -- trace --------------------------------------------------------------------------------------

def test_trace_sequential_nodes_auto_complete_and_record_updates():
    """trace/manager.go:104-217 (the first Add is the root; the next completes it and follows it),
    :322-374 (a log goes to the current node), node.go:243-262 (Fail logs "Node failed: …")."""
    clock = FakeClock(10.0, wall_ms=0)
    seen: list[dict] = []
    trace = Trace("T1", clock=clock, listener=seen.append)
    root = trace.Add({"query": "hi"}, {"label": "Create Hook", "icon": "play"})
    clock.now = 10.5
    step = trace.Add({"step": 2}, {"label": "Search"})
    trace.Info("searching")
    clock.now = 11.0
    step.Fail("timeout")
    assert (root.id, step.id) == ("N1", "N2")
    assert trace.nodes["N1"] == {"id": "N1", "parent_ids": [], "children": ["N2"], "label": "Create Hook",
                                 "type": "", "icon": "play", "description": "", "status": "completed",
                                 "input": {"query": "hi"}, "created_at": 10000, "start_time": 10000,
                                 "end_time": 10500, "updated_at": 10500}
    assert (trace.nodes["N2"]["parent_ids"], trace.nodes["N2"]["status"]) == (["N1"], "failed")
    assert [(u["type"], u["node_id"]) for u in seen] == [("node_start", "N1"), ("node_complete", "N1"),
                                                        ("node_start", "N2"), ("log_added", "N2"),
                                                        ("log_added", "N2"), ("node_failed", "N2")]
    assert seen[1]["data"] == {"node_id": "N1", "status": "success", "end_time": 10500, "duration": 500}
    assert [log["message"] for log in trace.logs] == ["searching", "Node failed: timeout"]
    assert seen[-1]["data"] == {"node_id": "N2", "status": "failed", "end_time": 11000, "duration": 500,
                                "error": "timeout"}


def test_trace_add_drops_type_as_yao_does_and_node_add_keeps_it():
    """trace/jsapi/trace.go:196-209 reads only label/icon/description; node.go:21-40 reads type too."""
    trace = Trace(clock=FakeClock(1000.0, wall_ms=0))
    parent = trace.Add({}, {"label": "Parent", "type": "preprocessing"})
    child = parent.Add({"x": 1}, {"label": "Child", "type": "validation"})
    assert (trace.nodes[parent.id]["type"], trace.nodes[child.id]["type"]) == ("", "validation")
    assert [d["code"] for d in trace.diagnostics] == ["yao_trace_option_dropped"]
    assert trace.current == [parent.id]  # node.Add does not move the current node (node.go:69-101)


def test_trace_parallel_marks_complete_and_errors():
    """manager.go:219-320 (Parallel needs a root; branches share the first current parent),
    :536-574 (MarkComplete once); trace/jsapi/trace.go:186, 234, 415."""
    clock = FakeClock(1.0, wall_ms=0)
    trace = Trace(clock=clock)
    with pytest.raises(YaoServiceError, match="^root node does not exist, please call Add first"):
        trace.Parallel([{"input": {}, "option": {"label": "A"}}])
    trace.Add({}, {"label": "root"})
    branches = trace.Parallel([{"input": {"u": 1}, "option": {"label": "A"}}, {"input": {"u": 2}}])
    assert [trace.nodes[b.id]["parent_ids"] for b in branches] == [["N1"], ["N1"]]
    assert trace.current == ["N2", "N3"]
    clock.now = 3.0
    trace.MarkComplete()
    trace.MarkComplete()
    completes = [u for u in trace.updates if u["type"] == "complete"]
    assert [u["data"] for u in completes] == [{"trace_id": "T1", "status": "completed", "total_duration": 2000}]
    assert trace.IsComplete() is True
    for call, text in ((trace.Add, "Add requires at least 1 argument: (input, option?)"),
                       (trace.Fail, "Fail requires an error message"),
                       (trace.node("N1").Add, "Add requires 2 arguments: (input, option)")):
        with pytest.raises(YaoServiceError) as caught:
            call()
        assert str(caught.value) == text


def test_trace_tree_and_spaces():
    """The tree nests children as upstream's node JSON does (types.go:58-71); CreateSpace / GetSpace
    return the space record (manager.go:576-633, types.go:48-56, 75-80)."""
    clock = FakeClock(2.0, wall_ms=0)
    trace = Trace(clock=clock)
    root = trace.Add("start", {"label": "root"})
    root.Add({"k": 1}, {"label": "child", "type": "step"})
    tree = trace.tree()
    assert (tree["id"], [c["label"] for c in tree["children"]], tree["children"][0]["children"]) == ("N1", ["child"], [])
    space = trace.CreateSpace({"label": "Results", "type": "search", "ttl": 60})
    assert space == {"id": "S1", "label": "Results", "type": "search", "icon": "", "description": "", "ttl": 60,
                     "created_at": 2000, "updated_at": 2000}
    assert trace.GetSpace("S1") == space
    with pytest.raises(YaoServiceError, match="^space not found: S9$"):
        trace.GetSpace("S9")


def test_memory_namespace_has_exactly_the_bindings_methods():
    """agent/context/jsapi.go:790-970 sets these ten methods on a namespace object, no list operations."""
    from agentctx_widgets.yao.memory import JS_METHODS

    namespace = MemoryStore().memory(user_id="u").user
    assert JS_METHODS == ("Get", "Set", "Del", "Has", "Keys", "Len", "Clear", "Incr", "Decr", "GetDel")
    assert all(callable(getattr(namespace, name)) for name in JS_METHODS)
    assert not hasattr(namespace, "Push")


# -- llm ----------------------------------------------------------------------------------------

def test_llm_stream_chunks_and_result():
    """agent/llm/jsapi.go:376-420 (each text chunk a delta message with chunk and message ids, to onChunk
    then to the client) and jsapi_types.go:16-22 (the result). 'Hello world!' in chunks of 5 is
    'Hello', ' worl', 'd!'. The request had used M1 already, so this message is M2."""
    next_id = counters()
    next_id("M")
    seen, sent = [], []
    services = YaoServices(model=ScriptedModel(["Hello world!"], chunk_size=5,
                                               usage={"prompt_tokens": 3, "completion_tokens": 2}),
                           next_id=next_id, send=sent.append, clock=FakeClock(1700000000.5, wall_ms=0))
    result = services.llm.Stream("gpt-4o", [{"role": "user", "content": "Say hello"}],
                                 {"temperature": 0, "onChunk": lambda msg: seen.append(msg) or 0})
    chunks = [{"type": "text", "props": {"content": piece}, "chunk_id": f"C{n}", "message_id": "M2", "delta": True}
              for n, piece in enumerate(["Hello", " worl", "d!"], start=1)]
    assert seen == chunks
    assert sent == chunks
    assert result == {"connector": "gpt-4o", "content": "Hello world!", "response": {
        "id": "", "object": "chat.completion", "created": 1700000000, "model": "scripted", "role": "assistant",
        "content": "Hello world!", "finish_reason": "stop",
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}}
    model = services.llm.default
    assert model.calls == [[{"type": 2, "content": [{"type": "text", "text": "Say hello"}]}]]


def test_llm_stream_picks_the_connector_and_reports_failures_as_results():
    """agent/llm/jsapi.go:82-94 (connector, then messages: failures are the result's error) and
    jsapi_llm.go:93-112 (argument errors are thrown)."""
    deepseek = ScriptedModel(["from deepseek"])
    services = YaoServices(connectors={"deepseek.v3": deepseek})
    assert services.llm.Stream("deepseek.v3", [{"role": "user", "content": "x"}])["content"] == "from deepseek"
    missing = services.llm.Stream("gpt-4o", [{"role": "user", "content": "x"}])
    assert missing["error"].startswith("failed to select connector gpt-4o: no model for it here")
    assert services.llm.Stream("deepseek.v3", [{"content": "x"}]) == {
        "connector": "deepseek.v3", "error": "failed to parse messages: message 0 missing role"}
    assert services.llm.Stream("deepseek.v3", ["x"])["error"] == "failed to parse messages: message 0 is not an object"
    for args, text in ((("gpt-4o",), "Stream requires connector and messages parameters"),
                       ((1, []), "connector must be a string"),
                       (("gpt-4o", {}), "messages must be an array")):
        with pytest.raises(YaoServiceError) as caught:
            services.llm.Stream(*args)
        assert str(caught.value) == text
    assert len(deepseek.calls) == 1  # only the good call reached the model


def test_llm_stream_error_chunk_and_stop_by_onchunk():
    """agent/llm/jsapi.go:491-506 (an error chunk {type: error, props: {error}} ends the stream) and
    :407-411 (onChunk returning non-zero stops; that chunk is not sent to the client)."""
    seen, sent = [], []
    failing = YaoServices(model=ScriptedModel([{"text": "Hi", "error": "boom"}]), send=sent.append)
    result = failing.llm.Stream("m", [{"role": "user", "content": "x"}], {"onChunk": seen.append})
    assert result == {"connector": "m", "error": "LLM stream failed: boom"}
    assert seen == [{"type": "text", "props": {"content": "Hi"}, "chunk_id": "C1", "message_id": "M1", "delta": True},
                    {"type": "error", "props": {"error": "boom"}}]
    assert sent == seen
    sent.clear()
    stopping = YaoServices(model=ScriptedModel(["Hello world!"], chunk_size=5), send=sent.append)
    stopped = stopping.llm.Stream("m", [{"role": "user", "content": "x"}], {"onChunk": lambda msg: 1})
    assert (sent, stopped["content"]) == ([], "Hello")


class AsyncOnlyModel:
    """A model whose stream is async only (as the SDK connectors' are); it logs what it yields."""

    def __init__(self, pieces: list[str], log: list) -> None:
        self.pieces, self.log = pieces, log

    def stream(self, messages, *, options=None):
        async def events():
            try:
                yield {"type": "text_start", "contentIndex": 0}
                for piece in self.pieces:
                    self.log.append(("model", piece))
                    yield {"type": "text_delta", "contentIndex": 0, "delta": piece}
                yield {"type": "text_end", "contentIndex": 0}
                yield {"type": "done"}
            finally:
                self.log.append(("closed",))

        return events()


def test_llm_stream_reads_an_async_model_live_inside_or_outside_a_running_loop():
    """Each chunk reaches onChunk as the model yields it (a hook sees progress), whether the call comes
    from plain code or from inside a running event loop; stopping early closes the model's stream."""
    import asyncio

    log: list = []
    services = YaoServices(model=AsyncOnlyModel(["a", "b"], log))
    on_chunk = {"onChunk": lambda msg: log.append(("chunk", msg["props"]["content"])) or 0}
    assert services.llm.Stream("m", [{"role": "user", "content": "x"}], on_chunk)["content"] == "ab"
    assert log == [("model", "a"), ("chunk", "a"), ("model", "b"), ("chunk", "b"), ("closed",)]

    async def inside_a_loop():
        return services.llm.Stream("m", [{"role": "user", "content": "x"}], {"onChunk": lambda msg: 1})

    log.clear()
    assert asyncio.run(inside_a_loop())["content"] == "a"
    assert log == [("model", "a"), ("closed",)]


def test_llm_batch_calls():
    """agent/llm/jsapi.go:578-624 (requests without a connector string or messages array are skipped;
    the global onChunk gets connector and index), :663-775 (Any: the first success alone, else every
    error; Race: the first result). Here the requests run in order."""
    seen = []
    services = YaoServices(connectors={"good": ScriptedModel(["ok"]), "bad": ScriptedModel([{"error": "down"}])})
    ask = [{"role": "user", "content": "x"}]
    results = services.llm.All([{"connector": "bad", "messages": ask}, {"connector": 3, "messages": ask},
                                {"connector": "good", "messages": ask}],
                               {"onChunk": lambda name, index, msg: seen.append((name, index, msg["type"]))})
    assert [(r["connector"], r.get("content"), r.get("error")) for r in results] == [
        ("bad", None, "LLM stream failed: down"), ("good", "ok", None)]
    assert seen == [("bad", 0, "error"), ("good", 2, "text")]
    assert [r["connector"] for r in services.llm.Any([{"connector": "bad", "messages": ask},
                                                      {"connector": "good", "messages": ask}])] == ["good"]
    assert [r["error"] for r in services.llm.Any([{"connector": "bad", "messages": ask}] * 2)] == [
        "LLM stream failed: down"] * 2
    assert [r["connector"] for r in services.llm.Race([{"connector": "bad", "messages": ask},
                                                       {"connector": "good", "messages": ask}])] == ["bad"]
    with pytest.raises(YaoServiceError, match="^requests must be an array$"):
        services.llm.All({})


# -- agent --------------------------------------------------------------------------------------

def test_agent_call_runs_another_assistant_and_traces_it():
    """agent/caller/jsapi.go:112-134 (skip.history forced), types.go:28-65 (the result, content from the
    completion), orchestrator.go:261-295 (an "Agent: <id>" agent_call node, completed)."""
    calls = []

    def runner(agent_id, messages, options, on_message):
        calls.append((agent_id, messages, options))
        on_message({"type": "text", "props": {"content": "sub"}})
        return {"assistant_id": agent_id, "completion": {"content": [{"type": "text", "text": "done"}]}}

    chunks = []
    services = YaoServices(agents=runner, clock=FakeClock(1000.0, wall_ms=0))
    result = services.agent.Call("tests.next", [{"role": "user", "content": "go"}, "skipped"],
                                 {"connector": "gpt-4o", "skip": {"trace": True}, "onChunk": chunks.append})
    assert result == {"agent_id": "tests.next", "content": "done", "response": {
        "assistant_id": "tests.next", "completion": {"content": [{"type": "text", "text": "done"}]}}}
    assert calls == [("tests.next", [{"role": "user", "content": "go"}],
                      {"connector": "gpt-4o", "skip": {"trace": True, "history": True}})]
    assert chunks == [{"type": "text", "props": {"content": "sub"}}]
    node = services.trace.nodes["N1"]
    assert (node["label"], node["type"], node["icon"], node["status"], node["output"]) == (
        "Agent: tests.next", "agent_call", "smart_toy", "completed", {"agent_id": "tests.next", "status": "completed"})


def test_agent_call_failures_are_results():
    """orchestrator.go:235-286: "failed to get agent: …" and "agent call failed: …" (the node fails);
    jsapi_agent.go:89-107 for the thrown argument errors."""
    def runner(agent_id, messages, options, on_message):
        if agent_id == "nope":
            raise LookupError("assistant nope not found")
        raise RuntimeError("boom")

    services = YaoServices(agents=runner, clock=FakeClock(1000.0, wall_ms=0))
    assert services.agent.Call("nope", []) == {"agent_id": "nope", "error": "failed to get agent: assistant nope not found"}
    assert services.agent.Call("bad", []) == {"agent_id": "bad", "error": "agent call failed: boom"}
    # upstream adds no node for an unknown id (the lookup comes first); our runner looks it up as it runs
    assert [services.trace.nodes[n]["status"] for n in ("N1", "N2")] == ["failed", "failed"]
    assert YaoServices().agent.Call("x", [])["error"].startswith("failed to get agent: x: no assistants are loaded here")
    for args, text in ((("x",), "Call requires agentID and messages parameters"),
                       ((1, []), "agentID must be a string"), (("x", "m"), "messages must be an array")):
        with pytest.raises(YaoServiceError) as caught:
            services.agent.Call(*args)
        assert str(caught.value) == text


def test_agent_any_returns_one_slot_per_request():
    """agent/caller/orchestrator.go:71-136: Any returns one slot per request — the first success, what
    reached the collector before it, None for what came after (Yao: null or filled by chance; here always
    None). "up" is the only success; "down" fails before it answers and "later" after, but each slot
    races "up"'s to the collector, so each is its error or None."""
    import threading

    failed, answered = threading.Event(), threading.Event()

    def runner(agent_id, messages, options, on_message):
        if agent_id == "down":
            failed.set()
            raise RuntimeError("down")
        if agent_id == "later":
            answered.wait(5)
            raise RuntimeError("late")
        failed.wait(5)
        answered.set()
        return {"completion": {"content": agent_id}}

    services = YaoServices(agents=runner)
    results = services.agent.Any([{"agent": "down", "messages": []}, {"agent": "up", "messages": []},
                                  {"agent": "later", "messages": []}])
    assert len(results) == 3
    assert results[1] == {"agent_id": "up", "content": "up", "response": {"completion": {"content": "up"}}}
    assert results[0] in (None, {"agent_id": "down", "error": "agent call failed: down"})
    assert results[2] in (None, {"agent_id": "later", "error": "agent call failed: late"})


# -- mcp, search, unavailable members -----------------------------------------------------------

def test_mcp_answered_by_registered_callables():
    """agent/context/jsapi_mcp.go:110-150 (CallTool returns the parsed result), :154-215 (CallTools)."""
    ran = []
    mcp = Mcp()
    mcp.register("echo", {"echo": lambda args: ran.append(args) or {"echo": args.get("message")}},
                 schemas={"echo": {"description": "Echo a message"}})
    services = YaoServices(mcp=mcp)
    assert services.mcp.CallTool("echo", "echo", {"message": "hello"}) == {"echo": "hello"}
    assert services.mcp.ListTools("echo") == {"tools": [{"name": "echo", "description": "Echo a message",
                                                         "inputSchema": {"type": "object", "properties": {}}}]}
    with pytest.raises(YaoServiceError, match="^tool name is required$"):
        services.mcp.CallTools("echo", [{"name": "echo", "arguments": {"message": "a"}}, {"arguments": {}}])
    assert ran == [{"message": "hello"}]  # the bad list ran nothing
    assert services.mcp.All([{"mcp": "echo", "tool": "echo", "arguments": {"message": "b"}},
                             {"mcp": "weather", "tool": "now"}]) == [
        {"mcp": "echo", "tool": "echo", "result": {"echo": "b"}},
        {"mcp": "weather", "tool": "now", "error": "MCP server 'weather' is not available here: register one with "
                                                   "services.mcp.register('weather', McpServer.stdio(command, args)) "
                                                   "or load_assistant(path, mcp={'weather': McpServer…}), or with "
                                                   "Python functions: services.mcp.register('weather', "
                                                   "{'tool_name': function})"}]


def test_mcp_and_search_say_how_to_register():
    """Unregistered servers and search kinds fail only the call, naming the member and what to do."""
    services = YaoServices()
    with pytest.raises(NotAvailableHere) as caught:
        services.mcp.CallTool("weather", "now")
    assert caught.value.member == "ctx.mcp"
    assert "services.mcp.register('weather'" in str(caught.value)
    with pytest.raises(NotAvailableHere, match=r"^MCP server 'echo' is not available here"):
        services.mcp.ReadResource("echo", "echo://info")
    services.mcp.register("echo", {"echo": lambda args: args})  # Python functions: tools only, no resources
    with pytest.raises(NotAvailableHere, match=r"ctx\.mcp\.ReadResource is not available here"):
        services.mcp.ReadResource("echo", "echo://info")
    with pytest.raises(YaoServiceError, match="^ReadResource requires mcp and uri parameters$"):
        services.mcp.ReadResource("echo")
    with pytest.raises(NotAvailableHere) as searched:
        services.search.Web("yao agents")
    assert (searched.value.member, str(searched.value)) == (
        "ctx.search", "ctx.search.Web is not available here: register one with "
                      "services.search.register('web', function(query, options))")
    with pytest.raises(YaoServiceError, match="^query must be a string$"):
        services.search.KB(3)


def test_search_registered_handler_and_any():
    """agent/context/jsapi_search.go:70-120 (Web(query, options)), :225-231 (batch requests {type, query})."""
    search = Search()
    search.register("kb", lambda query, options: {"items": [query.upper()], "options": options})
    services = YaoServices(search=search)
    assert services.search.KB("yao", {"limit": 2}) == {"items": ["YAO"], "options": {"limit": 2}}
    # agent/search/search.go:152-209: one slot per request, run at once; the failing "web" slot races the
    # success to the collector, so it is its error or None
    found = services.search.Any([{"type": "web", "query": "x"}, {"type": "kb", "query": "y", "limit": 1}])
    assert len(found) == 2 and found[1] == {"items": ["Y"], "options": {"limit": 1}}
    assert found[0] is None or found[0]["error"].startswith("ctx.search.Web is not available here")


def test_sandbox_and_computer_fail_only_when_called():
    """agent/context/jsapi.go:155-171: sandbox/computer/workspace exist only when configured; here the
    first two cannot be emulated and say so, and workspace is absent unless a directory is passed."""
    services = YaoServices()
    assert services.members() == ("memory", "trace", "mcp", "search", "agent", "llm", "sandbox", "computer")
    with pytest.raises(NotAvailableHere) as caught:
        services.sandbox.Exec(["ls"])
    assert (caught.value.member, str(caught.value)) == (
        "ctx.sandbox", "ctx.sandbox.Exec is not available here: the assistant's sandbox (a container Yao starts "
                       "from package.yao's \"sandbox\") cannot run in the notebook")
    with pytest.raises(NotAvailableHere, match=r"^ctx\.computer\.VNC is not available here: "):
        services.computer.VNC()


# -- workspace ----------------------------------------------------------------------------------

def test_workspace_file_operations(tmp_path):
    """agent/context/jsapi_workspace.go:39-280: ReadFile a string, ReadDir [{name, is_dir, size}],
    Stat {name, size, is_dir, mode, mtime}, Exists false only when missing."""
    services = YaoServices(workspace=tmp_path)
    ws = services.workspace
    ws.MkdirAll("out/deep")
    ws.WriteFile("/out/a.txt", "héllo")  # a leading slash is the workspace root
    ws.Copy("out/a.txt", "out/b.txt")
    ws.Rename("out/b.txt", "out/c.txt")
    assert (tmp_path / "out" / "a.txt").read_bytes() == "héllo".encode()
    assert ws.ReadFile("out/c.txt") == "héllo"
    assert ws.ReadDir("out") == [{"name": "a.txt", "is_dir": False, "size": 6},
                                 {"name": "c.txt", "is_dir": False, "size": 6},
                                 {"name": "deep", "is_dir": True, "size": (tmp_path / "out" / "deep").stat().st_size}]
    stat = ws.Stat("out/a.txt")
    assert (stat["name"], stat["size"], stat["is_dir"]) == ("a.txt", 6, False)
    assert (ws.Exists("out/c.txt"), ws.Exists("nope")) == (True, False)
    ws.Remove("out/c.txt")
    ws.RemoveAll("out")
    assert os.listdir(tmp_path) == []
    assert "workspace" in services.members()
    with pytest.raises(YaoServiceError, match="^ReadFile failed: "):
        ws.ReadFile("missing.txt")
    with pytest.raises(YaoServiceError, match="^WriteFile requires path and content arguments$"):
        ws.WriteFile("x")


def test_workspace_refuses_escapes(tmp_path):
    """Paths resolve inside the root; '..', an absolute path out, and a symlink pointing out are refused
    before anything is written."""
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("keep")
    (root / "link").symlink_to(tmp_path)
    ws = Workspace(root)
    for path in ("../secret.txt", "/../secret.txt", "link/secret.txt", "a/../../secret.txt"):
        with pytest.raises(YaoServiceError) as caught:
            ws.WriteFile(path, "overwritten")
        assert str(caught.value) == f"WriteFile failed: path escapes the workspace: {path}"
    with pytest.raises(YaoServiceError, match="^RemoveAll failed: refusing to remove the workspace root$"):
        ws.RemoveAll("/")
    assert outside.read_text() == "keep"
    with pytest.raises(ValueError, match="not a directory"):
        Workspace(outside)


# -- the binding's door -------------------------------------------------------------------------

def test_call_service_runs_methods_by_path_with_json_in_and_out(tmp_path):
    """What the JavaScript binding calls: memory, trace nodes as {"id"}, a chained log, the mounted shape."""
    from agentctx_widgets.yao.service_calls import call_service, mounted

    services = YaoServices(user_id="u", context_id="x", clock=FakeClock(1000.0, wall_ms=0))
    assert call_service(services, "memory.user.Set", ["k", {"v": 1}]) is None
    assert call_service(services, "memory.user.Get", ["k"]) == {"v": 1}
    node = call_service(services, "trace.Add", [{"q": 1}, {"label": "Step"}])
    assert node == {"id": "N1"}
    assert call_service(services, "trace.node.Info", ["N1", "hello"]) == {"id": "N1"}
    assert call_service(services, "trace.Info", ["again"]) is None
    assert [log["message"] for log in services.trace.logs] == ["hello", "again"]
    assert mounted(services) == {
        "memory": {space: list(MEMORY_METHODS) for space in ("user", "context")},
        "trace": list(METHODS["trace"]), "mcp": list(METHODS["mcp"]), "search": list(METHODS["search"]),
        "agent": list(METHODS["agent"]), "llm": list(METHODS["llm"]), "sandbox": list(METHODS["sandbox"]),
        "computer": list(METHODS["computer"]), "trace_id": "T1"}
    with pytest.raises(NotAvailableHere, match=r"^ctx\.memory\.team is not available: this request has no team id"):
        call_service(services, "memory.team.Get", ["k"])
    with pytest.raises(NotAvailableHere, match=r"^ctx\.workspace is not available"):
        call_service(services, "workspace.ReadFile", ["a"])
    for path in ("memory.user.__class__", "trace._log", "llm.connectors", "os.system", "memory.user.Push"):
        with pytest.raises(ValueError, match="^call_service: no ctx method at"):
            call_service(services, path, [])
