"""The OpenAI-like view of Context messages that hooks see, and the way back."""

from __future__ import annotations

from agentctx_widgets.hooks.openai_shapes import (
    from_view,
    message_from_response,
    response_of,
    to_view,
    with_openai_aliases,
)

CONTEXT = [
    {"type": 1, "content": [{"type": "text", "text": "Be kind."}]},
    {"type": 2, "content": [{"type": "text", "text": "Look:"}, {"type": "image", "url": "https://x/y.png"}], "id": "u1"},
    {"type": 3, "content": [
        {"type": "thinking", "text": "hmm"},
        {"type": "text", "text": "Calling."},
        {"type": "toolCall", "callId": "c1", "name": "f", "arguments": {"a": 1}},
    ]},
    {"type": 4, "callId": "c1", "content": [{"type": "text", "text": "42"}], "error": True},
    {"type": "checkpoint", "at": 3},
]


def test_to_view_by_hand():
    assert to_view(CONTEXT) == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, {"type": "image", "url": "https://x/y.png"}], "id": "u1"},
        {"role": "assistant", "content": "Calling.", "thinking": "hmm",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]},
        {"role": "tool", "content": "42", "tool_call_id": "c1", "error": True},
    ]


def test_round_trip_is_lossless_for_messages_and_drops_records():
    assert from_view(to_view(CONTEXT)) == CONTEXT[:4]


def test_from_view_accepts_context_messages_and_odd_content():
    assert from_view([{"type": 2, "content": []}, {"role": "user", "content": None},
                      {"role": "user", "content": ["a", {"type": "text", "text": "b"}]}, {"role": "user", "content": 5}]) == [
        {"type": 2, "content": []},
        {"type": 2, "content": []},
        {"type": 2, "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"type": 2, "content": [{"type": "text", "text": "5"}]},
    ]


def test_unparseable_tool_arguments_stay_raw():
    [message] = from_view([{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "g", "arguments": "{broken"}}]}])
    assert message["content"] == [{"type": "toolCall", "callId": "c", "name": "g", "arguments": "{broken"}]


def test_response_of_an_assistant_message():
    usage = {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5, "source": "provider"}
    response = response_of(CONTEXT[2], usage)
    assert response == {
        "content": "Calling.",
        "thinking": "hmm",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}],
        "usage": {**usage, "prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        "message": CONTEXT[2],
    }
    assert response["message"] is not CONTEXT[2]
    assert with_openai_aliases(None) is None


def test_message_from_response_rebuilds_only_when_something_changed():
    original = {"type": 3, "content": [{"type": "text", "text": "a"}], "id": "m1"}
    same = response_of(original, None)
    assert message_from_response(same, original) is original
    changed = message_from_response({**same, "content": "b", "thinking": "t"}, original)
    assert changed == {"type": 3, "content": [{"type": "thinking", "text": "t"}, {"type": "text", "text": "b"}], "id": "m1"}
    other = {"type": 3, "content": [{"type": "text", "text": "z"}]}
    assert message_from_response({**same, "message": other}, original) == other


def test_from_view_maps_unchanged_views_back_to_their_originals():
    originals = [
        {"type": 0, "content": [{"type": "text", "text": "reserved"}]},
        {"type": 3, "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                                {"type": "thinking", "text": "t"}]},
        {"type": 2, "content": [{"type": "text", "text": "same"}], "id": "first"},
        {"type": 2, "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y", "cache_control": {}}]},
    ]
    views = to_view(originals)
    views[3] = {**views[3], "content": "changed"}
    back = from_view([{"role": "system", "content": "new"}, *views], originals)
    assert back[0] == {"type": 1, "content": [{"type": "text", "text": "new"}]}
    assert back[1] is originals[0] and back[2] is originals[1] and back[3] is originals[2]
    assert back[4] == {"type": 2, "content": [{"type": "text", "text": "changed"}]}
    # without originals the same views lose what the view cannot hold
    assert from_view(to_view(originals[:2])) == [
        {"type": 2, "content": [{"type": "text", "text": "reserved"}]},
        {"type": 3, "content": [{"type": "thinking", "text": "t"}, {"type": "text", "text": "a"}]},
    ]


def test_from_view_hands_out_originals_with_equal_views_in_order():
    first = {"type": 3, "content": [{"type": "text", "text": "a"}, {"type": "thinking", "text": "t"}]}
    second = {"type": 3, "content": [{"type": "thinking", "text": "t"}, {"type": "text", "text": "a"}]}
    view = {"role": "assistant", "content": "a", "thinking": "t"}
    back = from_view([view, view, view], [first, second])
    assert back[0] is first and back[1] is second and back[2] is second


def test_from_view_with_originals_tolerates_values_json_cannot_hold():
    back = from_view([{"role": "user", "content": "hi", "extra": {1, 2}}], [{"type": 2, "content": []}])
    assert back[0]["type"] == 2 and back[0]["extra"] == {1, 2}
