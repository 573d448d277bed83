"""Regression suites: record a set of conversations once, check every hook change against all of them.

``Suite.record(path, cases, hooks=…, model=…)`` runs each case through ``run_turn`` against a real model
and writes one JSON Lines file: a header line, then one line per case with its inputs, the model calls
(as :class:`~agentctx_widgets.models.ReplayModel` records them, so replaying needs no network) and what
each turn produced (the messages it committed, the output messages the client got, diagnostics, usage,
error). ``Suite(path).check(hooks=…)`` re-runs every case with the current hooks against the recorded
answers, offline, and compares each turn with :func:`.diff.diff`: a case is ``passed``, ``changed``,
``failed`` (a turn fails now that did not: a hook that throws, hits a limit or kills its worker; the
other cases go on) or ``model_changed`` (the hooks now send the model a request no recording fits; the
reason names the part of the request that changed, as ``ReplayModel``'s miss does).

A case is a string (one turn), a list of strings (turns in order), or a dict ``{"id", "turns", "ctx":
{…ctx fields}, "context": [initial messages]}``. Cases run on ``concurrency`` threads. ``hooks`` may be
a hook set or a function that makes one (``lambda: hooks_from_js(source)``, a ``functools.partial``): a
factory is called once per thread, so JavaScript hook sets, which run their calls one at a time, check
cases side by side (one worker process each), and the sets it made are closed when the run ends.

**Ctrl-C** (a ``KeyboardInterrupt`` in the calling thread) stops a run at once: the running cases' turns
are stopped as ``run_turn`` stops on Ctrl-C (the model stream closed, a JavaScript hook's worker killed, a
Yao request's stop set), the queued cases never start, and :class:`SuiteInterrupted` — a
``KeyboardInterrupt``, so a notebook's "run all" stops there as after any interrupt — is raised. For
``check``, its ``report`` is the :class:`SuiteReport` of the cases that finished (``interrupted`` true,
``total`` the suite's size; the cases stopped half-way are left out), and in a notebook the progress line
becomes that report; ``record`` writes nothing (a suite file is written whole or not at all). A Python hook
or tool busy on a worker thread finishes its current call (Python cannot stop another thread's code):
the run waits at most ``STOP_WAIT`` seconds for it.

**Secrets never reach a suite file**: the values of ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` and of the
recording model's key attributes (``models.hints.model_secrets``), the values under secret-named keys
(:data:`SECRET_KEYS`: ``Authorization``, ``x-api-key``, … in request options or ctx fields) and ``Bearer``
tokens are written as ``***`` wherever they stand — inputs, ctx fields, recorded requests and events,
results, error texts. A recording whose request was redacted is re-keyed, and ``check`` redacts each
request the same way before looking it up, so a redacted suite still replays (a redacted value replays
as ``***``).

**Cost** (issue 23): each recorded turn keeps its model calls and what each cost, priced that day
(``suite/costs.py`` has the rule); ``check`` prices a re-run turn's calls at those recorded prices, so a
check does not change when the price table is updated, and :meth:`Suite.reprice` /
:meth:`SuiteReport.reprice` show the recorded prices beside today's. ``prices=`` (your own prices, per
million tokens) given to ``record`` prices every turn and is kept in the header, where ``check`` and
``reprice`` read it; ``prices=`` given to ``check`` or ``reprice`` stands for today's prices. ``record(…,
budget=USD)`` is the whole recording's budget: once the turns recorded so far cost more, recording stops,
nothing is written, and :class:`SuiteBudgetExceeded` says what was spent and what the budget was (a
model no price knows cannot be kept to a budget: that stops it too, naming the model).

**Progress**: in a notebook (IPython with a kernel), ``record`` and ``check`` show one line — cases done
out of the total, counts by status — updated in place (a display id), which ``check`` turns into the
report when it ends. Anywhere else they print nothing.

The file is read as untrusted input: a regular file of at most ``MAX_FILE_BYTES``, lines of at most
``MAX_LINE_BYTES`` checked as the session store checks its lines, each recording re-verified by
``ReplayModel`` when it replays (a forged key is refused, naming the case).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import re
import tempfile
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from ..context import Context
from ..context.cost import Cost, PriceError
from ..context.safe_write import UnsafeFileError, read_regular, write_atomic
from ..context.store import RefusedJSON, decode_json
from ..hooks.turn_core import StopSignal, budget_amount, run_until_stopped
from ..models import ReplayModel
from ..models.hints import model_secrets
from ..models.replay import request_key
from ..turns import run_turn_async
from .compare import Diff, diff
from .costs import (RecordedPrices, checked_prices, cost_text, priced_turn, prices_json, summed, today,
                    todays_prices, turn_cost)
from .records import outputs_of
from .reprice import Repricing, repriced
from .report import CaseReport, Progress, SuiteReport

__all__ = ["Suite", "SuiteBudgetExceeded", "SuiteFileError", "SuiteInterrupted", "MAX_FILE_BYTES", "MAX_LINE_BYTES", "FORMAT",
           "SECRET_KEYS", "STOP_WAIT"]

FORMAT = "agentctx-suite/1"
MAX_FILE_BYTES = 512 << 20
MAX_LINE_BYTES = 64 << 20
STOP_WAIT = 5.0
"""Seconds a run waits, after Ctrl-C, for its running cases to stop before it raises anyway."""
PROGRESS_EVERY = 0.25
"""Seconds between two looks of the calling thread at the cases running on the pool (progress, Ctrl-C)."""


_CALLS = "calls.jsonl"
"""The name of a case's recordings while it runs (a ReplayModel file in a temporary folder)."""


