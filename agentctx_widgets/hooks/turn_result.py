"""What a turn's result has whichever lifecycle ran it: the seed's (:class:`.runner.TurnResult`) and
today's Yao request (``yao.runner.YaoTurnResult``) both subclass :class:`TurnOutcome`, which holds the
fields they share, ``ok``, ``cost`` (what the turn's model calls cost, priced by ``context.cost``), the check
that raises :class:`~.errors.TurnError`, and the repr.

Each subclass lists its fields in :attr:`TurnOutcome.REPR_FIELDS` in the order its repr has always
shown them (a dataclass would put the base's fields first), so a result prints as it did before the
base existed.
"""

from __future__ import annotations

import reprlib
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from ..context import usage_add
from ..context.cost import Cost, Repriced, check_prices, cost_of_calls
from .errors import TurnError
from .usage_log import record_usage

__all__ = ["TurnOutcome", "checked"]

Result = TypeVar("Result", bound="TurnOutcome")

_COUNTING = threading.Lock()


@dataclass(repr=False)
class TurnOutcome:
    """The fields every turn result has; a subclass says what its lifecycle adds and what each means there."""

    response: dict | None = None
    """The turn's final response (its shape is the lifecycle's), or ``None`` when it failed before one."""
    usage: dict | None = None
    """The kit's usage, summed over every model call of the turn (``None`` when no model was called)."""
    error: dict | None = None
    """Why the turn failed (``{"message", "hook"?, …}``), or ``None``."""
    diagnostics: list[dict] = field(default_factory=list)
    """What Yao accepts but a hook author almost surely did not mean: ``{code, message, where, hint}``
    (``agentctx_widgets.output.diagnostics``), in the order they happened."""
    hooks_called: list[str] = field(default_factory=list)
    """Hook names in call order (retries, tool rounds and delegations repeat them)."""
    console: list[dict] = field(default_factory=list)
    """The hooks' console lines: ``{"level", "hook", "text"}``."""
    calls: list[dict] = field(default_factory=list)
    """One entry per model call, in order: ``{"usage", "stopReason"?, "model"?, "provider"?, "rateLimits"?,
    "responseModel"?, "recordedPrices"?}`` (the call's usage and what its stream's start and done events
    said; ``recordedPrices``: a replayed call's prices of the day it was recorded)."""
    prices: dict | None = field(default=None, repr=False)
    """The ``prices=`` the turn was run with (your own prices, per million tokens), used by :attr:`cost`."""

    REPR_FIELDS: ClassVar[tuple[str, ...]] = ("response", "usage", "error", "diagnostics", "hooks_called", "console",
                                              "calls")
    """The fields the repr shows, in its order (each subclass lists all of its own; ``prices`` is left out)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def cost(self) -> Cost:
        """What the turn's model calls cost: each call priced as the model that answered it (a tool round
        trip's calls summed); ``Cost.zero()`` when no model was called, ``unpriced`` for a model no table
        or ``prices=`` knows (never $0). A replayed call is priced at the prices it was recorded with
        (``ReplayModel``; :meth:`reprice` shows today's too)."""
        return cost_of_calls(self.calls, prices=self.prices)

    def reprice(self, prices: dict | None = None) -> Repriced:
        """``(recorded, today)``: :attr:`cost`, and the same calls at today's genai-prices table (the
        prices a replayed call was recorded with ignored); the turn's ``prices=`` and these ``prices`` apply
        to today's. ``print(result.reprice())`` shows both and the difference."""
        check_prices(prices)
        merged = self.prices if prices is None else {**(self.prices or {}), **prices}
        return Repriced(self.cost, cost_of_calls(self.calls, prices=merged, recorded=False))

    def raise_for_error(self: Result) -> Result:
        """This result, or :class:`TurnError` (what failed, where, a hint) when the turn failed."""
        if self.error is not None:
            raise TurnError(self)
        return self

    def count_call(self, call: dict, context: Any = None, *, record: bool = True) -> None:
        """One billed model call (``{"usage", "model"?, …}``): kept in :attr:`calls`, summed into
        :attr:`usage` and put on ``context``'s ledger (``Context.cost``, ``%agentctx usage``) unless
        ``record`` is false (a sub-agent's call, already on the ledger, counted on its caller's result too).
        The one place both lifecycles count a call, a call the budget stopped included (the provider billed
        it); safe from several threads (a Yao hook's ``ctx.agent.All`` counts its sub-agents' calls at once)."""
        usage = call["usage"]
        with _COUNTING:
            self.calls.append(call)
            self.usage = usage if self.usage is None else usage_add(self.usage, usage)
        if record:
            record_usage(usage, context, call=call, prices=self.prices)

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.REPR_FIELDS)
        return f"{type(self).__qualname__}({shown})"


def checked(result: Any, check: bool) -> Any:
    """``result``, or :class:`TurnError` raised when the turn failed and ``check`` is true."""
    return result.raise_for_error() if check else result
