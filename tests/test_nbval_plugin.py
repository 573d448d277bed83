"""The nbval plugin (agentctx_widgets/nbval_plugin.py) and what a regression notebook's failure shows.

Issue 18: a view cell whose output later cells update could never pass nbval, and a broken hook failed
nbval with "Missing output fields: {'stdout'}" (the cause went to stderr). These run the real nbval, in
a child pytest, on a notebook a real kernel executed, as a user would.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

import agentctx_widgets
from agentctx_widgets.nbval_plugin import VIEW_MARKER, for_comparison
from agentctx_widgets.suite.report import PROGRESS_MIME
from agentctx_widgets.widget.saved_output import SAVED_VIEW_MIME

SANITIZER = Path(agentctx_widgets.__file__).with_name("nbval_sanitize.cfg")

HOOK = """%%agentctx hooks tutor
function Create(ctx, messages) {
  ctx.Send("Let me check that...");
  return { messages };
}"""

CELLS = [
    "%load_ext agentctx_widgets\nfrom agentctx_widgets import Context, ContextView, ScriptedModel",
    'ctx = Context(name="sums")\nview = ContextView(ctx, title="sums")\nview',
    HOOK,
    'tutor = ScriptedModel(["3 + 3 = **6**."], model="gpt-4o")\n%agentctx run ctx "And 3+3?" --hooks tutor --model tutor',
    "view.settle()  # a view's output is updated when it settles; here before the kernel stops\nprint(len(ctx), 'messages')",
]


def executed_notebook(path: Path) -> Any:
    """The notebook of ``CELLS``, executed by a real kernel and saved (its outputs are nbval's reference)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    return nb


def nbval(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", path.name,
         f"--nbval-sanitize-with={SANITIZER}"],
        cwd=path.parent, capture_output=True, text=True, timeout=900,
    )


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    path = tmp_path_factory.mktemp("nbval") / "sums.ipynb"
    return path, executed_notebook(path)


def test_a_view_that_later_cells_changed_passes(notebook: tuple[Path, Any]) -> None:
    path, nb = notebook
    [saved] = [o for o in nb.cells[1].outputs if SAVED_VIEW_MIME in o.get("data", {})]
    # the saved view holds the turn a later cell ran, which nbval never sees in the view cell itself
    assert len(saved["data"][SAVED_VIEW_MIME]["state"]["context"]) == 2
    assert nb.cells[4].outputs[0]["text"] == "2 messages\n"
    done = nbval(path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout


def test_a_broken_hook_fails_with_its_hook_its_cell_line_and_the_member(notebook: tuple[Path, Any]) -> None:
    path, nb = notebook
    broken = copy.deepcopy(nb)
    broken.cells[2].source = HOOK.replace("ctx.Send(", "ctx.Sendd(")
    target = path.with_name("broken.ipynb")
    nbformat.write(broken, target)
    done = nbval(target)
    assert done.returncode == 1, done.stdout + done.stderr
    first = done.stdout.split("broken.ipynb::Cell 3", 1)[1]  # the first failure: the run cell
    assert "mismatch 'stdout'" in first
    assert ("agentctx: run: Create (%%agentctx hooks tutor, line 3): TypeError: not a function (ctx.Sendd) "
            "[HOOK_THREW]; the context is unchanged") in first
    assert "Missing output fields" not in done.stdout


def test_comparison_order_and_markers_leave_the_outputs_untouched() -> None:
    view = {"output_type": "display_data", "metadata": {},
            "data": {SAVED_VIEW_MIME: {"state": {"seq": 3}}, "text/html": "<div>", "text/plain": "view"}}
    document = {"output_type": "display_data", "metadata": {}, "data": {"text/html": "<b>", "text/plain": "doc"}}
    stream = {"output_type": "stream", "name": "stdout", "text": "turn done\n"}
    outputs = [view, document, stream]
    before = copy.deepcopy(outputs)
    compared = for_comparison(outputs)
    assert outputs == before
    assert [o["output_type"] for o in compared] == ["stream", "display_data", "display_data"]
    assert compared[1]["data"] == {SAVED_VIEW_MIME: VIEW_MARKER}
    assert list(compared[2]["data"]) == ["text/plain", "text/html"]


def test_a_suite_progress_line_is_compared_as_a_marker_not_as_the_count_it_reached() -> None:
    def progress(done: int) -> dict:
        return {"output_type": "display_data", "metadata": {},
                "data": {PROGRESS_MIME: {"done": done, "total": 4}, "text/plain": f"checking: {done}/4 cases"}}
    reference, fresh = for_comparison([progress(4)]), for_comparison([progress(0)])
    assert reference == fresh
    assert list(reference[0]["data"]) == [PROGRESS_MIME]
    assert "progress" in reference[0]["data"][PROGRESS_MIME]
