"""A current-API stream as the seed-era messages our sinks take (``ContextView.write``, ``Output``-style
recorders): ``{"type", "props", "id", "delta"?, "delta_path"?, "delta_action"?}``, so the view shows what
the CUI client at 66cb383f shows (``cui_state.CuiState`` is that client; this is its streaming form).

The seed-era delta engine the view runs is the client's ``applyDelta`` (``output.delta``), so a delta
onto an open message passes through unchanged — the view folds it as the client does, cheaply. The one
place the two clients differ is a cleared message: after ``message_end`` (or a ``type_change``) the
client starts the next delta from empty props (chunkProcessor.ts:49-60, 79-90), so the bridge sends that
first delta as a whole (non-delta) message with the props it leaves. Lifecycle events are not messages
to the view and are kept on ``.events``; ids are the client's, scoped per stream (``<stream>:<message_id>``,
a new stream at each ``stream_start``).

What the events say reaches the view as envelope fields the seed engine keeps (a message's
``group_id`` and ``metadata`` replace the entry's, and stay when absent):

- a Yao block (messages sharing a ``block_id``, output.go:95-122) is a view group, ``group_id`` =
  ``<stream>:<block_id>``; the block's first message carries ``metadata.block`` = ``{id, type, label?}``
  from its ``block_start`` (EventBlockStartData, message/types.go:381-388), and ``block_end``'s
  ``duration_ms`` / ``status`` / ``message_count`` (types.go:390-401) are added to it then;
- ``message_end``'s ``duration_ms``, ``chunk_count`` and ``status`` (EventMessageEndData, types.go:366-377)
  go into the message's ``metadata``, sent as a props-less merge that changes nothing else (the renderers
  show a duration for a message of more than one chunk: a ``Send`` ends as it starts);
- ``execute`` and its semantic sub-types pass through like any type, their props as Yao sends them
  (a runner's chunks are merges onto one message, handlers/stream.go:346-390).
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
        self._types: dict[str, str] = {}
        self._metadata: dict[str, dict[str, Any]] = {}
        self._blocks: dict[str, dict[str, Any]] = {}  # group id -> {id, type, label?}
        self._block_heads: dict[str, str] = {}  # group id -> the key of its first message
        self.events: list[Wire] = []

    def write(self, messages: list[Wire]) -> None:
        out: list[dict] = []
        for message in messages:
            converted = self._convert(message)
            if isinstance(converted, list):
                out.extend(converted)
            elif converted is not None:
                out.append(converted)
        if out:
            self._write(out)

    def _key(self, raw: str) -> str:
        return f"{self._stream}:{raw}"

    def _convert(self, message: Wire) -> dict | list[dict] | None:
        props = message.get("props") if isinstance(message.get("props"), dict) else {}
        if message.get("type") == "event":
            self.events.append(message)
            data = props.get("data")
            return self._event(props.get("event"), data if isinstance(data, dict) else {})
        raw = message.get("message_id") or message.get("chunk_id")
        if not raw:
            sequence = (message.get("metadata") or {}).get("sequence")
            raw = f"seq-{sequence}" if sequence else f"msg-{next(self._anonymous)}"
        key = self._key(raw)
        seed: dict[str, Any] = {"type": message.get("type", ""), "props": props, "id": key}
        if not message.get("delta") or key not in self._types:
            self._types[key] = seed["type"]
        block = message.get("block_id")
        if isinstance(block, str) and block:
            group = self._key(block)
            seed["group_id"] = group
            if group not in self._block_heads:
                self._block_heads[group] = key
                self._metadata.setdefault(key, {})["block"] = dict(self._blocks.get(group) or {"id": block})
                seed["metadata"] = dict(self._metadata[key])
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
                whole = {"type": fresh["type"], "props": fresh["props"], "id": key}
                whole.update({k: seed[k] for k in ("group_id", "metadata") if k in seed})
                return whole
        else:
            self._cleared.discard(key)
        return seed

    def _event(self, event: Any, data: dict[str, Any]) -> list[dict] | None:
        """A lifecycle event: the stream, block and message boundaries; what the view should learn of it
        (a metadata update) is returned as messages."""
        if event == "stream_start":
            self._stream = next(self._streams)
            self._cleared.clear()
            return None
        if event == "block_start" and isinstance(data.get("block_id"), str):
            block = {"id": data["block_id"], **{k: data[k] for k in ("type", "label") if isinstance(data.get(k), str) and data[k]}}
            self._blocks[self._key(data["block_id"])] = block
            return None
        if event == "block_end" and isinstance(data.get("block_id"), str):
            head = self._block_heads.get(self._key(data["block_id"]))
            if head is None:
                return None
            block = dict(self._metadata.get(head, {}).get("block") or {"id": data["block_id"]})
            block.update({k: data[k] for k in ("duration_ms", "message_count") if _count(data.get(k))})
            if isinstance(data.get("status"), str):
                block["status"] = data["status"]
            return self._annotate(head, {"block": block})
        if event == "message_end" and isinstance(data.get("message_id"), str) and data["message_id"]:
            key = self._key(data["message_id"])
            self._cleared.add(key)
            extra = {k: data[k] for k in ("duration_ms", "chunk_count") if _count(data.get(k))}
            if isinstance(data.get("status"), str):
                extra["status"] = data["status"]
            return self._annotate(key, extra) if extra else None
        return None

    def _annotate(self, key: str, extra: dict[str, Any]) -> list[dict] | None:
        """A props-less merge onto ``key`` carrying its whole metadata with ``extra`` added (the engine
        replaces an entry's metadata, and an empty merge leaves its props as they are)."""
        kind = self._types.get(key)
        if kind is None:  # never shown: nothing to annotate
            return None
        metadata = self._metadata.setdefault(key, {})
        metadata.update(extra)
        return [{"type": kind, "props": {}, "id": key, "delta": True, "delta_action": "merge",
                 "metadata": dict(metadata)}]


def _count(value: Any) -> bool:
    """A non-negative whole number as Go's int64 fields carry it (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
