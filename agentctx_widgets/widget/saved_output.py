"""What a ContextView's cell output holds, so a saved notebook reads right when reopened.

Why: JupyterLab saves no widget state by default, so an output that is only the widget-view mime
reopens as "Error displaying widget: model not found". So a view is displayed as a bundle of

- the widget-view mime (the live widget, where the kernel has its model),
- ``SAVED_VIEW_MIME``: ``{version, state}``, the view's snapshot, which the package's JupyterLab /
  Notebook 7 extension (js/lab/) draws with the widget's own renderer and no kernel (the model id is
  the widget-view data's: a random id here would make nbval's comparison of this output fail),
- ``text/html``: the static document of the same state (``TurnPart``, as a settled turn renders) for
  viewers without the extension (GitHub, nbviewer, VS Code without widgets, nbconvert),
- ``text/plain``: the transcript,

and the display is updated (``update_display``) when the view's state settles, at most once per
``UPDATE_INTERVAL`` while a stream runs and at most ``MAX_BYTES_PER_SECOND`` on average (and at once
on ``settle()`` / ``close()``), so the saved file holds the latest state without resending a big
context per delta.

And when a cell ends (IPython's ``post_run_cell``), every displayed view whose state moved since its
last update settles and updates at once, while that cell's request is still the parent: else a cell
that changes the context and ends within the intervals leaves the output (and its transcript's "N
messages") behind what the live view shows, for good where the kernel stops next (nbconvert and nbval
stop it after the last cell: a bare view's text said "1 message" where JupyterLab showed 3).
"""

from __future__ import annotations

import threading
import time
import uuid
import weakref
from collections.abc import Callable
from typing import Any

import orjson

from .document import TurnPart
from .stream import Schedule, Timer, thread_timer

SAVED_VIEW_MIME = "application/vnd.agentctx.view+json"
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
SAVED_VIEW_FORMAT = 1
"""The version of ``SAVED_VIEW_MIME``'s data (js/lab/mime.js reads the same number)."""

UPDATE_INTERVAL = 2.0
"""Seconds between two updates of a view's saved output while its state keeps changing."""

MAX_BYTES_PER_SECOND = 250_000
"""After an update of S bytes the next waits at least S / this many seconds (a big context updates less often)."""

HTML_MESSAGES = 200
"""The static HTML shows the last this many context entries (the earlier ones as one line)."""

MAX_STATE_BYTES = 2_000_000
"""A saved snapshot larger than this keeps only its newest context entries (the header keeps the count)."""

Publish = Callable[[dict[str, Any], str, bool], None]
"""``publish(bundle, display_id, update)``: display a bundle, or update the display ``display_id``."""


def ipython_publish(bundle: dict[str, Any], display_id: str, update: bool) -> None:
    """Publish through IPython (imported here: the package imports no IPython outside the magics)."""
    from IPython.display import display, update_display

    if update:
        update_display(bundle, raw=True, display_id=display_id)
    else:
        display(bundle, raw=True, display_id=display_id)


