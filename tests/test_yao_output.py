"""Yao's current output API (agentctx_widgets.yao.output and friends) against upstream: YaoApp/yao at
5a3f9a6a (agent/context/*_test.go, agent/output/**/*_test.go) and the CUI client at 66cb383f.

Every expected value here was written by hand from the upstream source named in the test's docstring
(the Go struct order and ``omitempty`` tags of agent/output/message/types.go, the maps Go sorts, the
client's delta rules) — none is copied from our own output. Times come from a fake clock.
"""

from __future__ import annotations

import json

import pytest
from fakes import WALL_MS, FakeClock

from agentctx_widgets.yao.api_generation import MixedApiError, detect_api, scan
from agentctx_widgets.yao.cui_state import CuiState
from agentctx_widgets.yao.go_json import GoStruct, dumps, go_value
from agentctx_widgets.yao.output import YaoCallError, YaoOutput
from agentctx_widgets.yao.wire import (
    STREAM_END,
    Metadata,
    STREAM_START,
    YaoMessage,
    assistant_info,
    event_message,
    stream_end_data,
    stream_start_data,
    to_wire,
)
from agentctx_widgets.yao.ids import counters
from agentctx_widgets.yao.writers import CuiWriter, OpenAIWriter, writer_for

T = WALL_MS  # the fake wall clock, ms


def counter(prefix: str):
    count = 0

    def new_id() -> str:
        nonlocal count
        count += 1
        return f"{prefix}{count}"
    return new_id


def request(accept: str = "cui-web", **options):
    """A request's output with the accept's writer, a CUI fold and a fake clock (the client's ids are
    ``s1, s2, …`` — stream ids and ui ids share the counter, as nanoid() calls do)."""
    clock = FakeClock()
    writer = writer_for(accept, created=1) if accept == "standard" else writer_for(accept)
    fold = CuiState(new_id=counter("s"), clock=FakeClock(wall_ms=42))
    out = YaoOutput([writer, fold], clock=clock, **options)
    return out, writer, fold, clock


def lines(writer) -> list[str]:
    return [line for line in writer.text.split("\n") if line]


def event(name: str, text: str, data: str) -> str:
    """The SSE line of a lifecycle event: props is a map, so data < event < message."""
    return f'data: {{"type":"event","props":{{"data":{data},"event":"{name}","message":"{text}"}}}}'


def start(mid: str, kind: str = "text", extra: str = "") -> str:
    return event("message_start", "Message started", f'{{"message_id":"{mid}","type":"{kind}","timestamp":{T}{extra}}}')


def end(mid: str, chunks: int, content: str | None = None, kind: str = "text", thread: str = "", ms: int = 0) -> str:
    thread_part = f',"thread_id":"{thread}"' if thread else ""
    extra = "" if content is None else f',"extra":{{"content":{json.dumps(content)}}}'
    return event("message_end", "Message completed",
                 f'{{"message_id":"{mid}","type":"{kind}","timestamp":{T}{thread_part},"duration_ms":{ms},'
                 f'"chunk_count":{chunks},"status":"completed"{extra}}}')


# ---- Go's JSON ----------------------------------------------------------------------------------

def test_go_json_sorts_maps_keeps_structs_and_escapes_like_encoding_json():
    """encoding/json: map keys sorted, struct fields in declaration order, <>& and U+2028 escaped as
    \\u003c \\u003e \\u0026 \\u2028, \\b \\f short escapes (Go 1.22+; yao go.mod:3 is go 1.25)."""
    value = go_value({"b": 1, "a": GoStruct(z="<a&b>", y="\u2028\b\f\x01")})
    assert dumps(value) == '{"a":{"z":"\\u003ca\\u0026b\\u003e","y":"\\u2028\\b\\f\\u0001"},"b":1}'


@pytest.mark.parametrize(("number", "text"), [
    (1.0, "1"), (1.5, "1.5"), (1e20, "100000000000000000000"), (1e21, "1e+21"), (1e-7, "1e-7"),
    (0.000001, "0.000001"), (-0.0, "-0"), (123456789.0, "123456789"), (2.5e-8, "2.5e-8"),
])
def test_go_json_floats(number, text):
    """encoding/json floatEncoder: 'f' format for 1e-6 <= |x| < 1e21, else 'e' with e-07 cleaned to e-7."""
    assert dumps(number) == text


def test_go_json_refuses_nan():
    """json.Marshal(math.NaN()) is an UnsupportedValueError."""
    with pytest.raises(ValueError, match="unsupported value"):
        dumps(float("nan"))


# ---- ids ----------------------------------------------------------------------------------------

def test_id_generators_count_per_kind_and_send_nothing():
    """TestJsValueIDGenerators (agent/context/jsapi_output_integration_test.go:269-326); the counters are
    message.IDGenerator's, M1, M2… per kind (agent/output/message/utils.go:24-50)."""
    out, writer, _, _ = request()
    got = [out.MessageID(), out.MessageID(), out.BlockID(), out.BlockID(), out.ThreadID(), out.ThreadID()]
    assert got == ["M1", "M2", "B1", "B2", "T1", "T2"]
    assert writer.chunks == []


def test_ids_continue_the_request_counter():
    """One IDGenerator per request context (context.go:46): a hook's Send after the model's M1/C1..C3
    (the runner's counter, yao/ids.py) is M2 with chunk C4, not a second M1."""
    next_id = counters()
    for prefix in ("M", "C", "C", "C"):
        next_id(prefix)
    out = YaoOutput([], clock=FakeClock(), next_id=next_id)
    assert out.Send("after the model") == "M2"
    assert next_id("C") == "C5"


