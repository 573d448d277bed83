"""FoldingQueue alone: which appends fold, where the folded op stands, and what reaches the state."""

from __future__ import annotations

from typing import Any

from agentctx_widgets.output.delta import apply_message_in_place, new_state
from agentctx_widgets.widget.folding import FoldingQueue, string_append


def append(msg_id: Any, text: str, path: str = "content", **extra: Any) -> dict[str, Any]:
    return {"id": msg_id, "type": "text", "props": {path: text}, "delta": True, "delta_path": path,
            "delta_action": "append", **extra}


class Owner:
    """What StreamProtocol does around the queue: apply what no fold took, then push it."""

    def __init__(self) -> None:
        self.state = new_state()
        self.queue = FoldingQueue(lambda message: apply_message_in_place(self.state, message))

    def feed(self, message: dict[str, Any]) -> None:
        if self.queue.try_fold(message):
            return
        self.queue.end_folds(message.get("id") or "ai-response-unknown")
        applied = apply_message_in_place(self.state, message)
        stored = self.state["messages"][applied] if applied == message.get("id") else None
        self.queue.push_output(message, stored)


def test_string_append_accepts_only_a_plain_one_prop_string_append():
    assert string_append(append("m", "x"), "content") == "x"
    assert string_append({**append("m", "x"), "delta_action": "replace"}, "content") is None
    assert string_append({**append("m", "x"), "done": True}, "content") is None  # done ends a fold
    assert string_append({**append("m", "x"), "group_id": "g"}, "content") is None
    assert string_append({**append("m", "x"), "props": {"content": "x", "other": "y"}}, "content") is None
    assert string_append({**append("m", "x"), "props": {"content": ["x"]}}, "content") is None
    assert string_append({key: v for key, v in append("m", "x").items() if key != "delta"}, "content") is None


def test_appends_fold_into_one_op_where_the_first_stood_and_the_state_is_applied_at_take():
    owner = Owner()
    owner.feed({"id": "a", "type": "text", "props": {"content": ">"}})
    owner.feed(append("a", "1"))
    owner.feed({"id": "b", "type": "text", "props": {"content": "b"}})
    owner.feed(append("a", "2"))
    owner.feed(append("a", "3"))
    # the first append is applied when it opens the fold; the rest only when the fold ends
    assert owner.state["messages"]["a"]["props"]["content"] == ">1"
    ops = owner.queue.take()
    assert [op["message"]["id"] for op in ops] == ["a", "a", "b"]
    assert ops[1]["message"] == append("a", "123")
    assert owner.state["messages"]["a"]["props"]["content"] == ">123"
    assert not owner.queue and owner.queue.take() == []


def test_another_message_for_the_id_ends_its_fold_but_not_the_others():
    owner = Owner()
    for msg_id in ("a", "b"):
        owner.feed({"id": msg_id, "type": "text", "props": {"content": ""}})
    owner.feed(append("a", "1"))
    owner.feed(append("b", "x"))
    owner.feed({**append("a", "2"), "done": True})  # not foldable: ends a's fold first
    owner.feed(append("b", "y"))
    ops = owner.queue.take()
    assert [op["message"]["props"]["content"] for op in ops] == ["", "", "1", "xy", "2"]
    assert owner.state["messages"]["a"] == {"id": "a", "type": "text", "props": {"content": "12"}, "done": True}
    assert owner.state["messages"]["b"]["props"]["content"] == "xy"


def test_id_less_appends_and_appends_onto_non_strings_never_fold():
    owner = Owner()
    owner.feed({"type": "text", "props": {"content": ""}})
    owner.feed(append(None, "1"))
    owner.feed(append("", "2"))
    owner.feed({"id": "l", "type": "action", "props": {"items": ["a"]}})
    owner.feed({**append("l", "b", "items"), "type": "action"})
    owner.feed({**append("l", "c", "items"), "type": "action"})
    ops = owner.queue.take()
    assert len(ops) == 6  # one op per message: nothing folded
    assert owner.state["messages"]["ai-response-unknown"]["props"]["content"] == "12"
    assert owner.state["messages"]["l"]["props"]["items"] == ["a", "b", "c"]


def test_an_unhashable_id_is_left_to_the_engine_to_refuse():
    queue = FoldingQueue(lambda message: None)
    assert queue.try_fold(append(["not", "an", "id"], "x")) is False
