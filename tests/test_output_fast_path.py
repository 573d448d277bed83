"""Output's fast path for text appends: the same messages, states, errors and diagnostics as the full
path, and no copy of the accumulated text per delta (the text is kept as parts, joined when read)."""

from __future__ import annotations

import random

import pytest

from agentctx_widgets.output import DeltaError, Output, OutputMessageError, apply_message, new_state
from agentctx_widgets.output.diagnostics import Collector, DiagnosticError
from agentctx_widgets.output.live_state import TAIL_PARTS, LiveState
from agentctx_widgets.output.messages import (
    group_members,
    normalize_group,
    normalize_message,
    text_append_message,
    try_text_append_parts,
)


def append(msg_id, text, *, key="content", mtype="text", **extra):
    return {"type": mtype, "id": msg_id, "props": {key: text}, "delta": True, "delta_path": key,
            "delta_action": "append", **extra}


# ---- try_text_append: normalize_message for one shape, None for everything else ----------------------


def try_text_append(message):
    """What ``Output.send``'s fast path makes of ``message``: the dict built from its parts, or None."""
    parts = try_text_append_parts(message)
    return None if parts is None else text_append_message(parts)


@pytest.mark.parametrize("message", [
    append("m1", "Hello"),
    append("m1", "", mtype=""),
    append("m1", "héllo ☃ 🎉", key="text_2"),
    {"type": "thinking", "id": "t", "props": {"text": " more"}, "delta": True, "delta_path": "text"},  # no action
])
def test_the_fast_shape_normalizes_exactly_as_normalize_message(message):
    found = Collector()
    expected = normalize_message(message, report=found)
    got = try_text_append(message)
    assert got == expected
    assert list(got) == list(expected)  # Yao's field order too
    assert found.items == []  # nothing in the shape can be dropped or reported
    assert got is not message and got["props"] is not message["props"]  # a private copy


@pytest.mark.parametrize("message", [
    append("m1", "x", foo=1),  # an extra key: dropped with a diagnostic by the full path
    append("m1", "x", done=True),
    append("m1", "x", type_change=True),
    {**append("m1", "x"), "delta_action": "replace"},
    {**append("m1", "x"), "delta_action": 1},
    {**append("m1", "x"), "delta": 1},
    {**append("m1", "x"), "id": ""},  # the shared slot
    {**append("m1", "x"), "id": 7},
    {**append("m1", "x"), "type": None},
    {**append("m1", "x"), "delta_path": "content.0"},
    {**append("m1", "x"), "delta_path": "items[0]"},
    {**append("m1", "x"), "delta_path": "other"},  # the path is not the prop sent
    {**append("m1", "x"), "props": {"content": "x", "more": "y"}},
    append("m1", 5),  # a number where text is expected
    append("m1", None),
    append("m1", ["x"]),
    append("m1", "bad \ud800 surrogate"),
    append("m1\udfff", "x"),
    "plain text shorthand",
    [append("m1", "x")],
])
def test_every_other_shape_goes_to_the_full_path(message):
    assert try_text_append(message) is None


def test_a_str_subclass_goes_to_the_full_path():
    class Text(str):
        pass

    assert try_text_append(append("m1", Text("x"))) is None
    assert try_text_append({**append("m1", "x"), "delta_action": Text("append")}) is None


# ---- Output: the fast path agrees with the full path case by case ------------------------------------


def sent_states(messages, *, strict=False):
    """Send each message to a fresh Output; return (what each send did, state, diagnostic codes)."""
    out = Output(strict=strict)
    results = []
    for message in messages:
        try:
            results.append(out.send(message))
        except (DeltaError, OutputMessageError, DiagnosticError) as error:
            results.append((type(error).__name__, str(error)))
    out.flush()
    return results, out.state, [item["code"] for item in out.diagnostics]


def test_the_stream_folds_into_one_string():
    results, state, codes = sent_states([{"type": "text", "id": "m", "props": {"content": "Hi"}},
                                         append("m", " there"), append("m", "!")])
    assert results == ["m", "m", "m"]
    assert state == {"order": ["m"], "messages": {"m": {"id": "m", "type": "text", "props": {"content": "Hi there!"},
                                                        "done": False}}}
    assert codes == []


