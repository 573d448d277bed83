"""What each kind of client receives from a current-API request: Yao's two writers at 5a3f9a6a, as
``YaoOutput`` sinks (``write(messages)`` with the wire objects of ``wire.to_wire``).

- :class:`CuiWriter` (``cui-web``, ``cui-native``, ``cui-desktop``): every message as it is, one SSE event
  each, ``data: <json>\\n\\n`` (cui/adapter.go:17-22, cui/writer.go:93-126); nothing on close.
- :class:`OpenAIWriter` (``standard`` and any other accept, output.go:30-42): ``chat.completion.chunk``
  maps (keys sorted: Go marshals maps) as openai/converter.go converts each type, ``role:
  "assistant"`` on the first text/thinking chunk (writer.go:78-89), events silent except a
  ``stream_start`` with a trace id (adapter.go:79-91), and ``data: [DONE]`` on close (writer.go:190-208).

The routing, ``[DONE]`` and the chunk around a delta are the seed's (``output.adapters``: Yao's
writers did not change there between afab9c2 and 5a3f9a6a). What differs, as ``git diff afab9c2 5a3f9a6a
-- agent/output/adapters`` shows, and what the seed's adapter does on purpose for the seed:

- the chunk id is ``message_id`` (converter.go:62-116 at 5a3f9a6a; ``msg.ID`` at afab9c2);
- the wire is already Go's (``wire.to_wire``): no ``done`` field, so no done-skip (adapter.go:93-98 at
  afab9c2 is gone at 5a3f9a6a), and chunks are Go maps (keys sorted, ``go_value``) and SSE text;
- ``tool_call`` carries only ``props.id`` and ``props.function`` (converter.go:93-116); the seed's
  adapter also builds ``function`` from the seed's ``name`` / ``arguments``;
- every type with no converter and no link template (``execute`` and its family, ``user_input``, custom
  ones) gets Yao's fallback ``"📎 [View %s](" + type + ")"`` — the link lands in the label
  (converter.go:308-315); the seed's adapter writes the evident ``📎 [View <type>](<link>)`` for them;
- links are built on ``YAO_BASE_URL``, which Yao's writer hard-codes (writer.go:47-50; the seed's
  adapter writes none by default); pass ``base_url=None`` for none;
- no resend diagnostics, and ``check`` raises the converter's ``ConvertError`` for ``YaoOutput``.
"""

from __future__ import annotations

from typing import Any

from ..output.adapters import CUI_ACCEPTS, DONE, OpenAIChunks, for_accept
from ..output.execute_family import EXECUTE
from ..output.message_types import (
    LINK_TEMPLATES,
    TOOL_CALL,
    YAO_BASE_URL,
    YAO_MODEL,
    ConvertError,
    Emit,
    StandardConfig,
    lookup,
    to_standard,
)
from .go_json import dumps, go_value

Wire = dict[str, Any]

_TABLE_TYPES = frozenset({"text", "thinking", "loading", "error", "image", "action", "event"})
"""Types whose conversion the seed-era table does exactly as 5a3f9a6a (converter.go:17-32's registry)."""


def sse(payload: Any) -> str:
    """One SSE event as Yao writes it: ``data: `` + Go's JSON (or ``[DONE]``) + a blank line."""
    return f"data: {payload if payload == DONE else dumps(payload)}\n\n"


class CuiWriter:
    """A CUI client's stream: ``.chunks`` (the objects), ``.text`` (the SSE bytes as text)."""

    def __init__(self) -> None:
        self.chunks: list[Wire] = []
        self._lines: list[str] = []

    def write(self, messages: list[Wire]) -> None:
        self.chunks.extend(messages)
        self._lines.extend(sse(message) for message in messages)

    def close(self) -> None:
        """Yao's CUI writer sends nothing on close (cui/writer.go:85-90)."""

    @property
    def text(self) -> str:
        return "".join(self._lines)


class OpenAIWriter(OpenAIChunks):
    """A standard (OpenAI-compatible) client's stream: ``.chunks`` (chunk maps, error objects and
    ``"[DONE]"``), ``.text`` (the SSE text). ``created`` fixes the chunks' time (Yao: ``time.Now().Unix()``
    per chunk); ``reasoning`` is the model's ``Capabilities.Reasoning``; ``locale`` the request's."""

    def __init__(self, *, locale: str = "en", reasoning: bool = False, base_url: str | None = YAO_BASE_URL,
                 model: str = YAO_MODEL, created: int | None = None) -> None:
        self.config = StandardConfig(base_url=base_url, locale=locale, reasoning=reasoning)
        self.model = model
        self.created = created
        self.chunks: list[Any] = []
        self.closed = False
        self._lines: list[str] = []
        self._first_chunk = True

    def check(self, message: Wire) -> None:
        """Raise ``ConvertError`` (Yao's text, e.g. ``image message missing url``) for a message the
        writer would refuse; sends nothing."""
        convert(message, self.config)

    def write(self, messages: list[Wire]) -> None:
        new: list[Any] = []
        for message in messages:
            takes_role = lookup(message.get("type")).takes_role
            for emit in convert(message, self.config):
                new.append(go_value(self._payload(message.get("message_id", ""), takes_role, emit)))
        self._send(new)

    def close(self) -> None:
        """``Close``: the ``[DONE]`` event (once)."""
        if not self.closed:
            self.closed = True
            self._send([DONE])

    @property
    def text(self) -> str:
        return "".join(self._lines)

    def _send(self, new: list[Any]) -> None:
        self.chunks.extend(new)
        self._lines.extend(sse(chunk) for chunk in new)


def writer_for(accept: str, **options: Any) -> CuiWriter | OpenAIWriter:
    """Today's writers by the seed's routing (``output.adapters.for_accept``, Yao's ``NewOutput``): a
    ``CuiWriter``, or an ``OpenAIWriter`` (``options`` go to it)."""
    return for_accept(accept, CuiWriter, OpenAIWriter, **options)


def convert(message: Wire, config: StandardConfig) -> list[Emit]:
    """What Yao's OpenAI adapter makes of one wire message (openai/adapter.go:79-102, converter.go at
    5a3f9a6a), through the seed's table with the chunk id from ``message_id``: emits of ``kind``
    ``"delta"`` (a chunk's ``choices[0].delta``) or ``"chunk"`` (written as it is). Raises
    ``ConvertError``."""
    kind = message.get("type", "")
    seed_shaped = {**message, "id": message.get("message_id", "")}
    if kind == TOOL_CALL:  # convertToolCall reads only props.id and props.function (converter.go:93-116)
        props = message.get("props") or {}
        seed_shaped["props"] = {key: props[key] for key in ("id", "function") if key in props}
    elif kind not in _TABLE_TYPES and kind not in LINK_TEMPLATES:
        # no converter, no template: convertToLink's fallback (converter.go:308-315), as for execute
        return lookup(EXECUTE).standard(seed_shaped, config)
    return to_standard(seed_shaped, config)


__all__ = ["CUI_ACCEPTS", "DONE", "ConvertError", "CuiWriter", "OpenAIWriter", "convert", "sse", "writer_for"]
