"""Context entries → HTML: one renderer per message kind and one per content block type, behind
lookup tables (the front end's ``messages.js`` and ``blocks.js``, drawn once instead of live).

Tool results are linked to their call: a tool-result message whose ``callId`` matches a ``toolCall``
block of an earlier assistant message in the rendering is drawn beneath that call (the first result
for a call; a second one stands alone, as does a result whose call is not shown).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..context import error_text
from ..context.types import role_of
from .common import (attr, clip, compact_json, esc, file_chip, image_link, md_div, pretty_json, thinking_box,
                     tool_call_parts)
from .urls import base64_size, is_inline_image, is_remote_url, try_data_url

__all__ = ["BLOCK_RENDERERS", "MESSAGE_RENDERERS", "LABELS", "kind_of", "render_entries"]

LABELS = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool result", "unknown": "Unknown entry"}


def kind_of(entry: Any) -> str:
    """A message kind (system, user, assistant, tool), ``record`` (string type) or ``unknown``."""
    if not isinstance(entry, dict):
        return "unknown"
    kind = entry.get("type")
    if isinstance(kind, str):
        return "record"
    if isinstance(kind, float):  # 3.0 is a message type; nan, inf and 3.5 are not
        if not math.isfinite(kind) or kind != int(kind):
            return "unknown"
        kind = int(kind)
    return role_of(kind) or "unknown"


class Env:
    """What a block renderer may ask about the rendering around it."""

    __slots__ = ("results", "where")

    def __init__(self, results: dict[str, tuple[int, dict]] | None, where: str) -> None:
        self.results = results  # callId → (index, tool-result message) drawn beneath that call
        self.where = where


# ---- blocks ----------------------------------------------------------------------------------------

def _block(kind: str, body: str, extra: str = "") -> str:
    return f'<div class="actxd-block actxd-block-{kind}" data-block="{kind}"{extra}>{body}</div>'


def _text(block: dict, env: Env) -> str:
    return _block("text", md_div(block.get("text", "")))


def _thinking(block: dict, env: Env) -> str:
    return _block("thinking", thinking_box(block.get("text", "")))


def _tool_call(block: dict, env: Env) -> str:
    call_id = block.get("callId") if isinstance(block.get("callId"), str) else ""
    name = block.get("name")
    body = tool_call_parts("(unnamed tool)" if name is None else str(name), call_id or None, block.get("arguments"))
    linked = env.results.get(call_id) if env.results and call_id else None
    if linked is not None:
        body += render_tool_result(linked[1], linked[0], linked=True)
    return _block("toolCall", body, f' data-call-id="{attr(call_id)}"' if call_id else "")


def _image(block: dict, env: Env) -> str:
    mimetype = next((v for v in (block.get("mimetype"), block.get("mimeType"), block.get("mediaType"))
                     if isinstance(v, str)), "image/png")
    base64 = next((v for v in (block.get("content"), block.get("data")) if isinstance(v, str)), None)
    source = block.get("source")
    url = block.get("url") if isinstance(block.get("url"), str) else (
        source.get("url") if isinstance(source, dict) and isinstance(source.get("url"), str) else None)
    label = str(block.get("filename") or block.get("alt") or "")
    inline = try_data_url(mimetype, base64, "image") if base64 is not None else (
        url if url and is_inline_image(url) else None)
    if inline:
        body = f'<img class="actxd-img" src="{attr(inline)}" alt="{attr(label or "image")}">'
    elif url and is_remote_url(url):
        body = image_link(url, label)
    else:
        body = file_chip(label or "image", mimetype, None if base64 is None else base64_size(base64))
    return _block("image", body)


def _binary(block: dict, env: Env) -> str:
    mimetype = str(block.get("mimetype") or "")
    filename = str(block.get("filename") or "")
    base64 = block.get("content") if isinstance(block.get("content"), str) else ""
    body = ""
    if mimetype.split("/")[0].lower() == "image":
        src = try_data_url(mimetype, base64, "image")
        if src:
            body = f'<img class="actxd-img" src="{attr(src)}" alt="{attr(filename or "image")}">'
    body += file_chip(filename, mimetype, base64_size(base64))
    return _block("binary", body, f' data-mimetype="{attr(mimetype)}"')


def _unknown_block(block: Any, env: Env) -> str:
    kind = block.get("type") if isinstance(block, dict) else None
    return _block("unknown", f'<div class="actxd-label">block: {esc("?" if kind is None else kind)}</div>'
                             f'<pre class="actxd-json">{esc(pretty_json(block))}</pre>')


BLOCK_RENDERERS: dict[str, Callable[[dict, Env], str]] = {
    "text": _text, "thinking": _thinking, "toolCall": _tool_call, "image": _image, "binary": _binary,
}


def render_block(block: Any, env: Env) -> str:
    kind = block.get("type") if isinstance(block, dict) else None
    render = BLOCK_RENDERERS.get(kind, _unknown_block) if isinstance(kind, str) else _unknown_block
    try:
        return render(block, env)
    except Exception as exc:  # noqa: BLE001 - one bad block never loses the rest
        return render_failure(env.where, exc, block)


def render_failure(where: str, exc: BaseException, value: Any) -> str:
    return (f'<div class="actxd-error" data-kind="render-error"><div>Could not render {esc(where)}: {esc(exc)}</div>'
            f'<pre class="actxd-json">{esc(pretty_json(value))}</pre></div>')


# ---- messages --------------------------------------------------------------------------------------

def _response_error(message: dict) -> str:
    text = error_text(message)
    if not text:
        return ""
    error = message.get("error")
    retry = error.get("retry") if isinstance(error, dict) else None
    hint = "" if retry is None or retry is False else (
        f'<div class="actxd-retry">Retry hint: {esc(retry if isinstance(retry, str) else compact_json(retry))}</div>')
    return (f'<div class="actxd-error" role="alert" data-testid="actx-response-error">'
            f'<span class="actxd-error-title">Response failed: </span><span class="actxd-error-message">{esc(text)}</span>'
            f"{hint}</div>")


def _metadata(message: dict) -> str:
    rest = {key: value for key, value in message.items() if key not in ("type", "content", "error")}
    if not rest:
        return ""
    return (f'<details class="actxd-meta"><summary>metadata</summary>'
            f'<pre class="actxd-json">{esc(pretty_json(rest))}</pre></details>')


def _article(kind: str, index: int, body: str, extra_class: str = "") -> str:
    return (f'<article class="actxd-msg actxd-msg-{kind}{extra_class}" data-kind="{kind}" data-index="{index}">'
            f'<div class="actxd-role"><b>{LABELS.get(kind, kind)}</b></div><div class="actxd-msg-body">{body}</div></article>')


def _conversational(kind: str) -> Callable[[dict, int, Env], str]:
    def render(message: dict, index: int, env: Env) -> str:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        parts = []
        for i, block in enumerate(blocks):
            env.where = f"context[{index}].content[{i}]"
            parts.append(render_block(block, env))
        error = _response_error(message)
        parts += [error, _metadata(message)]
        return _article(kind, index, "".join(parts), " actxd-msg-failed" if error else "")
    return render


def render_tool_result(message: dict, index: int, *, linked: bool) -> str:
    """A tool result's body: text blocks as preformatted text, other blocks by type."""
    failed = message.get("error") is True
    call_id = message.get("callId") if isinstance(message.get("callId"), str) else ""
    call = f"call {call_id or '(no call id)'}"
    head = ("✖ Tool failed" if failed else "↳ Result") if linked else (
        f"✖ Tool failed · {call}" if failed else f"Result of {call}")
    parts = [f'<div class="actxd-tool-result-head">{esc(head)}</div>']
    content = message.get("content")
    env = Env(None, "")
    for i, block in enumerate(content if isinstance(content, list) else []):
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(f'<pre class="actxd-tool-output" data-block="text">{esc(block.get("text", ""))}</pre>')
        else:
            env.where = f"context[{index}].content[{i}]"
            parts.append(render_block(block, env))
    extra = (f' data-index="{index}"' if linked else "") + (f' data-call-id="{attr(call_id)}"' if call_id else "") + (
        ' data-error="true"' if failed else "")
    return (f'<div class="actxd-tool-result{" actxd-tool-failed" if failed else ""}" data-testid="actx-tool-result"{extra}>'
            f'{"".join(parts)}</div>')


