"""The tour notebook, run top to bottom in JupyterLab: no cell fails, the views and the usage table show.

Expected values come from reading notebooks/tour.ipynb (the conversation it builds), not from its stored
outputs.
"""

from __future__ import annotations

import shutil

import pytest

from harness import REPO

pytestmark = pytest.mark.browser

VIEW = ".agentctx-view"
USAGE = ".agentctx-usage"

CELL_OUTPUTS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  const result = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    result.push({index: i, count: cell.executionCount, outputs: cell.outputs.toJSON()});
  }
  return result;
}"""

SEQ_AT_LEAST = """([sel, seq]) => { const el = document.querySelector(sel);
  return !!el && el.dataset.seq !== undefined && Number(el.dataset.seq) >= seq; }"""


def test_tour_runs_clean_and_renders_its_views_and_usage(lab):
    shutil.copy(REPO / "notebooks" / "tour.ipynb", lab.server.root / "tour.ipynb")
    lab.open("tour.ipynb")
    lab.run_all()

    cells = lab.page.evaluate(CELL_OUTPUTS)
    assert len(cells) == 9, [c["index"] for c in cells]  # the tour's code cells
    for cell in cells:
        assert cell["count"], f"cell {cell['index']} did not run"
        errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
        assert not errors, (cell["index"], [(e["ename"], e["evalue"]) for e in errors])

    # the first view (cell "view = ContextView(ctx, ..., title='tour')") follows ctx to the end
    seq = lab.kernel_json("view.state()['seq']")
    lab.wait_for(SEQ_AT_LEAST, [VIEW, seq])
    assert lab.page.locator(VIEW).count() == 1  # the view; the `%agentctx run` cell keeps its document
    turn = lab.page.locator(".jp-OutputArea-output .actx-doc")
    assert turn.count() == 1
    assert "And 3+3?" in turn.text_content() and "4 earlier messages" not in turn.text_content()
    assert turn.locator(".actxd-earlier").text_content() == "3 earlier messages"
    first = lab.page.locator(VIEW).first
    assert first.locator("[data-testid=actx-header-name]").text_content() == "tour"
    assert first.locator("[data-testid=actx-header-count]").text_content() == "5 messages"
    assert first.locator("[data-testid=actx-header-model]").text_content() == "gpt-4o"
    # the context renders in slices (16 messages a task) after the batch that brought them: wait for all five
    # (at least five: a sixth, e.g. a message drawn twice, then fails the whole-transcript check below by
    # showing what is there, instead of waiting for a count it can never reach)
    lab.wait_for("(sel) => document.querySelector(sel).querySelectorAll('.actx-msg').length >= 5", VIEW)
    transcript = first.locator(".actx-msg").evaluate_all("els => els.map(e => [e.dataset.kind, e.textContent])")
    kinds = [kind for kind, _ in transcript]
    assert kinds == ["system", "user", "assistant", "user", "assistant"], transcript
    text = "\n".join(body for _, body in transcript)
    for needle in ["You are a terse arithmetic tutor.", "Hi!", "Can you help me with sums?", "What is 2+2?",
                   "And 3+3?"]:
        assert needle in text, (needle, text)
    # the scripted replies are Markdown: bold renders as <strong>, no raw asterisks
    assert first.locator(".actx-msg[data-kind=assistant] strong", has_text="4").count() == 1
    assert first.locator(".actx-msg[data-kind=assistant] strong", has_text="6").count() == 1
    assert "**" not in text
    # the Output messages the notebook sent to this view
    greeting = first.locator(".actx-out[data-output-id=greeting]")
    assert greeting.text_content().strip() == "Ready when you are."

    usage = lab.page.locator(USAGE)
    assert usage.count() == 1
    assert "Context usage, model gpt-4o" in usage.text_content()
    rows = usage.locator("table").first.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    # estimates by hand: ceil(words * 4 / 3); "Hi! Can you help me with sums? What is 2+2?" is 10 words
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("0", "system", "8"), ("1", "user", "14"), ("2", "assistant", "7"), ("3", "user", "3"), ("4", "assistant", "7")]
    # the cost of the context's turns, one row a model: the scripted model has no price (never $0), the
    # gpt-4o turn's usage was estimated, so its cost is marked as an estimate
    costs = usage.locator(".agentctx-usage-cost tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    assert [row[:3] for row in costs] == [["scripted", "1", "29"], ["gpt-4o", "1", "38"]]
    assert costs[0][3] == "unpriced" and costs[1][3].startswith("≈$") and "(estimated)" in costs[1][3]

    for theme, name in [("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")]:
        lab.set_theme(theme)
        first.scroll_into_view_if_needed()
        lab.screenshot(f"tour_{name}_view", VIEW)
        usage.scroll_into_view_if_needed()
        lab.screenshot(f"tour_{name}_usage", USAGE)
        turn.scroll_into_view_if_needed()
        lab.screenshot(f"tour_{name}_turn", ".jp-OutputArea-output .actx-doc")
        lab.screenshot(f"tour_{name}_page")
    lab.set_theme("JupyterLab Light")
    assert not [line for line in lab.console if line.startswith("pageerror")], lab.console
