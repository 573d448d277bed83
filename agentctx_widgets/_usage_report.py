"""The table ``%agentctx usage`` shows: estimated tokens per message, the window share, lifetime usage,
and what the context's turns cost (issue 23), per model, from the context layer's ledger.

Pure Python (no IPython): the report is plain data with an HTML rendering for people (JupyterLab CSS
variables, so it follows the light and dark themes) and a fixed-width text rendering that nbval compares.
Exact counts come from tiktoken only when it is installed *and* its encoding can be had offline (already
cached, or shipped in the bpe-openai wheel): tiktoken downloads encodings on first use, and a notebook
must never wait on the network to show usage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from html import escape as esc
from typing import Any

import orjson

from .context import estimate_context_tokens, fallback_context_window, is_record
from .context.cost import Cost, cost_label
from .context.ledger import Spend, context_spend
from .context.tiktoken_offline import offline_encoding
from .context.types import role_of

__all__ = ["MessageUsage", "UsageReport", "build_usage_report", "cost_text", "try_exact_counter"]

_PREVIEW_CHARS = 48
_DEFAULT_ENCODING = "o200k_base"
_CELL = "padding:2px 8px;border-bottom:1px solid var(--jp-border-color2,#e0e0e0);"
"""The style every cell of the HTML tables starts with."""

ExactCounter = Callable[[str], int]


@dataclass(frozen=True)
class MessageUsage:
    """One row of the report."""

    index: int
    """Position in the context."""
    role: str
    """system / user / assistant / tool, or the record's own type for a metadata record."""
    estimate: int | None
    """Estimated tokens (words × 4/3, rounded up); None for a record, which providers never see."""
    exact: int | None
    """tiktoken's count of the message's text, when available."""
    preview: str
    """The start of the message's text on one line."""


