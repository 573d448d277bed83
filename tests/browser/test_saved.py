"""A saved notebook with widget state shows the transcript although no kernel holds the widget."""

from __future__ import annotations

import pytest
from ipywidgets.embed import dependency_state

from agentctx_widgets import Context, ContextView
from harness import write_notebook

pytestmark = pytest.mark.browser

VIEW = ".agentctx-view"


def saved_notebook(root):
    """Build the view here (no kernel at all), settle it, and save its widget state in the notebook."""
    ctx = Context([{"type": 2, "content": [{"type": "text", "text": "What is saved?"}]},
                   {"type": 3, "content": [{"type": "text", "text": "The **settled** transcript."}]}], name="saved")
    view = ContextView(ctx)
    view.write([{"id": "s1", "type": "text", "props": {"content": "streamed"}}])
    view.write([{"id": "s1", "type": "text", "props": {"content": " and kept"}, "delta": True,
                 "delta_path": "content", "delta_action": "append"}])
    view.settle()
    seq = view.state()["seq"]
    state = {"version_major": 2, "version_minor": 0, "state": dependency_state([view], drop_defaults=False)}
    bundle, _ = view._repr_mimebundle_()
    output = {"output_type": "display_data", "data": bundle, "metadata": {}}
    path = write_notebook(root, "saved.ipynb", ["# the cell that made the view (not run)"],
                          metadata={"widgets": {"application/vnd.jupyter.widget-state+json": state}},
                          outputs={0: [output]})
    view.close()
    return path, seq


def test_saved_widget_state_renders_without_the_kernel(lab):
    path, seq = saved_notebook(lab.server.root)
    lab.server.trust(path)
    lab.open("saved.ipynb")
    lab.wait_for("([sel, seq]) => { const el = document.querySelector(sel);"
                 " return !!el && Number(el.dataset.seq) === seq; }", [VIEW, seq])
    root = lab.page.locator(VIEW)
    assert "What is saved?" in root.text_content()
    assert root.locator("strong", has_text="settled").count() == 1
    assert "streamed and kept" in root.locator(".actx-out[data-output-id=s1]").text_content()
    # the freshly started kernel knows nothing of this widget: the page drew it from the saved state
    assert lab.kernel_json("len(__import__('ipywidgets').widgets.widget._instances)") == 0
    lab.screenshot("saved_no_kernel", VIEW)
