"""What a turn cost, in a real JupyterLab (issue 23): the live view's header and the settled document, in the
light and the dark theme, with screenshots (COST_SHOTS, default /tmp/cost_shots/) to look at.

gpt-4o is priced by genai-prices at OpenAI's published $2.50 / $10.00 per million tokens: a call of
1000 prompt + 100 completion tokens costs 1000 x $0.0000025 + 100 x $0.00001 = $0.0025 + $0.001 = $0.0035.
A model no table knows reads "unpriced", never $0.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import write_notebook

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("COST_SHOTS", "/tmp/cost_shots"))
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}

SETUP = (
    "from agentctx_widgets import Context, ContextView, ScriptedModel, TurnDisplay, run_turn\n"
    "from agentctx_widgets.hooks import usage_log\n"
    f"USAGE = {USAGE!r}\n"
    "def model(name):\n"
    "    return ScriptedModel(['The answer is **42**.'], usage=USAGE, model=name)\n"
    "def live(name):\n"
    "    ctx = Context(name=f'live {name}')\n"
    "    view = ContextView(ctx, model='gpt-4o')\n"
    "    return ctx, view\n"
    "def turn(ctx, view, name):\n"
    "    result = run_turn(ctx, 'What is six times seven?', model=model(name), view=view)\n"
    "    view.set_turn_cost(result.cost, turn=result)  # what run_turn(view=) does once the runner passes it\n"
    "    return result\n"
    "def settled(name):\n"
    "    ctx = Context(name=f'settled {name}')\n"
    "    shown = TurnDisplay(ctx, model='gpt-4o').show()\n"
    "    result = run_turn(ctx, 'What is six times seven?', model=model(name), view=shown.view)\n"
    "    shown.settle(usage=result.usage, cost=result.cost)\n"
)
CELLS = [
    SETUP,
    "priced, priced_view = live('gpt-4o')\npriced_view",
    "priced_result = turn(priced, priced_view, 'gpt-4o')",
    "local, local_view = live('my-local')\nlocal_view",
    "local_result = turn(local, local_view, 'my-local')",
    "settled('gpt-4o')",
    "settled('my-local')",
]


CONTRAST = """([sel, box]) => {
  const e = [...document.querySelectorAll(sel)].find((x) => x.checkVisibility());
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => rgb(c).map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const [a, b] = [lum(getComputedStyle(e).color), lum(getComputedStyle(e.closest(box)).backgroundColor)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""
"""The contrast ratio of a cost's text on its box's background (WCAG's relative luminance)."""


def cell(index: int) -> str:
    return f".jp-Notebook .jp-Cell:nth-child({index + 1})"


def shown(lab, selector: str):
    """The visible match (a live view's cell output also holds its saved rendering, hidden)."""
    return lab.page.locator(f"{selector} >> visible=true").first


def text_of(lab, selector: str) -> str:
    return shown(lab, selector).text_content() or ""


@pytest.fixture
def ran(lab):
    write_notebook(lab.server.root, "cost.ipynb", CELLS)
    lab.server.trust(lab.server.root / "cost.ipynb")
    lab.open("cost.ipynb")
    lab.run_all()
    lab.wait_for("(sel) => [...document.querySelectorAll(sel)].filter(e => e.checkVisibility())"
                 ".map(e => e.textContent).join('|') === 'turn $0.0035|turn unpriced'", "[data-testid=actx-turn-cost]")
    lab.wait_for("() => document.querySelectorAll('.jp-OutputArea-output .actx-doc [data-testid=actx-cost]').length === 2")
    return lab


def test_the_header_and_the_document_show_the_cost_in_both_themes(ran):
    lab = ran
    priced_turn = f"{cell(1)} [data-testid=actx-turn-cost]"
    assert text_of(lab, priced_turn) == "turn $0.0035"
    title = shown(lab, priced_turn).get_attribute("title")
    assert title.startswith("$0.0035 USD: input $0.0025 · output $0.001\npriced by genai-prices")
    # the context's cost is what the usage log says its calls cost: priced once the runner tells the log the
    # call's model, "unpriced" (never $0) until then
    lifetime = lab.kernel_json("usage_log.context_cost(priced).to_dict()")
    expected = "context $0.0035" if lifetime["total"] is not None else "context unpriced"
    assert text_of(lab, f"{cell(1)} [data-testid=actx-context-cost]") == expected
    local_turn = f"{cell(3)} [data-testid=actx-turn-cost]"
    assert text_of(lab, local_turn) == "turn unpriced"
    assert "prices={'my-local'" in shown(lab, local_turn).get_attribute("title")
    # beside the gauge, in the header
    assert shown(lab, f"{cell(1)} [data-testid=actx-cost] + [data-testid=actx-gauge]").count() == 1
    docs = lab.page.locator(".jp-OutputArea-output .actx-doc [data-testid=actx-cost]")
    assert docs.all_text_contents() == ["cost $0.0035", "cost unpriced (my-local)"]
    assert "priced by genai-prices" in docs.nth(0).get_attribute("title")
    SHOTS.mkdir(parents=True, exist_ok=True)
    for theme, name in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
        lab.set_theme(theme)
        for index, what in ((1, "header_priced"), (3, "header_unpriced")):
            shown(lab, f"{cell(index)} [data-testid=actx-header]").screenshot(
                path=str(SHOTS / f"{what}_{name}.png"))
        for index, what in ((5, "document_priced"), (6, "document_unpriced")):
            lab.page.locator(f"{cell(index)} .actx-doc").first.screenshot(path=str(SHOTS / f"{what}_{name}.png"))
        for selector, box in ((priced_turn, ".actx-header"), (local_turn, ".actx-header"),
                              (f"{cell(6)} .actx-doc [data-testid=actx-cost]", ".actxd-footer")):
            ratio = lab.page.evaluate(CONTRAST, [selector, box])
            assert ratio >= 4.5, (theme, selector, ratio)  # WCAG AA for small text
