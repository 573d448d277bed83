"""What the model calls run in this process used and cost: per :class:`~.store.Context` and for the session.

The ledger behind ``Context.cost``, ``%agentctx usage`` and ``hooks.usage_log`` (issue 23). The turn runners
write into it through ``hooks.usage_log.record_usage`` once per billed model call (retries and failed turns
included: the provider billed them, even when the turn put the context back); this module is the context
layer's, so ``Context.cost`` can read it without importing the hooks.

Each call is kept with what prices it (the model that answered, else the one asked for; its provider; the
turn's ``prices=``; when it was made) and priced lazily, the first time a cost is read, by
``context.cost.cost_of_calls`` exactly as ``TurnResult.cost`` prices it, then folded into a per-model sum
(so recording costs no pricing and memory stays one sum per model, however many calls). A call priced at
its own time keeps the price it was made at. Contexts are held weakly: a context dropped is forgotten.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any

from .cost import _NO_MODEL, Cost, PriceError, check_prices, cost_of_calls
from .usage_data import usage_add

__all__ = ["ModelSpend", "Spend", "context_cost", "context_cost_by_model", "context_spend", "context_usage",
           "record_call", "reset", "session_cost", "session_spend", "session_usage"]

NO_MODEL = _NO_MODEL
"""The model column of a call no model was named for (priced as unpriced, never $0)."""
_PRICING_KEYS = ("model", "provider", "responseModel")


@dataclass(frozen=True)
class ModelSpend:
    """One model's share of a ledger: how many calls, their summed usage, what they cost."""

    model: str
    """The model that answered (``responseModel``), else the one asked for, else ``NO_MODEL``."""
    calls: int
    usage: Mapping[str, Any]
    """``usage_add`` of the calls' usage."""
    cost: Cost


@dataclass(frozen=True)
class Spend:
    """A ledger read at one moment: every call's usage and cost, and the split by model (first used first)."""

    calls: int
    usage: Mapping[str, Any]
    cost: Cost
    models: tuple[ModelSpend, ...] = ()

    @classmethod
    def empty(cls) -> Spend:
        return cls(0, MappingProxyType({}), Cost.zero())


@dataclass
class _ModelBook:
    calls: int = 0
    usage: dict = field(default_factory=dict)
    cost: Cost = field(default_factory=Cost.zero)


@dataclass
class _Book:
    calls: int = 0
    usage: dict = field(default_factory=dict)
    models: dict[str, _ModelBook] = field(default_factory=dict)

    def add_usage(self, label: str, usage: Any) -> None:
        self.calls += 1
        self.usage = usage_add(self.usage, usage)
        book = self.models.setdefault(label, _ModelBook())
        book.calls += 1
        book.usage = usage_add(book.usage, usage)

    def add_cost(self, label: str, cost: Cost) -> None:
        book = self.models[label]
        book.cost = book.cost + cost

    def spend(self) -> Spend:
        models = tuple(ModelSpend(label, book.calls, MappingProxyType(dict(book.usage)), book.cost)
                       for label, book in self.models.items())
        return Spend(self.calls, MappingProxyType(dict(self.usage)), sum((m.cost for m in models), Cost.zero()),
                     models)


@dataclass(frozen=True)
class _Call:
    label: str
    call: Mapping[str, Any]
    """``{"usage", "model"?, "provider"?, "responseModel"?}``: what ``cost_of_calls`` prices."""
    prices: Mapping[str, Any] | None
    at: datetime


_lock = threading.Lock()  # the books and the queue; never held while pricing
_pricing = threading.Lock()  # one reader prices the queue at a time
_session = _Book()
_by_context: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_queue: list[tuple[_Call, tuple[_Book, ...]]] = []


def _own_prices(prices: Mapping[str, Any] | None) -> dict | None:
    """A copy of ``prices=`` (checked: :class:`PriceError` before anything is recorded), so a later edit
    of the caller's dict does not reprice calls already made."""
    check_prices(prices)
    if prices is None:
        return None
    return {name: dict(spec) if isinstance(spec, Mapping) else spec for name, spec in prices.items()}


def _label(call: Mapping[str, Any]) -> str:
    for key in ("responseModel", "model"):
        value = call.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return NO_MODEL


