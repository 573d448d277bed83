"""What a suite check found: a status per case, the diffs, and the ways to read them.

``report.passed / .changed / .failed / .model_changed`` are lists of case ids; ``report.cases[id]`` is a
:class:`CaseReport` with its ``status``, ``diff`` and ``reason``. ``str(report)`` is a summary and the
text diffs of the cases that differ; in a notebook the report is a table (case, status, what changed,
Δ tokens, the recorded cost, the checked cost, Δ cost, and a total row) whose rows open to the case's side-by-side diff (``<details>``, no JavaScript, so it reads
saved and on GitHub). ``report.assert_ok()`` raises ``AssertionError`` with the text diffs of the first
cases that differ, so a regression notebook under nbval, or a pytest test, fails with the reason.

Cost (``suite/costs.py`` has the rule): ``case.recorded_cost`` is what the case's turns cost when they
were recorded, ``case.cost`` what the checked turns cost at those same prices, ``case.cost_delta`` the
difference; ``report.recorded_cost`` / ``report.cost`` sum them. ``report.reprice(prices=None)`` prices
the checked turns again with today's table beside the recorded prices.

A report of a check stopped by Ctrl-C holds the cases that finished: ``interrupted`` is true, ``total`` is
the suite's size, and it is never ``ok``. :class:`Progress` is the line a run shows in a notebook.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..context.cost import Cost
from ..html.common import esc
from .compare import Diff
from .costs import UNKNOWN, cost_cell, cost_delta, cost_text, delta_text, summed, todays_prices
from .reprice import Repricing, repriced
from .diff_html import DIFF_CSS, render_diff

__all__ = ["STATUSES", "CaseReport", "SuiteReport", "Progress", "PROGRESS_MIME"]

STATUSES = ("passed", "changed", "failed", "model_changed")

SHOWN_IN_ASSERT = 5
"""How many differing cases ``assert_ok`` shows in full."""


@dataclass
class CaseReport:
    """One case's outcome: ``status`` (one of :data:`STATUSES`), its ``diff`` against the recording (None
    when it could not run to the end), ``reason`` (why it failed or which request changed) and the turns
    it produced now."""

    id: str
    status: str
    diff: Diff | None = None
    reason: str = ""
    results: list[dict] = field(default_factory=list)
    recorded_cost: Cost | None = None
    """What the case's turns cost when recorded (``None``: the suite file kept no cost)."""
    cost: Cost | None = None
    """What the checked turns cost at the recorded prices (``None``: the case crashed, or is
    ``model_changed``: no recorded answer fits its request, so there is nothing to price)."""

    @property
    def cost_delta(self) -> Decimal | None:
        """``cost - recorded_cost`` in USD (``None`` when a side is missing or unpriced)."""
        return cost_delta(self.recorded_cost, self.cost)

    @property
    def summary(self) -> str:
        """What changed, in one line."""
        if self.reason:
            return self.reason.splitlines()[0]
        if self.diff is None or self.diff.same:
            return ""
        paths = dict.fromkeys(_field(change.path) for turn in self.diff.changed for change in turn.changes)
        turns = ", ".join(str(turn.index) for turn in self.diff.changed)
        return f"turn{'s' * (len(self.diff.changed) != 1)} {turns}: {', '.join(paths) or 'turns added or removed'}"

    @property
    def tokens_delta(self) -> int | None:
        """The change in total tokens over the case's turns (None when a side has no usage)."""
        if self.diff is None:
            return None
        old = _tokens(turn.old for turn in self.diff.turns)
        new = _tokens(turn.new for turn in self.diff.turns)
        return None if old is None or new is None else new - old

    def text(self) -> str:
        head = f"{self.id}: {self.status}" + (f" ({self.reason})" if self.reason else "")
        body = str(self.diff) if self.diff is not None and not self.diff.same else ""
        return head + ("\n" + _indented(body) if body else "")


