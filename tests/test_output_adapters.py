"""Client adapters: what Yao's OpenAI writer sends a standard client, what its CUI writer sends a CUI client.

Upstream: YaoApp/yao @ afab9c2 — agent/output/adapters/openai/{adapter,converter,writer,types}.go,
agent/output/adapters/cui/{adapter,writer}.go, agent/output/message/types.go, agent/output/output.go.
Case numbers (S…, C…) follow the issue's research notes (B-adapters §4: input → output, worked out from the Go code).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentctx_widgets.output import CuiAdapter, Output, OutputMessageError, StandardAdapter, adapter_for, normalize_message
from agentctx_widgets.output.adapters import DONE, cui_group, cui_message
from agentctx_widgets.output.message_types import GENERIC, MESSAGE_TYPES, TYPES, YAO_BASE_URL, lookup, to_standard
from agentctx_widgets.output.messages import group_members, normalize_group

T = 1_700_000_000
B = YAO_BASE_URL
RENDERERS = Path(__file__).resolve().parents[1] / "js" / "src" / "render" / "output-types.js"


def chunk(msg_id, delta):
    """createOpenAIChunk (converter.go:318-332), with a fixed `created`."""
    return {"id": msg_id, "object": "chat.completion.chunk", "created": T, "model": "yao-agent",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def standard(**kw):
    return StandardAdapter(created=T, **kw)


def send(adapter, *raw):
    """What ctx.Send does before the writer: parseMessage (normalize_message), then Writer.Write."""
    adapter.write([normalize_message(m) for m in raw])
    return adapter.chunks


# ---- the one table --------------------------------------------------------------------------------

def test_the_python_table_and_the_js_renderer_table_list_the_same_builtin_types():
    """message/types.go:76-95 lists 11 built-in types; js/src/render/output-types.js renders each."""
    source = RENDERERS.read_text()
    body = re.search(r"export const OUTPUT_RENDERERS = \{(.*?)\n\};", source, re.S).group(1)
    keys = [re.match(r"\s*([A-Za-z_]\w*)", entry).group(1) for entry in body.split(",") if entry.strip()]
    assert keys == list(MESSAGE_TYPES) == list(TYPES)


def test_every_type_has_props_a_conversion_and_a_transcript():
    """types.go:107-208 (props, informational); converter.go:17-32 (the registry)."""
    for name, spec in TYPES.items():
        assert spec.name == name and callable(spec.standard) and callable(spec.transcript) and spec.cite
    assert {name for name, spec in TYPES.items() if spec.takes_role} == {"text", "thinking"}
    assert [p.name for p in TYPES["image"].props if p.required] == ["url"]
    assert lookup("my_widget") is GENERIC and lookup(5) is GENERIC


# ---- standard: one message at a time (B §4.1) -------------------------------------------------------

ROLE = {"role": "assistant"}
CASES = [
    # (case, messages, adapter options, expected payloads)
    ("S1 text, first chunk has the role; converter.go:58-66, writer.go:79-87",
     [{"type": "text", "props": {"content": "Hello"}, "id": "m1"}], {},
     [chunk("m1", {"content": "Hello", **ROLE})]),
    ("S2 append delta sends props.content as it is; converter.go:58-66",
     [{"type": "text", "props": {"content": "Hello"}, "id": "m1"},
      {"type": "text", "props": {"content": "..."}, "id": "m1", "delta": True, "delta_path": "content",
       "delta_action": "append"}], {},
     [chunk("m1", {"content": "Hello", **ROLE}), chunk("m1", {"content": "..."})]),
    ("S3 string shorthand, no id: id is ''; jsapi_helpers.go:14-21, converter.go:320",
     ["Welcome!"], {}, [chunk("", {"content": "Welcome!", **ROLE})]),
    ("S4 a non-delta resend is sent whole (no diff); converter.go:58-66",
     [{"type": "text", "props": {"content": "Hello"}, "id": "m"},
      {"type": "text", "props": {"content": "Hello world"}, "id": "m"}], {},
     [chunk("m", {"content": "Hello", **ROLE}), chunk("m", {"content": "Hello world"})]),
    ("S5 replace delta: the action is ignored, props.content sent; converter.go:58-66",
     [{"type": "text", "props": {"content": "X"}, "id": "m", "delta": True, "delta_action": "replace"}], {},
     [chunk("m", {"content": "X", **ROLE})]),
    ("S6 empty props still write content ''; converter.go:59, 335-340",
     [{"type": "text", "props": {}, "id": "m", "delta": True}], {}, [chunk("m", {"content": "", **ROLE})]),
    ("S7 content not a string: ''; converter.go:335-340",
     [{"type": "text", "props": {"content": 5}, "delta": True}], {}, [chunk("", {"content": "", **ROLE})]),
    ("S8 done without delta sends nothing (seed's bare close); adapter.go:96-98",
     [{"type": "text", "props": {}, "id": "msg_1", "done": True}], {}, []),
    ("S9 done with delta is converted; adapter.go:96",
     [{"type": "text", "props": {"content": "!"}, "id": "m", "delta": True, "done": True}], {},
     [chunk("m", {"content": "!", **ROLE})]),
    ("S10 done without delta sends nothing even with new content; adapter.go:96-98",
     [{"type": "text", "props": {"content": "Hello world!"}, "id": "m", "done": True}], {}, []),
    ("S11 thinking → reasoning_content, with the role; converter.go:69-77, writer.go:79",
     [{"type": "thinking", "props": {"content": "Hmm"}}], {}, [chunk("", {"reasoning_content": "Hmm", **ROLE})]),
    ("S12 loading → reasoning_content, never the role; converter.go:81-90, writer.go:79",
     [{"type": "loading", "props": {"message": "Analyzing your request..."}}, {"type": "text", "props": {"content": "Hi"}}],
     {}, [chunk("", {"reasoning_content": "Analyzing your request..."}), chunk("", {"content": "Hi", **ROLE})]),
    ("S13 loading default text; converter.go:82",
     [{"type": "loading", "props": {}}], {}, [chunk("", {"reasoning_content": "Processing..."})]),
    ("S14 the seed's 'clear progress' (done, no delta) sends nothing; adapter.go:96-98",
     [{"type": "loading", "props": {"message": ""}, "id": "p", "done": True}], {}, []),
    ("S15 the seed's tool_call {id, name, arguments}: ours carries name/arguments (Yao drops them), no index; "
     "converter.go:93-116",
     [{"type": "tool_call", "props": {"id": "call_123", "name": "get_weather", "arguments": '{"q":1}'}}], {},
     [chunk("", {"tool_calls": [{"id": "call_123", "type": "function",
                                 "function": {"name": "get_weather", "arguments": '{"q":1}'}}]})]),
    ("S16 props.function is passed as Yao passes it; converter.go:104-106",
     [{"type": "tool_call", "props": {"id": "c1", "function": {"name": "f", "arguments": "{}"}}}], {},
     [chunk("", {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})]),
    ("S17 no string props.id: tool_calls []; converter.go:95-98, handlers/stream.go:169-177",
     [{"type": "tool_call", "props": {"raw": "…"}, "delta": True}], {}, [chunk("", {"tool_calls": []})]),
    ("S18 error → a raw {error} object, code in type and code; converter.go:119-132",
     [{"type": "error", "props": {"message": "Something went wrong", "code": "ERR_500"}}], {},
     [{"error": {"message": "Something went wrong", "type": "ERR_500", "code": "ERR_500"}}]),
    ("S19 error defaults; converter.go:120-121",
     [{"type": "error", "props": {}}], {},
     [{"error": {"message": "An error occurred", "type": "server_error", "code": "server_error"}}]),
    ("S20 a number code falls back, details dropped; converter.go:121, 335-340",
     [{"type": "error", "props": {"message": "x", "code": 500, "details": "d"}}], {},
     [{"error": {"message": "x", "type": "server_error", "code": "server_error"}}]),
    ("S21 the stream goes on after an error; writer.go:63-99",
     [{"type": "error", "props": {"message": "x"}}, {"type": "text", "props": {"content": "after"}, "id": "t"}], {},
     [{"error": {"message": "x", "type": "server_error", "code": "server_error"}},
      chunk("t", {"content": "after", **ROLE})]),
    ("S22 image → ![alt](url), no role; converter.go:222-250, types.go:46",
     [{"type": "image", "props": {"url": "https://e/x.jpg", "alt": "Sunset"}}], {},
     [chunk("", {"content": "![Sunset](https://e/x.jpg)"})]),
    ("S23 alt defaults to Image; converter.go:239",
     [{"type": "image", "props": {"url": "https://e/x.jpg"}}], {}, [chunk("", {"content": "![Image](https://e/x.jpg)"})]),
    ("S24 alt '' stays ''; no escaping; converter.go:239",
     [{"type": "image", "props": {"url": "https://x/a (1).png", "alt": ""}}], {},
     [chunk("", {"content": "![](https://x/a (1).png)"})]),
    ("S26 audio → 🔊 [Play Audio](url); types.go:47, converter.go:253-278",
     [{"type": "audio", "props": {"url": "https://e/a.mp3", "format": "mp3"}}], {},
     [chunk("", {"content": "🔊 [Play Audio](https://e/a.mp3)"})]),
    ("S27 video → 🎬 [Watch Video](url); types.go:48",
     [{"type": "video", "props": {"url": "https://e/v.mp4"}}], {}, [chunk("", {"content": "🎬 [Watch Video](https://e/v.mp4)"})]),
    ("S27b audio url '' is still a string: an empty link; converter.go:283-289",
     [{"type": "audio", "props": {"url": ""}}], {}, [chunk("", {"content": "🔊 [Play Audio]()"})]),
    ("S28 audio without url: Yao's view page, with its base URL; converter.go:283-304",
     [{"type": "audio", "props": {}, "id": "a1"}], {"base_url": B},
     [chunk("a1", {"content": f"🔊 [Play Audio]({B}/agent/view/audio/a1)"})]),
    ("S28b a bare adapter (base ''): a relative view link; converter.go:295-300",
     [{"type": "audio", "props": {}, "id": "a1"}], {"base_url": ""},
     [chunk("a1", {"content": "🔊 [Play Audio](/agent/view/audio/a1)"})]),
    ("S28c ours: no base_url, no view server, nothing sent",
     [{"type": "audio", "props": {}, "id": "a1"}], {}, []),
    ("S29 action sends nothing; converter.go:137-140",
     [{"type": "action", "props": {"name": "open_panel", "payload": {}}}], {}, []),
    ("S30 events other than stream_start send nothing; adapter.go:81-91",
     [{"type": "event", "props": {"event": "stream_end", "data": {}}}], {}, []),
    ("S31 stream_start with a trace id, en, no reasoning; converter.go:145-207, i18n/builtin.go:59-60",
     [{"type": "event", "props": {"event": "stream_start", "data": {"trace_id": "T1"}}}], {"base_url": B},
     [chunk("", {"content": f"🚀 Assistant is processing - [View process]({B}/trace/T1/view)\n"})]),
    ("S32 reasoning model, zh-cn; converter.go:191-198, i18n/builtin.go:119-120",
     [{"type": "event", "props": {"event": "stream_start", "data": {"trace_id": "T1"}}}],
     {"base_url": B, "reasoning": True, "locale": "zh-CN"},
     [chunk("", {"reasoning_content": f"🔍 智能体正在处理 - [查看处理详情]({B}/trace/T1/view)\n"})]),
    ("S32b a locale with no text: the i18n keys themselves; i18n.go:327-375",
     [{"type": "event", "props": {"event": "stream_start", "data": {"trace_id": "T1"}}, "done": True}],
     {"base_url": "", "locale": ""},
     [chunk("", {"content": "🚀 output.stream_start - [output.view_trace](/trace/T1/view)\n"})]),
    ("S33 stream_start without data or trace_id: nothing; converter.go:147-151, 172-175",
     [{"type": "event", "props": {"event": "stream_start"}},
      {"type": "event", "props": {"event": "stream_start", "data": {"trace_id": ""}}}], {"base_url": B}, []),
    ("S34 a custom type with a template; types.go:51, converter.go:253-278",
     [{"type": "table", "props": {"url": "u"}}], {}, [chunk("", {"content": "📊 [View Table](u)"})]),
    ("S35 button: its text and the view link; converter.go:265-268, types.go:55",
     [{"type": "button", "props": {"text": "Approve"}, "id": "b1"}], {"base_url": B},
     [chunk("b1", {"content": f"🔘 [Approve]({B}/agent/view/button/b1)"})]),
    ("S36 ours: the fallback link as meant (Yao swaps label and target); converter.go:308-315",
     [{"type": "my_widget", "props": {}, "id": "w1"}, {"type": "my_widget", "props": {"url": "u"}}], {"base_url": B},
     [chunk("w1", {"content": f"📎 [View my_widget]({B}/agent/view/my_widget/w1)"}),
      chunk("", {"content": "📎 [View my_widget](u)"})]),
    ("S37 user_input is not registered: the link fallback; converter.go:17-32",
     [{"type": "user_input", "props": {"content": "hi"}}], {"base_url": B},
     [chunk("", {"content": f"📎 [View user_input]({B}/agent/view/user_input/)"})]),
    ("S37b ours: user_input with no base_url sends nothing",
     [{"type": "user_input", "props": {"content": "hi"}}], {}, []),
]


@pytest.mark.parametrize(("messages", "options", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_standard_case_by_case(messages, options, expected):
    """Each case's id names its upstream lines (adapter.go:79-109 dispatch, converter.go converters,
    writer.go:63-99 role logic)."""
    assert send(standard(**options), *messages) == expected


def test_the_role_goes_on_the_first_text_or_thinking_chunk_only():
    """openai/writer.go:77-88: tool_call, media and loading neither get it nor use it up; a message that
    sends nothing (done, no delta) does not use it up."""
    a = standard()
    send(a, {"type": "text", "props": {"content": "x"}, "id": "d", "done": True},
         {"type": "tool_call", "props": {"id": "c"}}, {"type": "image", "props": {"url": "u"}},
         {"type": "thinking", "props": {"content": "t"}}, {"type": "text", "props": {"content": "a"}})
    assert [c["choices"][0]["delta"] for c in a.chunks] == [
        {"tool_calls": [{"id": "c", "type": "function"}]}, {"content": "![Image](u)"},
        {"reasoning_content": "t", **ROLE}, {"content": "a"}]


def test_tool_call_arguments_that_are_not_a_string_are_sent_as_json_text():
    """Ours (seed "Tool Call Message" says arguments is JSON text); Yao would drop them (converter.go:93-116)."""
    assert send(standard(), {"type": "tool_call", "props": {"id": "c", "name": "f", "arguments": {"n": 1}}}) == [
        chunk("", {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"n":1}'}}]})]


@pytest.mark.parametrize("props", [{}, {"url": ""}, {"url": 5, "alt": "x"}])
def test_an_image_without_a_url_fails_as_yaos_send_does(props):
    """S25: converter.go:224-227 returns "image message missing url"; writer.go:65-74 writes nothing;
    jsapi.go:184 throws "Send failed: …"."""
    a = standard()
    message = normalize_message({"type": "image", "props": props})
    with pytest.raises(OutputMessageError) as caught:
        a.check(message)
    assert str(caught.value) == "Send failed: image message missing url"
    with pytest.raises(OutputMessageError, match="^Send failed: image message missing url$"):
        a.write([message, normalize_message("after")])
    assert a.chunks == [chunk("", {"content": "after", **ROLE})]  # the rest of the batch still went


def test_check_passes_what_yao_writes_and_a_done_image_is_not_converted():
    """adapter.go:96-98 skips done-without-delta before the converter, so no url error for it."""
    a = standard()
    for message in ({"type": "image", "props": {}, "id": "i", "done": True}, {"type": "image", "props": {"url": "u"}},
                    {"type": "text"}, {"type": "my_widget", "props": {}}):
        a.check(normalize_message(message))
    assert a.chunks == [] and a.messages == []


def test_a_group_member_without_a_url_stops_the_group():
    """openai/writer.go:102-119: WriteGroup writes each member and stops at the first error; jsapi.go:210
    says "SendGroup failed: …"."""
    a = standard()
    group = normalize_group({"id": "g", "messages": [{"type": "text", "props": {"content": "a"}},
                                                     {"type": "image", "props": {}}, {"type": "text"}]})
    with pytest.raises(OutputMessageError, match="^SendGroup failed: image message missing url$"):
        a.check_group(group)
    with pytest.raises(OutputMessageError, match="^SendGroup failed: image message missing url$"):
        a.write_group(group)
    assert a.chunks == [chunk("", {"content": "a", **ROLE})]


def test_a_group_reaches_a_standard_client_as_its_members():
    """S38: openai/writer.go:102-119 — no group marker, group id and metadata not sent, role on the first."""
    a = standard()
    out = Output([a])
    out.send_group({"id": "context_info", "metadata": {"timestamp": 1, "type": "context"}, "messages": [
        {"type": "text", "props": {"content": "**Context Information:**"}, "id": "c1"},
        {"type": "text", "props": {"content": "User: Anonymous"}, "id": "c2"}]})
    out.flush()
    assert a.chunks == [chunk("c1", {"content": "**Context Information:**", **ROLE}),
                        chunk("c2", {"content": "User: Anonymous"})]


def test_finish_is_yaos_close_done_after_an_error_too():
    """S39: writer.go:129-132, 196-197 — `data: [DONE]`, no finish_reason chunk, even after an error."""
    a = standard()
    send(a, {"type": "error", "props": {}})
    assert a.finish() == DONE == "[DONE]"
    assert a.chunks[-1] == "[DONE]" and a.ended
    assert a.finish() is None and a.chunks.count("[DONE]") == 1


def test_a_non_delta_resend_duplicates_and_says_so():
    """S4 / S5 (converter.go:58-66 keeps no state): the client appends the whole text again; ours records
    resend_duplicates. Appends, id-less messages and first sends are not reported."""
    heard = []
    a = standard(report=lambda code, where, **details: heard.append((code, where, details)))
    send(a, {"type": "text", "props": {"content": "Hello"}, "id": "m"},
         {"type": "text", "props": {"content": " you"}, "id": "m", "delta": True},
         {"type": "text", "props": {"content": "Hello you all"}, "id": "m"},
         {"type": "text", "props": {"content": "Hi"}, "id": "m", "delta": True, "delta_action": "replace"},
         "x", "x", {"type": "thinking", "props": {"content": "t"}, "id": "n"})
    assert [(d["code"], d["where"]) for d in a.diagnostics] == [("resend_duplicates", "message 'm'")] * 2
    assert a.diagnostics[0]["message"] == ("a message without delta for 'm' sends its whole content again: "
                                           "a standard (OpenAI-style) client appends it after the 9 characters it "
                                           "already shows")
    assert "'replace' delta" in a.diagnostics[1]["message"]
    assert [code for code, _, _ in heard] == ["resend_duplicates"] * 2 and heard[0][2]["shown"] == 9


def test_created_is_the_time_of_each_chunk_unless_fixed_and_id_can_be_fixed():
    """converter.go:322 (time.Now().Unix() per chunk); ours: created= / id= fix them."""
    a = StandardAdapter()
    send(a, {"type": "text", "props": {"content": "a"}, "id": "m"})
    assert isinstance(a.chunks[0]["created"], int) and a.chunks[0]["created"] > T and a.chunks[0]["id"] == "m"
    b = StandardAdapter(id="chatcmpl-1", created=5, model="m")
    send(b, "a")
    assert (b.chunks[0]["id"], b.chunks[0]["created"], b.chunks[0]["model"]) == ("chatcmpl-1", 5, "m")


def test_a_forwarding_sink_gets_each_batch_of_payloads():
    got = []
    a = standard(sink=got.append)
    send(a, "a", {"type": "action", "props": {}})
    send(a, {"type": "action", "props": {}})
    a.finish()
    assert got == [[chunk("", {"content": "a", **ROLE})], ["[DONE]"]]


def test_to_standard_is_the_table_lookup():
    """adapter.go:79-109 over message_types.TYPES."""
    config = standard().config
    assert to_standard({"type": "loading", "props": {}}, config)[0].body == {"reasoning_content": "Processing..."}
    assert to_standard({"type": "error", "props": {}}, config)[0].kind == "chunk"


def test_adapter_for_routes_as_yao_does():
    """S40: output.go:30-42 — cui-web / cui-native / cui-desktop get the CUI writer, anything else OpenAI."""
    for accept in ("standard", "", "foo", "CUI-WEB"):
        assert isinstance(adapter_for(accept), StandardAdapter)
    for accept in ("cui-web", "cui-native", "cui-desktop"):
        assert isinstance(adapter_for(accept), CuiAdapter)
    assert adapter_for("standard", created=5).created == 5


# ---- CUI (B §4.2) ------------------------------------------------------------------------------------

SEED_COMPLETE = {"type": "text", "props": {"content": "Hello"}, "id": "msg_123", "delta": True, "done": False,
                 "delta_path": "content", "delta_action": "append", "group_id": "grp_1",
                 "metadata": {"timestamp": 1700000000000, "sequence": 1, "trace_id": "trace_123"}}

CUI_CASES = [
    ("C1 shorthand; jsapi_helpers.go:14-21, cui/adapter.go:21", "Hello", {"type": "text", "props": {"content": "Hello"}}),
    ("C2 the seed's complete message, done:false omitted; types.go:34-65", SEED_COMPLETE,
     {"type": "text", "props": {"content": "Hello"}, "id": "msg_123", "delta": True, "delta_path": "content",
      "delta_action": "append", "group_id": "grp_1",
      "metadata": {"timestamp": 1700000000000, "sequence": 1, "trace_id": "trace_123"}}),
    ("C3 empty props omitted; types.go:37 omitempty", {"type": "text", "props": {}, "id": "msg_1", "done": True},
     {"type": "text", "id": "msg_1", "done": True}),
    ("C4 unknown fields dropped; jsapi_helpers.go:39-81", {"type": "text", "props": {"content": "a"}, "foo": 1, "title": "t"},
     {"type": "text", "props": {"content": "a"}}),
    ("C5 wrongly typed fields dropped; jsapi_helpers.go:55-60", {"type": "text", "props": {"content": "a"}, "id": 5, "delta": "yes"},
     {"type": "text", "props": {"content": "a"}}),
    ("C7 props not an object; jsapi_helpers.go:50-52", {"type": "text", "props": "x"}, {"type": "text"}),
    ("C8 metadata filtered; jsapi_helpers.go:84-96",
     {"type": "text", "props": {"content": "a"}, "metadata": {"timestamp": 1, "type": "context", "foo": 2}},
     {"type": "text", "props": {"content": "a"}, "metadata": {"timestamp": 1}}),
    ("C9 metadata {} stays (non-nil pointer); types.go:57", {"type": "text", "props": {"content": "a"}, "metadata": {}},
     {"type": "text", "props": {"content": "a"}, "metadata": {}}),
    ("C9b zero metadata values omitted; types.go:61-65", {"type": "text", "metadata": {"timestamp": 0, "sequence": 0, "trace_id": ""}},
     {"type": "text", "metadata": {}}),
    ("C10 an image without url passes; cui/adapter.go:17-22", {"type": "image", "props": {"alt": "x"}},
     {"type": "image", "props": {"alt": "x"}}),
    ("C11 loading passes unchanged; cui/adapter.go:17-22", {"type": "loading", "props": {"message": "m"}, "id": "l"},
     {"type": "loading", "props": {"message": "m"}, "id": "l"}),
    ("C11b event, type_change / group_start / group_end kept; jsapi_helpers.go:70-81",
     {"type": "event", "props": {"event": "stream_end"}, "type_change": True, "group_start": True, "group_end": False},
     {"type": "event", "props": {"event": "stream_end"}, "type_change": True, "group_start": True}),
    ("C17 type '' accepted; jsapi_helpers.go:43", {"type": "", "props": {}}, {"type": ""}),
]


@pytest.mark.parametrize(("message", "expected"), [c[1:] for c in CUI_CASES], ids=[c[0] for c in CUI_CASES])
def test_cui_case_by_case(message, expected):
    """Each case's id names its upstream lines: parseMessage, then cui/writer.go:90-123 marshals the struct."""
    c = CuiAdapter()
    c.write([normalize_message(message)])
    assert c.chunks == [expected]


