"""normalize_message / normalize_group: what Yao's parseMessage / parseGroup accept and keep.

Upstream: YaoApp/yao @ afab9c2, agent/context/jsapi_helpers.go (parseMessage :12-99, parseGroup :102-220),
agent/context/jsapi.go (the error prefixes), agent/output/message/types.go (the struct).
"""

from __future__ import annotations

import math
import re

import pytest

from agentctx_widgets.output import MESSAGE_TYPES, Output, OutputMessageError, new_state, normalize_group, normalize_message
from agentctx_widgets.output.diagnostics import DIAGNOSTICS, Collector
from agentctx_widgets.output.message_types import TYPES
from agentctx_widgets.output.messages import FIELDS, group_members


def collect(message, **kw):
    report = Collector()
    out = normalize_message(message, report=report, **kw)
    return out, [(d["code"], d["where"]) for d in report.items]


def test_the_eleven_builtin_types_come_from_the_one_table():
    """message/types.go:76-95; builtin.go:144-151 (IsBuiltinType)."""
    assert MESSAGE_TYPES == ("user_input", "text", "thinking", "loading", "tool_call", "error", "image",
                             "audio", "video", "action", "event")
    assert MESSAGE_TYPES == tuple(TYPES)


def test_string_shorthand_is_a_text_message():
    """jsapi_helpers.go:14-21: a string becomes {Type: text, Props: {content}}; "" is accepted."""
    assert normalize_message("Hello World") == {"type": "text", "props": {"content": "Hello World"}}
    assert normalize_message("") == {"type": "text", "props": {"content": ""}}


def test_complete_message_keeps_every_envelope_field_in_yao_struct_order():
    """jsapi_helpers.go:40-96 copies each field; types.go:34-58 is the order (seed "Complete Message Object")."""
    message = {"metadata": {"timestamp": 1, "sequence": 1, "trace_id": "trace_123"}, "group_end": True,
               "group_start": True, "group_id": "grp_1", "type_change": True, "delta_action": "append",
               "delta_path": "content", "done": False, "delta": True, "id": "msg_123",
               "props": {"content": "Hello"}, "type": "text"}
    out, dropped = collect(message)
    assert out == message and dropped == []
    assert list(out) == ["type", "props", *FIELDS, "metadata"]


def test_missing_props_become_empty_and_unknown_top_level_keys_are_dropped():
    """jsapi_helpers.go:50-52 (props optional), :40-98 (only the listed fields are copied; case C4)."""
    out, dropped = collect({"type": "text", "props": {"content": "a"}, "foo": 1, "title": "t"})
    assert out == {"type": "text", "props": {"content": "a"}}
    assert dropped == [("field_dropped", "message.foo"), ("field_dropped", "message.title")]
    assert normalize_message({"type": "loading"}) == {"type": "loading", "props": {}}


@pytest.mark.parametrize(
    ("field", "value"),
    [("props", "x"), ("props", []), ("id", 5), ("delta", "yes"), ("delta", 1), ("done", 1),
     ("delta_path", ["content"]), ("delta_action", 3), ("type_change", "y"), ("group_id", 1),
     ("group_start", 0), ("group_end", "true"), ("metadata", []), ("metadata", "m")],
)
def test_a_field_of_the_wrong_type_is_dropped_not_an_error(field, value):
    """jsapi_helpers.go:50-96: each field is kept only when its type assertion succeeds (cases C5, C7)."""
    out, dropped = collect({"type": "text", "props": {"content": "a"} if field != "props" else value, field: value})
    assert field not in out or (field == "props" and out["props"] == {})
    assert dropped == [("field_dropped", f"message.{field}")]


def test_the_dropped_field_diagnostic_says_what_and_why():
    report = Collector()
    normalize_message({"type": "text", "id": 5}, report=report)
    [item] = report.items
    assert item == {"code": "field_dropped", "where": "message.id",
                    "message": "message.id is dropped, as Yao drops it: it is a number, Yao keeps only a string",
                    "hint": item["hint"]}
    assert "field_dropped" in DIAGNOSTICS and "metadata {timestamp, sequence, trace_id}" in item["hint"]


def test_without_report_fields_are_still_dropped_quietly():
    """jsapi_helpers.go:55-69 (derived): ctx.Send({type:"text", id: 5, delta: 1, delta_action: "foo", foo: 1}) succeeds."""
    assert normalize_message({"type": "text", "id": 5, "delta": 1, "delta_action": "foo", "foo": 1}) == {
        "type": "text", "props": {}, "delta_action": "foo"}


def test_none_is_absent_and_not_reported():
    """JavaScript undefined / null never reach Go's struct; nothing to warn about."""
    assert collect({"type": "text", "props": None, "id": None, "metadata": None, "x": None}) == (
        {"type": "text", "props": {}}, [])


