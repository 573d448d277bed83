"""StreamProtocol driven without a browser: the fake scheduler (tests/fakes.py), every send recorded."""

from __future__ import annotations

import random
from typing import Any

import pytest
from fakes import FakeScheduler

from agentctx_widgets.output.delta import apply_message, new_state
from agentctx_widgets.widget.stream import StreamProtocol, pending_appends


class Recorder:
    def __init__(self, header_calls: list[int] | None = None) -> None:
        self.sent: list[dict[str, Any]] = []
        self.sent_at: list[float] = []
        self.snapshots: list[dict[str, Any]] = []
        self.snapshot_at: list[float] = []
        self.header_calls = 0


def make(context=None, header=None):
    timers = FakeScheduler(now=1000.0)
    rec = Recorder()

    def header_source(context: list[dict[str, Any]]) -> dict[str, Any]:
        rec.header_calls += 1
        return dict(header or {"name": "t", "count": len(context), "tokens": 0, "window": None, "model": None})

    def send(message: dict[str, Any]) -> None:
        import orjson

        rec.sent.append(orjson.loads(orjson.dumps(message)))  # the comm serializes at send time
        rec.sent_at.append(timers.now)

    def set_snapshot(state: dict[str, Any]) -> None:
        import orjson

        rec.snapshots.append(orjson.loads(orjson.dumps(state)))
        rec.snapshot_at.append(timers.now)

    proto = StreamProtocol(
        send, set_snapshot, header_source, context=context, clock=timers.clock, schedule=timers
    )
    return proto, timers, rec


def text(msg_id: str, content: str) -> dict[str, Any]:
    return {"id": msg_id, "type": "text", "props": {"content": content}}


def append(msg_id: str, content: str, path: str = "content") -> dict[str, Any]:
    return {
        "id": msg_id,
        "type": "text",
        "props": {path: content},
        "delta": True,
        "delta_path": path,
        "delta_action": "append",
    }


def replay(sent: list[dict[str, Any]]) -> dict[str, Any]:
    """What a front end that saw every message would hold (outputs, pending, context, seq)."""
    state: dict[str, Any] = {"seq": 0, "outputs": new_state(), "pending": None, "context": [], "header": None}
    for message in sent:
        if message["kind"] == "snapshot":
            state = {k: v for k, v in message["state"].items()}
            continue
        assert message["seq"] == state["seq"] + 1, "batches must be numbered without gaps"
        state["seq"] = message["seq"]
        for op in message["ops"]:
            kind = op["op"]
            if kind == "out":
                state["outputs"] = apply_message(state["outputs"], op["message"])
            elif kind == "clear_output":
                state["outputs"] = new_state()
            elif kind == "pending":
                state["pending"] = op["message"]
            elif kind == "pending_append":
                state["pending"]["content"][op["index"]][op["key"]] += op["text"]
            elif kind == "header":
                state["header"] = op["header"]
            elif kind == "ctx":
                ctx = state["context"]
                if op["action"] == "added":
                    ctx.insert(op["index"], op["message"])
                elif op["action"] == "updated":
                    ctx[op["index"]] = op["message"]
                elif op["action"] == "removed":
                    del ctx[op["index"]]
                else:
                    state["context"] = list(op["messages"])
    return state


def test_first_message_goes_out_at_once_as_batch_one():
    proto, timers, rec = make()
    proto.output(text("m1", "Hello"))
    assert rec.sent == [{"kind": "batch", "seq": 1, "ops": [{"op": "out", "message": text("m1", "Hello")}]}]


def test_appends_within_the_interval_merge_into_one_op_sent_by_the_trailing_timer():
    proto, timers, rec = make()
    proto.output(text("m1", "He"))
    for piece in ["ll", "o", ",", " world"]:
        proto.output(append("m1", piece))
    assert len(rec.sent) == 1  # still inside the 30 ms window
    timers.advance(0.030)
    assert rec.sent[1] == {"kind": "batch", "seq": 2, "ops": [{"op": "out", "message": append("m1", "llo, world")}]}
    assert proto.outputs["messages"]["m1"]["props"]["content"] == "Hello, world"


