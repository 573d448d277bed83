"""Output messages: the one place their envelope is checked (seed 000, "ctx.Send", "ctx.SendGroup").

``normalize_message`` accepts what Yao's ``parseMessage`` accepts (``agent/context/jsapi_helpers.go:12-99``
at ``afab9c2``) and keeps what it keeps:

- a string is the text shorthand ``{"type": "text", "props": {"content": s}}``;
- ``type`` must be a string (``""`` is allowed), else ``invalid message: message.type is required and
  must be a string``; anything that is not an object fails with Yao's ``message must be …`` text;
- ``props`` (an object), ``id``, ``delta_path``, ``delta_action``, ``group_id`` (strings), ``delta``,
  ``done``, ``type_change``, ``group_start``, ``group_end`` (booleans) and ``metadata`` are kept when
  they have that type; **a field of the wrong type is dropped** (Yao drops it without a word), and so is
  every other top-level key. ``metadata`` keeps only ``timestamp`` and ``sequence`` (numbers, truncated to
  integers as Go's ``int64(float64)`` does) and ``trace_id`` (a string). Each drop is reported as a
  ``field_dropped`` diagnostic when a ``report`` callable is given. A key given as ``None`` is simply
  absent (JavaScript's ``undefined`` / ``null``).
- ``id: ""`` is the same as no id (Yao's zero value), so it is left out;
- props are never required or checked (the per-type props in ``message_types`` are informational), and
  any ``delta_action`` string passes: the delta engine decides what it does.

Differences from Yao, on purpose: the result always has ``props`` (``{}`` when none was kept; the CUI
wire form leaves an empty one out, ``adapters.cui_message``), and a value JSON cannot carry (a set, bytes,
NaN, a non-string key …) anywhere in the message is an ``OutputMessageError`` naming its place —
messages travel to the browser and into saved notebooks as JSON (Yao's JavaScript bridge cannot even
produce such values; a cyclic or BigInt value fails there with ``failed to convert message``).

The result is a private deep copy, so a caller that reuses its dicts cannot change what was sent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

from .._js_types import js_type, with_article
from .message_types import (  # noqa: F401 - re-exported: the type names live in the one table
    ACTION,
    AUDIO,
    ERROR,
    EVENT,
    IMAGE,
    LOADING,
    MESSAGE_TYPES,
    TEXT,
    THINKING,
    TOOL_CALL,
    USER_INPUT,
    VIDEO,
)

DELTA_ACTIONS: tuple[str, ...] = ("append", "replace", "merge", "set")

Report = Callable[..., None]


class Metadata(TypedDict, total=False):
    """Yao's ``message.Metadata``, the one type for both wire formats: the seed's envelope (here) and
    today's ``message.Message`` (``yao.wire.YaoMessage``) carry the same struct — ``timestamp`` (int64),
    ``sequence`` (int), ``trace_id`` (string), each ``omitempty`` (yao afab9c2
    ``agent/output/message/types.go:61-65``, unchanged at 5a3f9a6a ``:47-51``). A key is absent when not
    given; Go's zero value is written the same way (left out)."""

    timestamp: int
    sequence: int
    trace_id: str


class OutputMessage(TypedDict):
    """One message sent with ``Send``; every key but ``type`` is optional (``props`` is always there
    after ``normalize_message``)."""

    type: str
    props: dict[str, Any]
    id: NotRequired[str]
    delta: NotRequired[bool]
    done: NotRequired[bool]
    delta_path: NotRequired[str]
    delta_action: NotRequired[str]
    type_change: NotRequired[bool]
    group_id: NotRequired[str]
    group_start: NotRequired[bool]
    group_end: NotRequired[bool]
    metadata: NotRequired[Metadata]


class OutputGroup(TypedDict):
    """What ``SendGroup`` takes and ``normalize_group`` returns (Yao's ``message.Group``)."""

    id: str
    messages: list[OutputMessage]
    metadata: NotRequired[Metadata]


class OutputMessageError(ValueError):
    """A message or group Yao would refuse (or JSON cannot carry); the text is Yao's, naming the place."""


