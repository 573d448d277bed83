"""The sink-level fast path: Output's fast-path text appends reach a sink with ``append_text`` as parts
(no message dict per delta), every other sink still gets the normalized dicts, and order holds across
mixed batches; StreamProtocol / ContextView fold those parts exactly as they fold the dicts."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from fakes import FakeScheduler

from agentctx_widgets.output import Output, OutputMessageError
from agentctx_widgets.output.delta import new_state
from agentctx_widgets.output.diagnostics import DiagnosticError
from agentctx_widgets.output.messages import normalize_message, try_text_append_parts
from agentctx_widgets.widget.stream import StreamProtocol


def text(msg_id: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "props": {"content": content}, "id": msg_id, **extra}


def append(msg_id: str, content: str, *, action: bool = True, mtype: str = "text") -> dict[str, Any]:
    message = {"type": mtype, "props": {"content": content}, "id": msg_id, "delta": True, "delta_path": "content"}
    if action:
        message["delta_action"] = "append"
    return message


@pytest.mark.parametrize("message", [
    {**{k: v for k, v in append("m", "x").items() if k != "delta_action"}, "foo": "append"},  # 6 keys, one wrong
    {k: v for k, v in append("m", "x").items() if k != "delta"},  # 5 keys with the action, no delta
    {k: v for k, v in append("m", "x", action=False).items() if k != "type"},  # 4 keys
    {**append("m", "x"), "group_id": "g"},  # 7 keys
])
def test_the_parts_are_refused_for_any_other_set_of_keys(message):
    assert try_text_append_parts(message) is None


def test_the_parts_of_the_streams_own_shape():
    assert try_text_append_parts(append("m", "x")) == ("m", "text", "content", "x", True)
    assert try_text_append_parts(append("m", "x", action=False)) == ("m", "text", "content", "x", False)


class PartsSink:
    """Records every call, in order: ("write", batch) and ("append_text", id, type, key, text)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def write(self, messages: list[dict]) -> None:
        self.calls.append(("write", messages))

    def append_text(self, msg_id: str, mtype: str, key: str, text: str) -> None:
        self.calls.append(("append_text", msg_id, mtype, key, text))


class GroupPartsSink(PartsSink):
    def write_group(self, group: dict) -> None:
        self.calls.append(("write_group", group))


def test_fast_path_appends_reach_append_text_as_parts_and_the_rest_as_write_runs_in_order():
    parts, plain = PartsSink(), []
    out = Output([parts, plain.extend])
    out.send(text("m", "a"))
    out.flush()
    parts.calls.clear()
    plain.clear()
    out.send(append("m", "b"))
    out.send(append("m", "c", action=False))
    out.send(text("n", "x"))  # not a delta: a write run between the appends
    out.send(append("n", "y"))
    out.send(append("m", "d"))
    out.flush()
    assert parts.calls == [
        ("append_text", "m", "text", "content", "b"),
        ("append_text", "m", "text", "content", "c"),
        ("write", [{"type": "text", "props": {"content": "x"}, "id": "n"}]),
        ("append_text", "n", "text", "content", "y"),
        ("append_text", "m", "text", "content", "d"),
    ]
    sent = [append("m", "b"), append("m", "c", action=False), text("n", "x"), append("n", "y"), append("m", "d")]
    assert plain == [normalize_message(message) for message in sent]  # the dict sink: as before
    assert out.state["messages"]["m"]["props"] == {"content": "abcd"}
    assert out.state["messages"]["n"]["props"] == {"content": "xy"}


def test_a_delta_flushed_on_its_own_is_one_append_text_call():
    parts = PartsSink()
    out = Output([parts])
    out.send(text("m", "a"))
    out.flush()
    for piece in ("b", "c"):
        out.send(append("m", piece))
        out.flush()
    out.send(text("m", "z"))  # a lone dict still goes to write
    out.flush()
    assert parts.calls == [
        ("write", [{"type": "text", "props": {"content": "a"}, "id": "m"}]),
        ("append_text", "m", "text", "content", "b"),
        ("append_text", "m", "text", "content", "c"),
        ("write", [{"type": "text", "props": {"content": "z"}, "id": "m"}]),
    ]


def test_history_and_pending_give_the_normalized_dicts_of_fast_path_sends():
    out = Output([PartsSink()])
    out.send(text("m", "a"))
    out.send(append("m", "b"))
    out.send(append("m", "c", action=False))
    expected = [normalize_message(text("m", "a")), normalize_message(append("m", "b")),
                normalize_message(append("m", "c", action=False))]
    assert out.pending == expected
    assert "delta_action" not in out.pending[2]  # spelled as it was sent
    out.flush()
    assert out.pending == []
    assert out.messages == expected
    assert out.flushed_count == 3


def test_an_append_the_fast_path_refuses_reaches_the_sink_as_a_dict():
    parts = PartsSink()
    out = Output([parts])
    out.send(text("m", "a", done=True))
    out.send(append("m", "b"))  # onto a done message: the full path (Yao's rule), a dict for the sink
    out.send(append("m", "c", mtype="thinking"))
    out.flush()
    assert [call[0] for call in parts.calls] == ["write"]
    assert parts.calls[0][1] == [normalize_message(text("m", "a", done=True)), normalize_message(append("m", "b")),
                                 normalize_message(append("m", "c", mtype="thinking"))]


