"""The one Context ↔ OpenAI-shape conversion (models/openai_shapes.py), and the cases where the copies it
replaced (hooks/openai_shapes.py, yao/llm.py, yao/request_shapes.py, models/openai_chat.py) differed."""

from __future__ import annotations

import pytest

from agentctx_widgets.hooks import openai_shapes as hooks_shapes
from agentctx_widgets.models.openai_chat import build_chat_request
from agentctx_widgets.models.openai_shapes import (
    arguments_of,
    from_view_message,
    to_view_message,
    tool_block_of,
    tool_call_of,
)
from agentctx_widgets.yao.llm import _context_message
from agentctx_widgets.yao.request_shapes import call_arguments, completion_response, usage_info


def test_every_user_imports_the_one_conversion() -> None:
    assert hooks_shapes.from_view_message is from_view_message
    assert hooks_shapes.tool_call_of is tool_call_of


@pytest.mark.parametrize(("block", "call"), [
    ({"callId": "c1", "name": "f", "arguments": {"a": 1}}, {"id": "c1", "name": "f", "arguments": '{"a":1}'}),
    ({"callId": "c1", "name": "f", "arguments": "{broken"}, {"id": "c1", "name": "f", "arguments": "{broken"}),
    # no arguments: "{}" (yao/llm.py wrote "null", which is not the object a function's parameters are)
    ({"callId": "c1", "name": "f"}, {"id": "c1", "name": "f", "arguments": "{}"}),
    # id and name are strings, as a server is sent them (hooks/openai_shapes.py passed a 5 through)
    ({"callId": 5, "name": 7, "arguments": []}, {"id": "5", "name": "7", "arguments": "[]"}),
])
def test_tool_call_of(block: dict, call: dict) -> None:
    expected = {"id": call["id"], "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]}}
    assert tool_call_of({"type": "toolCall", **block}) == expected
    [sent] = build_chat_request([{"type": 3, "content": [{"type": "toolCall", **block}]}], model="m")["messages"]
    assert sent["tool_calls"] == [expected]


@pytest.mark.parametrize(("raw", "value"), [
    ('{"x": 2}', {"x": 2}), ("", {}),
    ("  ", {}),  # yao/llm.py kept "  " as text; blank is no arguments, as the hooks and Yao's request read it
    ("{broken", "{broken"),
    ({"x": 2}, {"x": 2}),  # yao/llm.py dropped arguments that were not text; they are the call's arguments
    (None, {}),  # yao/request_shapes.py returned None; a call without arguments takes none: {}
    ([1], [1]),
])
def test_arguments_of(raw: object, value: object) -> None:
    assert arguments_of(raw) == value
    assert call_arguments({"function": {"name": "g", "arguments": raw}}) == value
    assert tool_block_of({"id": "c", "function": {"name": "g", "arguments": raw}})["arguments"] == value


def test_tool_block_of_reads_the_call_itself_without_a_function_object() -> None:
    assert tool_block_of({"id": "c", "function": "x", "name": "top", "arguments": '{"y": 1}'}) == \
        {"type": "toolCall", "callId": "c", "name": "top", "arguments": {"y": 1}}


def test_content_that_is_not_text_or_parts_is_its_json_text() -> None:
    """yao/llm.py wrote JSON text, hooks/openai_shapes.py Python's str (``{'a': 1}``, ``True``): a hook's
    value is JSON, so its text is JSON's."""
    assert from_view_message({"role": "user", "content": {"a": 1}})["content"] == [{"type": "text", "text": '{"a":1}'}]
    assert from_view_message({"role": "user", "content": True})["content"] == [{"type": "text", "text": "true"}]
    assert from_view_message({"role": "user", "content": 5})["content"] == [{"type": "text", "text": "5"}]


def test_ctx_llm_messages_convert_as_the_hooks_do() -> None:
    """An empty string is no block (yao/llm.py sent an empty text block, which Anthropic refuses), and
    keys other than the shape's stay on the message, as for a hook's messages."""
    assert _context_message({"role": "user", "content": ""}, 0) == {"type": 2, "content": []}
    assert _context_message({"role": "system", "content": "s", "name": "n"}, 0) == \
        {"type": 1, "content": [{"type": "text", "text": "s"}], "name": "n"}
    assert _context_message({"role": "tool", "content": "r", "tool_call_id": "c1"}, 0) == \
        {"type": 4, "content": [{"type": "text", "text": "r"}], "callId": "c1"}


@pytest.mark.parametrize(("message", "error"), [
    ("hi", "message 0 is not an object"),
    ({"content": "x"}, "message 0 missing role"),
    ({"role": "robot"}, "message 0 has role 'robot', which has no Context message type"),
    ({"role": "user", "content": ["a"]}, "message 0: only text content parts can be sent"),
    ({"role": "user", "content": [{"type": "image_url"}]}, "message 0: only text content parts can be sent"),
])
def test_ctx_llm_keeps_yaos_parse_errors(message: object, error: str) -> None:
    with pytest.raises(ValueError, match=error.replace("(", r"\(")):
        _context_message(message, 0)


def test_round_trip_of_an_assistant_message() -> None:
    message = {"type": 3, "id": "a1", "content": [
        {"type": "thinking", "text": "hm"}, {"type": "text", "text": "ok"},
        {"type": "toolCall", "callId": "c1", "name": "f", "arguments": {"a": 1}}]}
    # OpenAI's assistant message: tool_calls[].function.arguments is a JSON string; thinking and id are
    # the OpenAI-like extras hooks see (the seed's view of a message)
    assert to_view_message(message) == {
        "role": "assistant", "content": "ok", "thinking": "hm", "id": "a1",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]}
    assert from_view_message(to_view_message(message)) == message


def test_completion_response_and_usage() -> None:
    said = {"content": "ab", "thinking": "", "tool_calls": [tool_call_of({"callId": "c", "name": "f"})],
            "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}}
    assert completion_response(said, id="r1", model="m", created=9) == {
        "id": "r1", "object": "chat.completion", "created": 9, "model": "m", "role": "assistant",
        "content": "ab", "tool_calls": said["tool_calls"], "finish_reason": "tool_calls",
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
    assert usage_info({}) == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    assert hooks_shapes.with_openai_aliases({"inputTokens": 1}) == \
        {"inputTokens": 1, "prompt_tokens": 1, "completion_tokens": None, "total_tokens": None}