# ---- Send ---------------------------------------------------------------------------------------

def test_send_sends_message_start_the_message_and_message_end():
    """TestMessageLifecycleEvents (agent/context/message_events_unit_test.go:18-87) and TestJsValueSendVsSendStream
    "Send auto-ends" (jsapi_output_integration_test.go:938-958): ctx.Send of a text message writes
    message_start, the message, message_end with the content in extra (context/output.go:133-220)."""
    out, writer, _, _ = request()
    out.send(YaoMessage(type="text", props={"content": "Hello World"}))
    out.flush()
    assert lines(writer) == [
        start("M1"),
        'data: {"type":"text","props":{"content":"Hello World"},"chunk_id":"C1","message_id":"M1"}',
        end("M1", 1, "Hello World"),
    ]


def test_send_returns_the_id_and_drops_the_seed_fields():
    """TestJsValueSend (jsapi_output_integration_test.go:44-92): Send("Hello World") and Send of an object
    with the seed's ``id`` succeed. parseMessage (jsapi_helpers.go:40-95) keeps only Yao's fields: ``id``
    is dropped, so the message gets the next M id; metadata numbers become integers."""
    out, writer, _, _ = request()
    assert out.Send("Hello World") == "M1"
    second = out.Send({"type": "text", "props": {"content": "Hello from JavaScript"}, "id": "msg_123",
                       "done": True, "metadata": {"timestamp": 1767225600123.7, "sequence": 1}})
    assert second == "M2"
    assert writer.chunks[4] == {"type": "text", "props": {"content": "Hello from JavaScript"}, "chunk_id": "C2",
                                "message_id": "M2", "metadata": {"timestamp": 1767225600123, "sequence": 1}}
    assert lines(writer)[4] == ('data: {"type":"text","props":{"content":"Hello from JavaScript"},"chunk_id":"C2",'
                                '"message_id":"M2","metadata":{"timestamp":1767225600123,"sequence":1}}')


@pytest.mark.parametrize(("args", "error"), [
    ((), "Send requires a message argument"),
    ((42,), "invalid message: message must be a string or object"),
    ((None,), "invalid message: message must be a string or object"),
    (([{"type": "text"}],), "invalid message: message must be an object"),
    (({"props": {"content": "x"}},), "invalid message: message.type is required and must be a string"),
    (({"type": 3},), "invalid message: message.type is required and must be a string"),
])
def test_send_errors(args, error):
    """TestJsValueSendErrorHandling (jsapi_output_integration_test.go:183-207) for no argument; the texts
    of parseMessage (jsapi_helpers.go:24-47) behind "invalid message: " (jsapi.go:262-265). Nothing is
    sent and no id is used up (the id is made after the parse, jsapi.go:273-280)."""
    out, writer, _, _ = request()
    with pytest.raises(YaoCallError) as raised:
        out.Send(*args)
    assert str(raised.value) == error
    assert writer.chunks == []
    assert out.Send("next") == "M1"


def test_send_with_block_sends_block_start_once_and_end_block_counts():
    """TestJsValueEndBlock (jsapi_output_integration_test.go:521-561): three Sends into one block, then
    EndBlock: block_start (type "mixed") before the first message_start only, block_end with
    message_count 3 (context/output.go:95-122, 449-477; EventBlock*Data types.go:392-411)."""
    out, writer, _, _ = request()
    block = out.BlockID()
    ids = [out.Send(f"Message {n}", block) for n in (1, 2, 3)]
    out.EndBlock(block)
    assert ids == ["M1", "M2", "M3"]
    names = [(c["props"]["event"] if c["type"] == "event" else c["type"]) for c in writer.chunks]
    assert names == ["block_start", "message_start", "text", "message_end", "message_start", "text", "message_end",
                     "message_start", "text", "message_end", "block_end"]
    assert lines(writer)[0] == event("block_start", "Block started", f'{{"block_id":"B1","type":"mixed","timestamp":{T}}}')
    assert lines(writer)[2] == ('data: {"type":"text","props":{"content":"Message 1"},"chunk_id":"C1",'
                                '"message_id":"M1","block_id":"B1"}')
    assert lines(writer)[-1] == event("block_end", "Block completed",
                                      f'{{"block_id":"B1","type":"mixed","timestamp":{T},"duration_ms":0,'
                                      f'"message_count":3,"status":"completed"}}')


def test_the_message_block_id_wins_over_the_argument():
    """TestJsValueSendWithBlockID (jsapi_output_supplement_integration_test.go:15-61): the message's
    block_id has priority over Send's second argument (jsapi.go:267-271)."""
    out, writer, _, _ = request()
    block = out.BlockID()
    out.Send({"type": "text", "props": {"content": "Message 4"}, "block_id": "B_custom"}, block)
    assert writer.chunks[0]["props"]["data"] == {"block_id": "B_custom", "type": "mixed", "timestamp": T}
    assert writer.chunks[2]["block_id"] == "B_custom"


def test_end_block_errors_and_unknown_block():
    """endBlockMethod (jsapi.go:718-746): its argument checks; ctx.EndBlock of a block no message used
    sends nothing (context/output.go:456-459), which we note."""
    out, writer, _, _ = request()
    with pytest.raises(YaoCallError, match="^EndBlock requires block_id argument$"):
        out.EndBlock()
    with pytest.raises(YaoCallError, match="^block_id must be a string$"):
        out.EndBlock(1)
    assert out.EndBlock("B9") is None
    assert writer.chunks == []
    assert [d["code"] for d in out.diagnostics] == ["block_unknown"]


