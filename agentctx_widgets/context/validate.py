"""Shape checks for messages, records and contexts, and the two emptiness/failure predicates.

Core shape (seed 001): a message is a dict with a numeric ``type`` (an ``int`` or ``float``, never a
``bool``) and a list ``content``. Decision: every block must also be a dict with a string ``type``, so a
bad block is reported at its address (``context[2].content[0]``) instead of failing later in a provider
translator. A record is a dict whose ``type`` is a string; validators skip records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "error_text",
    "has_content",
    "has_error",
    "is_context",
    "is_message",
    "is_record",
    "validate_context",
    "validate_message",
]

_TEXT_BLOCKS = frozenset({"text", "thinking"})


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_mapping(value: Any) -> bool:
    # The exact-dict test first: the ABC check is slow and this runs per entry and per block.
    return value.__class__ is dict or isinstance(value, Mapping)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_record(msg: Any) -> bool:
    """Is ``msg`` a metadata record: a dict whose ``type`` is a string?"""
    return _is_mapping(msg) and isinstance(msg.get("type"), str)


def validate_message(msg: Any, at: str = "message") -> dict:
    """Check the core message shape and return the same object; ``TypeError`` names ``at`` on failure."""
    if not _is_mapping(msg):
        raise TypeError(f"{at}: expected a message dict, got {type(msg).__name__} {_short(msg)}")
    kind = msg.get("type")
    if not _is_number(kind):
        raise TypeError(f"{at}.type: expected a numeric message type, got {_short(kind)}")
    content = msg.get("content")
    if not isinstance(content, list):
        raise TypeError(f"{at}.content: expected a list of blocks, got {type(content).__name__} {_short(content)}")
    for position, block in enumerate(content):
        if not _is_mapping(block):
            raise TypeError(f"{at}.content[{position}]: expected a block dict, got {type(block).__name__} {_short(block)}")
        if not isinstance(block.get("type"), str):
            raise TypeError(f"{at}.content[{position}].type: expected a string, got {_short(block.get('type'))}")
    return msg


def _passes(check: Callable[[Any], Any], value: Any) -> bool:
    try:
        check(value)
    except TypeError:
        return False
    return True


def is_message(msg: Any) -> bool:
    """Has ``msg`` the core message shape (see the module docstring)?"""
    return _passes(validate_message, msg)


def validate_context(ctx: Any) -> list:
    """Check a context list (records allowed) and return the same list; errors name ``context[i]``."""
    if not isinstance(ctx, list):
        raise TypeError(f"context: expected a list, got {type(ctx).__name__}")
    for index, entry in enumerate(ctx):
        if not is_record(entry):
            validate_message(entry, f"context[{index}]")
    return ctx


def is_context(ctx: Any) -> bool:
    """Is ``ctx`` a list of messages and/or records? An empty list is a context."""
    return _passes(validate_context, ctx)


def _block_has_payload(block: Any) -> bool:
    if not isinstance(block, Mapping):
        return False
    if block.get("type") in _TEXT_BLOCKS:
        text = block.get("text")
        return isinstance(text, str) and text != ""
    return any(key != "type" and value not in (None, "", [], {}) for key, value in block.items())


def has_content(msg: Any) -> bool:
    """Does any block carry something a provider can consume (non-empty text, a call, data, ...)?"""
    if not isinstance(msg, Mapping):
        return False
    content = msg.get("content")
    return isinstance(content, list) and any(_block_has_payload(block) for block in content)


def error_text(msg: Any) -> str:
    """The failed-response error text: the ``error`` string or ``error["message"]``, else ``""``."""
    if not isinstance(msg, Mapping):
        return ""
    error = msg.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        return error["message"]
    return ""


def has_error(msg: Any) -> bool:
    """Does ``msg`` report a failed response? A tool result's boolean ``error`` does not count."""
    return error_text(msg) != ""
