"""What each kind of client receives from a current-API request: Yao's two writers at 5a3f9a6a, as
``YaoOutput`` sinks (``write(messages)`` with the wire objects of ``wire.to_wire``).

- :class:`CuiWriter` (``cui-web``, ``cui-native``, ``cui-desktop``): every message as it is, one SSE event
  each, ``data: <json>\\n\\n`` (cui/adapter.go:17-22, cui/writer.go:93-126); nothing on close.
- :class:`OpenAIWriter` (``standard`` and any other accept, output.go:30-42): ``chat.completion.chunk``
  maps (keys sorted: Go marshals maps) as openai/converter.go converts each type, ``role:
  "assistant"`` on the first text/thinking chunk (writer.go:78-89), events silent except a
  ``stream_start`` with a trace id (adapter.go:79-91), and ``data: [DONE]`` on close (writer.go:190-208).

The conversions that the seed-era table (``output.message_types``) already does as Yao does — text,
thinking, loading, error, image, stream_start — are taken from it (with the chunk id now
``message_id``, converter.go:58-77 at 5a3f9a6a). Two it does differently on purpose for the seed are
done here as Yao does today: ``tool_call`` carries only ``props.id`` and ``props.function``
(converter.go:93-116), and an unregistered type (``execute``, ``agent``, ``todo``, ``plan``, ``job``,
``question``, ``user_input``, custom ones) becomes Yao's link with its fallback template
``"📎 [View %s](" + type + ")"`` — the link lands in the label (converter.go:253-315). Links are built on
``YAO_BASE_URL``, which Yao's writer hard-codes (writer.go:47-50); pass ``base_url=None`` for none.
"""

from __future__ import annotations

import time
from typing import Any

from ..output.message_types import (
    LINK_TEMPLATES,
    YAO_BASE_URL,
    YAO_MODEL,
    ConvertError,
    StandardConfig,
    string_prop,
    to_standard,
)
from .go_json import dumps, go_value

Wire = dict[str, Any]

DONE = "[DONE]"
CUI_ACCEPTS = frozenset({"cui-web", "cui-native", "cui-desktop"})
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


class OpenAIWriter:
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
            for emit in convert(message, self.config):
                new.append(self._chunk(message, emit))
        self._send(new)

    def close(self) -> None:
        """``Close``: the ``[DONE]`` event (once)."""
        if not self.closed:
            self.closed = True
            self._send([DONE])

    @property
    def text(self) -> str:
        return "".join(self._lines)

    def _chunk(self, message: Wire, emit: Any) -> Any:
        if emit.kind == "chunk":
            return go_value(emit.body)
        delta = dict(emit.body)
        if self._first_chunk and message.get("type") in ("text", "thinking"):
            delta["role"] = "assistant"
            self._first_chunk = False
        return go_value({
            "id": message.get("message_id", ""), "object": "chat.completion.chunk",
            "created": self.created if self.created is not None else int(time.time()), "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        })

    def _send(self, new: list[Any]) -> None:
        self.chunks.extend(new)
        self._lines.extend(sse(chunk) for chunk in new)


def writer_for(accept: str, **options: Any) -> CuiWriter | OpenAIWriter:
    """Yao's ``NewOutput`` routing (output.go:25-51): the three CUI accepts get a ``CuiWriter``, anything
    else an ``OpenAIWriter`` (``options`` go to it)."""
    return CuiWriter() if accept in CUI_ACCEPTS else OpenAIWriter(**options)


# ---- the converter (openai/adapter.go:79-102, converter.go at 5a3f9a6a) --------------------------

class _Emit:
    __slots__ = ("kind", "body")

    def __init__(self, kind: str, body: dict[str, Any]) -> None:
        self.kind, self.body = kind, body


def convert(message: Wire, config: StandardConfig) -> list[Any]:
    """What Yao's OpenAI adapter makes of one wire message: a list of emits (``kind`` ``"delta"`` — a
    chunk's ``choices[0].delta`` — or ``"chunk"``, written as it is). Raises ``ConvertError``."""
    kind = message.get("type", "")
    if kind in _TABLE_TYPES:
        return list(to_standard({**message, "id": message.get("message_id", "")}, config))
    if kind == "tool_call":
        return [_Emit("delta", {"tool_calls": _tool_calls(message.get("props") or {})})]
    return _link(message, config)


def _tool_calls(props: dict[str, Any]) -> list[dict[str, Any]]:
    """convertToolCall (converter.go:93-116): ``id`` and ``props.function`` only; name / arguments dropped."""
    if not isinstance(props.get("id"), str):
        return []
    call: dict[str, Any] = {"id": props["id"], "type": "function"}
    if isinstance(props.get("function"), dict):
        call["function"] = props["function"]
    return [call]


def _link(message: Wire, config: StandardConfig) -> list[Any]:
    """convertToLink with generateViewLink and getLinkTemplate (converter.go:253-315), Yao's fallback
    template included."""
    props = message.get("props") or {}
    kind = message.get("type", "")
    url = props.get("url")
    if isinstance(url, str):
        link = url
    elif config.base_url is None:
        return []
    else:
        link = f"{config.base_url}/agent/view/{kind}/{message.get('message_id', '')}"
    template = LINK_TEMPLATES.get(kind)
    if kind == "button":
        text = f"🔘 [{string_prop(props, 'text', 'Button')}]({link})"
    elif template is not None:
        text = template.replace("%s", link, 1)
    else:
        text = f"📎 [View {link}]({kind})"
    return [_Emit("delta", {"content": text})]


__all__ = ["CUI_ACCEPTS", "DONE", "ConvertError", "CuiWriter", "OpenAIWriter", "convert", "sse", "writer_for"]