def test_interleaved_appends_fold_per_message_and_replay_to_the_same_state():
    """Several streams at once (round-robin deltas) still cost one op per message per batch."""
    proto, timers, rec = make()
    proto.output(text("a", ""))
    proto.output(text("b", ""))
    for piece in ["1", "2"]:
        proto.output(append("a", piece))
    proto.output(append("b", "x"))
    proto.output(append("a", "3"))
    proto.output(append("b", "y"))
    timers.advance(0.030)
    ops = rec.sent[-1]["ops"]
    assert [(op["message"]["id"], op["message"]["props"]) for op in ops] == [
        ("b", {"content": ""}),  # "a" went out alone: the first op of an idle stream is sent at once
        ("a", {"content": "123"}),
        ("b", {"content": "xy"}),
    ]
    assert replay(rec.sent)["outputs"] == proto.outputs
    assert proto.outputs["messages"]["a"]["props"]["content"] == "123"


def test_another_kind_of_message_for_an_open_id_keeps_its_order():
    proto, timers, rec = make()
    proto.output(text("a", "x"))
    timers.advance(0.030)
    proto.output(append("a", "1"))
    proto.output({"id": "a", "type": "text", "props": {"content": "new"}})  # replaces: settles the open append
    proto.output(append("a", "2"))
    timers.advance(0.030)
    ops = rec.sent[-1]["ops"]
    assert [op["message"]["props"] for op in ops] == [{"content": "1"}, {"content": "new"}, {"content": "2"}]
    assert replay(rec.sent)["outputs"] == proto.outputs
    assert proto.outputs["messages"]["a"]["props"]["content"] == "new2"


def test_appends_onto_a_list_are_not_joined_into_one_string():
    proto, timers, rec = make()
    proto.output({"id": "t", "type": "action", "props": {"items": ["a"]}})
    proto.output({**append("t", "b", "items"), "type": "action"})
    proto.output({**append("t", "c", "items"), "type": "action"})
    timers.advance(0.030)
    assert proto.outputs["messages"]["t"]["props"]["items"] == ["a", "b", "c"]
    assert replay(rec.sent)["outputs"]["messages"]["t"]["props"]["items"] == ["a", "b", "c"]


def test_a_done_delta_closes_the_message_and_ends_coalescing():
    proto, timers, rec = make()
    proto.output(text("m", "a"))
    proto.output(append("m", "b"))
    proto.output({**append("m", "c"), "done": True})
    timers.advance(0.030)
    assert proto.outputs["messages"]["m"]["props"]["content"] == "abc"
    assert proto.outputs["messages"]["m"]["done"] is True
    assert replay(rec.sent)["outputs"] == proto.outputs


def test_a_message_that_is_not_one_warns_and_sends_nothing():
    proto, timers, rec = make()
    with pytest.warns(UserWarning, match="nope"):
        proto.output({"id": "nope", "props": {"content": "x"}})  # no type: the engine refuses it
    timers.advance(1.0)
    assert [m for m in rec.sent if m["kind"] == "batch"] == []


def test_a_delta_for_an_unknown_id_creates_the_message_as_the_client_does():
    proto, timers, rec = make()
    proto.output(append("nope", "x"))  # Output reports unknown_id; the view shows what the client shows
    timers.advance(1.0)
    assert proto.outputs["messages"]["nope"] == {"id": "nope", "type": "text", "props": {"content": "x"}, "done": False}
    assert replay(rec.sent)["outputs"] == proto.outputs


def test_one_hundred_thousand_deltas_arrive_whole_in_at_most_one_message_per_30ms():
    proto, timers, rec = make()
    proto.output(text("m", ""))
    expected = []
    for i in range(100_000):
        piece = f"{i:04d} "[-5:]
        expected.append(piece)
        proto.output(append("m", piece))
        if i % 10 == 0:
            timers.advance(0.001)  # 10 deltas per simulated millisecond
    timers.advance(1.0)
    full = "".join(expected)
    assert proto.outputs["messages"]["m"]["props"]["content"] == full
    assert replay(rec.sent)["outputs"]["messages"]["m"]["props"]["content"] == full
    gaps = [b - a for a, b in zip(rec.sent_at, rec.sent_at[1:])]
    assert min(gaps) >= 0.030 - 1e-9
    assert len(rec.sent) <= 10_000 / 30 + 2


