"""The model's stream as Yao's default stream handler writes it to the client (yao 5a3f9a6a
``agent/assistant/handlers/stream.go``), for the request runner: ``message_start`` / one delta message
per chunk / ``message_end``, with the request's ``M*`` / ``C*`` ids."""

from __future__ import annotations

from typing import Any

import orjson

from .go_json import GoStruct
from .wire import message_end_data, message_start_data


class ChunkWriter:
    """A model stream as Yao's default handler writes it (``agent/assistant/handlers/stream.go``):
    ``message_start`` (``:137-170``), one delta message per chunk with ``chunk_id`` C* and the
    ``message_id`` M* (``:173-206``), ``message_end`` with the chunk count and the whole content in
    ``extra`` (``:436-557``). A tool call's first chunk merges ``{id, type, index, name, arguments}``, the
    next ones append to ``arguments`` (``:242-334``); its content is the OpenAI delta arrays as the
    handler buffered them. (``yao/output.py`` owns the client forms; this is what the request's order needs.)
    The events' data are ``yao/wire.py``'s Go structs, so their fields reach the client in Go's order.

    ``shared`` is the request's: ``next_id("M" | "C")``, ``now()`` in ms, ``emit(message)`` and
    ``event(name, text, data)``."""

    _FAMILIES = ("text", "thinking", "tool_call")

    def __init__(self, shared: Any) -> None:
        self.shared = shared
        self.open: dict[int, dict] = {}
        self.calls = 0  # tool calls so far in this response: a call's index

    def on_event(self, event: dict) -> None:
        family, _, phase = str(event.get("type", "")).rpartition("_")
        if family not in self._FAMILIES or phase not in ("start", "delta", "end"):
            return
        index = event.get("contentIndex", 0)
        state = self.open.get(index)
        if phase == "end":
            self._end(index)
            return
        if state is None:
            state = self._start(index, family, event)
        if phase == "delta" and event.get("delta"):
            self._chunk(state, str(event["delta"]))

    def _start(self, index: int, family: str, event: dict) -> dict:
        state = {"id": self.shared.next_id("M"), "type": family, "started": self.shared.now(), "buffer": [],
                 "chunks": 0}
        self.open[index] = state
        tool_call = None
        if family == "tool_call":  # EventToolCallInfo (types.go:382-387): id, name, index; no arguments yet
            state["call"] = tool_call = GoStruct(id=str(event.get("callId", "")), name=str(event.get("name", "")),
                                                 index=self.calls)
            self.calls += 1
        self.shared.event("message_start", "Message started",
                          message_start_data(state["id"], family, state["started"], tool_call=tool_call))
        if family == "tool_call":  # OpenAI's first tool-call chunk names the call
            call = state["call"]
            first = {"index": call["index"], "id": call["id"], "type": "function",
                     "function": {"name": call["name"], "arguments": ""}}
            self._send(state, orjson.dumps([first]).decode(),
                       {"id": call["id"], "type": "function", "index": call["index"], "name": call["name"],
                        "arguments": ""}, action="merge")
        return state

    def _chunk(self, state: dict, piece: str) -> None:
        if state["type"] != "tool_call":
            self._send(state, piece, {"content": piece})
            return
        raw = orjson.dumps([{"index": state["call"]["index"], "function": {"arguments": piece}}]).decode()
        self._send(state, raw, {"index": state["call"]["index"], "arguments": piece}, action="append",
                   path="arguments")

    def _send(self, state: dict, raw: str, props: dict, *, action: str = "", path: str = "") -> None:
        state["buffer"].append(raw)
        state["chunks"] += 1
        message: dict[str, Any] = {"chunk_id": self.shared.next_id("C"), "message_id": state["id"],
                                   "type": state["type"], "delta": True}
        if action:
            message["delta_action"] = action
        if path:
            message["delta_path"] = path
        message["props"] = props
        self.shared.emit(message)

    def _end(self, index: int) -> None:
        state = self.open.pop(index, None)
        if state is None:
            return
        now = self.shared.now()
        self.shared.event("message_end", "Message completed", message_end_data(
            state["id"], state["type"], now, "", now - state["started"], state["chunks"],
            extra={"content": "".join(state["buffer"])}))  # stream.go:530-541

    def close_open(self) -> None:
        for index in sorted(self.open):
            self._end(index)
