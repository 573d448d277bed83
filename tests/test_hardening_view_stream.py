"""The view's coalescing stream against the reference delta engine, on random and malformed messages.

``StreamProtocol`` merges consecutive appends and skips bad messages with a warning; ``Output`` rejects
bad messages at ``send``. Whatever arrives, both must end on the same output state, and a front end
replaying every batch the protocol sent must end there too (nothing lost, nothing doubled).
tests/test_widget_stream.py replays well-formed streams; this adds malformed ones and compares with
the reference engine instead of the protocol's own state.
"""

from __future__ import annotations

import warnings
from typing import Any

import orjson
from fakes import FakeScheduler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_widgets import Output
from agentctx_widgets.output import OutputMessageError, normalize_message
from agentctx_widgets.output.delta import DeltaError, apply_message, new_state
from agentctx_widgets.widget.stream import StreamProtocol

IDS = st.sampled_from(["a", "b"])
TEXT = st.sampled_from(["", "x", "yz", "\n", "é"])
VALUE = st.one_of(TEXT, st.integers(-2, 2), st.none(), st.lists(TEXT, max_size=2),
                  st.dictionaries(st.sampled_from(["content", "name", "k"]), TEXT, max_size=2))
PATH = st.sampled_from(["content", "items.0.name", "items[0]", "name", "content.x", "", "a..b"])
APPEND = st.builds(lambda i, t: {"id": i, "type": "text", "props": {"content": t}, "delta": True,
                                 "delta_path": "content", "delta_action": "append"}, IDS, TEXT)


@st.composite
def messages(draw) -> Any:
    kind = draw(st.sampled_from(["append", "append", "append", "full", "delta", "done", "junk"]))
    if kind == "append":
        return draw(APPEND)
    msg_id = draw(IDS)
    if kind == "full":
        return {"id": msg_id, "type": draw(st.sampled_from(["text", "thinking", "chart"])),
                "props": draw(st.dictionaries(st.sampled_from(["content", "items", "name"]), VALUE, max_size=3))}
    if kind == "delta":
        path = draw(PATH)
        message = {"id": msg_id, "type": "text", "delta": True,
                   "delta_action": draw(st.sampled_from(["append", "replace", "merge", "set", "bogus"])),
                   "props": draw(st.dictionaries(st.sampled_from(["content", "items", "name", "a"]), VALUE, max_size=3))}
        if path:
            message["delta_path"] = path
        if draw(st.booleans()):
            message["group_id"] = draw(st.sampled_from(["g1", "g2"]))
        return message
    if kind == "done":
        return {"id": msg_id, "type": "text", "props": {}, "done": True, "delta": draw(st.booleans())}
    return draw(st.recursive(st.none() | st.integers(-2, 2) | TEXT,
                             lambda inner: st.lists(inner, max_size=2) | st.dictionaries(TEXT, inner, max_size=2),
                             max_leaves=4))


class Harness:
    """A StreamProtocol on the fake scheduler (tests/fakes.py), every send recorded."""

    def __init__(self) -> None:
        self.timers = FakeScheduler()
        self.sent: list[dict[str, Any]] = []
        self.proto = StreamProtocol(self.send, lambda state: None, self.header, clock=self.timers.clock,
                                    schedule=self.timers)

    @staticmethod
    def header(context: list) -> dict[str, Any]:
        return {"name": "t", "count": len(context), "tokens": 0, "window": None, "model": None}

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(orjson.loads(orjson.dumps(message)))  # the comm serialises at send time


def replay(sent: list[dict[str, Any]]) -> dict[str, Any]:
    """The output state of a front end that applied every batch and snapshot in order."""
    outputs, seq = new_state(), 0
    for message in sent:
        if message["kind"] == "snapshot":
            outputs, seq = message["state"]["outputs"], message["seq"]
            continue
        assert message["seq"] == seq + 1, "a gap in the batch numbers"
        seq = message["seq"]
        for op in message["ops"]:
            if op["op"] == "out":
                outputs = apply_message(outputs, op["message"])  # a batch that fails would be a bug
            elif op["op"] == "clear_output":
                outputs = new_state()
    return outputs


@given(st.lists(messages(), max_size=25), st.lists(st.sampled_from([0.0, 0.0, 0.01, 0.031]), min_size=25, max_size=25))
@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_view_stream_ends_on_the_reference_state_whatever_arrives(raw, pauses):
    reference = Output()
    harness = Harness()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the protocol warns about every message it skips
        for message, pause in zip(raw, pauses):
            try:
                normalized = normalize_message(message)
            except OutputMessageError:
                continue  # an Output would refuse it before any sink sees it
            try:
                reference.send(message)
            except (OutputMessageError, DeltaError):
                pass
            harness.proto.output(normalized)
            harness.timers.advance(pause)
        harness.proto.settle()
    reference.flush()
    assert harness.proto.outputs == reference.state
    assert replay(harness.sent) == reference.state
