"""Yao's upstream Go tests (YaoApp/yao @ afab9c2), ported to our JavaScript hook engine and runner.

Every expectation comes from the research notes on Yao (``A-server.md``; §8 lists the upstream cases
T1-T29, §8.6 the derived ones) and from the README sections "Behaving like Yao, and saying so:
diagnostics" and "Where we differ from Yao, and why". Each test's docstring cites the upstream
``file:line`` it ports. The Go tests call ``v8.Call(..., "function test(ctx){...}", ctx)`` and read
the function's return value; here a hook reports what it saw through a host global
(``hooks_from_js(src, globals={"report": got.append})``), and "ok" means nothing was thrown.

Where our kit deliberately differs from Yao (README, "Where we differ from Yao"), the test asserts our
documented behaviour and says so: ``accept`` defaults to ``"cui-web"``; a ``tool_call`` for a
standard client carries the seed's ``name`` / ``arguments``; messages are buffered until ``Flush``;
Errors Yao throws are followed by `` (got <what the value was>)``; ``new Output(ctx)`` exists.
"""

from __future__ import annotations

import functools
import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from agentctx_widgets import Context, ContextView, Output, ScriptedModel, hooks_from_js, run_turn
from agentctx_widgets.hooks import HookContext
from agentctx_widgets.output import CuiAdapter, StandardAdapter
from agentctx_widgets.output.diagnostics import DIAGNOSTICS, DiagnosticError, diagnostic

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises

# ---- helpers ------------------------------------------------------------------------------------


class RecordingSink:
    def __init__(self) -> None:
        self.messages: list[dict] = []

    def write(self, messages: list[dict]) -> None:
        self.messages.extend(messages)


def call(hooks, name, *args, output: Output | None = None, **fields):
    """Call one hook with a fresh ``HookContext`` bound to ``output``; (result, messages flushed)."""
    output = output if output is not None else Output(accept=fields.get("accept", "cui-web"))
    sink = output.add_sink(RecordingSink())
    result = asyncio.run(hooks.call(name, HookContext(output=output, **fields), *args))
    output.flush()
    return result, sink.messages


def create_body(body: str, *, accept: str = "cui-web", **fields):
    """Run ``function Create(ctx, messages) { body }`` against an Output with the client adapter for
    ``accept`` (as run_turn picks it). Returns (reported values, adapter, output)."""
    got: list[Any] = []
    hooks = hooks_from_js("function Create(ctx, messages) {\n" + body + "\n}", globals={"report": got.append})
    output = Output(accept=accept)
    adapter = output.add_sink(StandardAdapter() if accept == "standard" else CuiAdapter())
    call(hooks, "Create", [], output=output, accept=accept, **fields)
    return got, adapter, output


def chunk(content_delta: dict, msg_id: str = "") -> dict:
    """A standard client's chunk as Yao's OpenAI writer sends it (converter.go:318-331), without ``created``."""
    return {"id": msg_id, "object": "chat.completion.chunk", "model": "yao-agent",
            "choices": [{"index": 0, "delta": content_delta, "finish_reason": None}]}


def without_created(chunks: list[Any]) -> list[Any]:
    """The chunks with ``created`` (time.Now().Unix(), an int) checked and removed; other payloads as is."""
    out = []
    for item in chunks:
        if isinstance(item, dict) and "choices" in item:
            assert isinstance(item["created"], int) and item["created"] > 1_600_000_000, item
            item = {key: value for key, value in item.items() if key != "created"}
        out.append(item)
    return out


def line_of(source: str, text: str) -> int:
    """The 1-based line of ``source`` holding ``text``."""
    (number,) = [i for i, line in enumerate(source.split("\n"), 1) if text in line]
    return number


class RecordingModel:
    """A model with ``stream(messages, options)`` that records both (ScriptedModel records messages only)."""

    def __init__(self, reply: str = "ok") -> None:
        self.inner = ScriptedModel([reply])
        self.options: list[dict | None] = []
        self.calls: list[list[dict]] = []

    def stream(self, messages: list[dict], *, options: dict | None = None):
        self.options.append(options)
        self.calls.append(messages)
        return self.inner.stream(messages, options=options)


def user(text: str) -> dict:
    return {"type": 2, "content": [{"type": "text", "text": text}]}


def system(text: str) -> dict:
    return {"type": 1, "content": [{"type": "text", "text": text}]}


def caught(expression: str) -> str:
    """JS: run ``expression``, report ``"ok"`` or ``[e.name, e.message, String(e)]``."""
    return f"try {{ {expression}; report('ok'); }} catch (e) {{ report([e.name, e.message, String(e)]); }}"


def assert_threw(reported: Any, message: str) -> None:
    """A plain Error (bridge.JsException throws ``new Error(text)``) with exactly ``message``."""
    assert reported == ["Error", message, "Error: " + message]


# ---- 8.1 agent/context/jsapi_output_test.go: ctx.Send / SendGroup / Flush ------------------------


def test_t1a_send_string_reaches_a_standard_client_as_one_chunk():
    """T1(a) agent/context/jsapi_output_test.go:58-67: ``ctx.Send("Hello World")`` is ok. Derived wire
    (A-server §8.1; string shorthand jsapi_helpers.go:14-21, role on the first text chunk
    openai/writer.go:78-88, id "" for a message without one converter.go:318-331)."""
    got: list[Any] = []
    hooks = hooks_from_js('function Create(ctx, messages) {\n' + caught('ctx.Send("Hello World")') + '\n}',
                          globals={"report": got.append})
    model = RecordingModel("ok")
    result = run_turn(Context(), "hi", model=model, hooks=hooks, accept="standard", locale="en")
    assert got == ["ok"] and result.ok
    chunks = without_created(result.chunks)
    assert chunks[0] == chunk({"content": "Hello World", "role": "assistant"})
    # the runner's reply follows: no second role (only the first text/thinking chunk has it), then [DONE]
    assert chunks[1]["choices"][0]["delta"] == {"content": "ok"}
    assert chunks[-1] == "[DONE]" and len(chunks) == 3


def test_t1b_send_object_with_id_and_metadata():
    """T1(b) agent/context/jsapi_output_test.go:79-98: a text object with ``id`` and
    ``metadata {timestamp: Date.now(), sequence: 1}`` is ok; the chunk's id is the message id
    (converter.go:318-331); the CUI wire keeps metadata.timestamp/sequence (jsapi_helpers.go:84-96)."""
    body = ('const t = Date.now(); report(t);\n' + caught(
        'ctx.Send({type:"text", props:{content:"Hello from JavaScript"}, id:"msg_123", '
        'metadata:{timestamp: t, sequence: 1}})'))
    got, adapter, _ = create_body(body, accept="standard")
    assert got[1] == "ok"
    assert without_created(adapter.chunks) == [chunk({"content": "Hello from JavaScript", "role": "assistant"}, "msg_123")]
    got, adapter, _ = create_body(body, accept="cui-web")
    stamp = got[0]
    assert got[1] == "ok"
    assert adapter.chunks == [{"type": "text", "props": {"content": "Hello from JavaScript"}, "id": "msg_123",
                               "metadata": {"timestamp": stamp, "sequence": 1}}]


T2_GROUP = ('ctx.SendGroup({id:"group_123", messages:[{type:"text", props:{content:"First message"}}, '
            '{type:"text", props:{content:"Second message"}}, {type:"loading", props:{message:"Processing..."}}], '
            'metadata:{timestamp: 1700000000000, sequence: 1}})')


def test_t2_send_group_standard_gets_each_member_loading_as_reasoning():
    """T2 agent/context/jsapi_output_test.go:111-164: SendGroup of three members is ok. Derived: a
    standard client gets each member converted in turn, no group marker (openai/writer.go:102-119);
    ``loading`` becomes ``reasoning_content`` (converter.go:81-90)."""
    got, adapter, _ = create_body(caught(T2_GROUP), accept="standard")
    assert got == ["ok"]
    assert without_created(adapter.chunks) == [
        chunk({"content": "First message", "role": "assistant"}),
        chunk({"content": "Second message"}),
        chunk({"reasoning_content": "Processing..."}),
    ]


