"""Hooks written in JavaScript, run unchanged in QuickJS-NG.

Inside the engine a hook sees ``ctx`` (the fields of :class:`HookContext` plus ``Send /
SendGroup / Flush`` and their lowercase aliases, each a synchronous call into Python, so a
``Flush`` reaches the sinks while the hook still runs), ``time.Sleep(ms)``, ``console.log /
info / warn / error / debug``, ``Date``, ``process.env`` (an empty object), the deprecated
``new Output(ctx)`` shim, and any extra ``globals``. There is no file system and no network.
Data crosses the boundary as JSON.

Limits, per hook call: ``time_limit`` seconds of *JavaScript* execution (time inside host calls
such as ``time.Sleep`` or a slow ``Flush`` is not counted), ``wall_limit`` seconds overall
(sleeps included), ``memory_limit`` bytes of JS heap and ``stack_limit`` bytes of JS stack. A
hook that hits a limit raises a :class:`HookError` subclass naming the hook and line; the engine
is then rebuilt from the source (so global JS state resets) and the next call works.
"""

from __future__ import annotations

import asyncio
import re
import sys
import threading
import time
import weakref
from collections.abc import Callable
from importlib import resources
from typing import Any

import orjson
import quickjs

from .hook_context import HookContext
from .errors import (
    HookError,
    HookLoadError,
    HookMemoryError,
    HookReturnError,
    HookStackOverflowError,
    HookThrewError,
    HookTimeoutError,
)
from .js_engine import JsEngine
from ..output import OutputMessageError
from .returns import check_result

MB = 1024 * 1024
_FRAME = re.compile(r"^\s*at (?:(\S+) )?\(?<input>:(\d+)(?::(\d+))?\)?\s*$")
_PRELUDE = resources.files(__package__).joinpath("js_prelude.js").read_text(encoding="utf-8")
_DISCOVER = resources.files(__package__).joinpath("js_discover.js").read_text(encoding="utf-8")


