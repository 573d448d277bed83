"""``ContextView``: the anywidget that mirrors a Context and an output stream into the notebook.

Thin on purpose: every decision about what to send and when lives in ``StreamProtocol``; this class
only connects it to the comm (``send``), the synced ``_snapshot`` trait, the Context's change feed,
and the front end's ``sync`` requests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import orjson
import traitlets

from agentctx_widgets.context import estimate_context_tokens, fallback_context_window

from agentctx_widgets.context.cost import Cost

from .bundle import BundleReference, ViewCode, forget_shared_bundle, use_shared_bundle
from .costs import CostTally
from .protocol_types import Header, KernelMessage, ViewState
from .saved_output import WIDGET_VIEW_MIME, SavedDisplay, saved_bundle
from .stream import StreamProtocol
from .transcript import transcript

MAX_DIAGNOSTICS = 200
"""Diagnostics the header lists at most (a runaway hook can report thousands)."""


_FORGOTTEN_ESM = "export default {};"
"""The ``_esm`` of a view closed with ``forget=True`` (a valid module, in case a front end reloads it)."""


class ContextView(anywidget.AnyWidget):
    """Shows a Context (and, as an Output sink, output messages) live in the notebook.

    ``view.write(messages)`` is the Output sink; ``view.set_pending(message)`` shows the assistant
    message being assembled; ``view.clear_output()`` forgets output messages.
    """

    _esm = ViewCode("esm")
    _css = ViewCode("css")
    """A small loader that imports the bundle from ``_bundle`` (or the whole bundle where it cannot): bundle.py."""
    _bundle = BundleReference()
    """The kernel's one FrontEndBundle model, so a notebook stores the front end once, not once per view."""
    _snapshot = traitlets.Unicode("").tag(sync=True)
    """The settled front-end state as JSON text (debounced); what a saved notebook renders from."""

    def __init__(self, context: Any = None, *, model: str | None = None, title: str | None = None, **kwargs: Any):
        self._context = context
        self._window_model = model
        self._view_title = title
        self._rate_limits: dict[str, str] = {}
        self._diagnostics: list[dict] = []
        self._costs = CostTally(context)
        self._unsubscribe = None
        self._initial_snapshot = ""
        self._ready = False
        self._saved = SavedDisplay(self._saved_bundle, settle=lambda: self._stream.settle())  # at a cell's end
        self._stream = StreamProtocol(
            self._send_message,
            self._store_snapshot,
            self._header,
            context=self._context_messages(),
        )
        super().__init__(_snapshot=self._initial_snapshot, **kwargs)
        if self._bundle is not None:
            use_shared_bundle(self.model_id)
        self._ready = True
        self.on_msg(self._on_front_end_message)
        if context is not None:
            self._unsubscribe = context.subscribe(self._stream.context_change)

    # ------------------------------------------------------------ public API

    def write(self, messages: list[dict[str, Any]]) -> None:
        """Output sink: apply normalized output messages (deltas included), in order."""
        if isinstance(messages, dict):
            messages = [messages]
        self._stream.outputs_batch(messages)

    @property
    def append_text(self) -> Callable[[str, str, str, str], None]:
        """Output sink, fast path: ``append_text(msg_id, mtype, key, text)``, one text append (``Output``
        checked its shape) onto ``msg_id``'s string prop ``key``, given as parts so no message dict is
        built per delta. The protocol's own method, so ``Output`` (which looks it up once) calls it
        directly, one call per delta fewer."""
        return self._stream.append_text

    def set_pending(self, message: dict[str, Any] | None) -> None:
        """Show ``message`` (kept by reference, copied at flush time) as the streaming reply; None hides it."""
        self._stream.set_pending(message)

    def set_rate_limits(self, limits: dict[str, str] | None) -> None:
        """Show the provider's rate-limit headers (``usage_headers``) beside the context gauge."""
        self._rate_limits = dict(limits or {})
        self._stream.header_changed()

    def set_diagnostics(self, diagnostics: list[dict]) -> None:
        """Show diagnostics (``{code, message, where, hint}``) as a badge in the header that opens a list."""
        self._diagnostics = [dict(item) for item in diagnostics][:MAX_DIAGNOSTICS]
        self._stream.header_changed()

    def set_turn_cost(self, cost: Cost | None, *, turn: Any = None) -> None:
        """Show what a turn cost (``TurnResult.cost``) beside the context gauge, with the context's cost.

        ``turn`` names the turn (the runner passes its ``TurnResult``): a call for the same turn replaces its
        running cost (after each model call of a tool round trip); another turn, or ``None``, starts a new one.
        The context's cost is its lifetime cost (``hooks.usage_log``) where that is known, else the sum of the
        turns this view was shown. ``None`` hides the turn's cost."""
        self._costs.turn(cost, turn)
        self._stream.header_changed()

    @property
    def turn_cost(self) -> Cost | None:
        """The cost of the last turn given to :meth:`set_turn_cost` (``None``: none given)."""
        return self._costs.current

    def clear_output(self) -> None:
        """Forget output messages (the context stays)."""
        self._stream.clear_output()

    @property
    def context(self) -> Any:
        """The Context this view follows (None for an output-only view)."""
        return self._context

    @context.setter
    def context(self, context: Any) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._context = context
        self._costs = CostTally(context)
        self._stream.reset_context(self._context_messages())
        if context is not None:
            self._unsubscribe = context.subscribe(self._stream.context_change)

    @property
    def model(self) -> str | None:
        """Model id used for the context-window gauge."""
        return self._window_model

    @model.setter
    def model(self, model: str | None) -> None:
        self._window_model = model
        self._stream.header_changed()

    def state(self) -> ViewState:
        """The front-end state as the kernel holds it (what every view converges to)."""
        return self._stream.state()

    def settle(self) -> None:
        """Send what is queued and store the settled state in the synced trait and in the view's
        displayed output now (e.g. before saving)."""
        self._stream.settle()
        self._saved.flush()

    def close(self, *, forget: bool = False) -> None:
        """Stop following the context, send what is left, and close the comm.

        ``forget=True`` when no display shows the view any more (a settled turn's display became its
        document): its snapshot and loader are emptied first, so a notebook saved with widget state
        (nbconvert keeps the last state of closed models too) carries no copy of either.
        """
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._stream.close()
        self._saved.flush()  # the output keeps the last state: it is all a saved notebook will have
        model_id = self.model_id if self.comm is not None else None
        if forget and model_id is not None:
            with self.hold_sync():
                self._snapshot = ""
                self._esm = _FORGOTTEN_ESM
        super().close()
        if forget and model_id is not None and self._bundle is not None:
            forget_shared_bundle(model_id)  # the last such view closes the bundle, emptied

    def __repr__(self) -> str:
        return transcript(self._stream.peek())  # no flush: showing the view sends nothing over the comm

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget, its saved snapshot, static HTML and the transcript (widget/saved_output.py)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict) and WIDGET_VIEW_MIME in data:
            data.update(self._saved_bundle(orjson.loads(orjson.dumps(self._stream.peek()))))
        return bundle

    def _ipython_display_(self) -> None:
        """``display(view)`` and a cell's last value: the bundle under a display id, kept up to date."""
        if self.comm is None:  # closed: no widget to show, the transcript only
            from IPython.display import display

            display({"text/plain": repr(self)}, raw=True)
            return
        self._saved.show(orjson.dumps(self._stream.peek()).decode())

    # ------------------------------------------------------------- plumbing

    def _context_messages(self) -> list[dict[str, Any]]:
        return [] if self._context is None else list(self._context.messages())

    def _header(self, messages: list[dict[str, Any]]) -> Header:
        ctx = self._context
        window = None
        if self._window_model:
            try:
                window = fallback_context_window(self._window_model)
            except (TypeError, ValueError):
                window = None
        header: Header = {
            "name": self._view_title or (getattr(ctx, "name", None) if ctx is not None else None) or "context",
            "count": len(messages),
            "tokens": estimate_context_tokens(messages),
            "window": window,
            "model": self._window_model,
            "rateLimits": self._rate_limits or None,
            "diagnostics": self._diagnostics or None,
        }
        return {**header, **self._costs.header(len(messages))}  # type: ignore[typeddict-item]

    def _send_message(self, message: KernelMessage) -> None:
        if self._ready and self.comm is not None:
            self.send(message)

    def _store_snapshot(self, state: ViewState) -> None:
        text = orjson.dumps(state).decode()
        if self._ready:
            self._snapshot = text
            self._saved.changed(text)
        else:
            self._initial_snapshot = text

    def _saved_bundle(self, state: dict[str, Any]) -> dict[str, Any]:
        widget_view = {"version_major": 2, "version_minor": 1, "model_id": self.model_id or ""}
        return saved_bundle(widget_view, state, transcript(state))

    def _on_front_end_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("kind") == "sync":
            self._stream.request_sync()