@dataclass(frozen=True)
class UsageReport:
    """What ``%agentctx usage`` displays; ``repr()`` is the deterministic text table."""

    rows: tuple[MessageUsage, ...]
    total: int
    """estimate_context_tokens of the whole context (what the view's gauge shows)."""
    model: str | None
    window: int | None
    """The model's fallback context window, or None when unknown."""
    lifetime: Mapping[str, Any] | None
    """usage_add totals of every model response run_turn finalised in this kernel (None: none yet)."""
    lifetime_responses: int
    context_lifetime: Mapping[str, Any] | None = None
    """The same totals for this context's own turns (None when it has none)."""
    encoding: str | None = None
    """The tiktoken encoding behind the exact counts, or None when there are none."""
    spend: Spend | None = None
    """What this context's turns used and cost in this kernel, by model (``context.ledger``); None when
    the report is of a context no turn ran on (or of a plain list of messages)."""

    @property
    def exact_total(self) -> int | None:
        if self.encoding is None:
            return None
        return sum(row.exact or 0 for row in self.rows)

    @property
    def share(self) -> float | None:
        """Fraction of the window the context uses, or None without a window."""
        return self.total / self.window if self.window else None

    # ---- text -----------------------------------------------------------------------------
    def _header(self) -> str:
        if self.model is None:
            return "Context usage (no model: pass --model NAME for the context window)"
        if self.window is None:
            return f"Context usage, model {self.model} (context window unknown)"
        return f"Context usage, model {self.model} (context window {self.window:,} tokens)"

    def _total_line(self) -> str:
        line = f"total: {self.total:,} tokens (estimate)"
        if self.exact_total is not None:
            line += f", {self.exact_total:,} exact ({self.encoding}, text only)"
        if self.window is not None:
            line += f" = {_percent(self.share or 0.0)} of {self.window:,}"
        return line

    def _lifetime_lines(self) -> list[str]:
        if not self.lifetime or not self.lifetime_responses:
            return ["lifetime in this kernel: no turns run yet"]
        plural = "s" if self.lifetime_responses != 1 else ""
        lines = [f"lifetime in this kernel: {self.lifetime_responses} model response{plural}, {_sum(self.lifetime)}"]
        if self.context_lifetime:
            lines.append(f"  of which this context: {_sum(self.context_lifetime)}")
        return lines

    def _cost_head(self) -> str:
        assert self.spend is not None
        total, calls = self.spend.cost, self.spend.calls
        line = f"cost of this context's turns ({calls} model call{'s' if calls != 1 else ''}): {cost_text(total)}"
        return line + (f"; priced by {total.source}" if total.source else "")

    def _cost_table(self) -> list[list[str]]:
        """Head and one row a model: model, calls, tokens (input + output), cost."""
        assert self.spend is not None
        return [["model", "calls", "tokens", "cost"]] + [
            [m.model, f"{m.calls:,}", f"{_int(m.usage.get('totalTokens')):,}", cost_text(m.cost)]
            for m in self.spend.models]

    def _cost_lines(self) -> list[str]:
        """The cost section of the text (none when no turn ran on the context): the total, a row a model,
        and how to price an unpriced model."""
        if self.spend is None:
            return []
        lines = [self._cost_head(), *_aligned(self._cost_table(), right={1, 2})]
        if self.spend.cost.message:
            lines.append(f"  {self.spend.cost.message}")
        return lines

    def _cells(self) -> list[list[str]]:
        """A row of cells a message: #, role, estimate, the exact count (when there are any), preview."""
        exact = self.encoding is not None
        return [[str(row.index), row.role, _cell(row.estimate), *([_cell(row.exact)] if exact else []),
                 row.preview] for row in self.rows]

    def to_text(self) -> str:
        """The fixed-width table (what nbval compares)."""
        head = ["#", "role", "est."] + (["exact"] if self.encoding is not None else []) + ["preview"]
        lines = [self._header(), *_aligned([head, *self._cells()], right={0, 2, 3})]  # (3: exact or preview)
        if not self.rows:
            lines.append("  (empty context)")
        lines.append(self._total_line())
        lines.extend(self._lifetime_lines())
        lines.extend(self._cost_lines())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.to_text())

    # ---- HTML -----------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        exact = self.encoding is not None
        num = _CELL + "text-align:right;font-family:var(--jp-code-font-family,monospace);"
        text = _CELL + "text-align:left;"  # JupyterLab right-aligns td in rendered HTML by default
        head = "".join(
            f'<th style="{_CELL}text-align:{align};font-weight:600">{esc(label)}</th>'
            for label, align in [("#", "right"), ("role", "left"), ("est. tokens", "right")]
            + ([(f"exact ({self.encoding})", "right")] if exact else [])
            + [("preview", "left")]
        )
        styles = [num, text, num] + ([num] if exact else [])  # then the preview's, with white-space:pre
        rows = []
        for row, cells in zip(self.rows, self._cells()):
            muted = "color:var(--jp-ui-font-color2,#757575);" if row.estimate is None else ""
            tds = "".join(f'<td style="{style}{muted}">{esc(value)}</td>'
                          for style, value in zip(styles, cells))
            rows.append(f'<tr>{tds}<td style="{text}{muted}white-space:pre">{esc(cells[-1])}</td></tr>')
        gauge = ""
        if self.share is not None:
            width = min(100.0, self.share * 100)
            gauge = (
                '<div style="margin:6px 0;height:6px;width:240px;border-radius:3px;'
                'background:var(--jp-layout-color3,#e0e0e0)" role="meter" '
                f'aria-valuemin="0" aria-valuemax="{self.window}" aria-valuenow="{self.total}">'
                f'<div style="height:6px;width:{width:.2f}%;border-radius:3px;'
                'background:var(--jp-brand-color1,#1976d2)"></div></div>'
            )
        return (
            '<div class="agentctx-usage" style="color:var(--jp-ui-font-color1,inherit);'
            'font-family:var(--jp-ui-font-family,sans-serif);font-size:var(--jp-ui-font-size1,13px)">'
            f'<div style="font-weight:600;margin-bottom:4px">{esc(self._header())}</div>'
            f'<table style="border-collapse:collapse"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>'
            f'<div style="margin-top:4px">{esc(self._total_line())}</div>{gauge}'
            + "".join(
                f'<div style="color:var(--jp-ui-font-color2,#757575);white-space:pre">{esc(text)}</div>'
                for text in self._lifetime_lines()
            )
            + self._cost_html()
            + "</div>"
        )

    def _cost_html(self) -> str:
        if self.spend is None:
            return ""
        align = ["left", "right", "right", "right"]
        head, *rows = self._cost_table()
        heads = "".join(f'<th style="{_CELL}text-align:{a};font-weight:600">{esc(h)}</th>'
                        for h, a in zip(head, align))
        body = "".join(
            "<tr>" + "".join(f'<td style="{_CELL}text-align:{a};{_cost_style(i, v)}">{esc(v)}</td>'
                             for i, (v, a) in enumerate(zip(row, align))) + "</tr>"
            for row in rows)
        hint = self.spend.cost.message
        return (
            '<div class="agentctx-usage-cost" style="margin-top:6px">'
            f'<div style="font-weight:600">{esc(self._cost_head())}</div>'
            f'<table style="border-collapse:collapse"><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>'
            + (f'<div style="color:var(--jp-warn-color0,#b26a00)">{esc(hint)}</div>' if hint else "")
            + "</div>"
        )