def test_random_streams_replay_to_the_kernel_state():
    rnd = random.Random(7)
    for _ in range(30):
        proto, timers, rec = make()
        ids = ["a", "b", "c"]
        for msg_id in ids:
            proto.output(text(msg_id, ""))
        for _ in range(300):
            roll = rnd.random()
            msg_id = rnd.choice(ids)
            if roll < 0.8:
                proto.output(append(msg_id, rnd.choice(["x", "yz", "", "\n"])))
            elif roll < 0.9:
                proto.output(text(msg_id, "reset"))
            elif roll < 0.95:
                proto.output({"id": msg_id, "type": "text", "props": {"extra": [1]}, "delta": True,
                              "delta_path": "extra", "delta_action": "append"})
            else:
                proto.request_sync()
            timers.advance(rnd.choice([0.0, 0.005, 0.031]))
        timers.advance(2.0)
        assert replay(rec.sent)["outputs"] == proto.outputs


def test_pending_growth_becomes_pending_append_ops_diffed_at_flush_time():
    proto, timers, rec = make()
    live = {"type": 3, "content": [{"type": "text", "text": "Hel"}]}
    proto.set_pending(live)
    assert rec.sent[-1]["ops"] == [{"op": "pending", "message": {"type": 3, "content": [{"type": "text", "text": "Hel"}]}}]
    live["content"][0]["text"] += "lo"  # mutated in place, by reference, as the runner does
    proto.set_pending(live)
    live["content"][0]["text"] += "!"
    proto.set_pending(live)
    timers.advance(0.030)
    assert rec.sent[-1]["ops"] == [{"op": "pending_append", "index": 0, "key": "text", "text": "lo!"}]
    live["content"].append({"type": "toolCall", "callId": "c1", "name": "f", "arguments": {}})
    proto.set_pending(live)
    timers.advance(0.030)
    assert rec.sent[-1]["ops"][0]["op"] == "pending"
    assert rec.sent[-1]["ops"][0]["message"]["content"][1]["name"] == "f"
    proto.set_pending(None)
    timers.advance(0.030)
    assert rec.sent[-1]["ops"] == [{"op": "pending", "message": None}]
    assert replay(rec.sent)["pending"] is None


def test_pending_appends_refuses_anything_but_text_growth():
    old = {"type": 3, "content": [{"type": "text", "text": "ab"}]}
    assert pending_appends(old, {"type": 3, "content": [{"type": "text", "text": "abc"}]}) == [
        {"op": "pending_append", "index": 0, "key": "text", "text": "c"}
    ]
    assert pending_appends(old, {"type": 3, "content": [{"type": "text", "text": "xb"}]}) is None
    assert pending_appends(old, {"type": 3, "content": []}) is None
    assert pending_appends(old, {"type": 3, "error": "x", "content": [{"type": "text", "text": "ab"}]}) is None
    assert pending_appends(old, old) == []


def test_sync_request_is_answered_with_a_snapshot_that_folds_in_queued_ops():
    proto, timers, rec = make()
    proto.output(text("m", "a"))
    proto.output(append("m", "b"))  # queued
    proto.request_sync()
    timers.advance(0.030)
    last = rec.sent[-1]
    assert last["kind"] == "snapshot" and last["seq"] == 2
    assert last["state"]["outputs"]["messages"]["m"]["props"]["content"] == "ab"
    proto.output(append("m", "c"))
    timers.advance(0.030)
    assert rec.sent[-1]["seq"] == 3 and rec.sent[-1]["kind"] == "batch"


def test_context_changes_become_ops_and_the_header_is_computed_once_per_flush():
    proto, timers, rec = make(context=[{"type": 2, "content": [{"type": "text", "text": "hi"}]}])
    calls = rec.header_calls
    m = {"type": 3, "content": [{"type": "text", "text": "yo"}]}
    proto.context_change({"action": "added", "index": 1, "message": m})
    m["content"][0]["text"] = "mutated later"  # the view keeps its own copy
    for i in range(2, 50):
        proto.context_change({"action": "added", "index": i, "message": {"type": 2, "content": []}})
    proto.context_change({"action": "updated", "index": 0, "message": {"type": 2, "content": [{"type": "text", "text": "hey"}]}})
    proto.context_change({"action": "removed", "index": 49, "message": {}})
    timers.advance(0.030)
    assert rec.header_calls - calls == 2  # one per flush, not one per change
    assert rec.sent[-1]["ops"][-1] == {"op": "header", "header": {"name": "t", "count": 49, "tokens": 0, "window": None, "model": None}}
    assert proto.context[1]["content"][0]["text"] == "yo"
    assert len(proto.context) == 49
    state = replay([{"kind": "snapshot", "seq": 0, "state": rec.snapshots[0]}, *rec.sent])
    assert state["context"] == proto.context