def clone_json(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts and lists copied, everything else shared)."""
    if isinstance(value, dict):
        return {key: clone_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clone_json(item) for item in value]
    return value


_JSON_SCALARS = (str, int, bool, type(None))
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_]+")


MAX_DEPTH = 100
"""How deep an output message may nest (the view, the session file and orjson all have limits)."""
_INT_RANGE = (-(2**63), 2**64 - 1)  # what orjson writes; past it JSON serialisation fails later


class _NotPlain(Exception):
    """Raised by :func:`_plain_copy` at the first thing JSON cannot carry (the slow walk names it)."""


def _plain_copy(value: Any, depth: int) -> Any:
    """:func:`json_copy` without building a place name per element: the fast path for every send."""
    kind = type(value)
    if kind is str:
        if not value.isascii():
            value.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError
        return value
    if kind is dict:
        if depth >= MAX_DEPTH:
            raise _NotPlain
        copy = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            if not key.isascii():
                key.encode("utf-8")
            copy[key] = _plain_copy(item, depth + 1)
        return copy
    if kind is list:
        if depth >= MAX_DEPTH:
            raise _NotPlain
        return [_plain_copy(item, depth + 1) for item in value]
    if kind is int:
        if _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            return value
        raise _NotPlain
    if value is None or kind is bool:
        return value
    if kind is float and math.isfinite(value):
        return value
    raise _NotPlain


def json_copy(value: Any, where: str, depth: int = 0) -> Any:
    """A deep copy of ``value`` that is plain JSON, or ``OutputMessageError`` naming the first bad place."""
    try:
        return _plain_copy(value, depth)
    except (_NotPlain, UnicodeEncodeError):
        return _named_copy(value, where, depth)  # the same walk again, naming the place it fails at


def _named_copy(value: Any, where: str, depth: int = 0) -> Any:
    """The walk behind :func:`json_copy` that names each place (only run once the fast walk failed).

    Output messages travel to the browser and into saved notebooks as JSON: a set, a datetime, NaN, an
    integer past 64 bits, a lone surrogate, a message nested past :data:`MAX_DEPTH` or an object would
    otherwise pass ``send`` and break every later snapshot of the view (or the send itself, deep inside).
    """
    if depth > MAX_DEPTH:
        raise OutputMessageError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        copy: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise OutputMessageError(f"{where} has a non-string key {key!r}; JSON keys are strings")
            copy[key] = _named_copy(item, f"{where}.{_text_ok(key, where)}", depth + 1)
        return copy
    if isinstance(value, list):
        return [_named_copy(item, f"{where}[{index}]", depth + 1) for index, item in enumerate(value)]
    if isinstance(value, str):
        _text_ok(value, where)
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if not _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            raise OutputMessageError(f"{where} is {value}, an integer past 64 bits, which JSON here cannot carry")
        return value
    if isinstance(value, _JSON_SCALARS):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise OutputMessageError(f"{where} is {value!r}, which JSON cannot carry")
    raise OutputMessageError(f"{where} is a {type(value).__name__}, which JSON cannot carry: {value!r:.80}")


def _text_ok(text: str, where: str) -> str:
    """``text`` if it is valid Unicode (no lone surrogate, which UTF-8 and so JSON cannot carry)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise OutputMessageError(f"{where} has a lone surrogate in {text[:40]!r}, which JSON cannot carry") from None
    return text


# ---- the envelope (jsapi_helpers.go:40-96) ------------------------------------------------------------

def _is_bool(value: Any) -> bool:
    return value is True or value is False


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_STRING, _BOOLEAN = ("a string", _is_str), ("a boolean", _is_bool)
FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "id": _STRING,
    "delta": _BOOLEAN,
    "done": _BOOLEAN,
    "delta_path": _STRING,
    "delta_action": _STRING,
    "type_change": _BOOLEAN,
    "group_id": _STRING,
    "group_start": _BOOLEAN,
    "group_end": _BOOLEAN,
}
"""The envelope fields after ``type`` / ``props``, in Yao's struct order (message/types.go:34-58), with
the JSON type ``parseMessage`` keeps them with; ``metadata`` (last) is handled on its own."""

METADATA_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "timestamp": ("a number", _is_number),
    "sequence": ("a number", _is_number),
    "trace_id": _STRING,
}
"""What ``message.Metadata`` holds (types.go:61-65); every other metadata key is dropped."""


def _metadata(raw: Any, where: str, report: Report | None) -> Metadata | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        if report is not None:
            report("field_dropped", where, field=where, reason=f"it is {with_article(js_type(raw))}, Yao keeps only an object")
        return None
    out: dict[str, Any] = {}
    for key, value in raw.items():
        spec = METADATA_FIELDS.get(key)
        if spec is not None and spec[1](value):
            out[key] = int(value) if key != "trace_id" else value  # Go: int64(float64) truncates
        elif value is not None and report is not None:
            reason = (f"it is {with_article(js_type(value))}, Yao keeps only {spec[0]}" if spec is not None
                      else "Yao's metadata keeps only timestamp, sequence and trace_id")
            report("field_dropped", f"{where}.{key}", field=f"{where}.{key}", reason=reason)
    return out  # type: ignore[return-value]


