"""normalize_message / normalize_group: shorthand, envelope checks, per-type props, private copies."""

from __future__ import annotations

import re

import pytest

from agentctx_widgets.output import MESSAGE_TYPES, Output, OutputMessageError, new_state, normalize_group, normalize_message


def test_the_eleven_builtin_types():
    assert MESSAGE_TYPES == ("user_input", "text", "thinking", "loading", "tool_call", "error", "image",
                             "audio", "video", "action", "event")


def test_string_shorthand_is_a_text_message():
    assert normalize_message("Hello World") == {"type": "text", "props": {"content": "Hello World"}}


def test_complete_message_keeps_every_envelope_field():
    message = {"type": "text", "props": {"content": "Hello"}, "id": "msg_123", "delta": True, "done": False,
               "delta_path": "content", "delta_action": "append", "group_id": "grp_1",
               "metadata": {"timestamp": 1, "sequence": 1, "trace_id": "trace_123"}}
    assert normalize_message(message) == message


def test_missing_props_become_empty_and_unknown_keys_travel():
    assert normalize_message({"type": "loading", "x_extra": [1]}) == {"type": "loading", "props": {},
                                                                      "x_extra": [1]}


def test_result_is_a_private_deep_copy():
    props = {"content": "a", "nested": {"list": [1]}}
    out = normalize_message({"type": "text", "props": props})
    props["nested"]["list"].append(2)
    props["content"] = "changed"
    assert out["props"] == {"content": "a", "nested": {"list": [1]}}


def test_unknown_types_pass_unchecked():
    assert normalize_message({"type": "chart", "props": {"url": 5}})["props"] == {"url": 5}


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (5, "message must be a dict or a string"),
        ({"props": {}}, "message.type"),
        ({"type": "", "props": {}}, "message.type"),
        ({"type": "text", "props": "x"}, "message.props"),
        ({"type": "text", "props": {}, "id": 3}, "message.id"),
        ({"type": "text", "props": {}, "delta": "yes"}, "message.delta"),
        ({"type": "text", "props": {}, "done": 1}, "message.done"),
        ({"type": "text", "props": {}, "delta_path": ["content"]}, "message.delta_path"),
        ({"type": "text", "props": {}, "delta_action": "prepend"}, "message.delta_action"),
        ({"type": "text", "props": {}, "group_id": 1}, "message.group_id"),
        ({"type": "text", "props": {}, "metadata": []}, "message.metadata"),
        ({"type": "tool_call", "props": {"id": "c", "arguments": "{}"}}, "message.props.name"),
        ({"type": "tool_call", "props": {"name": "f", "arguments": "{}"}}, "message.props.id"),
        ({"type": "tool_call", "props": {"id": "c", "name": "f"}}, "message.props.arguments"),
        ({"type": "tool_call", "props": {"id": "c", "name": 7, "arguments": "{}"}}, "message.props.name"),
        ({"type": "image", "props": {"alt": "x"}}, "message.props.url"),
        ({"type": "audio", "props": {}}, "message.props.url"),
        ({"type": "video", "props": {"url": None}}, "message.props.url"),
        ({"type": "error", "props": {"code": "E"}}, "message.props.message"),
        ({"type": "text", "props": {"content": 5}}, "message.props.content"),
        ({"type": "loading", "props": {"message": True}}, "message.props.message"),
    ],
)
def test_errors_name_the_field(message, field):
    with pytest.raises(OutputMessageError, match=field.replace(".", r"\.")):
        normalize_message(message)


def test_output_message_error_is_a_value_error():
    assert issubclass(OutputMessageError, ValueError)


def test_the_value_is_in_the_error():
    with pytest.raises(OutputMessageError, match="'prepend'"):
        normalize_message({"type": "text", "props": {}, "delta_action": "prepend"})


def test_full_tool_call_image_and_error_pass():
    for message in (
        {"type": "tool_call", "props": {"id": "call_123", "name": "f", "arguments": '{"key": "value"}'}},
        {"type": "tool_call", "props": {"id": "call_1", "name": "f", "arguments": {"key": "value"}}},
        {"type": "image", "props": {"url": "https://example.com/image.jpg", "alt": "d", "width": 800}},
        {"type": "error", "props": {"message": "Something went wrong", "code": "ERR_500"}},
    ):
        assert normalize_message(message) == message


def test_deltas_and_bare_done_skip_required_props():
    delta = {"type": "tool_call", "props": {"arguments": "}"}, "id": "t", "delta": True}
    assert normalize_message(delta) == delta
    close = {"type": "image", "props": {}, "id": "i", "done": True}
    assert normalize_message(close) == close


def test_a_done_message_with_props_is_checked():
    with pytest.raises(OutputMessageError, match=r"message\.props\.url"):
        normalize_message({"type": "image", "props": {"alt": "x"}, "id": "i", "done": True})


def test_group_messages_get_the_group_id_and_metadata():
    group = {"id": "context_info", "metadata": {"type": "context", "timestamp": 1},
             "messages": ["**Context**", {"type": "text", "props": {"content": "User"},
                                          "metadata": {"timestamp": 2}}]}
    assert normalize_group(group) == [
        {"type": "text", "props": {"content": "**Context**"}, "group_id": "context_info",
         "metadata": {"type": "context", "timestamp": 1}},
        {"type": "text", "props": {"content": "User"}, "group_id": "context_info",
         "metadata": {"type": "context", "timestamp": 2}},
    ]


@pytest.mark.parametrize(
    ("group", "field"),
    [
        ("x", "group must be a dict"),
        ({"messages": []}, "group.id"),
        ({"id": "g"}, "group.messages"),
        ({"id": "g", "messages": [], "metadata": 3}, "group.metadata"),
        ({"id": "g", "messages": ["ok", "ok", {"props": {}}]}, "group.messages[2].type"),
        ({"id": "g", "messages": [{"type": "image", "props": {}}]}, "group.messages[0].props.url"),
    ],
)
def test_group_errors_name_the_field(group, field):
    with pytest.raises(OutputMessageError) as caught:
        normalize_group(group)
    assert field in str(caught.value)


@pytest.mark.parametrize(
    ("message", "where"),
    [
        ({"type": "text", "props": {"content": "x", "s": {1}}}, "message.props.s is a set"),
        ({"type": "action", "props": {"items": [1, object()]}}, "message.props.items[1] is a object"),
        ({"type": "text", "props": {"content": "x"}, "metadata": {"at": b"raw"}}, "message.metadata.at is a bytes"),
        ({"type": "text", "props": {1: "x"}}, "message.props has a non-string key 1"),
        ({"type": "text", "props": {"content": "x"}, "extra": {"when": 1j}}, "message.extra.when is a complex"),
    ],
)
def test_values_json_cannot_carry_are_refused_naming_the_place(message, where):
    with pytest.raises(OutputMessageError, match=re.escape(where)):
        normalize_message(message)


def test_a_non_json_value_is_refused_at_send_and_nothing_is_applied():
    out = Output()
    with pytest.raises(OutputMessageError, match=r"message\.props\.tags is a set"):
        out.send({"type": "action", "props": {"tags": {"a"}}, "id": "a1"})
    assert out.pending == [] and out.pending_state == new_state()
