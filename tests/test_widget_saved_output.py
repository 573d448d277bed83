"""A ContextView's output bundle (widget/saved_output.py): what a saved notebook keeps of a view."""

from __future__ import annotations

import orjson
import pytest
from fakes import FakeScheduler

from agentctx_widgets import Context, ContextView
from agentctx_widgets.widget import saved_output
from agentctx_widgets.widget.saved_output import (
    SAVED_VIEW_MIME,
    WIDGET_VIEW_MIME,
    SavedDisplay,
    bounded_state,
    static_html,
)


def chat() -> Context:
    return Context([{"type": 2, "content": [{"type": "text", "text": "Hi <script>alert(1)</script> **there**"}]},
                    {"type": 3, "content": [{"type": "text", "text": "Hello <img src=x onerror=alert(2)>"}]}],
                   name="chat")


def test_bundle_holds_widget_snapshot_html_and_text() -> None:
    view = ContextView(chat(), model="gpt-4o")
    data, _metadata = view._repr_mimebundle_()
    assert set(data) == {WIDGET_VIEW_MIME, SAVED_VIEW_MIME, "text/html", "text/plain"}
    assert data[WIDGET_VIEW_MIME]["model_id"] == view.model_id
    saved = data[SAVED_VIEW_MIME]
    assert set(saved) == {"version", "state"}  # no model id: nbval compares this dict as it is
    assert saved["version"] == 1
    state = saved["state"]
    assert set(state) == {"seq", "header", "context", "pending", "outputs"}
    assert [m["content"][0]["text"] for m in state["context"]] == [
        "Hi <script>alert(1)</script> **there**", "Hello <img src=x onerror=alert(2)>"]
    assert state["header"]["name"] == "chat" and state["header"]["count"] == 2
    assert data["text/plain"].startswith('ContextView "chat" · 2 messages')
    view.close()


def test_static_html_is_sanitized_and_renders_markdown() -> None:
    view = ContextView(chat())
    html = view._repr_mimebundle_()[0]["text/html"]
    assert "<strong>there</strong>" in html
    assert "<script" not in html and "onerror" not in html.replace("onerror=alert(2)&gt;", "")
    assert "&lt;script&gt;" in html
    assert "<style" not in html  # the notebook's first settled turn document carries the stylesheet
    view.close()


def test_static_html_shows_only_the_newest_entries_of_a_long_context() -> None:
    messages = [{"type": 2, "content": [{"type": "text", "text": f"question {i}"}]} for i in range(300)]
    view = ContextView(Context(messages))
    html = static_html(view.state(), messages=50)
    assert "250 earlier messages" in html
    assert "question 249<" not in html and "question 250<" in html and "question 299<" in html
    view.close()


def test_bounded_state_keeps_the_newest_entries_that_fit() -> None:
    context = [{"type": 2, "content": [{"type": "text", "text": "x" * 1000 + str(i)}]} for i in range(100)]
    state = {"seq": 3, "header": {"count": 100}, "context": context, "pending": None,
             "outputs": {"order": [], "messages": {}}}
    assert bounded_state(state, max_bytes=10_000_000) is state
    small = bounded_state(state, max_bytes=20_000)
    assert len(orjson.dumps(small)) <= 20_000
    assert small["context"] == context[-len(small["context"]):]  # the newest, in order
    assert 10 <= len(small["context"]) < 20  # halving from 100: 50, 25, 12 entries of ~1 KB
    assert small["header"]["count"] == 100


def test_display_then_update_on_settle_with_one_display_id(monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[tuple[dict, str, bool]] = []
    monkeypatch.setattr(saved_output, "ipython_publish", lambda b, i, u: published.append((b, i, u)))
    ctx = chat()
    view = ContextView(ctx)
    view._saved._publish = lambda b, i, u: published.append((b, i, u))
    view._ipython_display_()
    assert len(published) == 1
    first, display_id, update = published[0]
    assert update is False and len(display_id) == 32
    assert len(first[SAVED_VIEW_MIME]["state"]["context"]) == 2

    ctx.append({"type": 2, "content": [{"type": "text", "text": "Settled reply."}]})
    view.settle()
    assert len(published) == 2
    bundle, same_id, update = published[1]
    assert (same_id, update) == (display_id, True)
    assert bundle[SAVED_VIEW_MIME]["state"]["context"][-1]["content"][0]["text"] == "Settled reply."
    assert "Settled reply." in bundle["text/html"] and "Settled reply." in bundle["text/plain"]
    assert bundle[WIDGET_VIEW_MIME]["model_id"] == view.model_id

    view.settle()  # nothing changed: no update
    assert len(published) == 2
    view.close()


def test_an_undisplayed_view_sends_no_update() -> None:
    published: list = []
    view = ContextView(chat())
    view._saved._publish = lambda b, i, u: published.append((b, i, u))
    view.context.append({"type": 3, "content": [{"type": "text", "text": "more"}]})
    view.settle()
    view.close()
    assert published == []


def test_updates_are_at_most_one_per_interval_and_the_last_state_always_goes() -> None:
    timers, published = FakeScheduler(now=100.0), []
    saved = SavedDisplay(lambda state: {"n": state["n"]}, interval=2.0, schedule=timers, clock=timers.clock,
                         publish=lambda b, i, u: published.append((b, u)))
    saved.show('{"n": 0}')
    for n in range(1, 6):  # five settled states in quick succession
        saved.changed(orjson.dumps({"n": n}).decode())
    assert timers.delays() == [0.0]  # the first goes at once
    timers.advance(0.0)
    assert published[-1] == ({"n": 5}, True)  # the newest state, not five updates
    timers.advance(0.5)
    saved.changed('{"n": 6}')
    saved.changed('{"n": 7}')
    assert timers.delays() == [pytest.approx(1.5)]  # waits out the interval
    assert timers.advance(1.0) == 0 and len(published) == 2
    assert timers.advance(0.5) == 1
    assert published[-1] == ({"n": 7}, True)
    assert [u for _, u in published] == [False, True, True]
    assert len(saved.updates) == 2 and all(size > 0 for size in saved.updates)


def test_flush_sends_now_and_cancels_the_timer() -> None:
    timers, published = FakeScheduler(now=100.0), []
    saved = SavedDisplay(lambda state: state, interval=2.0, schedule=timers, clock=timers.clock,
                         publish=lambda b, i, u: published.append(b))
    saved.show('{"n": 0}')
    saved.changed('{"n": 1}')
    timers.advance(0.0)
    saved.changed('{"n": 2}')  # within the interval: a timer waits
    saved.flush()
    assert published[-1] == {"n": 2}
    assert timers.advance(2.0) == 0  # the cancelled timer sends nothing twice
    assert len(published) == 3


def test_a_big_update_makes_the_next_wait_longer() -> None:
    timers, published = FakeScheduler(now=100.0), []
    saved = SavedDisplay(lambda state: state, interval=2.0, schedule=timers, clock=timers.clock,
                         publish=lambda b, i, u: published.append(b))
    saved.show('{"n": 0}')
    big = orjson.dumps({"n": 1, "text": "x" * 1_000_000}).decode()  # ~1 MB
    saved.changed(big)
    timers.advance(0.0)
    saved.changed('{"n": 2}')
    # 1,000,000 bytes at MAX_BYTES_PER_SECOND (250,000/s): 4 s, longer than the 2 s interval
    assert timers.delays() == [pytest.approx(1_000_000 / saved_output.MAX_BYTES_PER_SECOND, rel=0.01)]
