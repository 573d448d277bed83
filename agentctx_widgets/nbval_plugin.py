"""A pytest plugin (pytest loads it when the package is installed) that makes nbval fit agent notebooks.

It changes nothing unless nbval collected the tests, and only how nbval *compares* a cell's outputs:

- **A view's output is compared as "a ContextView was displayed here".** A displayed ``ContextView``
  keeps its cell's output current with ``update_display`` while later cells stream into it
  (``widget/saved_output.py``), so the saved notebook holds the conversation as it ended. nbval
  compares a cell when it finishes and ignores display updates (it prints ``unhandled iopub msg:
  update_display_data``), so it would compare the view as the cell left it with the view as the whole
  notebook left it, and a regression notebook with a view cell could never pass. nbval already skips
  the widget-view mime for a like reason (its data is a random model id). What the view shows is
  pinned by the cells that change it: each settled turn's document, compared as usual. A suite run's
  progress line (``suite/report.py``) is updated in place the same way, and is compared the same way.
- **The readable outputs are compared first.** nbval reports only the first difference it finds, in
  the order the outputs came; a turn document's HTML comes before the cell's printed lines, so a failed
  turn was reported as a truncated diff of markup. Streams (stdout, stderr) and then ``text/plain``
  now come first, so the first difference shown is the ``agentctx: run: …`` line or the document's
  ``failed: …`` line. The order only changes which difference is reported: nbval compares each output
  field (stdout, a mime type) as its own list, and those lists keep their order.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from agentctx_widgets.suite.report import PROGRESS_MIME
from agentctx_widgets.widget.saved_output import SAVED_VIEW_MIME

VIEW_MARKER = "a ContextView (its content is compared in the cells that change it)"
"""What a view's output is compared as, in both the reference and the fresh run."""

UPDATED_IN_PLACE = {
    SAVED_VIEW_MIME: VIEW_MARKER,
    PROGRESS_MIME: "a suite run's progress (its report is compared where it is displayed)",
}
"""Outputs that change after their cell ran (``update_display``), and the marker each is compared as."""

READ_FIRST = ("text/plain",)
"""Mime types a person reads, moved to the front of an output's data."""


def for_comparison(outputs: list[Any]) -> list[Any]:
    """``outputs`` (nbformat output dicts) as this plugin has nbval compare them: streams first, each view
    output's (and suite progress output's) data replaced by its ``UPDATED_IN_PLACE`` marker, ``text/plain`` before the other mime types. Copies; the
    notebook's outputs are untouched."""
    compared = []
    for output in outputs:
        data = output.get("data") if hasattr(output, "get") else None
        if isinstance(data, dict):
            output = copy.copy(output)
            updated = next((mime for mime in UPDATED_IN_PLACE if mime in data), None)
            if updated is not None:
                output["data"] = {updated: UPDATED_IN_PLACE[updated]}
            else:
                first = {key: data[key] for key in READ_FIRST if key in data}
                output["data"] = {**first, **{key: value for key, value in data.items() if key not in first}}
        compared.append(output)
    is_stream = [hasattr(output, "get") and output.get("output_type") == "stream" for output in compared]
    return [o for o, s in zip(compared, is_stream) if s] + [o for o, s in zip(compared, is_stream) if not s]


def _comparing_for_people(compare: Callable[..., bool]) -> Callable[..., bool]:
    @functools.wraps(compare)
    def compare_outputs(test: list[Any], ref: list[Any], skip_compare: Any = None) -> bool:
        return compare(for_comparison(test), for_comparison(ref), skip_compare)

    return compare_outputs


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    """Wrap the output comparison of every nbval cell item (nothing happens without nbval)."""
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:
        return
    for item in items:
        if isinstance(item, IPyNbCell):
            item.compare_outputs = _comparing_for_people(item.compare_outputs)
