"""``TurnDisplay``: one cell output that is a live ``ContextView`` while a turn streams, and the turn's
``TurnDocument`` once it settles.

Why: the widget is for watching the stream; what stays in the notebook must read without a kernel or
JavaScript, and must not store the front-end bundle once per turn. So the view is displayed (the widget
alone, no text form) with a display id; when the turn ends that display is updated to nothing (nbclient
and every Jupyter front end apply ``update_display_data``), the static document is displayed after it
as a new output (nbval, which ignores display updates, sees it too), and the view's comm is closed
with its state emptied. Several contexts (one hook set in JavaScript, one in Python) sit side by side.

The document's stylesheet goes into the first settled document of a kernel session (one copy styles
every document on the page: the rules are scoped to one class) and again whenever the cell that held
it runs again (JupyterLab and Notebook 7 send the cell's id with each execution; nbclient, which runs
each cell once, does not); outside a kernel every document carries it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agentctx_widgets.hooks.errors import failure_report

from agentctx_widgets.context.cost import Cost

from .document import TurnDocument, TurnPart
from .view import ContextView

__all__ = ["TurnDisplay"]

_stylesheet_lock = threading.Lock()
_stylesheet_cell: list[str | None] = [None]
"""The id of the cell whose output carries the documents' stylesheet in this kernel (None: none yet)."""
_NO_CELL_ID = "<a cell of unknown id>"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _kernel() -> Any:
    """The running ipykernel (None in a plain script, a terminal IPython, or marimo)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def _current_cell() -> str | None:
    kernel = _kernel()
    if kernel is None:
        return None
    try:
        parent = kernel.get_parent("shell")
    except TypeError:  # older ipykernel: get_parent() takes no channel
        parent = kernel.get_parent()
    metadata = (parent or {}).get("metadata") or {}
    cell = metadata.get("cellId") or metadata.get("cell_id")
    return cell if isinstance(cell, str) and cell else None


def _claim_stylesheet() -> bool:
    """Should the document settled now carry the stylesheet? (see the module docstring)"""
    if _kernel() is None:
        return True
    cell = _current_cell()
    with _stylesheet_lock:
        holder = _stylesheet_cell[0]
        if holder is None or (cell is not None and holder == cell):
            _stylesheet_cell[0] = cell or _NO_CELL_ID
            return True
        return False


class TurnDisplay:
    """A cell output for a turn: live views while it streams, their ``TurnDocument`` after.

    ``TurnDisplay(ctx)`` makes a ``ContextView`` per context (``.view`` is the first, ``.views`` all);
    ``show()`` displays them (side by side when there are several); ``settle(usage=...)`` replaces the
    display with the document of everything added to each context since the display was made (earlier
    messages as one line) and closes the views. As a context manager it shows on entry and settles on
    exit, even when the turn raised. Outside a notebook kernel nothing is displayed; ``settle`` still
    returns the document.
    """

    def __init__(self, *contexts: Any, titles: Sequence[str | None] | None = None, model: str | None = None,
                 start: int | Sequence[int] | None = None) -> None:
        if not contexts:
            raise TypeError("TurnDisplay: give at least one context")
        titles = list(titles) if titles is not None else [None] * len(contexts)
        if len(titles) != len(contexts):
            raise ValueError(f"TurnDisplay: {len(contexts)} contexts but {len(titles)} titles")
        starts = [start] * len(contexts) if start is None or isinstance(start, int) else list(start)
        if len(starts) != len(contexts):
            raise ValueError(f"TurnDisplay: {len(contexts)} contexts but {len(starts)} starts")
        self.starts = [len(ctx) if first is None else first for ctx, first in zip(contexts, starts, strict=True)]
        # the entry before each start, to notice a turn's input merged into it (seed 001's append)
        self._before = [orjson.loads(orjson.dumps(ctx.at(first - 1))) if first else None
                        for ctx, first in zip(contexts, self.starts, strict=True)]
        self._model = model
        many = len(contexts) > 1
        self.views = [self._view(ctx, title, model, many) for ctx, title in zip(contexts, titles, strict=True)]
        self.document: TurnDocument | None = None
        """The settled document (None until ``settle``)."""
        self._handle: Any = None
        self._box: Any = None

    @property
    def view(self) -> ContextView:
        return self.views[0]

    def show(self) -> TurnDisplay:
        """Display the live views in the current cell (once; nothing outside a notebook kernel)."""
        if self._handle is not None or self.document is not None or _kernel() is None:
            return self
        from IPython.display import display

        shown: Any = self.view
        if len(self.views) > 1:
            import ipywidgets

            shown = self._box = ipywidgets.HBox(self.views, layout=ipywidgets.Layout(width="100%"))
        bundle = shown._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        # the widget only: no text/plain of the live view, so a tool that does not apply display
        # updates (nbval) keeps nothing of it to compare, as a notebook keeps nothing of it either
        self._handle = display({WIDGET_VIEW: data[WIDGET_VIEW]}, raw=True, display_id=True)
        return self

    def settle(self, *, usage: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
               error: Any = None, diagnostics: Sequence[Mapping[str, Any]] = (),
               cost: Cost | Sequence[Cost | None] | None = None) -> TurnDocument:
        """Replace the display with the turn's document and close the views; returns the document.

        ``usage`` is the turn's usage (``TurnResult.usage``), or one per context; ``cost`` likewise
        (``TurnResult.cost``; default: the cost a turn run with ``view=`` gave the view,
        ``ContextView.turn_cost``). ``error`` (a failed
        turn's ``result.error``) and ``diagnostics`` are written under the first part, in its HTML and in
        the text nbval compares. Calling it again returns the same document.
        """
        if self.document is not None:
            return self.document
        usages = self._each(usage, "usages")
        costs = self._each(cost, "costs")
        parts = []
        for view, start, before, used, spent in zip(self.views, self.starts, self._before, usages, costs, strict=True):
            state = view.state()
            context = state["context"]
            if start and start <= len(context) and context[start - 1] != before:
                start -= 1  # the turn's input merged into the entry before it: show that entry too
            first = not parts
            parts.append(TurnPart.of_state(state, start=start, usage=used, model=self._model,
                                           failure=failure_report(error) if first and error else None,
                                           diagnostics=diagnostics if first else (),
                                           cost=spent if spent is not None else view.turn_cost))
        self.document = TurnDocument(parts, css=_claim_stylesheet())
        if self._handle is not None:
            from IPython.display import display

            self._handle.update({}, raw=True)  # the live view's output empties (every front end, nbclient)
            display(self.document)  # and the document follows it: a new output even nbval sees
        for view in self.views:
            view.close(forget=True)  # the document replaced it: nothing of it needs saving
        if self._box is not None:
            self._box.close()
        return self.document

    def _each(self, value: Any, what: str) -> list:
        """``value`` once per view: a sequence (a list or tuple, one per context) or one value for all."""
        values = list(value) if isinstance(value, (list, tuple)) else [value] * len(self.views)
        if len(values) != len(self.views):
            raise ValueError(f"TurnDisplay.settle: {len(self.views)} views but {len(values)} {what}")
        return values

    def __enter__(self) -> TurnDisplay:
        return self.show()

    def __exit__(self, *exc: Any) -> None:
        self.settle()

    @staticmethod
    def _view(context: Any, title: str | None, model: str | None, many: bool) -> ContextView:
        if not many:
            return ContextView(context, title=title, model=model)
        import ipywidgets

        return ContextView(context, title=title, model=model, layout=ipywidgets.Layout(flex="1 1 0", min_width="0"))