def _tool(message: dict, index: int, env: Env) -> str:
    failed = message.get("error") is True
    return _article("tool", index, render_tool_result(message, index, linked=False), " actxd-msg-failed" if failed else "")


def _record(message: dict, index: int, env: Env) -> str:
    line = compact_json({key: value for key, value in message.items() if key != "type"})
    return (f'<details class="actxd-record" data-kind="record" data-index="{index}"><summary>'
            f'<span class="actxd-chip"><span class="actxd-chip-kind">record</span></span> {esc(message.get("type"))} '
            f'<span class="actxd-record-line">{esc(clip(line, 160))}</span></summary>'
            f'<pre class="actxd-json">{esc(pretty_json(message))}</pre></details>')


def _unknown(message: Any, index: int, env: Env) -> str:
    return _article("unknown", index, f'<pre class="actxd-json">{esc(pretty_json(message))}</pre>')


MESSAGE_RENDERERS: dict[str, Callable[[Any, int, Env], str]] = {
    "system": _conversational("system"),
    "user": _conversational("user"),
    "assistant": _conversational("assistant"),
    "tool": _tool,
    "record": _record,
    "unknown": _unknown,
}


def _links(entries: Sequence[Any], start: int) -> tuple[dict[int, dict[str, tuple[int, dict]]], set[int]]:
    """owner index → {callId: (result index, result)}, and the result indexes drawn beneath a call."""
    owners: dict[str, int] = {}
    by_owner: dict[int, dict[str, tuple[int, dict]]] = {}
    linked: set[int] = set()
    for i in range(start, len(entries)):
        entry = entries[i]
        kind = kind_of(entry)
        if kind == "assistant" and isinstance(entry.get("content"), list):
            for block in entry["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("callId"), str):
                    owners[block["callId"]] = i
        elif kind == "tool" and isinstance(entry.get("callId"), str):
            owner = owners.get(entry["callId"])
            if owner is None:
                continue
            calls = by_owner.setdefault(owner, {})
            if entry["callId"] in calls:
                continue  # a second result for one call stands alone
            calls[entry["callId"]] = (i, entry)
            linked.add(i)
    return by_owner, linked


CHUNK = 50
"""Entries per ``actxd-chunk`` (a box the browser skips while it is off screen)."""


def render_entries(entries: Sequence[Any], start: int = 0) -> str:
    """Entries ``start:`` of a context, in order, in chunks of :data:`CHUNK`; linear in their size."""
    by_owner, linked = _links(entries, start)
    parts: list[str] = []
    for i in range(start, len(entries)):
        if i in linked:
            continue
        entry = entries[i]
        kind = kind_of(entry)
        env = Env(by_owner.get(i), f"context[{i}]")
        try:
            parts.append(MESSAGE_RENDERERS[kind](entry, i, env))
        except Exception as exc:  # noqa: BLE001 - one bad entry never blanks the rendering
            parts.append(render_failure(f"context[{i}]", exc, entry))
            for index, result in (env.results or {}).values():  # its results are drawn nowhere else
                parts.append(render_tool_result(result, index, linked=False))
    return "".join(f'<div class="{_chunk_class(i, len(parts[i:i + CHUNK]))}">{"".join(parts[i:i + CHUNK])}</div>'
                   for i in range(0, len(parts), CHUNK))


def _chunk_class(start: int, size: int) -> str:
    """Only a full chunk after the first may be skipped off screen (``actxd-lazy``): its placeholder height
    (3,000 px for 50 entries) is then about its real one. A short document, a turn's, is never skipped, so
    it never shows an empty box that jumps when scrolled to (and is all there with JavaScript off)."""
    return "actxd-chunk actxd-lazy" if start > 0 and size == CHUNK else "actxd-chunk"
