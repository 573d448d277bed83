"""Context messages ↔ OpenAI chat shapes: the one conversion the kit has.

Seed 000's hooks, today's Yao hooks and ``ctx.llm`` see messages as ``[{role, content, …}]`` and tool
calls as ``{"id", "type": "function", "function": {"name", "arguments": JSON text}}``; Context messages
(seed 001) are ``{"type": 2, "content": [blocks]}``. This module converts between them; the hooks' view
(``hooks/openai_shapes.py``), ``ctx.llm`` (``yao/llm.py``), Yao's request (``yao/request_shapes.py``) and
the Chat Completions connector (``openai_chat.py``) use it.

- ``type`` ↔ ``role`` as ``context.types.ROLE_OF`` / ``TYPE_OF_ROLE`` map them (``developer`` is a
  system message; a type without a role shows as ``user``); a tool result carries ``tool_call_id``
  (its ``callId``).
- ``content`` is a string when every block is text (blocks joined with a blank line), else a list
  of parts: text blocks as ``{"type": "text", "text"}``, other blocks (image, binary) unchanged. The way
  back takes a string, a list of parts (a bare string is a text part) or any other value as its JSON text.
- An assistant's thinking blocks become ``thinking`` (a string) and its toolCall blocks ``tool_calls``.
  A call's ``id`` and ``name`` are strings (a connector sends them, Go's ``ToolCall`` holds strings);
  ``arguments`` is JSON text (``{}`` when the block has none). The way back parses arguments that are
  JSON text (blank text is ``{}``; broken text stays text).
- Every other key of the message (metadata such as ``id``) is kept as is, both ways.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..context.types import TYPE_OF_ROLE, MessageType, role_of

VIEW_KEYS = frozenset({"role", "content", "thinking", "tool_calls", "tool_call_id"})
"""The keys the conversion reads or writes; every other key of a message is carried over."""

OPENAI_USAGE = {"prompt_tokens": "inputTokens", "completion_tokens": "outputTokens", "total_tokens": "totalTokens"}
"""OpenAI's usage names → the canonical ones (``context.usage_data``)."""


def to_view_message(message: dict) -> dict:
    """A Context message → an OpenAI-like ``{role, content, …}`` dict (a new object)."""
    kind = message["type"]
    view: dict[str, Any] = {"role": role_of(kind) or "user"}
    blocks = message.get("content") or []
    body = [block for block in blocks if block.get("type") not in ("thinking", "toolCall")]
    if all(block.get("type") == "text" for block in body):
        view["content"] = "\n\n".join(block.get("text", "") for block in body)
    else:
        view["content"] = [
            {"type": "text", "text": block.get("text", "")} if block.get("type") == "text" else json_copy(block)
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
        if key not in ("type", "content", "callId") and key not in VIEW_KEYS:
            view[key] = json_copy(value)
    return view


def from_view_message(view: dict) -> dict:
    """An OpenAI-like message (or a Context message, copied) → a Context message."""
    if "role" not in view and isinstance(view.get("type"), int):
        return json_copy(view)
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
                blocks.append(json_copy(part))
    elif content is not None:
        blocks.append({"type": "text", "text": json_text(content)})
    blocks.extend(tool_block_of(call) for call in view.get("tool_calls") or [] if isinstance(call, dict))
    message: dict[str, Any] = {"type": kind, "content": blocks}
    if kind == MessageType.TOOL_RESULT and view.get("tool_call_id") is not None:
        message["callId"] = view["tool_call_id"]
    for key, value in view.items():
        if key not in VIEW_KEYS and key != "type":
            message[key] = json_copy(value)
    return message


def tool_call_of(block: dict) -> dict:
    """A toolCall block → ``{"id", "type": "function", "function": {"name", "arguments": JSON text}}``."""
    arguments = block.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return {"id": str(block.get("callId", "")), "type": "function",
            "function": {"name": str(block.get("name", "")), "arguments": raw}}


def tool_block_of(call: dict) -> dict:
    """An OpenAI tool call → a toolCall block (``function``'s name and arguments, else the call's own)."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    return {"type": "toolCall", "callId": str(call.get("id", "")),
            "name": str(function.get("name", call.get("name", ""))),
            "arguments": arguments_of(function.get("arguments", call.get("arguments", {})))}


def arguments_of(raw: Any) -> Any:
    """A call's ``arguments`` as a value: JSON text parsed (blank text is ``{}``, broken text stays text),
    ``None`` is ``{}``, anything else as it is."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            return orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError:
            return raw
    return raw


def json_text(value: Any) -> str:
    """A value as compact JSON text (``str`` when JSON cannot hold it)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def json_copy(value: Any) -> Any:
    """A deep copy of a dict or list through JSON (other values as they are)."""
    return orjson.loads(orjson.dumps(value)) if isinstance(value, (dict, list)) else value