def replays_from(snap: dict[str, Any], sent: list[dict[str, Any]]) -> dict[str, Any]:
    """The state of a view that adopted the snapshot ``snap`` and then applied every later batch."""
    later = [m for m in sent if m["seq"] > snap["seq"]]
    return replay([{"kind": "snapshot", "seq": snap["seq"], "state": snap}, *later])


def test_a_continuous_stream_writes_the_snapshot_only_to_catch_up_doubling_then_once_when_it_settles():
    """marimo syncs the trait on every write: a periodic whole-state write would be quadratic traffic.
    While streaming, a write only catches up a view the busy kernel cannot answer: at most once a
    second and only once the stream has doubled, so all of them add up to about the final state."""
    proto, timers, rec = make()
    assert len(rec.snapshots) == 1 and rec.snapshots[0]["seq"] == 0  # written at creation
    proto.output(text("m", ""))
    for _ in range(8000):  # 8 s of 1 delta per ms
        proto.output(append("m", "x"))
        timers.advance(0.001)
    streaming = rec.snapshots[1:]
    # batch k leaves at 0.03 * (k - 1) s: the first catch-up is the first batch a second after the
    # creation snapshot (k = 35 at 1.02 s), then seq must double and a second pass: 70 (2.07 s),
    # 140 (4.17 s); 280 would be at 8.37 s, after the stream
    assert [snap["seq"] for snap in streaming] == [35, 70, 140]
    times = rec.snapshot_at[1:]
    assert all(b - a >= 1.0 for a, b in zip([0.0, *times], times))
    timers.advance(2.0)
    final = rec.snapshots[-1]
    assert len(rec.snapshots) == 5  # and once when it settled
    assert rec.snapshot_at[-1] == pytest.approx(rec.sent_at[-1] + 0.5, abs=1e-9)
    assert final["seq"] == proto.seq == rec.sent[-1]["seq"]
    assert final["outputs"]["messages"]["m"]["props"]["content"] == "x" * 8000
    written = sum(len(snap["outputs"]["messages"].get("m", {}).get("props", {}).get("content", "")) for snap in streaming)
    assert written <= 8000  # the catch-ups add up to less than the final state
    for snap in streaming:  # a view may adopt any of them and then apply the later batches
        assert replays_from(snap, rec.sent)["outputs"] == proto.outputs


def test_a_pause_in_the_stream_settles_it_and_each_snapshot_is_the_state_at_its_seq():
    proto, timers, rec = make()
    proto.output(text("m", ""))
    for piece in ["a", "b"]:
        for _ in range(1000):
            proto.output(append("m", piece))
            timers.advance(0.001)
        timers.advance(0.6)  # a pause longer than the settle delay
    written = rec.snapshots[1:]
    assert [snap["outputs"]["messages"]["m"]["props"]["content"] for snap in written] == ["a" * 1000, "a" * 1000 + "b" * 1000]
    for snap in written:  # a view may adopt any of them and then apply the later batches
        assert replays_from(snap, rec.sent)["outputs"] == proto.outputs


def test_a_slow_stream_settles_only_after_a_gap_longer_than_the_settle_delay():
    proto, timers, rec = make()
    proto.output(text("m", ""))
    for _ in range(10):  # one delta every 0.4 s: every batch goes out at once, none is 0.5 s after the last
        timers.advance(0.4)
        proto.output(append("m", "x"))
    # batch 1 at 0 s, then one every 0.4 s: catch-ups at 1.2 s (seq 4: a second after creation, seq >= 2)
    # and 2.4 s (seq 7: a second later, but 7 < 8) -> only at 2.8 s (seq 8); none settled yet
    assert [snap["seq"] for snap in rec.snapshots] == [0, 4, 8]
    timers.advance(0.5)
    assert len(rec.snapshots) == 4 and rec.snapshots[3]["outputs"]["messages"]["m"]["props"]["content"] == "x" * 10


