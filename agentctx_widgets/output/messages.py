"""Output message shapes and their validation (seed 000, "Message Types" and "Message Props by Type").

An output message is a plain JSON dict: ``{"type", "props", "id"?, "delta"?, "done"?, "delta_path"?,
"delta_action"?, "group_id"?, "metadata"?}``. ``normalize_message`` turns the string shorthand into a
text message, checks the envelope and the props a full message of a built-in type needs, and returns a
private deep copy so a caller that reuses its dicts cannot change what was sent.
"""

from __future__ import annotations

from collections.abc import Callable
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

_PROPS_CHECKED = frozenset(REQUIRED_PROPS) | frozenset(OPTIONAL_PROPS)


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
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise OutputMessageError(f"{where}.props.{name} must be {_type_names(types)}, got {value!r}")


def is_bare_close(message: dict[str, Any]) -> bool:
    """A ``done`` message with no props and no delta only closes its message (its props are kept)."""
    return bool(message.get("done")) and not message.get("delta") and not message.get("props")


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and value != ""


# Envelope fields after type/props: name -> (check, what it must be). Checked only when not None.
_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (_is_id, "a non-empty string"),
    "delta": (lambda v: v is True or v is False, "a boolean"),
    "done": (lambda v: v is True or v is False, "a boolean"),
    "delta_path": (lambda v: isinstance(v, str), "a string"),
    "delta_action": (lambda v: isinstance(v, str) and v in DELTA_ACTIONS, "one of " + ", ".join(DELTA_ACTIONS)),
    "group_id": (lambda v: isinstance(v, str), "a string"),
    "metadata": (lambda v: isinstance(v, dict), "an object"),
}


_JSON_SCALARS = (str, int, float, bool, type(None))


def json_copy(value: Any, where: str) -> Any:
    """A deep copy of ``value`` that is plain JSON, or ``OutputMessageError`` naming the first bad place.

    Output messages travel to the browser and into saved notebooks as JSON: a set, a datetime or an
    object would otherwise pass ``send`` and break every later snapshot of the view.
    """
    if isinstance(value, dict):
        copy: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise OutputMessageError(f"{where} has a non-string key {key!r}; JSON keys are strings")
            copy[key] = json_copy(item, f"{where}.{key}")
        return copy
    if isinstance(value, list):
        return [json_copy(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, _JSON_SCALARS):
        return value
    raise OutputMessageError(f"{where} is a {type(value).__name__}, which JSON cannot carry: {value!r:.80}")


def normalize_message(message: OutputMessage | str, *, where: str = "message") -> OutputMessage:
    """Validate one output message and return a private copy; a string is a text message.

    Raises ``OutputMessageError`` naming the field (``message.props.name``). Required props are checked
    only for messages that carry full props (not deltas, not a bare ``done``); unknown types pass.
    Envelope keys given as ``None`` are dropped; unknown keys travel unchanged.
    """
    if isinstance(message, str):
        return {"type": TEXT, "props": {"content": message}}
    if not isinstance(message, dict):
        raise OutputMessageError(f"{where} must be a dict or a string, got {type(message).__name__}")
    mtype = message.get("type")
    if not _is_id(mtype):
        raise OutputMessageError(f"{where}.type must be a non-empty string, got {mtype!r}")
    props = message.get("props")
    if props is not None and not isinstance(props, dict):
        raise OutputMessageError(f"{where}.props must be an object, got {props!r}")
    out: dict[str, Any] = {"type": mtype, "props": json_copy(props, f"{where}.props") if props else {}}
    for key, value in message.items():
        if key == "type" or key == "props":
            continue
        field = _FIELDS.get(key)
        if field is not None:
            if value is None:
                continue
            if not field[0](value):
                raise OutputMessageError(f"{where}.{key} must be {field[1]}, got {value!r}")
        out[key] = json_copy(value, f"{where}.{key}")
    if mtype in _PROPS_CHECKED and not out.get("delta") and not is_bare_close(out):
        _check_props(mtype, out["props"], where)
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
