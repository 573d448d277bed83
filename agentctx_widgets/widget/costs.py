"""What the view's header says a turn and its context cost (issue 23), kept apart from the view.

The turn's cost is what the runner gave the view (``ContextView.set_turn_cost``: ``TurnResult.cost``,
again after each model call of a tool round trip). The context's cost is its lifetime cost as
``hooks.usage_log.context_cost`` keeps it (every turn ``run_turn`` ran on that context, with or without
this view); where that is not known (no context, no such function, nothing recorded) it is the sum of the
turns this view was shown. The lifetime cost is looked up again only when the context's length or the
turn's cost changed, not once per batch of a streaming reply.

The header carries each as ``html.cost.cost_json`` (amounts as decimal strings); the front end formats them.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from agentctx_widgets.context.cost import Cost
from agentctx_widgets.html.cost import cost_json

__all__ = ["CostTally"]


def _lifetime(context: Any) -> Cost | None:
    """``context``'s lifetime cost from the usage log, or None where it does not keep one."""
    if context is None:
        return None
    from agentctx_widgets.hooks import usage_log

    lookup = getattr(usage_log, "context_cost", None)
    if not callable(lookup):
        return None
    try:
        found = lookup(context)
    except Exception:  # noqa: BLE001 - a header must render whatever the log does
        return None
    return found if isinstance(found, Cost) and found.calls > 0 else None


def _ref(turn: Any) -> Any:
    if turn is None:
        return None
    try:
        return weakref.ref(turn)
    except TypeError:  # not weak-referenceable: kept by identity (and alive) until the next turn
        return lambda: turn


class CostTally:
    """The turn's and the context's cost for one view (thread-safe: the runner sets, a timer reads)."""

    def __init__(self, context: Any) -> None:
        self._context = context
        self._lock = threading.Lock()
        self.current: Cost | None = None
        """The cost of the last turn given (None: none)."""
        self._earlier = Cost.zero()  # the turns given before it
        self._seen = False
        self._turn: Any = None
        self._version = 0
        self._cache: tuple[tuple[int, int], Cost | None] | None = None

    def turn(self, cost: Cost | None, turn: Any = None) -> None:
        """A turn's (running) cost: the same ``turn`` replaces it, another starts a new turn."""
        if cost is not None and not isinstance(cost, Cost):
            raise TypeError(f"ContextView.set_turn_cost: expected a Cost (TurnResult.cost) or None, "
                            f"got {type(cost).__name__}")
        with self._lock:
            same = turn is not None and self._turn is not None and self._turn() is turn
            if not same and self.current is not None:
                self._earlier += self.current
            self.current = cost
            self._seen = self._seen or cost is not None
            self._turn = _ref(turn)
            self._version += 1

    def context_cost(self, count: int) -> Cost | None:
        """The context's cost: its lifetime cost, else the sum of the turns given (None: neither)."""
        with self._lock:
            key = (count, self._version)
            if self._cache is not None and self._cache[0] == key:
                return self._cache[1]
            seen = self._earlier + self.current if self.current is not None else self._earlier
            found = _lifetime(self._context)
            value = found if found is not None else (seen if self._seen else None)
            self._cache = (key, value)
            return value

    def header(self, count: int) -> dict:
        """The header's ``turnCost`` / ``contextCost`` (each left out while unknown)."""
        shown = {}
        if self.current is not None:
            shown["turnCost"] = cost_json(self.current)
        lifetime = self.context_cost(count)
        if lifetime is not None:
            shown["contextCost"] = cost_json(lifetime)
        return shown
