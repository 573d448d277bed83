"""A displayed view's saved output is up to date when a cell ends (widget/saved_output.py).

Seen: a bare view cell (``view``), then a cell appending two messages, run by nbconvert: the saved
output's transcript said "1 message" where JupyterLab showed 3. The counts are computed alike; the
output was behind, because its last update waits for the stream to settle (0.5 s) and for the update
interval (2 s), and nbconvert / nbval stop the kernel right after the last cell.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from fakes import FakeScheduler
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from agentctx_widgets.widget.saved_output import SAVED_VIEW_MIME, SavedDisplay

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def display(settle=None):
    timers, published, hooked = FakeScheduler(now=100.0), [], []
    saved = SavedDisplay(lambda state: state, interval=2.0, schedule=timers, clock=timers.clock, settle=settle,
                         publish=lambda b, i, u: published.append((b, u)), cell_end=hooked.append)
    return saved, timers, published, hooked


def test_a_cell_end_sends_the_waiting_state_at_once_and_nothing_when_it_did_not_move() -> None:
    saved, timers, published, hooked = display()
    saved.show('{"n": 0}')
    assert hooked == [saved]  # the first display asks to hear of cell ends
    saved.changed('{"n": 1}')
    timers.advance(0.0)
    saved.changed('{"n": 2}')  # within the interval: waits for a timer
    assert published[-1] == ({"n": 1}, True)
    saved.cell_ended()
    assert published[-1] == ({"n": 2}, True)
    assert timers.advance(2.0) == 0  # the timer was cancelled: no second copy
    count = len(published)
    saved.cell_ended()  # nothing moved since: nothing sent
    saved.changed('{"n": 2}')  # the same state written again (a settle): nothing sent either
    assert timers.advance(2.0) == 1
    assert len(published) == count
    saved.show('{"n": 2}')  # displayed again: one display id, no second hook
    assert hooked == [saved]


def test_a_cell_end_settles_the_view_first() -> None:
    """The stream writes its state only once quiet for 0.5 s; at a cell's end it is asked to now."""
    calls = []
    saved, _timers, published, _hooked = display(settle=lambda: (calls.append(1), saved.changed('{"n": 3}')))
    saved.cell_ended()  # never displayed: nothing to settle
    assert calls == [] and published == []
    saved.show('{"n": 0}')
    saved.cell_ended()
    assert calls == [1] and published[-1] == ({"n": 3}, True)


BARE = [
    "from agentctx_widgets import Context, ContextView, system_message, user_message\n"
    "ctx = Context([system_message('Be terse.')], name='bare')\n"
    "view = ContextView(ctx)\n"
    "view",
    "ctx.append(user_message('Hi!'))\n"
    "ctx.append({'type': 3, 'content': [{'type': 'text', 'text': 'Hello.'}]})",
]


def test_a_bare_view_cell_executed_by_nbclient_ends_with_what_the_view_shows(tmp_path) -> None:
    nb = new_notebook(cells=[new_code_cell(source) for source in BARE], metadata={"kernelspec": KERNELSPEC})
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.validate(nb)
    [output] = nb.cells[0].outputs
    state = output["data"][SAVED_VIEW_MIME]["state"]
    assert state["header"]["count"] == 3, json.dumps(state["header"])
    assert output["data"]["text/plain"].startswith('ContextView "bare" · 3 messages')
    assert "3 messages" in output["data"]["text/html"]
