"""Output: send validates and applies to the pending state, flush delivers to every sink in order."""

from __future__ import annotations

import pytest

from agentctx_widgets.output import Output, OutputMessageError, SinkError
from agentctx_widgets.output.delta import SHARED_SLOT
from agentctx_widgets.output.diagnostics import DiagnosticError


class Recorder:
    def __init__(self) -> None:
        self.batches: list[list[dict]] = []

    def write(self, messages: list[dict]) -> None:
        self.batches.append(messages)


def text(msg_id, content, **extra):
    return {"type": "text", "props": {"content": content}, "id": msg_id, **extra}


def append(msg_id, content):
    return {"type": "text", "props": {"content": content}, "id": msg_id, "delta": True,
            "delta_path": "content", "delta_action": "append"}


def test_flush_delivers_everything_since_the_last_flush_in_order():
    rec = Recorder()
    out = Output([rec])
    out.send("Welcome!")
    out.send({"type": "loading", "props": {"message": "Analyzing your request..."}})
    assert rec.batches == []
    out.flush()
    out.send(text("m", "a"))
    out.flush()
    assert rec.batches == [
        [{"type": "text", "props": {"content": "Welcome!"}},
         {"type": "loading", "props": {"message": "Analyzing your request..."}}],
        [{"type": "text", "props": {"content": "a"}, "id": "m"}],
    ]


def test_flush_with_nothing_buffered_calls_no_sink():
    rec = Recorder()
    out = Output([rec])
    out.flush()
    assert rec.batches == []


def test_a_plain_callable_is_a_sink_and_each_sink_gets_the_batch():
    seen: list[list[dict]] = []
    rec = Recorder()
    out = Output([seen.append])
    out.add_sink(rec)
    out.send("x")
    out.flush()
    assert seen == rec.batches == [[{"type": "text", "props": {"content": "x"}}]]
    assert seen[0] is not rec.batches[0]  # each sink its own list


def test_remove_sink_stops_delivery_and_unknown_sink_is_an_error():
    rec = Recorder()
    out = Output([rec])
    out.remove_sink(rec)
    out.send("x")
    out.flush()
    assert rec.batches == []
    with pytest.raises(ValueError, match="not attached"):
        out.remove_sink(rec)


def test_a_sink_must_be_callable_or_have_write():
    with pytest.raises(TypeError, match="write"):
        Output([object()])


def test_streaming_example_from_the_seed():
    out = Output()
    out.Send(text("status_msg", "Processing"))
    out.Flush()
    for piece in ["...", " Done!"]:
        out.Send(append("status_msg", piece))
        out.Flush()
    assert out.state["messages"]["status_msg"]["props"]["content"] == "Processing... Done!"
    assert [m["props"]["content"] for m in out.messages] == ["Processing", "...", " Done!"]


def test_state_holds_only_flushed_messages_and_pending_state_everything():
    out = Output()
    out.send(text("m", "a"))
    out.flush()
    out.send(append("m", "b"))
    assert out.state["messages"]["m"]["props"]["content"] == "a"
    assert out.pending_state["messages"]["m"]["props"]["content"] == "ab"
    assert out.pending == [append("m", "b")]
    out.flush()
    assert out.state == out.pending_state
    assert out.pending == []


def test_send_returns_the_id_and_id_less_messages_share_the_clients_slot():
    out = Output()
    assert out.send("a") == SHARED_SLOT
    assert out.send(text("m", "b")) == "m"
    assert out.send("c") == SHARED_SLOT  # the CUI client's one slot for id-less messages, in its first place
    assert out.pending_state["order"] == [SHARED_SLOT, "m"]
    assert out.pending_state["messages"][SHARED_SLOT]["props"] == {"content": "c"}
    assert [d["code"] for d in out.diagnostics] == ["shared_slot"]


def test_a_bad_message_raises_at_send_and_changes_nothing():
    rec = Recorder()
    out = Output([rec])
    out.send(text("m", "a"))
    before = out.pending_state
    with pytest.raises(OutputMessageError, match=r"message\.props\.tags"):
        out.send({"type": "text", "props": {"content": "x", "tags": {"a", "b"}}})  # a set is not JSON
    assert out.pending_state == before
    out.flush()
    assert rec.batches == [[text("m", "a")]]


def test_what_the_client_takes_is_applied_at_send_with_a_diagnostic():
    out = Output()
    out.send(text("m", "a"))
    out.send({"type": "text", "props": {"content": 5}, "id": "m", "delta": True, "delta_path": "content"})
    out.send(append("nope", "x"))
    assert out.pending_state["messages"]["m"]["props"] == {"content": "a5"}  # JavaScript's "a" + 5
    assert out.pending_state["messages"]["nope"]["props"] == {"content": "x"}  # a delta for a new id creates it
    assert [d["code"] for d in out.diagnostics] == ["append_coerced", "unknown_id"]


def test_a_message_after_done_starts_it_afresh_at_send():
    out = Output()
    out.send(text("m", "a"))
    out.send({"type": "text", "props": {}, "id": "m", "done": True})
    out.flush()
    assert out.state["messages"]["m"] == {"id": "m", "type": "text", "props": {"content": "a"}, "done": True}
    out.send(append("m", "b"))  # as the client does: the delta applies to empty props, the message reopens
    out.flush()
    assert out.state["messages"]["m"] == {"id": "m", "type": "text", "props": {"content": "b"}, "done": False}
    assert [d["code"] for d in out.diagnostics] == ["bare_done_kept", "after_done"]