class JsHooks:
    """Hooks defined by one JavaScript source, in one QuickJS engine."""

    def __init__(
        self,
        source: str,
        *,
        time_limit: float = 5.0,
        wall_limit: float = 60.0,
        memory_limit: int = 64 * MB,
        stack_limit: int = 1 * MB,
        max_send_bytes: int = 8 * MB,
        globals: dict[str, Any] | None = None,  # noqa: A002 - the brief's name
        sleep: Callable[[float], None] | None = None,
        echo_console: bool = False,
    ) -> None:
        if not isinstance(source, str):
            raise TypeError(f"hooks_from_js(source): expected a string, got {type(source).__name__}")
        self.source = source
        self.time_limit = time_limit
        self.wall_limit = wall_limit
        self.max_send_bytes = max_send_bytes
        self.echo_console = echo_console
        self._sleep = sleep or time.sleep
        self._globals = dict(globals or {})
        for name in self._globals:
            if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
                raise ValueError(f"hooks_from_js(globals=…): {name!r} is not a JavaScript identifier")
        self._engine = JsEngine(memory_limit=memory_limit, stack_limit=stack_limit)
        self._lock = threading.Lock()
        self._console: list[dict] = []
        self._wake = threading.Event()  # set by interrupt(): ends a time.Sleep at once
        self._current: tuple[str, HookContext] | None = None
        self.names: frozenset[str] = frozenset()
        self.lines: dict[str, int] = {}  # hook name -> line of its definition
        self._sources: dict[str, str] = {}  # hook name -> its function's source text
        self.rebuilds = 0  # times the engine was rebuilt after a limit was hit
        try:
            self._engine.run(self._load)
        except BaseException:
            self._engine.close()
            raise
        weakref.finalize(self, self._engine.close)  # the engine holds no reference back to self

    # -- the Hooks protocol -------------------------------------------------------------------

    async def call(self, name: str, ctx: HookContext, *args: Any) -> dict | None:
        """Run hook ``name`` on the engine thread without blocking the event loop."""
        return await asyncio.wrap_future(self._engine.submit(self._call_locked, name, ctx, args))

    def take_console(self) -> list[dict]:
        lines, self._console = self._console, []
        return lines

    def interrupt(self) -> None:
        """(Any thread; the runner calls it on Ctrl-C.) Stop the running hook: a ``time.Sleep`` returns at
        once and the script stops at its next instruction with a :class:`HookTimeoutError`."""
        self._engine.budget.interrupt()
        self._wake.set()

    def close(self) -> None:
        """Stop the engine thread. The hooks cannot be called afterwards."""
        self._engine.close()

    # -- engine thread ----------------------------------------------------------------------

    def _load(self) -> None:
        context = self._engine.new_context()
        context.add_callable("__agentctx_host", _weak_host(weakref.ref(self)))
        self._eval_armed(context, _PRELUDE, "prelude")
        for name, value in self._globals.items():
            if callable(value):
                context.get("__agentctx_define_global")(name)
            else:
                context.set(name, context.parse_json(orjson.dumps(value).decode()))
        self._eval_armed(context, self.source, None)
        names = orjson.loads(self._eval_armed(context, _DISCOVER, "discover"))
        self.names = frozenset(names)
        source_of = context.get("__agentctx_source_of")
        self._sources = {name: source_of(name) for name in names}
        self.lines = {name: _line_in(self.source, text) for name, text in self._sources.items()}
        self._engine.call_fn = context.get("__agentctx_call")

    def _eval_armed(self, context: Any, code: str, what: str | None) -> Any:
        self._engine.budget.arm(self.time_limit, self.wall_limit)
        try:
            return context.eval(code)
        except quickjs.JSException as error:
            raise _load_error(str(error), self._engine.budget.tripped, what) from None
        finally:
            self._engine.budget.disarm()

    def _call_locked(self, name: str, ctx: HookContext, args: tuple) -> dict | None:
        with self._lock:
            return self._call(name, ctx, args)

    def _call(self, name: str, ctx: HookContext, args: tuple) -> dict | None:
        if name not in self.names:
            raise KeyError(f"the JavaScript source defines no {name} hook (it defines {sorted(self.names)})")
        payload = orjson.dumps([ctx.to_json(), *args], default=_json_default).decode()
        self._current = (name, ctx)
        self._wake.clear()
        self._engine.budget.arm(self.time_limit, self.wall_limit)
        try:
            envelope = self._engine.call_fn(name, payload)
        except (quickjs.JSException, quickjs.StackOverflow) as error:
            tripped = self._engine.budget.tripped
            failure = self._engine_failure(name, str(error), tripped)
            self._rebuild()
            raise failure from None
        finally:
            self._engine.budget.disarm()
            self._current = None
        reply = orjson.loads(envelope)
        if reply["ok"]:
            return check_result(name, reply.get("value"), line=self.lines.get(name))
        if "badReturn" in reply:
            raise HookReturnError(f"returned {reply['badReturn']}", hook=name, line=self.lines.get(name))
        failure = self._thrown(name, reply["thrown"])
        if isinstance(failure, (HookStackOverflowError, HookMemoryError)):
            self._rebuild()
        raise failure

    def _rebuild(self) -> None:
        self.rebuilds += 1
        self._engine._release()
        self._load()

    def _host(self, name: str, args_json: str) -> str:
        """Every call from JavaScript into Python. It must never raise (the binding would be left
        with a pending Python exception), so failures go back as ``{"error"}`` and JS throws."""
        budget = self._engine.budget
        budget.pause()
        try:
            call = _HOST_CALLS.get(name)
            if call is None:
                raise KeyError(f"no host call {name!r}")
            if name in _SEND_CALLS and len(args_json) > self.max_send_bytes:
                raise ValueError(f"the message is {len(args_json):,} bytes of JSON, over the "
                                 f"{self.max_send_bytes:,}-byte limit (max_send_bytes)")
            return orjson.dumps({"value": call(self, orjson.loads(args_json))}).decode()
        except Exception as error:  # noqa: BLE001 - reported to JavaScript, which throws
            reply: dict[str, str] = {"message": _host_error_text(name, error)}
            if name == "global":
                reply["name"] = type(error).__name__
            return orjson.dumps({"error": reply}).decode()
        finally:
            budget.resume()

    def _ctx(self) -> HookContext:
        if self._current is None:
            raise RuntimeError("ctx is only usable while a hook runs")
        return self._current[1]

    def _host_console(self, args: list) -> None:
        self._record_console(self._current[0] if self._current else None, args[0], args[1])

    def _host_sleep(self, args: list) -> None:
        self._sleep_ms(args[0])

    def _host_global(self, args: list) -> Any:
        return self._globals[args[0]](*args[1])

    def _host_send(self, args: list) -> None:
        self._ctx().Send(args[0])

    def _host_send_group(self, args: list) -> None:
        self._ctx().SendGroup(args[0])

    def _host_flush(self, args: list) -> None:
        self._ctx().Flush()

    def _sleep_ms(self, ms: Any) -> None:
        if not isinstance(ms, (int, float)) or ms != ms or ms < 0:
            raise ValueError(f"expected a number of milliseconds ≥ 0, got {ms!r}")
        # Sleep at most until the wall-clock limit; the interrupt handler then stops the hook at
        # its next JavaScript instruction (an uncatchable HookTimeoutError, not a JS exception).
        seconds = min(ms / 1000, max(self._engine.budget.wall_left(), 0.0))
        if self._sleep is time.sleep:
            self._wake.wait(seconds)  # an interrupt ends the sleep at once
        else:
            self._sleep(seconds)

    def _record_console(self, hook: str | None, level: str, text: str) -> None:
        line = {"level": level, "hook": hook, "text": text}
        self._console.append(line)
        if self.echo_console:
            print(f"[{hook or 'js'}] console.{level}: {text}", file=sys.stderr)

    # -- turning engine failures into HookErrors --------------------------------------------

    def _engine_failure(self, hook: str, text: str, tripped: str | None) -> HookError:
        """An exception the engine raised (a limit, the interrupt): the first matching row of
        :data:`_ENGINE_FAILURES` decides the error."""
        line = self._running_line(hook, _user_line(text))
        first = text.split("\n", 1)[0]
        for matches, build in _ENGINE_FAILURES:
            if matches(tripped, first):
                return build(self, hook, line, text, first)
        return HookThrewError(first, hook=hook, line=line, stack=text)

    def _thrown(self, hook: str, thrown: dict) -> HookError:
        """A value the hook threw: an Error (maybe the engine's stack or memory error), or anything else."""
        if thrown["isError"]:
            stack = thrown.get("stack") or ""
            line = _user_line(stack) or self.lines.get(hook)
            for matches, build in _THROWN_ERRORS:
                if matches(thrown["message"]):
                    return build(self, hook, line, stack, thrown["name"])
            return HookThrewError(f"{thrown['name']}: {thrown['message']}", hook=hook, line=line, name=thrown["name"],
                                  code=thrown.get("code"), stack=stack)
        return HookThrewError(
            f"threw a non-Error value ({thrown['name']}): {thrown['message']}",
            hook=hook, line=self._throw_line(hook), name=thrown["name"], code=thrown.get("code"),
            value=thrown.get("value"),
        )

    def _span(self, hook: str) -> tuple[int, list[str]] | None:
        """(first line, source lines) of the hook's own function, from the text the engine holds."""
        start = self.lines.get(hook)
        if start is None:
            return None
        return start, self._sources.get(hook, "").split("\n")

    def _throw_line(self, hook: str) -> int | None:
        """A thrown non-Error carries no stack: name the hook's first ``throw`` statement."""
        span = self._span(hook)
        if span is None:
            return None
        start, lines = span
        return next((start + offset for offset, text in enumerate(lines) if re.search(r"\bthrow\b", text)), start)

    def _running_line(self, hook: str, line: int | None) -> int | None:
        """The line a limit stopped. QuickJS records a frame's position only at calls and some jumps, so
        a loop that calls nothing is reported at its function's first line or at an enclosing statement:
        then name the first loop of the hook from that line on."""
        span = self._span(hook)
        if span is None or line is None:
            return line or (span[0] if span else None)
        start, lines = span
        offset = line - start
        if not 0 <= offset < len(lines) or _LOOP.search(lines[offset]):
            return line
        loop = next((start + at for at in range(offset, len(lines)) if _LOOP.search(lines[at])), None)
        return loop or line


