"""The turn core: what the seed's lifecycle (:mod:`.runner`, ``_Turn``) and Yao's request
(``yao.runner``, ``_Request``) both do, written once. Each of them keeps only what differs — the order
of its hooks and events, its error texts, what it sends to the client.

- :class:`StopSignal`: a turn's stop request (Ctrl-C), set from the calling thread; checked between a
  sync stream's events, and waking what blocks outside the turn's loop (``ctx.llm.Stream`` in a hook,
  a sub-agent's request) through :meth:`StopSignal.on_stop`.
- :func:`stream_reply`: one model call: the stream opened and always closed (``aclose`` on an
  interrupt or an error too), each event folded into the assembler, the ``start`` / ``done`` facts
  kept, ``reply_cut_off`` reported, an ``error`` event raised as :class:`ModelError`, more tool calls
  than ``models.limits.MAX_TOOL_CALLS`` refused (every model: a replay, a scripted or a custom one), the
  usage finalized; a custom model's failure redacted of the known keys. A turn's calls are counted by
  ``TurnOutcome.count_call``.
- :class:`Budget`: ``run_turn(budget=...)``: what the turn's calls cost so far against a limit in US
  dollars — each completed call priced from its usage (``context.cost.cost_of_calls``), the call in flight
  from an estimate (its input once, its output as the deltas come), replaced by the provider's usage when
  ``done`` brings it; :func:`stream_reply` closes the stream (as an interrupt does) and raises
  :class:`~.errors.BudgetError` the moment it would pass.
- :func:`call_tool`: one tool call: looked up, its arguments checked, run as user code
  (:func:`.caller.call_user_code`); what went wrong is returned, for each lifecycle to word.
- :func:`as_user_message`: a turn's user input as a Context message.
- :func:`run_until_stopped`: :func:`.caller.run_on_worker` for a request that another request started
  (``ctx.agent.Call``), which its stop ends as Ctrl-C ends the outer one.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_UP, Decimal
from typing import Any

from ..context import create_assembler, finalize_usage, user_message
from ..context.cost import Cost, check_prices, cost, cost_of_calls, money
from ..context.usage import estimate_context_tokens
from ..models import ModelError, limits
from ..models.answer import call_facts
from ..models.connector import SdkModel
from ..models.errors import redacted_failure
from ..models.hints import Target, model_secrets
from ..models.openai_shapes import from_view_message
from ..models.stream_events import is_async, opened, stopped
from ..models.tools import Tool
from .caller import call_user_code, cancel_task, run_on_worker
from .errors import BudgetError

__all__ = ["Budget", "Reply", "StopSignal", "ToolCall", "as_user_message", "call_tool",
           "run_until_stopped", "stream_reply"]

Report = Callable[..., None]
"""``report(code, where, **details)``: where a lifecycle collects its diagnostics."""

OnEvent = Callable[[dict], None]
"""``on_event(event)``: after the event is folded in (not called for ``error``: it raises)."""


class StopSignal:
    """A turn's stop request. :meth:`set` from any thread (``run_on_worker``'s Ctrl-C calls the turn's
    ``interrupt``); :meth:`is_set` between steps; :meth:`on_stop` callbacks wake what the turn's task
    cannot cancel (a model stream read on another thread, a request run on another loop)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one failing waker must not keep the others from stopping
                pass

    def on_stop(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once when the stop is set (at once if it is); returns its remover."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


@dataclass
class Reply:
    """One model call's outcome."""

    message: dict
    """The assembled assistant message (type 3)."""
    usage: dict
    """``finalize_usage`` of the call: the model's figures, else an estimate."""
    meta: dict = field(default_factory=dict)
    """``model``, ``provider``, ``rateLimits`` (from ``start``) and ``call_facts`` of ``done``."""


# -- the budget -------------------------------------------------------------------------------------

_MILLION = 1_000_000


def budget_amount(budget: Any, where: str) -> Decimal:
    """``budget`` (US dollars: an int, a float or a Decimal, > 0) as a Decimal; ``TypeError`` /
    ``ValueError`` naming it."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float, Decimal)):
        raise TypeError(f"{where}(budget=…): expected a number of US dollars (int, float or Decimal), "
                        f"got {type(budget).__name__} {budget!r:.60}")
    amount = budget if isinstance(budget, Decimal) else Decimal(budget) if isinstance(budget, int) \
        else Decimal(repr(budget))
    if not amount.is_finite() or amount <= 0:
        raise ValueError(f"{where}(budget=…): expected a finite number of US dollars greater than 0, got {budget!r}")
    return amount


def _named(model: Any) -> tuple[str | None, str | None]:
    """The model name and provider a call of ``model`` is priced as until its stream's ``start`` names them."""
    name = getattr(model, "model", None)
    provider = getattr(model, "provider", None)
    provider = provider if isinstance(provider, str) else getattr(provider, "name", None)
    return (name if isinstance(name, str) and name.strip() else None,
            provider if isinstance(provider, str) and provider else None)


class Budget:
    """A turn's budget (``run_turn(budget=...)``, US dollars) and what its model calls have cost so far.

    :func:`stream_reply` asks :meth:`meter` for each call's running cost and :meth:`settle` s the call
    when it completes; either raises :class:`~.errors.BudgetError` the moment the turn would pass the
    limit (the stream is then closed and the lifecycle commits nothing)."""

    def __init__(self, limit: Decimal, prices: Mapping[str, Any] | None = None) -> None:
        self.limit, self.prices = limit, prices
        self.spent = Decimal(0)
        """What the completed calls cost, each priced from its usage as ``result.cost`` prices it."""
        self.estimated = False
        """Some completed call's usage was an estimate (the provider reported none)."""
        self._lock = threading.Lock()  # a Yao hook's ctx.llm.All settles its calls from several threads

    @classmethod
    def of(cls, budget: Any, prices: Any, model: Any = None, *, where: str = "run_turn") -> Budget | None:
        """A turn's budget, checked before anything runs: ``None`` for no budget; ``TypeError`` /
        ``ValueError`` naming ``budget`` for a bad value or for a ``model`` the price table (and
        ``prices``) cannot price; ``PriceError`` for bad ``prices``."""
        check_prices(prices)
        if budget is None:
            return None
        guard = cls(budget_amount(budget, where), prices)
        name, provider = _named(model)
        if name is not None:
            priced = guard.price({"inputTokens": 0, "outputTokens": 0}, name, provider)
            if priced.total is None:
                raise ValueError(f"{where}(budget=…): {name!r} cannot be priced, so a budget cannot be kept; "
                                 f"{priced.message}")
        return guard

    def price(self, usage: dict, name: str | None, provider: str | None) -> Cost:
        return cost(usage, name, provider, prices=self.prices)

    def meter(self, model: Any, messages: list[dict], meta: dict) -> _Meter:
        """The running cost of the call about to be made (``BudgetError`` when its input alone passes)."""
        return _Meter(self, model, messages, meta)

    def settle(self, call: dict, *, then: str = "the model stream was closed") -> None:
        """A completed call (``{"usage", **meta}``: the provider's usage, else finalize_usage's estimate),
        priced as ``result.cost`` prices it; ``BudgetError`` when the turn passes its budget with it
        (``then`` says what the turn did about it). The call is counted in ``spent`` either way."""
        priced = cost_of_calls([call], prices=self.prices)
        if priced.total is None or priced.unpriced:
            raise self.unpriced(priced, call)
        with self._lock:
            self.spent, self.estimated = self.spent + priced.total, self.estimated or priced.estimated
            spent, estimated = self.spent, self.estimated
        if spent > self.limit:
            raise self.exceeded(spent, estimated, {**call, "stopped": "budget"}, then=then)

    def exceeded(self, spent: Decimal, estimated: bool, call: dict, *,
                 then: str = "the model stream was closed") -> BudgetError:
        about, note = ("≈", " (estimated)") if estimated else ("", "")
        shown, limit = _apart(spent, self.limit)
        return BudgetError(f"the turn's cost passed its budget: spent {about}{shown} of {limit}"
                           f"{note}; {then} and nothing was committed",
                           spent=spent, budget=self.limit, estimated=estimated, call=call)

    def before_call(self, input_cost: Decimal) -> BudgetError:
        about, note = ("≈", " (estimated)") if self.estimated else ("", "")
        return BudgetError(f"the turn's cost would pass its budget: spent {about}{money(self.spent)} of "
                           f"{money(self.limit)}{note}, and the next model call's input alone would cost "
                           f"≈{money(input_cost)} (estimated); the call was not made and nothing was committed",
                           spent=self.spent, budget=self.limit, estimated=self.estimated)

    def unpriced(self, priced: Cost, call: dict | None) -> BudgetError:
        return BudgetError(f"the turn has a budget of {money(self.limit)} but a model call cannot be priced, so the "
                           f"budget cannot be kept; {priced.message}", code="BUDGET_UNPRICED", spent=self.spent,
                           budget=self.limit, estimated=self.estimated, call=call)


def _apart(spent: Decimal, limit: Decimal) -> tuple[str, str]:
    """``money`` of both, with as many more decimals as it takes for ``spent`` (> ``limit``, rounded up)
    to read as more: ``$0.01003 of $0.01000``, not ``$0.01 of $0.01``."""
    shown, limit_shown = money(spent), money(limit)
    places = 4
    while shown == limit_shown and places < 12:
        places += 1
        step = Decimal(1).scaleb(-places)
        shown, limit_shown = (f"${amount.quantize(step, rounding=ROUND_UP):f}" for amount in (spent, limit))
    return shown, limit_shown


class _Meter:
    """One call's running cost. The request's input is estimated once (``estimate_context_tokens``) and
    priced with the output's per-token rate (two genai-prices calls a call): that gives the most output
    tokens the budget leaves. Each delta's words are then counted as it comes (the kit's estimate,
    ``ceil(words × 4/3)`` tokens: ``context.usage``; a word split across two deltas counted once) and
    compared with that number — priced again only once it is passed, for the error's figure."""

    DELTAS = frozenset({"text_delta", "thinking_delta", "tool_call_delta"})

    def __init__(self, budget: Budget, model: Any, messages: list[dict], meta: dict) -> None:
        self.budget, self.meta = budget, meta
        self.input_tokens = estimate_context_tokens(messages)
        self.words = self.chars = 0
        self.in_word: dict[Any, bool] = {}  # content index -> its text so far ends inside a word
        self.name, self.provider = _named(model)
        self.most: float = math.inf
        self.started = False  # the stream is open: the provider bills this call from now on
        if self.name is not None:
            self._rates()

    def _usage(self, output_tokens: int) -> dict:
        return {"inputTokens": self.input_tokens, "outputTokens": output_tokens,
                "totalTokens": self.input_tokens + output_tokens, "source": "estimate"}

    def _rates(self) -> None:
        budget = self.budget
        base = budget.price(self._usage(0), self.name, self.provider)
        if base.total is None:  # once the stream is open the call was made: it is counted, unpriced
            raise budget.unpriced(base, self._call(0) if self.started else None)
        per_million = budget.price(self._usage(_MILLION), self.name, self.provider).total - base.total
        left = budget.limit - budget.spent - base.total
        if left < 0:
            if self.started:  # the stream's start named a dearer model: the call was made, and is counted
                raise budget.exceeded(budget.spent + base.total, True, self._call(0))
            raise budget.before_call(base.total)
        self.most = math.inf if per_million <= 0 else int(left * _MILLION / per_million)

    def _tokens(self) -> int:
        """The output so far in tokens: the kit's ``ceil(words × 4/3)``, but never under a token per four
        characters, so text without spaces (CJK, base64, a long JSON argument) is not one word's worth."""
        return max(-(-self.words * 4 // 3), -(-self.chars // 4))

    def _call(self, output_tokens: int) -> dict:
        named = {"model": self.name, **({"provider": self.provider} if self.provider else {})}
        return {"usage": self._usage(output_tokens), **named, **self.meta, "stopped": "budget"}

    def see(self, event: Any) -> None:
        """One stream event (after the assembler took it): a delta counted, ``start``'s model priced."""
        kind = event.get("type") if isinstance(event, dict) else None
        if kind in self.DELTAS:
            delta = event.get("delta")
            if isinstance(delta, str) and delta:
                self._count(event.get("contentIndex"), delta)
        elif kind == "start":
            self.started = True
            if isinstance(event.get("model"), str) and event["model"] != self.name:
                self.name = event["model"]
                self.provider = event.get("provider") if isinstance(event.get("provider"), str) else self.provider
                self._rates()

    def _count(self, index: Any, delta: str) -> None:
        if self.name is None:  # neither the model nor its stream's start named it; the call was made
            raise self.budget.unpriced(self.budget.price(self._usage(0), None, None), self._call(self._tokens()))
        words = len(delta.split())
        if words and self.in_word.get(index) and not delta[0].isspace():
            words -= 1  # the delta goes on with the last word
        self.in_word[index] = not delta[-1].isspace()
        self.words += words
        self.chars += len(delta)
        if self._tokens() > self.most:
            raise self._over()

    def _over(self) -> BudgetError:
        call = self._call(self._tokens())
        priced = self.budget.price(call["usage"], self.name, self.provider)
        return self.budget.exceeded(self.budget.spent + priced.total, True, call)


async def stream_reply(model: Any, messages: list[dict], options: dict | None, *, stop: StopSignal | None = None,
                       report: Report | None = None, on_event: OnEvent | None = None,
                       assembler: Any = None, budget: Budget | None = None) -> Reply:
    """Stream one model call into ``assembler`` (a fresh one unless given: a caller that shows the partial
    message on an interrupt passes its own). Raises :class:`ModelError` for an ``error`` event (or an
    assembled error), ``CancelledError`` when ``stop`` is set between events; the stream is closed either way.
    A reply with more than ``models.limits.MAX_TOOL_CALLS`` tool calls raises ``RESPONSE_TOO_LARGE`` before
    any of them runs (counted as they stream, and in the assembled message for a snapshot). A custom
    model's failure (raised, or an ``error`` event) leaves without the keys it may carry (:func:`_redacted`).
    With a ``budget``, :class:`~.errors.BudgetError` is raised before the call when its input alone would pass
    it, after the event whose estimate passes it (the stream closed), or when the completed call does."""
    try:
        return await _stream_reply(model, messages, options, stop, report, on_event, assembler, budget)
    except BudgetError:  # the kit's own stop: no model text in it
        raise
    except Exception as failure:  # not CancelledError / KeyboardInterrupt: an interrupt carries no text
        shown = _redacted(model, failure)
        if shown is failure:
            raise
        raise shown from None  # its text showed a key even with its args blanked: replaced, cause hidden


def _redacted(model: Any, failure: Exception) -> BaseException:
    """``failure`` without the secrets of ``models.hints.model_secrets`` (the built-in connectors' key
    variables, the model's own ``api_key``-like attributes), for every model but the built-in connectors
    (``SdkModel``), which blank their call's key from every error they raise and every error event already."""
    if isinstance(model, SdkModel):
        return failure
    secrets = model_secrets(model)
    if not secrets:
        return failure
    return redacted_failure(failure, Target(url=None, model=None, base_url=None, provider="", key_env="",
                                            secrets=secrets))


async def _stream_reply(model: Any, messages: list[dict], options: dict | None, stop: StopSignal | None,
                        report: Report | None, on_event: OnEvent | None, assembler: Any,
                        budget: Budget | None) -> Reply:
    assembler = assembler if assembler is not None else create_assembler()
    meta: dict[str, Any] = {}
    calls = _ToolCalls(type(model).__name__)
    meter = budget.meter(model, messages, meta) if budget is not None else None
    async with opened(model.stream(messages, options=options)) as events:
        if is_async(events):
            async for event in events:
                _step(assembler, event, meta, report, on_event, calls)
                if meter is not None:
                    meter.see(event)
                if stop is not None and stop.is_set():
                    raise stopped()
        else:
            for event in events:
                if stop is not None and stop.is_set():  # a sync stream can only stop between events
                    raise stopped()
                _step(assembler, event, meta, report, on_event, calls)
                if meter is not None:
                    meter.see(event)
    message = assembler.message()
    if "error" in message:
        raise ModelError.from_event_error(message["error"])
    content = message.get("content")
    calls.check(sum(1 for block in content if isinstance(block, dict) and block.get("type") == "toolCall")
                if isinstance(content, list) else 0)
    reply = Reply(message, finalize_usage(assembler.usage, messages, message), meta)
    if budget is not None:  # the provider's usage (or the estimate of the whole reply) replaces the running one
        budget.settle({"usage": reply.usage, **meta})
    return reply


class _ToolCalls:
    """The tool calls of one reply, by content index, refused past ``limits.MAX_TOOL_CALLS`` (read at each
    check, so a test may lower it); the SDK connectors stop at the same number earlier, in the stream."""

    EVENTS = frozenset({"tool_call_start", "tool_call_delta", "tool_call_end"})

    def __init__(self, model: str) -> None:
        self.model = model
        self.indexes: set[int] = set()

    def see(self, event: dict) -> None:
        self.indexes.add(event["contentIndex"])
        self.check(len(self.indexes))

    def check(self, count: int) -> None:
        cap = limits.MAX_TOOL_CALLS
        if count > cap:
            raise ModelError(f"the model's reply has more than {cap} tool calls (models.limits.MAX_TOOL_CALLS, "
                             f"for every model; this one is a {self.model}); the call was stopped and none of "
                             "them ran", code="RESPONSE_TOO_LARGE")


def _step(assembler: Any, event: Any, meta: dict, report: Report | None, on_event: OnEvent | None,
          calls: _ToolCalls) -> None:
    assembler.consume(event)
    kind = event.get("type") if isinstance(event, dict) else None
    if kind in calls.EVENTS:  # contentIndex checked by consume
        calls.see(event)
    if kind == "start":
        for key in ("model", "provider", "rateLimits"):
            if event.get(key):
                meta[key] = event[key]
    elif kind == "done":
        meta.update(call_facts(event))
        if meta.get("truncated") and report is not None:
            report("reply_cut_off", "response", stop=meta.get("stopReason"))
    elif kind == "error":
        raise ModelError.from_event_error(event.get("error"))
    if on_event is not None:
        on_event(event)


@dataclass
class ToolCall:
    """What running one tool call gave: its value, or why there is none."""

    name: str
    value: Any = None
    missing: bool = False
    """No tool has that name."""
    invalid: ValueError | None = None
    """The arguments did not fit the tool's schema (``Tool.check``)."""
    failure: Exception | None = None
    """The tool raised."""

    @property
    def ok(self) -> bool:
        return not self.missing and self.invalid is None and self.failure is None


async def call_tool(tools: Mapping[str, Tool], name: str, arguments: Any) -> ToolCall:
    """Run tool ``name`` with ``arguments`` (checked first); a tool's failure is returned, not raised
    (an interrupt is: ``CancelledError`` / ``KeyboardInterrupt`` are not ``Exception``)."""
    tool = tools.get(name)
    if tool is None:
        return ToolCall(name, missing=True)
    try:
        checked = tool.check(arguments)
    except ValueError as invalid:
        return ToolCall(name, invalid=invalid)
    try:
        return ToolCall(name, value=await call_user_code(tool.function, **checked))
    except Exception as failure:  # noqa: BLE001 - a tool's failure is an answer the model sees
        return ToolCall(name, failure=failure)


def as_user_message(user_input: Any) -> dict:
    """A turn's input as a Context message: a Context message as it is, an OpenAI-like ``{role,
    content}`` converted, anything else a user message (``user_message``: text, parts)."""
    if isinstance(user_input, dict):
        if isinstance(user_input.get("type"), int) or "role" not in user_input:
            return user_input
        return from_view_message(user_input)
    return user_message(user_input)


def run_until_stopped(main: Callable[[], Coroutine[Any, Any, Any]], stop: StopSignal) -> Any:
    """:func:`.caller.run_on_worker` of ``main``, which ``stop`` ends from any thread: its task is cancelled
    (``CancelledError`` is raised here) — for a request run from a thread that Ctrl-C does not reach
    (a JavaScript hook's bridge call); Ctrl-C in this thread still sets ``stop`` and raises
    ``KeyboardInterrupt``."""
    running: dict[str, Any] = {}

    async def entry() -> Any:
        running["loop"], running["task"] = asyncio.get_running_loop(), asyncio.current_task()
        if stop.is_set():
            raise stopped()
        return await main()

    remove = stop.on_stop(lambda: cancel_task(running.get("loop"), running.get("task")))
    try:
        return run_on_worker(entry, stop.set)
    finally:
        remove()