def _envelope(raw: dict[str, Any], mtype: str, where: str, report: Report | None) -> OutputMessage:
    """The fields Yao keeps of an already JSON-checked (and privately copied) message object."""
    props = raw.get("props")
    if props is not None and not isinstance(props, dict):
        if report is not None:
            report("field_dropped", f"{where}.props", field=f"{where}.props",
                   reason=f"it is {with_article(js_type(props))}, Yao keeps only an object")
        props = None
    out: dict[str, Any] = {"type": mtype, "props": props or {}}
    for key, (expected, ok) in FIELDS.items():
        value = raw.get(key)
        if value is None:
            continue
        if ok(value):
            if key != "id" or value != "":  # id "" is Yao's zero value: no id
                out[key] = value
        elif report is not None:
            report("field_dropped", f"{where}.{key}", field=f"{where}.{key}",
                   reason=f"it is {with_article(js_type(value))}, Yao keeps only {expected}")
    metadata = _metadata(raw.get("metadata"), f"{where}.metadata", report)
    if metadata is not None:
        out["metadata"] = metadata
    if report is not None:
        for key in raw:
            if key not in FIELDS and key not in ("type", "props", "metadata") and raw[key] is not None:
                report("field_dropped", f"{where}.{key}", field=f"{where}.{key}",
                       reason="it is not a field of Yao's message")
    return out  # type: ignore[return-value]


def normalize_message(message: OutputMessage | str, *, where: str = "message",
                      report: Report | None = None) -> OutputMessage:
    """The message as Yao's ``parseMessage`` keeps it, as a private copy; a string is a text message.

    Raises ``OutputMessageError`` with Yao's text (``invalid message: message.type is required and must
    be a string``) for what Yao refuses, and for what JSON cannot carry. ``report(code, where,
    **details)`` (e.g. a ``diagnostics.Collector``) hears about every field dropped (``field_dropped``).
    """
    if isinstance(message, str):
        return {"type": TEXT, "props": {"content": message}}
    if isinstance(message, list):
        raise OutputMessageError(f"invalid message: {where} must be an object")
    if not isinstance(message, dict):
        raise OutputMessageError(f"invalid message: {where} must be a string or object")
    try:
        raw = json_copy(message, where)
    except OutputMessageError as error:
        raise OutputMessageError(f"invalid message: failed to convert message: {error}") from None
    mtype = raw.get("type")
    if not isinstance(mtype, str):
        raise OutputMessageError(f"invalid message: {where}.type is required and must be a string")
    return _envelope(raw, mtype, where, report)


_plain_keys: dict[str, bool] = {}
"""``delta_path`` values already seen, and whether each is one plain prop name (``[A-Za-z0-9_]+``)."""


def _is_plain_key(key: str) -> bool:
    known = _plain_keys.get(key)
    if known is None:
        if len(_plain_keys) >= 4096:
            _plain_keys.clear()
        known = _plain_keys[key] = _PLAIN_KEY.fullmatch(key) is not None
    return known