def test_t2_send_group_cui_gets_one_group_event():
    """T2 agent/context/jsapi_output_test.go:111-164, derived CUI wire: ONE ``{id, messages, metadata}``
    event (cui/writer.go:58-74), members not tagged with the group id (message/types.go:68-72)."""
    got, adapter, _ = create_body(caught(T2_GROUP), accept="cui-web")
    assert got == ["ok"]
    assert adapter.chunks == [{
        "id": "group_123",
        "messages": [{"type": "text", "props": {"content": "First message"}},
                     {"type": "text", "props": {"content": "Second message"}},
                     {"type": "loading", "props": {"message": "Processing..."}}],
        "metadata": {"timestamp": 1700000000000, "sequence": 1},
    }]


def test_t3_flush_and_send_return_undefined():
    """T3 agent/context/jsapi_output_test.go:167-204: ``ctx.Send("Processing..."); ctx.Flush();`` is ok;
    both return undefined (jsapi.go:187, :219-230)."""
    got, adapter, _ = create_body('report(ctx.Send("Processing...") === undefined); report(ctx.Flush() === undefined);')
    assert got == [True, True]
    assert adapter.chunks == [{"type": "text", "props": {"content": "Processing..."}}]


T4_BODY = """
ctx.Send({type:"text", props:{content:"Hello"}, id:"msg_1", delta:false});
ctx.Send({type:"text", props:{content:" World"}, id:"msg_1", delta:true, delta_path:"content", delta_action:"append"});
ctx.Send({type:"text", props:{}, id:"msg_1", done:true});
report("ok");
"""


def test_t4_delta_updates_standard():
    """T4 agent/context/jsapi_output_test.go:207-264: three Sends, all ok. Derived standard wire: chunks
    "Hello" and " World"; the third (done && !delta) is skipped (openai/adapter.go:96-98)."""
    got, adapter, output = create_body(T4_BODY, accept="standard")
    assert got == ["ok"]
    assert without_created(adapter.chunks) == [chunk({"content": "Hello", "role": "assistant"}, "msg_1"),
                                               chunk({"content": " World"}, "msg_1")]


def test_t4_delta_updates_cui_wire_and_the_bare_done_diagnostic():
    """T4 agent/context/jsapi_output_test.go:207-264, derived CUI wire (omitempty, message/types.go:34-58):
    the third is ``{"type":"text","id":"msg_1","done":true}``. README: a bare done keeps the text here
    (diagnostic ``bare_done_kept``), where CUI 9c35de9 blanks it."""
    got, adapter, output = create_body(T4_BODY, accept="cui-web")
    assert got == ["ok"]
    assert adapter.chunks == [
        {"type": "text", "props": {"content": "Hello"}, "id": "msg_1"},
        {"type": "text", "props": {"content": " World"}, "id": "msg_1", "delta": True, "delta_path": "content",
         "delta_action": "append"},
        {"type": "text", "id": "msg_1", "done": True},
    ]
    assert output.state["messages"]["msg_1"]["props"] == {"content": "Hello World"}
    assert [(d["code"], d["where"]) for d in output.diagnostics] == [("bare_done_kept", "message 'msg_1'")]


T5_BODY = """
ctx.Send({type:"text", props:{content:"Hello"}});
ctx.Send({type:"thinking", props:{content:"Let me think..."}});
ctx.Send({type:"loading", props:{message:"Processing..."}});
ctx.Send({type:"tool_call", props:{id:"call_123", name:"get_weather", arguments:'{"location": "San Francisco"}'}});
ctx.Send({type:"error", props:{message:"Something went wrong", code:"ERR_500"}});
ctx.Send({type:"image", props:{url:"https://example.com/image.jpg", alt:"Example image", width:800, height:600}});
ctx.Flush();
report("ok");
"""


def test_t5_multiple_types_standard_chunks():
    """T5 agent/context/jsapi_output_test.go:267-348: six Sends then Flush, ok. Derived standard chunks
    (A-server §8.1): thinking/loading → reasoning_content (converter.go:69-90); error → not a chunk but
    ``{"error": {code, message, type: code}}`` (:119-132) and the stream goes on; image →
    ``![alt](url)`` (:222-250). tool_call: Yao reads only ``props.id`` / ``props.function``
    (:93-116) and would send ``[{"id":"call_123","type":"function"}]``; README ("a standard client's
    tool_call") documents that we add the seed's ``name`` / ``arguments`` as ``function`` — no index."""
    got, adapter, _ = create_body(T5_BODY, accept="standard")
    assert got == ["ok"]
    assert without_created(adapter.chunks) == [
        chunk({"content": "Hello", "role": "assistant"}),
        chunk({"reasoning_content": "Let me think..."}),
        chunk({"reasoning_content": "Processing..."}),
        chunk({"tool_calls": [{"id": "call_123", "type": "function",
                               "function": {"name": "get_weather", "arguments": '{"location": "San Francisco"}'}}]}),
        {"error": {"message": "Something went wrong", "type": "ERR_500", "code": "ERR_500"}},
        chunk({"content": "![Example image](https://example.com/image.jpg)"}),
    ]


def test_t5_multiple_types_through_run_turn_standard():
    """T5 agent/context/jsapi_output_test.go:267-348 through ``run_turn(accept="standard")``: the error
    chunk does not end the stream (converter.go:119-132): the reply and ``[DONE]`` still follow."""
    hooks = hooks_from_js("function Create(ctx, messages) {\n" + T5_BODY + "\n}", globals={"report": lambda v: None})
    result = run_turn(Context(), "hi", model=ScriptedModel(["fine"]), hooks=hooks, accept="standard")
    assert result.ok
    chunks = without_created(result.chunks)
    assert chunks[3] == chunk({"tool_calls": [{"id": "call_123", "type": "function", "function": {
        "name": "get_weather", "arguments": '{"location": "San Francisco"}'}}]})
    assert chunks[4] == {"error": {"message": "Something went wrong", "type": "ERR_500", "code": "ERR_500"}}
    assert chunks[5] == chunk({"content": "![Example image](https://example.com/image.jpg)"})
    assert chunks[6]["choices"][0]["delta"] == {"content": "fine"}
    assert chunks[7:] == ["[DONE]"]


def test_t6_send_without_argument():
    """T6 agent/context/jsapi_output_test.go:351-385: ``ctx.Send()`` throws; error.message is
    ``Send requires a message argument`` (jsapi.go:172-174; checked :383-384)."""
    got, _, _ = create_body(caught("ctx.Send()"))
    assert_threw(got[0], "Send requires a message argument")


def test_t7_send_group_errors():
    """T7 agent/context/jsapi_output_test.go:388-442: ``ctx.SendGroup()`` throws
    ``SendGroup requires a group argument`` (jsapi.go:198-200; :420-421); ``ctx.SendGroup({id:"grp_1"})``
    throws (:441), derived ``invalid group: group.messages is required and must be an array``
    (jsapi_helpers.go:130) followed by what the value was (README)."""
    got, _, _ = create_body(caught("ctx.SendGroup()") + caught('ctx.SendGroup({id:"grp_1"})'))
    assert_threw(got[0], "SendGroup requires a group argument")
    assert_threw(got[1], "invalid group: group.messages is required and must be an array (got undefined)")


@pytest.mark.parametrize("accept", ["cui-web", "cui-native", "cui-desktop"])
def test_t8_cui_accepts_get_the_message_as_is(accept):
    """T8 agent/context/jsapi_output_test.go:445-487: for every CUI accept, ok; derived wire
    ``{"type":"text","props":{"content":"Hello CUI"}}`` (cui/writer.go:31-55, output.go:35-37)."""
    got: list[Any] = []
    hooks = hooks_from_js(
        'function Create(ctx, messages) {\n' + caught('ctx.Send({type:"text", props:{content:"Hello CUI"}}); ctx.Flush()')
        + '\nreport(ctx.accept);\n}', globals={"report": got.append})
    result = run_turn(Context(), "hi", model=ScriptedModel(["ok"]), hooks=hooks, accept=accept)
    assert got == ["ok", accept] and result.ok
    assert result.chunks[0] == {"type": "text", "props": {"content": "Hello CUI"}}


