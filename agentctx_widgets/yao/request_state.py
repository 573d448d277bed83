"""What one Yao request (``yao/runner.py``) shares with the assistants it delegates to and the sub-agents
its hooks call: the sink and the result, the id counters, the stop, and the budget every billed call of
the request is charged to (its model's, a hook's ``ctx.llm``'s, a sub-agent's)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from ..hooks.errors import BudgetError
from ..hooks.turn_core import Budget, StopSignal
from ..output.diagnostics import diagnostic
from .clock import Clock
from .output import IdGenerator
from .wire import event_message, to_wire


class RequestFailed(Exception):
    """A step failed the request (Yao returns the error from ``Stream``)."""

    def __init__(self, message: str, *, hook: str | None = None, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.hook = hook
        self.cause = cause


class Shared:
    """What a request and the assistants it delegates to share: the id counters, the sink, the result.

    ``budget`` (``run_assistant(budget=...)``) meters every model call of the request; ``caller`` is the
    request whose hook called this one (a sub-agent's), ``context`` the Context the outermost request's
    calls are recorded on. As an Output sink (:meth:`write`) it takes what hooks send (``ctx.Send``)."""

    def __init__(self, sink: Any, clock: Clock, result: Any, id_generator: Any = None,
                 stop: StopSignal | None = None, *, budget: Budget | None = None, context: Any = None,
                 caller: Shared | None = None) -> None:
        self.sink, self.clock, self.result = sink, clock, result
        self.stop = stop if stop is not None else StopSignal()  # Ctrl-C: set by run_assistant, or on a cancel
        # message()/chunk(): the request's one id counter, shared with the output API's ctx.Send
        self.id_generator = id_generator if id_generator is not None else IdGenerator()
        self.output_seen = 0
        self.unknown_connectors: set[str] = set()  # reported once per request
        self.budget, self.context, self.caller = budget, context, caller
        self.over_budget: BudgetError | None = None  # a hook's ctx.llm or sub-agent call passed it (count)
        self._open_calls = 0
        self._calls_changed = threading.Condition()
        self.stop.on_stop(self._wake)

    def chain(self) -> Iterator[Shared]:
        """This request, then each request that called it, out to the outermost."""
        request: Shared | None = self
        while request is not None:
            yield request
            request = request.caller

    # -- the budget ---------------------------------------------------------------------------------

    def count(self, call: dict, *, metered: Budget | None = None) -> None:
        """One billed call of a request (its model, a hook's ``ctx.llm``, a sub-agent's): on its result and its
        callers' (a sub-agent's spend is its caller's too), and once on the ledger of the outermost request's
        Context, at that request's prices (a sub-agent runs on a Context of its own that nobody keeps). Every
        budget on the way up that did not meter the call as it streamed (``metered``) is charged with it."""
        chain = list(self.chain())
        top = chain[-1]
        for request in chain:
            request.result.count_call(call, top.context, record=request is top)
            if request.budget is not None and request.budget is not metered:
                request._charge(call)

    def _charge(self, call: dict) -> None:
        """A call a hook made (``ctx.llm``, a sub-agent's model) against the request's budget, once it ended:
        past the budget, the request fails at its next step (:meth:`check_budget`: when the hook returns,
        before a model call, at its end), its context put back; the hook's later ``ctx.llm`` calls are refused."""
        if self.over_budget is not None:
            return  # counted in the cost above; the request fails anyway
        try:
            self.budget.settle(call, then="the request stopped when the hook that made the call returned")
        except BudgetError as over:
            self.over_budget = over

    def _budget_passed(self) -> BudgetError | None:
        """The budget error of this request or of one that called it (a sub-agent stops for its caller's)."""
        return next((request.over_budget for request in self.chain() if request.over_budget is not None), None)

    def check_budget(self) -> None:
        over = self._budget_passed()
        if over is not None:
            raise over

    def refused_by_budget(self) -> str | None:
        """Why a hook's next ``ctx.llm`` call is not made: the budget is passed (the result's ``error``)."""
        over = self._budget_passed()
        return None if over is None else f"not called: {over.message}"

    # -- a hook's calls under way ---------------------------------------------------------------------

    def _wake(self) -> None:
        with self._calls_changed:
            self._calls_changed.notify_all()

    @contextlib.contextmanager
    def call_open(self) -> Iterator[None]:
        """A hook's ``ctx.llm`` or sub-agent call under way, from its start until it is counted (a Race's
        loser still closing its stream counts): with a budget, the request waits for them before it ends."""
        with self._calls_changed:
            self._open_calls += 1
        try:
            yield
        finally:
            with self._calls_changed:
                self._open_calls -= 1
                self._calls_changed.notify_all()

    def has_open_calls(self) -> bool:
        with self._calls_changed:
            return self._open_calls > 0

    def wait_calls_closed(self) -> None:
        """(A worker thread.) Until no call of :meth:`call_open` is under way, or the request is stopped."""
        with self._calls_changed:
            while self._open_calls and not self.stop.is_set():
                self._calls_changed.wait()

    # -- what the client gets ---------------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        """The request's next ``M*`` / ``C*`` id (``message.IDGenerator``, utils.go:10-50)."""
        return self.id_generator.message() if prefix == "M" else self.id_generator.chunk()

    def now(self) -> int:
        return self.clock.wall_ms()

    def emit(self, message: dict) -> None:
        self.result.messages.append(message)
        if message.get("type") == "event":
            self.result.events.append(message)
        if self.sink is not None:
            self.sink.send(message)

    def write(self, messages: list[dict]) -> None:
        """The Output sink of the hooks' ctx: what they send goes to the request's sink, in order."""
        for message in messages:
            self.emit(message)

    def event(self, name: str, text: str, data: dict) -> None:
        """Yao's ``output.NewEventMessage`` (``agent/output/builtin.go:113-122``)."""
        self.emit(to_wire(event_message(name, data, text)))  # Go's order on the wire: props' keys sorted

    def report(self, code: str, where: str, **details: Any) -> None:
        self.result.diagnostics.append(diagnostic(code, where, **details))

    def take_output_diagnostics(self, output: Any) -> None:
        """Diagnostics the hooks' Output recorded since the last look (delta rules, envelopes)."""
        found = getattr(output, "diagnostics", [])
        self.result.diagnostics.extend(found[self.output_seen:])
        self.output_seen = len(found)