SETTLE_AT = 256
"""Calls waiting to be priced before a record prices them all (reading a cost prices them at once too)."""


def record_call(usage: Any, context: Any = None, *, call: Mapping[str, Any] | None = None,
                prices: Mapping[str, Any] | None = None) -> None:
    """Add one billed model call: its ``usage`` to the session (and to ``context``'s ledger when given and
    weak-referenceable), priced later as ``call`` says (``result.calls[i]``: ``model``, ``provider``,
    ``responseModel``; its own ``usage`` is not read) with ``prices`` (the turn's ``prices=``).
    ``TypeError`` for a ``call`` that is not a dict, :class:`PriceError` for bad prices; either before
    anything is added."""
    if call is not None and not isinstance(call, Mapping):
        raise TypeError(f"record_usage: call must be a dict like result.calls[i], got {type(call).__name__}")
    facts = {key: call[key] for key in _PRICING_KEYS if call and isinstance(call.get(key), str)}
    if call and isinstance(call.get("recordedPrices"), Mapping):  # a replayed call keeps its recorded price
        facts["recordedPrices"] = dict(call["recordedPrices"])
    entry = _Call(_label(facts), MappingProxyType({"usage": dict(usage) if isinstance(usage, Mapping) else usage, **facts}), _own_prices(prices),
                  datetime.now(timezone.utc))
    with _lock:
        books = [_session]
        if context is not None:
            try:
                books.append(_by_context.setdefault(context, _Book()))
            except TypeError:  # not weak-referenceable: only the session counts it
                pass
        for book in books:
            book.add_usage(entry.label, usage)
        _queue.append((entry, tuple(books)))
        due = len(_queue) >= SETTLE_AT
    if due:  # a process that never reads a cost keeps at most SETTLE_AT calls, not every call it made
        _settle()


def _price(entry: _Call) -> Cost:
    try:
        return cost_of_calls([entry.call], prices=entry.prices, at=entry.at)
    except (ValueError, TypeError) as failure:  # usage the table refuses: unpriced, named with why
        reason = "prices= refused" if isinstance(failure, PriceError) else "usage does not add up"
        return Cost(None, {}, unpriced=(f"{entry.label} ({reason})",), priced=0)


def _settle() -> None:
    """Price every call recorded since the last read and add it to its books."""
    with _pricing:
        with _lock:
            todo = list(_queue)
            _queue.clear()
        priced = [(entry, _price(entry), books) for entry, books in todo]
        with _lock:
            for entry, cost, books in priced:
                for book in books:
                    book.add_cost(entry.label, cost)


def context_spend(context: Any) -> Spend:
    """``context``'s ledger: its calls, usage, cost and per-model split (``Spend.empty()`` when no turn ran)."""
    _settle()
    with _lock:
        try:
            book = _by_context.get(context)
        except TypeError:
            book = None
        return book.spend() if book is not None else Spend.empty()


def session_spend() -> Spend:
    """Every call recorded in this process (since the last :func:`reset`)."""
    _settle()
    with _lock:
        return _session.spend()


def context_cost(context: Any) -> Cost:
    """What the model calls of ``context``'s turns cost (``Cost.zero()`` when none ran): ``Context.cost``."""
    return context_spend(context).cost


def context_cost_by_model(context: Any) -> dict[str, Cost]:
    """``context``'s cost split by the model that answered, in the order the models were first used."""
    return {model.model: model.cost for model in context_spend(context).models}


def session_cost() -> Cost:
    """What every model call recorded in this process cost."""
    return session_spend().cost


def context_usage(context: Any) -> dict:
    """Usage summed over the calls recorded for ``context`` (``{}`` when none); no pricing."""
    with _lock:
        try:
            book = _by_context.get(context)
        except TypeError:
            return {}
        return dict(book.usage) if book is not None else {}


def session_usage() -> dict:
    """Usage summed over every call recorded in this process, and ``responses``: how many; no pricing."""
    with _lock:
        return {**_session.usage, "responses": _session.calls}


def reset() -> None:
    """Forget the session's ledger and every context's."""
    global _session
    with _pricing, _lock:
        _session = _Book()
        _by_context.clear()
        _queue.clear()