class SuiteFileError(ValueError):
    """A suite file that cannot be read: which file, which line, what was wrong."""


class SuiteInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped ``record`` or ``check`` (the module docstring). ``report``: for ``check``, the
    :class:`SuiteReport` of the cases that finished (``report.interrupted`` is true); ``None`` for ``record``."""

    def __init__(self, text: str, report: SuiteReport | None = None) -> None:
        super().__init__(text)
        self.report = report


class SuiteBudgetExceeded(RuntimeError):
    """``Suite.record(budget=…)`` stopped: the turns recorded so far cost more than the budget (or a turn's
    model has no price, so the budget cannot be kept). ``spent`` and ``budget`` are Decimal USD; nothing
    was written."""

    def __init__(self, text: str, spent: Decimal, budget: Decimal) -> None:
        super().__init__(text)
        self.spent, self.budget = spent, budget


class _NotRun(Exception):
    """A case stopped by an interrupt before it finished: it is left out of the report."""


@dataclass
class _Case:
    id: str
    turns: list[Any]
    ctx: dict = field(default_factory=dict)
    context: list[dict] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)

    @property
    def status(self) -> str:
        """As a progress line counts a recorded case."""
        return "failed" if any(result.get("error") for result in self.results) else "recorded"

    def line(self) -> dict:
        return {"type": "case", "id": self.id, "turns": self.turns, "ctx": self.ctx, "context": self.context,
                "calls": self.calls, "results": self.results}


class Suite:
    """A recorded suite file (the module docstring)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        header, self.cases = _read(self.path)
        self.prices: dict | None = header.get("prices")
        """The ``prices=`` the suite was recorded with (kept in its header), or ``None``."""
        self.price_source: str | None = header.get("priceSource")
        """What priced the recording (``genai-prices 0.2.3 (bundled data)``), or ``None`` when not recorded."""

    @property
    def cost(self) -> Cost | None:
        """What the recorded turns cost when they were recorded; ``None`` for a file that kept no cost."""
        return summed(_recorded_cost(case) for case in self.cases)

    def reprice(self, *, prices: dict | None = None) -> Repricing:
        """The recorded turns at the recorded prices and at today's (the table now, the header's
        ``prices=`` and these ``prices``), per case and in total."""
        return repriced(((case.id, case.results, _recorded_cost(case)) for case in self.cases),
                        todays_prices(self.prices, prices, "Suite.reprice(prices=…)"))

    def __repr__(self) -> str:
        return f"Suite({str(self.path)!r}, {len(self.cases)} case{'s' * (len(self.cases) != 1)})"

    @classmethod
    def record(cls, path: str | os.PathLike, cases: Iterable[Any], *, model: Any, hooks: Any = None,
               assistant: Any = None, concurrency: int = 8, budget: float | Decimal | None = None,
               prices: dict | None = None, **turn_options: Any) -> Suite:
        """Run ``cases`` against ``model`` and write the suite file at ``path`` (replacing it), its secrets
        redacted. Ctrl-C raises :class:`SuiteInterrupted` and writes nothing; so does passing ``budget``
        (USD, the whole recording's), with :class:`SuiteBudgetExceeded`. ``prices``: the module docstring."""
        parsed = [_parse_case(case, index) for index, case in enumerate(cases)]
        _check_ids(parsed)
        _check_concurrency(concurrency)
        prices = checked_prices(prices, "Suite.record(prices=…)")
        runner = _Runner(hooks, assistant, turn_options, _Redactor(model_secrets(model)), prices=prices,
                         budget=None if budget is None else budget_amount(budget, "Suite.record"))
        progress = Progress("recording", len(parsed))
        try:
            recorded, interrupted = _run_all(lambda case: runner.record(case, model), parsed, concurrency, runner,
                                             progress)
        finally:
            runner.close()
        if interrupted:
            done = sum(case is not None for case in recorded)
            progress.finish(None, f"recording interrupted: {done} of {len(parsed)} cases recorded, nothing written")
            raise SuiteInterrupted(f"Suite.record interrupted: {done} of {len(parsed)} cases recorded; nothing "
                                   f"written to {path} (a suite file is written whole or not at all)")
        if runner.over_budget is not None:
            progress.finish(None, f"recording stopped: {runner.over_budget}; nothing written")
            raise SuiteBudgetExceeded(f"Suite.record stopped: {runner.over_budget}; nothing written to {path} (a "
                                      "suite file is written whole or not at all)", runner.spent, runner.budget)
        _write(Path(path), recorded, prices)
        suite = cls(path)
        progress.finish(None, f"recorded {len(recorded)} case{'s' * (len(recorded) != 1)} to {path} "
                              f"({cost_text(suite.cost)})")
        return suite

    def check(self, *, hooks: Any = None, assistant: Any = None, concurrency: int = 8, update: bool = False,
              model: Any = None, prices: dict | None = None, **turn_options: Any) -> SuiteReport:
        """Every case re-run with these hooks against its recorded answers, and compared (module docstring).
        ``update=True`` re-records the ``model_changed`` cases with ``model`` and rewrites the file.
        Ctrl-C raises :class:`SuiteInterrupted` whose ``report`` holds the cases that finished. The turns
        are priced at the recorded prices; ``prices`` stands for today's (``report.reprice()``)."""
        if update and model is None:
            raise ValueError("check(update=True) re-records the model_changed cases: pass the model as model=")
        _check_concurrency(concurrency)
        now = todays_prices(self.prices, prices, "Suite.check(prices=…)")
        runner = _Runner(hooks, assistant, turn_options, _Redactor(model_secrets(model)), prices=now)
        progress = Progress("checking", len(self.cases))
        try:
            reports, interrupted = _run_all(runner.check, self.cases, concurrency, runner, progress)
            report = SuiteReport([case for case in reports if case is not None], interrupted=interrupted,
                                 total=len(self.cases), prices=now)
            if interrupted:
                progress.finish(report)
                raise SuiteInterrupted(f"Suite.check interrupted: {report.headline()} (the cases that finished "
                                       "are in this exception's .report)", report)
            again: dict[str, _Case] = {}
            if update:
                changed = [case for case in self.cases if case.id in report.model_changed]
                redone, interrupted = _run_all(lambda case: runner.record(case, model), changed, concurrency,
                                               runner, Progress("re-recording", len(changed)))
                if interrupted:
                    progress.finish(report)
                    raise SuiteInterrupted(f"Suite.check(update=True) interrupted while re-recording: the file is "
                                           f"unchanged; {report.headline()}", report)
                again = {case.id: case for case in redone}
        finally:
            runner.close()
        if again:
            self.cases = [again.get(case.id, case) for case in self.cases]
            _write(self.path, self.cases, self.prices)
            self.price_source = _source(self.cases)
        progress.finish(report)
        return report


