"""A real connector in a real JupyterLab: a tool round trip streams into the view (thinking, the call,
its result, the answer, the rate limits in the header), and an interrupted reply stays marked."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import write_notebook

pytestmark = pytest.mark.browser

VIEW = ".agentctx-view"
TESTS = Path(__file__).resolve().parents[1]

TOOL_TURN = r'''
import sys
sys.path.insert(0, %r)
from wire_server import Reply, WireServer, capture, sse_events
from agentctx_widgets import Context, ContextView, run_turn
from agentctx_widgets.models import AnthropicModel

def get_weather(location: str, unit: str = "celsius") -> dict:
    """Current weather for a place."""
    return {"location": location, "temperature": 18, "unit": unit}

limits = {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
          "anthropic-ratelimit-tokens-limit": "30000", "anthropic-ratelimit-tokens-remaining": "29000"}
server = WireServer([Reply(sse_events(capture("anthropic/tool_use.sse")), headers=limits, delay=0.01),
                     Reply(sse_events(capture("anthropic/text.sse")), headers=limits, delay=0.01)], prefix="")
server.__enter__()
model = AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key="test")
weather = Context(name="weather")
view = ContextView(weather, model="claude-sonnet-4-5")
display(view)
result = run_turn(weather, "Weather in Paris and Lyon?", model=model, tools=[get_weather], view=view)
server.close()
print(result.ok, [m["type"] for m in weather.messages()])
''' % str(TESTS)

INTERRUPTED = r'''
import os, signal, threading
from agentctx_widgets import Context, ContextView, ScriptedModel, run_turn
slow = ScriptedModel(["streaming slowly " * 100], chunk_size=5, delay=0.03)
story = Context(name="story")
view2 = ContextView(story)
display(view2)
threading.Timer(0.8, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    run_turn(story, "tell me a story", model=slow, view=view2)
except KeyboardInterrupt:
    print("interrupted", len(story))
'''


def rendered(lab, index: int, expression: str) -> None:
    seq = lab.kernel_json(expression)
    lab.wait_for("([sel, seq, i]) => { const el = document.querySelectorAll(sel)[i];"
                 " return !!el && Number(el.dataset.seq) >= seq; }", [VIEW, seq, index])


def test_a_tool_round_trip_and_an_interrupt_in_the_view_light_and_dark(lab):
    write_notebook(lab.server.root, "models_view.ipynb", [TOOL_TURN, INTERRUPTED])
    lab.open("models_view.ipynb")
    lab.run_all()
    rendered(lab, 0, "view.state()['seq']")
    rendered(lab, 1, "view2.state()['seq']")
    outputs = lab.page.locator(".jp-OutputArea-output").all_inner_texts()
    assert any("True [2, 3, 4, 4, 3]" in text for text in outputs), outputs
    assert any("interrupted 1" in text for text in outputs), outputs

    root = lab.page.locator(VIEW).nth(0)
    assert root.locator("[data-testid=actx-rate-limits]").inner_text() == "requests 49/50 · tokens 29,000/30,000"
    kinds = root.locator(".actx-msg").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds == ["user", "assistant", "assistant"], kinds  # each tool result is shown inside its call
    assert root.locator("[data-testid=actx-tool-result]").count() == 2
    blocks = root.locator(".actx-block").evaluate_all("els => els.map(e => e.dataset.block)")
    assert blocks.count("toolCall") == 2 and "thinking" in blocks, blocks
    assert root.locator("[data-testid=actx-pending]").count() == 0  # the answer was committed

    story = lab.page.locator(VIEW).nth(1)
    pending = story.locator("[data-testid=actx-pending]")
    assert pending.count() == 1  # the partial reply stays, marked as failed, and was not committed
    text = pending.text_content()  # (innerText of a message off screen reads empty: content-visibility)
    assert "streaming slowly" in text and "interrupted" in text
    assert pending.get_attribute("data-streaming") == "false"  # stopped: no "streaming" mark any more
    assert root.locator(".actx-tool-failed").count() == 0  # both calls got answers, not validation errors
    assert lab.kernel_json("len(story)") == 1

    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        lab.set_theme(theme)
        suffix = "light" if "Light" in theme else "dark"
        lab.screenshot(f"models-tool-round-{suffix}", f"{VIEW} >> nth=0")
        lab.screenshot(f"models-interrupted-{suffix}", f"{VIEW} >> nth=1")
