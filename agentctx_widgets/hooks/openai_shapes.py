"""The OpenAI-like shapes hooks see, and the way back to Context messages.

Seed 000's hooks treat ``messages`` as ``[{role, content}]`` (``messages.unshift({role: "system",
content: …})``, ``messages[messages.length - 1].content.length``) and ``response`` as an OpenAI
reply (``response.thinking``, ``response.tool_calls[i].function.name``). The conversion of one message
or tool call is ``models.openai_shapes``' (``from_view_message`` and ``tool_call_of`` are imported from
here too); this module adds what is the hooks' own:

- ``to_view`` leaves records (string ``type``) out;
- the way back is lossy for some blocks, so ``from_view(messages, originals)`` maps a dict equal to
  the view of one of ``originals`` back to that original: what a hook passes through unchanged
  comes back unchanged;
- ``response``: ``response_of`` and ``message_from_response``.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..models.openai_shapes import OPENAI_USAGE, from_view_message, json_copy, to_view_message, tool_call_of


def to_view(messages: list[dict]) -> list[dict]:
    """Context messages → OpenAI-like ``{role, content, …}`` dicts (new objects)."""
    return [to_view_message(message) for message in messages if isinstance(message.get("type"), int)]


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
        "message": json_copy(message),
    }


def with_openai_aliases(usage: dict | None) -> dict | None:
    if usage is None:
        return None
    aliased = dict(usage)
    for alias, key in OPENAI_USAGE.items():
        aliased.setdefault(alias, usage.get(key))
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
                message[key] = json_copy(value)
        return message
    candidate = response.get("message")
    if isinstance(candidate, dict) and candidate != original and isinstance(candidate.get("type"), int):
        return json_copy(candidate)
    return original

