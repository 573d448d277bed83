"""Yao's current output message and its lifecycle events, as data: what a hook's value becomes
(``parseMessage``, agent/context/jsapi_helpers.go:12-98 at 5a3f9a6a) and the exact JSON objects Yao's
writers marshal (``message.Message`` and the ``Event*Data`` structs, agent/output/message/types.go).

Every wire object is built in Go's key order: struct fields in declaration order (:class:`GoStruct`),
maps sorted (``go_value``), ``omitempty`` fields left out when zero. So ``go_json.dumps`` of one is the
text after ``data:`` on Yao's SSE stream, and dict equality in tests compares the whole object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..models.openai_shapes import OPENAI_USAGE
from ..output.messages import METADATA_FIELDS, Metadata
from .go_json import GoStruct, go_value

EVENT = "event"
TEXT = "text"

MESSAGE_START = "message_start"
MESSAGE_END = "message_end"
BLOCK_START = "block_start"
BLOCK_END = "block_end"
STREAM_START = "stream_start"
STREAM_END = "stream_end"

EVENT_TEXT = {
    MESSAGE_START: "Message started", MESSAGE_END: "Message completed",
    BLOCK_START: "Block started", BLOCK_END: "Block completed",
    STREAM_START: "Stream started", STREAM_END: "Stream completed",
}
"""The ``message`` of each lifecycle event (context/output.go:104,140,217,404,475; handlers/stream.go:131,570)."""


class MessageValueError(ValueError):
    """A hook value ``parseMessage`` refuses; the text is Yao's (the caller adds ``invalid message: ``)."""


