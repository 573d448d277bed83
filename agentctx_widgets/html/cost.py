"""A :class:`~agentctx_widgets.context.cost.Cost` as the static pages show it: one short text and the
title (tooltip) that says where the figure came from (issue 23).

The rules, the same in the live view's header (``js/src/render/cost.js``): an amount is
``money(total)``; an estimate is marked ``≈`` and its title says the usage was estimated; a model no
price table knows reads ``unpriced`` (never ``$0``) and its title says how to give ``prices=``; a cost
with priced and unpriced calls reads ``$0.0035 + unpriced``; a free model reads ``$0 (free)``.

``cost_json`` is the small JSON value the front end gets: amounts as decimal *strings* (a float of money
would round), never numbers.

``entries_cost`` prices a context's own messages for an export: only assistant messages that carry both
a ``usage`` with token counts and a ``model`` name are priced; the kit's own contexts carry neither, so
their export shows no cost rather than a wrong figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from ..context import usage_normalize
from ..context.cost import Cost, cost_label, cost_of_calls, money

__all__ = ["as_cost", "cost_from_json", "cost_json", "cost_text", "cost_title", "entries_cost", "reported_cost"]

ESTIMATED_NOTE = "estimated: some of the usage was estimated, not reported by the provider"
UNPRICED_LABEL = "unpriced"


def as_cost(value: Any) -> Cost | None:
    """A :class:`Cost` from a ``Cost``, its ``to_dict()`` or ``None``; ``TypeError`` for anything else."""
    if value is None or isinstance(value, Cost):
        return value
    if isinstance(value, Mapping):
        return Cost.from_dict(value)
    raise TypeError(f"cost must be a Cost (TurnResult.cost), its to_dict() or None, got {type(value).__name__}")


def cost_text(cost: Cost, *, names: bool = False) -> str:
    """``$0.0035``, ``≈ $0.0035``, ``unpriced``, ``$0.0035 + unpriced``, ``$0 (free)``; ``names=True``
    adds the unpriced models: ``unpriced (my-model)`` (``context.cost.cost_label``; the front end's
    ``render/cost.js`` says the same)."""
    unpriced = f"{UNPRICED_LABEL} ({', '.join(cost.unpriced)})" if names else UNPRICED_LABEL
    return cost_label(cost, approx="≈ {}", unpriced=unpriced)


def cost_title(cost: Cost) -> str:
    """What the tooltip says: the parts, the source, whether it is an estimate, how to price the rest."""
    lines = []
    if cost.total is not None:
        parts = " · ".join(f"{name.replace('_', ' ')} {money(amount, cost.currency)}" for name, amount in cost.parts.items())
        lines.append(f"{money(cost.total, cost.currency)} {cost.currency}" + (f": {parts}" if parts else ""))
    if cost.source:
        lines.append(f"priced by {cost.source}")
    if cost.estimated:
        lines.append(ESTIMATED_NOTE)
    if cost.message:
        lines.append(cost.message)
    return "\n".join(lines)


def cost_json(cost: Cost | None) -> dict | None:
    """The front end's value: ``{total: "0.0035" | null, currency, parts: {name: "…"}, source, estimated,
    unpriced: [...], free, calls, message}`` with amounts as decimal strings."""
    if cost is None:
        return None
    return {"total": None if cost.total is None else _decimal(cost.total), "currency": cost.currency,
            "parts": {name: _decimal(amount) for name, amount in cost.parts.items()}, "source": cost.source,
            "estimated": cost.estimated, "unpriced": list(cost.unpriced), "free": cost.free, "calls": cost.calls,
            "message": cost.message}


def _decimal(amount: Decimal) -> str:
    return format(amount.normalize() if amount else Decimal(0), "f")


def _amount(text: Any, where: str) -> Decimal:
    if not isinstance(text, str) or len(text) > 64:
        raise ValueError(f"cost_from_json: {where} must be a decimal string, got {text!r:.60}")
    try:
        amount = Decimal(text)
    except ArithmeticError:
        raise ValueError(f"cost_from_json: {where} must be a decimal string, got {text!r:.60}") from None
    if not amount.is_finite():
        raise ValueError(f"cost_from_json: {where} must be finite, got {text!r:.60}")
    return amount


def cost_from_json(value: Mapping[str, Any]) -> Cost:
    """:func:`cost_json`'s value back as a :class:`Cost` (``ValueError`` naming the bad field)."""
    total = value.get("total")
    parts = value.get("parts") or {}
    unpriced = value.get("unpriced") or []
    if not isinstance(parts, Mapping) or not isinstance(unpriced, list) or len(parts) > 64 or len(unpriced) > 256:
        raise ValueError("cost_from_json: parts must be a mapping and unpriced a list")
    names = tuple(str(name) for name in unpriced)
    amount = None if total is None else _amount(total, "total")
    return Cost(amount, {str(k): _amount(v, f"parts[{k!r}]") for k, v in parts.items()},
                source=str(value.get("source") or ""), estimated=value.get("estimated") is True, unpriced=names,
                free=value.get("free") is True, currency=str(value.get("currency") or "USD"),
                priced=0 if amount is None else 1)


def reported_cost(usage: Any) -> str | None:
    """A provider-reported ``usage["cost"]`` (seed 001's finite reported cost; OpenRouter sends one) as money."""
    value = usage.get("cost") if isinstance(usage, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        return None
    return money(Decimal(repr(value)) if isinstance(value, float) else Decimal(value))


def _priceable(message: Any) -> dict | None:
    """``{"usage", "model", "provider"?}`` of an assistant message that carries usage, else None."""
    if not isinstance(message, Mapping) or message.get("type") != 3 or not isinstance(message.get("usage"), Mapping):
        return None
    call = {"usage": message["usage"], "model": message.get("model") if isinstance(message.get("model"), str) else None}
    if isinstance(message.get("provider"), str) and message["provider"].strip():
        call["provider"] = message["provider"]
    return call


def entries_cost(entries: Iterable[Any]) -> Cost | None:
    """What a context's own messages say they cost, or ``None`` when none carries usage.

    A message whose usage has no token counts (a format the kit does not read) or that names no model is
    *unpriced*, never priced as $0."""
    calls = [call for call in map(_priceable, entries) if call is not None]
    if not calls:
        return None
    total = Cost.zero()
    for call in calls:
        normal = usage_normalize(call["usage"])
        if "inputTokens" not in normal or "outputTokens" not in normal:
            total += _unpriced("(usage without token counts)")
        elif call["model"] is None:
            total += _unpriced("(no model named)")
        else:
            try:
                total += cost_of_calls([call])
            except ValueError:  # usage that does not add up (more cached tokens than input)
                total += _unpriced(f"{call['model']} (usage does not add up)")
    return total


def _unpriced(name: str) -> Cost:
    return Cost(None, {}, unpriced=(name,), priced=0)
