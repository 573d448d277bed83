"""Client adapters: what a client that ``accept``s a given format receives (seed 000, "Message Types
and Client Support"). Both are ``Output`` sinks and record what they produced.

- ``CuiAdapter`` (``cui-web``, ``cui-native``, …): every message, unchanged.
- ``StandardAdapter`` (``standard``): OpenAI ``chat.completion.chunk`` dicts. A standard client can only
  append, so each chunk carries what a message *added* to the text the client already has: the
  appended string of an ``append`` delta, or the new tail of a replaced text that extends the old one (a
  replacement that rewrites earlier text sends nothing). An ``error`` message ends the stream with an
  ``{"error": {...}}`` object; nothing is emitted after it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson

from . import messages as types
from .delta import apply_message_in_place, new_state

Chunk = dict[str, Any]
_DROPPED = frozenset({types.LOADING, types.ACTION, types.EVENT, types.USER_INPUT})
_TEXT_FIELDS = {types.TEXT: ("content", "content"), types.THINKING: ("content", "reasoning_content")}
_GROWING = {types.TEXT: "content", types.THINKING: "content", types.TOOL_CALL: "arguments"}


class CuiAdapter:
    """A CUI client: records (and optionally forwards) every message unchanged."""

    def __init__(self, sink: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self._forward = sink

    @property
    def chunks(self) -> list[dict[str, Any]]:
        """What the client received: the messages themselves."""
        return self.messages

    def write(self, messages: list[dict[str, Any]]) -> None:
        self.messages.extend(messages)
        if self._forward is not None:
            self._forward(list(messages))


class StandardAdapter:
    """An OpenAI-compatible client: turns output messages into ``chat.completion.chunk`` dicts.

    ``id`` / ``created`` / ``model`` are fixed per stream; pass them to get reproducible chunks.
    ``sink``, if given, receives each batch of new chunks.
    """

    def __init__(self, *, id: str | None = None, created: int | None = None, model: str = "agentctx",
                 sink: Callable[[list[Chunk]], None] | None = None) -> None:
        self.id = id if id is not None else f"chatcmpl-{uuid.uuid4().hex}"
        self.created = created if created is not None else int(time.time())
        self.model = model
        self.chunks: list[Chunk] = []
        self.messages: list[dict[str, Any]] = []
        self.ended = False
        self._forward = sink
        self._state = new_state()
        self._sent_url: dict[str, str] = {}
        self._tool_index: dict[str, int] = {}
        self._role_sent = False

    # ---- sink ------------------------------------------------------------------------------------

    def write(self, messages: list[dict[str, Any]]) -> None:
        """Convert a batch of messages; chunks go to ``.chunks`` (and the forwarding sink)."""
        new: list[Chunk] = []
        for message in messages:
            if self.ended:
                break
            self.messages.append(message)
            new.extend(self.convert(message))
        self.chunks.extend(new)
        if new and self._forward is not None:
            self._forward(new)

    def finish(self, reason: str | None = None) -> Chunk | None:
        """End the stream with a ``finish_reason`` chunk (``"tool_calls"`` if any were sent, else
        ``"stop"``); returns it, or ``None`` if the stream already ended."""
        if self.ended:
            return None
        self.ended = True
        reason = reason or ("tool_calls" if self._tool_index else "stop")
        chunk = self._chunk({}, finish_reason=reason)
        self.chunks.append(chunk)
        if self._forward is not None:
            self._forward([chunk])
        return chunk

    # ---- conversion ------------------------------------------------------------------------------

    def convert(self, message: dict[str, Any]) -> list[Chunk]:
        """The chunks one message becomes (updating what the client is known to have)."""
        known = self._state["messages"].get(message.get("id")) if isinstance(message, dict) else None
        kind = known["type"] if known is not None else message.get("type") if isinstance(message, dict) else None
        prop = _GROWING.get(kind)
        appended = _appended_text(message, prop) if known is not None and prop else None
        # Keep the old text only when we must diff: holding it would stop CPython growing it in place.
        before = known["props"].get(prop) if known is not None and prop and appended is None else None
        msg_id = apply_message_in_place(self._state, message)
        entry = self._state["messages"][msg_id]
        kind = entry["type"]
        if kind in _TEXT_FIELDS:
            return self._text_chunks(entry["props"], before, appended, *_TEXT_FIELDS[kind])
        if kind == types.TOOL_CALL:
            return self._tool_chunks(msg_id, entry["props"], before, appended)
        if kind in (types.IMAGE, types.AUDIO, types.VIDEO):
            return self._media_chunks(msg_id, kind, entry["props"])
        if kind == types.ERROR:
            self.ended = True
            return [self._error(entry["props"])]
        return []  # loading, action, event, user_input and unknown types: not for a standard client

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> Chunk:
        if not self._role_sent and delta:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    def _text_chunks(self, props: dict, before: Any, appended: str | None, prop: str,
                     field: str) -> list[Chunk]:
        now = props.get(prop)
        if not isinstance(now, str):
            return []  # e.g. an append that made the prop a list: nothing a standard client can show
        added = appended if appended is not None else _tail(before, now)
        return [self._chunk({field: added})] if added else []

    def _tool_chunks(self, msg_id: str, props: dict[str, Any], before: Any, appended: str | None) -> list[Chunk]:
        if msg_id not in self._tool_index:
            self._tool_index[msg_id] = len(self._tool_index)
            call = {"index": self._tool_index[msg_id], "id": props.get("id", msg_id), "type": "function",
                    "function": {"name": props.get("name", ""), "arguments": _arguments(props.get("arguments"))}}
            return [self._chunk({"tool_calls": [call]})]
        if appended is None:
            appended = _tail(_arguments(before), _arguments(props.get("arguments")))
        if not appended:
            return []
        call = {"index": self._tool_index[msg_id], "function": {"arguments": appended}}
        return [self._chunk({"tool_calls": [call]})]

    def _media_chunks(self, msg_id: str, kind: str, props: dict[str, Any]) -> list[Chunk]:
        url = props.get("url")
        if not isinstance(url, str) or not url or self._sent_url.get(msg_id) == url:
            return []
        self._sent_url[msg_id] = url
        if kind == types.IMAGE:
            return [self._chunk({"content": f"![{_label(props.get('alt'), '')}]({_target(url)})"})]
        label = props.get("title") or props.get("transcript") or kind
        return [self._chunk({"content": f"[{_label(label, kind)}]({_target(url)})"})]

    def _error(self, props: dict[str, Any]) -> Chunk:
        error: dict[str, Any] = {"message": str(props.get("message", "")), "type": "error",
                                 "code": props.get("code")}
        if props.get("details") is not None:
            error["details"] = props["details"]
        return {"error": error}


def _appended_text(message: dict[str, Any], prop: str) -> str | None:
    """The string a message appends to ``prop`` when it is a plain append delta, else ``None``."""
    if not message.get("delta") or (message.get("delta_action") or "append") != "append":
        return None
    path = message.get("delta_path")
    if path and path != prop:
        return None
    value = (message.get("props") or {}).get(prop)
    return value if isinstance(value, str) else None


def _tail(before: Any, now: Any) -> str:
    """What ``now`` adds after ``before``; nothing when it rewrites it (a client cannot take back text)."""
    if not isinstance(now, str):
        return ""
    before = before if isinstance(before, str) else ""
    return now[len(before):] if now.startswith(before) else ""


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _label(text: Any, fallback: str) -> str:
    """Text safe inside Markdown link brackets."""
    text = str(text) if text else fallback
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("\n", " ")


def _target(url: str) -> str:
    """A URL safe inside Markdown link parentheses."""
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def adapter_for(accept: str, **options: Any) -> StandardAdapter | CuiAdapter:
    """``"standard"`` gets a ``StandardAdapter``; any other client kind (``cui-web``, …) a ``CuiAdapter``."""
    if accept == "standard":
        return StandardAdapter(**options)
    return CuiAdapter(**options)
