import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_widgets.context import append_message


def text(t, kind="text"):
    return {"type": kind, "text": t}


def test_adjacent_text_blocks_fold_with_a_blank_line():
    ctx = []
    stored = append_message(ctx, {"type": 2, "content": [text("a"), text("b"), text("c\n"), text("d")]})
    assert stored is ctx[0]
    assert ctx == [{"type": 2, "content": [text("a\n\nb\n\nc\nd")]}]


def test_thinking_folds_separately_from_text_and_rich_blocks_do_not_fold():
    ctx = []
    append_message(ctx, {"type": 3, "content": [text("t1", "thinking"), text("t2", "thinking"), text("x"),
                                                  {"type": "text", "text": "y", "cache": 1}, text("z")]})
    assert ctx[0]["content"] == [text("t1\n\nt2", "thinking"), text("x"),
                                 {"type": "text", "text": "y", "cache": 1}, text("z")]


def test_same_type_messages_merge_into_the_last():
    ctx = [{"type": 2, "content": [text("first")]}]
    first = ctx[0]
    stored = append_message(ctx, {"type": 2, "content": [text("second")]})
    assert stored is first and len(ctx) == 1
    assert first["content"] == [text("first\n\nsecond")]


def test_no_merge_across_types_metadata_tool_results_or_records():
    ctx = [{"type": 2, "content": [text("q")]}]
    append_message(ctx, {"type": 3, "content": [text("a")]})
    append_message(ctx, {"type": 3, "content": [text("b")], "name": "bot"})
    append_message(ctx, {"type": 4, "content": [text("r1")], "callId": "c"})
    append_message(ctx, {"type": 4, "content": [text("r2")], "callId": "c"})
    append_message(ctx, {"type": "checkpoint"})
    append_message(ctx, {"type": "checkpoint"})
    assert [m["type"] for m in ctx] == [2, 3, 3, 4, 4, "checkpoint", "checkpoint"]


def test_merge_false_appends():
    ctx = [{"type": 2, "content": [text("a")]}]
    append_message(ctx, {"type": 2, "content": [text("b")]}, merge=False)
    assert len(ctx) == 2


def test_empty_message_is_dropped_with_a_warning():
    ctx = []
    with pytest.warns(UserWarning, match="empty"):
        assert append_message(ctx, {"type": 2, "content": [text("")]}) is None
    assert ctx == []


def test_failed_response_without_content_is_kept():
    ctx = []
    append_message(ctx, {"type": 3, "content": [], "error": "timeout"})
    assert ctx == [{"type": 3, "content": [], "error": "timeout"}]


def test_errors_change_nothing():
    ctx = [{"type": 2, "content": [text("a")]}]
    with pytest.raises(TypeError, match=r"context\[1\]\.content\[1\]"):
        append_message(ctx, {"type": 2, "content": [text("b"), "bad"]})
    assert ctx == [{"type": 2, "content": [text("a")]}]
    with pytest.raises(TypeError):
        append_message({}, {"type": 2, "content": [text("b")]})


messages = st.lists(
    st.fixed_dictionaries({
        "type": st.sampled_from([1, 2, 3, 4]),
        "content": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking"]),
                                                   "text": st.text(max_size=12)}), max_size=4),
    }),
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(messages)
def test_merging_never_loses_text(batch):
    """Every non-empty text of every appended block survives, in order, per block sub-type."""
    expected = {"text": [], "thinking": []}
    ctx: list = []
    for message in batch:
        for block in message["content"]:
            if block["text"]:
                expected[block["type"]].append(block["text"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            append_message(ctx, {"type": message["type"], "content": [dict(b) for b in message["content"]]})
    for kind, pieces in expected.items():
        joined = "\x00".join(b["text"] for m in ctx for b in m["content"] if b["type"] == kind)
        position = 0
        for piece in pieces:  # each piece appears after the previous one
            found = joined.find(piece, position)
            assert found >= 0, (piece, joined)
            position = found + len(piece)
