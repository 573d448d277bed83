"""A deterministic plain-text transcript of a ContextView state (its ``repr`` / ``text/plain``).

Why: nbval compares ``text/plain`` outputs, so the text must not hold memory addresses or anything that
changes between runs; and a person reading a notebook without widgets should still see the conversation.
"""

from __future__ import annotations

from typing import Any

import orjson

from agentctx_widgets.output.message_types import lookup

MAX_LINE = 100
"""Characters per transcript line before it is cut with an ellipsis."""

MAX_LINES = 40
"""Lines per section (context, outputs) before the rest is summarised as a count."""

_ROLES = {0: "reserved", 1: "system", 2: "user", 3: "assistant", 4: "tool_result"}


def transcript(state: dict[str, Any]) -> str:
    """Header line, then one line per context block, the pending message, and one per output message."""
    lines = [header_line(state["header"])]
    context_lines = [line for message in state["context"] for line in message_lines(message)]
    lines += _capped(context_lines)
    if state.get("pending") is not None:
        lines += [_cut("… " + line) for line in message_lines(state["pending"])]
    outputs = state["outputs"]
    lines += _capped([output_line(outputs["messages"][i]) for i in outputs["order"]])
    return "\n".join(lines)


def header_line(header: dict[str, Any]) -> str:
    count = header.get("count", 0)
    noun = "message" if count == 1 else "messages"
    tokens = f"~{header.get('tokens', 0):,} tokens"
    if header.get("window"):
        tokens += f" of {header['window']:,}"
    return f'ContextView "{header.get("name") or "context"}" · {count} {noun} · {tokens}'


def message_lines(message: dict[str, Any]) -> list[str]:
    """One line per content block; a record is one line naming its type."""
    kind = message.get("type")
    if isinstance(kind, str):
        return [_cut(f"[record {kind}] {_json(_without(message, 'type'))}")]
    role = _ROLES.get(kind, f"type {kind}")
    if kind == 4 and message.get("callId"):
        role = f"tool_result {message['callId']}"
    if message.get("error") not in (None, False):
        role += " error"
    blocks = message.get("content") or []
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    lines = [_cut(block_line(role, block)) for block in blocks]
    if message.get("error") not in (None, False, True):
        error = message["error"]
        lines.append(_cut(f"[{role}] {error.get('message') if isinstance(error, dict) else error}"))
    return lines or [f"[{role}]"]


def block_line(role: str, block: Any) -> str:
    if not isinstance(block, dict):
        return f"[{role}] {_json(block)}"
    kind = block.get("type")
    if kind == "text":
        return f"[{role}] {block.get('text', '')}"
    if kind == "thinking":
        return f"[thinking] {block.get('text', '')}"
    if kind == "toolCall":
        return f"[tool_call {block.get('name', '?')}] {_json(block.get('arguments'))}"
    if kind == "image":
        return f"[{role} image] {block.get('mimetype') or block.get('url') or ''}".rstrip()
    if kind == "binary":
        return f"[{role} file] {block.get('filename') or block.get('mimetype') or ''}".rstrip()
    return f"[{role} {kind}] {_json(_without(block, 'type'))}"


def output_line(message: dict[str, Any]) -> str:
    """``(type id) body``; the body is what the type's entry in ``output.message_types`` says."""
    props = message.get("props") or {}
    kind = message.get("type")
    body = lookup(kind).transcript(props)
    if not isinstance(body, str):
        body = _json(body)
    return _cut(f"({kind} {message.get('id')}) {body}")


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return [*lines[:MAX_LINES], f"… {len(lines) - MAX_LINES} more lines"]


def _cut(line: str) -> str:
    longer = len(line) > MAX_LINE * 4
    line = " ".join(line[: MAX_LINE * 4].split())  # only the start can be shown
    if len(line) <= MAX_LINE and not longer:
        return line
    return line[: MAX_LINE - 1] + "…"


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return repr(value)


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}