def test_the_caller_changing_its_dicts_after_send_changes_nothing():
    rec = Recorder()
    out = Output([rec])
    message = {"type": "action", "props": {"items": ["a"]}, "id": "t"}
    out.send(message)
    message["props"]["items"].append("sneaky")
    out.flush()
    assert rec.batches[0][0]["props"] == {"items": ["a"]}
    assert out.state["messages"]["t"]["props"] == {"items": ["a"]}


def test_list_appends_in_the_state_never_reach_the_delivered_messages():
    out = Output()
    out.send({"type": "action", "props": {"items": ["a"]}, "id": "t"})
    out.send({"type": "action", "props": {"items": ["b"]}, "id": "t", "delta": True, "delta_path": "items"})
    out.flush()
    assert out.messages[0]["props"] == {"items": ["a"]}
    assert out.state["messages"]["t"]["props"] == {"items": ["a", "b"]}


def test_state_is_a_copy():
    out = Output()
    out.send(text("m", "a"))
    out.flush()
    out.state["messages"]["m"]["props"]["content"] = "changed"
    out.state["order"].append("x")
    assert out.state["messages"]["m"]["props"]["content"] == "a"
    assert out.state["order"] == ["m"]


def test_send_group_tags_every_message():
    rec = Recorder()
    out = Output([rec])
    ids = out.SendGroup({"id": "context_info", "messages": [
        {"type": "text", "props": {"content": "**Context Information:**"}},
        {"type": "text", "props": {"content": "Locale: en"}},
    ], "metadata": {"type": "context"}})
    out.flush()
    # id-less members get "<group>.<index>", so the group renders whole (not one shared slot)
    assert ids == ["context_info.0", "context_info.1"]
    assert [m["group_id"] for m in rec.batches[0]] == ["context_info", "context_info"]
    assert [d["code"] for d in out.diagnostics] == ["field_dropped"]  # metadata.type: Yao keeps 3 keys
    assert out.state["messages"]["context_info.1"] == {"id": "context_info.1", "type": "text",
                                                        "props": {"content": "Locale: en"}, "done": False,
                                                        "group_id": "context_info"}


def test_a_group_with_a_bad_member_applies_none_of_it():
    out = Output(strict=True)
    out.send(text("a", "x"))
    before = out.pending_state
    with pytest.raises(DiagnosticError) as caught:
        out.send_group({"id": "g", "messages": [
            append("a", "y"),                # touches an existing entry
            text("new", "n"),                # creates one
            {**append("a", "z"), "props": {"content": 1}},  # strict: "xy" + 1 coerces, so the group fails
        ]})
    assert caught.value.code == "append_coerced"
    assert out.pending_state == before
    assert out.pending == [text("a", "x")]


def test_a_group_member_may_update_an_earlier_member():
    out = Output()
    out.send_group({"id": "g", "messages": [text("a", "x"), append("a", "y")]})
    out.flush()
    assert out.state["messages"]["a"]["props"] == {"content": "xy"}


def test_a_failing_sink_does_not_cost_the_others_their_messages():
    first, last = Recorder(), Recorder()

    def broken(messages):
        raise RuntimeError("disk full")

    out = Output([first, broken, last])
    out.send("x")
    with pytest.raises(SinkError, match="disk full") as caught:
        out.flush()
    assert first.batches == last.batches == [[{"type": "text", "props": {"content": "x"}}]]
    assert [sink for sink, _ in caught.value.errors] == [broken]
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert out.pending == []  # delivered (to those that could take it); not resent
    out.send("y")
    with pytest.raises(SinkError):
        out.flush()
    assert last.batches[-1] == [{"type": "text", "props": {"content": "y"}}]


def test_accept_is_kept_and_checked():
    assert Output(accept="standard").accept == "standard"
    with pytest.raises(TypeError, match="accept"):
        Output(accept="")


def test_send_copies_only_the_message_never_the_state(monkeypatch):
    """O(message), not O(state): count every value the buffer's engine copies, without timing anything."""
    from agentctx_widgets.output import buffer, delta, messages

    copied = [0]
    real = messages.clone_json

    def counting(value):
        copied[0] += 1
        return real(value)

    for module in (messages, delta, buffer):
        monkeypatch.setattr(module, "clone_json", counting)
    out = Output()
    for i in range(500):  # a big state: 500 messages with some structure each
        out.send({"type": "action", "props": {"items": [{"n": i}, {"n": i}], "content": "x"}, "id": f"m{i}"})
    out.flush()
    copied[0] = 0
    for _ in range(1000):
        out.send({"type": "action", "props": {"content": "y"}, "id": "m7", "delta": True, "delta_path": "content"})
        out.flush()
    # a handful of copies per send (the message's own fields); one copy of the state would be ~3,500
    assert copied[0] <= 10 * 1000
    assert out.state["messages"]["m7"]["props"]["content"] == "x" + "y" * 1000


def test_history_keeps_the_last_messages_and_counts_them_all():
    out = Output(history=3)
    out.send({"type": "text", "props": {"content": "a"}, "id": "m"})
    for piece in "bcde":
        out.send({"type": "text", "props": {"content": piece}, "id": "m", "delta": True, "delta_path": "content"})
    out.flush()
    assert [m["props"]["content"] for m in out.messages] == ["c", "d", "e"]
    assert out.flushed_count == 5
    assert out.state["messages"]["m"]["props"]["content"] == "abcde"  # the state still has it all


def test_history_none_keeps_everything_and_a_bad_history_is_refused():
    out = Output(history=None)
    for i in range(20_001):
        out.send(f"m{i}")
    out.flush()
    assert len(out.messages) == 20_001
    with pytest.raises(TypeError, match="history"):
        Output(history=-1)