def test_nested_agent_thread_id_goes_on_messages_and_events():
    """A non-root stack sets ThreadID = Stack.ID on every new message (context/output.go:86-89); the
    lifecycle events carry it (thread_id omitempty, types.go:360, 372)."""
    out, writer, _, _ = request(thread_id="ctx-child")
    out.Send("hi")
    assert lines(writer) == [
        start("M1", extra=',"thread_id":"ctx-child"'),
        'data: {"type":"text","props":{"content":"hi"},"chunk_id":"C1","message_id":"M1","thread_id":"ctx-child"}',
        end("M1", 1, "hi", thread="ctx-child"),
    ]


# ---- SendStream / Append / End ----------------------------------------------------------------------

def test_streaming_workflow_events_and_the_folded_message():
    """TestJsValueStreamingWorkflow (jsapi_output_integration_test.go:725-772) and TestJsValueSendStream
    (:563-605): SendStream writes message_start and the message, no message_end; each Append is a text
    append delta; End writes message_end with the content the request's buffer put together
    (context/output.go:229-406, buffer.go:224-266), chunk_count 1 + 4. The CUI client shows the whole
    text and, after message_end, delta false (chunkProcessor.ts:49-63)."""
    out, writer, fold, _ = request()
    mid = out.SendStream({"type": "text", "props": {"content": "# Title\n\n"}})
    assert (mid, [c["type"] for c in writer.chunks]) == ("M1", ["event", "text"])
    for piece in ("First paragraph. ", "Second sentence. ", "Third sentence.\n\n", "Second paragraph."):
        out.Append(mid, piece)
    assert out.End(mid) == "M1"
    whole = "# Title\n\nFirst paragraph. Second sentence. Third sentence.\n\nSecond paragraph."
    assert lines(writer)[2] == ('data: {"type":"text","props":{"content":"First paragraph. "},"chunk_id":"C2",'
                                '"message_id":"M1","delta":true,"delta_action":"append"}')
    assert lines(writer)[-1] == end("M1", 5, whole)
    assert fold.messages == [{"ui_id": "s2", "chunk_id": "C5", "message_id": "s1:M1", "type": "text",
                              "props": {"content": whole}, "metadata": {"timestamp": 42}, "delta": False}]
    assert out.diagnostics == [] and fold.diagnostics == []


def test_end_with_final_content_appends_it_first():
    """TestJsValueEndWithFinalContent (jsapi_output_integration_test.go:685-723): End(id, " End") sends a
    text append delta, then message_end with "Start End" (context/output.go:347-401)."""
    out, writer, _, _ = request()
    mid = out.SendStream("Start")
    out.End(mid, " End")
    assert lines(writer)[2:] == [
        'data: {"type":"text","props":{"content":" End"},"chunk_id":"C2","message_id":"M1","delta":true,'
        '"delta_action":"append"}',
        end("M1", 2, "Start End"),
    ]


def test_multiple_streams_keep_their_own_ids_and_content():
    """TestJsValueMultipleStreams (jsapi_output_integration_test.go:892-933): two interleaved streams get
    different ids; each End reports its own content."""
    out, writer, fold, _ = request()
    one = out.SendStream({"type": "text", "props": {"content": "Stream 1: "}})
    two = out.SendStream({"type": "text", "props": {"content": "Stream 2: "}})
    for a, b in (("A", "X"), ("B", "Y"), ("C", "Z")):
        out.Append(one, a)
        out.Append(two, b)
    out.End(one)
    out.End(two)
    assert (one, two) == ("M1", "M2")
    assert lines(writer)[-2:] == [end("M1", 4, "Stream 1: ABC"), end("M2", 4, "Stream 2: XYZ")]
    assert [(m["message_id"], m["props"]) for m in fold.messages] == [
        ("s1:M1", {"content": "Stream 1: ABC"}), ("s1:M2", {"content": "Stream 2: XYZ"})]


def test_durations_are_go_milliseconds_of_the_monotonic_clock():
    """message_end's duration_ms is time.Since(start).Milliseconds() (context/output.go:378): truncated."""
    out, writer, _, clock = request()
    mid = out.SendStream("a")
    clock.advance(1_999_999e-9)  # ns
    out.End(mid)
    assert writer.chunks[-1]["props"]["data"]["duration_ms"] == 1


def test_end_errors():
    """TestJsValueEndErrorHandling (:808-834), TestJsValueEndWithInvalidMessageID (:836-862) and
    TestJsValueSendStreamErrorHandling (:864-890) in jsapi_output_integration_test.go."""
    out, writer, _, _ = request()
    with pytest.raises(YaoCallError, match="^End requires a messageId argument$"):
        out.End()
    with pytest.raises(YaoCallError, match="^messageId must be a string$"):
        out.End(123)
    with pytest.raises(YaoCallError, match="^SendStream requires a message argument$"):
        out.SendStream()
    assert writer.chunks == []


def test_end_of_an_unknown_id_still_sends_message_end():
    """ctx.End with no metadata for the id (context/output.go:370-405): type "text", duration 0, 0 chunks,
    no content — Yao gives no error; we note it. End("") sends nothing (output.go:343-345)."""
    out, writer, _, _ = request()
    assert out.End("") == ""
    assert writer.chunks == []
    out.End("nope")
    assert writer.chunks == [{"type": "event", "props": {
        "data": {"message_id": "nope", "type": "text", "timestamp": T, "duration_ms": 0, "chunk_count": 0,
                 "status": "completed"},
        "event": "message_end", "message": "Message completed"}}]
    assert [(d["code"], d["where"]) for d in out.diagnostics] == [("end_unknown", "ctx.End('nope')")]