def test_t9_send_group_with_metadata():
    """T9 agent/context/jsapi_output_test.go:490-549: a group whose members and group carry
    ``metadata {timestamp, sequence, trace_id}`` is ok; the CUI event keeps them where they were
    (group metadata stays on the group, message/types.go:68-72; jsapi_helpers.go:205-217)."""
    body = """
    const t = Date.now(); report(t);
    """ + caught(
        'ctx.SendGroup({id:"group_with_metadata", messages:['
        '{type:"text", props:{content:"Message 1"}, metadata:{timestamp:t, sequence:1, trace_id:"trace_abc"}},'
        '{type:"text", props:{content:"Message 2"}, metadata:{timestamp:t, sequence:2, trace_id:"trace_abc"}}],'
        'metadata:{timestamp:t, sequence:1, trace_id:"trace_abc"}})')
    got, adapter, output = create_body(body)
    t = got[0]
    assert got[1] == "ok"
    assert adapter.chunks == [{
        "id": "group_with_metadata",
        "messages": [
            {"type": "text", "props": {"content": "Message 1"},
             "metadata": {"timestamp": t, "sequence": 1, "trace_id": "trace_abc"}},
            {"type": "text", "props": {"content": "Message 2"},
             "metadata": {"timestamp": t, "sequence": 2, "trace_id": "trace_abc"}},
        ],
        "metadata": {"timestamp": t, "sequence": 1, "trace_id": "trace_abc"},
    }]
    assert output.diagnostics == []


def test_t10_chained_calls_keep_their_order():
    """T10 agent/context/jsapi_output_test.go:552-593: Send Step 1-3, Flush, Send Step 4, Flush — ok, in
    order (derived). The first Flush delivers Steps 1-3 while the hook still runs (README: Send buffers
    until Flush, where Yao writes at once, cui/writer.go:77-81)."""
    seen: list[list[str]] = []
    sink = RecordingSink()
    hooks = hooks_from_js("""
    function Create(ctx, messages) {
      ctx.Send("Step 1"); ctx.Send("Step 2"); ctx.Send("Step 3");
      ctx.Flush(); probe();
      ctx.Send("Step 4");
      ctx.Flush(); probe();
    }""", globals={"probe": lambda: seen.append([m["props"]["content"] for m in sink.messages])})
    output = Output()
    output.add_sink(sink)
    call(hooks, "Create", [], output=output)
    assert seen == [["Step 1", "Step 2", "Step 3"], ["Step 1", "Step 2", "Step 3", "Step 4"]]


# ---- 8.6 derived error texts and the cases that succeed -------------------------------------------

ERROR_CASES = [
    # (JS call, Yao's text (A-server §1.3 / §2 / §8.6), what the value was, as the README adds it)
    ("ctx.Send(42)", "invalid message: message must be a string or object", "number 42"),
    ("ctx.Send(null)", "invalid message: message must be a string or object", "null"),
    ("ctx.Send(undefined)", "invalid message: message must be a string or object", "undefined"),
    ("ctx.Send(true)", "invalid message: message must be a string or object", "boolean true"),
    ("ctx.Send([1])", "invalid message: message must be an object", "an array"),
    ("ctx.Send(function(){})", "invalid message: message must be an object", "function"),
    ("ctx.Send(new Date())", "invalid message: message must be an object", "a Date"),
    ("ctx.Send({props:{}})", "invalid message: message.type is required and must be a string", "undefined"),
    ("ctx.Send({type: 5})", "invalid message: message.type is required and must be a string", "number 5"),
    ('ctx.SendGroup("x")', "invalid group: group must be an object", 'string "x"'),
    ("ctx.SendGroup(null)", "invalid group: group must be an object", "null"),
    ("ctx.SendGroup({messages: []})", "invalid group: group.id is required and must be a string", "undefined"),
    ('ctx.SendGroup({id: "g", messages: ["hi"]})', "invalid group: group.messages[0] must be an object", 'string "hi"'),
    ('ctx.SendGroup({id: "g", messages: [{props:{}}]})', "invalid group: group.messages[0].type is required",
     "undefined"),
]