class _Ids:
    """``report.passed`` (``.changed``, ``.failed``, ``.model_changed``): the ids of the cases with the
    status the attribute is named after."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.status = name

    def __get__(self, report: Any, owner: type | None = None) -> Any:
        return self if report is None else report._ids(self.status)


class SuiteReport:
    """Every case's :class:`CaseReport`, in the suite's order (the module docstring)."""

    def __init__(self, cases: list[CaseReport], *, interrupted: bool = False, total: int | None = None,
                 prices: dict | None = None) -> None:
        self.cases = {case.id: case for case in cases}
        self.prices = prices
        """The ``prices=`` today's prices include (the suite header's and the check's)."""
        self.interrupted = interrupted
        """Ctrl-C stopped the check: only the cases that finished are here."""
        self.total = len(self.cases) if total is None else total
        """The cases in the suite (more than ``len(cases)`` when interrupted)."""

    def _ids(self, status: str) -> list[str]:
        return [case.id for case in self.cases.values() if case.status == status]

    passed, changed, failed, model_changed = _Ids(), _Ids(), _Ids(), _Ids()

    @property
    def ok(self) -> bool:
        """Every case ran and passed."""
        return not self.interrupted and all(case.status == "passed" for case in self.cases.values())

    def counts(self) -> dict[str, int]:
        return {status: len(self._ids(status)) for status in STATUSES}

    def headline(self) -> str:
        counts = ", ".join(f"{count} {status.replace('_', ' ')}" for status, count in self.counts().items()
                           if count or status == "passed")
        if self.interrupted:
            return f"interrupted after {len(self.cases)} of {self.total} cases: {counts}"
        return f"{len(self.cases)} case{'s' * (len(self.cases) != 1)}: {counts}"

    @property
    def recorded_cost(self) -> Cost | None:
        """The cases' recorded costs summed (``None`` when the file kept none)."""
        return summed(case.recorded_cost for case in self.cases.values())

    @property
    def cost(self) -> Cost | None:
        """The checked turns' costs at the recorded prices, summed."""
        return summed(case.cost for case in self.cases.values())

    def _not_recorded(self) -> int:
        return sum(case.recorded_cost is None for case in self.cases.values())

    def _not_checked(self) -> int:
        return sum(case.cost is None for case in self.cases.values())

    def _total_delta(self) -> str:
        """Δ of the totals, only when both sum the same cases."""
        return UNKNOWN if self._not_recorded() or self._not_checked() else delta_text(self.recorded_cost, self.cost)

    def cost_line(self) -> str:
        """``cost: recorded $0.0105, checked $0.014 (Δ +$0.0035)``, and how to price what is unpriced."""
        missing = self._not_recorded()
        if self.recorded_cost is None and self.cases:
            line = f"cost: not recorded in this suite file; checked {cost_text(self.cost)} at today's prices"
        else:
            recorded, checked = cost_text(self.recorded_cost), cost_text(self.cost)
            if missing:
                recorded += f" (+{missing} case{'s' * (missing != 1)} not recorded)"
            unchecked = self._not_checked()
            if unchecked:
                checked = ("none" if self.cost is None else checked) + \
                    f" ({unchecked} case{'s' * (unchecked != 1)} not priced: model changed or crashed)"
            delta = self._total_delta()  # "—" (cannot be said) is left out: the line says why already
            line = f"cost: recorded {recorded}, checked {checked}" + (f" (Δ {delta})" if delta not in ("", UNKNOWN) else "")
        unpriced = self.cost.message if self.cost is not None else None
        return line + (f"\n{unpriced}" if unpriced else "")

    def reprice(self, *, prices: dict | None = None) -> Repricing:
        """Each case's checked turns at the recorded prices and at today's (the table now, the suite's
        ``prices=`` and these ``prices``), per case and in total."""
        return repriced(((case.id, case.results, case.cost) for case in self.cases.values() if case.cost is not None),
                        todays_prices(self.prices, prices, "SuiteReport.reprice(prices=…)"))

    def assert_ok(self) -> SuiteReport:
        """This report, or ``AssertionError`` with the text diffs of the first cases that differ."""
        if self.ok:
            return self
        if all(case.status == "passed" for case in self.cases.values()):  # interrupted, nothing differed
            raise AssertionError(f"{self.headline()}: {self.total - len(self.cases)} cases did not run")
        differing = [case for case in self.cases.values() if case.status != "passed"]
        shown = "\n\n".join(case.text() for case in differing[:SHOWN_IN_ASSERT])
        more = len(differing) - SHOWN_IN_ASSERT
        raise AssertionError(f"{self.headline()}\n\n{shown}" + (f"\n\n… and {more} more" if more > 0 else ""))

    def __str__(self) -> str:
        differing = [case.text() for case in self.cases.values() if case.status != "passed"]
        return "\n\n".join([f"{self.headline()}\n{self.cost_line()}", *differing])

    def __repr__(self) -> str:
        return f"<SuiteReport: {self.headline()}>"

    def to_html(self) -> str:
        """The table of cases; each differing row opens to its diff (static HTML, no JavaScript)."""
        rows = "".join(_row(case) for case in self.cases.values())
        return (f'<div class="actx-diff"><style>{DIFF_CSS}{_REPORT_CSS}</style>'
                f'<div class="actx-diff-head">{esc(self.headline())}</div>'
                '<table class="actx-suite"><colgroup><col class="actx-suite-id"><col class="actx-suite-status"><col>'
                '<col class="actx-suite-tokens"><col class="actx-suite-num"><col class="actx-suite-num">'
                '<col class="actx-suite-num"></colgroup><tr><th>case</th><th>status</th><th>what changed</th>'
                '<th class="actx-suite-n">Δ tokens</th><th class="actx-suite-n">recorded</th>'
                '<th class="actx-suite-n">checked</th><th class="actx-suite-n">Δ cost</th></tr>'
                f"{rows}{self._total_row()}</table></div>")

    def _total_row(self) -> str:
        deltas = [case.tokens_delta for case in self.cases.values()]
        tokens = "" if any(delta is None for delta in deltas) or not sum(deltas) else f"{sum(deltas):+d}"
        delta = self._total_delta()
        return (f'<tr class="actx-suite-total"><td>total</td><td colspan="2">{esc(self.headline())}</td>'
                f'<td class="actx-suite-n">{tokens}</td><td class="actx-suite-n">{cost_cell(self.recorded_cost)}</td>'
                f'<td class="actx-suite-n">{cost_cell(self.cost) if self.cost is not None else _UNCHECKED}</td>'
                f'<td class="actx-suite-n">{esc(delta)}</td></tr>')

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self.to_html()}


