"""A current-API stream as the seed-era messages our sinks take (``ContextView.write``, ``Output``-style
recorders): ``{"type", "props", "id", "delta"?, "delta_path"?, "delta_action"?}``, so the view shows what
the CUI client at 66cb383f shows (``cui_state.CuiState`` is that client; this is its streaming form).

The seed-era delta engine the view runs is the client's ``applyDelta`` (``output.delta``), so a delta
onto an open message passes through unchanged — the view folds it as the client does, cheaply. The one
place the two clients differ is a cleared message: after ``message_end`` (or a ``type_change``) the
client starts the next delta from empty props (chunkProcessor.ts:49-60, 79-90), so the bridge sends that
first delta as a whole (non-delta) message with the props it leaves. Lifecycle events are not messages
to the view and are kept on ``.events`` (for the view's blocks and durations); ids are the client's,
scoped per stream (``<stream>:<message_id>``, a new stream at each ``stream_start``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any

from ..output.delta import apply_message, new_state

Wire = dict[str, Any]


class SeedViewBridge:
    """A ``YaoOutput`` sink that forwards to ``sink`` (anything with ``write(messages)``, or a callable)."""

    def __init__(self, sink: Any) -> None:
        write = getattr(sink, "write", None)
        self._write: Callable[[list[dict]], None] = write if callable(write) else sink
        self._streams = count(1)
        self._stream = next(self._streams)
        self._anonymous = count(1)
        self._cleared: set[str] = set()
        self.events: list[Wire] = []

    def write(self, messages: list[Wire]) -> None:
        out = [converted for message in messages if (converted := self._convert(message)) is not None]
        if out:
            self._write(out)

    def _key(self, raw: str) -> str:
        return f"{self._stream}:{raw}"

    def _convert(self, message: Wire) -> dict | None:
        props = message.get("props") if isinstance(message.get("props"), dict) else {}
        if message.get("type") == "event":
            self.events.append(message)
            data = props.get("data")
            if props.get("event") == "stream_start":
                self._stream = next(self._streams)
                self._cleared.clear()
            elif props.get("event") == "message_end" and isinstance(data, dict) and data.get("message_id"):
                self._cleared.add(self._key(data["message_id"]))
            return None
        raw = message.get("message_id") or message.get("chunk_id")
        if not raw:
            sequence = (message.get("metadata") or {}).get("sequence")
            raw = f"seq-{sequence}" if sequence else f"msg-{next(self._anonymous)}"
        key = self._key(raw)
        seed: dict[str, Any] = {"type": message.get("type", ""), "props": props, "id": key}
        if message.get("type_change"):
            self._cleared.add(key)  # the client shows the chunk itself and clears the cache
            return seed
        if message.get("delta"):
            for field in ("delta_path", "delta_action"):
                if message.get(field):
                    seed[field] = message[field]
            seed["delta"] = True
            if key in self._cleared:  # the client starts from empty props: send what that leaves, whole
                fresh = apply_message(new_state(), seed)["messages"].get(key)
                self._cleared.discard(key)
                if fresh is None:  # the client threw on it: nothing changes
                    return None
                return {"type": fresh["type"], "props": fresh["props"], "id": key}
        else:
            self._cleared.discard(key)
        return seed
