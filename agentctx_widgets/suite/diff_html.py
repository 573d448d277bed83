"""A :class:`.diff.Diff` as static HTML: old and new side by side, the changed words marked.

No JavaScript, so it reads the same live, saved, on GitHub and in nbconvert's HTML. Colours follow
JupyterLab's theme variables (light and dark) with fallbacks for pages that have none; every rule sits
under one class, so nothing leaks onto the page; the cell rules name it twice, to outweigh JupyterLab's
``:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`` (right-aligned cells) in a notebook and its export.
"""

from __future__ import annotations

from typing import Any

from ..context.cost import Cost
from ..html.common import esc
from .changes import MISSING, Change, TurnDiff, shown, word_ops
from .costs import cost_cell, delta_text

__all__ = ["render_diff", "DIFF_CSS"]

DIFF_CSS = """
.actx-diff { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px;
  color: var(--jp-ui-font-color1, CanvasText); background: var(--jp-layout-color0, Canvas);
  color-scheme: light dark; padding: 2px 4px; }
.actx-diff .actx-diff-head { margin: 4px 0 8px; color: var(--jp-ui-font-color2, GrayText); }
.actx-diff table { border-collapse: collapse; width: 100%; table-layout: fixed; margin-bottom: 12px; }
.actx-diff.actx-diff th, .actx-diff.actx-diff td { border: 1px solid var(--jp-border-color2, #bdbdbd);
  padding: 4px 8px; vertical-align: top; text-align: left; }
.actx-diff th { background: var(--jp-layout-color2, rgba(127, 127, 127, 0.12)); font-weight: 600; }
.actx-diff td.actx-diff-path { width: 22%; font-family: var(--jp-code-font-family, monospace);
  color: var(--jp-ui-font-color2, GrayText); word-break: break-all; }
.actx-diff td.actx-diff-side { white-space: pre-wrap; word-break: break-word;
  font-family: var(--jp-code-font-family, monospace); }
.actx-diff del { background: rgba(229, 57, 53, 0.22); text-decoration: line-through; }
.actx-diff ins { background: rgba(67, 160, 71, 0.25); text-decoration: none; }
.actx-diff .actx-diff-delta { color: var(--jp-ui-font-color2, GrayText); }
.actx-diff .actx-diff-none { color: var(--jp-ui-font-color3, GrayText); font-style: italic; }
.actx-diff .actx-diff-status { font-weight: 600; }
.actx-diff .actx-diff-added { color: var(--jp-success-color1, #2e7d32); }
.actx-diff .actx-diff-removed { color: var(--jp-error-color1, #c62828); }
.actx-diff .actx-diff-changed { color: var(--jp-warn-color1, #e65100); }
"""


def render_diff(turns: tuple[TurnDiff, ...], *, standalone: bool = False, title: str | None = None) -> str:
    """The turns of a diff as HTML: a fragment, or a whole page (``standalone``)."""
    changed = [turn for turn in turns if turn.status != "same"]
    head = (f"{len(turns)} turn{'s' * (len(turns) != 1)}: "
            + (f"{len(changed)} changed" if changed else "no differences"))
    body = "".join(_turn_table(turn) for turn in changed)
    fragment = (f'<div class="actx-diff"><style>{DIFF_CSS}</style><div class="actx-diff-head">{esc(head)}</div>'
                f"{body}</div>")
    if not standalone:
        return fragment
    return ('<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{esc(title or 'agentctx diff')}</title></head><body>{fragment}</body></html>")


def _turn_table(turn: TurnDiff) -> str:
    caption = (f'<span class="actx-diff-status actx-diff-{turn.status}">{esc(turn.status)}</span> · '
               f"turn {turn.index} · {esc(turn.input[:120])}")
    if turn.status == "changed":
        rows = "".join(_change_row(change) for change in turn.changes)
    else:
        there = turn.new if turn.status == "added" else turn.old
        cells = (_none(), _plain(there.text)) if turn.status == "added" else (_plain(there.text), _none())
        rows = _row("text", *cells)
    return (f'<table data-turn="{turn.index}"><caption style="text-align:left">{caption}</caption>'
            "<tr><th>field</th><th>before</th><th>after</th></tr>"
            f"{rows}</table>")


def _change_row(change: Change) -> str:
    if isinstance(change.old, Cost) and isinstance(change.new, Cost):
        delta = delta_text(change.old, change.new)
        shown_delta = f' <span class="actx-diff-delta">({esc(delta)})</span>' if delta else ""
        return _row(change.path, f"<del>{cost_cell(change.old)}</del>", f"<ins>{cost_cell(change.new)}</ins>{shown_delta}")
    if isinstance(change.old, str) and isinstance(change.new, str):
        ops = word_ops(change.old, change.new)
        old = "".join(esc(text) if op == "=" else f"<del>{esc(text)}</del>" for op, text in ops if op != "+")
        new = "".join(esc(text) if op == "=" else f"<ins>{esc(text)}</ins>" for op, text in ops if op != "-")
        return _row(change.path, old, new)
    old = _none() if change.old is MISSING else f"<del>{esc(shown(change.old))}</del>"
    new = _none() if change.new is MISSING else f"<ins>{esc(shown(change.new))}</ins>"
    if _number(change.old) and _number(change.new):
        new += f' <span class="actx-diff-delta">({change.new - change.old:+g})</span>'
    return _row(change.path, old, new)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _row(path: str, old: str, new: str) -> str:
    return (f'<tr><td class="actx-diff-path">{esc(path)}</td><td class="actx-diff-side">{old}</td>'
            f'<td class="actx-diff-side">{new}</td></tr>')


def _plain(text: Any) -> str:
    return esc(text) if text else _none()


def _none() -> str:
    return '<span class="actx-diff-none">(none)</span>'
