"""Static rendering of a context and its output messages: HTML with scoped CSS and no JavaScript.

``render(context, output)`` gives one self-contained fragment (a root ``<div>`` holding its own
``<style>``) for a notebook cell; ``to_html(context_or_session_file, output)`` a standalone page by
default — ``<!doctype html>``, a charset, and a Content-Security-Policy that lets nothing load but
``data:`` images (and inline styles), so even a sanitiser miss cannot run a script or fetch anything.

What is shown is what the live view shows: roles, Markdown rendered (markdown-it-py, CommonMark plus
tables and strikethrough; raw HTML in it shows as text) and sanitised (nh3), thinking and tool calls folded in ``<details>``, tool
results beneath their call, failed responses and tool errors, records as a line, media under the
remote-resource policy of ``urls.py``, a usage line (with the cost: ``cost.py``), and every output message by type. Everything is
rendered (a static page cannot load more on scroll), in one pass, linear in the size of the context.

Imports only ``context`` and ``output`` (DESIGN.md "Layout"); no Jupyter.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..context import Context, estimate_context_tokens, fallback_context_window, usage_normalize
from ..context.cost import Cost
from .common import attr, esc
from .cost import as_cost, cost_text, cost_title, entries_cost, reported_cost
from .context import render_entries
from .markdown import render_markdown, scrub
from .outputs import OUTPUT_RENDERERS, Options, output_state, render_outputs, reply_keys
from .styles import CSS, PAGE_CSS, ROOT_CLASS

__all__ = ["CSP", "OUTPUT_RENDERERS", "ROOT_CLASS", "render", "render_markdown", "to_html", "usage_line"]

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
"""The Content-Security-Policy of a standalone page: nothing loads but data: images and inline styles."""


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _compact(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1e6:.{0 if n >= 10_000_000 else 1}f}M"
    if n >= 10_000:
        return f"{round(n / 1e3)}K"
    return f"{n:,}"


def usage_line(entries: Sequence[Any], usage: Any = None, model: str | None = None, cost: Any = None) -> str:
    """"≈ N tokens in context (estimate)[ of W (P %)]", given a usage dict its counts, and given a
    :class:`~agentctx_widgets.context.cost.Cost` (or its ``to_dict()``) "cost $0.0035" (``html/cost.py``)."""
    tokens = estimate_context_tokens(entries)
    parts = [f"≈ {tokens:,} tokens in context (estimate)"]
    window = fallback_context_window(model) if model else None
    if window:
        percent = tokens / window * 100
        shown = "<1" if 0 < percent < 1 else str(round(percent))
        parts[0] = f"≈ {_compact(tokens)} / {_compact(window)} tokens in context · {shown}% (estimate)"
    if usage is not None:
        parts.append(_usage_counts(usage))
    priced = as_cost(cost)
    if priced is not None:
        parts.append(f"cost {cost_text(priced, names=True)}")
    elif reported_cost(usage) is not None:
        parts.append(f"cost {reported_cost(usage)} (provider-reported)")
    return " · ".join(parts)


def _usage_counts(usage: Any) -> str:
    normal = usage_normalize(usage) if isinstance(usage, Mapping) else {}
    counts = [f"{label} {_number(normal[key])}" for key, label in (
        ("inputTokens", "input"), ("outputTokens", "output"), ("totalTokens", "total")) if key in normal]
    source = usage.get("source") if isinstance(usage, Mapping) else None
    line = "usage: " + " · ".join(counts) + " tokens" if counts else "usage: (none reported)"
    if isinstance(source, str) and source:
        line += f" ({source})"
    return line


def _usage_footer(entries: Sequence[Any], usage: Any, model: str | None, cost: Cost | None) -> str:
    """The footer: the usage line, its cost part in a span whose title says where the figure came from."""
    head = esc(usage_line(entries, usage, model))
    if cost is None:
        return head
    return (f'{head} · <span class="actxd-cost" data-testid="actx-cost" '
            f'data-unpriced="{"1" if cost.unpriced else "0"}" data-estimated="{"1" if cost.estimated else "0"}" '
            f'title="{attr(cost_title(cost))}">cost {esc(cost_text(cost, names=True))}</span>')


def _entries(context: Any) -> tuple[list, str | None]:
    """The entries and the name of a Context, a session file path, or a plain list of entries."""
    if isinstance(context, Context):
        return context.messages(), context.name or context.id
    if isinstance(context, (str, os.PathLike)):
        loaded = Context.load(context)
        return loaded.messages(), loaded.name or loaded.id or Path(context).stem
    if isinstance(context, Iterable) and not isinstance(context, (bytes, Mapping)):
        return list(context), None
    raise TypeError(f"to_html: expected a Context, a session file path or a list of messages, "
                    f"got {type(context).__name__}")


def render(context: Any, output: Any = None, *, title: str | None = None, usage: Any = None,
           model: str | None = None, start: int = 0, remote_media: bool = False, css: bool = True,
           cost: Any = None) -> str:
    """The static HTML fragment of ``context`` (a ``Context``, a session-file path or a list of
    entries) and, optionally, ``output`` (an ``Output``, its ``state`` or a list of output messages).

    ``title`` heads it (default: the context's name); ``usage`` (a usage dict, any provider's spelling)
    adds its counts to the usage line, ``model`` the share of its context window; ``start`` renders
    entries ``start:`` only, after an "N earlier messages" line. ``remote_media=True`` lets ``image``
    output messages (which hook code sends on purpose) load an http(s) URL at once (the live view waits for a click); by
    default they are links, which load only on a click (a saved notebook's document fetches nothing when
    it is opened: a hook could plant a beacon there); model- and tool-written URLs are links whatever it says. ``css=False`` leaves out the ``<style>``
    (for fragments placed beside one that has it: the rules are scoped to the same root class).
    ``cost`` (a ``Cost``, e.g. ``TurnResult.cost``, or its ``to_dict()``) is shown after the usage; without
    it, what the entries' own ``usage`` and ``model`` say they cost, when any carries usage
    (``html/cost.py``: nothing rather than a wrong figure).
    """
    entries, name = _entries(context)
    priced = as_cost(cost)
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise ValueError(f"render: start must be an int >= 0, got {start!r}")
    start = min(start, len(entries))
    if priced is None:
        priced = entries_cost(entries[start:])
    state, problems = output_state(output)
    heading = title if title is not None else (name or "Context")
    count = len(entries)
    usage_html = _usage_footer(entries, usage, model, priced)
    earlier = (f'<div class="actxd-earlier" data-testid="actx-earlier">{start:,} earlier message{"" if start == 1 else "s"}'
               f"</div>") if start else ""
    body = render_entries(entries, start)
    if not body and not earlier:
        body = '<div class="actxd-empty">(no messages)</div>'
    # an output repeating a reply shown here is one line; one whose reply is among the "earlier" stays whole
    options = Options(remote_media=remote_media, replies=reply_keys(entries[start:]))
    outputs = render_outputs(state, options, problems) if state is not None else ""  # None: no output, no problem
    style = f"<style>{CSS}</style>" if css else ""
    html = (f'<div class="actx-doc {ROOT_CLASS}" data-actx-static="1">{style}'
            f'<header class="actxd-header"><b class="actxd-name" data-testid="actx-header-name">{esc(heading)}</b>'
            '<span class="actxd-sep"> · </span>'
            f'<span class="actxd-count" data-testid="actx-header-count">{count:,} message{"" if count == 1 else "s"}</span>'
            f'</header><div class="actxd-body"><section class="actxd-context" data-testid="actx-context">{earlier}{body}'
            f'</section></div>{outputs}<footer class="actxd-footer actxd-usage" data-testid="actx-usage">{usage_html}'
            f"</footer></div>")
    return scrub(html)


def to_html(context_or_session_file: Any, output: Any = None, *, title: str | None = None, standalone: bool = True,
            usage: Any = None, model: str | None = None, cost: Any = None) -> str:
    """A context (or a session file, loaded with ``Context.load``) as static HTML that runs no script.

    ``standalone=True``: a whole page (``<!doctype html>``, charset, a strict CSP meta tag) that opens
    from disk, offline, and fetches nothing — for CI artifacts and bug reports. ``standalone=False``:
    the fragment for a notebook cell. Either way a remote image is a link that loads only on a click.
    See :func:`render` for ``output``, ``usage``, ``model`` and ``cost``.
    """
    entries, name = _entries(context_or_session_file)  # a session file's skipped lines warn (RuntimeWarning)
    title = title if title is not None else name
    fragment = render(entries, output, title=title, usage=usage, model=model, cost=cost)
    if not standalone:
        return fragment
    page_title = f"{title} · agentctx" if title else "agentctx context"
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="referrer" content="no-referrer">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="color-scheme" content="light dark">'
            f"<title>{esc(scrub(page_title))}</title><style>{PAGE_CSS}</style></head>\n<body>\n{fragment}\n</body></html>\n")
