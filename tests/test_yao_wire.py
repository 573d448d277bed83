"""agentctx_widgets.yao.wire: one ``Metadata`` for the seed's envelope and today's ``message.Message``
(issue 19). Both carry Yao's ``message.Metadata`` struct — ``timestamp``, ``sequence``, ``trace_id``,
each ``omitempty`` (yao afab9c2 ``agent/output/message/types.go:61-65``, unchanged at 5a3f9a6a
``:47-51``) — so ``output.messages.Metadata`` is the type of both, and on the wire it is a struct (its
fields in declaration order, not sorted as a map would be)."""

from __future__ import annotations

import typing

import pytest

from agentctx_widgets.output import messages
from agentctx_widgets.output.messages import normalize_message
from agentctx_widgets.yao import wire
from agentctx_widgets.yao.go_json import dumps
from agentctx_widgets.yao.wire import YaoMessage, parse_message, to_wire


def test_there_is_one_metadata_type():
    assert wire.Metadata is messages.Metadata
    assert typing.get_type_hints(YaoMessage)["metadata"] == (messages.Metadata | None)


@pytest.mark.parametrize("raw", [
    {"timestamp": 1767225600123.7, "sequence": 3, "trace_id": "t1"},
    {"sequence": 2.9},
    {"trace_id": "only"},
    {"timestamp": 5, "other": "dropped", "trace_id": 7},
    {},
])
def test_the_seed_envelope_and_todays_message_keep_the_same_metadata(raw):
    seed = normalize_message({"type": "text", "metadata": raw})["metadata"]
    today = parse_message({"type": "text", "metadata": raw}).metadata
    assert today == seed


def test_metadata_is_written_as_a_struct_in_gos_field_order():
    msg = parse_message({"type": "x", "metadata": {"trace_id": "t", "sequence": 2, "timestamp": 9.5}})
    assert dumps(to_wire(msg)) == '{"type":"x","metadata":{"timestamp":9,"sequence":2,"trace_id":"t"}}'


def test_zero_metadata_fields_are_left_out_and_an_empty_one_is_still_written():
    msg = parse_message({"type": "x", "metadata": {"timestamp": 0, "sequence": 0.4, "trace_id": ""}})
    assert dumps(to_wire(msg)) == '{"type":"x","metadata":{}}'
    assert dumps(to_wire(parse_message({"type": "x"}))) == '{"type":"x"}'