@pytest.mark.parametrize(("expression", "yao_text", "value"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
@pytest.mark.parametrize("accept", ["cui-web", "standard"])
def test_derived_error_texts(expression, yao_text, value, accept):
    """A-server §8.6 table (jsapi.go:167-215, jsapi_helpers.go:12-147): ``e.message`` is Yao's text; the
    README adds `` (got <value>)``. ``ctx.Send(undefined)`` is one argument, so it fails in
    parseMessage, not with "requires a message argument" (A-server §1.1). Nothing is sent."""
    got, adapter, output = create_body(caught(expression), accept=accept)
    assert_threw(got[0], f"{yao_text} (got {value})")
    assert got[0][1].startswith(yao_text + " (got ")
    assert adapter.chunks == [] and output.messages == []


@pytest.mark.parametrize(("expression", "text"), [
    ('ctx.Send({type:"image", props:{alt:"x"}})', "Send failed: image message missing url"),
    ('ctx.SendGroup({id:"g", messages:[{type:"image"}]})', "SendGroup failed: image message missing url"),
])
def test_standard_image_without_url_fails_the_send(expression, text):
    """A-server §8.6 / §1.2: for accept "standard", Yao's converter refuses an image without a url
    (openai/converter.go:224-227), thrown as ``Send failed: …`` (jsapi.go:184) / ``SendGroup failed: …``
    (jsapi.go:210); nothing is sent. The same message is fine for CUI (derived)."""
    got, adapter, output = create_body(caught(expression), accept="standard")
    assert_threw(got[0], text)
    assert adapter.chunks == [] and output.messages == []
    got, adapter, _ = create_body(caught(expression), accept="cui-web")
    assert got == ["ok"] and len(adapter.chunks) == 1


def test_all_succeed_type_empty_string():
    """A-server §8.6 "all succeed": ``ctx.Send({type:""})`` (jsapi_helpers.go:42-47 accepts "");
    CUI wire ``{"type":""}`` (props omitted, omitempty, message/types.go:37)."""
    got, adapter, output = create_body(caught('ctx.Send({type:""})'))
    assert got == ["ok"]
    assert adapter.chunks == [{"type": ""}]
    assert output.diagnostics == []


def test_all_succeed_wrong_typed_fields_are_dropped_with_field_dropped():
    """A-server §8.6 "all succeed" and §1.2 table (jsapi_helpers.go:50-98): ``id: 5``, ``delta: 1`` and
    the unknown key ``foo`` are dropped; ``delta_action: "foo"`` is a string, which Yao keeps with no
    enum check (:67-69). README: each drop is a ``field_dropped`` diagnostic.
    (A-server §8.6 writes the CUI wire as ``{"type":"text"}``, but by its own §1.2 table
    ``delta_action:"foo"`` survives, so the wire is ``{"type":"text","delta_action":"foo"}``.)"""
    got, adapter, output = create_body(caught('ctx.Send({type:"text", id: 5, delta: 1, delta_action: "foo", foo: 1})'))
    assert got == ["ok"]
    assert adapter.chunks == [{"type": "text", "delta_action": "foo"}]
    assert [(d["code"], d["where"]) for d in output.diagnostics] == [
        ("field_dropped", "message.id"), ("field_dropped", "message.delta"), ("field_dropped", "message.foo")]
    for item in output.diagnostics:
        assert item == diagnostic("field_dropped", item["where"], field=item["where"],
                                  reason=item["message"].split(": ", 1)[1])
        assert item["message"].startswith(item["where"] + " is dropped")


def test_all_succeed_metadata_keeps_only_yaos_three_keys():
    """A-server §1.2 (jsapi_helpers.go:84-96): metadata keeps only timestamp (float64→int64, truncated),
    sequence and trace_id; ``metadata.type`` is dropped (README example: field_dropped)."""
    got, adapter, output = create_body(caught(
        'ctx.Send({type:"text", props:{content:"x"}, id:"m", metadata:{timestamp: 5.7, sequence: 2.9, type: "context"}})'))
    assert got == ["ok"]
    assert adapter.chunks == [{"type": "text", "props": {"content": "x"}, "id": "m",
                               "metadata": {"timestamp": 5, "sequence": 2}}]
    assert [(d["code"], d["where"]) for d in output.diagnostics] == [("field_dropped", "message.metadata.type")]


@pytest.mark.parametrize(("expression", "standard"), [
    ('ctx.Send({type:"error", props:{}})',
     {"error": {"message": "An error occurred", "type": "server_error", "code": "server_error"}}),
    ('ctx.Send({type:"tool_call", props:{id:"c"}})', chunk({"tool_calls": [{"id": "c", "type": "function"}]})),
])
def test_all_succeed_partial_props(expression, standard):
    """A-server §8.6 "all succeed": props are never required (§1.2); the standard converter's defaults
    (converter.go:119-132 "An error occurred" / "server_error"; :93-116 tool_call with only an id)."""
    got, adapter, output = create_body(caught(expression), accept="standard")
    assert got == ["ok"]
    assert without_created(adapter.chunks) == [standard]
    assert output.diagnostics == []


def test_all_succeed_delta_for_an_unknown_id_is_an_unknown_id_diagnostic():
    """A-server §8.6 "all succeed" / §1.2 "No delta state on the server": a delta for an id never sent
    is accepted; README: the client creates the message, diagnostic ``unknown_id``."""
    got, adapter, output = create_body(caught(
        'ctx.Send({type:"text", props:{content:"x"}, id:"ghost", delta:true, delta_path:"content", delta_action:"append"})'))
    assert got == ["ok"]
    assert adapter.chunks == [{"type": "text", "props": {"content": "x"}, "id": "ghost", "delta": True,
                               "delta_path": "content", "delta_action": "append"}]
    assert output.state["messages"]["ghost"]["props"] == {"content": "x"}
    (item,) = output.diagnostics
    assert (item["code"], item["where"]) == ("unknown_id", "message 'ghost'")
    assert item == diagnostic("unknown_id", "message 'ghost'", id="ghost")


def test_all_succeed_message_after_done_is_an_after_done_diagnostic():
    """A-server §8.6 "all succeed": any message after ``done`` is sent; README: the client starts the id
    afresh, diagnostic ``after_done``."""
    got, adapter, output = create_body(caught(
        'ctx.Send({type:"text", props:{content:"a"}, id:"m", done:true}); ctx.Send({type:"text", props:{content:"b"}, id:"m"})'))
    assert got == ["ok"]
    assert adapter.chunks == [{"type": "text", "props": {"content": "a"}, "id": "m", "done": True},
                              {"type": "text", "props": {"content": "b"}, "id": "m"}]
    assert output.state["messages"]["m"]["props"] == {"content": "b"}
    assert [(d["code"], d["where"]) for d in output.diagnostics] == [("after_done", "message 'm'")]
    assert "'m'" in output.diagnostics[0]["message"]


def test_all_succeed_empty_group_with_empty_id():
    """A-server §8.6 "all succeed" / §2: ``ctx.SendGroup({id:"", messages:[]})`` — ``id:""`` accepted
    (jsapi_helpers.go:123-127), ``messages: []`` accepted (output_test.go:233-246); CUI gets the group
    object with ``"messages":[]``, a standard client nothing (openai/writer.go:102-119)."""
    expression = caught('ctx.SendGroup({id:"", messages:[]})')
    got, adapter, output = create_body(expression, accept="cui-web")
    assert got == ["ok"]
    assert adapter.chunks == [{"id": "", "messages": []}]
    got, adapter, output = create_body(expression, accept="standard")
    assert got == ["ok"] and adapter.chunks == [] and output.diagnostics == []


# ---- 8.2 agent/context/jsapi_test.go: the ctx object ----------------------------------------------

CTX_PROBE = """
function Create(ctx, messages) {
  const fields = {};
  for (const key of Object.keys(ctx)) if (typeof ctx[key] !== "function") fields[key] = ctx[key];
  report({fields, sid: "sid" in ctx, silent: "silent" in ctx,
          metadata: typeof ctx.metadata, authorized: typeof ctx.authorized, args: typeof ctx.args,
          search: typeof ctx.search, Send: typeof ctx.Send, SendGroup: typeof ctx.SendGroup, Flush: typeof ctx.Flush});
}
"""


def test_t11_chat_id():
    """T11 agent/context/jsapi_test.go:19-40: ``ctx.chat_id === "ChatID-123456"`` (jsapi.go:31)."""
    got: list[Any] = []
    call(hooks_from_js(CTX_PROBE, globals={"report": got.append}), "Create", [], chat_id="ChatID-123456")
    assert got[0]["fields"]["chat_id"] == "ChatID-123456"


def test_ctx_defaults_are_yaos():
    """A-server §5 (agent/context/jsapi.go:15-115): strings default to "", retry false, retry_times 0,
    client always ``{type, user_agent, ip}`` of "", metadata / authorized / args / search absent
    (undefined); sid and silent not exported (jsapi_test.go:331-335). README: accept defaults to
    "cui-web" (ours, on purpose)."""
    got: list[Any] = []
    call(hooks_from_js(CTX_PROBE, globals={"report": got.append}), "Create", [])
    (seen,) = got
    assert seen["fields"] == {
        "chat_id": "", "assistant_id": "", "connector": "", "locale": "", "theme": "", "referer": "",
        "route": "", "accept": "cui-web", "retry": False, "retry_times": 0,
        "client": {"type": "", "user_agent": "", "ip": ""},
    }
    assert {k: seen[k] for k in ("sid", "silent", "metadata", "authorized", "args", "search")} == {
        "sid": False, "silent": False, "metadata": "undefined", "authorized": "undefined", "args": "undefined",
        "search": "undefined"}
    assert (seen["Send"], seen["SendGroup"], seen["Flush"]) == ("function", "function", "function")


T12_FIELDS = {
    "connector": "test-connector",
    "args": ["arg1", "arg2", 123],
    "retry": True,
    "retry_times": 3,
    "locale": "zh-cn",
    "theme": "dark",
    "client": {"type": "web", "user_agent": "Mozilla/5.0", "ip": "127.0.0.1"},
    "referer": "api",
    "accept": "cui-web",
    "route": "/dashboard/home",
    "metadata": {"key1": "value1", "key2": 123, "key3": True},
    "authorized": {"sub": "test-user", "client_id": "test-client", "user_id": "user-123", "team_id": "team-456",
                   "tenant_id": "tenant-789",
                   "constraints": {"owner_only": True, "team_only": True,
                                   "extra": {"department": "engineering", "region": "us-west"}}},
}


def test_t12_all_fields():
    """T12 agent/context/jsapi_test.go:213-338 (inputs :218-258, checks :275-329): every field with the
    value it was given, ``args.length === 3`` (:290), ``constraints.creator_only`` absent (:320-322),
    ``"sid" in ctx`` / ``"silent" in ctx`` false (:332-335). (``search`` is in its own test below.)"""
    got: list[Any] = []
    hooks = hooks_from_js(CTX_PROBE.replace("report({", "report({argsLength: ctx.args.length, "
                                            "creatorOnly: ctx.authorized.constraints.creator_only === undefined, "),
                          globals={"report": got.append})
    call(hooks, "Create", [], chat_id="ChatID-123456", assistant_id="test-assistant", **T12_FIELDS)
    (seen,) = got
    assert seen["fields"] == {"chat_id": "ChatID-123456", "assistant_id": "test-assistant", **T12_FIELDS}
    assert seen["argsLength"] == 3 and seen["creatorOnly"] is True
    assert seen["sid"] is False and seen["silent"] is False


def test_t12_search_field():
    """T12 agent/context/jsapi_test.go:218-258 sets ``Search: true`` and checks ``ctx.search === true``
    (:275-329); Yao exports ``search`` whenever ``ctx.Search != nil`` (jsapi.go:34-36, A-server §5)."""
    got: list[Any] = []
    result = run_turn(Context(), "hi", model=ScriptedModel(["ok"]),
                      hooks=hooks_from_js("function Create(ctx, m) { report(ctx.search); }",
                                          globals={"report": got.append}),
                      search=True)
    assert result.ok and got == [True]


T22_CONTEXT = {
    "chat_id": "chat-test-create-hook", "assistant_id": "tests.create", "connector": "", "locale": "en-us",
    "theme": "light", "client": {"type": "web", "user_agent": "TestAgent/1.0", "ip": "127.0.0.1"},
    "referer": "api", "accept": "cui-web", "route": "", "metadata": {},
    "authorized": {"sub": "test-user", "client_id": "test-client-id", "scope": "openid profile email",
                   "session_id": "test-session-id", "user_id": "test-user-123", "team_id": "test-team-456",
                   "tenant_id": "test-tenant-789", "remember_me": True,
                   "constraints": {"team_only": True,
                                   "extra": {"department": "engineering", "region": "us-west", "project": "yao"}}},
}
"""``newTestContext`` of agent/assistant/hook/create_test.go:16-56."""

T22_HOOK = """
function Create(ctx, messages) {
  const checks = {
    user_id: ctx.authorized.user_id === "test-user-123",
    team_id: ctx.authorized.team_id === "test-team-456",
    tenant_id: ctx.authorized.tenant_id === "test-tenant-789",
    team_only: ctx.authorized.constraints.team_only === true,
    department: ctx.authorized.constraints.extra.department === "engineering",
    chat_id: ctx.chat_id === "chat-test-create-hook",
    assistant_id: ctx.assistant_id === "tests.create",
    locale: ctx.locale === "en-us",
    theme: ctx.theme === "light",
    client_type: ctx.client.type === "web",
    user_agent: ctx.client.user_agent === "TestAgent/1.0",
    ip: ctx.client.ip === "127.0.0.1",
    referer: ctx.referer === "api",
    accept: ctx.accept === "cui-web",
  };
  const failed = Object.keys(checks).filter((k) => !checks[k]);
  return {messages: [{role: "user", content: failed.length ? "failed:" + failed.join(",") : "success:all_fields_validated"}]};
}
"""


def test_t22_verify_context_through_run_turn_keywords():
    """T22 agent/assistant/hook/create_test.go:254-299 (context :16-56): the hook checks every field and
    returns ``messages[0].content === "success:all_fields_validated"``; the model gets exactly that."""
    model = RecordingModel()
    result = run_turn(Context(), "verify_context", model=model, hooks=hooks_from_js(T22_HOOK), **T22_CONTEXT)
    assert result.ok, result.error
    assert model.calls == [[user("success:all_fields_validated")]]


def test_t22_verify_context_through_a_hook_context():
    """T22 agent/assistant/hook/create_test.go:254-299, with the ctx given as ``run_turn(hook_ctx=...)``."""
    model = RecordingModel()
    result = run_turn(Context(), "verify_context", model=model, hooks=hooks_from_js(T22_HOOK),
                      hook_ctx=HookContext(**{k: v for k, v in T22_CONTEXT.items() if k != "accept"}))
    assert result.ok, result.error
    assert model.calls == [[user("success:all_fields_validated")]]


# ---- 8.3 agent/assistant/hook/create_test.go: what Create returns ---------------------------------


def create_turn(create_js: str, *, text: str = "hi", extra_js: str = "", globals: dict | None = None, **kwargs):
    """run_turn with ``function Create(ctx, messages) { create_js }`` and a RecordingModel."""
    got: list[Any] = []
    source = "function Create(ctx, messages) {\n" + create_js + "\n}\n" + extra_js
    hooks = hooks_from_js(source, globals={"report": got.append, **(globals or {})})
    model = kwargs.pop("model", None) or RecordingModel()
    result = run_turn(Context(), text, model=model, hooks=hooks, **kwargs)
    return result, model, got, source


@pytest.mark.parametrize(("returned", "upstream"), [
    ("return null;", "T15 create_test.go:76-84 ReturnNull"),
    ("return undefined;", "T16 create_test.go:87-95 ReturnUndefined"),
    ("return {};", "T17 create_test.go:98-109 ReturnEmpty"),
    ("return {messages: []};", "agent.go:386-388: an empty list keeps the input"),
    ("return {messages: null, temperature: null, assistant_id: null};", "null fields are unset (create.go:71-94)"),
])
def test_t15_t16_t17_returns_that_change_nothing(returned, upstream):
    """T15 agent/assistant/hook/create_test.go:76-84, T16 :87-95, T17 :98-109; ``{messages: []}``
    (agent.go:386-388, A-server §6, D2). null / undefined / {} / [] change nothing: the model gets the
    input messages, no options, no diagnostics."""
    result, model, _, _ = create_turn(returned, text="return_null", locale="en-us")
    assert result.ok, (upstream, result.error)
    assert model.calls == [[user("return_null")]]
    assert model.options == [None]
    assert result.diagnostics == []


def test_t18_return_full_reaches_the_model():
    """T18 agent/assistant/hook/create_test.go:112-165 ReturnFull: 2 messages (system, user), audio
    alloy/mp3, temperature 0.7, max_tokens 2000, max_completion_tokens 1500 — applied to the completion
    options (agent.go:611-648); metadata merged into the ctx (create.go:59-67), seen by later hooks."""
    result, model, got, _ = create_turn("""
      return {messages: [{role: "system", content: "You are a helpful assistant."}, {role: "user", content: "Hello!"}],
              audio: {voice: "alloy", format: "mp3"}, temperature: 0.7, max_tokens: 2000, max_completion_tokens: 1500,
              metadata: {test: "full_response", user_id: "test_user_123"}};
    """, text="return_full", extra_js="function Before(ctx, messages, response) { report(ctx.metadata); }")
    assert result.ok, result.error
    assert model.calls == [[system("You are a helpful assistant."), user("Hello!")]]
    assert model.options == [{"audio": {"voice": "alloy", "format": "mp3"}, "temperature": 0.7, "max_tokens": 2000,
                               "max_completion_tokens": 1500}]
    assert got == [{"test": "full_response", "user_id": "test_user_123"}]
    assert result.diagnostics == []


def test_t18_create_options_override_run_turn_options():
    """A-server §6 (agent.go:419-436, 611-648): the layers are assistant → ctx → createResponse, so
    Create's temperature overrides the turn's ``options``; the other options stay."""
    result, model, _, _ = create_turn("return {temperature: 0.2};", options={"temperature": 1.0, "top_p": 0.5})
    assert result.ok, result.error
    assert model.options == [{"temperature": 0.2, "top_p": 0.5}]


def test_t19_return_partial():
    """T19 agent/assistant/hook/create_test.go:168-196 ReturnPartial: 1 message, temperature 0.5, audio and
    max_tokens unset."""
    result, model, _, _ = create_turn('return {messages: [{role: "user", content: "Partial test"}], temperature: 0.5};',
                                      text="return_partial")
    assert result.ok, result.error
    assert model.calls == [[user("Partial test")]]
    assert model.options == [{"temperature": 0.5}]


def test_t20_return_process():
    """T20 agent/assistant/hook/create_test.go:199-223 ReturnProcess: the hook calls
    ``Process("models.__yao.role.Get", {})`` and returns a system message first, one user message per
    role and ``metadata {test: "process_call", roles_count: String(n)}``."""
    calls: list[tuple] = []

    def process(name, args):
        calls.append((name, args))
        return [{"name": "admin"}, {"name": "editor"}]

    result, model, got, _ = create_turn("""
      const roles = Process("models.__yao.role.Get", {});
      const out = [{role: "system", content: "Here are the available roles in the system:"}];
      for (const r of roles) out.push({role: "user", content: r.name});
      return {messages: out, metadata: {test: "process_call", roles_count: String(roles.length)}};
    """, text="return_process", globals={"Process": process},
        extra_js="function Before(ctx, messages, response) { report(ctx.metadata); }")
    assert result.ok, result.error
    assert calls == [("models.__yao.role.Get", {})]
    assert model.calls == [[system("Here are the available roles in the system:"), user("admin"), user("editor")]]
    assert got == [{"test": "process_call", "roles_count": "2"}]


def test_t21_return_default():
    """T21 agent/assistant/hook/create_test.go:226-251 ReturnDefault: input "Hello, how are you?", the hook
    returns ``{messages: [{role: "user", content}]}`` → exactly that single user message, string content."""
    result, model, _, _ = create_turn('return {messages: [{role: "user", content: messages[0].content}]};',
                                      text="Hello, how are you?")
    assert result.ok, result.error
    assert model.calls == [[user("Hello, how are you?")]]


T23_CREATE = """
  return {messages: [{role: "system", content: "Context fields will be adjusted"}],
          assistant_id: "adjusted.assistant", connector: "adjusted-connector", locale: "zh-cn", theme: "dark",
          route: "/adjusted/route",
          metadata: {adjusted: true, original_assistant: ctx.assistant_id, timestamp: new Date(0).toISOString()}};
"""
ADJUSTED_PROBE = """
function Before(ctx, messages, response) {
  report({assistant_id: ctx.assistant_id, connector: ctx.connector, locale: ctx.locale, theme: ctx.theme,
          route: ctx.route, metadata: ctx.metadata});
}
function Done(ctx, messages, response) { report(ctx.locale + "|" + ctx.theme); }
"""


def test_t23_adjust_context_is_seen_by_later_hooks():
    """T23 agent/assistant/hook/create_test.go:302-361 AdjustContext: the ctx is updated (:341-358) —
    assistant_id, connector, locale, theme, route override when non-empty, metadata merged
    (create.go:32-68). A Before (and Done) hook sees the adjusted values. Without
    ``run_turn(connectors=...)`` the connector is diagnostic ``unknown_connector`` and the turn keeps its
    model (README)."""
    result, model, got, _ = create_turn(T23_CREATE, text="adjust_context", extra_js=ADJUSTED_PROBE,
                                        assistant_id="tests.create", locale="en-us", theme="light",
                                        metadata={"kept": 1})
    assert result.ok, result.error
    assert got == [
        {"assistant_id": "adjusted.assistant", "connector": "adjusted-connector", "locale": "zh-cn", "theme": "dark",
         "route": "/adjusted/route",
         "metadata": {"kept": 1, "adjusted": True, "original_assistant": "tests.create",
                      "timestamp": "1970-01-01T00:00:00.000Z"}},
        "zh-cn|dark",
    ]
    assert model.calls == [[system("Context fields will be adjusted")]]
    (item,) = result.diagnostics
    assert (item["code"], item["where"]) == ("unknown_connector", "Create's return value")
    assert "adjusted-connector" in item["message"]


def test_create_empty_strings_do_not_override_the_ctx():
    """A-server §6 (create.go:32-68): assistant_id / connector / locale / theme / route override only
    when non-empty."""
    result, _, got, _ = create_turn('return {assistant_id: "", locale: "", theme: "", route: "", connector: ""};',
                                    extra_js=ADJUSTED_PROBE, assistant_id="a1", locale="en-us", theme="light",
                                    route="/r", connector="c0")
    assert result.ok, result.error
    assert got[0] == {"assistant_id": "a1", "connector": "c0", "locale": "en-us", "theme": "light", "route": "/r"}
    assert result.diagnostics == []


def test_create_unknown_key_is_ignored_with_a_diagnostic():
    """A-server §6 / §8.6 (create.go:83-91, encoding/json ignores unknown keys):
    ``{messages: [{role: "developer", content: "x"}], foo: 1}`` is ok — one developer message (a named
    role, types.go:345-351), ``foo`` ignored; README: diagnostic ``unknown_return_key``."""
    result, model, _, _ = create_turn('return {messages: [{role: "developer", content: "x"}], foo: 1};')
    assert result.ok, result.error
    assert model.calls == [[system("x")]]  # developer goes to the model as a system message (D12)
    assert model.options == [None]
    (item,) = result.diagnostics
    assert (item["code"], item["where"]) == ("unknown_return_key", "Create's return value")
    assert "'foo'" in item["message"]


def test_create_connector_switches_the_model():
    """A-server §6 (GetConnector, agent.go:264-286; create.go:39-41): ``{connector: "x"}`` selects the
    connector ``x`` — ``run_turn(connectors={"x": other})``; no diagnostic; the ctx says so."""
    other = RecordingModel("from x")
    result, model, got, _ = create_turn('return {connector: "x"};', connectors={"x": other},
                                        extra_js="function Before(ctx, m, r) { report(ctx.connector); }")
    assert result.ok, result.error
    assert model.calls == [] and other.calls == [[user("hi")]]
    assert result.response["content"] == "from x"
    assert got == ["x"]
    assert result.diagnostics == []


def test_create_unknown_connector_keeps_the_model():
    """README ``unknown_connector``: ``Create`` returns ``{connector: "x"}`` without
    ``run_turn(connectors={"x": model})`` — the turn keeps its model."""
    result, model, _, _ = create_turn('return {connector: "x"};', connectors={"y": RecordingModel()})
    assert result.ok, result.error
    assert model.calls == [[user("hi")]]
    (item,) = result.diagnostics
    assert (item["code"], item["where"]) == ("unknown_connector", "Create's return value")
    assert "'x'" in item["message"] and "y" in item["hint"]


GO_FIELD = "failed to unmarshal to HookCreateResponse: json: cannot unmarshal {} into Go struct field HookCreateResponse.{} of type {}"
GO_VALUE = "failed to unmarshal to HookCreateResponse: json: cannot unmarshal {} into Go value of type context.HookCreateResponse"


@pytest.mark.parametrize(("returned", "go_text"), [
    ('return {temperature: "hot"};', GO_FIELD.format("string", "temperature", "float64")),
    ("return {max_tokens: 1.5};", GO_FIELD.format("number 1.5", "max_tokens", "int")),
    ('return {messages: {}};', GO_FIELD.format("object", "messages", "[]context.Message")),
    ('return {metadata: []};', GO_FIELD.format("array", "metadata", "map[string]interface {}")),
    ('return "x";', GO_VALUE.format("string")),
    ("return 42;", GO_VALUE.format("number")),
    ("return true;", GO_VALUE.format("bool")),
    ("return [1];", GO_VALUE.format("array")),
])
def test_create_go_decode_errors(returned, go_text):
    """A-server §6 / §8.6 (hook/create.go:83-91, Go's encoding/json): a wrong field type or a non-object
    fails with ``failed to unmarshal to HookCreateResponse: json: cannot unmarshal …``; the stream fails
    before the LLM is called (agent.go:99-107)."""
    result, model, _, source = create_turn(returned)
    assert not result.ok
    error = result.error
    assert error["message"].startswith(f"Create (line 1): {go_text}"), error
    assert (error["code"], error["hook"]) == ("HOOK_RETURN", "Create")
    assert model.calls == []
    assert result.output[-1]["type"] == "error" and go_text in result.output[-1]["props"]["message"]


# ---- 8.4 agent/output/jsapi/output_test.go: the deprecated new Output(ctx) --------------------------


def output_shim(body: str):
    got: list[Any] = []
    hooks = hooks_from_js("function Create(ctx, messages) {\n" + body + "\n}", globals={"report": got.append})
    output = Output()
    adapter = output.add_sink(CuiAdapter())
    call(hooks, "Create", [], output=output)
    return got, adapter, output


def test_t26_output_constructor():
    """T26 agent/output/jsapi/output_test.go:3-54: ``new Output(ctx)`` is an object; ``new Output()``
    throws, ``e.toString()`` includes "context argument" — the text is
    ``Output constructor requires a context argument`` (output/jsapi/output.go:31-33)."""
    got, _, _ = output_shim("""
      const output = new Output(ctx);
      report(output !== undefined && output !== null);
    """ + caught("new Output()"))
    assert got[0] is True
    assert_threw(got[1], "Output constructor requires a context argument")
    assert "context argument" in got[1][2]


def test_t27_output_send():
    """T27 agent/output/jsapi/output_test.go:56-185: text object, string, all fields (a delta for an id
    never sent, which Yao accepts: diagnostic ``unknown_id`` here), error — each ok; ``output.Send()``
    includes "message argument"; ``output.Send({props: {content: "test"}})`` includes
    "type is required" (output.go:146-159)."""
    got, adapter, output = output_shim("const output = new Output(ctx);\n" + "\n".join([
        caught('output.Send({type: "text", props: {content: "Hello World"}})'),
        caught('output.Send("Hello World")'),
        caught('output.Send({type: "text", props: {content: "Test"}, id: "msg-1", delta: true, done: false, '
               'delta_path: "content", delta_action: "append", metadata: {timestamp: 1234567890, sequence: 1, '
               'trace_id: "trace-123"}})'),
        caught('output.Send({type: "error", props: {message: "Something went wrong", code: "ERR_001"}})'),
        caught("output.Send()"),
        caught('output.Send({props: {content: "test"}})'),
    ]))
    assert got[:4] == ["ok", "ok", "ok", "ok"]
    assert_threw(got[4], "Send requires a message argument")
    assert "message argument" in got[4][2]
    assert "type is required" in got[5][2]
    assert got[5][1].startswith("invalid message: message.type is required and must be a string")
    assert adapter.chunks[2] == {"type": "text", "props": {"content": "Test"}, "id": "msg-1", "delta": True,
                                 "delta_path": "content", "delta_action": "append",
                                 "metadata": {"timestamp": 1234567890, "sequence": 1, "trace_id": "trace-123"}}
    assert len(adapter.chunks) == 4
    assert ("unknown_id", "message 'msg-1'") in [(d["code"], d["where"]) for d in output.diagnostics]


def test_t28_output_send_group():
    """T28 agent/output/jsapi/output_test.go:187-300: two text members ok; with metadata ok;
    ``messages: []`` ok; without ``id`` the error includes "id is required"; ``{id: "group-1"}`` alone
    includes "messages is required" (output.go:173-186)."""
    got, adapter, _ = output_shim("const output = new Output(ctx);\n" + "\n".join([
        caught('output.SendGroup({id: "group-1", messages: [{type: "text", props: {content: "A"}}, '
               '{type: "text", props: {content: "B"}}]})'),
        caught('output.SendGroup({id: "group-2", messages: [{type: "text", props: {content: "C"}}], '
               'metadata: {timestamp: 1234567890, sequence: 1}})'),
        caught('output.SendGroup({id: "group-3", messages: []})'),
        caught('output.SendGroup({messages: [{type: "text", props: {content: "D"}}]})'),
        caught('output.SendGroup({id: "group-1"})'),
    ]))
    assert got[:3] == ["ok", "ok", "ok"]
    assert "id is required" in got[3][2]
    assert got[3][1].startswith("invalid group: group.id is required and must be a string")
    assert "messages is required" in got[4][2]
    assert got[4][1].startswith("invalid group: group.messages is required and must be an array")
    assert adapter.chunks == [
        {"id": "group-1", "messages": [{"type": "text", "props": {"content": "A"}},
                                       {"type": "text", "props": {"content": "B"}}]},
        {"id": "group-2", "messages": [{"type": "text", "props": {"content": "C"}}],
         "metadata": {"timestamp": 1234567890, "sequence": 1}},
        {"id": "group-3", "messages": []},
    ]


def test_t29_output_chaining():
    """T29 agent/output/jsapi/output_test.go:302-327: ``output.Send("Message 1")`` returns something, and
    ``output.Send("Message 2").Send("Message 3")`` works — Send returns ``this`` (output.go:161);
    SendGroup returns ``this`` too (:188)."""
    got, adapter, _ = output_shim("""
      const output = new Output(ctx);
      const result = output.Send("Message 1");
      output.Send("Message 2").Send("Message 3");
      report(result !== undefined);
      report(result === output);
      report(output.SendGroup({id: "g", messages: [{type: "text", props: {content: "M4"}}]}) === output);
      output.SendGroup({id: "h", messages: []}).Send("Message 5");
    """)
    assert got == [True, True, True]
    assert adapter.chunks == [
        {"type": "text", "props": {"content": "Message 1"}},
        {"type": "text", "props": {"content": "Message 2"}},
        {"type": "text", "props": {"content": "Message 3"}},
        {"id": "g", "messages": [{"type": "text", "props": {"content": "M4"}}]},
        {"id": "h", "messages": []},
        {"type": "text", "props": {"content": "Message 5"}},
    ]


# ---- diagnostics and strict mode ---------------------------------------------------------------------

GHOST = ('ctx.Send({type:"text", props:{content:"before"}, id:"b1"});\n'
         'ctx.Send({type:"text", props:{content:"x"}, id:"ghost", delta:true, delta_path:"content", '
         'delta_action:"append"});\n'
         'ctx.Send({type:"text", props:{content:"after"}, id:"a1"});')
GHOST_HOOK = "function Create(ctx, messages) {\n" + GHOST + "\n}\n"
GHOST_DIAGNOSTIC = diagnostic("unknown_id", "message 'ghost'", id="ghost")


def test_without_strict_the_diagnostics_are_exactly_the_expected_list():
    """README "diagnostics": a delta for an id never sent is applied as the CUI client does (it creates
    the message) and recorded as ``{code, message, where, hint}`` on ``TurnResult.diagnostics``."""
    output = Output()
    result = run_turn(Context(), "hi", model=ScriptedModel(["ok"]), hooks=hooks_from_js(GHOST_HOOK), output=output)
    assert result.ok, result.error
    (item,) = result.diagnostics
    assert set(item) == {"code", "message", "where", "hint"}
    assert (item["code"], item["where"]) == ("unknown_id", "message 'ghost'")
    assert "'ghost'" in item["message"]
    assert result.diagnostics == [GHOST_DIAGNOSTIC]
    assert item["hint"] == DIAGNOSTICS["unknown_id"][1]
    assert [m.get("id") for m in result.output[:3]] == ["b1", "ghost", "a1"]
    assert output.state["messages"]["ghost"]["props"] == {"content": "x"}


def test_strict_fails_the_turn_with_the_diagnostic_and_applies_nothing_of_it():
    """README: ``run_turn(..., strict=True)`` turns the first diagnostic into a ``DiagnosticError`` raised
    where the message was sent, before anything of it is applied. From a JavaScript hook it is thrown
    at ``ctx.Send``, uncaught, so the turn fails (a plain Error: ``Error: `` as V8 prints it, A-server
    §7), with the DiagnosticError's code. What was sent before it still goes out; the ghost and
    everything after it do not."""
    output = Output()
    view = ContextView(Context())
    result = run_turn(Context(), "hi", model=RecordingModel(), hooks=hooks_from_js(GHOST_HOOK), strict=True,
                      output=output, view=view)
    error = DiagnosticError(GHOST_DIAGNOSTIC)
    line = line_of(GHOST_HOOK, 'id:"ghost"')
    expected = {"message": f"Create (line {line}): Error: Send failed: {error}", "code": error.code,
                "name": "Error", "hook": "Create", "line": line}
    assert result.error == expected
    assert result.diagnostics == []
    assert result.output == [{"type": "text", "props": {"content": "before"}, "id": "b1"},
                             {"type": "error", "props": {"message": expected["message"], "code": expected["code"]}}]
    assert "ghost" not in output.state["messages"] and "ghost" not in output.pending_state["messages"]
    assert "ghost" not in view.state()["outputs"]["messages"]
    assert output.strict is False  # put back after the turn


def test_strict_from_a_python_hook_carries_the_diagnostic_code():
    """README strict mode, from a Python hook: the DiagnosticError itself fails the turn, its code on
    ``TurnResult.error``; nothing of the message is applied."""
    def create(ctx, messages):
        ctx.Send({"type": "text", "props": {"content": "x"}, "id": "ghost", "delta": True,
                  "delta_path": "content", "delta_action": "append"})

    output = Output()
    result = run_turn(Context(), "hi", model=RecordingModel(), hooks={"Create": create}, strict=True, output=output)
    assert not result.ok
    assert (result.error["code"], result.error["name"], result.error["hook"]) == ("unknown_id", "DiagnosticError",
                                                                                 "Create")
    assert str(DiagnosticError(GHOST_DIAGNOSTIC)) in result.error["message"]
    assert "ghost" not in output.state["messages"]


def test_strict_error_is_catchable_in_the_hook():
    """README strict mode: the DiagnosticError reaches the hook as a thrown Error at ``ctx.Send``; a hook
    that catches it goes on, and the turn is ok (nothing of the message applied, no diagnostic kept)."""
    got: list[Any] = []
    hooks = hooks_from_js("function Create(ctx, messages) {\n" + caught(
        'ctx.Send({type:"text", props:{content:"x"}, id:"ghost", delta:true})') + "\n}",
        globals={"report": got.append})
    result = run_turn(Context(), "hi", model=RecordingModel(), hooks=hooks, strict=True)
    assert result.ok, result.error
    name, message, _ = got[0]
    assert name == "Error" and "[unknown_id]" in message and "'ghost'" in message
    assert all(m.get("id") != "ghost" for m in result.output)
    assert result.diagnostics == []


def test_context_view_header_shows_the_diagnostics():
    """README: diagnostics appear as a badge in the view's header (``view.state()["header"]["diagnostics"]``)."""
    view = ContextView(Context())
    result = run_turn(Context(), "hi", model=ScriptedModel(["ok"]), hooks=hooks_from_js(GHOST_HOOK), view=view)
    assert result.ok
    assert view.state()["header"]["diagnostics"] == [GHOST_DIAGNOSTIC]
    clean = ContextView(Context())
    run_turn(Context(), "hi", model=ScriptedModel(["ok"]), view=clean)
    assert clean.state()["header"]["diagnostics"] is None


# ---- %agentctx run: diagnostics under the summary, --strict -------------------------------------------


from magic_shell import ip, shell  # noqa: E402,F401 - the shared IPython shell fixtures


def magic(shell: InteractiveShell, text: str, body: str | None = None) -> Any:
    with capture_output() as captured:
        if body is None:
            shell.run_line_magic("agentctx", text)
        else:
            shell.run_cell_magic("agentctx", text, body)
    return captured


TWO_DIAGNOSTICS = GHOST_HOOK.replace('id:"a1"}', 'id:"a1", foo: 1}')


def test_magic_run_prints_one_line_per_diagnostic(ip):
    """README: one line each under ``%agentctx run``'s summary: ``  diagnostic CODE: message (where);
    hint: hint`` (magics.py ``_diagnostic_lines``)."""
    magic(ip, "hooks ghosts", TWO_DIAGNOSTICS)
    out = magic(ip, 'run chat "hi" --hooks ghosts')
    assert out.stderr == ""
    summary, *lines = out.stdout.rstrip("\n").split("\n")
    assert summary.startswith("turn done: ") and summary.endswith("hooks: Create")
    dropped = diagnostic("field_dropped", "message.foo", field="message.foo", reason="it is not a field of Yao's message")
    assert lines == [f"  diagnostic {d['code']}: {d['message']} ({d['where']}); hint: {d['hint']}"
                     for d in (GHOST_DIAGNOSTIC, dropped)]
    assert lines[0].startswith("  diagnostic unknown_id: ") and "'ghost'" in lines[0]
    assert lines[1].startswith("  diagnostic field_dropped: ")


def test_magic_run_strict_prints_one_agentctx_error_line(ip):
    """README: ``%agentctx run --strict`` fails the turn on the first diagnostic; the magic prints one
    ``agentctx:`` line on stdout, where nbval compares it (no traceback, no summary) and binds nothing."""
    magic(ip, "hooks ghosts", TWO_DIAGNOSTICS)
    out = magic(ip, 'run strictchat "hi" --hooks ghosts --strict')
    assert out.stderr == ""
    err = out.stdout
    assert err.startswith("agentctx: run: ") and err.endswith("; the context is unchanged\n")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "[unknown_id]" in err and "'ghost'" in err
    assert "strictchat" not in ip.user_ns


# ---- the Error hook -----------------------------------------------------------------------------------

# the seed's example 6 as the fixture holds it, made to report its error instead of logging it
SEED_ERROR_HOOK = (Path(__file__).parent / "fixtures" / "seed_hooks" / "example_6_error.js").read_text().replace(
    'console.error("Assistant error:", error);', "report(error);")
assert "report(error);" in SEED_ERROR_HOOK

THROWING_CREATE = """
function Create(ctx, messages) {
  const e = new Error("x");
  report([e instanceof Error, e.name, e.message]);
  throw new Error("x");
}
"""


def test_seed_error_hook_gets_the_create_error_and_new_error_still_works():
    """README ("new Error(...) when the script defines function Error(ctx, …)"): JavaScript's Error is put
    back after loading, so ``throw new Error("x")`` in Create is an Error; it reaches the global
    ``function Error`` hook as ``Create (line N): Error: x`` (V8's string form, A-server §7)."""
    source = SEED_ERROR_HOOK + THROWING_CREATE
    got: list[Any] = []
    result = run_turn(Context(), "hi", model=RecordingModel(), hooks=hooks_from_js(source, globals={"report": got.append}))
    line = line_of(source, 'throw new Error("x")')
    raw = {"message": f"Create (line {line}): Error: x", "code": "HOOK_THREW", "name": "Error", "hook": "Create",
           "line": line}
    assert got == [[True, "Error", "x"], raw]
    assert result.hooks_called == ["Create", "Error"]
    assert result.error == raw


def test_error_hook_own_error_message_replaces_the_raw_one():
    """README ("an Error hook's own error message"): it replaces the raw error for the client; the raw one
    stays on ``TurnResult.error`` (the seed's example 6, "return error to be logged")."""
    source = SEED_ERROR_HOOK + THROWING_CREATE
    result = run_turn(Context(), "hi", model=RecordingModel(), hooks=hooks_from_js(source, globals={"report": lambda v: None}))
    line = line_of(source, 'throw new Error("x")')
    assert result.output == [{"type": "error", "props": {
        "message": "I encountered an issue while processing your request.", "code": "HOOK_THREW"}}]
    assert not any("Error: x" in json.dumps(m) for m in result.output)
    assert result.error == {"message": f"Create (line {line}): Error: x", "code": "HOOK_THREW", "name": "Error",
                            "hook": "Create", "line": line}


def test_error_hook_own_error_message_without_a_return_value():
    """README ("an Error hook's own error message"), with an Error hook that returns nothing: the client
    gets only the hook's message; the raw error is the turn's."""
    source = """
    function Error(ctx, messages, error) { ctx.Send({type: "error", props: {message: "Sorry!", code: "E1"}}); }
    function Create(ctx, messages) {
      throw new Error("x");
    }
    """
    result = run_turn(Context(), "hi", model=RecordingModel(), hooks=hooks_from_js(source), accept="standard")
    line = line_of(source, 'throw new Error("x")')
    assert result.output == [{"type": "error", "props": {"message": "Sorry!", "code": "E1"}}]
    assert result.error == {"message": f"Create (line {line}): Error: x", "code": "HOOK_THREW", "name": "Error",
                            "hook": "Create", "line": line}
    assert result.chunks == [{"error": {"message": "Sorry!", "type": "E1", "code": "E1"}}, "[DONE]"]


def test_without_an_error_hook_the_raw_error_is_shown():
    """The counterpart: no Error hook, so the raw error is what the client gets (README "Hooks and
    models": any failure is shown as an ``error`` message)."""
    source = THROWING_CREATE
    result = run_turn(Context(), "hi", model=RecordingModel(), hooks=hooks_from_js(source, globals={"report": lambda v: None}))
    line = line_of(source, 'throw new Error("x")')
    message = f"Create (line {line}): Error: x"
    assert result.error["message"] == message
    assert result.output == [{"type": "error", "props": {"message": message, "code": "HOOK_THREW"}}]