def _aligned(rows: list[list[str]], right: set[int]) -> list[str]:
    """Text rows as lines of a table: each column but the last padded to its width (right-aligned when its
    index is in ``right``), two spaces before the first and between two; no trailing space."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.rjust(width) if i in right else cell.ljust(width)
                 for i, (cell, width) in enumerate(zip(row, widths))]
        lines.append(("  " + "  ".join([*cells, row[-1]])).rstrip())
    return lines


def _sum(usage: Mapping[str, Any]) -> str:
    """``12 in + 5 out = 17 tokens`` (and the cost when the provider reported one)."""
    text = (
        f"{_int(usage.get('inputTokens')):,} in + {_int(usage.get('outputTokens')):,} out"
        f" = {_int(usage.get('totalTokens')):,} tokens"
    )
    cost = usage.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        text += f", cost {cost:g}"
    return text


def cost_text(cost: Cost) -> str:
    """A cost for the table: ``$0.0035``, ``≈$0.0035 (estimated)`` (a text table has no tooltip to say so),
    ``$0 (free)``, ``unpriced``, ``$0.0035 + unpriced: my-model`` (``context.cost.cost_label``)."""
    return cost_label(cost, approx="≈{} (estimated)", partly=f"unpriced: {', '.join(cost.unpriced)}")


def _cost_style(column: int, value: str) -> str:
    numeric = "font-family:var(--jp-code-font-family,monospace);" if column else ""
    muted = "color:var(--jp-warn-color0,#b26a00);" if column == 3 and value.startswith("unpriced") else ""
    return numeric + muted


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _cell(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _percent(share: float) -> str:
    if 0 < share < 0.0001:
        return "<0.01%"
    return f"{share * 100:.2f}%"


def _message_text(message: Mapping[str, Any]) -> str:
    """Every string a provider would read in the message, space-joined (for preview and exact counts)."""
    parts: list[str] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in ("text", "thinking") and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "toolCall":
            arguments = block.get("arguments")
            if not isinstance(arguments, str):
                arguments = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()
            parts.append(f"{block.get('name', '?')}({arguments})")
        elif kind in ("image", "binary"):
            parts.append(f"[{block.get('mimetype') or kind} {block.get('filename') or ''}]".replace(" ]", "]"))
    return " ".join(parts)


def _preview(text: str) -> str:
    one_line = " ".join(text.split())
    if len(one_line) <= _PREVIEW_CHARS:
        return one_line
    return one_line[: _PREVIEW_CHARS - 1] + "…"


def _role(message: Any) -> str:
    if is_record(message):
        return str(message["type"])
    kind = message.get("type") if isinstance(message, Mapping) else None
    return role_of(kind) or f"type {kind}"


def try_exact_counter(model: str | None) -> tuple[str, ExactCounter] | None:
    """tiktoken's (encoding name, counter) for ``model``, or None when it cannot be had offline.

    The encoding comes from memory (already loaded), from tiktoken's own cache, or from the copy the
    bpe-openai wheel ships (``pip install agentctx-widgets[tiktoken]`` installs both); never from the
    network. No model means o200k_base (the current OpenAI tokenizer); a model tiktoken does not know
    (a Claude or Gemini id) gets no exact count, since an OpenAI tokenizer's count would not be exact.
    """
    try:
        import tiktoken
    except ImportError:
        return None
    if model is None:
        name = _DEFAULT_ENCODING
    else:
        try:
            name = tiktoken.encoding_name_for_model(model)
        except KeyError:
            return None
    encoding = offline_encoding(name)
    if encoding is None:
        return None
    return name, lambda text: len(encoding.encode(text, disallowed_special=()))


def build_usage_report(
    messages: Iterable[Any],
    *,
    model: str | None = None,
    lifetime: Mapping[str, Any] | None = None,
    lifetime_responses: int = 0,
    context_lifetime: Mapping[str, Any] | None = None,
    exact: bool = True,
    exact_counter: tuple[str, ExactCounter] | None = None,
    context: Any = None,
) -> UsageReport:
    """Measure ``messages`` for the report; ``exact_counter`` overrides the tiktoken lookup (tests).
    ``context``: the Context the messages are of, whose turns' cost the report shows (read from the ledger
    ``Context.cost`` reads; nothing when no turn ran on it)."""
    items = list(messages)
    if not exact:
        exact_counter = None
    elif exact_counter is None:
        exact_counter = try_exact_counter(model)
    rows = []
    for index, message in enumerate(items):
        record = is_record(message)
        text = "" if record else _message_text(message)
        rows.append(
            MessageUsage(
                index=index,
                role=_role(message),
                estimate=None if record else estimate_context_tokens([message]),
                exact=None if record or exact_counter is None else exact_counter[1](text),
                preview=_preview(text) if not record else "",
            )
        )
    window = fallback_context_window(model) if model else None
    return UsageReport(
        rows=tuple(rows),
        total=estimate_context_tokens(items),
        model=model,
        window=window,
        lifetime=dict(lifetime) if lifetime else None,
        lifetime_responses=lifetime_responses,
        context_lifetime=dict(context_lifetime) if context_lifetime else None,
        encoding=exact_counter[0] if exact_counter else None,
        spend=_spend_of(context),
    )


def _spend_of(context: Any) -> Spend | None:
    if context is None:
        return None
    spend = context_spend(context)
    return spend if spend.calls else None
