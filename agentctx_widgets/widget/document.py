"""``TurnDocument``: what a cell keeps once its turn has settled — static HTML and a text transcript.

Why: a live widget shows nothing where no kernel and no JavaScript run (GitHub, nbviewer, an nbconvert
page, a mail preview), and a notebook is a document. So a turn's cell ends holding this instead: the
turn's messages (earlier ones as one "N earlier messages" line), the output messages, and the usage
line with what the turn cost, as HTML that runs no script (``agentctx_widgets.html``) and as ``text/plain`` for nbval. An
output message that repeats a block of a reply shown above (the runner's copies of the reply's text,
thinking and tool calls) is one line in both, as in the live view (docs/decisions.md).

Built from a view's state (``ContextView.state()``), so it shows exactly what the view showed.
"""

from __future__ import annotations

import html as html_text
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from agentctx_widgets.context.cost import Cost
from agentctx_widgets.html import render, usage_line
from agentctx_widgets.html.cost import as_cost, entries_cost
from agentctx_widgets.html.outputs import repeat_key, repeat_label, reply_keys

from .transcript import MAX_LINES, message_lines, output_line

__all__ = ["TurnDocument", "TurnPart"]


@dataclass(frozen=True)
class TurnPart:
    """One view's share of a document: its context from ``start`` on, its output messages, its usage."""

    title: str
    context: Sequence[Any]
    outputs: Mapping[str, Any] | None = None
    """A delta-engine state ``{order, messages}`` (what the view showed), or None."""
    start: int = 0
    """Entries before this index show as one "N earlier messages" line."""
    pending: Mapping[str, Any] | None = None
    """A reply still being assembled when the turn stopped (an interrupt, a failure): shown last."""
    usage: Mapping[str, Any] | None = None
    model: str | None = None
    failure: Mapping[str, Any] | None = None
    """Why the turn failed (``hooks.errors.failure_report``): shown last, in the text nbval compares too,
    so a regression check that fails says why in its diff."""
    diagnostics: Sequence[Mapping[str, Any]] = ()
    """The turn's diagnostics (``{code, message, where, hint}``), one line each."""
    cost: Cost | Mapping[str, Any] | None = None
    """What the turn cost (``TurnResult.cost``, or its ``to_dict()``), shown after the usage; without it,
    what the turn's messages say they cost when any carries usage and a model (``html/cost.py``)."""

    @classmethod
    def of_state(cls, state: Mapping[str, Any], *, start: int = 0, usage: Mapping[str, Any] | None = None,
                 model: str | None = None, title: str | None = None, failure: Mapping[str, Any] | None = None,
                 diagnostics: Sequence[Mapping[str, Any]] = (), cost: Cost | None = None) -> TurnPart:
        """The part for a ``ContextView.state()``."""
        header = state.get("header") or {}
        return cls(title=title or header.get("name") or "context", context=list(state.get("context") or []),
                   outputs=state.get("outputs"), start=start, pending=state.get("pending"), usage=usage,
                   model=model if model is not None else header.get("model"), failure=failure,
                   diagnostics=tuple(diagnostics or ()), cost=cost)

    @cached_property
    def priced(self) -> Cost | None:
        """The cost shown: :attr:`cost`, else the turn's entries' own (``None``: no cost line)."""
        given = as_cost(self.cost)
        return given if given is not None else entries_cost(self.entries()[min(self.start, len(self.context)):])

    def entries(self) -> list[Any]:
        return [*self.context, self.pending] if self.pending is not None else list(self.context)

    def html(self, *, css: bool = True) -> str:
        outputs = self.outputs if self.outputs and self.outputs.get("order") else None
        page = render(self.entries(), outputs, title=self.title, usage=self.usage, model=self.model,
                      start=min(self.start, len(self.context)), css=css, cost=self.priced)
        return page + self._notes_html()

    def notes(self) -> list[str]:
        """The failure (what, where, the message, the hint) and the diagnostics, one line each."""
        lines = []
        if self.failure:
            lines.append(f"failed: {self.failure.get('summary') or self.failure.get('message')}")
            if self.failure.get("hint"):
                lines.append(f"hint: {self.failure['hint']}")
        for item in self.diagnostics:
            where = f" ({item['where']})" if item.get("where") else ""
            lines.append(f"diagnostic {item.get('code')}{where}: {item.get('message')}")
        return lines

    def _notes_html(self) -> str:
        lines = self.notes()
        if not lines:
            return ""
        rows = "".join(f"<div>{html_text.escape(line)}</div>" for line in lines)
        colour = "var(--jp-error-color1, #d32f2f)" if self.failure else "var(--jp-warn-color1, #f57c00)"
        return (f'<div class="actx-turn-notes" style="margin: 4px 0; padding: 4px 10px; border-left: 3px solid '
                f'{colour}; font-family: var(--jp-code-font-family, monospace); font-size: 12px; '
                f'white-space: pre-wrap; overflow-wrap: anywhere">{rows}</div>')

    def text(self) -> str:
        entries = self.entries()
        start = min(self.start, len(self.context))
        count = len(self.context)
        lines = [f'"{self.title}" · {count} message{"" if count == 1 else "s"}']
        if start:
            lines.append(f"… {start:,} earlier message{'' if start == 1 else 's'}")
        body = [line for message in entries[start:] for line in message_lines(message)]
        if self.outputs:
            replies = reply_keys(entries[start:])
            body += [self._output_line(self.outputs["messages"][key], replies) for key in self.outputs.get("order", [])]
        if len(body) > MAX_LINES:
            body = [*body[:MAX_LINES], f"… {len(body) - MAX_LINES} more lines"]
        lines += body
        lines.append(usage_line(self.context, self.usage, self.model, self.priced))
        lines += self.notes()
        return "\n".join(lines)


    @staticmethod
    def _output_line(message: Mapping[str, Any], replies: frozenset[str]) -> str:
        """``output_line``, or for an output repeating a reply shown above its tag and one reference
        (the HTML folds it the same way: docs/decisions.md)."""
        if repeat_key(message) not in replies:
            return output_line(message)
        done = " done" if message.get("done") is True else ""
        return f"({message.get('type')} {message.get('id')}{done}) {repeat_label(dict(message)).split(' · ', 1)[1]}"


class TurnDocument:
    """A settled turn (or several side by side) as a cell output: ``text/html`` and ``text/plain``.

    ``css`` puts the stylesheet in this document; a notebook needs it once (the rules are scoped to
    one class, so one copy styles every document on the page).
    """

    def __init__(self, parts: Sequence[TurnPart], *, css: bool = True) -> None:
        if not parts:
            raise ValueError("TurnDocument: give at least one part")
        self.parts = tuple(parts)
        self.css = css

    @cached_property
    def _html(self) -> str:  # rendered once: a front end asks for the bundle more than once
        fragments = [part.html(css=self.css and i == 0) for i, part in enumerate(self.parts)]
        if len(fragments) == 1:
            return fragments[0]
        cells = "".join(f'<div style="flex: 1 1 0; min-width: 0">{fragment}</div>' for fragment in fragments)
        return f'<div class="actx-turns" style="display: flex; gap: 8px; align-items: flex-start">{cells}</div>'

    def html(self) -> str:
        return self._html

    def text(self) -> str:
        return "\n\n".join(part.text() for part in self.parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()
