"""``reprice()``: the same calls at the prices a suite was recorded with and at today's, per case and in
total (``suite/costs.py`` has the rule that keeps a check at the recorded prices)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal

from ..context.cost import Cost
from ..html.common import esc
from .costs import NOT_RECORDED, UNKNOWN, cost_delta, cost_text, delta_text, summed, today
from .diff_html import DIFF_CSS

__all__ = ["Repricing", "repriced"]

_TOTAL = ' class="actx-suite-total"'
_CSS = """
.actx-diff table.actx-suite-reprice { width: auto; min-width: 50%; }
.actx-diff table.actx-suite-reprice td + td { text-align: right; white-space: nowrap; }
.actx-diff table.actx-suite-reprice tr.actx-suite-total td { font-weight: 600;
  border-top: 2px solid var(--jp-border-color1, #757575); }
"""


class Repricing:
    """The same calls at the recorded prices and at today's, per case and in total (``reprice()``)."""

    def __init__(self, rows: list[tuple[str, Cost | None, Cost | None]]) -> None:
        self.rows = rows
        """``(case id, at the recorded prices, at today's prices)``; ``None`` where the file kept no cost
        (a turn without its calls cannot be priced again either)."""
        self.recorded = summed(row[1] for row in rows)
        self.today = summed(row[2] for row in rows)
        self.missing = sum(row[1] is None for row in rows)

    @property
    def delta(self) -> Decimal | None:
        """Today's total less the recorded one (``None`` when it cannot be said)."""
        return None if self.missing else cost_delta(self.recorded, self.today)

    def sources(self) -> str:
        then, now = (cost.source if cost is not None and cost.source else NOT_RECORDED if cost is None else "none needed"
                     for cost in (self.recorded, self.today))
        return f"recorded prices: {then}; today's prices: {now}"

    def _table(self) -> list[tuple[str, str, str, str]]:
        rows = [(case, cost_text(then), cost_text(now), delta_text(then, now)) for case, then, now in self.rows]
        more = f" (+{self.missing} not recorded)" if self.missing and self.recorded is not None else ""
        rows.append(("total", cost_text(self.recorded) + more, cost_text(self.today),
                     UNKNOWN if self.missing else delta_text(self.recorded, self.today)))
        return rows

    def __str__(self) -> str:
        rows = [("case", "recorded prices", "today's prices", "Δ cost"), *self._table()]
        widths = [max(len(row[column]) for row in rows) for column in range(4)]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
        return "\n".join([*lines, self.sources()])

    def __repr__(self) -> str:
        return f"<Repricing: {len(self.rows)} cases, {self._table()[-1][1]} recorded, {cost_text(self.today)} today>"

    def to_html(self) -> str:
        table = self._table()
        body = "".join(f"<tr{_TOTAL if index == len(self.rows) else ''}><td>{esc(case)}</td><td>{esc(then)}</td>"
                       f"<td>{esc(now)}</td><td>{esc(delta)}</td></tr>"
                       for index, (case, then, now, delta) in enumerate(table))
        return (f'<div class="actx-diff"><style>{DIFF_CSS}{_CSS}</style><div class="actx-diff-head">{esc(self.sources())}'
                '</div><table class="actx-suite actx-suite-reprice"><tr><th>case</th><th>recorded prices</th><th>today\'s prices</th>'
                f"<th>Δ cost</th></tr>{body}</table></div>")

    def _repr_html_(self) -> str:
        return self.to_html()


def repriced(cases: Iterable[tuple[str, list[dict], Cost | None]], prices: Mapping | None) -> Repricing:
    """Each case's turns (``(id, turns, cost at the recorded prices)``) priced again with today's table."""
    now = today(prices)
    rows = []
    for case, turns, then in cases:
        kept = all(isinstance(turn.get("calls"), list) for turn in turns)
        rows.append((case, then, sum((now(call) for turn in turns for call in turn["calls"] if isinstance(call, Mapping)),
                                     Cost.zero()) if kept else None))
    return Repricing(rows)
