"""docs/reliability.md says why nbval prints "unhandled iopub msg: update_display_data"; this keeps it true.

If a new nbval handles ``update_display_data`` (or drops the line), the first test fails: then the page
(and perhaps our nbval plugin, which compares a view's output as a marker because nbval ignored updates)
should change.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from nbval.plugin import IPyNbCell

DOC = Path(__file__).resolve().parent.parent / "docs" / "reliability.md"


def test_nbval_still_ignores_display_updates_and_says_so() -> None:
    source = inspect.getsource(IPyNbCell.runtest)
    assert 'print("unhandled iopub msg:", msg_type)' in source
    assert "update_display_data" not in source  # no branch handles it: it falls to that print


def test_reliability_page_explains_the_line() -> None:
    text = DOC.read_text()
    assert "unhandled iopub msg: update_display_data" in text
    assert "IPyNbCell.runtest" in text and "nbval_plugin.py" in text
