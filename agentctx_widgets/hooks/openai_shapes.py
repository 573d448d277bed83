"""The OpenAI-like shapes hooks see, and the way back to Context messages.

Seed 000's hooks treat ``messages`` as ``[{role, content}]`` (``messages.unshift({role: "system",
content: …})``, ``messages[messages.length - 1].content.length``) and ``response`` as an OpenAI
reply (``response.thinking``, ``response.tool_calls[i].function.name``). Context messages (seed
001) are ``{"type": 2, "content": [blocks]}``. This module converts between the two:

- ``type`` ↔ ``role`` as ``context.types.ROLE_OF`` / ``TYPE_OF_ROLE`` map them (``developer`` is a
  system message; a type without a role shows as ``user``); a tool result carries ``tool_call_id``
  (its ``callId``).
- ``content`` is a string when every block is text (blocks joined with a blank line), else a list
  of parts: text blocks as ``{"type": "text", "text"}``, other blocks (image, binary) unchanged.
- An assistant's thinking blocks become ``thinking`` (a string) and its toolCall blocks
  ``tool_calls: [{"id", "type": "function", "function": {"name", "arguments": JSON string}}]``.
- Every other key of the message (metadata such as ``id``) is kept as is, both ways. Records
  (string ``type``) are left out.
- The way back is lossy for some blocks, so ``from_view(messages, originals)`` maps a dict equal to
  the view of one of ``originals`` back to that original: what a hook passes through unchanged
  comes back unchanged.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..context.types import TYPE_OF_ROLE, MessageType, role_of

_VIEW_KEYS = {"role", "content", "thinking", "tool_calls", "tool_call_id"}


def to_view(messages: list[dict]) -> list[dict]:
    """Context messages → OpenAI-like ``{role, content, …}`` dicts (new objects)."""
    return [to_view_message(message) for message in messages if isinstance(message.get("type"), int)]


def to_view_message(message: dict) -> dict:
    kind = message["type"]
    view: dict[str, Any] = {"role": role_of(kind) or "user"}
    blocks = message.get("content") or []
    body = [block for block in blocks if block.get("type") not in ("thinking", "toolCall")]
    if all(block.get("type") == "text" for block in body):
        view["content"] = "\n\n".join(block.get("text", "") for block in body)
    else:
        view["content"] = [
            {"type": "text", "text": block.get("text", "")} if block.get("type") == "text" else _copy(block)
            for block in body
        ]
    thinking = [block.get("text", "") for block in blocks if block.get("type") == "thinking"]
    if thinking:
        view["thinking"] = "\n\n".join(thinking)
    calls = [tool_call_of(block) for block in blocks if block.get("type") == "toolCall"]
    if calls:
        view["tool_calls"] = calls
    if kind == MessageType.TOOL_RESULT and "callId" in message:
        view["tool_call_id"] = message["callId"]
    for key, value in message.items():
        if key not in ("type", "content", "callId") and key not in _VIEW_KEYS:
            view[key] = _copy(value)
    return view


def from_view(messages: list[dict], originals: list[dict] | None = None) -> list[dict]:
    """OpenAI-like dicts (or Context messages, passed through) → Context messages.

    The conversion back is lossy (block fields such as ``cache_control`` are dropped, thinking is
    put first, split text blocks are joined). So a returned dict exactly equal (as JSON) to the
    view of one of ``originals`` becomes that original message itself; only new or changed
    messages are converted. Originals with identical views are handed out in their order.
    """
    by_view: dict[bytes, list[dict]] = {}
    for original in originals or []:
        if isinstance(original.get("type"), int):
            by_view.setdefault(_view_key(to_view_message(original)), []).append(original)
    taken: dict[bytes, int] = {}
    converted = []
    for message in messages:
        key = _view_key(message) if by_view else None
        candidates = by_view.get(key) if key is not None else None
        if candidates:
            index = taken.get(key, 0)
            converted.append(candidates[min(index, len(candidates) - 1)])
            taken[key] = index + 1
        else:
            converted.append(from_view_message(message))
    return converted


def _view_key(view: Any) -> bytes | None:
    """``view`` as canonical JSON (sorted keys), or ``None`` when it is not JSON."""
    try:
        return orjson.dumps(view, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError: a hook returned something JSON cannot hold
        return None


def from_view_message(view: dict) -> dict:
    if "role" not in view and isinstance(view.get("type"), int):
        return _copy(view)
    kind = TYPE_OF_ROLE[view["role"]]
    blocks: list[dict] = []
    if view.get("thinking"):
        blocks.append({"type": "thinking", "text": str(view["thinking"])})
    content = view.get("content")
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                blocks.append({"type": "text", "text": part})
            elif isinstance(part, dict) and part.get("type") == "text":
                blocks.append({"type": "text", "text": str(part.get("text", ""))})
            elif isinstance(part, dict):
                blocks.append(_copy(part))
    elif content is not None:
        blocks.append({"type": "text", "text": str(content)})
    for call in view.get("tool_calls") or []:
        blocks.append(tool_block_of(call))
    message: dict[str, Any] = {"type": kind, "content": blocks}
    if kind == MessageType.TOOL_RESULT and view.get("tool_call_id") is not None:
        message["callId"] = view["tool_call_id"]
    for key, value in view.items():
        if key not in _VIEW_KEYS and key != "type":
            message[key] = _copy(value)
    return message


def tool_call_of(block: dict) -> dict:
    """A toolCall block → OpenAI ``{"id", "type": "function", "function": {"name", "arguments"}}``."""
    arguments = block.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return {"id": block.get("callId", ""), "type": "function", "function": {"name": block.get("name", ""), "arguments": raw}}


def tool_block_of(call: dict) -> dict:
    """OpenAI tool call → toolCall block (arguments parsed when they are JSON)."""
    function = call.get("function") or {}
    arguments: Any = function.get("arguments", call.get("arguments", {}))
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments) if arguments.strip() else {}
        except orjson.JSONDecodeError:
            pass
    return {"type": "toolCall", "callId": str(call.get("id", "")), "name": str(function.get("name", call.get("name", ""))),
            "arguments": arguments}


def response_of(message: dict, usage: dict | None) -> dict:
    """The OpenAI-like ``response`` hooks see for an assembled assistant message.

    ``usage`` is the canonical usage (``inputTokens``…) plus OpenAI's ``prompt_tokens`` /
    ``completion_tokens`` / ``total_tokens`` aliases, since seed 000 reads ``usage.total_tokens``.
    """
    blocks = message.get("content") or []
    texts = [block.get("text", "") for block in blocks if block.get("type") == "text"]
    thinking = [block.get("text", "") for block in blocks if block.get("type") == "thinking"]
    return {
        "content": "\n\n".join(texts),
        "thinking": "\n\n".join(thinking) if thinking else None,
        "tool_calls": [tool_call_of(block) for block in blocks if block.get("type") == "toolCall"],
        "usage": with_openai_aliases(usage),
        "message": _copy(message),
    }


def with_openai_aliases(usage: dict | None) -> dict | None:
    if usage is None:
        return None
    aliased = dict(usage)
    aliased.setdefault("prompt_tokens", usage.get("inputTokens"))
    aliased.setdefault("completion_tokens", usage.get("outputTokens"))
    aliased.setdefault("total_tokens", usage.get("totalTokens"))
    return aliased


def message_from_response(response: dict, original: dict) -> dict:
    """The assistant message a (possibly hook-changed) response stands for.

    If ``content``, ``thinking`` or ``tool_calls`` differ from ``original``'s, the message is
    rebuilt from them (keeping the original message's metadata); otherwise a changed ``message``
    wins; otherwise the original message is kept.
    """
    before = response_of(original, None)
    rebuilt = any(response.get(key, before[key]) != before[key] for key in ("content", "thinking", "tool_calls"))
    if rebuilt:
        view = {"role": "assistant", "content": response.get("content", before["content"])}
        thinking = response.get("thinking", before["thinking"])
        if thinking:
            view["thinking"] = thinking
        view["tool_calls"] = response.get("tool_calls", before["tool_calls"]) or []
        message = from_view_message(view)
        for key, value in original.items():
            if key not in ("type", "content"):
                message[key] = _copy(value)
        return message
    candidate = response.get("message")
    if isinstance(candidate, dict) and candidate != original and isinstance(candidate.get("type"), int):
        return _copy(candidate)
    return original


def _copy(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value)) if isinstance(value, (dict, list)) else value
