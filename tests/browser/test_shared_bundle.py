"""Several views in one notebook share one FrontEndBundle model and still render: live in JupyterLab and
Notebook 7, and from saved widget state with no kernel holding any widget."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

from harness import write_notebook
from test_notebook7 import ALL_RAN, KERNEL_READY, RECORD_KERNEL_STATUS

pytestmark = pytest.mark.browser

VIEW = ".agentctx-view"
QUESTIONS = ["Question zero?", "Question one?", "Question two?"]

CELLS = [
    "from agentctx_widgets import Context, ContextView\n"
    + "\n".join(f"ctx{i} = Context([{{'type': 2, 'content': [{{'type': 'text', 'text': {q!r}}}]}},"
                f" {{'type': 3, 'content': [{{'type': 'text', 'text': 'Answer **{i}**.'}}]}}], name='view {i}')"
                for i, q in enumerate(QUESTIONS)),
    "first = ContextView(ctx0)\nfirst",
    "ContextView(ctx1)",
    "ContextView(ctx2)",
    "first",  # the same view displayed a second time
]

# Every displayed view has drawn its state (data-seq is set after the first render) and says which
# question it shows; how many <style> elements the loader injected; any load error text.
RENDERED = """(sel) => {
  const views = [...document.querySelectorAll(sel)];
  if (views.length !== 4 || views.some(v => v.dataset.seq === undefined)) return null;
  return {
    questions: views.map(v => v.querySelector('.actx-msg[data-kind=user]')?.textContent ?? ''),
    bold: views.map(v => v.querySelector('.actx-msg strong')?.textContent ?? ''),
    styles: document.querySelectorAll('style[data-agentctx-bundle]').length,
    errors: views.filter(v => v.textContent.includes('could not load the front end')).length,
  };
}"""


def check_rendered(result: dict) -> None:
    assert [next(q for q in QUESTIONS if q in text) for text in result["questions"]] == [
        QUESTIONS[0], QUESTIONS[1], QUESTIONS[2], QUESTIONS[0]]
    assert result["bold"] == ["0", "1", "2", "0"]
    assert (result["styles"], result["errors"]) == (1, 0)


def test_three_views_share_the_bundle_in_jupyterlab(lab):
    write_notebook(lab.server.root, "shared.ipynb", CELLS)
    lab.open("shared.ipynb")
    lab.run_all()
    check_rendered(lab.wait_for(RENDERED, VIEW))
    # the view's own state carries the loader and a reference, not the bundle
    assert lab.kernel_json("[first.get_state()['_esm'] != first._bundle.esm,"
                           " first.get_state()['_bundle'] == 'IPY_MODEL_' + first._bundle.model_id]") == [True, True]
    lab.screenshot("shared_bundle_lab", ".jp-Notebook")


def test_three_views_share_the_bundle_in_notebook_7(lab):
    write_notebook(lab.server.root, "shared7.ipynb", CELLS)
    page = lab.page
    page.add_init_script(RECORD_KERNEL_STATUS)
    page.goto(f"{lab.server.base_url}/notebooks/shared7.ipynb?token={lab.server.token}")
    page.wait_for_function(KERNEL_READY)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    page.wait_for_function(ALL_RAN, arg=len(CELLS), timeout=600_000)
    check_rendered(lab.wait_for(RENDERED, VIEW))
    lab.screenshot("shared_bundle_notebook7")


def saved_notebook(root):
    """Execute the notebook the way nbconvert --execute does (widget state stored) and save it."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                       "language": "python"}
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(root)}}).execute()
    path = root / "shared_saved.ipynb"
    nbformat.write(notebook, path)
    return path


def test_the_saved_notebook_renders_every_view_without_a_kernel(lab):
    path = saved_notebook(lab.server.root)
    lab.server.trust(path)
    lab.open("shared_saved.ipynb")
    check_rendered(lab.wait_for(RENDERED, VIEW))
    # the freshly started kernel knows nothing of these widgets: the page drew them from the saved state
    assert lab.kernel_json("len(__import__('ipywidgets').widgets.widget._instances)") == 0
    lab.screenshot("shared_bundle_saved_no_kernel", ".jp-Notebook")