def test_an_empty_id_is_no_id_and_any_delta_action_passes():
    """jsapi_helpers.go:55-57 (id "" is the zero value), :67-69 (delta_action: any string, no enum)."""
    assert normalize_message({"type": "text", "id": "", "delta_action": "prepend"}) == {
        "type": "text", "props": {}, "delta_action": "prepend"}
    assert normalize_message({"type": "text", "delta_action": ""})["delta_action"] == ""


def test_an_empty_type_is_accepted():
    """jsapi_helpers.go:43: msgMap["type"].(string) accepts "" (case C17)."""
    assert normalize_message({"type": "", "props": {}}) == {"type": "", "props": {}}


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"props": {"content": "a"}}, "invalid message: message.type is required and must be a string"),
        ({"type": 5}, "invalid message: message.type is required and must be a string"),
        ({"type": None}, "invalid message: message.type is required and must be a string"),
        (5, "invalid message: message must be a string or object"),
        (None, "invalid message: message must be a string or object"),
        (True, "invalid message: message must be a string or object"),
        ([{"type": "text"}], "invalid message: message must be an object"),
    ],
)
def test_what_yao_refuses_raises_with_yaos_text(message, text):
    """jsapi_helpers.go:24-26, :34-37, :43-47; prefixed as jsapi.go:177-180 does (case C6)."""
    with pytest.raises(OutputMessageError) as caught:
        normalize_message(message)
    assert str(caught.value) == text


def test_output_message_error_is_a_value_error():
    assert issubclass(OutputMessageError, ValueError)


def test_props_are_never_required_or_checked():
    """BUILTIN_TYPES / types.go:107-208 are never enforced (a grep for TextProps|ImageProps|ToolCallProps|ErrorProps finds only their definitions)."""
    for message in (
        {"type": "tool_call", "props": {"id": "c"}},
        {"type": "tool_call", "props": {"id": "c", "name": 7}},
        {"type": "image", "props": {"alt": "x"}},
        {"type": "audio", "props": {}},
        {"type": "error", "props": {}},
        {"type": "text", "props": {"content": 5}},
        {"type": "loading", "props": {"message": True}},
        {"type": "chart", "props": {"url": 5}},
    ):
        assert normalize_message(message) == message


def test_metadata_keeps_only_what_yao_keeps():
    """jsapi_helpers.go:84-96: timestamp / sequence (float64 → int64 / int, truncated), trace_id (string)
    (case C8); metadata {} stays {} (C9)."""
    out, dropped = collect({"type": "text", "props": {"content": "a"},
                            "metadata": {"timestamp": 1.9, "type": "context", "foo": 2, "sequence": -2.5,
                                         "trace_id": 7}})
    assert out["metadata"] == {"timestamp": 1, "sequence": -2}
    assert dropped == [("field_dropped", "message.metadata.type"), ("field_dropped", "message.metadata.foo"),
                       ("field_dropped", "message.metadata.trace_id")]
    assert normalize_message({"type": "text", "metadata": {}})["metadata"] == {}
    assert normalize_message({"type": "text", "metadata": {"timestamp": True}})["metadata"] == {}


def test_result_is_a_private_deep_copy():
    props = {"content": "a", "nested": {"list": [1]}}
    out = normalize_message({"type": "text", "props": props})
    props["nested"]["list"].append(2)
    props["content"] = "changed"
    assert out["props"] == {"content": "a", "nested": {"list": [1]}}


@pytest.mark.parametrize(
    ("message", "where"),
    [
        ({"type": "text", "props": {"content": "x", "s": {1}}}, "message.props.s is a set"),
        ({"type": "action", "props": {"items": [1, object()]}}, "message.props.items[1] is a object"),
        ({"type": "text", "props": {"content": "x"}, "metadata": {"at": b"raw"}}, "message.metadata.at is a bytes"),
        ({"type": "text", "props": {1: "x"}}, "message.props has a non-string key 1"),
        ({"type": "text", "props": {"content": "x"}, "extra": {"when": 1j}}, "message.extra.when is a complex"),
        ({"type": "text", "props": {"n": math.nan}}, "message.props.n is nan"),
        ({"type": "text", "props": {"n": [math.inf]}}, "message.props.n[0] is inf"),
    ],
)
def test_values_json_cannot_carry_are_refused_naming_the_place(message, where):
    """Ours: a message must stay plain JSON. Yao's bridge fails such values with "failed to convert
    message: …" (jsapi_helpers.go:29-32), which is the text's prefix here."""
    with pytest.raises(OutputMessageError, match=re.escape(where)) as caught:
        normalize_message(message)
    assert str(caught.value).startswith("invalid message: failed to convert message: ")


def test_a_non_json_value_is_refused_at_send_and_nothing_is_applied():
    out = Output()
    with pytest.raises(OutputMessageError, match=r"message\.props\.tags is a set"):
        out.send({"type": "action", "props": {"tags": {"a"}}, "id": "a1"})
    assert out.pending == [] and out.pending_state == new_state()


# ---- groups ---------------------------------------------------------------------------------------

