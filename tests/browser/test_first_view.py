"""A fresh kernel's first view, displayed in the cell that streams, shows the reply while the cell runs.

Why: custom messages sent before a view renders are lost, and the kernel, busy running the cell, does
not answer the view's ``sync`` until the cell ends. The loader keeps the batches from the model's
creation on (``js/src/loader.js`` ``initialize``), so the view starts from them. Here the model's
stream stops after its first delta until the test sees that delta in the live view: neither a
``sync`` answer nor the settled snapshot can bring it (the kernel is busy, the stream is not over),
the mid-stream catch-up write is turned off, and the stream never pauses long enough to settle. Waits are on states only.
"""

from __future__ import annotations

import pytest

from harness import write_notebook

pytestmark = pytest.mark.browser

SETUP = r'''
import os, time
import agentctx_widgets.widget.stream as _stream
from IPython.display import display
from agentctx_widgets import Context, ContextView, run_turn

_stream.CATCH_UP_INTERVAL = float("inf")  # no mid-stream trait write: only the batches can bring the text
syncs = []
_on_message = ContextView._on_front_end_message
def _count(self, widget, content, buffers):
    syncs.append(content)
    _on_message(self, widget, content, buffers)
ContextView._on_front_end_message = _count

class HeldModel:
    """Streams its first delta, then one "." per 50 ms until the file ``release`` exists (the test
    writes it). The dots keep the stream busy, so the kernel never writes the settled snapshot."""
    def stream(self, messages, *, options=None):
        yield {"type": "start", "model": "held"}
        yield {"type": "text_start", "contentIndex": 0}
        yield {"type": "text_delta", "contentIndex": 0, "delta": "Zeph" "yr"}
        text = "Zeph" "yr"
        while not os.path.exists("release"):
            time.sleep(0.05)  # a model streaming slowly until the test lets it finish
            text += "."
            yield {"type": "text_delta", "contentIndex": 0, "delta": "."}
        yield {"type": "text_delta", "contentIndex": 0, "delta": " done"}
        yield {"type": "text_end", "contentIndex": 0, "text": text + " done"}
        yield {"type": "done"}

ctx = Context()
'''

CELL = "v = ContextView(ctx); display(v); answer = run_turn(ctx, 'hi', model=HeldModel(), view=v)"

LIVE_PENDING = """() => {
  const el = document.querySelector('.agentctx-view [data-testid=actx-pending]');
  return !!el && el.textContent.includes('Zeph' + 'yr');
}"""

CELL_RUNNING = "() => !window.jupyterapp.shell.currentWidget.content.model.cells.get(1).executionCount"


def test_first_view_shows_the_first_delta_while_the_cell_still_runs(lab):
    release = lab.server.root / "release"
    release.unlink(missing_ok=True)
    write_notebook(lab.server.root, "first_view.ipynb", [SETUP, CELL])
    lab.open("first_view.ipynb")
    lab.run_cell(0)
    # started, not awaited: the command's promise ends with the cell, which waits for the test
    lab.page.evaluate("() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 1;"
                      " void window.jupyterapp.commands.execute('notebook:run-cell'); }")
    try:
        lab.wait_for(LIVE_PENDING)
        # still inside the cell (it cannot end before `release` exists): the stream held after its first delta
        assert lab.page.evaluate(CELL_RUNNING), "the cell ended before the view showed its first delta"
    finally:
        release.write_text("")
    lab.wait_for("() => { const nb = window.jupyterapp.shell.currentWidget; const c = nb.content.model.cells.get(1);"
                 " return !!c.executionCount && nb.sessionContext.session.kernel.status === 'idle'; }")
    lab.wait_for("() => { const v = document.querySelector('.agentctx-view');"
                 " return !!v && v.textContent.includes(' done') && !v.querySelector('[data-testid=actx-pending]'); }")
    # it asked the kernel for nothing: it held the kernel's state from the batches it kept
    assert lab.kernel_json("syncs") == []
    assert lab.kernel_json("answer.error") is None
    errors = [line for line in lab.console if "agentctx" in line and ("error" in line or "pageerror" in line)]
    assert errors == []
    release.unlink(missing_ok=True)