def test_settle_mid_stream_writes_at_once_and_the_stream_settles_again_later():
    proto, timers, rec = make()
    proto.output(text("m", "a"))
    proto.output(append("m", "b"))
    proto.settle()  # what run_turn does at the end of a turn, and what a save needs
    assert len(rec.snapshots) == 2 and rec.snapshots[1]["seq"] == 2
    assert rec.snapshots[1]["outputs"]["messages"]["m"]["props"]["content"] == "ab"
    timers.advance(1.0)  # nothing new was sent: settling again writes nothing
    assert len(rec.snapshots) == 2
    proto.output(append("m", "c"))
    timers.advance(1.0)
    assert [snap["seq"] for snap in rec.snapshots] == [0, 2, 3]


def test_a_snapshot_answering_a_sync_request_does_not_rewrite_the_settled_one():
    proto, timers, rec = make()
    proto.output(text("m", "a"))
    timers.advance(1.0)
    assert [snap["seq"] for snap in rec.snapshots] == [0, 1]
    proto.request_sync()  # a view reloaded: it gets a snapshot message at the same seq
    timers.advance(1.0)
    assert rec.sent[-1]["kind"] == "snapshot" and rec.sent[-1]["seq"] == 1
    assert [snap["seq"] for snap in rec.snapshots] == [0, 1]


def test_clear_output_forgets_outputs_but_not_context():
    proto, timers, rec = make(context=[{"type": 2, "content": [{"type": "text", "text": "hi"}]}])
    proto.output(text("m", "a"))
    proto.clear_output()
    timers.advance(0.030)
    assert proto.outputs == new_state()
    assert len(proto.context) == 1
    assert {"op": "clear_output"} in rec.sent[-1]["ops"]


def test_close_sends_what_is_left_and_stops_timers():
    proto, timers, rec = make()
    proto.output(text("m", "a"))
    proto.output(append("m", "b"))
    proto.close()
    assert rec.sent[-1]["ops"] == [{"op": "out", "message": append("m", "b")}]
    count = len(rec.sent)
    proto.output(append("m", "c"))
    timers.advance(5.0)
    assert len(rec.sent) == count


def test_settle_sends_the_queue_and_writes_the_snapshot_now():
    proto, timers, rec = make()
    proto.output(text("m", "a"))
    proto.output(append("m", "b"))
    proto.settle()
    assert rec.sent[-1]["seq"] == 2
    assert rec.snapshots[-1]["seq"] == 2
    assert rec.snapshots[-1]["outputs"]["messages"]["m"]["props"]["content"] == "ab"


def test_a_flush_that_sends_nothing_does_not_postpone_the_settled_snapshot():
    proto, timers, rec = make()
    proto.output(text("m", "a"))  # t=0: sent at once
    timers.advance(0.98)  # settled at t=0.5: seq 1 written
    proto.output(append("m", "b"))  # sent inline (seq 2) at t=0.98
    timers.advance(0.2)
    proto.set_pending(None)  # marks pending dirty, but nothing changed: the flush sends nothing
    timers.advance(2.0)
    assert rec.sent[-1]["seq"] == 2
    assert [snap["seq"] for snap in rec.snapshots] == [0, 1, 2]
    assert rec.snapshot_at[2] == pytest.approx(rec.sent_at[-1] + 0.5, abs=1e-9)
    assert rec.snapshots[-1]["outputs"]["messages"]["m"]["props"]["content"] == "ab"


def test_a_context_change_at_an_impossible_index_is_refused_by_name_and_changes_nothing():
    proto, timers, rec = make(context=[{"type": 2, "content": []}])
    before = len(rec.sent)
    for change in ({"action": "added", "index": 2, "message": {"type": 2, "content": []}},
                   {"action": "updated", "index": 1, "message": {"type": 2, "content": []}},
                   {"action": "removed", "index": -1, "message": {}}):
        with pytest.raises(IndexError, match=f"context change '{change['action']}': index {change['index']} is outside a context of 1"):
            proto.context_change(change)
    timers.advance(1.0)
    assert len(proto.context) == 1 and len(rec.sent) == before