def test_a_second_end_has_no_content_and_is_noted():
    """CompleteStreamingMessage finds the message only while it streams (buffer.go:251-266): a second
    End writes message_end without extra."""
    out, writer, _, _ = request()
    mid = out.SendStream("x")
    out.End(mid)
    out.End(mid)
    assert lines(writer)[-2:] == [end("M1", 1, "x"), end("M1", 1)]
    assert [d["code"] for d in out.diagnostics] == ["end_twice"]


def test_the_buffer_appends_every_delta_content_even_a_replace():
    """ctx.Send passes every delta's string props.content to Buffer.AppendMessageContent (output.go:66-71),
    which appends it (buffer.go:226-246) — a Replace too — while the CUI shows the replaced text. A
    non-string first content is replaced by the first string (buffer.go:237-241)."""
    out, writer, fold, _ = request()
    mid = out.SendStream("Initial")
    out.Replace(mid, "Updated")
    out.End(mid)
    other = out.SendStream({"type": "card", "props": {"content": 5}})
    out.Append(other, "a")
    out.End(other)
    assert writer.chunks[-5]["props"]["data"]["extra"] == {"content": "InitialUpdated"}
    assert writer.chunks[-1]["props"]["data"]["extra"] == {"content": "a"}
    # onto a number the client's append sets the sent value (delta.ts:74-82), and takes the delta's type
    assert [(m["type"], m["props"]) for m in fold.messages] == [("text", {"content": "Updated"}),
                                                               ("text", {"content": "a"})]


def test_without_history_end_has_no_content():
    """With Skip.History there is no streaming buffer (output.go:319), so End sends no content."""
    out, writer, _, _ = request(history=False)
    mid = out.SendStream("x")
    out.End(mid)
    assert lines(writer)[-1] == end("M1", 1)


def test_append_after_end_shows_only_the_new_piece_in_the_cui():
    """After message_end the client clears the message's delta cache (chunkProcessor.ts:49-60); the next
    delta starts from empty props (delta.ts:31-37), so the message shows only "late". Yao sends the delta
    as any other (inherits block, counts a chunk)."""
    out, writer, fold, _ = request()
    mid = out.SendStream("early")
    out.End(mid)
    out.Append(mid, "late")
    assert writer.chunks[-1] == {"type": "text", "props": {"content": "late"}, "chunk_id": "C2", "message_id": "M1",
                                 "delta": True, "delta_action": "append"}
    assert fold.messages[0]["props"] == {"content": "late"}
    assert fold.messages[0]["delta"] is False  # completed: stays false (chunkProcessor.ts:94, 110)
    assert [d["code"] for d in out.diagnostics] == ["after_end"]
    assert [d["code"] for d in fold.diagnostics] == ["after_done"]


def test_a_message_start_event_sent_through_send_registers_the_message():
    """A message_start event through ctx.Send (the LLM stream handler's, handlers/stream.go:166-167) records
    the message with 0 chunks (context/output.go:33-49): a later Append inherits and counts (1 chunk),
    and End reports its type; it was never in the streaming buffer, so no content (buffer.go:251-266)."""
    from agentctx_widgets.yao.wire import MESSAGE_START, message_start_data
    out, writer, _, _ = request()
    out.send(event_message(MESSAGE_START, message_start_data("M7", "thinking", T)))
    out.Append("M7", "x")
    out.End("M7")
    assert lines(writer) == [
        start("M7", "thinking"),
        'data: {"type":"text","props":{"content":"x"},"chunk_id":"C1","message_id":"M7","delta":true,'
        '"delta_action":"append"}',
        end("M7", 1, kind="thinking"),
    ]
    assert out.diagnostics == []


def test_send_stream_of_an_event_goes_through_send_and_returns_nothing():
    """ctx.SendStream hands an event to ctx.Send and returns "" (context/output.go:235-240); events get no
    chunk id (output.go:75-82)."""
    out, writer, _, _ = request()
    assert out.SendStream({"type": "event", "props": {"event": "custom", "data": {"k": 1}}}) == ""
    assert writer.chunks == [{"type": "event", "props": {"data": {"k": 1}, "event": "custom"}}]


def test_on_message_can_skip_a_send():
    """Stack.Options.OnMessage (ctx.agent.Call's onChunk) returning non-zero skips the message
    (context/output.go:18-23); Send still returns the id it made (jsapi.go:273-297)."""
    seen = []
    out = YaoOutput([writer := CuiWriter()], clock=FakeClock(), on_message=lambda msg: seen.append(msg.type) or 1)
    assert out.Send("hidden") == "M1"
    assert (seen, writer.chunks) == (["text"], [])


# ---- Replace / Append / Merge / Set on a sent message ----------------------------------------------

