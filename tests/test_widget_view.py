"""ContextView without a front end: what it would send over its comm, its trait, and its transcript."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentctx_widgets.context import Context
from agentctx_widgets.widget import ContextView


def user(text: str) -> dict[str, Any]:
    return {"type": 2, "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"type": 3, "content": [{"type": "text", "text": text}]}


@pytest.fixture
def recorded():
    """Build a view whose comm messages are recorded (the comm is a dummy outside a kernel)."""
    views = []

    def make(*args: Any, **kwargs: Any):
        view = ContextView(*args, **kwargs)
        sent: list[dict[str, Any]] = []

        def record(data=None, buffers=None, **_):
            if data and data.get("method") == "custom":
                sent.append(orjson.loads(orjson.dumps(data["content"])))

        view.comm.send = record
        views.append(view)
        return view, sent

    yield make
    for view in views:
        view.close()


def test_transcript_is_deterministic_and_names_every_message():
    ctx = Context([user("Hello there friend"), assistant("Hi!")], name="demo")
    view = ContextView(ctx)
    view.write([{"id": "m1", "type": "text", "props": {"content": "Hi"}}])
    view.write([{"id": "m1", "type": "text", "props": {"content": " there"}, "delta": True,
                 "delta_path": "content", "delta_action": "append"}])
    # 4 words -> ceil(4 * 4 / 3) = 6 tokens
    assert repr(view) == 'ContextView "demo" · 2 messages · ~6 tokens\n[user] Hello there friend\n[assistant] Hi!\n(text m1) Hi there'
    bundle, _ = view._repr_mimebundle_()
    assert bundle["text/plain"] == repr(view)
    assert "0x" not in repr(view)
    view.close()


def test_transcript_shows_tool_calls_results_pending_and_the_window():
    ctx = Context(
        [
            user("weather?"),
            {"type": 3, "content": [{"type": "toolCall", "callId": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"type": 4, "callId": "c1", "content": [{"type": "text", "text": "sunny " * 40}]},
        ],
        name="tools",
    )
    view = ContextView(ctx, model="gpt-4o")
    view.set_pending({"type": 3, "content": [{"type": "text", "text": "It is"}]})
    lines = repr(view).splitlines()
    assert lines[0].startswith('ContextView "tools" · 3 messages · ~') and lines[0].endswith(" of 128,000")
    assert lines[1] == "[user] weather?"
    assert lines[2] == '[tool_call get_weather] {"city":"Paris"}'
    assert lines[3].startswith("[tool_result c1] sunny sunny") and lines[3].endswith("…") and len(lines[3]) == 100
    assert lines[4] == "… [assistant] It is"
    view.close()


def test_context_changes_reach_the_front_end_and_unsubscribe_on_close(recorded):
    ctx = Context([user("a")], name="c")
    view, sent = recorded(ctx)
    view._stream.flush()
    ctx.append(assistant("b"))
    view._stream.flush()
    ops = [op for m in sent if m["kind"] == "batch" for op in m["ops"]]
    assert {"op": "ctx", "action": "added", "index": 1, "message": assistant("b")} in ops
    header = [op["header"] for op in ops if op["op"] == "header"][-1]
    assert header["count"] == 2 and header["name"] == "c"
    view.close()
    count = len(sent)
    ctx.append(user("after close"))
    assert len(sent) == count
    assert len(view._stream.context) == 2


def test_sync_request_from_the_front_end_is_answered_with_a_snapshot(recorded):
    view, sent = recorded(Context([user("hi")]))
    view.write([{"id": "x", "type": "loading", "props": {"message": "wait"}}])
    view._handle_custom_msg({"kind": "sync", "seq": 0}, [])
    view._stream.flush()
    snapshots = [m for m in sent if m["kind"] == "snapshot"]
    assert snapshots, sent
    state = snapshots[-1]["state"]
    assert state["context"] == [user("hi")]
    assert state["outputs"]["messages"]["x"]["props"] == {"message": "wait"}
    assert snapshots[-1]["seq"] == state["seq"] == view._stream.seq


def test_snapshot_trait_holds_the_settled_state_from_the_start():
    view = ContextView(Context([user("hi")], name="n"), title="Shown")
    assert view._snapshot.startswith('{"seq":0,')  # the front end peeks at seq without parsing
    state = orjson.loads(view._snapshot)
    assert state["seq"] == 0
    assert state["header"]["name"] == "Shown"
    assert state["context"] == [user("hi")]
    view.write([{"id": "m", "type": "text", "props": {"content": "x"}}])
    view.close()  # close writes the final settled state
    assert orjson.loads(view._snapshot)["outputs"]["order"] == ["m"]


def test_clear_output_keeps_the_context():
    view = ContextView(Context([user("hi")]))
    view.write([{"id": "m", "type": "text", "props": {"content": "x"}}])
    view.clear_output()
    state = view.state()
    assert state["outputs"] == {"order": [], "messages": {}}
    assert len(state["context"]) == 1
    view.close()


def test_a_view_without_context_is_an_output_sink():
    view = ContextView(title="out")
    view.write({"type": "error", "id": "e", "props": {"message": "boom", "code": "E1"}})
    assert repr(view) == 'ContextView "out" · 0 messages · ~0 tokens\n(error e) E1 boom'
    view.close()


def test_repr_of_a_view_sends_no_comm_message():
    """Issue 14: repr(view) flushed the stream (a comm message per repr, e.g. each time a cell shows it)."""
    from agentctx_widgets import Context, ContextView, Output

    view = ContextView(Context([{"type": 2, "content": [{"type": "text", "text": "hi"}]}]))
    sent: list = []
    view._stream._send = sent.append
    out = Output([view])
    out.send({"type": "text", "props": {"content": "a"}, "id": "m"})
    out.flush()
    sends = view._stream.sends
    for _ in range(3):
        text = repr(view)
    assert view._stream.sends == sends and "(text m) a" in text


# ---- cost (issue 23) -------------------------------------------------------------------------------

GPT_4O = {"prompt_tokens": 1000, "completion_tokens": 100}
"""gpt-4o at $2.50 / $10.00 per million (OpenAI's price page): $0.0025 + $0.001 = $0.0035 a call."""


def test_the_header_shows_a_turns_cost_and_the_contexts_as_decimal_strings(monkeypatch):
    from agentctx_widgets.context.cost import cost
    from agentctx_widgets.hooks import usage_log

    monkeypatch.setattr(usage_log, "context_cost", lambda context: None)  # no lifetime known: the turns seen
    view = ContextView(Context(name="c"), model="gpt-4o")
    header = view.state()["header"]
    assert "turnCost" not in header and "contextCost" not in header  # nothing until a turn says
    class Turn:  # what the runner passes as the turn: its TurnResult
        pass

    first, second = Turn(), Turn()
    view.set_turn_cost(cost(GPT_4O, "gpt-4o"), turn=first)
    view.set_turn_cost(cost(GPT_4O, "gpt-4o") + cost(GPT_4O, "gpt-4o"), turn=first)  # the same turn, a second call
    header = view.state()["header"]
    assert header["turnCost"]["total"] == "0.007" and header["contextCost"]["total"] == "0.007"
    view.set_turn_cost(cost(GPT_4O, "my-local"), turn=second)  # a new turn on a model no table knows
    header = view.state()["header"]
    assert header["turnCost"]["total"] is None and header["turnCost"]["unpriced"] == ["my-local"]
    assert header["contextCost"]["total"] == "0.007" and header["contextCost"]["unpriced"] == ["my-local"]
    assert view.turn_cost.unpriced == ("my-local",)
    assert 'turn unpriced (my-local) · context $0.007 + unpriced (my-local)' in repr(view)
    with pytest.raises(TypeError, match="expected a Cost"):
        view.set_turn_cost(0.0035)
    view.close()


def test_the_contexts_cost_is_its_lifetime_cost_from_the_usage_log(monkeypatch):
    from agentctx_widgets.context.cost import cost
    from agentctx_widgets.hooks import usage_log

    ctx = Context(name="c")
    lifetime = {"cost": cost(GPT_4O, "gpt-4o")}
    looked = []

    def context_cost(context):
        looked.append(context)
        return lifetime["cost"]

    monkeypatch.setattr(usage_log, "context_cost", context_cost)
    view = ContextView(ctx)
    assert view.state()["header"]["contextCost"]["total"] == "0.0035"
    calls = len(looked)
    view.state(), view.state()
    assert len(looked) == calls  # looked up again only when the context or the turn's cost changed
    lifetime["cost"] = cost(GPT_4O, "gpt-4o") + cost(GPT_4O, "gpt-4o") + cost(GPT_4O, "gpt-4o")
    view.set_turn_cost(cost(GPT_4O, "gpt-4o"))
    header = view.state()["header"]
    assert header["turnCost"]["total"] == "0.0035" and header["contextCost"]["total"] == "0.0105"
    view.close()


def test_run_turn_into_a_view_shows_the_turns_cost_after_each_model_call():
    """The runner gives the view the turn's running cost (hooks/runner.py ``_count``): a tool round trip on
    gpt-4o (1000 in / 100 out a call: $0.0025 + $0.001 = $0.0035, by OpenAI's $2.50 / $10.00 per million)
    reads $0.007 at the end, and the context's lifetime cost (its ledger) the same."""
    from agentctx_widgets import ScriptedModel, run_turn

    def lookup(city: str) -> str:
        """The weather in a city."""
        return f"21°C in {city}"

    ctx = Context(name="priced")
    view = ContextView(ctx)
    call = {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"city": "Oslo"}}]}
    result = run_turn(ctx, "weather?", model=ScriptedModel([call, "21°C"], usage=GPT_4O, model="gpt-4o"),
                      tools=[lookup], view=view)
    header = view.state()["header"]
    assert result.ok and view.turn_cost == result.cost
    assert header["turnCost"]["total"] == "0.007" and header["contextCost"]["total"] == "0.007"
    assert "turn $0.007 · context $0.007" in repr(view)
    view.close()


def test_a_yao_request_into_a_view_shows_its_cost_too():
    from agentctx_widgets import ScriptedModel, run_turn

    class Assistant:
        id = "tests.priced"
        prompts = [{"role": "system", "content": "be brief"}]

    ctx = Context(name="yao-priced")
    view = ContextView(ctx)
    result = run_turn(ctx, "hi", assistant=Assistant(), model=ScriptedModel(["Hi"], usage=GPT_4O, model="gpt-4o"),
                      view=view)
    assert result.ok and view.state()["header"]["turnCost"]["total"] == "0.0035"  # $0.0025 + $0.001, by hand
    view.close()
