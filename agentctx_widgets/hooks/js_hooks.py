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

    def call_sync(self, name: str, ctx: HookContext, *args: Any) -> dict | None:
        """Run hook ``name`` and wait for it (from any thread but the engine's)."""
        return self._engine.run(self._call_locked, name, ctx, args)

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
        self.lines = {name: _line_in(self.source, source_of(name)) for name in names}
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
            value = self._dispatch(name, args_json)
            return orjson.dumps({"value": value}).decode()
        except Exception as error:  # noqa: BLE001 - reported to JavaScript, which throws
            message = f"{_host_label(name)}: {error}"
            return orjson.dumps({"error": {"message": message, "name": type(error).__name__}}).decode()
        finally:
            budget.resume()

    def _dispatch(self, name: str, args_json: str) -> Any:
        if name in ("send", "send_group") and len(args_json) > self.max_send_bytes:
            raise ValueError(
                f"the message is {len(args_json):,} bytes of JSON, over the {self.max_send_bytes:,}-byte "
                "limit (max_send_bytes)"
            )
        args = orjson.loads(args_json)
        hook, ctx = self._current if self._current else (None, None)
        if name == "console":
            self._record_console(hook, args[0], args[1])
            return None
        if name == "sleep":
            self._sleep_ms(args[0])
            return None
        if name == "global":
            return self._globals[args[0]](*args[1])
        if ctx is None:
            raise RuntimeError("ctx is only usable while a hook runs")
        if name == "send":
            ctx.Send(args[0])
        elif name == "send_group":
            ctx.SendGroup(args[0])
        elif name == "flush":
            ctx.Flush()
        else:
            raise KeyError(name)
        return None

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
        line = _user_line(text) or self.lines.get(hook)
        first = text.split("\n", 1)[0]
        if tripped == "time":
            return HookTimeoutError(
                f"ran longer than its {self.time_limit} s time limit (JavaScript time; an endless loop?)",
                hook=hook, line=line, stack=text,
            )
        if tripped == "interrupt":
            return HookTimeoutError("was interrupted (the turn was stopped)", hook=hook, line=line, stack=text)
        if tripped == "wall":
            return HookTimeoutError(
                f"ran longer than its {self.wall_limit} s wall-clock limit", hook=hook, line=line, stack=text
            )
        if "out of memory" in first:
            return self._out_of_memory(hook, line, stack=text)
        if "stack" in first.lower():
            return self._stack_overflow(hook, line, stack=text)
        return HookThrewError(first, hook=hook, line=line, stack=text)

    def _thrown(self, hook: str, thrown: dict) -> HookError:
        if thrown["isError"]:
            stack = thrown.get("stack") or ""
            line = _user_line(stack) or self.lines.get(hook)
            message = f"{thrown['name']}: {thrown['message']}"
            if "Maximum call stack size exceeded" in thrown["message"]:
                return self._stack_overflow(hook, line, name=thrown["name"], stack=stack)
            if "out of memory" in thrown["message"]:
                return self._out_of_memory(hook, line, name=thrown["name"], stack=stack)
            return HookThrewError(message, hook=hook, line=line, name=thrown["name"], code=thrown.get("code"), stack=stack)
        line = self._throw_line(hook)
        return HookThrewError(
            f"threw a non-Error value ({thrown['name']}): {thrown['message']}",
            hook=hook, line=line, name=thrown["name"], code=thrown.get("code"), value=thrown.get("value"),
        )

    def _stack_overflow(self, hook: str, line: int | None, **details: Any) -> HookStackOverflowError:
        return HookStackOverflowError(
            f"exceeded the {self._engine.stack_limit:,}-byte stack limit (runaway recursion?)",
            hook=hook, line=line, **details,
        )

    def _out_of_memory(self, hook: str, line: int | None, **details: Any) -> HookMemoryError:
        return HookMemoryError(
            f"ran out of its {self._engine.memory_limit:,}-byte memory limit", hook=hook, line=line, **details
        )

    def _throw_line(self, hook: str) -> int | None:
        """A thrown non-Error carries no stack: name the hook's first ``throw`` statement."""
        start = self.lines.get(hook)
        if start is None:
            return None
        body = self.source.split("\n")[start - 1 :]
        depth, seen_brace = 0, False
        for offset, text in enumerate(body):
            if re.search(r"\bthrow\b", text):
                return start + offset
            depth += text.count("{") - text.count("}")
            seen_brace = seen_brace or "{" in text
            if seen_brace and depth <= 0:
                break
        return start


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


def _host_label(name: str) -> str:
    return {
        "send": "ctx.Send",
        "send_group": "ctx.SendGroup",
        "flush": "ctx.Flush",
        "sleep": "time.Sleep",
        "console": "console",
        "global": "host function",
    }.get(name, name)


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
