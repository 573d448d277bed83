"""Check what a hook returned against seed 000's "Return Hook Results" table — and, for ``Create``,
against Yao's ``HookCreateResponse`` (``agent/context/types.go:287-307`` at afab9c2).

``Create`` may return every field of ``HookCreateResponse``. Yao decodes the value with Go's
``encoding/json``, so a wrong type is an error with Go's wording (``failed to unmarshal to
HookCreateResponse: json: cannot unmarshal string into Go struct field HookCreateResponse.temperature
of type float64``), ``null`` leaves a field unset, and an unknown key is ignored — which we follow, and
report as the diagnostic ``unknown_return_key`` (``{messags: ...}`` is a typo Yao would swallow). The
other hooks exist only in the seed (Yao at afab9c2 runs only Create), so their table stays strict.

The Go decode (:func:`go_type_error`, :func:`go_decode`) is the one both lifecycles use: today's Yao
request (``yao/request_shapes.py``) decodes Create and Next returns with it too.
"""

from __future__ import annotations

from typing import Any

from ..context.types import TYPE_OF_ROLE
from .._js_types import js_type
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
"""HookCreateResponse's JSON fields → their Go types at afab9c2 (for Go's error wording);
``yao/request_shapes.py`` builds today's from it."""
MODEL_OPTION_FIELDS = ("temperature", "max_tokens", "max_completion_tokens", "audio")
"""Create fields Yao applies to the model call (``agent.go:611-648``, today ``build.go:471-490``); the
others go to ``ctx``."""
CTX_OVERRIDE_FIELDS = ("assistant_id", "connector", "locale", "theme", "route")
"""Create fields that override ``ctx`` when non-empty (``create.go:32-68``); ``metadata`` is merged."""
STRUCTS: dict[str, tuple[str, dict[str, str]]] = {
    "context.AudioConfig": ("AudioConfig", {"voice": "string", "format": "string"}),
    "context.DelegateConfig": ("DelegateConfig", {"agent_id": "string", "messages": "[]context.Message",
                                                  "options": "map[string]interface {}"}),
}
"""The structs a hook's return nests, by Go type: their name and fields (DelegateConfig: Yao today's
``types.go:487-491``)."""
_ROLES = frozenset(TYPE_OF_ROLE)
_GO_NAMES = {"boolean": "bool", "number": "number", "string": "string", "list": "array", "object": "object"}


# ---- Go's encoding/json, as Yao decodes a hook's return -------------------------------------------


def go_kind(value: Any, kind: str = "") -> str:
    """What Go's encoding/json calls a JSON value in an unmarshal error (``bool``, ``number``, ``array``,
    ...); a number that does not fit an ``int`` field is ``number 1.5``, with its text (decode.go)."""
    name = _GO_NAMES.get(js_type(value), "value")
    if kind == "int" and isinstance(value, float) and not value.is_integer():
        return f"number {value!r}"
    return name


def _fits(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "float64":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "int":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind.startswith("[]"):
        return isinstance(value, list)
    if kind == "interface {}":
        return True
    return isinstance(value, dict)  # maps and structs


def go_type_error(value: Any, struct: str, fields: dict[str, str], *, outer: str | None = None,
                  path: str = "") -> tuple[str, str | None] | None:
    """Go's complaint about decoding ``value`` into ``struct`` and the top-level key at fault (``None``:
    the value itself), or ``None`` when it decodes. Fields are checked in the value's order, as Go reads
    them; ``null`` leaves a field unset; a nested field names the innermost struct and the whole path,
    as Go >= 1.20 does (``outer`` is the struct the decode started from)."""
    prefix = f"failed to unmarshal to {outer or struct}: json: cannot unmarshal"
    if not isinstance(value, dict):
        return f"{prefix} {go_kind(value)} into Go value of type context.{struct}", None
    for key, item in value.items():
        kind = fields.get(key)
        if kind is None or item is None:
            continue
        if not _fits(kind, item):
            return f"{prefix} {go_kind(item, kind)} into Go struct field {struct}.{path}{key} of type {kind}", key
        if kind in STRUCTS:
            name, inner = STRUCTS[kind]
            problem = go_type_error(item, name, inner, outer=outer or struct, path=f"{path}{key}.")
            if problem is not None:
                return problem[0], key
    return None


def go_decode(value: Any, fields: dict[str, str]) -> dict:
    """A value ``go_type_error`` passed, as the struct holds it: the fields it set (nulls and unknown
    keys dropped, nested structs likewise)."""
    decoded: dict[str, Any] = {}
    for key, item in value.items():
        kind = fields.get(key)
        if kind is not None and item is not None:
            decoded[key] = go_decode(item, STRUCTS[kind][1]) if kind in STRUCTS else item
    return decoded


def unknown_keys(value: Any, fields: dict[str, str]) -> list[str]:
    """Keys a struct has no field for (Go ignores them)."""
    return sorted(set(value) - set(fields)) if isinstance(value, dict) else []


# ---- the seed's hooks --------------------------------------------------------------------------------


def check_create(value: Any, *, line: int | None = None) -> dict | None:
    """Create's result with every HookCreateResponse field type-checked as Go would; unknown keys are
    kept (the runner reports them, see :func:`unknown_create_keys`)."""
    if value is None:
        return None
    problem = go_type_error(value, "HookCreateResponse", CREATE_FIELDS)
    if problem is not None:
        text, key = problem
        shown = _describe(value) if key is None else f"{key} = {_describe(value[key])}"
        raise HookReturnError(f"{text} (returned {shown})", hook="Create", line=line)
    if value.get("messages") is not None:
        _check_messages("Create", value["messages"], line)
    return value


def unknown_create_keys(value: dict) -> list[str]:
    """Keys of a Create result that HookCreateResponse has no field for (Yao ignores them)."""
    return unknown_keys(value, CREATE_FIELDS)


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