def test_groups_and_fast_path_appends_keep_send_order_for_a_sink_with_write_group():
    sink = GroupPartsSink()
    out = Output([sink])
    out.send(text("m", "a"))
    out.send(append("m", "b"))
    out.send_group({"id": "g", "messages": [{"type": "text", "props": {"content": "in"}, "id": "g1"}]})
    out.send(append("m", "c"))
    out.flush()
    assert sink.calls == [
        ("write", [{"type": "text", "props": {"content": "a"}, "id": "m"}]),
        ("append_text", "m", "text", "content", "b"),
        ("write_group", {"id": "g", "messages": [{"type": "text", "props": {"content": "in"}, "id": "g1"}]}),
        ("append_text", "m", "text", "content", "c"),
    ]


def test_a_sink_check_still_sees_every_fast_path_append_as_its_dict_and_can_refuse_it():
    seen: list[dict] = []

    class Checking(PartsSink):
        def check(self, message: dict) -> None:
            seen.append(message)
            if message["props"].get("content") == "no":
                raise OutputMessageError("refused")

    sink = Checking()
    out = Output([sink])
    out.send(text("m", "a"))
    out.send(append("m", "b"))
    with pytest.raises(OutputMessageError):
        out.send(append("m", "no"))
    out.flush()
    assert seen == [normalize_message(text("m", "a")), normalize_message(append("m", "b")),
                    normalize_message(append("m", "no"))]
    assert out.state["messages"]["m"]["props"] == {"content": "ab"}  # the refused one changed nothing


def test_strict_mode_still_raises_for_an_append_onto_an_unknown_id():
    out = Output([PartsSink()], strict=True)
    with pytest.raises(DiagnosticError):
        out.send(append("nope", "x"))
    assert out.pending == [] and out.pending_state == new_state()


def test_a_sink_added_or_removed_during_a_flush_takes_effect_at_the_next_flush():
    late = PartsSink()
    out = Output()
    first = PartsSink()

    def adding(messages: list[dict]) -> None:
        if late not in out.sinks:
            out.add_sink(late)
            out.remove_sink(first)

    out.add_sink(adding)
    out.add_sink(first)
    out.send(text("m", "a"))
    out.flush()
    assert late.calls == []  # added while the flush ran
    assert first.calls == [("write", [normalize_message(text("m", "a"))])]  # removed while it ran: still served
    out.send(append("m", "b"))
    out.flush()
    assert late.calls == [("append_text", "m", "text", "content", "b")]
    assert len(first.calls) == 1


def test_two_dict_sinks_get_lists_of_their_own():
    one: list[list[dict]] = []
    two: list[list[dict]] = []
    out = Output([one.append, two.append])
    out.send(text("m", "a"))
    out.send(append("m", "b"))
    out.flush()
    assert one == two == [[normalize_message(text("m", "a")), normalize_message(append("m", "b"))]]
    assert one[0] is not two[0]
    one[0].clear()  # a sink changing its list cannot change another's
    assert len(two[0]) == 2


# ---- StreamProtocol.append_text: the same ops and state as the dicts --------------------------------


def protocol() -> tuple[StreamProtocol, list[dict]]:
    sent: list[dict] = []
    timers = FakeScheduler()  # never advanced: the clock stands still and no timer runs
    proto = StreamProtocol(
        lambda message: sent.append(orjson.loads(orjson.dumps(message))), lambda state: None,
        lambda context: {"name": "t", "count": 0, "tokens": 0, "window": None, "model": None},
        interval=3600.0, clock=timers.clock, schedule=timers)
    return proto, sent


def test_append_text_folds_into_one_out_op_like_the_dicts_do():
    proto, sent = protocol()
    proto.output(text("m", "a"))  # the first op goes at once (nothing sent yet); later ones wait
    proto.append_text("m", "text", "content", "b")  # no fold open: applied and opens one
    proto.append_text("m", "text", "content", "c")
    proto.output(text("n", "x"))
    proto.append_text("m", "text", "content", "d")  # still the same fold, though n came between
    proto.flush()
    assert [message["ops"] for message in sent] == [
        [{"op": "out", "message": {"type": "text", "props": {"content": "a"}, "id": "m"}}],
        [{"op": "out", "message": {"id": "m", "type": "text", "props": {"content": "bcd"}, "delta": True,
                                   "delta_path": "content", "delta_action": "append"}},
         {"op": "out", "message": {"type": "text", "props": {"content": "x"}, "id": "n"}}],
    ]
    assert proto.outputs["messages"]["m"]["props"] == {"content": "abcd"}


@pytest.mark.parametrize("feed", ["parts", "dicts"])
def test_append_text_and_dicts_give_the_same_batches_and_state(feed):
    proto, sent = protocol()
    script = [text("m", "a"), append("m", "b"), append("m", "c"), text("m", "z", done=True),
              append("m", "late"), text("k", "1"), append("k", "2", mtype="thinking"), append("k", "3")]
    for index, message in enumerate(script):
        if feed == "parts" and index in (1, 2, 7):  # the fast path's shape onto an open text
            proto.append_text(message["id"], message["type"], "content", message["props"]["content"])
        else:
            proto.output(message)
    proto.flush()
    reference, ref_sent = protocol()
    for message in script:
        reference.output(message)
    reference.flush()
    assert sent == ref_sent
    assert proto.state() == reference.state()


def test_a_context_view_fed_through_output_shows_the_whole_text():
    from agentctx_widgets.widget import ContextView

    view = ContextView()
    view.comm.send = lambda *args, **kwargs: None  # no front end here
    out = Output([view])
    out.send(text("m", ""))
    for i in range(1000):
        out.send(append("m", f"{i:03d} "))
        out.flush()
    out.send(text("m", "", done=True, delta=True, delta_path="content"))
    out.flush()
    expected = "".join(f"{i:03d} " for i in range(1000))
    assert view.state()["outputs"]["messages"]["m"]["props"]["content"] == expected
    assert out.state["messages"]["m"]["props"]["content"] == expected
    view.close()