@pytest.mark.parametrize(("opening", "expected_props", "expected_codes"), [
    # a delta for an id never sent: created from empty props
    (None, {"content": "x"}, ["unknown_id"]),
    # onto a done message: it starts afresh and opens again
    ({"type": "text", "id": "m", "props": {"content": "old"}, "done": True}, {"content": "x"}, ["after_done"]),
    # onto a number: the sent text replaces it
    ({"type": "text", "id": "m", "props": {"content": 3}}, {"content": "x"}, ["append_replaced"]),
    # onto a message of another type: the type switches
    ({"type": "thinking", "id": "m", "props": {"content": "a"}}, {"content": "ax"}, ["type_changed"]),
    # onto a missing prop: set
    ({"type": "text", "id": "m", "props": {"other": "a"}}, {"other": "a", "content": "x"}, []),
])
def test_what_the_fast_path_cannot_take_gets_the_full_paths_diagnostics(opening, expected_props, expected_codes):
    messages = ([] if opening is None else [opening]) + [append("m", "x")]
    _, state, codes = sent_states(messages)
    assert state["messages"]["m"]["props"] == expected_props
    assert codes == expected_codes
    # and the same again after text was streamed onto it (parts open when the odd message comes)
    _, state, codes = sent_states([append("m", "x")] + messages + [append("m", "y")])
    assert state["messages"]["m"]["props"]["content"][-1] == "y"
    strict_results, strict_state, _ = sent_states(messages, strict=True)
    if expected_codes:
        assert strict_results[-1][0] == "DiagnosticError"
        assert "x" not in str(strict_state["messages"].get("m", {}).get("props", {}).get("content", ""))


def test_a_done_message_is_not_appended_to_after_text_was_streamed():
    out = Output()
    out.send({"type": "text", "id": "m", "props": {"content": "a"}})
    out.send(append("m", "b"))
    out.send({"type": "text", "id": "m", "done": True})  # a bare done keeps the props
    out.send(append("m", "c"))
    out.flush()
    assert out.state["messages"]["m"] == {"id": "m", "type": "text", "props": {"content": "c"}, "done": False}
    assert [item["code"] for item in out.diagnostics] == ["bare_done_kept", "after_done"]


def test_a_bad_message_after_streamed_text_raises_and_changes_nothing():
    out = Output()
    out.send({"type": "text", "id": "m", "props": {"content": "a"}})
    out.send(append("m", "b"))
    before = out.pending_state
    out.send(append("m", "c"))
    with pytest.raises(OutputMessageError, match="lone surrogate"):
        out.send(append("m", "\ud800"))
    with pytest.raises(OutputMessageError, match="type is required"):
        out.send({"id": "m", "props": {"content": "d"}, "delta": True, "delta_path": "content"})
    out.send(append("m", "e"))
    assert out.pending_state["messages"]["m"]["props"]["content"] == before["messages"]["m"]["props"]["content"] + "ce"


def test_a_refused_group_takes_back_its_members_even_onto_streamed_text():
    out = Output(strict=True)
    out.send({"type": "text", "id": "m", "props": {"content": "a"}})
    out.send(append("m", "b"))  # open parts when the group comes
    before = out.pending_state
    with pytest.raises(DiagnosticError, match="unknown"):  # the second member: a delta for an id never sent
        out.send_group({"id": "g", "messages": [append("m", "c"), append("new", "x")]})
    assert out.pending_state == before
    out.send(append("m", "d"))
    out.flush()
    assert out.state["messages"]["m"]["props"]["content"] == "abd"
    assert out.diagnostics == []


def test_a_sinks_check_still_sees_every_fast_message():
    class Refusing:
        def __init__(self):
            self.checked = []

        def check(self, message):
            self.checked.append(message)
            if message["props"].get("content") == "no":
                raise OutputMessageError("Send failed: refused")

        def write(self, messages):
            pass

    sink = Refusing()
    out = Output([sink])
    out.send({"type": "text", "id": "m", "props": {"content": "a"}})
    out.send(append("m", "b"))
    with pytest.raises(OutputMessageError, match="refused"):
        out.send(append("m", "no"))
    out.flush()
    assert [m["props"]["content"] for m in sink.checked] == ["a", "b", "no"]
    assert out.state["messages"]["m"]["props"]["content"] == "ab"


# ---- the whole of it: random streams against the pure engine ---------------------------------------