class _Runner:
    """Runs one case's turns with the given hooks (one hook set per thread when ``hooks`` is a factory),
    and stops every running turn on :meth:`stop`."""

    def __init__(self, hooks: Any, assistant: Any, turn_options: dict, redactor: _Redactor, *,
                 prices: dict | None = None, budget: Decimal | None = None) -> None:
        self._hooks, self._assistant, self._options = hooks, assistant, turn_options
        if prices is not None:  # run_turn's own prices= (its budget)
            self._options = {**turn_options, "prices": prices}
        self.redactor = redactor
        self.prices, self.budget = prices, budget
        self.spent = Decimal(0)
        """What the turns recorded so far cost (``record`` with a budget)."""
        self.over_budget: str | None = None
        """Why recording stopped for the budget, once it has."""
        self._local = threading.local()
        self._made: list[Any] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._running: set[StopSignal] = set()

    def stop(self) -> None:
        """(Any thread.) Stop every running turn and start no other."""
        self._stopping.set()
        with self._lock:
            running = list(self._running)
        for stop in running:
            stop.set()

    def close(self) -> None:
        """Close the hook sets the factory made (a JavaScript set holds a worker process)."""
        with self._lock:
            made, self._made = self._made, []
        for hooks in made:
            close = getattr(hooks, "close", None)
            if callable(close):
                close()

    def _hook_set(self) -> Any:
        if not _is_factory(self._hooks):  # a hook set (or hook functions), shared by every thread
            return self._hooks
        made = getattr(self._local, "hooks", None)
        if made is None:
            made = self._local.hooks = self._hooks()
            with self._lock:
                self._made.append(made)
        return made

    def record(self, case: _Case, model: Any) -> _Case | None:
        try:
            with tempfile.TemporaryDirectory(prefix="agentctx-suite-") as folder:
                recording = Path(folder) / _CALLS
                recorder = ReplayModel(recording, model=model, mode="record")
                recorder.keep_prices = False  # the turns keep each call's cost: the one recorded price (costs.py)
                results = self._run(case, recorder, today(self.prices))
                calls = [orjson.loads(line) for line in recording.read_bytes().splitlines() if line.strip()] \
                    if recording.exists() else []
        except (_NotRun, asyncio.CancelledError):
            return None
        return self.redactor.case(_Case(case.id, case.turns, case.ctx, case.context, calls, results))

    def _left(self) -> dict:
        """``record``'s budget for the next turn: what is left of the suite's, so a turn that would pass it
        is stopped as it streams (``run_turn(budget=)``), not only counted once it ended. Turns running at
        once each get what was left when they began."""
        if self.budget is None:
            return {}
        with self._lock:
            left = self.budget - self.spent
        return {"budget": max(left, Decimal("1e-9"))}  # spent exactly: any further cost passes it

    def _spend(self, case: _Case, index: int, turn: dict) -> None:
        """(Any thread.) Count a recorded turn against the budget; past it, stop every case."""
        if self.budget is None:
            return
        cost = Cost.from_dict(turn["cost"])
        with self._lock:
            self.spent += cost.total or 0
            if self.over_budget is not None:
                return
            if cost.unpriced:
                self.over_budget = (f"turn {index + 1} of case {case.id!r} used a model no price is known for "
                                    f"({', '.join(cost.unpriced)}), so the budget ${self.budget} cannot be kept: "
                                    f"give its price with prices=")
            elif self.spent > self.budget:
                self.over_budget = (f"the turns recorded so far cost {_dollars(self.spent)}, over the budget "
                                    f"{_dollars(self.budget)} (after turn {index + 1} of case {case.id!r})")
            else:
                return
        self.stop()

    def check(self, case: _Case) -> CaseReport | None:
        try:
            with tempfile.TemporaryDirectory(prefix="agentctx-suite-") as folder:
                recording = Path(folder) / _CALLS
                recording.write_bytes(b"".join(orjson.dumps(call) + b"\n" for call in case.calls))
                results = self._run(case, _Redacting(ReplayModel(recording, mode="replay"), self.redactor),
                                    RecordedPrices(case.results, self.prices), redact=True)
        except (_NotRun, asyncio.CancelledError):
            return None
        except Exception as failure:  # noqa: BLE001 - a case that crashes is failed, the rest go on
            return CaseReport(case.id, "failed", reason=self.redactor.text(f"{type(failure).__name__}: {failure}"),
                              recorded_cost=_recorded_cost(case))
        return _judge(case, results)

    def _run(self, case: _Case, model: Any, price: Callable[[dict], Cost], *, redact: bool = False) -> list[dict]:
        """The case's turns run on ``model``, each with its calls priced by ``price`` (redacted first when
        ``redact``: a check prices the calls as the recording keeps them)."""
        if self._stopping.is_set():
            raise _NotRun
        context = Context([dict(message) for message in case.context])
        results = []
        for index, text in enumerate(case.turns):
            before = len(context)
            result = self._turn(context, text, model, case.ctx)
            turn = _turn_of(context.messages()[before:], result)
            calls = list(getattr(result, "calls", None) or ())
            if redact:
                turn, calls = self.redactor.value(turn), self.redactor.value(calls)
            results.append(priced_turn(turn, calls, price))
            self._spend(case, index, results[-1])
        return results

    def _turn(self, context: Context, text: Any, model: Any, ctx: dict) -> Any:
        """One ``run_turn``, stoppable from another thread: a pool thread gets no Ctrl-C, so :meth:`stop`
        sets this turn's ``StopSignal`` (its task cancelled, its JavaScript hook's worker killed)."""
        hooks = self._hook_set()
        stop = StopSignal()
        wake = getattr(hooks, "interrupt", None)
        unwake = stop.on_stop(wake) if callable(wake) else (lambda: None)
        with self._lock:
            self._running.add(stop)
        if self._stopping.is_set():
            stop.set()
        options = {**self._options, **self._left()}
        try:
            result = run_until_stopped(lambda: run_turn_async(
                context, text, model=model, hooks=hooks, assistant=self._assistant, check=False,
                **{**options, **ctx}), stop)
        finally:
            with self._lock:
                self._running.discard(stop)
            unwake()
        if stop.is_set():  # it ended as the stop came (a killed hook's failure, say): not this case's outcome
            raise _NotRun
        return result


