"""Parse buffered CLI input into a context, using the shared grammar.

First the whole input is tried as JSON: a list is returned unchanged. Otherwise each non-blank line is
parsed on its own: a message object is kept, a list contributes its valid messages, and anything else
(plain text, other JSON, a list with no valid message) becomes a user text message holding the line.
Lines are split on ``"\\n"`` with a trailing ``"\\r"`` removed. Never raises for a string input.
"""

from __future__ import annotations

from typing import Any

import orjson

from .types import user_message
from .validate import is_message

__all__ = ["parse_context"]

_NOT_JSON = object()


def _try_json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except (orjson.JSONDecodeError, ValueError, TypeError, RecursionError):
        return _NOT_JSON


def parse_context(input: str) -> list:  # noqa: A002 - the seed's parameter name
    """The context described by ``input`` (see the module docstring)."""
    if not isinstance(input, str):
        raise TypeError(f"parse_context: input must be a string, got {type(input).__name__}")
    whole = _try_json(input)
    if isinstance(whole, list):
        return whole
    context: list = []
    for raw_line in input.split("\n"):
        line = raw_line[:-1] if raw_line.endswith("\r") else raw_line
        if not line.strip():
            continue
        value = _try_json(line)
        if is_message(value):
            context.append(value)
            continue
        if isinstance(value, list):
            found = [item for item in value if is_message(item)]
            if found:
                context.extend(found)
                continue
        context.append(user_message(line))
    return context
