"""One vocabulary for a value's type (agentctx_widgets/_js_types.py), and Go's names built on it
(hooks/returns.py: the one Go decode of a hook's return, for both lifecycles)."""

from __future__ import annotations

import enum
from collections import OrderedDict

import pytest

from agentctx_widgets._js_types import UNDEFINED, js_type, with_article
from agentctx_widgets.hooks.errors import HookReturnError
from agentctx_widgets.hooks.returns import CREATE_FIELDS, check_create, go_kind, go_type_error
from agentctx_widgets.yao.request_shapes import CREATE_FIELDS as TODAY_CREATE_FIELDS
from agentctx_widgets.yao.request_shapes import decode


class Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize(("value", "name", "spoken"), [
    (UNDEFINED, "undefined", "undefined"),
    (None, "null", "null"),
    (True, "boolean", "a boolean"),
    (0, "number", "a number"),
    (1.5, "number", "a number"),
    (Level.LOW, "number", "a number"),
    ("", "string", "a string"),
    ([], "list", "a list"),
    ({}, "object", "an object"),
    (OrderedDict(), "object", "an object"),
    ({1, 2}, "set", "a set"),
])
def test_js_type_names_json_values_and_python_types_beyond(value, name, spoken):
    assert js_type(value) == name
    assert with_article(js_type(value)) == spoken


@pytest.mark.parametrize(("value", "kind", "go"), [
    (True, "string", "bool"),
    ([1], "string", "array"),
    ({}, "string", "object"),
    ("x", "int", "string"),
    (1.5, "int", "number 1.5"),  # decode.go: a number an int cannot hold is named with its text
    (1.5, "string", "number"),   # ... but only for an int field
    (2.0, "int", "number"),
    ({1}, "string", "value"),
])
def test_go_kind_is_encoding_json_s_word(value, kind, go):
    assert go_kind(value, kind) == go


def test_one_go_decode_for_both_lifecycles_names_the_nested_struct():
    """Go >= 1.20 names the innermost struct and the whole path; the seed's Create and today's share it."""
    expected = ("failed to unmarshal to HookCreateResponse: json: cannot unmarshal number into Go struct field "
                "AudioConfig.audio.voice of type string")
    assert go_type_error({"audio": {"voice": 5}}, "HookCreateResponse", CREATE_FIELDS) == (expected, "audio")
    with pytest.raises(HookReturnError) as seed:
        check_create({"audio": {"voice": 5}})
    assert str(seed.value).endswith(f"{expected} (returned audio = dict {{'voice': 5}})")
    with pytest.raises(HookReturnError) as today:
        decode({"audio": {"voice": 5}}, "Create", "HookCreateResponse", TODAY_CREATE_FIELDS)
    assert today.value.detail == expected


def test_todays_create_fields_are_the_seeds_without_assistant_id_and_seven_more():
    assert set(TODAY_CREATE_FIELDS) - set(CREATE_FIELDS) == {
        "mcp_servers", "prompt_preset", "disable_global_prompts", "uses", "force_uses", "search", "delegate"}
    assert set(CREATE_FIELDS) - set(TODAY_CREATE_FIELDS) == {"assistant_id"}
    assert decode({"audio": {"voice": "alloy", "x": 1}, "locale": None, "y": 2}, "Create", "HookCreateResponse",
                  TODAY_CREATE_FIELDS) == {"audio": {"voice": "alloy"}}
