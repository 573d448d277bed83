"""The transcript's output lines come from the one table of message types (output/message_types.py)."""

from __future__ import annotations

import pytest

from agentctx_widgets.output.message_types import GENERIC, TYPES
from agentctx_widgets.widget.transcript import output_line


@pytest.mark.parametrize(
    ("message", "line"),
    [
        ({"type": "text", "id": "m", "props": {"content": "Hi **there**"}}, "(text m) Hi **there**"),
        ({"type": "thinking", "id": "t", "props": {"content": "hmm"}}, "(thinking t) hmm"),
        ({"type": "user_input", "id": "u", "props": {"content": "hello"}}, "(user_input u) hello"),
        ({"type": "loading", "id": "l", "props": {"message": "Searching..."}}, "(loading l) Searching..."),
        ({"type": "error", "id": "e", "props": {"code": "E1", "message": "boom"}}, "(error e) E1 boom"),
        ({"type": "error", "id": "e", "props": {}}, "(error e)"),
        ({"type": "tool_call", "id": "c", "props": {"id": "call_1", "name": "f", "arguments": '{"q": 1}'}},
         '(tool_call c) f {"q": 1}'),
        ({"type": "tool_call", "id": "c", "props": {"id": "call_1", "name": "f", "arguments": {"b": 1, "a": 2}}},
         '(tool_call c) f {"a":2,"b":1}'),
        ({"type": "tool_call", "id": "c", "props": {"id": "c1", "function": {"name": "g", "arguments": "{}"}}},
         "(tool_call c) g {}"),
        ({"type": "tool_call", "id": "c", "props": {}}, "(tool_call c) ? null"),
        ({"type": "image", "id": "i", "props": {"url": "https://x/y.png"}}, "(image i) https://x/y.png"),
        ({"type": "audio", "id": "a", "props": {"url": "https://x/a.mp3"}}, "(audio a) https://x/a.mp3"),
        ({"type": "video", "id": "v", "props": {}}, "(video v)"),
        ({"type": "action", "id": "x", "props": {"name": "open", "payload": {"b": 1}}},
         '(action x) {"name":"open","payload":{"b":1}}'),
        ({"type": "event", "id": "ev", "props": {"event": "stream_end"}}, '(event ev) {"event":"stream_end"}'),
        ({"type": "chart", "id": "ch", "props": {"url": "u"}}, '(chart ch) {"url":"u"}'),
        ({"type": "text", "id": "n", "props": {"content": ["a", 1]}}, '(text n) ["a",1]'),
    ],
)
def test_output_line_per_type(message, line):
    assert output_line(message) == line


def test_every_type_in_the_table_writes_a_line():
    for name, spec in [*TYPES.items(), ("custom", GENERIC)]:
        assert output_line({"type": name, "id": "x", "props": {}}).startswith(f"({name} x)")
        assert spec.transcript({}) is not None