def test_deltas_inherit_the_block_and_what_the_cui_makes_of_them():
    """TestJsValueBlockIDInheritance (jsapi_output_integration_test.go:480-519): every delta inherits
    block_id B1 (context/output.go:52-62). In the client (delta.ts), Send's message_end already cleared
    the cache: the Append starts afresh (" appended"), Replace puts the props, Merge at path "props"
    merges undefined into undefined (nothing: props has no "props"), Set at "props.state" makes
    props.props = {} and sets state to undefined (dropped by JSON)."""
    out, writer, fold, _ = request()
    block = out.BlockID()
    mid = out.Send("Initial message", block)
    out.Append(mid, " appended")
    out.Replace(mid, "Replaced message")
    out.Merge(mid, {"type": "text", "props": {"status": "done"}}, "props")
    out.Set(mid, {"type": "text", "props": {"state": "final"}}, "props.state")
    assert writer.chunks[-4:] == [
        {"type": "text", "props": {"content": " appended"}, "chunk_id": "C2", "message_id": "M1", "block_id": "B1",
         "delta": True, "delta_action": "append"},
        {"type": "text", "props": {"content": "Replaced message"}, "chunk_id": "C3", "message_id": "M1",
         "block_id": "B1", "delta": True, "delta_action": "replace"},
        {"type": "text", "props": {"status": "done"}, "chunk_id": "C4", "message_id": "M1", "block_id": "B1",
         "delta": True, "delta_path": "props", "delta_action": "merge"},
        {"type": "text", "props": {"state": "final"}, "chunk_id": "C5", "message_id": "M1", "block_id": "B1",
         "delta": True, "delta_path": "props.state", "delta_action": "set"},
    ]
    assert fold.messages == [{"ui_id": "s2", "chunk_id": "C5", "message_id": "s1:M1", "block_id": "B1",
                              "type": "text", "props": {"content": "Replaced message", "props": {}},
                              "metadata": {"timestamp": 42}, "delta": False}]


def test_append_to_sent_messages_as_the_cui_shows_them():
    """TestJsValueAppend (jsapi_output_integration_test.go:359-392). Send ends the message at once, so in
    the client "Hello" is gone: Append starts from empty props and shows " World!" (delta.ts:31-37,
    69-84). Appending at "props.content" reads props.props.content — undefined in the chunk too — so
    the client writes props.props = {} and loses "Line 1\\n"; the text shorthand's type "text" replaces
    "data" (delta.ts:118-122)."""
    out, _, fold, _ = request()
    one = out.Send("Hello")
    out.Append(one, " World")
    out.Append(one, "!")
    two = out.Send({"type": "data", "props": {"content": "Line 1\n"}})
    out.Append(two, "Line 2\n", "props.content")
    out.Append(two, "Line 3\n", "props.content")
    assert [(m["type"], m["props"]) for m in fold.messages] == [("text", {"content": " World!"}),
                                                               ("text", {"props": {}})]
    assert [d["code"] for d in out.diagnostics] == ["after_end", "after_end"]


def test_merge_at_props_blanks_a_sent_status_card():
    """TestJsValueMerge (jsapi_output_integration_test.go:394-433): Merge(id, {props: {progress: 50}},
    "props") after Send. The cleared cache starts from {} and deepMerge(undefined, undefined) is
    undefined (delta.ts:97-103, 191-194), so the card's props end up empty."""
    out, _, fold, _ = request()
    mid = out.Send({"type": "status", "props": {"status": "running", "progress": 0, "started": True}})
    out.Merge(mid, {"type": "status", "props": {"progress": 50}}, "props")
    out.Merge(mid, {"type": "status", "props": {"progress": 100, "status": "completed"}}, "props")
    assert [(m["type"], m["props"]) for m in fold.messages] == [("status", {})]


def test_merge_without_a_path_on_a_stream_merges_props():
    """ctx.Merge(id, data) with no path onto an open stream: deepMerge of the props (delta.ts:104)."""
    out, _, fold, _ = request()
    mid = out.SendStream({"type": "status", "props": {"status": "running", "progress": 0}})
    out.Merge(mid, {"type": "status", "props": {"progress": 50}})
    assert fold.messages[0]["props"] == {"status": "running", "progress": 50}


def test_append_text_onto_a_thinking_stream_turns_it_into_text():
    """Append's string shorthand is a "text" message (jsapi_helpers.go:14-21): the client takes the delta's
    type (delta.ts:118-122) and a standard client gets content, not reasoning_content (converter.go:58-77)."""
    out, _, fold, _ = request()
    std = OpenAIWriter(created=1)
    out.add_sink(std)
    mid = out.SendStream({"type": "thinking", "props": {"content": "Hmm"}})
    out.Append(mid, " more")
    assert [(m["type"], m["props"]) for m in fold.messages] == [("text", {"content": "Hmm more"})]
    assert [c["choices"][0]["delta"] for c in std.chunks] == [
        {"reasoning_content": "Hmm", "role": "assistant"}, {"content": " more"}]
    assert [d["code"] for d in fold.diagnostics] == ["type_changed"]


@pytest.mark.parametrize(("method", "args", "error"), [
    ("Replace", ("M1",), "Replace requires messageId and message arguments"),
    ("Replace", (1, "x"), "messageId must be a string"),
    ("Append", ("M1",), "Append requires messageId and content arguments"),
    ("Append", ("M1", {"props": {"content": "x"}}), "invalid content: message.type is required and must be a string"),
    ("Merge", ("M1",), "Merge requires messageId and data arguments"),
    ("Merge", ("M1", 3), "invalid data: message must be a string or object"),
    ("Set", ("M1", {"type": "t"}), "Set requires messageId, data, and path arguments"),
    ("Set", ("M1", 5, "x"), "invalid data: message must be a string or object"),
    ("Set", ("M1", {"type": "t"}, 5), "path must be a string"),
    ("Set", ("M1", {"type": "t"}, ""), "path cannot be empty for Set operation"),
])
def test_delta_method_errors(method, args, error):
    """replaceMethod / appendMethod / mergeMethod / setMethod (jsapi.go:403-640): argument checks in
    Yao's order (Set parses the data before it looks at the path) and texts; nothing is sent."""
    out, writer, _, _ = request()
    with pytest.raises(YaoCallError) as raised:
        getattr(out, method)(*args)
    assert str(raised.value) == error
    assert writer.chunks == []