PROGRESS_MIME = "application/vnd.agentctx.suite-progress+json"
"""The mime type of a run's progress display (``{"verb", "done", "total", "counts"}``): its text and
HTML change while it runs, and an output checker that compares cells (nbval) can tell it by this."""

PROGRESS_INTERVAL = 0.2
"""Seconds between two updates of a progress display (the last one is always shown)."""


class Progress:
    """The progress line of a suite run in a notebook: shown when the run starts (IPython with a kernel
    only, and only if IPython is already imported: a script pays nothing), updated in place through its
    display id at most every ``PROGRESS_INTERVAL`` s, and finished as the report (or a closing line).
    A display that fails turns the line off; the run goes on."""

    def __init__(self, verb: str, total: int) -> None:
        self.verb, self.total = verb, total
        self.done = 0
        self.counts: dict[str, int] = {}
        self._shown = 0.0
        self._handle = _display(self._bundle()) if total else None

    def add(self, outcome: Any) -> None:
        """One case finished (``outcome`` has a ``status``); ``None``: a case that did not run."""
        if outcome is None:
            return
        self.done += 1
        status = str(getattr(outcome, "status", "done"))
        self.counts[status] = self.counts.get(status, 0) + 1
        if self._handle is not None and (time.monotonic() - self._shown >= PROGRESS_INTERVAL
                                         or self.done == self.total):
            self._update(self._bundle())

    def finish(self, report: SuiteReport | None, text: str | None = None) -> None:
        """The line becomes ``report`` (its table), else ``text``."""
        if self._handle is None:
            return
        bundle = report._repr_mimebundle_() if report is not None else {"text/plain": text or "",
                                                                        "text/html": f"<div>{esc(text or '')}</div>"}
        self._update({**bundle, PROGRESS_MIME: self._state()})

    def _state(self) -> dict:
        return {"verb": self.verb, "done": self.done, "total": self.total, "counts": dict(self.counts)}

    def _bundle(self) -> dict:
        counts = ", ".join(f"{count} {status.replace('_', ' ')}" for status, count in self.counts.items())
        line = f"{self.verb}: {self.done}/{self.total} cases" + (f" ({counts})" if counts else "")
        html = (f'<div class="actx-suite-progress"><progress max="{self.total}" value="{self.done}"></progress> '
                f"{esc(line)}</div>")
        return {"text/plain": line, "text/html": html, PROGRESS_MIME: self._state()}

    def _update(self, bundle: dict) -> None:
        self._shown = time.monotonic()
        try:
            self._handle(bundle)
        except Exception:  # noqa: BLE001 - a progress line must never stop a run
            self._handle = None