class Reference:
    """What Output must do, from the pure engine alone: normalize, apply_message, deliver at flush."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.pending, self.flushed = new_state(), new_state()
        self.buffer: list[dict] = []
        self.delivered: list[dict] = []
        self.codes: list[str] = []

    def send(self, message):
        found = Collector()
        normalized = normalize_message(message, report=found)
        state = apply_message(self.pending, normalized, found)
        self.release(found)
        self.pending = state
        self.buffer.append(normalized)

    def send_group(self, group):
        found = Collector()
        members = group_members(normalize_group(group, report=found))
        state = self.pending
        for index, member in enumerate(members):
            try:
                state = apply_message(state, member, found)
            except DeltaError as error:
                raise DeltaError(error.code, f"group.messages[{index}]: {error}") from error
        self.release(found)
        self.pending = state
        self.buffer.extend(members)

    def release(self, found):
        if found.items and self.strict:
            raise DiagnosticError(found.items[0])
        self.codes.extend(item["code"] for item in found.items)

    def flush(self):
        for message in self.buffer:
            self.flushed = apply_message(self.flushed, message)
        self.delivered.extend(self.buffer)
        self.buffer = []


def random_message(rng: random.Random):
    msg_id = rng.choice(["a", "b", "b", "c", ""])
    mtype = rng.choice(["text", "text", "text", "thinking", ""])
    key = rng.choice(["content", "content", "content", "n"])
    text = rng.choice(["x", " yz", "", "é"])
    kind = rng.random()
    if kind < 0.55:
        return append(msg_id, text, key=key, mtype=mtype)
    if kind < 0.62:
        message = append(msg_id, text, key=key, mtype=mtype)
        del message["delta_action"]
        return message
    if kind < 0.72:
        return {"type": mtype, "id": msg_id, "props": {key: rng.choice(["start", 3, ["l"], None])}}
    if kind < 0.78:
        return {"type": mtype, "id": msg_id, "done": True}
    if kind < 0.82:
        return {**append(msg_id, text, key=key, mtype=mtype), "done": True}
    if kind < 0.85:
        return {**append(msg_id, text, key=key, mtype=mtype), "type_change": True}
    if kind < 0.88:
        return {**append(msg_id, text, key=key, mtype=mtype), "extra": 1}
    if kind < 0.91:
        return append(msg_id, rng.choice([4, 2.5, True]), key=key, mtype=mtype)
    if kind < 0.94:
        return {**append(msg_id, text), "delta_path": "content.deep"}
    if kind < 0.96:
        return {"id": msg_id, "props": {key: text}, "delta": True, "delta_path": key}  # no type
    return append(msg_id, "\ud800")


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_random_streams_match_the_pure_engine(seed, strict):
    rng = random.Random(seed)
    delivered: list[dict] = []
    out = Output([delivered.extend], strict=strict)
    ref = Reference(strict)
    for step in range(400):
        roll = rng.random()
        if roll < 0.06:
            group = {"id": rng.choice(["g", ""]), "messages": [random_message(rng) for _ in range(rng.randint(0, 3))]}
            outcome = [None, None]
            for index, target in enumerate((out.send_group, ref.send_group)):
                try:
                    target(group)
                except (DeltaError, OutputMessageError, DiagnosticError) as error:
                    outcome[index] = (type(error).__name__, str(error))
            assert outcome[0] == outcome[1], step
        elif roll < 0.16:
            out.flush()
            ref.flush()
        elif roll < 0.2:
            assert out.pending_state == ref.pending, step  # a read in the middle of a stream
        else:
            message = random_message(rng)
            outcome = [None, None]
            for index, target in enumerate((out.send, ref.send)):
                try:
                    target(message)
                except (DeltaError, OutputMessageError, DiagnosticError) as error:
                    outcome[index] = (type(error).__name__, str(error))
            assert outcome[0] == outcome[1], (step, message)
        assert [item["code"] for item in out.diagnostics] == ref.codes, step
    out.flush()
    ref.flush()
    assert out.state == ref.flushed
    assert out.pending_state == ref.pending
    assert delivered == ref.delivered
    assert [list(m) for m in delivered] == [list(m) for m in ref.delivered]  # field order too


# ---- parts, not copies ---------------------------------------------------------------------------------


def test_streamed_text_is_kept_as_parts_until_read():
    live = LiveState()
    live.commit(live.plan({"type": "text", "id": "m", "props": {"content": "start"}}))
    for i in range(1000):
        assert live.append_text("m", "text", "content", f"{i:04d}")
    # 1000 pieces in 1000 // TAIL_PARTS joined chunks + the rest: never one growing string per delta
    assert live.open_pieces("m", "content") == 1 + 1000 // TAIL_PARTS + 1000 % TAIL_PARTS
    state = live.read()
    assert state["messages"]["m"]["props"]["content"] == "start" + "".join(f"{i:04d}" for i in range(1000))
    assert type(state["messages"]["m"]["props"]["content"]) is str
    assert live.open_pieces("m", "content") == 0  # folded


def test_append_text_refuses_what_it_cannot_take_and_changes_nothing():
    live = LiveState()
    assert not live.append_text("m", "text", "content", "x")  # unknown id
    live.commit(live.plan({"type": "text", "id": "m", "props": {"content": "a", "n": 1}}))
    assert not live.append_text("m", "text", "n", "x")  # not a string there
    assert not live.append_text("m", "thinking", "content", "x")  # another type
    assert live.append_text("m", "", "content", "b")  # "" never switches the type
    assert not live.append_text("m", "thinking", "content", "x")  # nor while parts are open
    live.commit(live.plan({"type": "text", "id": "m", "done": True}))
    assert not live.append_text("m", "text", "content", "x")  # done
    assert live.read()["messages"]["m"] == {"id": "m", "type": "text", "props": {"content": "ab", "n": 1},
                                            "done": True}


def test_output_state_is_plain_data_while_a_stream_is_open():
    out = Output()
    out.send({"type": "text", "id": "m", "props": {"content": ""}})
    for _ in range(600):
        out.send(append("m", "ab"))
    out.flush()
    assert out.state["messages"]["m"]["props"]["content"] == "ab" * 600
    out.send(append("m", "c"))  # streaming goes on after a read
    assert out.pending_state["messages"]["m"]["props"]["content"] == "ab" * 600 + "c"
    assert out.state["messages"]["m"]["props"]["content"] == "ab" * 600
