"""What every ``ctx`` service shares: the error a hook sees, and JavaScript's value conversions.

Yao's bindings throw a JavaScript ``Error`` whose message is a short fixed text (``bridge.JsException``,
e.g. ``"Get requires a key argument"`` at ``agent/context/jsapi.go:793``); :class:`YaoServiceError`
carries exactly that text, so the JavaScript bridge can rethrow it unchanged. The conversions mirror
v8go's ``Value.String()`` and ``Value.Integer()``, which the bindings apply to their arguments.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import orjson

from ..hooks.js_bridge import bound_call_stopped
from .fanout import FanOutStopped, Mode, Slot, fan_out, has_no_error

SKIP: Any = object()
"""What a member's ``_request`` returns for a batch request Yao skips (an invalid one)."""


MAX_BATCH = 256
"""The most requests one ``All`` / ``Any`` / ``Race`` runs here (each runs on a thread of its own)."""


def yao_method(helper: str, *fixed: Any) -> Callable[..., Any]:
    """A method of a Yao member that is ``self.<helper>(*fixed, args)`` with the call's ``args`` as a tuple
    (``Info`` is ``_log_args("info", args)``): one line per method where a family differs by a constant."""
    return lambda self, *args: getattr(self, helper)(*fixed, args)


class BatchMethods:
    """Yao's ``All`` / ``Any`` / ``Race`` of ``ctx.llm``, ``ctx.agent``, ``ctx.mcp`` and ``ctx.search``: the
    requests run at once (:func:`.fanout.fan_out`, each on a thread of its own), invalid ones skipped
    first (:meth:`_prepare` returns :data:`SKIP`). What differs by member is a class attribute:
    ``_batch_shape`` (``"slots"``: one slot per request, ``None`` where a call did not finish; ``"compact"``:
    ``ctx.llm``'s ``[success]`` / the errors / ``[first]``), ``_batch_wait_rest`` (wait for the calls after
    the decisive one, as ``orchestrator.go`` and ``search.go`` do) and :meth:`_batch_succeeded`. ``ctx.llm``
    and ``ctx.agent`` take one ``onChunk(name, index, msg)`` in the options after the requests
    (``_batch_on_chunk``); it runs on the calling thread (``Slot.here``). The wait ends at the request's
    ``stop`` (the runner sets it), a hook's limit or Ctrl-C (:data:`.fanout.FanOutStopped`)."""

    _batch_usage = "{method} requires requests parameter"
    """The error for no requests (``ctx.llm`` and ``ctx.agent`` say ``requires requests array parameter``)."""
    _batch_on_chunk = False
    _batch_shape = "slots"
    _batch_wait_rest = False
    stop: Any = None
    """The request's ``StopSignal`` (``hooks.turn_core``), when the runner gives one: a batch stops waiting at it."""

    def for_request(self) -> Any:
        """This member for one request: the same registrations (shared: a ``register`` through either is
        seen by both), and a ``stop`` of its own — an assistant's registry serves requests that run at
        once (a suite's cases), and one request's stop must not end, nor fail to end, another's calls."""
        view = copy.copy(self)
        view.stop = None
        return view

    def _request(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        raise NotImplementedError

    def _prepare(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        """:data:`SKIP`, or ``call(slot)`` that runs the request on its thread (default: :meth:`_request`
        of a dict request, ``on_chunk`` run on the calling thread)."""
        if not isinstance(request, dict):
            return SKIP
        return lambda slot: self._request(request, index, on_calling_thread(slot, on_chunk))

    def _batch_succeeded(self, result: Any) -> bool:
        return has_no_error(result)

    def _batch(self, method: str, mode: Mode, args: tuple) -> list:
        if not args:
            raise YaoServiceError(self._batch_usage.format(method=method))
        if not isinstance(args[0], list):
            raise YaoServiceError("requests must be an array")
        check_batch_size(method, len(args[0]))
        on_chunk = split_on_chunk(args[1] if len(args) >= 2 else None)[1] if self._batch_on_chunk else None
        calls = [call for index, request in enumerate(args[0])
                 if (call := self._prepare(request, index, on_chunk)) is not SKIP]
        batch = fan_out(calls, mode, succeeded=self._batch_succeeded, wait_rest=self._batch_wait_rest,
                        stopped=self._stopped)
        return batch.compact(mode) if self._batch_shape == "compact" else batch.slots

    def _stopped(self) -> str | None:
        """Why a batch should stop waiting: the hook's bound call was stopped or the request's stop is set."""
        why = bound_call_stopped()
        if why:
            return why
        return "interrupt" if self.stop is not None and self.stop.is_set() else None

    # Yao's method names
    All, Any, Race = (yao_method("_batch", name, name.lower()) for name in ("All", "Any", "Race"))


def on_calling_thread(slot: Slot, function: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """``function`` run on the batch's calling thread (a hook's ``onChunk``); once the batch is over its
    answer is 1, stop (nobody reads the rest)."""
    if function is None:
        return None

    def call(*args: Any) -> Any:
        try:
            return slot.here(function, *args)
        except FanOutStopped:
            return 1

    return call


class YaoServiceError(RuntimeError):
    """A ``ctx`` service call failed; ``str(error)`` is the message Yao's binding throws."""


class NotAvailableHere(YaoServiceError):
    """The member cannot be used in the notebook (nothing registered, or nothing can emulate it).

    ``member`` names it (``"ctx.mcp"``, ``"ctx.sandbox"``); the message says why and what to do.
    """

    def __init__(self, member: str, message: str) -> None:
        super().__init__(message)
        self.member = member


def name_and_messages(method: str, name: str, args: tuple) -> tuple[str, list, dict, Callable[..., Any] | None]:
    """``Method(name, messages, options?)`` of ``ctx.llm`` / ``ctx.agent`` checked as Yao checks it
    (``jsapi_llm.go:93-137``, ``jsapi_agent.go``): the name, the messages, the options and ``onChunk``."""
    if len(args) < 2:
        raise YaoServiceError(f"{method} requires {name} and messages parameters")
    if not isinstance(args[0], str):
        raise YaoServiceError(f"{name} must be a string")
    if not isinstance(args[1], list):
        raise YaoServiceError("messages must be an array")
    return (args[0], args[1], *split_on_chunk(args[2] if len(args) >= 3 else None))


def js_string(value: Any) -> str:
    """JavaScript ``String(value)`` for JSON values (``null`` → ``"null"``, ``1.0`` → ``"1"``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def js_int(value: Any) -> int:
    """v8go ``Value.Integer()`` of a number: truncated toward zero (NaN and infinities give 0 here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return 0
    return int(value)


def js_int32(value: int) -> int:
    """``value`` wrapped to a signed 32-bit int, as Go's ``int32(…)`` conversion wraps it."""
    return (value + 2**31) % 2**32 - 2**31


def check_batch_size(method: str, count: int) -> None:
    """At most :data:`MAX_BATCH` calls at once: each runs on a thread of its own (``fan_out``), so a hook's
    loop cannot start thousands."""
    if count > MAX_BATCH:
        raise YaoServiceError(f"{method}: at most {MAX_BATCH} requests in one batch here, got {count} "
                              "(Yao has no such limit; split the batch)")


def json_value(value: Any, what: str) -> Any:
    """A JSON copy of ``value``; a value that is not JSON raises naming ``what``."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError as error:
        raise YaoServiceError(f"{what}: {error}") from error


def split_on_chunk(options: Any) -> tuple[dict, Callable[..., Any] | None]:
    """The options without ``onChunk``, and ``onChunk`` when it is callable (``jsapi_llm.go:114-137``)."""
    if not isinstance(options, dict):
        return {}, None
    callback = options.get("onChunk")
    rest = {key: value for key, value in options.items() if key != "onChunk"}
    return rest, callback if callable(callback) else None
