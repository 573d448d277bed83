"""The normalised response-event vocabulary, its validation, and callback sets.

Event fields (DESIGN.md): every ``*_start/_delta/_end`` event carries an integer ``contentIndex`` >= 0;
every ``*_delta`` carries a string ``delta``; ``tool_call_start`` carries string ``callId`` and ``name``;
``error`` carries ``error`` (a string or ``{"message", "retry"}``). ``is_response_event`` and
``validate_response_event`` check all of these, not only the type and index.

Callback sets (``normalize_callbacks``) are dicts keyed by ``on`` + CamelCase names. Python has no
``undefined``, so: a key that is *absent* gets the binding default; a key present with ``None`` or
``False`` is a no-op. The default for an omitted callback is ``binding["onData"]``; an omitted
``onError`` also writes ``"error: <text>"`` to ``binding["onLog"]`` when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

__all__ = [
    "EventType",
    "callback_name",
    "dispatch",
    "is_response_event",
    "normalize_callbacks",
    "validate_response_event",
]


class EventType(StrEnum):
    """The full normalised event vocabulary (the event's ``type`` string)."""

    START = "start"
    TEXT_START = "text_start"
    TEXT_DELTA = "text_delta"
    TEXT_END = "text_end"
    THINKING_START = "thinking_start"
    THINKING_DELTA = "thinking_delta"
    THINKING_END = "thinking_end"
    TOOL_CALL_START = "tool_call_start"
    TOOL_CALL_DELTA = "tool_call_delta"
    TOOL_CALL_END = "tool_call_end"
    DONE = "done"
    ERROR = "error"


EVENT_TYPES = frozenset(member.value for member in EventType)
_INDEXED = frozenset(name for name in EVENT_TYPES if name.endswith(("_start", "_delta", "_end")))
_TERMINAL = frozenset({"done", "error"})


def callback_name(event_name: str) -> str:
    """``"text_delta"`` -> ``"onTextDelta"``; ``"tool_call_start"`` -> ``"onToolCallStart"``."""
    if not isinstance(event_name, str):
        raise TypeError(f"callback_name: event name must be a string, got {type(event_name).__name__}")
    return "on" + "".join(part[:1].upper() + part[1:] for part in event_name.split("_"))


_CALLBACK_NAMES = {name: callback_name(name) for name in EVENT_TYPES}


def _event_problem(event: Any) -> str | None:
    """Why ``event`` is not a well-formed response event, or ``None`` when it is."""
    if not isinstance(event, Mapping):
        return f"expected an event dict, got {type(event).__name__}"
    kind = event.get("type")
    if kind not in EVENT_TYPES:
        return f"unknown event type {kind!r}"
    if kind in _INDEXED:
        index = event.get("contentIndex")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            return f"{kind}.contentIndex must be an integer >= 0, got {index!r}"
    if kind.endswith("_delta") and not isinstance(event.get("delta"), str):
        return f"{kind}.delta must be a string, got {type(event.get('delta')).__name__}"
    if kind == "tool_call_start":
        for key in ("callId", "name"):
            if not isinstance(event.get(key), str):
                return f"tool_call_start.{key} must be a string, got {event.get(key)!r}"
    if kind == "error":
        error = event.get("error")
        if not (isinstance(error, str) or (isinstance(error, Mapping) and isinstance(error.get("message"), str))):
            return f"error.error must be a string or {{'message', 'retry'}}, got {error!r}"
    return None


def is_response_event(event: Any) -> bool:
    """Is ``event`` a well-formed normalised response event?"""
    return _event_problem(event) is None


def validate_response_event(event: Any) -> dict:
    """Return ``event`` unchanged when well-formed; raise ``TypeError`` saying why otherwise."""
    problem = _event_problem(event)
    if problem is not None:
        raise TypeError(f"response event: {problem}")
    return event  # type: ignore[return-value]


def _noop(event: dict) -> None:
    return None


def _resolve(name: str, value: Any, where: str) -> Callable | None:
    if value is None or value is False:
        return None
    if not callable(value):
        raise TypeError(f"{where}.{name}: expected a function, None or False, got {type(value).__name__}")
    return value


def _default_for(name: str, binding: Mapping) -> Callable:
    on_data = _resolve("onData", binding.get("onData"), "binding")
    on_log = _resolve("onLog", binding.get("onLog"), "binding")
    if name == "onError" and on_log is not None:
        def report(event: dict) -> None:
            if on_data is not None:
                on_data(event)
            error = event.get("error")
            text = error.get("message", "") if isinstance(error, Mapping) else str(error)
            on_log(f"error: {text}")
        return report
    return on_data if on_data is not None else _noop


def _with_terminal(callback: Callable, terminal: Callable) -> Callable:
    def run(event: dict) -> None:
        callback(event)
        terminal(event)
    return run


def normalize_callbacks(callbacks: Mapping | None = None, binding: Mapping | None = None) -> dict:
    """Build a complete callback set (one entry per event type) for a binding.

    See the module docstring for how omitted, ``None`` and ``False`` callbacks resolve. ``onTerminal``
    runs after ``onDone``/``onError`` even when the consumer supplied its own.
    """
    callbacks = {} if callbacks is None else callbacks
    binding = {} if binding is None else binding
    if not isinstance(callbacks, Mapping):
        raise TypeError(f"normalize_callbacks: callbacks must be a dict, got {type(callbacks).__name__}")
    if not isinstance(binding, Mapping):
        raise TypeError(f"normalize_callbacks: binding must be a dict, got {type(binding).__name__}")
    terminal = _resolve("onTerminal", binding.get("onTerminal"), "binding")
    result: dict[str, Callable] = {}
    for event_name in EventType:
        name = _CALLBACK_NAMES[event_name.value]
        if name in callbacks:
            callback = _resolve(name, callbacks[name], "callbacks") or _noop
        else:
            callback = _default_for(name, binding)
        if terminal is not None and event_name.value in _TERMINAL:
            callback = _with_terminal(callback, terminal)
        result[name] = callback
    return result


def dispatch(callback_set: Mapping, event: Any) -> None:
    """Validate ``event`` and call its callback from ``callback_set``; callback errors propagate."""
    validate_response_event(event)
    name = _CALLBACK_NAMES[event["type"]]
    callback = callback_set.get(name) if isinstance(callback_set, Mapping) else None
    if not callable(callback):
        raise TypeError(f"dispatch: callback set has no function for {name!r}")
    callback(event)