def _is_factory(hooks: Any) -> bool:
    """A function that makes a hook set (called once per thread), not hooks themselves."""
    return isinstance(hooks, (types.FunctionType, types.MethodType, functools.partial))


def _turn_of(messages: list[dict], result: Any) -> dict:
    return {"messages": messages, "outputs": outputs_of(result), "diagnostics": list(result.diagnostics),
            "usage": result.usage, "error": result.error}


def _judge(case: _Case, results: list[dict]) -> CaseReport:
    costs = {"recorded_cost": _recorded_cost(case), "cost": summed(turn_cost(turn) for turn in results)}
    for index, (now, then) in enumerate(zip(results, case.results)):
        error = now.get("error") or {}
        if error.get("code") == "REPLAY_MISS":
            return CaseReport(case.id, "model_changed", reason=f"turn {index + 1}: {_miss_text(error)}", results=results,
                              recorded_cost=costs["recorded_cost"])  # no recorded answer: nothing checked to price
        if error and not then.get("error"):
            return CaseReport(case.id, "failed", reason=f"turn {index + 1}: {error.get('message', error)}",
                              results=results, diff=diff({"turns": case.results}, {"turns": results}), **costs)
    changes: Diff = diff({"turns": case.results}, {"turns": results})
    return CaseReport(case.id, "passed" if changes.same else "changed", diff=changes, results=results, **costs)