_LOOP = re.compile(r"\b(?:while|for|do)\b")


_ENGINE_FAILURES: list[tuple[Callable[[str | None, str], bool], Callable[..., HookError]]] = [
    (lambda tripped, first: tripped == "interrupt",
     lambda self, hook, line, text, first: HookTimeoutError("was interrupted (the turn was stopped)",
                                                           hook=hook, line=line, stack=text)),
    (lambda tripped, first: tripped == "time",
     lambda self, hook, line, text, first: HookTimeoutError(
         f"ran longer than its {self.time_limit} s time limit (JavaScript time; an endless loop?)",
         hook=hook, line=line, stack=text)),
    (lambda tripped, first: tripped == "wall",
     lambda self, hook, line, text, first: HookTimeoutError(
         f"ran longer than its {self.wall_limit} s wall-clock limit", hook=hook, line=line, stack=text)),
    (lambda tripped, first: "out of memory" in first,
     lambda self, hook, line, text, first: _out_of_memory(self, hook, line, stack=text)),
    (lambda tripped, first: "stack" in first.lower(),
     lambda self, hook, line, text, first: _stack_overflow(self, hook, line, stack=text)),
]
"""(matches(tripped, first line of the engine's message), build(...)) — the first row that matches wins."""

_THROWN_ERRORS: list[tuple[Callable[[str], bool], Callable[..., HookError]]] = [
    (lambda message: "Maximum call stack size exceeded" in message,
     lambda self, hook, line, stack, name: _stack_overflow(self, hook, line, name=name, stack=stack)),
    (lambda message: "out of memory" in message,
     lambda self, hook, line, stack, name: _out_of_memory(self, hook, line, name=name, stack=stack)),
]
"""Errors a hook "threw" that are really the engine's limits (QuickJS raises them as catchable errors)."""


def _stack_overflow(hooks: JsHooks, hook: str, line: int | None, **details: Any) -> HookStackOverflowError:
    return HookStackOverflowError(
        f"exceeded the {hooks._engine.stack_limit:,}-byte stack limit (runaway recursion?)", hook=hook, line=line, **details)


