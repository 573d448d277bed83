"""Lifetime token usage of the turns run in this process (the magics' "session usage").

Each model response the runner finalises is added once (``usage_add`` is not idempotent: one call
per billed attempt, retries included), to the session total and to its Context's total.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ..context import usage_add

_lock = threading.Lock()
_session: dict = {}
_turns = 0
_by_context: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def record_usage(usage: dict, context: Any = None) -> None:
    """Add one response's usage to the session total (and to ``context``'s, when given)."""
    global _session, _turns
    with _lock:
        _session = usage_add(_session, usage)
        _turns += 1
        if context is not None:
            try:
                _by_context[context] = usage_add(_by_context.get(context, {}), usage)
            except TypeError:  # not weak-referenceable: only the session total counts it
                pass


def session_usage() -> dict:
    """Usage summed over every response since the process started (or the last reset)."""
    with _lock:
        return {**_session, "responses": _turns}


def context_usage(context: Any) -> dict:
    """Usage summed over the responses committed to ``context`` by ``run_turn``."""
    with _lock:
        try:
            return dict(_by_context.get(context, {}))
        except TypeError:
            return {}


def reset_session_usage() -> None:
    """Forget the session total and every per-context total."""
    global _session, _turns
    with _lock:
        _session, _turns = {}, 0
        _by_context.clear()
