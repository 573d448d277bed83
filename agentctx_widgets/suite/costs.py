"""What a suite's turns cost, priced as they were recorded (issue 23).

**The rule.** ``Suite.record`` prices every model call of every turn when it records it (``cost()``: the
genai-prices table of that day, or the ``prices=`` given to ``record``) and keeps it in the file: each
turn's result holds its ``calls`` (usage, model, each call's ``cost``) and the turn's ``cost``
(``Cost.to_dict()``: total, parts, the source with the table version, ``estimated``, ``unpriced``).

``check`` replays the recorded answers, so every call a re-run turn makes was answered by a recorded call
and reports that call's usage. A re-run call is priced as **the recorded call with the same model and
usage was priced when it was recorded** — the recording's own figure, not today's table — so a check
does not change when the genai-prices table is updated: a turn that makes the same calls costs what it
cost, and a turn that makes one call more or fewer (a hook that retries, a tool round trip more) differs
by exactly the recorded price of those calls. Only a call with no recorded twin (a suite file written
before costs were kept, where every call is such) is priced with today's table and ``prices=``, and
its cost's ``source`` says so. ``reprice()`` shows both: the figures at the recorded prices and the
same calls at today's.

That kept cost is a suite's one recorded price: its recordings keep no ``prices`` of their own
(``ReplayModel.keep_prices``), whose rates (a long-context tier's base rate, no web-search charges) could
price a call otherwise than it was recorded. In a suite file that has them (one written before this),
every call has its recorded twin, so they change nothing.

In text and HTML a cost reads ``$0.0035``; ``≈$0.0035`` when some usage was estimated; ``unpriced``
(never ``$0``) for a model no table or ``prices=`` knows; ``$0 (free)`` for one marked free; ``not
recorded`` for a turn of a suite file that kept no cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import orjson

from ..context.cost import Cost, PriceError, check_prices, cost_delta, cost_label, cost_of_calls, money
from ..html.common import esc

__all__ = ["NOT_RECORDED", "RecordedPrices", "cost_delta", "cost_text", "delta_text", "priced_turn", "prices_json",
           "summed", "todays_prices", "turn_cost"]

NOT_RECORDED = "not recorded"
UNKNOWN = "—"
CALL_KEYS = ("usage", "model", "provider", "responseModel", "stopReason")
"""What a turn result keeps of each model call (``rateLimits`` is left out: it says nothing of the cost)."""


def call_key(call: Mapping) -> bytes:
    """A call as its price depends on it: the model it is priced as, the provider, the usage."""
    return orjson.dumps({"model": call.get("responseModel") or call.get("model"), "provider": call.get("provider"),
                         "usage": call.get("usage")}, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
                        default=repr)


def priced_turn(turn: dict, calls: Iterable[Mapping], price: Any) -> dict:
    """``turn`` with its ``calls`` (each with its ``cost``) and its ``cost``; ``price(call)`` is a Cost."""
    kept, total = [], Cost.zero()
    for call in calls:
        call_cost = price(call)
        total += call_cost
        kept.append({**{key: call[key] for key in CALL_KEYS if call.get(key) is not None},
                     "cost": call_cost.to_dict()})
    return {**turn, "calls": kept, "cost": total.to_dict()}


def today(prices: Mapping | None) -> Any:
    """A call priced now: today's table, and ``prices``."""
    return lambda call: cost_of_calls([call], prices=prices)


class RecordedPrices:
    """The costs a case's recorded calls were given, by :func:`call_key` (the module docstring's rule)."""

    def __init__(self, results: Iterable[Mapping], prices: Mapping | None) -> None:
        self._prices = prices
        self._known: dict[bytes, Cost] = {}
        for turn in results:
            for call in turn.get("calls") or ():
                if isinstance(call, Mapping) and isinstance(call.get("cost"), Mapping):
                    self._known.setdefault(call_key(call), Cost.from_dict(call["cost"]))

    def __call__(self, call: Mapping) -> Cost:
        known = self._known.get(call_key(call))
        return known if known is not None else cost_of_calls([call], prices=self._prices)


def turn_cost(turn: Mapping) -> Cost | None:
    """The cost a turn result kept, or ``None`` (a suite file written before costs were kept)."""
    kept = turn.get("cost")
    return Cost.from_dict(kept) if isinstance(kept, Mapping) else None


def summed(costs: Iterable[Cost | None]) -> Cost | None:
    """The sum of the costs that are there; ``None`` when none is."""
    there = [item for item in costs if item is not None]
    return sum(there, Cost.zero()) if there else None


def checked_prices(prices: Any, where: str) -> dict | None:
    """``prices=`` checked now (a bad entry is an error before anything runs), as it is kept."""
    try:
        check_prices(prices)
    except PriceError as error:
        raise PriceError(f"{where}: {error}") from None
    return None if prices is None else dict(prices)


def todays_prices(kept: Mapping | None, prices: Any, where: str) -> dict | None:
    """Today's ``prices=``: a suite's kept ones, ``prices`` (checked now, named by ``where``) over them."""
    given = checked_prices(prices, where)
    return given if kept is None else dict(kept) if given is None else {**kept, **given}


def prices_json(prices: Mapping | None) -> dict | None:
    """``prices=`` as the suite header keeps it (Decimal amounts as numbers)."""
    if prices is None:
        return None
    return {name: {key: float(value) if isinstance(value, Decimal) else value for key, value in spec.items()}
            if isinstance(spec, Mapping) else (float(spec) if isinstance(spec, Decimal) else spec)
            for name, spec in prices.items()}


# ---- reading a cost ----


def cost_text(cost: Cost | None) -> str:
    """One cost as a report shows it (the module docstring)."""
    return NOT_RECORDED if cost is None else cost_label(cost)


def delta_text(old: Cost | None, new: Cost | None) -> str:
    """``+$0.0035`` / ``-$0.0035``; ``""`` for no change; ``—`` when it cannot be said (a side unpriced or
    not recorded, and the two not the same)."""
    delta = cost_delta(old, new)
    if delta is None:
        same = old is not None and new is not None and (old.total, old.unpriced) == (new.total, new.unpriced)
        return "" if same else UNKNOWN
    if delta == 0:
        return ""
    return ("≈" if old.estimated or new.estimated else "") + ("+" if delta > 0 else "") + money(delta, new.currency)


def cost_title(cost: Cost | None) -> str:
    """What a cost's tooltip says: its parts, its source, how to price what is unpriced."""
    if cost is None:
        return "this suite file kept no cost for it (recorded before costs were kept)"
    parts = ", ".join(f"{name} {money(amount, cost.currency)}" for name, amount in cost.parts.items())
    bits = [parts, f"priced by {cost.source}" if cost.source else "", "usage estimated" if cost.estimated else "",
            cost.message or ""]
    return "; ".join(bit for bit in bits if bit)


def cost_cell(cost: Cost | None) -> str:
    """A table cell's content: the cost, its parts and source as a tooltip."""
    kind = "none" if cost is None or cost.total is None else "est" if cost.estimated else "ok"
    return f'<span class="actx-cost actx-cost-{kind}" title="{esc(cost_title(cost))}">{esc(cost_text(cost))}</span>'