def _out_of_memory(hooks: JsHooks, hook: str, line: int | None, **details: Any) -> HookMemoryError:
    return HookMemoryError(f"ran out of its {hooks._engine.memory_limit:,}-byte memory limit", hook=hook, line=line,
                           **details)


_HOST_CALLS: dict[str, Callable[[JsHooks, list], Any]] = {
    "console": JsHooks._host_console,
    "sleep": JsHooks._host_sleep,
    "global": JsHooks._host_global,
    "send": JsHooks._host_send,
    "send_group": JsHooks._host_send_group,
    "flush": JsHooks._host_flush,
}
"""What JavaScript may call in Python (the prelude's ``__agentctx_hostcall(name, args)``)."""
_SEND_CALLS = frozenset({"send", "send_group"})

_HOST_LABELS = {"send": "ctx.Send", "send_group": "ctx.SendGroup", "flush": "ctx.Flush", "sleep": "time.Sleep",
                "console": "console", "global": "host function"}
_YAO_PREFIXES = {"send": ("invalid message: ", "Send failed: "), "send_group": ("invalid group: ", "SendGroup failed: ")}
"""Yao's wording (agent/context/jsapi.go:177-211): a message Yao cannot parse is ``invalid message: …``;
one that its writer refuses (a standard client's image without a url) is ``Send failed: …``."""


def _host_error_text(name: str, error: Exception) -> str:
    """The JavaScript error message for a failed host call: Yao's text first, then our detail."""
    text = str(error)
    prefixes = _YAO_PREFIXES.get(name)
    if prefixes is None:
        return f"{_HOST_LABELS.get(name, name)}: {text}"
    invalid, failed = prefixes
    if text.startswith(("invalid message: ", "invalid group: ", "Send failed: ", "SendGroup failed: ")):
        if name == "send_group":
            text = text.replace("invalid message: ", invalid, 1).replace("Send failed: ", failed, 1)
        return text
    if isinstance(error, OutputMessageError):
        return invalid + text
    return failed + text


def hooks_from_js(
    source: str,
    *,
    time_limit: float = 5.0,
    wall_limit: float = 60.0,
    memory_limit: int = 64 * MB,
    stack_limit: int = 1 * MB,
    max_send_bytes: int = 8 * MB,
    globals: dict[str, Any] | None = None,  # noqa: A002
    sleep: Callable[[float], None] | None = None,
    echo_console: bool = False,
) -> JsHooks:
    """Load hooks from JavaScript source (the seed's ``function Create(ctx, messages) {…}``).

    ``globals`` adds names to the engine: a Python callable becomes a JS function (arguments
    and result cross as JSON), any other value is set as JSON data. ``sleep`` replaces the
    ``time.sleep`` behind ``time.Sleep`` (tests record instead of sleeping). Console lines are
    collected into ``TurnResult.console``; ``echo_console=True`` also prints them to stderr.
    Raises :class:`HookLoadError` for a syntax error or a top-level throw.
    """
    return JsHooks(
        source,
        time_limit=time_limit,
        wall_limit=wall_limit,
        memory_limit=memory_limit,
        stack_limit=stack_limit,
        max_send_bytes=max_send_bytes,
        globals=globals,
        sleep=sleep,
        echo_console=echo_console,
    )


def _weak_host(ref: weakref.ref) -> Callable[[str, str], str]:
    """The host callable, holding the hooks weakly so they can be freed (and their engine closed)
    as soon as the caller drops them."""

    def host(name: str, args_json: str) -> str:
        hooks = ref()
        if hooks is None:
            return '{"error": {"message": "these hooks were closed", "name": "Error"}}'
        return hooks._host(name, args_json)

    return host


def _user_line(stack: str) -> int | None:
    """The line of the first stack frame that is not ours (``__agentctx_*``)."""
    for text in stack.split("\n"):
        match = _FRAME.match(text)
        if match and not (match.group(1) or "").startswith("__agentctx"):
            return int(match.group(2))
    return None


def _line_in(source: str, function_text: str) -> int | None:
    at = source.find(function_text)
    return source.count("\n", 0, at) + 1 if at >= 0 else None


def _load_error(text: str, tripped: str | None, what: str | None) -> HookLoadError:
    first = text.split("\n", 1)[0]
    if what is not None:
        return HookLoadError(f"the {what} failed: {first}")
    line = _user_line(text)
    if tripped:
        return HookLoadError("the top-level code ran past the time limit", line=line, code="HOOK_TIMEOUT")
    return HookLoadError(f"could not load the source: {first}", line=line)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot pass {type(value).__name__} to a JavaScript hook as JSON: {value!r:.80}")


__all__ = ["JsHooks", "hooks_from_js"]