SEED_GROUP = {  # seed 000 example 9, with its values filled in
    "id": "context_info",
    "messages": [
        {"type": "text", "props": {"content": "**Context Information:**"}},
        {"type": "text", "props": {"content": "User: Anonymous"}},
    ],
    "metadata": {"timestamp": 1700000000000, "type": "context"},
}


def test_a_group_is_kept_as_yao_keeps_it():
    """jsapi_helpers.go:102-220: members parsed like Send's, not tagged with the group's id; the group's
    metadata keeps timestamp / sequence / trace_id (:205-217; the seed's metadata.type is dropped)."""
    report = Collector()
    assert normalize_group(SEED_GROUP, report=report) == {
        "id": "context_info",
        "messages": [{"type": "text", "props": {"content": "**Context Information:**"}},
                     {"type": "text", "props": {"content": "User: Anonymous"}}],
        "metadata": {"timestamp": 1700000000000},
    }
    assert [(d["code"], d["where"]) for d in report.items] == [("field_dropped", "group.metadata.type")]


def test_group_members_are_tagged_for_the_state_and_the_view():
    """Ours (Yao tags nothing, jsapi_helpers.go:150-196): group_id and the group's metadata
    as each member's base; a member's own keys win; an id-less member gets "<group>.<index>"."""
    group = normalize_group({"id": "g", "metadata": {"timestamp": 1, "sequence": 2},
                             "messages": [{"type": "text", "metadata": {"sequence": 9}}, {"type": "loading", "id": "l"}]})
    assert group_members(group) == [
        {"type": "text", "props": {}, "group_id": "g", "id": "g.0", "metadata": {"timestamp": 1, "sequence": 9}},
        {"type": "loading", "props": {}, "id": "l", "group_id": "g", "metadata": {"timestamp": 1, "sequence": 2}},
    ]
    assert group["messages"][0] == {"type": "text", "props": {}, "metadata": {"sequence": 9}}  # untouched


def test_an_empty_group_and_an_empty_id_are_accepted():
    """jsapi_helpers.go:123-131: id "" passes the string check; messages: [] is a non-nil empty slice (C13)."""
    assert normalize_group({"id": "", "messages": []}) == {"id": "", "messages": []}
    assert group_members(normalize_group({"id": "", "messages": [{"type": "text"}]})) == [{"type": "text", "props": {}}]


@pytest.mark.parametrize(
    ("group", "text"),
    [
        ("x", "invalid group: group must be an object"),
        (None, "invalid group: group must be an object"),
        ([], "invalid group: group must be an object"),
        ({"messages": []}, "invalid group: group.id is required and must be a string"),
        ({"id": 1, "messages": "x"}, "invalid group: group.id is required and must be a string"),
        ({"id": "g"}, "invalid group: group.messages is required and must be an array"),
        ({"id": "g", "messages": {}}, "invalid group: group.messages is required and must be an array"),
        ({"id": "g", "messages": ["hi"]}, "invalid group: group.messages[0] must be an object"),
        ({"id": "g", "messages": [{"type": "text"}, {"props": {}}]}, "invalid group: group.messages[1].type is required"),
    ],
)
def test_group_errors_carry_yaos_text(group, text):
    """jsapi_helpers.go:104-147 (the id is checked before messages; no string shorthand inside a group),
    prefixed as jsapi.go:203-206 does (cases C14, C15)."""
    with pytest.raises(OutputMessageError) as caught:
        normalize_group(group)
    assert str(caught.value) == text


def test_group_members_drop_fields_like_send_and_unknown_group_keys_are_reported():
    """jsapi_helpers.go:150-196 (same lenient copy as Send)."""
    report = Collector()
    group = normalize_group({"id": "g", "title": "x", "messages": [{"type": "text", "id": 3, "foo": 1}]},
                            report=report)
    assert group == {"id": "g", "messages": [{"type": "text", "props": {}}]}
    assert [d["where"] for d in report.items] == ["group.messages[0].id", "group.messages[0].foo", "group.title"]


def test_a_group_with_a_value_json_cannot_carry_is_refused():
    with pytest.raises(OutputMessageError, match=re.escape(
            "invalid group: failed to convert group: group.messages[0].props.s is a set")):
        normalize_group({"id": "g", "messages": [{"type": "text", "props": {"s": {1}}}]})


def test_without_echoes_drops_only_a_done_that_repeats_its_ids_last_message():
    from agentctx_widgets.output import without_echoes

    reply = {"type": "text", "props": {"content": "Hi"}, "id": "r"}
    close = {"type": "loading", "props": {}, "id": "l", "done": True}
    changed = {"type": "text", "props": {"content": "Hi!"}, "id": "r", "done": True}
    messages = [{"type": "loading", "props": {"message": "..."}, "id": "l"}, reply, {**reply, "done": True}, close, changed]
    assert without_echoes(messages) == [messages[0], reply, close, changed]