def _recorded_cost(case: _Case) -> Cost | None:
    """What the case's turns cost when recorded; ``None`` unless every turn kept its cost."""
    costs = [turn_cost(turn) for turn in case.results]
    return None if any(item is None for item in costs) else summed(costs)


def _dollars(amount: Decimal) -> str:
    """An amount in full (a budget message says exactly how much)."""
    return f"${amount.normalize():f}"


def _miss_text(error: dict) -> str:
    """ReplayModel's miss, said of the suite: which request, how it differs from the nearest recorded one."""
    text = str(error.get("message", "")).replace(f" in {_CALLS}", " in this case's recordings")
    return text.split("\n(record it:", 1)[0] + "\n(re-record it: suite.check(update=True, model=<a real model>))"


def _check_concurrency(concurrency: Any) -> None:
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ValueError(f"concurrency must be an int of at least 1, not {concurrency!r}")


def _run_all(work: Callable[[Any], Any], items: list[Any], concurrency: int, runner: _Runner,
             progress: Progress) -> tuple[list[Any], bool]:
    """``work`` of every item (``None`` for an item not run), and whether Ctrl-C stopped the run. With
    ``concurrency`` 1 the items run here, where a turn takes Ctrl-C itself; else on a pool, watched from
    here every ``PROGRESS_EVERY`` s; on Ctrl-C the running turns are stopped and the queued items dropped."""
    results: list[Any] = [None] * len(items)
    try:
        if concurrency == 1 or len(items) < 2:
            for index, item in enumerate(items):
                results[index] = work(item)
                progress.add(results[index])
        else:
            _run_pool(work, items, concurrency, runner, results, progress)
    except KeyboardInterrupt:
        runner.stop()
        return results, True
    return results, False


