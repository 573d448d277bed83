"""Check what a hook returned against seed 000's "Return Hook Results" table — and, for ``Create``,
against Yao's ``HookCreateResponse`` (``agent/context/types.go:287-307`` at afab9c2).

``Create`` may return every field of ``HookCreateResponse``. Yao decodes the value with Go's
``encoding/json``, so a wrong type is an error with Go's wording (``failed to unmarshal to
HookCreateResponse: json: cannot unmarshal string into Go struct field HookCreateResponse.temperature
of type float64``), ``null`` leaves a field unset, and an unknown key is ignored — which we follow, and
report as the diagnostic ``unknown_return_key`` (``{messags: ...}`` is a typo Yao would swallow). The
other hooks exist only in the seed (Yao at afab9c2 runs only Create), so their table stays strict.
"""

from __future__ import annotations

from typing import Any

from ..context.types import TYPE_OF_ROLE
from .errors import HookReturnError

ALLOWED_KEYS = {
    "Create": {"messages"},
    "Before": {"response"},
    "After": {"response"},
    "Done": {"response"},
    "Error": {"error", "retry"},
}
CREATE_FIELDS: dict[str, str] = {
    "messages": "[]context.Message",
    "audio": "context.AudioConfig",
    "temperature": "float64",
    "max_tokens": "int",
    "max_completion_tokens": "int",
    "assistant_id": "string",
    "connector": "string",
    "locale": "string",
    "theme": "string",
    "route": "string",
    "metadata": "map[string]interface {}",
}
"""HookCreateResponse's JSON fields → their Go types (for Go's error wording)."""
MODEL_OPTION_FIELDS = ("temperature", "max_tokens", "max_completion_tokens", "audio")
"""Create fields Yao applies to the model call (``agent.go:611-648``); the others go to ``ctx``."""
CTX_OVERRIDE_FIELDS = ("assistant_id", "connector", "locale", "theme", "route")
"""Create fields that override ``ctx`` when non-empty (``create.go:32-68``); ``metadata`` is merged."""
_ROLES = frozenset(TYPE_OF_ROLE)
_UNMARSHAL = "failed to unmarshal to HookCreateResponse: json: cannot unmarshal"


def _json_kind(value: Any) -> str:
    """What Go's encoding/json calls a JSON value in its errors."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {value!r}" if isinstance(value, float) and not value.is_integer() else "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "value")


def _create_type_error(field: str, value: Any) -> str | None:
    """Go's complaint about ``value`` for HookCreateResponse.``field``, or None when it decodes."""
    if value is None:
        return None
    kind = CREATE_FIELDS[field]
    if kind == "string":
        ok = isinstance(value, str)
    elif kind == "float64":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    elif kind == "context.AudioConfig":
        ok = isinstance(value, dict) and all(isinstance(value.get(k), (str, type(None))) for k in ("voice", "format"))
    elif kind.startswith("map"):
        ok = isinstance(value, dict)
    else:
        ok = isinstance(value, list)
    if ok:
        return None
    return f"{_UNMARSHAL} {_json_kind(value)} into Go struct field HookCreateResponse.{field} of type {kind}"


def check_create(value: Any, *, line: int | None = None) -> dict | None:
    """Create's result with every HookCreateResponse field type-checked as Go would; unknown keys are
    kept (the runner reports them, see :func:`unknown_create_keys`)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise HookReturnError(f"{_UNMARSHAL} {_json_kind(value).split(' ')[0]} into Go value of type "
                              f"context.HookCreateResponse (returned {_describe(value)})", hook="Create", line=line)
    for field in CREATE_FIELDS:
        problem = _create_type_error(field, value.get(field))
        if problem:
            raise HookReturnError(f"{problem} (returned {field} = {_describe(value[field])})", hook="Create", line=line)
    if value.get("messages") is not None:
        _check_messages("Create", value["messages"], line)
    return value


def unknown_create_keys(value: dict) -> list[str]:
    """Keys of a Create result that HookCreateResponse has no field for (Yao ignores them)."""
    return sorted(set(value) - set(CREATE_FIELDS))


def check_result(hook: str, value: Any, *, line: int | None = None) -> dict | None:
    """``None`` for "nothing"; the dict when its keys and values fit ``hook``; else HookReturnError.
    (``Create`` is checked by :func:`check_create`, which the runner calls on what this returns.)"""
    if value is None:
        return None
    if hook == "Create":
        return check_create(value, line=line)
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