def test_cui_fields_come_in_yaos_struct_order():
    """types.go:34-58: Go marshals a struct in field order."""
    wire = cui_message(normalize_message({**SEED_COMPLETE, "group_end": True, "type_change": True, "done": True}))
    assert list(wire) == ["type", "props", "id", "delta", "done", "delta_path", "delta_action", "type_change",
                          "group_id", "group_end", "metadata"]
    assert list(wire["metadata"]) == ["timestamp", "sequence", "trace_id"]


def test_a_group_reaches_a_cui_client_as_one_object():
    """C12: cui/writer.go:58-74 sends the Group struct once; members untagged (jsapi_helpers.go:150-196);
    metadata.type dropped (:205-217)."""
    c, plain = CuiAdapter(), []
    out = Output([c, plain.append])
    out.send({"type": "text", "props": {"content": "before"}, "id": "b"})
    out.send_group({"id": "context_info", "metadata": {"timestamp": 1700000000000, "type": "context"}, "messages": [
        {"type": "text", "props": {"content": "**Context Information:**"}, "id": "c1"},
        {"type": "text", "props": {"content": "User: Anonymous"}, "id": "c2"}]})
    out.send({"type": "text", "props": {"content": "after"}, "id": "a"})
    out.flush()
    assert c.chunks == [
        {"type": "text", "props": {"content": "before"}, "id": "b"},
        {"id": "context_info", "messages": [{"type": "text", "props": {"content": "**Context Information:**"}, "id": "c1"},
                                            {"type": "text", "props": {"content": "User: Anonymous"}, "id": "c2"}],
         "metadata": {"timestamp": 1700000000000}},
        {"type": "text", "props": {"content": "after"}, "id": "a"},
    ]
    # a sink without write_group (the ContextView path) gets one batch, members tagged with the group
    [batch] = plain
    assert [(m.get("id"), m.get("group_id")) for m in batch] == [("b", None), ("c1", "context_info"),
                                                                  ("c2", "context_info"), ("a", None)]
    assert batch[1]["metadata"] == {"timestamp": 1700000000000}