# ---- standard (OpenAI) clients --------------------------------------------------------------------

def chunk(mid: str, delta: dict) -> dict:
    return {"choices": [{"delta": delta, "finish_reason": None, "index": 0}], "created": 1, "id": mid,
            "model": "yao-agent", "object": "chat.completion.chunk"}


def test_standard_client_gets_yao_chunks_and_done():
    """TestJsValueSendMultipleTypes (jsapi_output_integration_test.go:134-181) with AcceptStandard, each
    chunk as openai/converter.go writes it (id = message_id, keys sorted: Go maps): role on the first
    text chunk only (writer.go:78-89), tool_call keeps only id and type — name and arguments are not
    read (converter.go:93-116) — the error object as it is, the image as Markdown; the lifecycle
    events are silent (adapter.go:79-91); Close writes data: [DONE] (writer.go:190-208)."""
    out, writer, _, _ = request("standard")
    out.Send({"type": "text", "props": {"content": "Hello"}})
    out.Send({"type": "thinking", "props": {"content": "Let me think..."}})
    out.Send({"type": "loading", "props": {"message": "Processing..."}})
    out.Send({"type": "tool_call", "props": {"id": "call_123", "name": "get_weather",
                                             "arguments": '{"location": "San Francisco"}'}})
    out.Send({"type": "error", "props": {"message": "Something went wrong", "code": "ERR_500"}})
    out.Send({"type": "image", "props": {"url": "https://example.com/image.jpg", "alt": "Example image",
                                         "width": 800, "height": 600}})
    writer.close()
    assert writer.chunks == [
        chunk("M1", {"content": "Hello", "role": "assistant"}),
        chunk("M2", {"reasoning_content": "Let me think..."}),
        chunk("M3", {"reasoning_content": "Processing..."}),
        chunk("M4", {"tool_calls": [{"id": "call_123", "type": "function"}]}),
        {"error": {"code": "ERR_500", "message": "Something went wrong", "type": "ERR_500"}},
        chunk("M6", {"content": "![Example image](https://example.com/image.jpg)"}),
        "[DONE]",
    ]
    assert lines(writer)[0] == ('data: {"choices":[{"delta":{"content":"Hello","role":"assistant"},"finish_reason":null,'
                                '"index":0}],"created":1,"id":"M1","model":"yao-agent","object":"chat.completion.chunk"}')
    assert writer.text.endswith("data: [DONE]\n\n")


def test_standard_client_refuses_an_image_without_url_and_the_id_is_used_up():
    """convertImage's error (converter.go:224-227) comes back as "Send failed: image message missing url"
    (jsapi.go:283-285). Nothing is written; the next message is M2, as in Yao (its id was made first)."""
    out, writer, fold, _ = request("standard")
    with pytest.raises(YaoCallError, match="^Send failed: image message missing url$"):
        out.Send({"type": "image", "props": {"alt": "x"}})
    assert writer.chunks == [] and fold.messages == [] and fold.events == []
    assert out.Send("ok") == "M2"


def test_standard_client_gets_execute_as_yao_link():
    """``execute`` has no converter (converter.go:17-32): convertToLink with Yao's base URL
    (writer.go:47-50) and the fallback template "📎 [View %s](" + type + ")" (converter.go:308-315)."""
    out, writer, _, _ = request("standard")
    out.Send({"type": "execute", "props": {"tool": "Bash", "tool_id": "toolu_1", "status": "running"}})
    assert writer.chunks == [chunk("M1", {"content": "📎 [View http://localhost:8000/__yao_admin_root/agent/view/"
                                                     "execute/M1](execute)"})]


def test_stream_start_and_end_events():
    """stream_start / stream_end as agent.go:712-751 fills them and handlers/stream.go:123-134, 560-571
    sends them (EventStream*Data, types.go:329-351). The CUI gets both whole; a standard client gets
    only stream_start's trace link (converter.go:145-207, i18n "Assistant is processing" / "View
    process"); the client starts a new stream session on stream_start (chunkProcessor.ts:43-47)."""
    out, cui, fold, _ = request()
    std = OpenAIWriter(created=1)
    out.add_sink(std)
    out.send(event_message(STREAM_START, stream_start_data(
        "ctx1", "req1", T, "chat1", "tr1", assistant=assistant_info("tests.create", name="Create"),
        metadata={"b": 1, "a": 2})))
    out.Send("hi")
    out.send(event_message(STREAM_END, stream_end_data(
        "req1", "ctx1", "tr1", T, 12, "completed",
        usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5})))
    out.flush()
    assert lines(cui)[0] == event("stream_start", "Stream started",
                                  f'{{"context_id":"ctx1","request_id":"req1","timestamp":{T},"chat_id":"chat1",'
                                  f'"trace_id":"tr1","assistant":{{"assistant_id":"tests.create","name":"Create"}},'
                                  f'"metadata":{{"a":2,"b":1}}}}')
    assert lines(cui)[-1] == event("stream_end", "Stream completed",
                                   f'{{"request_id":"req1","context_id":"ctx1","trace_id":"tr1","timestamp":{T},'
                                   f'"duration_ms":12,"status":"completed","usage":{{"prompt_tokens":3,'
                                   f'"completion_tokens":2,"total_tokens":5}}}}')
    assert std.chunks[0] == chunk("", {"content": "🚀 Assistant is processing - [View process]"
                                                  "(http://localhost:8000/__yao_admin_root/trace/tr1/view)\n"})
    assert std.chunks[1] == chunk("M1", {"content": "hi", "role": "assistant"})
    assert len(std.chunks) == 2
    assert [e["name"] for e in fold.events] == ["stream_start", "message_start", "message_end", "stream_end"]
    assert fold.messages[0]["message_id"] == "s2:M1"  # the stream id stream_start made