def _run_pool(work: Callable[[Any], Any], items: list[Any], concurrency: int, runner: _Runner,
              results: list[Any], progress: Progress) -> None:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="agentctx-suite")
    futures = {pool.submit(work, item): index for index, item in enumerate(items)}
    pending = set(futures)
    try:
        while pending:
            done, pending = concurrent.futures.wait(pending, timeout=PROGRESS_EVERY,
                                                    return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                results[futures[future]] = future.result()
                progress.add(results[futures[future]])
    except BaseException:  # Ctrl-C, or a case's own bug: stop the others, keep what finished
        runner.stop()
        pool.shutdown(wait=False, cancel_futures=True)
        # wait() counts a cancelled future as done only once a pool thread has seen it, which the dropped
        # queue's never are: wait for the running ones alone
        running = [future for future in pending if not future.cancelled()]
        try:
            concurrent.futures.wait(running, timeout=STOP_WAIT)
        except KeyboardInterrupt:  # a second Ctrl-C: do not wait any longer
            pass
        for future in pending:
            if future.done() and not future.cancelled() and future.exception() is None:
                results[futures[future]] = future.result()
        raise
    pool.shutdown(wait=True)


def _parse_case(case: Any, index: int) -> _Case:
    where = f"cases[{index}]"
    if isinstance(case, str):
        return _Case(f"case-{index + 1}", [case])
    if isinstance(case, (list, tuple)):
        return _Case(f"case-{index + 1}", _turn_texts(case, where))
    if not isinstance(case, Mapping):
        raise TypeError(f"{where}: a case is a string, a list of strings or a dict, not a {type(case).__name__}")
    unknown = set(case) - {"id", "turns", "ctx", "context"}
    if unknown:
        raise ValueError(f"{where}: unknown key{'s' * (len(unknown) > 1)} {sorted(unknown)} (a case has id, turns, "
                         "ctx, context)")
    turns = case.get("turns")
    turns = [turns] if isinstance(turns, str) else turns
    ctx, context = case.get("ctx") or {}, case.get("context") or []
    if not isinstance(ctx, Mapping):
        raise TypeError(f"{where}.ctx: ctx fields are a dict, not a {type(ctx).__name__}")
    if not isinstance(context, list) or not all(isinstance(message, Mapping) for message in context):
        raise TypeError(f"{where}.context: the initial messages are a list of message dicts")
    return _Case(str(case.get("id") or f"case-{index + 1}"), _turn_texts(turns, f"{where}.turns"), dict(ctx),
                 [dict(message) for message in context])


def _turn_texts(turns: Any, where: str) -> list[Any]:
    if not isinstance(turns, (list, tuple)) or not turns:
        raise TypeError(f"{where}: turns are a non-empty list of strings (or user messages)")
    for index, turn in enumerate(turns):
        if not isinstance(turn, (str, Mapping)):
            raise TypeError(f"{where}[{index}]: a turn is a string or a user message dict, not a {type(turn).__name__}")
    return list(turns)


def _check_ids(cases: list[_Case]) -> None:
    seen: dict[str, int] = {}
    for index, case in enumerate(cases):
        if case.id in seen:
            raise ValueError(f"cases[{index}]: id {case.id!r} is also cases[{seen[case.id]}]'s; ids must differ")
        seen[case.id] = index


# ---- secrets ----

SECRET_KEYS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "api_key", "apikey", "x-goog-api-key",
    "openai-api-key", "anthropic-api-key", "access_token", "auth_token", "cookie", "set-cookie",
})
"""Keys (any case) whose string values are written as ``***`` wherever they stand in a suite file."""

