"""A deterministic model for tests and demos: replies are scripted, events are real.

Each call to ``stream`` takes the next reply; once the list is used up **the last reply repeats**
(so ``ScriptedModel([error_reply, "ok"])`` fails once, then keeps answering "ok"). A reply is a
string (the text), a callable ``reply(messages) -> reply``, or a dict with any of:

- ``text``: the answer text; ``thinking``: reasoning text (emitted first);
- ``tool_calls``: ``[{"id", "name", "arguments"}]`` (arguments a dict or a JSON string);
- ``usage``: provider-shaped usage for the ``done`` event (else the model's ``usage=``; with
  neither, ``done`` carries none and the runner estimates);
- ``error``: a string or ``{"message", "code"?, "retry"?}`` ends the stream with an ``error``
  event after any content; an ``Exception`` instance is *raised* from the stream instead;
- ``stop``: the ``done`` event's ``stopReason`` as a provider sends it (``"length"``: cut off by the
  token limit).

Block order in the emitted message: thinking, text, then tool calls, each with its own
``contentIndex``. Deltas are cut every ``chunk_size`` characters; ``delay`` seconds pass between
chunks (``time.sleep`` when iterated synchronously, ``asyncio.sleep`` when iterated with
``async for``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson

Reply = str | dict | Callable[[list[dict]], Any]


class ScriptedModel:
    """Replays scripted replies as normalised response events."""

    def __init__(
        self,
        replies: list[Reply] | tuple[Reply, ...] | Reply,
        *,
        chunk_size: int = 8,
        delay: float = 0.0,
        usage: dict | None = None,
        model: str = "scripted",
    ) -> None:
        if isinstance(replies, (str, dict)) or callable(replies):
            replies = [replies]
        replies = list(replies)
        if not replies:
            raise ValueError("ScriptedModel(replies): needs at least one reply, got an empty list")
        if not isinstance(chunk_size, int) or chunk_size < 1:
            raise ValueError(f"ScriptedModel(chunk_size=…): must be an int ≥ 1, got {chunk_size!r}")
        if delay < 0:
            raise ValueError(f"ScriptedModel(delay=…): must be ≥ 0, got {delay!r}")
        for index, reply in enumerate(replies):
            _check_reply(reply, f"replies[{index}]")
        self.replies = replies
        self.chunk_size = chunk_size
        self.delay = delay
        self.usage = usage
        self.model = model
        self.calls: list[list[dict]] = []  # the messages each call received, in order

    def reset(self) -> None:
        """Start again from the first reply and forget recorded calls."""
        self.calls.clear()

    def stream(self, messages: list[dict], *, options: dict | None = None) -> ScriptedStream:
        """The next reply's events; iterate with ``for`` or ``async for``."""
        index = min(len(self.calls), len(self.replies) - 1)
        self.calls.append(messages)
        reply = self.replies[index]
        if callable(reply):
            reply = reply(messages)
            _check_reply(reply, f"replies[{index}](messages)")
        return ScriptedStream(self._events(reply), self.delay)

    def _events(self, reply: str | dict) -> list[dict | BaseException]:
        if isinstance(reply, str):
            reply = {"text": reply}
        events: list[dict | BaseException] = [{"type": "start", "model": self.model}]
        index = 0
        for kind in ("thinking", "text"):
            text = reply.get(kind)
            if text is None:
                continue
            events.append({"type": f"{kind}_start", "contentIndex": index})
            for piece in _chunks(text, self.chunk_size):
                events.append({"type": f"{kind}_delta", "contentIndex": index, "delta": piece})
            events.append({"type": f"{kind}_end", "contentIndex": index, "text": text})
            index += 1
        for call in reply.get("tool_calls") or []:
            arguments = call.get("arguments", {})
            raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
            events.append(
                {"type": "tool_call_start", "contentIndex": index, "callId": call["id"], "name": call["name"]}
            )
            for piece in _chunks(raw, self.chunk_size):
                events.append({"type": "tool_call_delta", "contentIndex": index, "delta": piece})
            events.append({"type": "tool_call_end", "contentIndex": index})
            index += 1
        error = reply.get("error")
        if isinstance(error, BaseException):
            events.append(error)
        elif error is not None:
            events.append({"type": "error", "error": error})
        else:
            done: dict = {"type": "done"}
            if reply.get("stop") is not None:
                done["stopReason"] = reply["stop"]
            usage = reply.get("usage", self.usage)
            if usage is not None:
                done["usage"] = usage
            events.append(done)
        return events


class ScriptedStream:
    """One reply's events; both a sync and an async iterable."""

    def __init__(self, events: list[dict | BaseException], delay: float) -> None:
        self._events = events
        self._delay = delay

    def __iter__(self) -> Iterator[dict]:
        for position, event in enumerate(self._events):
            if self._delay and _is_chunk(event) and position:
                time.sleep(self._delay)
            if isinstance(event, BaseException):
                raise event
            yield dict(event)

    async def __aiter__(self) -> AsyncIterator[dict]:
        for position, event in enumerate(self._events):
            if self._delay and _is_chunk(event) and position:
                await asyncio.sleep(self._delay)
            if isinstance(event, BaseException):
                raise event
            yield dict(event)


def _is_chunk(event: dict | BaseException) -> bool:
    return isinstance(event, dict) and event["type"].endswith("_delta")


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


_REPLY_KEYS = {"text", "thinking", "tool_calls", "usage", "error", "stop"}


def _check_reply(reply: Any, at: str) -> None:
    if isinstance(reply, str) or callable(reply):
        return
    if not isinstance(reply, dict):
        raise TypeError(f"ScriptedModel {at}: expected a string, dict or callable, got {type(reply).__name__}")
    unknown = set(reply) - _REPLY_KEYS
    if unknown:
        raise ValueError(f"ScriptedModel {at}: unknown keys {sorted(unknown)}; allowed: {sorted(_REPLY_KEYS)}")
    for key in ("text", "thinking"):
        if key in reply and not isinstance(reply[key], str):
            raise TypeError(f"ScriptedModel {at}.{key}: expected a string, got {type(reply[key]).__name__}")
    for i, call in enumerate(reply.get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not isinstance(call.get("name"), str):
            raise ValueError(f"ScriptedModel {at}.tool_calls[{i}]: needs string 'id' and 'name', got {call!r}")
