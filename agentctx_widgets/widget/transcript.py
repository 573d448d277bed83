"""A deterministic plain-text transcript of a ContextView state (its ``repr`` / ``text/plain``).

Why: nbval compares ``text/plain`` outputs, so the text must not hold memory addresses or anything that
changes between runs; and a person reading a notebook without widgets should still see the conversation.

A context message is tagged with its type's name (``MessageType``: ``assistant``, ``tool_result``…). An
output message closed with ``done: true`` says so in its tag, as the view marks it ``data-done``; a closed
``loading`` message shows no text, since the view and the static page hide it.
"""

from __future__ import annotations

from typing import Any

from agentctx_widgets.context.types import MessageType
from agentctx_widgets.html.cost import cost_from_json, cost_text
from agentctx_widgets.output.message_types import LOADING, json_text, lookup

MAX_LINE = 100
"""Characters per transcript line before it is cut with an ellipsis."""

MAX_LINES = 40
"""Lines per section (context, outputs) before the rest is summarised as a count."""


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
    costs = "".join(f" · {label} {text}" for label, key in (("turn", "turnCost"), ("context", "contextCost"))
                    if (text := _cost_text(header.get(key))) is not None)
    return f'ContextView "{header.get("name") or "context"}" · {count} {noun} · {tokens}{costs}'


def _cost_text(value: Any) -> str | None:
    """A header's cost (``html.cost.cost_json``) as the header shows it, or None."""
    try:
        return cost_text(cost_from_json(value), names=True) if isinstance(value, dict) else None
    except ValueError:
        return None


def message_lines(message: dict[str, Any]) -> list[str]:
    """One line per content block; a record is one line naming its type."""
    kind = message.get("type")
    if isinstance(kind, str):
        return [_cut(f"[record {kind}] {json_text(_without(message, 'type'))}")]
    role = _type_name(kind)
    if kind == MessageType.TOOL_RESULT and message.get("callId"):
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
        return f"[{role}] {json_text(block)}"
    kind = block.get("type")
    if kind == "text":
        return f"[{role}] {block.get('text', '')}"
    if kind == "thinking":
        return f"[thinking] {block.get('text', '')}"
    if kind == "toolCall":
        return f"[tool_call {block.get('name', '?')}] {json_text(block.get('arguments'))}"
    if kind == "image":
        return f"[{role} image] {block.get('mimetype') or block.get('url') or ''}".rstrip()
    if kind == "binary":
        return f"[{role} file] {block.get('filename') or block.get('mimetype') or ''}".rstrip()
    return f"[{role} {kind}] {json_text(_without(block, 'type'))}"


def output_line(message: dict[str, Any]) -> str:
    """``(type id) body``, ``(type id done) body`` once closed; the body is what the type's entry in
    ``output.message_types`` says (none for a closed ``loading``, which the view hides)."""
    kind = message.get("type")
    done = message.get("done") is True
    tag = f"({kind} {message.get('id')}{' done' if done else ''})"
    if done and kind == LOADING:
        return _cut(tag)
    body = lookup(kind).transcript(message.get("props") or {})
    if not isinstance(body, str):
        body = json_text(body)
    return _cut(f"{tag} {body}")


def _type_name(kind: Any) -> str:
    """``MessageType``'s name in lower case (``tool_result``), or ``type X`` for any other value."""
    if isinstance(kind, int) and not isinstance(kind, bool):
        try:
            return MessageType(kind).name.lower()
        except ValueError:
            pass
    return f"type {kind}"


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


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}