def _unicode_ok(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


TextAppend = tuple[str, str, str, str, bool]
"""A text append in the stream's own shape, as parts: ``(id, type, key, text, with_action)``
(``with_action``: the message spelled ``delta_action: "append"``). ``text_append_message`` gives its
normalized dict; ``Output`` keeps these instead of dicts on its fast path."""


def try_text_append_parts(message: Any) -> TextAppend | None:
    """The parts of a text append in the stream's own shape, or None when ``message`` is anything else.

    The shape: exactly ``type``, ``id``, ``props``, ``delta``, ``delta_path`` and optionally
    ``delta_action``, with exact types — a non-empty ``id``, ``delta`` ``True``, ``delta_path`` one plain
    prop name, ``delta_action`` ``"append"``, ``props`` that one key holding a string, every string valid
    Unicode. Nothing in it can be dropped or reported, so these checks are the whole of
    ``normalize_message`` for it (and the strings, immutable, need no copy).
    """
    if type(message) is not dict:
        return None
    size = len(message)
    # 5 (6) keys, each of the 5 (6) names found: exactly those keys (cheaper than comparing key sets)
    try:
        if size == 6:
            action = message["delta_action"]
            if type(action) is not str or action != "append":
                return None
        elif size != 5:
            return None
        mtype, msg_id, props, key = message["type"], message["id"], message["props"], message["delta_path"]
        delta = message["delta"]
    except KeyError:
        return None
    if (delta is not True or type(mtype) is not str or type(msg_id) is not str or not msg_id
            or type(props) is not dict or len(props) != 1 or type(key) is not str):
        return None
    text = props.get(key)
    if type(text) is not str or (_plain_keys.get(key) is not True and not _is_plain_key(key)):
        return None
    if not (text.isascii() and msg_id.isascii() and mtype.isascii()) and not (
            _unicode_ok(text) and _unicode_ok(msg_id) and _unicode_ok(mtype)):
        return None  # a lone surrogate: normalize_message names it
    return (msg_id, mtype, key, text, len(message) == 6)


def text_append_message(parts: TextAppend) -> OutputMessage:
    """The normalized message of a text append's parts (what ``normalize_message`` returns for it)."""
    msg_id, mtype, key, text, with_action = parts
    if with_action:
        return {"type": mtype, "props": {key: text}, "id": msg_id, "delta": True,  # type: ignore[typeddict-unknown-key]
                "delta_path": key, "delta_action": "append"}
    return {"type": mtype, "props": {key: text}, "id": msg_id, "delta": True, "delta_path": key}


def normalize_group(group: OutputGroup, *, where: str = "group", report: Report | None = None) -> OutputGroup:
    """The group as Yao's ``parseGroup`` keeps it (jsapi_helpers.go:102-220): ``{"id", "messages",
    "metadata"?}``, each member parsed like ``normalize_message`` but **not** tagged with the group's id
    (``group_members`` does that, for the delta state and the view).

    Yao's rules: ``id`` must be a string (``""`` is allowed); ``messages`` must be a list (checked after
    ``id``); every member must be an object — the string shorthand is not accepted inside a group — with a
    string ``type``. Errors carry Yao's text, e.g. ``invalid group: group.messages[0] must be an object``.
    """
    if not isinstance(group, dict):
        raise OutputMessageError(f"invalid group: {where} must be an object")
    try:
        raw = json_copy(group, where)
    except OutputMessageError as error:
        raise OutputMessageError(f"invalid group: failed to convert group: {error}") from None
    group_id = raw.get("id")
    if not isinstance(group_id, str):
        raise OutputMessageError(f"invalid group: {where}.id is required and must be a string")
    members = raw.get("messages")
    if not isinstance(members, list):
        raise OutputMessageError(f"invalid group: {where}.messages is required and must be an array")
    messages: list[OutputMessage] = []
    for index, member in enumerate(members):
        place = f"{where}.messages[{index}]"
        if not isinstance(member, dict):
            raise OutputMessageError(f"invalid group: {place} must be an object")
        mtype = member.get("type")
        if not isinstance(mtype, str):
            raise OutputMessageError(f"invalid group: {place}.type is required")
        messages.append(_envelope(member, mtype, place, report))
    out: dict[str, Any] = {"id": group_id, "messages": messages}
    metadata = _metadata(raw.get("metadata"), f"{where}.metadata", report)
    if metadata is not None:
        out["metadata"] = metadata
    if report is not None:
        for key in raw:
            if key not in ("id", "messages", "metadata") and raw[key] is not None:
                report("field_dropped", f"{where}.{key}", field=f"{where}.{key}",
                       reason="it is not a field of Yao's group")
    return out  # type: ignore[return-value]


def group_members(group: OutputGroup) -> list[OutputMessage]:
    """A normalized group's messages as the delta state and the view take them: each tagged with the
    group's ``group_id`` (when the id is not ``""``) and with the group's metadata as the base of its own.

    This is our extension (Yao's members carry neither; a CUI client gets the group object itself, see
    ``adapters.CuiAdapter.write_group``). A member without an id gets ``"<group id>.<index>"``, so the
    members render together as a group instead of collapsing into the client's one slot for id-less
    messages (the seed's groups have no member ids). The dicts are new; props are shared with the group's.
    """
    group_id, metadata = group["id"], group.get("metadata")
    out: list[OutputMessage] = []
    for index, member in enumerate(group["messages"]):
        message = dict(member)
        if group_id:
            message["group_id"] = group_id
            if not message.get("id"):
                message["id"] = f"{group_id}.{index}"
        if metadata:
            message["metadata"] = {**metadata, **member.get("metadata", {})}
        out.append(message)  # type: ignore[arg-type]
    return out


def without_echoes(messages: list[OutputMessage]) -> list[OutputMessage]:
    """``messages`` without closing echoes: a non-delta ``done`` that repeats its id's last message.

    The runner ends each reply block as Yao's stream handler ends a message — the content, then ``done``
    with the same content (a standard client skips the second, a CUI client keeps the content) — so when
    a person reads a turn's output, the second of each pair says nothing new.
    """
    last: dict[Any, OutputMessage] = {}
    kept: list[OutputMessage] = []
    for message in messages:
        previous = last.get(message.get("id"))
        echo = (message.get("done") and not message.get("delta") and previous is not None
                and previous.get("type") == message.get("type") and previous.get("props") == message.get("props"))
        if not echo:
            kept.append(message)
        if message.get("id") is not None:
            last[message["id"]] = message
    return kept
