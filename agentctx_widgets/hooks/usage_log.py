"""Lifetime usage and cost of the turns run in this process (the magics' "session usage", issue 23).

The runners call :func:`record_usage` once per model response they finalise (one call per billed attempt,
retries and failed turns included: ``usage_add`` is not idempotent). It adds the usage to the session total
and to its Context's, and keeps what prices the call (model, provider, the turn's ``prices=``) in the
context layer's ledger (``context/ledger.py``), which ``Context.cost`` reads too. Costs are priced when
first read, as ``TurnResult.cost`` prices them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context import ledger
from ..context.cost import Cost
from ..context.ledger import ModelSpend, Spend, context_spend, session_spend

__all__ = ["ModelSpend", "Spend", "context_cost", "context_cost_by_model", "context_spend", "context_usage",
           "record_usage", "reset_session_usage", "session_cost", "session_spend", "session_usage"]


def record_usage(usage: dict, context: Any = None, *, call: Mapping[str, Any] | None = None,
                 prices: Mapping[str, Any] | None = None) -> None:
    """Add one response's usage to the session total (and to ``context``'s, when given).

    ``call``: the call's record as ``result.calls`` keeps it (``model``, ``provider``, ``responseModel``:
    what prices it; without it the call is *unpriced*, never $0). ``prices``: the turn's ``prices=``."""
    ledger.record_call(usage, context, call=call, prices=prices)


def session_usage() -> dict:
    """Usage summed over every response since the process started (or the last reset), and ``responses``."""
    return ledger.session_usage()


def context_usage(context: Any) -> dict:
    """Usage summed over the responses of ``context``'s turns (``{}`` when none)."""
    return ledger.context_usage(context)


def context_cost(context: Any) -> Cost:
    """What the model calls of ``context``'s turns cost in this process (``Cost.zero()`` when none): ``context.cost``."""
    return ledger.context_cost(context)


def context_cost_by_model(context: Any) -> dict[str, Cost]:
    """``context``'s cost by the model that answered (first used first); ``context_spend`` adds calls and usage."""
    return ledger.context_cost_by_model(context)


def session_cost() -> Cost:
    """What every model call recorded since the process started (or the last reset) cost."""
    return ledger.session_cost()


def reset_session_usage() -> None:
    """Forget the session total and every per-context total, usage and cost."""
    ledger.reset()