def test_to_wire_omits_zero_fields():
    """message.Message's tags (types.go:22-51): type always; props, ids, delta, paths, type_change
    omitempty; metadata a pointer (written as {} when all its fields are zero)."""
    assert to_wire(YaoMessage(type="")) == {"type": ""}
    assert dumps(to_wire(YaoMessage(type="x", props={}, type_change=True))) == '{"type":"x","type_change":true}'
    assert dumps(to_wire(YaoMessage(type="x", metadata=Metadata()))) == '{"type":"x","metadata":{}}'


# ---- the CUI fold on its own ------------------------------------------------------------------------

def test_fold_reads_the_sse_text_and_keys_messages_as_the_client():
    """chunkProcessor.ts:74-77: a chunk without message_id is keyed by chunk_id, then seq-N, then a
    nanoid; type_change replaces the message with the chunk itself (chunkProcessor.ts:79-90)."""
    fold = CuiState(new_id=counter("n"), clock=FakeClock(wall_ms=7))
    fold.feed_text('data: {"type":"text","props":{"content":"a"},"chunk_id":"C9"}\n\n'
                   'data: {"type":"text","props":{"content":"b"},"metadata":{"sequence":4}}\n\n'
                   'data: {"type":"loading","props":{"message":"wait"},"message_id":"M1"}\n\n'
                   'data: {"type":"text","props":{"content":"done"},"message_id":"M1","type_change":true}\n\n'
                   'data: [DONE]\n\n')
    assert fold.messages == [
        {"ui_id": "n2", "chunk_id": "C9", "message_id": "n1:C9", "type": "text", "props": {"content": "a"},
         "metadata": {"timestamp": 7}},
        {"ui_id": "n3", "message_id": "n1:seq-4", "type": "text", "props": {"content": "b"},
         "metadata": {"sequence": 4, "timestamp": 7}},
        {"type": "text", "props": {"content": "done"}, "message_id": "n1:M1", "type_change": True, "delta": False,
         "ui_id": "n5"},
    ]


def test_fold_of_the_sse_text_equals_the_fold_of_the_objects():
    """The client parses each ``data:`` line (Go's JSON, escapes included) into the same objects."""
    out, writer, fold, _ = request()
    mid = out.SendStream({"type": "text", "props": {"content": "<b>&"}}, "B1")
    out.Append(mid, "\u2028 ok")
    out.End(mid)
    again = CuiState(new_id=counter("s"), clock=FakeClock(wall_ms=42))
    again.feed_text(writer.text)
    assert (again.messages, again.events) == (fold.messages, fold.events)
    assert again.messages[0]["props"] == {"content": "<b>&\u2028 ok"}


# ---- which API a script was written for -------------------------------------------------------------

CURRENT = """
function Create(c, messages, options) {
  const id = c.SendStream("thinking...");   // today's API
  c.memory.user.Set("k", 1);
  return null;
}
"""

SEED = """
function Create(ctx, messages) {
  ctx.Send({type: "text", props: {content: "hi"}, id: "m1", done: true});
  ctx.Flush();
}
"""


def test_detect_api_from_what_the_script_uses():
    """The rules of yao/output.py's docstring: members only one API has (jsapi.go:34-49 at 5a3f9a6a
    sets no SendGroup / Flush), on the hook's own ctx parameter; comments do not count."""
    assert detect_api(CURRENT, default="seed").api == "current"
    assert scan(CURRENT)["current"] == [(3, "ctx.SendStream")]  # memory.user.Set is not ctx.Set
    assert detect_api(SEED, default="current").api == "seed"
    assert scan(SEED)["seed"] == [(4, "ctx.Flush")]
    plain = "function Next(ctx, payload) { ctx.Send('done') } // ctx.End(x)"
    assert (detect_api(plain, default="current").api, detect_api(plain, default="seed").decided_by) == (
        "current", "default")
    assert detect_api("function Create(ctx) { return { id: ctx.Send('x') } }", default="seed").api == "current"
    assert detect_api(SEED, default="current", explicit="current").decided_by == "explicit"


def test_detect_api_refuses_a_mixed_script():
    with pytest.raises(MixedApiError, match=r"ctx\.End \(line 1\).*ctx\.SendGroup \(line 2\)"):
        detect_api("function Create(ctx) { ctx.End('M1') }\nctx.SendGroup({id: 'g', messages: []})",
                   default="current")


# ---- the seed-era view fed from a current-API stream ------------------------------------------------

def _scenario(out: YaoOutput) -> None:
    """Every case where the client's fold is not a plain append: see the tests above for each."""
    one = out.Send("Hello")
    out.Append(one, " World")
    out.Append(one, "!")
    two = out.Send({"type": "data", "props": {"content": "Line 1\n"}})
    out.Append(two, "Line 2\n", "props.content")
    card = out.Send({"type": "status", "props": {"status": "running", "progress": 0}})
    out.Merge(card, {"type": "status", "props": {"progress": 50}}, "props")
    think = out.SendStream({"type": "thinking", "props": {"content": "Hmm"}})
    out.Append(think, " more")
    out.End(think)
    out.Append(think, " after")
    out.send(YaoMessage(type="loading", props={"message": "x"}, message_id="M9", type_change=True))
    out.flush()
    out.send(event_message(STREAM_START, stream_start_data("c", "r", T, "chat", "")))
    out.Send({"type": "text", "props": {"content": "second stream"}, "message_id": one})


