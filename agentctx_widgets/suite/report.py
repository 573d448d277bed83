"""What a suite check found: a status per case, the diffs, and the ways to read them.

``report.passed / .changed / .failed / .model_changed`` are lists of case ids; ``report.cases[id]`` is a
:class:`CaseReport` with its ``status``, ``diff`` and ``reason``. ``str(report)`` is a summary and the
text diffs of the cases that differ; in a notebook the report is a table (case, status, what changed,
Δ tokens) whose rows open to the case's side-by-side diff (``<details>``, no JavaScript, so it reads
saved and on GitHub). ``report.assert_ok()`` raises ``AssertionError`` with the text diffs of the first
cases that differ, so a regression notebook under nbval, or a pytest test, fails with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..html.common import esc
from .diff import Diff
from .diff_html import DIFF_CSS, render_diff

__all__ = ["STATUSES", "CaseReport", "SuiteReport"]

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


class SuiteReport:
    """Every case's :class:`CaseReport`, in the suite's order (the module docstring)."""

    def __init__(self, cases: list[CaseReport]) -> None:
        self.cases = {case.id: case for case in cases}

    def _ids(self, status: str) -> list[str]:
        return [case.id for case in self.cases.values() if case.status == status]

    @property
    def passed(self) -> list[str]:
        return self._ids("passed")

    @property
    def changed(self) -> list[str]:
        return self._ids("changed")

    @property
    def failed(self) -> list[str]:
        return self._ids("failed")

    @property
    def model_changed(self) -> list[str]:
        return self._ids("model_changed")

    @property
    def ok(self) -> bool:
        """Every case passed."""
        return all(case.status == "passed" for case in self.cases.values())

    def counts(self) -> dict[str, int]:
        return {status: len(self._ids(status)) for status in STATUSES}

    def headline(self) -> str:
        counts = self.counts()
        return f"{len(self.cases)} case{'s' * (len(self.cases) != 1)}: " + ", ".join(
            f"{count} {status.replace('_', ' ')}" for status, count in counts.items() if count or status == "passed")

    def assert_ok(self) -> SuiteReport:
        """This report, or ``AssertionError`` with the text diffs of the first cases that differ."""
        if self.ok:
            return self
        differing = [case for case in self.cases.values() if case.status != "passed"]
        shown = "\n\n".join(case.text() for case in differing[:SHOWN_IN_ASSERT])
        more = len(differing) - SHOWN_IN_ASSERT
        raise AssertionError(f"{self.headline()}\n\n{shown}" + (f"\n\n… and {more} more" if more > 0 else ""))

    def __str__(self) -> str:
        differing = [case.text() for case in self.cases.values() if case.status != "passed"]
        return "\n\n".join([self.headline(), *differing])

    def __repr__(self) -> str:
        return f"<SuiteReport: {self.headline()}>"

    def to_html(self) -> str:
        """The table of cases; each differing row opens to its diff (static HTML, no JavaScript)."""
        rows = "".join(_row(case) for case in self.cases.values())
        return (f'<div class="actx-diff"><style>{DIFF_CSS}{_REPORT_CSS}</style>'
                f'<div class="actx-diff-head">{esc(self.headline())}</div>'
                '<table class="actx-suite"><tr><th>case</th><th>status</th><th>what changed</th>'
                f"<th>Δ tokens</th></tr>{rows}</table></div>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self.to_html()}


_REPORT_CSS = """
.actx-diff .actx-suite td { font-family: var(--jp-code-font-family, monospace); }
.actx-diff .actx-suite details > summary { cursor: pointer; }
.actx-diff .actx-diff-passed { color: var(--jp-success-color1, #2e7d32); }
.actx-diff .actx-diff-failed, .actx-diff .actx-diff-model_changed { color: var(--jp-error-color1, #c62828); }
"""


def _row(case: CaseReport) -> str:
    delta = case.tokens_delta
    status = f'<span class="actx-diff-status actx-diff-{esc(case.status)}">{esc(case.status.replace("_", " "))}</span>'
    summary = esc(case.summary)
    if case.status != "passed" and (case.reason or (case.diff is not None and not case.diff.same)):
        inner = render_diff(case.diff.turns) if case.diff is not None and not case.diff.same else ""
        reason = f"<pre>{esc(case.reason)}</pre>" if case.reason else ""
        summary = f"<details><summary>{summary or 'details'}</summary>{reason}{inner}</details>"
    shown = "" if delta is None or delta == 0 else f"{delta:+d}"
    return (f'<tr data-case="{esc(case.id)}"><td>{esc(case.id)}</td><td>{status}</td><td>{summary}</td>'
            f"<td>{shown}</td></tr>")


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
