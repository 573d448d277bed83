"""Client adapters: OpenAI chunks for "standard" clients, unchanged messages for CUI clients."""

from __future__ import annotations

import pytest

from agentctx_widgets.output import CuiAdapter, DeltaError, Output, StandardAdapter, adapter_for


def chunk(delta, finish_reason=None):
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def standard(**kw):
    return StandardAdapter(id="chatcmpl-1", created=1700000000, model="m", **kw)


def deltas(adapter):
    return [c["choices"][0]["delta"] if "choices" in c else c for c in adapter.chunks]


def test_text_becomes_content_and_the_first_chunk_carries_the_role():
    a = standard()
    a.write([{"type": "text", "props": {"content": "Hello"}, "id": "m"}])
    assert a.chunks == [chunk({"role": "assistant", "content": "Hello"})]


def test_text_deltas_carry_only_the_appended_text():
    a = standard()
    a.write([{"type": "text", "props": {"content": "Processing"}, "id": "s"}])
    a.write([{"type": "text", "props": {"content": "..."}, "id": "s", "delta": True, "delta_path": "content",
              "delta_action": "append"},
             {"type": "text", "props": {"content": " Done!"}, "id": "s", "delta": True}])
    assert deltas(a) == [{"role": "assistant", "content": "Processing"}, {"content": "..."},
                         {"content": " Done!"}]


def test_a_replacement_sends_only_what_it_adds_and_a_rewrite_sends_nothing():
    a = standard()
    a.write([{"type": "text", "props": {"content": "Step 1"}, "id": "p"},
             {"type": "text", "props": {"content": "Step 1, Step 2"}, "id": "p"},
             {"type": "text", "props": {"content": "Other"}, "id": "p"},
             {"type": "text", "props": {"content": "Other!"}, "id": "p", "delta": True,
              "delta_action": "replace"}])
    assert deltas(a) == [{"role": "assistant", "content": "Step 1"}, {"content": ", Step 2"}, {"content": "!"}]


def test_thinking_becomes_reasoning_content():
    a = standard()
    a.write([{"type": "thinking", "props": {"content": "Hmm"}, "id": "t"},
             {"type": "thinking", "props": {"content": "..."}, "id": "t", "delta": True}])
    assert deltas(a) == [{"role": "assistant", "reasoning_content": "Hmm"}, {"reasoning_content": "..."}]


def test_tool_calls_are_indexed_and_arguments_stream():
    a = standard()
    a.write([
        {"type": "tool_call", "props": {"id": "call_1", "name": "search", "arguments": '{"q"'}, "id": "t1"},
        {"type": "tool_call", "props": {"arguments": ': "x"}'}, "id": "t1", "delta": True,
         "delta_path": "arguments"},
        {"type": "tool_call", "props": {"id": "call_2", "name": "open", "arguments": {"n": 1}}, "id": "t2"},
    ])
    assert deltas(a) == [
        {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                               "function": {"name": "search", "arguments": '{"q"'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": ': "x"}'}}]},
        {"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                         "function": {"name": "open", "arguments": '{"n":1}'}}]},
    ]


def test_media_become_markdown():
    a = standard()
    a.write([
        {"type": "image", "props": {"url": "https://example.com/image.jpg", "alt": "Image description"}},
        {"type": "audio", "props": {"url": "https://example.com/audio.mp3", "transcript": "Hi there"}},
        {"type": "video", "props": {"url": "https://example.com/video.mp4"}},
    ])
    assert deltas(a) == [
        {"role": "assistant", "content": "![Image description](https://example.com/image.jpg)"},
        {"content": "[Hi there](https://example.com/audio.mp3)"},
        {"content": "[video](https://example.com/video.mp4)"},
    ]


def test_markdown_brackets_and_parentheses_are_escaped():
    a = standard()
    a.write([{"type": "image", "props": {"url": "https://x/a (1).png", "alt": "a [b]"}}])
    assert deltas(a) == [{"role": "assistant", "content": "![a \\[b\\]](https://x/a%20%281%29.png)"}]


def test_cui_only_types_are_dropped():
    a = standard()
    a.write([{"type": t, "props": {"message": "m", "content": "c"}} for t in
             ("loading", "action", "event", "user_input", "chart")])
    assert a.chunks == []
    assert len(a.messages) == 5


def test_an_error_ends_the_stream():
    a = standard()
    a.write([{"type": "text", "props": {"content": "a"}},
             {"type": "error", "props": {"message": "Sorry", "code": "ERR_500", "details": "trace"}},
             {"type": "text", "props": {"content": "never"}}])
    a.write([{"type": "text", "props": {"content": "never either"}}])
    assert a.chunks == [chunk({"role": "assistant", "content": "a"}),
                        {"error": {"message": "Sorry", "type": "error", "code": "ERR_500", "details": "trace"}}]
    assert a.ended
    assert a.finish() is None


def test_finish_closes_with_stop_or_tool_calls():
    a = standard()
    a.write([{"type": "text", "props": {"content": "a"}}])
    assert a.finish() == chunk({}, "stop")
    b = standard()
    b.write([{"type": "tool_call", "props": {"id": "c", "name": "f", "arguments": ""}}])
    assert b.finish() == chunk({}, "tool_calls")


def test_defaults_give_a_chatcmpl_id_and_an_integer_time():
    a = StandardAdapter()
    assert a.id.startswith("chatcmpl-") and isinstance(a.created, int)


def test_a_forwarding_sink_gets_each_batch_of_chunks():
    got = []
    a = standard(sink=got.append)
    a.write([{"type": "text", "props": {"content": "a"}}, {"type": "loading", "props": {}}])
    a.write([{"type": "loading", "props": {}}])
    assert got == [[chunk({"role": "assistant", "content": "a"})]]


def test_cui_gets_every_message_unchanged():
    c = CuiAdapter()
    batch = [{"type": "loading", "props": {"message": "x"}, "id": "l"}, {"type": "event", "props": {}}]
    c.write(batch)
    assert c.messages == batch and c.chunks == batch


def test_adapter_for():
    assert isinstance(adapter_for("standard"), StandardAdapter)
    for accept in ("cui-web", "cui-native", "cui-desktop"):
        assert isinstance(adapter_for(accept), CuiAdapter)
    assert adapter_for("standard", id="x", created=5).created == 5


def test_adapters_are_output_sinks():
    a, c = standard(), CuiAdapter()
    out = Output([a, c])
    out.send("Hello")
    out.send({"type": "loading", "props": {"message": "..."}})
    out.flush()
    assert deltas(a) == [{"role": "assistant", "content": "Hello"}]
    assert [m["type"] for m in c.messages] == ["text", "loading"]


def test_a_bad_delta_given_straight_to_an_adapter_raises():
    with pytest.raises(DeltaError):
        standard().write([{"type": "text", "props": {"content": "x"}, "id": "nope", "delta": True}])


def test_text_props_that_are_not_strings_send_nothing():
    a = standard()
    a.write([{"type": "text", "props": {"content": ["a"]}, "id": "m"},
             {"type": "text", "props": {"content": "b"}, "id": "m", "delta": True}])
    assert a.chunks == []
