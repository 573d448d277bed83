import pytest

from agentctx_widgets.context import assembly_callbacks, content_indexer, create_assembler


def feed(events):
    asm = create_assembler()
    for event in events:
        asm.consume(event)
    return asm


def test_initial_message():
    assert create_assembler().message() == {"type": 3, "content": []}


def test_text_and_thinking_deltas_append_in_first_appearance_order():
    asm = feed([
        {"type": "start"},
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "let me "},
        {"type": "text_delta", "contentIndex": 1, "delta": "Hel"},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "think"},
        {"type": "text_delta", "contentIndex": 1, "delta": "lo"},
        {"type": "text_end", "contentIndex": 1},
        {"type": "done"},
    ])
    assert asm.message() == {"type": 3, "content": [{"type": "thinking", "text": "let me think"},
                                                     {"type": "text", "text": "Hello"}]}
    assert asm.finished


def test_message_is_exposed_by_reference_while_partial():
    asm = create_assembler()
    live = asm.message()
    asm.consume({"type": "text_delta", "contentIndex": 0, "delta": "a"})
    assert live["content"] == [{"type": "text", "text": "a"}]


def test_text_end_is_authoritative_and_keeps_a_differing_draft():
    asm = feed([{"type": "text_delta", "contentIndex": 0, "delta": "helo"},
                {"type": "text_end", "contentIndex": 0, "text": "hello"}])
    assert asm.message()["content"] == [{"type": "text", "text": "hello", "draft": "helo"}]
    same = feed([{"type": "text_delta", "contentIndex": 0, "delta": "ok"},
                 {"type": "text_end", "contentIndex": 0, "text": "ok"}])
    assert same.message()["content"] == [{"type": "text", "text": "ok"}]


def test_tool_call_arguments_parse_at_end():
    asm = feed([
        {"type": "tool_call_start", "contentIndex": 0, "callId": "call_1", "name": "search"},
        {"type": "tool_call_delta", "contentIndex": 0, "delta": '{"q": "ca'},
    ])
    assert asm.message()["content"][0]["arguments"] == '{"q": "ca'  # raw while streaming
    asm.consume({"type": "tool_call_delta", "contentIndex": 0, "delta": 'ts"}'})
    asm.consume({"type": "tool_call_end", "contentIndex": 0})
    assert asm.message()["content"] == [{"type": "toolCall", "callId": "call_1", "name": "search",
                                         "arguments": {"q": "cats"}}]


def test_malformed_tool_json_is_kept_raw_and_empty_is_an_empty_object():
    bad = feed([{"type": "tool_call_start", "contentIndex": 0, "callId": "c", "name": "f"},
                {"type": "tool_call_delta", "contentIndex": 0, "delta": "{not json"},
                {"type": "tool_call_end", "contentIndex": 0}])
    assert bad.message()["content"][0]["arguments"] == "{not json"
    empty = feed([{"type": "tool_call_start", "contentIndex": 0, "callId": "c", "name": "f"},
                  {"type": "tool_call_end", "contentIndex": 0}])
    assert empty.message()["content"][0]["arguments"] == {}
    final = feed([{"type": "tool_call_start", "contentIndex": 0, "callId": "c", "name": "f"},
                  {"type": "tool_call_end", "contentIndex": 0, "arguments": {"x": [1]}}])
    assert final.message()["content"][0]["arguments"] == {"x": [1]}


def test_snapshots_replace_the_message_and_are_copied():
    snapshot = {"type": 3, "content": [{"type": "text", "text": "Hi"}], "model": "m"}
    asm = feed([{"type": "text_delta", "contentIndex": 0, "delta": "junk"},
                {"type": "start", "message": snapshot},
                {"type": "text_delta", "contentIndex": 0, "delta": "!"}])
    assert asm.message() == {"type": 3, "content": [{"type": "text", "text": "Hi!"}], "model": "m"}
    assert snapshot["content"][0]["text"] == "Hi"
    ignored = feed([{"type": "text_delta", "contentIndex": 0, "delta": "a"}, {"type": "done", "message": "oops"}])
    assert ignored.message()["content"] == [{"type": "text", "text": "a"}]


def test_done_usage_and_error():
    asm = feed([{"type": "text_delta", "contentIndex": 0, "delta": "part"},
                {"type": "error", "error": {"message": "rate limited", "retry": 20}}])
    assert asm.message() == {"type": 3, "content": [{"type": "text", "text": "part"}],
                             "error": {"message": "rate limited", "retry": 20}}
    done = feed([{"type": "done", "usage": {"inputTokens": 5, "outputTokens": 2}}])
    assert done.usage == {"inputTokens": 5, "outputTokens": 2}
    assert "usage" not in done.message()


def test_unknown_events_ignored_malformed_known_events_raise():
    asm = feed([{"type": "ping"}, {"type": "text_delta", "contentIndex": 0, "delta": "a"}, "garbage"])
    assert asm.message()["content"] == [{"type": "text", "text": "a"}]
    with pytest.raises(TypeError):
        asm.consume({"type": "text_delta", "contentIndex": 0, "delta": 5})
    assert asm.message()["content"] == [{"type": "text", "text": "a"}]


def test_assembly_callbacks_feed_the_assembler():
    asm = create_assembler()
    cbs = assembly_callbacks(asm)
    assert {"onStart", "onTextDelta", "onDone", "onError", "onToolCallEnd"} <= set(cbs)
    cbs["onTextDelta"]({"type": "text_delta", "contentIndex": 0, "delta": "x"})
    assert asm.message()["content"] == [{"type": "text", "text": "x"}]
    with pytest.raises(TypeError):
        assembly_callbacks(None)
    with pytest.raises(TypeError):
        assembly_callbacks(object())


def test_content_indexer_is_dense_and_reuses_keys():
    idx = content_indexer()
    assert idx.of("item_a") == 0
    assert idx.next() == 1
    assert idx.of("item_b") == 2
    assert idx.of("item_a") == 0
    assert idx.next() == 3
    assert content_indexer().next() == 0