REDACTED = "***"
_BEARER = re.compile(r"(?i)\b(bearer)\s+(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}")
_HINTS = (b"bearer", *(f'"{key}"'.encode() for key in SECRET_KEYS))


class _Redactor:
    """Blanks secrets (the module docstring) out of JSON values: a copy where something changed."""

    def __init__(self, secrets: Iterable[str]) -> None:
        found = {secret for secret in secrets if isinstance(secret, str) and len(secret) >= 8}
        self.secrets = tuple(sorted(found, key=len, reverse=True))  # a key inside a longer one goes second
        self._bytes = tuple(secret.encode() for secret in self.secrets)

    def _may_hold(self, value: Any) -> bool:
        """Cheap first look, on the value's JSON: most values hold no secret and are not walked."""
        raw = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        if any(secret in raw for secret in self._bytes):
            return True
        low = raw.lower()
        return any(hint in low for hint in _HINTS)

    def text(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return _BEARER.sub(rf"\1 {REDACTED}", text)

    def value(self, value: Any) -> Any:
        return self._walk(value) if self._may_hold(value) else value

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: REDACTED if isinstance(key, str) and key.lower() in SECRET_KEYS and isinstance(item, str)
                    and item else self._walk(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._walk(item) for item in value]
        return value

    def found(self, value: Any) -> list[str]:
        """The values standing under secret-named keys in ``value`` (and their ``Bearer`` tokens)."""
        found: list[str] = []
        pending = [value] if self._may_hold(value) else []
        while pending:
            item = pending.pop()
            if isinstance(item, Mapping):
                for key, inner in item.items():
                    if isinstance(key, str) and key.lower() in SECRET_KEYS and isinstance(inner, str):
                        found += [inner, *(match.group(0).split()[-1] for match in _BEARER.finditer(inner))]
                    else:
                        pending.append(inner)
            elif isinstance(item, (list, tuple)):
                pending.extend(item)
        return found

    def case(self, case: _Case) -> _Case:
        """A recorded case as it may be written: a value found under a secret-named key anywhere in it is
        blanked everywhere in it (a ctx field's key that a hook put in a prompt); a recording whose request
        changed is re-keyed (its key is its request's hash, and ``check`` looks up each request redacted
        the same way)."""
        found = self.found(case.line())
        redactor = _Redactor([*self.secrets, *found]) if found else self
        calls = []
        for call in case.calls:
            redacted = redactor.value(call)
            if redacted is not call and isinstance(redacted.get("request"), dict):
                redacted["key"] = request_key(redacted["request"])
                redacted["model"] = redacted["request"].get("model")
            calls.append(redacted)
        return _Case(redactor.text(case.id), redactor.value(case.turns), redactor.value(case.ctx),
                     redactor.value(case.context), calls, redactor.value(case.results))


class _Redacting:
    """A replaying model that looks each request up redacted, as the recordings were written."""

    def __init__(self, model: ReplayModel, redactor: _Redactor) -> None:
        self.model, self._redactor = model, redactor

    def stream(self, messages: list[dict], *, options: dict | None = None) -> Any:
        return self.model.stream(self._redactor.value(messages), options=self._redactor.value(options))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


# ---- reading a suite file ----


def _write(path: Path, cases: list[_Case], prices: dict | None) -> None:
    header: dict[str, Any] = {"type": "suite", "format": FORMAT, "cases": len(cases)}
    source = _source(cases)
    if source:
        header["priceSource"] = source
    if prices is not None:
        header["prices"] = prices_json(prices)
    lines = [orjson.dumps(header), *(orjson.dumps(case.line()) for case in cases)]
    write_atomic(path, b"\n".join(lines) + b"\n", "suite")


def _source(cases: list[_Case]) -> str:
    """What priced the recorded turns (the sources of their costs, joined)."""
    costs = [cost for case in cases for cost in [_recorded_cost(case)] if cost is not None]
    return sum(costs, Cost.zero()).source if costs else ""


def _read(path: Path) -> tuple[dict, list[_Case]]:
    try:
        lines = _bounded_lines(read_regular(path, "suite", MAX_FILE_BYTES), path)
    except UnsafeFileError as error:
        raise SuiteFileError(str(error)) from None
    except OSError as error:
        raise SuiteFileError(f"{path}: cannot read the suite file ({error.strerror or error})") from None
    if not lines or lines[0][1].get("format") != FORMAT:
        raise SuiteFileError(f"{path}: not a suite file (its first line is not {{\"type\": \"suite\", "
                             f"\"format\": \"{FORMAT}\"}})")
    header = lines[0][1]
    try:
        checked_prices(header.get("prices"), "prices")
    except PriceError as error:
        raise SuiteFileError(f"{path}:{lines[0][0]}: the header's {error}") from None
    if not isinstance(header.get("priceSource", ""), str):
        raise SuiteFileError(f"{path}:{lines[0][0]}: the header's priceSource is not a string")
    cases = [_case_of(entry, number, path) for number, entry in lines[1:]]
    _check_file_ids(cases, lines[1:], path)
    return header, cases


def _bounded_lines(data: bytes, path: Path) -> list[tuple[int, dict]]:
    lines = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise SuiteFileError(f"{path}:{number}: a line over {MAX_LINE_BYTES} bytes (MAX_LINE_BYTES)")
        if not raw.strip():
            continue
        try:
            entry = decode_json(raw)
        except (RefusedJSON, orjson.JSONDecodeError) as error:
            raise SuiteFileError(f"{path}:{number}: {error}") from None
        if not isinstance(entry, dict):
            raise SuiteFileError(f"{path}:{number}: a line is a JSON object, not {type(entry).__name__}")
        lines.append((number, entry))
    return lines


def _case_of(entry: dict, number: int, path: Path) -> _Case:
    where = f"{path}:{number}"
    if entry.get("type") != "case":
        raise SuiteFileError(f"{where}: a line after the header is a case ({{\"type\": \"case\", …}})")
    for key, kind in (("id", str), ("turns", list), ("ctx", dict), ("context", list), ("calls", list),
                      ("results", list)):
        if not isinstance(entry.get(key), kind):
            raise SuiteFileError(f"{where}: the case's {key!r} is missing or not a {kind.__name__}")
    if len(entry["results"]) != len(entry["turns"]):
        raise SuiteFileError(f"{where}: case {entry['id']!r} has {len(entry['turns'])} turns but "
                             f"{len(entry['results'])} results")
    if not all(isinstance(item, dict) for item in (*entry["calls"], *entry["results"], *entry["context"])):
        raise SuiteFileError(f"{where}: case {entry['id']!r}: calls, results and context hold objects only")
    _check_costs(entry, where)
    return _Case(entry["id"], entry["turns"], entry["ctx"], entry["context"], entry["calls"], entry["results"])


def _check_costs(entry: dict, where: str) -> None:
    """Each kept cost reads back (``Cost.from_dict``), so a check never stops half-way on a bad one."""
    for index, turn in enumerate(entry["results"]):
        calls = turn.get("calls", [])
        if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
            raise SuiteFileError(f"{where}: case {entry['id']!r} turn {index + 1}: its calls are a list of objects")
        try:
            for item in (turn, *calls):
                if "cost" in item:
                    Cost.from_dict(item["cost"])
        except ValueError as error:
            raise SuiteFileError(f"{where}: case {entry['id']!r} turn {index + 1}: {error}") from None


def _check_file_ids(cases: list[_Case], lines: list[tuple[int, dict]], path: Path) -> None:
    seen: dict[str, int] = {}
    for case, (number, _) in zip(cases, lines):
        if case.id in seen:
            raise SuiteFileError(f"{path}:{number}: case id {case.id!r} is also line {seen[case.id]}'s")
        seen[case.id] = number