def bounded_state(state: dict[str, Any], max_bytes: int = MAX_STATE_BYTES) -> dict[str, Any]:
    """``state`` itself when its JSON fits ``max_bytes``, else a copy keeping the newest context entries
    that fit (at least one), so one huge context cannot make every saved update megabytes."""
    size = len(orjson.dumps(state))
    context = state.get("context") or []
    if size <= max_bytes or len(context) <= 1:
        return state
    keep = len(context)
    while keep > 1:
        keep = max(1, keep // 2)
        trimmed = {**state, "context": context[-keep:]}
        if len(orjson.dumps(trimmed)) <= max_bytes:
            return trimmed
    return {**state, "context": context[-1:]}


def static_html(state: dict[str, Any], *, messages: int = HTML_MESSAGES, css: bool = False) -> str:
    """The state as the settled turn document renders it: sanitized HTML that runs no script.

    No stylesheet by default: a notebook stores it once, in its first settled turn document (its rules
    are scoped to the root class every document shares); without it the document still reads.
    """
    count = len(state.get("context") or [])
    return TurnPart.of_state(state, start=max(0, count - messages)).html(css=css)


def saved_bundle(widget_view: dict[str, Any], state: dict[str, Any], text: str) -> dict[str, Any]:
    """The output bundle of a view (module docstring)."""
    return {
        WIDGET_VIEW_MIME: widget_view,
        SAVED_VIEW_MIME: {"version": SAVED_VIEW_FORMAT, "state": bounded_state(state)},
        "text/html": static_html(state),
        "text/plain": text,
    }


CellEnd = Callable[["SavedDisplay"], None]
"""``cell_end(display)``: call ``display.cell_ended()`` whenever a cell finishes from now on."""

_DISPLAYED: weakref.WeakSet[SavedDisplay] = weakref.WeakSet()
_HOOKED_SHELL: list[Any] = []


def _at_cell_end(*_args: Any) -> None:
    for display in list(_DISPLAYED):
        display.cell_ended()


def ipython_cell_end(display: SavedDisplay) -> None:
    """Keep ``display`` up to date at the end of every cell of IPython's shell (if one runs)."""
    _DISPLAYED.add(display)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets needs IPython
        return
    shell = get_ipython()
    if shell is None or any(hooked is shell for hooked in _HOOKED_SHELL):
        return
    shell.events.register("post_run_cell", _at_cell_end)
    _HOOKED_SHELL.append(shell)


class SavedDisplay:
    """One view's display: shown with a display id, then updated when the state settles, rate-bounded.

    ``changed(state_json)`` only remembers the text and arms a timer, so the stream protocol (which
    calls it under its lock) never waits for the bundle to be built; the timer thread builds and sends it.
    """

    def __init__(self, bundle: Callable[[dict[str, Any]], dict[str, Any]], *, interval: float = UPDATE_INTERVAL,
                 publish: Publish = ipython_publish, schedule: Schedule = thread_timer,
                 clock: Callable[[], float] = time.monotonic, settle: Callable[[], None] | None = None,
                 cell_end: CellEnd = ipython_cell_end) -> None:
        self._bundle = bundle
        self._settle = settle
        """Writes the view's current state through ``changed`` now (the stream's ``settle``), at a cell's end."""
        self._cell_end = cell_end
        self._sent: str | None = None
        """The state (JSON text) the display shows: a cell's end sends nothing when it did not move."""
        self._interval = interval
        self._publish = publish
        self._schedule = schedule
        self._clock = clock
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        """Held while one update is built and sent, so two (a timer's, a flush's) never cross."""
        self.display_id: str | None = None
        self._latest: str | None = None
        """The newest state (JSON text) not yet sent."""
        self._last_update = float("-inf")
        self._gap = interval
        """The wait after the last update: ``interval``, or longer after a big one."""
        self._timer: Timer | None = None
        self.updates: list[int] = []
        """The size in bytes of each update sent (benchmarks and tests read it)."""

    def show(self, state_json: str) -> None:
        """Display the bundle of this state (again: every display of the view shares one display id)."""
        with self._lock:
            if self.display_id is None:
                self.display_id = uuid.uuid4().hex
            display_id = self.display_id
            first = self._sent is None
            self._latest = None
            self._sent = state_json
        self._publish(self._bundle(orjson.loads(state_json)), display_id, False)
        if first:
            self._cell_end(self)

    def changed(self, state_json: str) -> None:
        """The view's state settled at ``state_json``: update the display now or once the interval is over."""
        with self._lock:
            if self.display_id is None:
                return  # never displayed: nothing to keep up to date
            self._latest = state_json
            if self._timer is not None:
                return
            delay = max(0.0, self._last_update + self._gap - self._clock())
            self._timer = self._schedule(delay, self._on_timer)

    def flush(self) -> None:
        """Send the newest state now if one is waiting (``settle()``, ``close()``)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._send()

    def cell_ended(self) -> None:
        """A cell finished: settle the view and send its state now if it moved since the last update."""
        if self.display_id is None:
            return
        if self._settle is not None:
            self._settle()
        self.flush()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
        self._send()

    def _send(self) -> None:
        with self._send_lock:
            with self._lock:
                state_json, self._latest = self._latest, None
                display_id = self.display_id
                if state_json is None or display_id is None or state_json == self._sent:
                    return
                self._sent = state_json
                self._last_update = self._clock()
            bundle = self._bundle(orjson.loads(state_json))
            size = len(orjson.dumps(bundle))
            self.updates.append(size)
            self._gap = max(self._interval, size / MAX_BYTES_PER_SECOND)
            self._publish(bundle, display_id, True)