def test_an_empty_group_still_reaches_a_cui_client():
    """C13: jsapi_helpers.go:131 makes a non-nil empty slice, so "messages": [] is sent."""
    c, plain = CuiAdapter(), []
    out = Output([c, plain.append])
    out.send_group({"id": "g", "messages": []})
    out.flush()
    assert c.chunks == [{"id": "g", "messages": []}] and plain == []
    assert cui_group(normalize_group({"id": "", "messages": [], "metadata": {}})) == {"id": "", "messages": [], "metadata": {}}


def test_a_group_written_flat_goes_out_as_its_tagged_members():
    """Ours: a sink list without write_group support still delivers every member."""
    c = CuiAdapter()
    c.write(group_members(normalize_group({"id": "g", "messages": [{"type": "text", "id": "x"}]})))
    assert c.chunks == [{"type": "text", "id": "x", "group_id": "g"}]


def test_cui_records_and_forwards_and_sends_nothing_on_close():
    """cui/writer.go:84-87: Close writes nothing (there is no finish)."""
    got = []
    c = CuiAdapter(sink=got.append)
    c.write([normalize_message("a")])
    c.write_group(normalize_group({"id": "g", "messages": [{"type": "loading"}]}))
    assert got == [[{"type": "text", "props": {"content": "a"}}], [{"id": "g", "messages": [{"type": "loading"}]}]]
    assert [m["type"] for m in c.messages] == ["text", "loading"]
    assert not hasattr(c, "finish")


def test_adapters_are_output_sinks():
    a, c = standard(), CuiAdapter()
    out = Output([a, c])
    out.send("Hello")
    out.send({"type": "loading", "props": {"message": "..."}, "id": "l"})
    out.flush()
    assert a.chunks == [chunk("", {"content": "Hello", **ROLE}), chunk("l", {"reasoning_content": "..."})]
    assert c.chunks == [{"type": "text", "props": {"content": "Hello"}},
                        {"type": "loading", "props": {"message": "..."}, "id": "l"}]
