"""Small helpers shared by the renderers: escaping, pretty JSON, clipping, file chips."""

from __future__ import annotations

import html
import json
from typing import Any

from .markdown import render_markdown, scrub
from .urls import host_of

__all__ = ["esc", "attr", "pretty_json", "compact_json", "clip", "format_bytes", "md_div", "file_chip", "thinking_box",
           "tool_call_parts", "text_of", "link", "image_link"]


def esc(value: Any) -> str:
    """Text content: escaped, never markup."""
    return html.escape(scrub(value if isinstance(value, str) else str(value)), quote=False)


def attr(value: Any) -> str:
    """An attribute value (for a double-quoted attribute)."""
    return html.escape(scrub(value if isinstance(value, str) else str(value)), quote=True)


def pretty_json(value: Any) -> str:
    """JSON with two-space indents, as the front end's ``prettyJson`` shows it; never raises."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def text_of(value: Any) -> str:
    """A prop as text: a string as it is, nothing as "", anything else as pretty JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else pretty_json(value)


def format_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover


def link(url: str, text: str, cls: str) -> str:
    """A link to an http(s) URL, opened in a new tab, that tells the page it opens nothing (``rel``)."""
    return (f'<a class="{cls}" href="{attr(url)}" title="{attr(url)}" target="_blank" '
            f'rel="noopener noreferrer nofollow">{esc(text)}</a>')


def image_link(url: str, label: str) -> str:
    """A remote image as a link to it (it loads only on a click): ``Image: label ↗ host``."""
    return link(url, f"Image{': ' + label if label else ''} ↗ {host_of(url)}", "actxd-img-link")


def md_div(text: Any, extra: str = "") -> str:
    return f'<div class="actxd-md{extra}">{render_markdown(text)}</div>'


def file_chip(name: str, mimetype: str, size: int | None) -> str:
    meta = (mimetype or "unknown type") + ("" if size is None else f" · {format_bytes(size)}")
    return ('<span class="actxd-chip actxd-file"><span class="actxd-chip-kind">file</span>'
            f'<span class="actxd-file-name">{esc(name or "(unnamed file)")}</span>'
            f'<span class="actxd-file-meta">{esc(meta)}</span></span>')


def thinking_box(text: Any) -> str:
    return ('<details class="actxd-thinking"><summary>Thinking</summary>'
            f"{md_div(text)}</details>")


def _arguments(args: Any) -> str:
    if isinstance(args, str):
        return f'<pre class="actxd-args actxd-args-raw" data-args="raw" title="arguments (raw, not JSON)">{esc(args)}</pre>'
    return f'<pre class="actxd-args actxd-json" data-args="json">{esc("{}" if args is None else pretty_json(args))}</pre>'


def tool_call_parts(name: str, call_id: str | None, args: Any) -> str:
    """A tool call folded in ``<details>``: the summary names the tool (and call id), the body holds
    the arguments as pretty JSON (or the raw string when they did not parse)."""
    call = "" if call_id is None else f'<span class="actxd-call-id">{esc(call_id)}</span>'
    return (f'<details class="actxd-tool-call"><summary><span class="actxd-tool-head">'
            f'<span class="actxd-tool-kind">tool</span><span class="actxd-tool-name">{esc(name)}</span>{call}'
            f"</span></summary>{_arguments(args)}</details>")
