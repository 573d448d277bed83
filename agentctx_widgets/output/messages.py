"""Output message shapes and their validation (seed 000, "Message Types" and "Message Props by Type").

An output message is a plain JSON dict: ``{"type", "props", "id"?, "delta"?, "done"?, "delta_path"?,
"delta_action"?, "group_id"?, "metadata"?}``. ``normalize_message`` turns the string shorthand into a
text message, checks the envelope and the props a full message of a built-in type needs, and returns a
private deep copy so a caller that reuses its dicts cannot change what was sent.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

USER_INPUT = "user_input"
TEXT = "text"
THINKING = "thinking"
LOADING = "loading"
TOOL_CALL = "tool_call"
ERROR = "error"
IMAGE = "image"
AUDIO = "audio"
VIDEO = "video"
ACTION = "action"
EVENT = "event"

MESSAGE_TYPES: tuple[str, ...] = (
    USER_INPUT, TEXT, THINKING, LOADING, TOOL_CALL, ERROR, IMAGE, AUDIO, VIDEO, ACTION, EVENT,
)

DeltaAction = Literal["append", "replace", "merge", "set"]
DELTA_ACTIONS: tuple[str, ...] = ("append", "replace", "merge", "set")


class OutputMessage(TypedDict):
    """One message sent with ``Send``; every key but ``type`` is optional."""

    type: str
    props: dict[str, Any]
    id: NotRequired[str]
    delta: NotRequired[bool]
    done: NotRequired[bool]
    delta_path: NotRequired[str]
    delta_action: NotRequired[DeltaAction]
    group_id: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]


class OutputGroup(TypedDict):
    """What ``SendGroup`` takes: related messages that render together."""

    id: str
    messages: list[OutputMessage | str]
    metadata: NotRequired[dict[str, Any]]


class OutputMessageError(ValueError):
    """A message or group that is not a valid output message; the text names the field."""


# Props a *full* message of a built-in type must carry: name -> accepted types.
_STRING = (str,)
_ARGUMENTS = (str, dict, list)
REQUIRED_PROPS: dict[str, dict[str, tuple[type, ...]]] = {
    TOOL_CALL: {"id": _STRING, "name": _STRING, "arguments": _ARGUMENTS},
    IMAGE: {"url": _STRING},
    AUDIO: {"url": _STRING},
    VIDEO: {"url": _STRING},
    ERROR: {"message": _STRING},
}
# Props that may be absent but, when present in a full message, must have this type.
OPTIONAL_PROPS: dict[str, dict[str, tuple[type, ...]]] = {
    TEXT: {"content": _STRING},
    THINKING: {"content": _STRING},
    USER_INPUT: {"content": _STRING},
    LOADING: {"message": _STRING},
    ERROR: {"code": (str, int)},
}

_ENVELOPE_KEYS = ("type", "props", "id", "delta", "done", "delta_path", "delta_action", "group_id", "metadata")


def clone_json(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts and lists copied, everything else shared)."""
    if isinstance(value, dict):
        return {key: clone_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clone_json(item) for item in value]
    return value


def _type_names(types: tuple[type, ...]) -> str:
    names = {str: "a string", dict: "an object", list: "a list", int: "an integer", bool: "a boolean"}
    return " or ".join(names.get(t, t.__name__) for t in types)


def _check(ok: bool, where: str, expected: str, value: Any) -> None:
    if not ok:
        raise OutputMessageError(f"{where} must be {expected}, got {value!r}")


def _check_props(mtype: str, props: dict[str, Any], where: str) -> None:
    for name, types in REQUIRED_PROPS.get(mtype, {}).items():
        if name not in props:
            raise OutputMessageError(f"{where}.props.{name} is required for a {mtype!r} message")
    checks = {**OPTIONAL_PROPS.get(mtype, {}), **REQUIRED_PROPS.get(mtype, {})}
    for name, types in checks.items():
        if name in props:
            value = props[name]
            ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
            _check(ok, f"{where}.props.{name}", _type_names(types), value)


def is_bare_close(message: dict[str, Any]) -> bool:
    """A ``done`` message with no props and no delta only closes its message (its props are kept)."""
    return bool(message.get("done")) and not message.get("delta") and not message.get("props")


def normalize_message(message: OutputMessage | str, *, where: str = "message") -> OutputMessage:
    """Validate one output message and return a private copy; a string is a text message.

    Raises ``OutputMessageError`` naming the field (``message.props.name``). Required props are checked
    only for messages that carry full props (not deltas, not a bare ``done``); unknown types pass.
    """
    if isinstance(message, str):
        return {"type": TEXT, "props": {"content": message}}
    if not isinstance(message, dict):
        raise OutputMessageError(f"{where} must be a dict or a string, got {type(message).__name__}")
    mtype = message.get("type")
    _check(isinstance(mtype, str) and mtype != "", f"{where}.type", "a non-empty string", mtype)
    props = message.get("props")
    _check(props is None or isinstance(props, dict), f"{where}.props", "an object", props)
    out: dict[str, Any] = {"type": mtype, "props": clone_json(props) if props else {}}
    if message.get("id") is not None:
        _check(isinstance(message["id"], str) and message["id"] != "", f"{where}.id", "a non-empty string",
               message["id"])
    for flag in ("delta", "done"):
        if message.get(flag) is not None:
            _check(isinstance(message[flag], bool), f"{where}.{flag}", "a boolean", message[flag])
    if message.get("delta_path") is not None:
        _check(isinstance(message["delta_path"], str), f"{where}.delta_path", "a string", message["delta_path"])
    if message.get("delta_action") is not None:
        _check(message["delta_action"] in DELTA_ACTIONS, f"{where}.delta_action",
               "one of " + ", ".join(DELTA_ACTIONS), message["delta_action"])
    if message.get("group_id") is not None:
        _check(isinstance(message["group_id"], str), f"{where}.group_id", "a string", message["group_id"])
    if message.get("metadata") is not None:
        _check(isinstance(message["metadata"], dict), f"{where}.metadata", "an object", message["metadata"])
    if not message.get("delta") and not is_bare_close(message):
        _check_props(mtype, out["props"], where)
    for key in _ENVELOPE_KEYS[2:]:
        if message.get(key) is not None:
            out[key] = clone_json(message[key])
    for key, value in message.items():  # unknown envelope keys travel unchanged
        if key not in _ENVELOPE_KEYS:
            out[key] = clone_json(value)
    return out  # type: ignore[return-value]


def normalize_group(group: OutputGroup, *, where: str = "group") -> list[OutputMessage]:
    """Validate a ``SendGroup`` argument; returns its messages, each carrying the group's id.

    The group's ``metadata`` is the base of each message's own (a message's keys win).
    """
    if not isinstance(group, dict):
        raise OutputMessageError(f"{where} must be a dict, got {type(group).__name__}")
    group_id = group.get("id")
    _check(isinstance(group_id, str) and group_id != "", f"{where}.id", "a non-empty string", group_id)
    messages = group.get("messages")
    _check(isinstance(messages, list), f"{where}.messages", "a list", messages)
    metadata = group.get("metadata")
    _check(metadata is None or isinstance(metadata, dict), f"{where}.metadata", "an object", metadata)
    out = []
    for index, raw in enumerate(messages):
        message = normalize_message(raw, where=f"{where}.messages[{index}]")
        message["group_id"] = group_id
        if metadata:
            message["metadata"] = {**clone_json(metadata), **message.get("metadata", {})}
        out.append(message)
    return out