def _display(bundle: dict) -> Callable[[dict], None] | None:
    """Show ``bundle`` in IPython's kernel and return what updates it in place; ``None`` elsewhere (a
    terminal, a script). IPython is looked up, never imported: a run outside it imports nothing."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython is not None else None
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    from ..widget.saved_output import ipython_publish  # the widget layer is where Jupyter is spoken

    display_id = uuid.uuid4().hex
    try:
        ipython_publish(bundle, display_id, False)
    except Exception:  # noqa: BLE001 - no progress line, the run goes on
        return None
    return lambda update: ipython_publish(update, display_id, True)


_REPORT_CSS = """
.actx-diff .actx-suite td { font-family: var(--jp-code-font-family, monospace); }
.actx-diff .actx-suite details > summary { cursor: pointer; }
.actx-diff .actx-diff-passed { color: var(--jp-success-color1, #2e7d32); }
.actx-diff .actx-diff-failed, .actx-diff .actx-diff-model_changed { color: var(--jp-error-color1, #c62828); }
.actx-diff .actx-suite col.actx-suite-id { width: 12%; }
.actx-diff .actx-suite col.actx-suite-status { width: 10%; }
.actx-diff .actx-suite col.actx-suite-tokens { width: 8%; }
.actx-diff .actx-suite col.actx-suite-num { width: 9%; }
.actx-diff .actx-suite td.actx-suite-n, .actx-diff .actx-suite th.actx-suite-n { text-align: right; white-space: nowrap; }
.actx-diff .actx-suite tr.actx-suite-total td { font-weight: 600;
  border-top: 2px solid var(--jp-border-color1, #757575); }
.actx-diff .actx-cost-none { color: var(--jp-ui-font-color2, GrayText); font-style: italic; }
"""


_UNCHECKED = ('<span class="actx-cost actx-cost-none" title="not priced: no recorded answer fits the new request '
              '(model changed), or the case crashed">—</span>')


def _row(case: CaseReport) -> str:
    delta = case.tokens_delta
    status = f'<span class="actx-diff-status actx-diff-{esc(case.status)}">{esc(case.status.replace("_", " "))}</span>'
    summary = esc(case.summary)
    if case.status != "passed" and (case.reason or (case.diff is not None and not case.diff.same)):
        inner = render_diff(case.diff.turns) if case.diff is not None and not case.diff.same else ""
        reason = f"<pre>{esc(case.reason)}</pre>" if case.reason else ""
        summary = f"<details><summary>{summary or 'details'}</summary>{reason}{inner}</details>"
    shown = "" if delta is None or delta == 0 else f"{delta:+d}"
    checked = cost_cell(case.cost) if case.cost is not None else _UNCHECKED
    return (f'<tr data-case="{esc(case.id)}"><td>{esc(case.id)}</td><td>{status}</td><td>{summary}</td>'
            f'<td class="actx-suite-n">{shown}</td><td class="actx-suite-n">{cost_cell(case.recorded_cost)}</td>'
            f'<td class="actx-suite-n">{checked}</td>'
            f'<td class="actx-suite-n">{esc(delta_text(case.recorded_cost, case.cost) if case.cost else "")}</td></tr>')


def _field(path: str) -> str:
    return path.split("[", 1)[0].split(".", 1)[0]


def _tokens(records: Any) -> int | None:
    total = 0
    for record in records:
        if record is None or not record.usage:
            continue
        value = record.usage.get("totalTokens")
        if not isinstance(value, (int, float)):
            return None
        total += int(value)
    return total


def _indented(text: str) -> str:
    return "\n".join("  " + line if line else line for line in text.splitlines())