@dataclass(slots=True)
class YaoMessage:
    """``message.Message`` (types.go:22-44): what ``ctx.Send`` and its siblings carry."""

    type: str
    props: dict[str, Any] | None = None
    chunk_id: str = ""
    message_id: str = ""
    block_id: str = ""
    thread_id: str = ""
    delta: bool = False
    delta_path: str = ""
    delta_action: str = ""
    type_change: bool = False
    metadata: Metadata | None = None
    """``message.Metadata``: the keys that were given (``output.messages.Metadata``, shared with the seed's
    envelope: the same Go struct)."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_convertible(value: Any, where: str) -> None:
    """What the V8 bridge could not turn into a Go value (``bridge.GoValue``)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise MessageValueError(f"failed to convert message: {where} has a key {key!r} that is not a string")
            _check_convertible(item, f"{where}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_convertible(item, f"{where}[{index}]")
        return
    raise MessageValueError(f"failed to convert message: {where} is a {type(value).__name__}")


def parse_message(value: Any) -> YaoMessage:
    """A hook's value as Yao's ``parseMessage`` reads it (jsapi_helpers.go:12-98): a string is a text
    message; an object needs a string ``type``; each other field is taken only when it has the right
    type (``props`` an object, ids and paths strings, ``delta`` / ``type_change`` booleans, metadata
    numbers truncated to integers) and silently dropped otherwise — the seed's ``id``, ``done`` and
    ``group_id`` included. Raises :class:`MessageValueError` with Yao's text."""
    if isinstance(value, str):
        return YaoMessage(type=TEXT, props={"content": value})
    if not isinstance(value, (dict, list, tuple)):
        raise MessageValueError("message must be a string or object")
    _check_convertible(value, "message")
    if not isinstance(value, dict):  # an array is an object to V8, but not a map once converted
        raise MessageValueError("message must be an object")
    kind = value.get("type")
    if not isinstance(kind, str):
        raise MessageValueError("message.type is required and must be a string")
    msg = YaoMessage(type=kind)
    props = value.get("props")
    if isinstance(props, dict):
        msg.props = props
    for name in ("chunk_id", "message_id", "block_id", "thread_id", "delta_path", "delta_action"):
        if isinstance(value.get(name), str):
            setattr(msg, name, value[name])
    for name in ("delta", "type_change"):
        if isinstance(value.get(name), bool):
            setattr(msg, name, value[name])
    metadata = value.get("metadata")
    if isinstance(metadata, dict):
        msg.metadata = Metadata()
        for name in ("timestamp", "sequence"):
            number = metadata.get(name)
            if _is_number(number) and math.isfinite(number):
                msg.metadata[name] = int(number)  # Go: int64(float64), toward zero
        if isinstance(metadata.get("trace_id"), str):
            msg.metadata["trace_id"] = metadata["trace_id"]
    return msg


def to_wire(msg: YaoMessage) -> GoStruct:
    """``json.Marshal(msg)`` as a dict in Go's order: ``type`` always, the rest ``omitempty`` (types.go:24-43);
    props is a map (keys sorted, recursively), metadata a struct (``{}`` when all of it is zero)."""
    out = GoStruct(type=msg.type)
    if msg.props:
        out["props"] = go_value(msg.props)
    for name in ("chunk_id", "message_id", "block_id", "thread_id"):
        if getattr(msg, name):
            out[name] = getattr(msg, name)
    if msg.delta:
        out["delta"] = True
    for name in ("delta_path", "delta_action"):
        if getattr(msg, name):
            out[name] = getattr(msg, name)
    if msg.type_change:
        out["type_change"] = True
    if msg.metadata is not None:
        # a struct: its fields in declaration order (METADATA_FIELDS), each omitempty
        out["metadata"] = GoStruct((name, msg.metadata[name]) for name in METADATA_FIELDS if msg.metadata.get(name))
    return out


def event_message(event: str, data: Any, text: str | None = None) -> YaoMessage:
    """``output.NewEventMessage(event, text, data)`` (builtin.go:113-122): props is a map, so on the wire
    its keys come sorted — ``data``, ``event``, ``message`` — and ``message`` is there even when ``""``."""
    return YaoMessage(type=EVENT, props={"event": event, "message": EVENT_TEXT.get(event, "") if text is None
                                         else text, "data": data})


def _put(out: GoStruct, name: str, value: Any) -> None:
    """An ``omitempty`` field: written unless zero (``""``, ``0``, ``None``, an empty map)."""
    if value:
        out[name] = go_value(value)


def message_start_data(message_id: str, kind: str, timestamp: int, thread_id: str = "", *,
                       tool_call: dict | None = None, extra: dict | None = None) -> GoStruct:
    """``EventMessageStartData`` (types.go:356-363)."""
    out = GoStruct(message_id=message_id, type=kind, timestamp=timestamp)
    _put(out, "thread_id", thread_id)
    _put(out, "tool_call", tool_call)
    _put(out, "extra", extra)
    return out


def message_end_data(message_id: str, kind: str, timestamp: int, thread_id: str, duration_ms: int,
                     chunk_count: int, status: str = "completed", *, tool_call: dict | None = None,
                     extra: dict | None = None) -> GoStruct:
    """``EventMessageEndData`` (types.go:368-378): ``duration_ms``, ``chunk_count``, ``status`` always."""
    out = GoStruct(message_id=message_id, type=kind, timestamp=timestamp)
    _put(out, "thread_id", thread_id)
    out["duration_ms"] = duration_ms
    out["chunk_count"] = chunk_count
    out["status"] = status
    _put(out, "tool_call", tool_call)
    if extra:  # a map: {"content": …} is written whatever the content (context/output.go:209-214)
        out["extra"] = go_value(extra)
    return out


def block_start_data(block_id: str, kind: str, timestamp: int, label: str = "", *,
                     extra: dict | None = None) -> GoStruct:
    """``EventBlockStartData`` (types.go:392-398)."""
    out = GoStruct(block_id=block_id, type=kind, timestamp=timestamp)
    _put(out, "label", label)
    _put(out, "extra", extra)
    return out


def block_end_data(block_id: str, kind: str, timestamp: int, duration_ms: int, message_count: int,
                   status: str = "completed", *, extra: dict | None = None) -> GoStruct:
    """``EventBlockEndData`` (types.go:403-411)."""
    out = GoStruct(block_id=block_id, type=kind, timestamp=timestamp, duration_ms=duration_ms,
                   message_count=message_count, status=status)
    _put(out, "extra", extra)
    return out


ASSISTANT_FIELDS = ("assistant_id", "type", "name", "avatar", "description")
"""``AssistantInfo`` (types.go:286-292): ``assistant_id`` always, the rest ``omitempty``."""


def assistant_info(assistant_id: str, **fields: str) -> GoStruct:
    out = GoStruct(assistant_id=assistant_id)
    for name in ASSISTANT_FIELDS[1:]:
        _put(out, name, fields.get(name, ""))
    return out


def stream_start_data(context_id: str, request_id: str, timestamp: int, chat_id: str, trace_id: str, *,
                      assistant: GoStruct | None = None, metadata: dict | None = None) -> GoStruct:
    """``EventStreamStartData`` (types.go:329-337), as agent.go:712-720 fills it."""
    out = GoStruct(context_id=context_id, request_id=request_id, timestamp=timestamp, chat_id=chat_id,
                   trace_id=trace_id)
    if assistant is not None:
        out["assistant"] = assistant
    _put(out, "metadata", metadata)
    return out


def stream_end_data(request_id: str, context_id: str, trace_id: str, timestamp: int, duration_ms: int,
                    status: str, *, error: str = "", usage: dict | None = None,
                    metadata: dict | None = None) -> GoStruct:
    """``EventStreamEndData`` (types.go:341-351), as agent.go:733-751 fills it. ``usage`` is the last
    completion's ``UsageInfo`` (``request_shapes.usage_info``: the three counts; the kit has no details)."""
    out = GoStruct(request_id=request_id, context_id=context_id, trace_id=trace_id, timestamp=timestamp,
                   duration_ms=duration_ms, status=status)
    _put(out, "error", error)
    if usage is not None:
        out["usage"] = GoStruct((name, int(usage.get(name) or 0)) for name in OPENAI_USAGE)
    _put(out, "metadata", metadata)
    return out
