"""Tool calls per reply are capped for every model (issue 21), not only the SDK connectors: a replayed
recording with 1,000 tool calls ran all 1,000. The turn (``hooks/turn_core.stream_reply``, shared by the
seed runner and Yao's request) counts a reply's tool calls against ``models.limits.MAX_TOOL_CALLS``.
"""

from __future__ import annotations

import functools

import orjson
import pytest

import agentctx_widgets
from agentctx_widgets import Context, ScriptedModel
from agentctx_widgets.models import limits
from agentctx_widgets.models.replay import ReplayModel, request_key, request_of

run_unchecked = functools.partial(agentctx_widgets.run_turn, check=False)

pytestmark = pytest.mark.timeout(120)

CAP_TEXT = f"more than {limits.MAX_TOOL_CALLS} tool calls (models.limits.MAX_TOOL_CALLS"


def calls(n: int) -> list[dict]:
    return [{"id": f"call_{i}", "name": "f", "arguments": {}} for i in range(n)]


def tool_events(n: int) -> list[dict]:
    events: list[dict] = []
    for i in range(n):
        events.append({"type": "tool_call_start", "contentIndex": i, "callId": f"call_{i}", "name": "f"})
        events.append({"type": "tool_call_end", "contentIndex": i, "arguments": {}})
    return [*events, {"type": "done", "stopReason": "toolUse"}]


class _Counting:
    """A tool that counts its runs."""

    def __init__(self) -> None:
        self.ran = 0

    def tool(self):
        def f() -> str:
            """Does nothing."""
            self.ran += 1
            return "ok"
        return f


class _Capture:
    """A custom model that keeps the first request it is sent and answers with text."""

    def __init__(self) -> None:
        self.seen: list[tuple[list[dict], dict | None]] = []

    def stream(self, messages, *, options=None):
        self.seen.append((orjson.loads(orjson.dumps(messages)), orjson.loads(orjson.dumps(options))))
        return iter([{"type": "text_delta", "contentIndex": 0, "delta": "ok"}, {"type": "done"}])


def test_a_recording_with_1000_tool_calls_runs_none_of_them(tmp_path) -> None:
    counting = _Counting()
    capture = _Capture()  # the request this turn sends, so the recording answers exactly it
    run_unchecked(Context(), "hi", model=capture, tools=[counting.tool()])
    messages, options = capture.seen[0]
    request = request_of(messages, options)
    path = tmp_path / "rec.jsonl"
    path.write_text(orjson.dumps({"key": request_key(request), "model": None, "request": request,
                                  "events": tool_events(1000)}).decode() + "\n")
    context = Context()
    result = run_unchecked(context, "hi", model=ReplayModel(path), tools=[counting.tool()])
    assert result.error is not None and result.error["code"] == "RESPONSE_TOO_LARGE", result.error
    assert CAP_TEXT in result.error["message"] and "ReplayModel" in result.error["message"]
    assert counting.ran == 0
    assert [m["type"] for m in context.messages()] == [2]  # the user's message; nothing of the reply


def test_a_scripted_model_past_the_cap_is_stopped_and_at_the_cap_runs() -> None:
    counting = _Counting()
    context = Context()
    result = run_unchecked(context, "hi", model=ScriptedModel({"tool_calls": calls(1000)}), tools=[counting.tool()])
    assert result.error["code"] == "RESPONSE_TOO_LARGE" and CAP_TEXT in result.error["message"]
    assert "ScriptedModel" in result.error["message"]
    assert counting.ran == 0 and [m["type"] for m in context.messages()] == [2]

    at_cap = ScriptedModel([{"tool_calls": calls(limits.MAX_TOOL_CALLS)}, "done"])
    result = run_unchecked(Context(), "hi", model=at_cap, tools=[counting.tool()])
    assert result.error is None and counting.ran == limits.MAX_TOOL_CALLS


def test_the_cap_is_read_at_each_reply_and_counts_a_snapshot_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_TOOL_CALLS", 2)
    counting = _Counting()
    result = run_unchecked(Context(), "hi", model=ScriptedModel({"tool_calls": calls(3)}), tools=[counting.tool()])
    assert result.error["code"] == "RESPONSE_TOO_LARGE" and "more than 2 tool calls" in result.error["message"]

    snapshot = {"type": 3, "content": [{"type": "toolCall", "callId": f"c{i}", "name": "f", "arguments": {}}
                                       for i in range(3)]}

    class Snapshotting:  # a custom model whose done event carries the whole message, no tool_call_* events
        def stream(self, messages, *, options=None):
            return iter([{"type": "done", "message": snapshot, "stopReason": "toolUse"}])

    result = run_unchecked(Context(), "hi", model=Snapshotting(), tools=[counting.tool()])
    assert result.error["code"] == "RESPONSE_TOO_LARGE" and "Snapshotting" in result.error["message"]
    assert counting.ran == 0
