"""The CUI client's message list, folded from a current-API stream as YaoApp/cui at 66cb383f folds it
(``packages/cui/chatbox/utils/chunkProcessor.ts`` ``processChunk`` over ``chatbox/hooks/delta.ts``
``applyDelta``), so tests and the view can check what a user of the assistant sees.

- Events: ``stream_start`` starts a new stream session (a new stream id, no completed messages);
  ``message_end`` marks its message completed, clears its delta cache and sets ``delta: false`` on it;
  ``stream_end`` and every other event (``message_start``, ``block_start``, ``block_end``, custom
  ones) change no message and are kept in ``.events`` as ``{"name", "data"}`` (chunkProcessor.ts:40-72).
- Every other chunk is keyed ``<stream id>:<message_id or chunk_id or seq-N or msg-<nanoid>>``
  (chunkProcessor.ts:75-77). ``type_change`` replaces the message with the chunk itself; anything else goes
  through ``applyDelta`` — whose rules (JavaScript semantics, ``undefined`` included) are the seed-era
  delta engine's (``output.delta``: delta.ts is unchanged from cui 9c35de9 but for its per-chat cache) —
  and updates the message in place or appends a new one (chunkProcessor.ts:92-126).
- A cleared cache is the engine's *done* entry: the next delta for it starts from empty props (so an
  ``Append`` after ``End`` shows only what it appended), which the engine reports as ``after_done``.

The engine's diagnostics (``unknown_id``, ``type_changed``, ``after_done``, …) are kept on
``.diagnostics``. Random ids (``nanoid()``) and ``Date.now()`` come from ``new_id`` / ``clock`` so a test
can state the whole list.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from ..output.adapters import DONE
from ..output.delta import apply_message_in_place, new_state
from ..output.diagnostics import Collector
from ..output.messages import clone_json
from .clock import SYSTEM_CLOCK, Clock

_ALPHABET = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict"


def nanoid() -> str:
    """21 URL-safe random characters, as the ``nanoid`` package makes them."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(21))


class CuiState:
    """One chat tab of the CUI client: feed it the chunks of one or more streams, read ``.messages``."""

    def __init__(self, *, new_id: Callable[[], str] = nanoid, clock: Clock = SYSTEM_CLOCK) -> None:
        self._new_id = new_id
        self._clock = clock
        self.stream_id = new_id()
        self.completed: dict[str, bool] = {}
        self._messages: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.diagnostics: list[dict] = []
        self._cache = new_state()  # applyDelta's cache: the engine's entries (a done one = cleared)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The client's message list now (a copy: each message's props are the cache's, shared until read,
        so a long stream of appends grows one string in place instead of copying it per chunk)."""
        return clone_json(self._messages)

    # ---- input -----------------------------------------------------------------------------------

    def feed_text(self, text: str) -> None:
        """Feed an SSE stream's text (``data: {...}`` events; ``[DONE]`` and other lines skipped)."""
        for line in text.splitlines():
            if line.startswith("data: ") and line[6:] != DONE:
                self.feed(json.loads(line[6:]))

    def write(self, chunks: list[dict[str, Any]]) -> None:
        """A ``YaoOutput`` sink: fold each chunk as the client receives it."""
        for chunk in chunks:
            self.feed(chunk)

    def feed(self, chunk: dict[str, Any]) -> None:
        """``processChunk`` for one chunk (a JSON object as the client parsed it)."""
        chunk = clone_json(chunk)  # the client parses each event afresh: nothing is shared with the sender
        props = chunk.get("props") if isinstance(chunk.get("props"), dict) else None
        if chunk.get("type") == "event":
            self._event(chunk, props or {})
            return
        raw = chunk.get("message_id") or chunk.get("chunk_id")
        if not raw:
            sequence = (chunk.get("metadata") or {}).get("sequence")
            raw = f"seq-{sequence}" if sequence else f"msg-{self._new_id()}"
        message_id = f"{self.stream_id}:{raw}"
        if chunk.get("type_change"):
            self._clear(message_id)
            self._put(message_id, {**chunk, "message_id": message_id, "delta": False, "ui_id": self._new_id()})
            return
        entry = self._apply(message_id, chunk)
        if entry is None:
            return
        self._show(message_id, chunk, entry)

    # ---- events (chunkProcessor.ts:40-72) ----------------------------------------------------------

    def _event(self, chunk: dict[str, Any], props: dict[str, Any]) -> None:
        name = props.get("event")
        data = props.get("data")
        if name == "stream_start":
            self.stream_id = self._new_id()
            self.completed = {}
            self.events.append({"name": name, "data": data})
        elif name == "message_end":
            raw = data.get("message_id") if isinstance(data, dict) else None
            if raw:
                message_id = f"{self.stream_id}:{raw}"
                self.completed[message_id] = True
                self._clear(message_id)
                index = self._index(message_id)
                if index is not None:
                    self._messages[index] = {**self._messages[index], "delta": False}
            self.events.append({"name": name})
        elif name == "stream_end":
            self.events.append({"name": name, "data": data})
        else:
            self.events.append({"name": name, "data": data or props})

    # ---- messages (chunkProcessor.ts:79-126) -------------------------------------------------------

    def _apply(self, message_id: str, chunk: dict[str, Any]) -> dict[str, Any] | None:
        """applyDelta through the engine; ``None`` when the client would throw (the chunk is lost)."""
        message = {"type": chunk.get("type") if isinstance(chunk.get("type"), str) else "", "id": message_id,
                   "delta": bool(chunk.get("delta"))}
        for key in ("props", "delta_path", "delta_action"):
            if key in chunk:
                message[key] = chunk[key]
        found = Collector()
        apply_message_in_place(self._cache, message, report=found)
        self.diagnostics.extend(found.items)
        if any(item["code"] == "dropped" for item in found.items):
            return None
        return self._cache["messages"][message_id]

    def _show(self, message_id: str, chunk: dict[str, Any], entry: dict[str, Any]) -> None:
        delta = False if self.completed.get(message_id) else chunk.get("delta")
        fields = {"chunk_id": chunk.get("chunk_id"), "message_id": message_id, "block_id": chunk.get("block_id"),
                  "thread_id": chunk.get("thread_id"), "type": entry["type"], "props": entry["props"]}
        index = self._index(message_id)
        if index is not None:
            shown = dict(self._messages[index])
            fields["metadata"] = chunk.get("metadata") or shown.get("metadata")
            fields["delta"] = delta
            for key, value in fields.items():  # a field the chunk lacks is undefined: JSON drops it
                if value is None and key in ("chunk_id", "block_id", "thread_id", "metadata", "delta"):
                    shown.pop(key, None)
                else:
                    shown[key] = value
            self._messages[index] = shown
            return
        new = {"ui_id": self._new_id(), **fields,
               "metadata": {**(chunk.get("metadata") or {}), "timestamp": self._clock.wall_ms()}, "delta": delta}
        self._messages.append({key: value for key, value in new.items()
                              if not (value is None and key in ("chunk_id", "block_id", "thread_id", "delta"))})

    def _put(self, message_id: str, message: dict[str, Any]) -> None:
        index = self._index(message_id)
        if index is None:
            self._messages.append(message)
        else:
            self._messages[index] = message

    def _index(self, message_id: str) -> int | None:
        for index, message in enumerate(self._messages):
            if message.get("message_id") == message_id:
                return index
        return None

    def _clear(self, message_id: str) -> None:
        """``clearMessageCache(chatId, id)``: the next delta for it starts from empty props."""
        entry = self._cache["messages"].get(message_id)
        if entry is not None:
            entry["done"] = True
