"""Check what a hook returned against seed 000's "Return Hook Results" table."""

from __future__ import annotations

from typing import Any

from .errors import HookReturnError

ALLOWED_KEYS = {
    "Create": {"messages"},
    "Before": {"response"},
    "After": {"response"},
    "Done": {"response"},
    "Error": {"error", "retry"},
}
_ROLES = {"system", "user", "assistant", "tool"}


def check_result(hook: str, value: Any, *, line: int | None = None) -> dict | None:
    """``None`` for "nothing"; the dict when its keys and values fit ``hook``; else HookReturnError."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise HookReturnError(
            f"returned {_describe(value)}; expected nothing or an object with {_keys(hook)}", hook=hook, line=line
        )
    unknown = set(value) - ALLOWED_KEYS[hook]
    if unknown:
        raise HookReturnError(
            f"returned unknown key(s) {sorted(unknown)}; {hook} may return {_keys(hook)}", hook=hook, line=line
        )
    if "messages" in value:
        _check_messages(hook, value["messages"], line)
    if "response" in value and value["response"] is not None and not isinstance(value["response"], dict):
        raise HookReturnError(
            f"returned response = {_describe(value['response'])}; expected an object", hook=hook, line=line
        )
    if "retry" in value and not isinstance(value["retry"], bool):
        raise HookReturnError(f"returned retry = {_describe(value['retry'])}; expected true or false", hook=hook, line=line)
    return value


def _check_messages(hook: str, messages: Any, line: int | None) -> None:
    if not isinstance(messages, list):
        raise HookReturnError(f"returned messages = {_describe(messages)}; expected an array", hook=hook, line=line)
    for i, message in enumerate(messages):
        at = f"returned messages[{i}]"
        if not isinstance(message, dict):
            raise HookReturnError(f"{at} = {_describe(message)}; expected an object", hook=hook, line=line)
        if "role" in message:
            if message["role"] not in _ROLES:
                raise HookReturnError(
                    f"{at}.role = {message['role']!r}; expected one of {sorted(_ROLES)}", hook=hook, line=line
                )
        elif not isinstance(message.get("type"), int):
            raise HookReturnError(
                f"{at} has neither a 'role' ({sorted(_ROLES)}) nor a numeric 'type'", hook=hook, line=line
            )


def _keys(hook: str) -> str:
    return " or ".join(f"{{{key}}}" for key in sorted(ALLOWED_KEYS[hook]))


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"
