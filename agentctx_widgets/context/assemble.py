"""Fold normalised response events into one assistant message.

``create_assembler()`` returns an :class:`Assembler`; feed it events with ``consume(event)`` and read
the growing message with ``message()`` (by reference: it stays partial until ``done``).

Decisions that fill the seed's gaps (DESIGN.md "Assembler"):
- ``contentIndex`` names a block; a new index appends a block, so blocks follow first appearance.
  A snapshot (``start``/``done``/``error`` carrying a valid ``message``) replaces the message with a deep
  copy, and its blocks take the indexes 0..n-1.
- Deltas append. A ``text_end``/``thinking_end`` carrying ``text`` is authoritative; when the streamed
  text differed (and was not empty), the streamed text is kept on that *block* as ``draft``. A
  ``thinking_end`` may carry the provider's opaque ``signature`` (Anthropic signs thinking and rejects a
  tool round trip without it) and ``redacted`` data (a redacted thinking block); both are kept on the block.
- Tool-call arguments are the raw accumulated string while streaming; ``tool_call_end`` parses them as
  JSON (an empty string becomes ``{}``) and keeps the raw string when parsing fails. A non-string
  ``arguments`` on ``tool_call_end`` is taken as already parsed.
- ``done`` keeps its ``usage`` on ``assembler.usage`` (not on the message); ``error`` sets the message's
  ``error``. Known event types are validated (``TypeError`` for malformed ones); unknown types are ignored.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from typing import Any

import orjson

from .events import EVENT_TYPES, callback_name, validate_response_event
from .types import ContentType, MessageType
from .validate import is_message

__all__ = ["Assembler", "ContentIndexer", "assembly_callbacks", "content_indexer", "create_assembler"]


_THINKING_EXTRAS = ("signature", "redacted")


class Assembler:
    """The one stateful object that turns an event stream into an assistant message."""

    def __init__(self) -> None:
        self._message: dict = {"type": int(MessageType.ASSISTANT), "content": []}
        self._blocks: dict[int, dict] = {}
        self._raw_arguments: dict[int, str] = {}
        self.usage: Any = None
        """The ``usage`` carried by the ``done`` event, if any."""
        self.finished = False
        """True once a ``done`` or ``error`` event was consumed."""
        self._handlers: dict[str, Callable[[dict], None]] = {
            "start": self._on_snapshot,
            "text_start": self._on_text_start,
            "text_delta": self._on_text_delta,
            "text_end": self._on_text_end,
            "thinking_start": self._on_text_start,
            "thinking_delta": self._on_text_delta,
            "thinking_end": self._on_text_end,
            "tool_call_start": self._on_tool_start,
            "tool_call_delta": self._on_tool_delta,
            "tool_call_end": self._on_tool_end,
            "done": self._on_done,
            "error": self._on_error,
        }

    def message(self) -> dict:
        """The message being assembled (the live object, not a copy)."""
        return self._message

    def consume(self, event: dict) -> None:
        """Apply one event. Unknown types are ignored; malformed known events raise ``TypeError``."""
        kind = event.get("type") if isinstance(event, dict) else None
        if kind not in EVENT_TYPES:
            return
        validate_response_event(event)
        self._handlers[kind](event)

    # -- blocks -------------------------------------------------------------------------------
    def _block(self, index: int, kind: str) -> dict:
        block = self._blocks.get(index)
        if block is None or block.get("type") != kind:
            fresh: dict = {"type": kind, "text": ""} if kind != ContentType.TOOL_CALL.value else {
                "type": kind, "callId": "", "name": "", "arguments": ""}
            if block is None:
                self._message["content"].append(fresh)
            else:
                position = next(i for i, b in enumerate(self._message["content"]) if b is block)
                self._message["content"][position] = fresh
            self._blocks[index] = block = fresh
        return block

    @staticmethod
    def _text_kind(event: dict) -> str:
        return ContentType.THINKING.value if str(event["type"]).startswith("thinking") else ContentType.TEXT.value

    def _on_text_start(self, event: dict) -> None:
        self._block(event["contentIndex"], self._text_kind(event))

    def _on_text_delta(self, event: dict) -> None:
        block = self._block(event["contentIndex"], self._text_kind(event))
        # Take the string out of the block first: with no other reference to it, CPython grows it in
        # place, so n deltas cost O(text) instead of copying the whole text on every delta.
        text = block.pop("text", "")
        text += event["delta"]
        block["text"] = text

    def _on_text_end(self, event: dict) -> None:
        block = self._block(event["contentIndex"], self._text_kind(event))
        final = event.get("text")
        if isinstance(final, str):
            streamed = block.get("text", "")
            if streamed and streamed != final:
                block["draft"] = streamed
            block["text"] = final
        for key in _THINKING_EXTRAS if block["type"] == ContentType.THINKING.value else ():
            if isinstance(event.get(key), str):
                block[key] = event[key]

    def _on_tool_start(self, event: dict) -> None:
        index = event["contentIndex"]
        block = self._block(index, ContentType.TOOL_CALL.value)
        block["callId"] = event["callId"]
        block["name"] = event["name"]
        self._raw_arguments.setdefault(index, "")
        block["arguments"] = self._raw_arguments[index]

    def _on_tool_delta(self, event: dict) -> None:
        index = event["contentIndex"]
        block = self._block(index, ContentType.TOOL_CALL.value)
        block["arguments"] = None  # drop the block's reference so the raw string can grow in place
        raw = self._raw_arguments.pop(index, "")
        raw += event["delta"]
        self._raw_arguments[index] = raw
        block["arguments"] = raw

    def _on_tool_end(self, event: dict) -> None:
        index = event["contentIndex"]
        block = self._block(index, ContentType.TOOL_CALL.value)
        final = event.get("arguments")
        if final is not None and not isinstance(final, str):
            block["arguments"] = copy.deepcopy(final)
            return
        raw = final if isinstance(final, str) else self._raw_arguments.get(index, "")
        block["arguments"] = parse_arguments(raw)

    # -- whole-message events -----------------------------------------------------------------
    def _replace(self, snapshot: Any) -> None:
        if is_message(snapshot):
            self._message = copy.deepcopy(snapshot)
            self._blocks = dict(enumerate(self._message["content"]))
            self._raw_arguments = {}

    def _on_snapshot(self, event: dict) -> None:
        self._replace(event.get("message"))

    def _on_done(self, event: dict) -> None:
        self._replace(event.get("message"))
        if "usage" in event:
            self.usage = copy.deepcopy(event["usage"])
        self.finished = True

    def _on_error(self, event: dict) -> None:
        self._replace(event.get("message"))
        self._message["error"] = copy.deepcopy(event["error"])
        self.finished = True


def parse_arguments(raw: str) -> Any:
    """Tool-call arguments as JSON when they parse (``""`` -> ``{}``), else the raw string."""
    if raw.strip() == "":
        return {}
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def create_assembler() -> Assembler:
    """A fresh assembler whose message starts as ``{"type": 3, "content": []}``."""
    return Assembler()


def assembly_callbacks(assembler: Any) -> dict[str, Callable[[dict], None]]:
    """A camelCase callback set (``onStart`` ... ``onError``) that feeds ``assembler.consume``."""
    consume = getattr(assembler, "consume", None)
    if not callable(consume):
        raise TypeError(f"assembly_callbacks: expected an assembler with consume(), got {type(assembler).__name__}")
    return {callback_name(name): consume for name in sorted(EVENT_TYPES)}


class ContentIndexer:
    """Dense content indexes for a provider translator: ``of(key)`` reuses, ``next()`` reserves."""

    def __init__(self) -> None:
        self._by_key: dict[Hashable, int] = {}
        self._count = 0

    def next(self) -> int:
        """Reserve and return a fresh index."""
        index = self._count
        self._count += 1
        return index

    def of(self, key: Hashable) -> int:
        """The index first given to ``key``, reserving a fresh one on first sight."""
        index = self._by_key.get(key)
        if index is None:
            index = self._by_key[key] = self.next()
        return index


def content_indexer() -> ContentIndexer:
    """A new per-request :class:`ContentIndexer`."""
    return ContentIndexer()
