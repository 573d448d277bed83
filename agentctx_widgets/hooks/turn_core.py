"""The turn core: what the seed's lifecycle (:mod:`.runner`, ``_Turn``) and Yao's request
(``yao.runner``, ``_Request``) both do, written once. Each of them keeps only what differs — the order
of its hooks and events, its error texts, what it sends to the client.

- :class:`StopSignal`: a turn's stop request (Ctrl-C), set from the calling thread; checked between a
  sync stream's events, and waking what blocks outside the turn's loop (``ctx.llm.Stream`` in a hook,
  a sub-agent's request) through :meth:`StopSignal.on_stop`.
- :func:`stream_reply`: one model call: the stream opened and always closed (``aclose`` on an
  interrupt or an error too), each event folded into the assembler, the ``start`` / ``done`` facts
  kept, ``reply_cut_off`` reported, an ``error`` event raised as :class:`ModelError`, more tool calls
  than ``models.limits.MAX_TOOL_CALLS`` refused (every model: a replay, a scripted or a custom one), the
  usage finalized; a custom model's failure redacted of the known keys. :func:`add_usage` sums a turn's
  calls.
- :func:`call_tool`: one tool call: looked up, its arguments checked, run as user code
  (:func:`.caller.call_user_code`); what went wrong is returned, for each lifecycle to word.
- :func:`as_user_message`: a turn's user input as a Context message.
- :func:`run_until_stopped`: :func:`.caller.run_on_worker` for a request that another request started
  (``ctx.agent.Call``), which its stop ends as Ctrl-C ends the outer one.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..context import create_assembler, finalize_usage, usage_add, user_message
from ..models import ModelError, limits
from ..models.answer import call_facts
from ..models.connector import SdkModel
from ..models.errors import redacted_failure
from ..models.hints import Target, model_secrets
from ..models.openai_shapes import from_view_message
from ..models.stream_events import is_async, opened, stopped
from ..models.tools import Tool
from .caller import call_user_code, cancel_task, run_on_worker

__all__ = ["Reply", "StopSignal", "ToolCall", "add_usage", "as_user_message", "call_tool", "run_until_stopped",
           "stream_reply"]

Report = Callable[..., None]
"""``report(code, where, **details)``: where a lifecycle collects its diagnostics."""

OnEvent = Callable[[dict], None]
"""``on_event(event)``: after the event is folded in (not called for ``error``: it raises)."""


class StopSignal:
    """A turn's stop request. :meth:`set` from any thread (``run_on_worker``'s Ctrl-C calls the turn's
    ``interrupt``); :meth:`is_set` between steps; :meth:`on_stop` callbacks wake what the turn's task
    cannot cancel (a model stream read on another thread, a request run on another loop)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one failing waker must not keep the others from stopping
                pass

    def on_stop(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once when the stop is set (at once if it is); returns its remover."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


@dataclass
class Reply:
    """One model call's outcome."""

    message: dict
    """The assembled assistant message (type 3)."""
    usage: dict
    """``finalize_usage`` of the call: the model's figures, else an estimate."""
    meta: dict = field(default_factory=dict)
    """``model``, ``provider``, ``rateLimits`` (from ``start``) and ``call_facts`` of ``done``."""


async def stream_reply(model: Any, messages: list[dict], options: dict | None, *, stop: StopSignal | None = None,
                       report: Report | None = None, on_event: OnEvent | None = None,
                       assembler: Any = None) -> Reply:
    """Stream one model call into ``assembler`` (a fresh one unless given: a caller that shows the partial
    message on an interrupt passes its own). Raises :class:`ModelError` for an ``error`` event (or an
    assembled error), ``CancelledError`` when ``stop`` is set between events; the stream is closed either way.
    A reply with more than ``models.limits.MAX_TOOL_CALLS`` tool calls raises ``RESPONSE_TOO_LARGE`` before
    any of them runs (counted as they stream, and in the assembled message for a snapshot). A custom
    model's failure (raised, or an ``error`` event) leaves without the keys it may carry (:func:`_redacted`)."""
    try:
        return await _stream_reply(model, messages, options, stop, report, on_event, assembler)
    except Exception as failure:  # not CancelledError / KeyboardInterrupt: an interrupt carries no text
        shown = _redacted(model, failure)
        if shown is failure:
            raise
        raise shown from None  # its text showed a key even with its args blanked: replaced, cause hidden


def _redacted(model: Any, failure: Exception) -> BaseException:
    """``failure`` without the secrets of ``models.hints.model_secrets`` (the built-in connectors' key
    variables, the model's own ``api_key``-like attributes), for every model but the built-in connectors
    (``SdkModel``), which blank their call's key from every error they raise and every error event already."""
    if isinstance(model, SdkModel):
        return failure
    secrets = model_secrets(model)
    if not secrets:
        return failure
    return redacted_failure(failure, Target(url=None, model=None, base_url=None, provider="", key_env="",
                                            secrets=secrets))


async def _stream_reply(model: Any, messages: list[dict], options: dict | None, stop: StopSignal | None,
                        report: Report | None, on_event: OnEvent | None, assembler: Any) -> Reply:
    assembler = assembler if assembler is not None else create_assembler()
    meta: dict[str, Any] = {}
    calls = _ToolCalls(type(model).__name__)
    async with opened(model.stream(messages, options=options)) as events:
        if is_async(events):
            async for event in events:
                _step(assembler, event, meta, report, on_event, calls)
                if stop is not None and stop.is_set():
                    raise stopped()
        else:
            for event in events:
                if stop is not None and stop.is_set():  # a sync stream can only stop between events
                    raise stopped()
                _step(assembler, event, meta, report, on_event, calls)
    message = assembler.message()
    if "error" in message:
        raise ModelError.from_event_error(message["error"])
    content = message.get("content")
    calls.check(sum(1 for block in content if isinstance(block, dict) and block.get("type") == "toolCall")
                if isinstance(content, list) else 0)
    return Reply(message, finalize_usage(assembler.usage, messages, message), meta)


class _ToolCalls:
    """The tool calls of one reply, by content index, refused past ``limits.MAX_TOOL_CALLS`` (read at each
    check, so a test may lower it); the SDK connectors stop at the same number earlier, in the stream."""

    EVENTS = frozenset({"tool_call_start", "tool_call_delta", "tool_call_end"})

    def __init__(self, model: str) -> None:
        self.model = model
        self.indexes: set[int] = set()

    def see(self, event: dict) -> None:
        self.indexes.add(event["contentIndex"])
        self.check(len(self.indexes))

    def check(self, count: int) -> None:
        cap = limits.MAX_TOOL_CALLS
        if count > cap:
            raise ModelError(f"the model's reply has more than {cap} tool calls (models.limits.MAX_TOOL_CALLS, "
                             f"for every model; this one is a {self.model}); the call was stopped and none of "
                             "them ran", code="RESPONSE_TOO_LARGE")


def _step(assembler: Any, event: Any, meta: dict, report: Report | None, on_event: OnEvent | None,
          calls: _ToolCalls) -> None:
    assembler.consume(event)
    kind = event.get("type") if isinstance(event, dict) else None
    if kind in calls.EVENTS:  # contentIndex checked by consume
        calls.see(event)
    if kind == "start":
        for key in ("model", "provider", "rateLimits"):
            if event.get(key):
                meta[key] = event[key]
    elif kind == "done":
        meta.update(call_facts(event))
        if meta.get("truncated") and report is not None:
            report("reply_cut_off", "response", stop=meta.get("stopReason"))
    elif kind == "error":
        raise ModelError.from_event_error(event.get("error"))
    if on_event is not None:
        on_event(event)


def add_usage(total: dict | None, usage: dict) -> dict:
    """A turn's usage so far plus one call's."""
    return usage if total is None else usage_add(total, usage)


@dataclass
class ToolCall:
    """What running one tool call gave: its value, or why there is none."""

    name: str
    value: Any = None
    missing: bool = False
    """No tool has that name."""
    invalid: ValueError | None = None
    """The arguments did not fit the tool's schema (``Tool.check``)."""
    failure: Exception | None = None
    """The tool raised."""

    @property
    def ok(self) -> bool:
        return not self.missing and self.invalid is None and self.failure is None


async def call_tool(tools: Mapping[str, Tool], name: str, arguments: Any) -> ToolCall:
    """Run tool ``name`` with ``arguments`` (checked first); a tool's failure is returned, not raised
    (an interrupt is: ``CancelledError`` / ``KeyboardInterrupt`` are not ``Exception``)."""
    tool = tools.get(name)
    if tool is None:
        return ToolCall(name, missing=True)
    try:
        checked = tool.check(arguments)
    except ValueError as invalid:
        return ToolCall(name, invalid=invalid)
    try:
        return ToolCall(name, value=await call_user_code(tool.function, **checked))
    except Exception as failure:  # noqa: BLE001 - a tool's failure is an answer the model sees
        return ToolCall(name, failure=failure)


def as_user_message(user_input: Any) -> dict:
    """A turn's input as a Context message: a Context message as it is, an OpenAI-like ``{role,
    content}`` converted, anything else a user message (``user_message``: text, parts)."""
    if isinstance(user_input, dict):
        if isinstance(user_input.get("type"), int) or "role" not in user_input:
            return user_input
        return from_view_message(user_input)
    return user_message(user_input)


def run_until_stopped(main: Callable[[], Coroutine[Any, Any, Any]], stop: StopSignal) -> Any:
    """:func:`.caller.run_on_worker` of ``main``, which ``stop`` ends from any thread: its task is cancelled
    (``CancelledError`` is raised here) — for a request run from a thread that Ctrl-C does not reach
    (a JavaScript hook's bridge call); Ctrl-C in this thread still sets ``stop`` and raises
    ``KeyboardInterrupt``."""
    running: dict[str, Any] = {}

    async def entry() -> Any:
        running["loop"], running["task"] = asyncio.get_running_loop(), asyncio.current_task()
        if stop.is_set():
            raise stopped()
        return await main()

    remove = stop.on_stop(lambda: cancel_task(running.get("loop"), running.get("task")))
    try:
        return run_on_worker(entry, stop.set)
    finally:
        remove()
