"""The transcript's output lines come from the one table of message types (output/message_types.py);
closed messages say so; context messages are tagged with their MessageType's name."""

from __future__ import annotations

import pytest

from agentctx_widgets import Output
from agentctx_widgets.output.message_types import GENERIC, TYPES
from agentctx_widgets.widget.transcript import message_lines, output_line, transcript


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


@pytest.mark.parametrize(
    ("message", "line"),
    [
        ({"type": "text", "id": "m", "props": {"content": "Hi"}, "done": True}, "(text m done) Hi"),
        ({"type": "text", "id": "m", "props": {"content": "Hi"}, "done": False}, "(text m) Hi"),
        ({"type": "thinking", "id": "t", "props": {"content": "hmm"}, "done": True}, "(thinking t done) hmm"),
        ({"type": "error", "id": "e", "props": {}, "done": True}, "(error e done)"),
        ({"type": "chart", "id": "ch", "props": {"url": "u"}, "done": True}, '(chart ch done) {"url":"u"}'),
        # the view hides a closed loading message and the static page leaves it out: no stale "Thinking..."
        ({"type": "loading", "id": "l1", "props": {"message": "Thinking..."}, "done": True}, "(loading l1 done)"),
        ({"type": "loading", "id": "l1", "props": {"message": "Thinking..."}, "done": False},
         "(loading l1) Thinking..."),
    ],
)
def test_a_closed_message_says_done(message, line):
    assert output_line(message) == line


def test_done_closes_the_loading_message_in_the_whole_transcript():
    out = Output()
    out.send({"type": "loading", "id": "l1", "props": {"message": "Thinking..."}})
    out.send({"type": "text", "id": "m1", "props": {"content": "Hi"}})
    out.send({"type": "text", "id": "m1", "props": {"content": " there"}, "delta": True, "delta_path": "content"})
    out.send({"type": "loading", "id": "l1", "done": True})
    out.flush()
    state = {"header": {"name": "demo", "count": 0, "tokens": 0}, "context": [], "pending": None,
             "outputs": out.state}
    assert transcript(state) == 'ContextView "demo" · 0 messages · ~0 tokens\n(loading l1 done)\n(text m1) Hi there'
    out.send({"type": "text", "id": "m1", "done": True})
    out.flush()
    state["outputs"] = out.state
    assert transcript(state).splitlines()[1:] == ["(loading l1 done)", "(text m1 done) Hi there"]


@pytest.mark.parametrize(
    ("kind", "tag"),
    [(0, "reserved"), (1, "system"), (2, "user"), (3, "assistant"), (4, "tool_result"), (5, "type 5"),
     (-1, "type -1"), (True, "type True"), (None, "type None"), (2.0, "type 2.0")],
)
def test_context_lines_name_the_message_type(kind, tag):
    assert message_lines({"type": kind, "content": [{"type": "text", "text": "x"}]}) == [f"[{tag}] x"]


def test_a_tool_result_names_its_call():
    assert message_lines({"type": 4, "callId": "c1", "content": [{"type": "text", "text": "42"}]}) == ["[tool_result c1] 42"]
    assert message_lines({"type": 4, "callId": "c1", "error": True, "content": []}) == ["[tool_result c1 error]"]