def test_the_view_bridge_gives_the_seed_engine_the_clients_state():
    """SeedViewBridge's messages folded by the seed-era delta engine (what ContextView runs) end where the
    CUI client at 66cb383f ends (CuiState): same ids (per stream), types and props."""
    from agentctx_widgets.output.delta import apply_message, new_state
    from agentctx_widgets.yao.view_bridge import SeedViewBridge
    seed_messages: list[dict] = []
    fold = CuiState(new_id=counter("s"), clock=FakeClock(wall_ms=0))
    out = YaoOutput([fold, bridge := SeedViewBridge(seed_messages.extend)], clock=FakeClock())
    _scenario(out)
    state = new_state()
    for message in seed_messages:
        state = apply_message(state, message)
    view = [(key, state["messages"][key]["type"], state["messages"][key]["props"]) for key in state["order"]]
    stream = {"s1": "1", "s7": "2"}  # the client's stream ids (nanoid calls) and the bridge's counter
    client = [(f"{stream[m['message_id'].split(':')[0]]}:{m['message_id'].split(':')[1]}", m["type"], m["props"])
              for m in fold.messages]
    assert view == client
    assert client[:4] == [("1:M1", "text", {"content": " World!"}), ("1:M2", "text", {"props": {}}),
                          ("1:M3", "status", {}), ("1:M4", "text", {"content": " after"})]
    assert [e["props"]["event"] for e in bridge.events][-1] == "message_end"


# ---- from JavaScript -------------------------------------------------------------------------------

HOOK = """
function Create(ctx, messages) {
  const errors = [];
  const header = ctx.Send({type: "text", props: {content: "# Report\\n"}});
  const block = ctx.BlockID();
  const id = ctx.SendStream({type: "text", props: {content: "Steps: "}}, block);
  for (const word of ["one ", "two ", "three"]) ctx.Append(id, word);
  ctx.End(id);
  const wait = ctx.Send({type: "loading", props: {message: "Working..."}}, block);
  ctx.Replace(wait, {type: "loading", props: {message: "Done"}});
  ctx.EndBlock(block);
  for (const call of [() => ctx.End(7), () => ctx.Append(id), () => ctx.Set(id, {type: "t"}, ""),
                      () => ctx.Send({props: {}}), () => ctx.Send(undefined)]) {
    try { call(); errors.push(null); } catch (error) { errors.push(error.message); }
  }
  return {header, block, id, wait, errors};
}
"""


def test_a_hook_in_quickjs_drives_the_api():
    """A hook written after yao-dev-app assistants/tests/messages/src/basic.ts (SendStream, Append, End,
    Send of a loading message then Replace) run in QuickJS with a test binding that passes the JS
    arguments to YaoOutput's methods and throws their YaoCallError text as a JS Error, as Yao's
    bridge.JsException does (jsapi.go)."""
    quickjs = pytest.importorskip("quickjs")
    out, writer, fold, _ = request()

    def host(method: str, args_json: str) -> str:
        try:
            return json.dumps({"value": getattr(out, method)(*json.loads(args_json))})
        except YaoCallError as error:
            return json.dumps({"error": str(error)})

    js = quickjs.Context()
    js.add_callable("__yao", host)
    js.eval("""const ctx = {};
      for (const m of ["Send", "SendStream", "Append", "Replace", "Merge", "Set", "End", "EndBlock",
                       "MessageID", "BlockID", "ThreadID"])
        ctx[m] = (...args) => { const r = JSON.parse(__yao(m, JSON.stringify(args)));
                                if ("error" in r) throw new Error(r.error); return r.value; };""")
    js.eval(HOOK)
    result = json.loads(js.eval("JSON.stringify(Create(ctx, []))"))
    assert result == {"header": "M1", "block": "B1", "id": "M2", "wait": "M3", "errors": [
        "messageId must be a string", "Append requires messageId and content arguments",
        "path cannot be empty for Set operation", "invalid message: message.type is required and must be a string",
        "invalid message: message must be a string or object"]}
    names = [(c["props"]["event"] if c["type"] == "event" else c["type"]) for c in writer.chunks]
    assert names == ["message_start", "text", "message_end",                       # header
                     "block_start", "message_start", "text", "text", "text", "text", "message_end",  # stream
                     "message_start", "loading", "message_end", "loading",        # Send + Replace
                     "block_end"]
    assert writer.chunks[-1]["props"]["data"]["message_count"] == 2
    assert [(m["type"], m["props"], m["delta"]) for m in fold.messages] == [
        ("text", {"content": "# Report\n"}, False), ("text", {"content": "Steps: one two three"}, False),
        ("loading", {"message": "Done"}, False)]
    assert out.diagnostics == []


def test_a_whole_replace_after_send_is_not_noted_and_reopens_the_message():
    """Replace without a path after Send: the client starts from {} and replaces the props (delta.ts:88-95),
    the same props an open message would get — no note; the cache is open again, so an Append then
    appends (delta.ts:69-84)."""
    out, _, fold, _ = request()
    mid = out.Send("a")
    out.Replace(mid, "b")
    out.Append(mid, "c")
    assert fold.messages[0]["props"] == {"content": "bc"}
    assert out.diagnostics == []
