"""How a JavaScript hook's failures become :class:`HookError`\\ s naming the hook, the line and the limit.

:class:`Diagnosis` knows the source (each hook's function and the line it starts on) and the
:class:`~.js_limits.Limits`; it reads the engine's stacks and messages back into errors. The module's
functions read positions out of QuickJS stack traces (``at Create (<input>:3:5)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .errors import (
    HookError,
    HookLoadError,
    HookMemoryError,
    HookStackOverflowError,
    HookThrewError,
    HookTimeoutError,
)
from .js_limits import Limits

INTERNAL = "HOOK_INTERNAL"
"""The ``code`` of a :class:`HookError` that is ours (the bridge or its process), not the hook's."""

_FRAME = re.compile(r"^\s*at (?:(\S+) )?\(?<input>:(\d+)(?::(\d+))?\)?\s*$")
_LOOP = re.compile(r"\b(?:while|for|do)\b")
_CALLEE = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\??\.\s*[A-Za-z_$][\w$]*)*(?=\s*\()")
_CHAIN_END = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\??\.\s*[A-Za-z_$][\w$]*)*\s*$")


class Diagnosis:
    """A hook set's source and limits, to name what failed and where."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source, self.limits = source, limits
        self.lines: dict[str, int] = {}  # hook name -> line of its definition
        self.sources: dict[str, str] = {}  # hook name -> its function's source text

    def learn(self, sources: dict[str, str]) -> None:
        """The loaded hooks' function texts: where each starts in the source."""
        self.sources = dict(sources)
        self.lines = {name: line_in(self.source, text) for name, text in self.sources.items()}

    # -- errors of a call -----------------------------------------------------------------------

    def engine_failure(self, hook: str, text: str, tripped: str | None, line: int | None = None) -> HookError:
        """An exception the engine raised (a limit, out of memory, the stack): the first matching row of
        :data:`_ENGINE_FAILURES` decides the error."""
        if line is None:
            line = self.running_line(hook, user_line(text))
        first = text.split("\n", 1)[0]
        for matches, build in _ENGINE_FAILURES:
            if matches(tripped, first):
                return build(self, hook, line, text, first)
        return HookThrewError(first, hook=hook, line=line, stack=text)

    def thrown(self, hook: str, thrown: dict) -> HookError:
        """A value the hook threw: an Error (maybe the engine's stack or memory error), or anything else."""
        if thrown["isError"]:
            stack = thrown.get("stack") or ""
            line = user_line(stack) or self.lines.get(hook)
            for matches, build in _THROWN_ERRORS:
                if matches(thrown["message"]):
                    return build(self, hook, line, stack, thrown["name"])
            member = callee(self.source, stack) if thrown["message"] == "not a function" else None
            detail = f"{thrown['name']}: {thrown['message']}" + (f" ({member})" if member else "")
            return HookThrewError(detail, hook=hook, line=line, name=thrown["name"], code=thrown.get("code"),
                                  stack=stack, member=member)
        return HookThrewError(
            f"threw a non-Error value ({thrown['name']}): {thrown['message']}",
            hook=hook, line=self.throw_line(hook), name=thrown["name"], code=thrown.get("code"),
            value=thrown.get("value"),
        )

    def stopped(self, name: str, why: str, detail: str) -> HookError:
        """The kernel stopped (or lost) the worker: ``why`` is interrupt, cap, time, wall or died."""
        line = self.running_line(name, None)
        if why == "interrupt":
            return HookTimeoutError("was interrupted (the turn was stopped)", hook=name, line=line)
        if why == "cap":
            return HookMemoryError(detail, hook=name, line=line)
        if why in ("time", "wall"):
            limit = self.limits.time_text(why)
            if detail == "sending":
                return HookTimeoutError(f"ran longer than {limit} while the kernel applied what it sent (its engine "
                                        "process was stopped)", hook=name, line=line)
            return HookTimeoutError(f"ran longer than {limit} in code that does not yield (a built-in on a huge "
                                    "array-like?); its engine process was stopped", hook=name, line=line)
        return HookError(f"its JavaScript engine process ended unexpectedly ({detail}); a new one serves the "
                         "next call", hook=name, line=line, code=INTERNAL)

    def tripped(self, name: str, tripped: dict, result: dict) -> HookError:
        """The worker stopped the call itself: a limit, a cap, or a failure of ours in a host call."""
        kind = tripped.get("kind")
        stack = result.get("abort_stack") or ""
        engine = result.get("engine") or ""
        line = user_line(stack) if stack else None
        if line is None:
            line = self.running_line(name, user_line(engine))
        if kind == "cap":
            return HookMemoryError(str(tripped.get("message")), hook=name, line=line, stack=stack or engine)
        if kind == "internal":
            return internal(name, str(tripped.get("message")), line=line)
        if kind == "wall" and tripped.get("message"):
            return HookTimeoutError(str(tripped["message"]), hook=name, line=line, stack=stack or engine)
        return self.engine_failure(name, engine or stack, kind, line=line)

    def stack_overflow(self, hook: str, line: int | None, **details: Any) -> HookStackOverflowError:
        return HookStackOverflowError(f"exceeded the {self.limits.stack_limit:,}-byte stack limit (runaway "
                                      "recursion?)", hook=hook, line=line, **details)

    def out_of_memory(self, hook: str, line: int | None, **details: Any) -> HookMemoryError:
        return HookMemoryError(f"ran out of its {self.limits.memory_limit:,}-byte memory limit", hook=hook,
                               line=line, **details)

    # -- lines ----------------------------------------------------------------------------------

    def _span(self, hook: str) -> tuple[int, list[str]] | None:
        """(first line, source lines) of the hook's own function, from the text the engine holds."""
        start = self.lines.get(hook)
        if start is None:
            return None
        return start, self.sources.get(hook, "").split("\n")

    def throw_line(self, hook: str) -> int | None:
        """A thrown non-Error carries no stack: name the hook's first ``throw`` statement."""
        span = self._span(hook)
        if span is None:
            return None
        start, lines = span
        return next((start + offset for offset, text in enumerate(lines) if re.search(r"\bthrow\b", text)), start)

    def running_line(self, hook: str, line: int | None) -> int | None:
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


_ENGINE_FAILURES: list[tuple[Callable[[str | None, str], bool], Callable[..., HookError]]] = [
    (lambda tripped, first: tripped == "interrupt",
     lambda self, hook, line, text, first: HookTimeoutError("was interrupted (the turn was stopped)",
                                                           hook=hook, line=line, stack=text)),
    (lambda tripped, first: tripped == "time",
     lambda self, hook, line, text, first: HookTimeoutError(
         f"ran longer than its {self.limits.time_limit} s time limit (an endless loop?)", hook=hook, line=line,
         stack=text)),
    (lambda tripped, first: tripped == "wall",
     lambda self, hook, line, text, first: HookTimeoutError(
         f"ran longer than its {self.limits.wall_limit} s wall-clock limit", hook=hook, line=line, stack=text)),
    (lambda tripped, first: "out of memory" in first,
     lambda self, hook, line, text, first: self.out_of_memory(hook, line, stack=text)),
    (lambda tripped, first: "stack" in first.lower(),
     lambda self, hook, line, text, first: self.stack_overflow(hook, line, stack=text)),
]
"""(matches(tripped, first line of the engine's message), build(...)) — the first row that matches wins."""

_THROWN_ERRORS: list[tuple[Callable[[str], bool], Callable[..., HookError]]] = [
    (lambda message: "Maximum call stack size exceeded" in message,
     lambda self, hook, line, stack, name: self.stack_overflow(hook, line, name=name, stack=stack)),
    (lambda message: "out of memory" in message,
     lambda self, hook, line, stack, name: self.out_of_memory(hook, line, name=name, stack=stack)),
]
"""Errors a hook "threw" that are really the engine's limits (QuickJS raises them as catchable errors)."""


def internal(name: str | None, detail: str, line: int | None = None) -> HookError:
    """A failure of ours (the bridge or its process), not the hook's."""
    return HookError(f"internal error in the JavaScript bridge (ours, not the hook's): {detail}; the engine "
                     "was restarted", hook=name, line=line, code=INTERNAL)


def load_error(text: str, tripped: dict | None, phase: str, internal: bool = False) -> HookLoadError:
    """What the worker reported while loading the source (``phase``: prelude, source or discover)."""
    first = text.split("\n", 1)[0]
    if internal:
        return HookLoadError(f"internal error in the JavaScript bridge while loading ({phase}): {first}", code=INTERNAL)
    kind = (tripped or {}).get("kind")
    if kind == "internal":
        return HookLoadError(f"internal error in the JavaScript bridge while loading: {tripped.get('message')}",
                             code=INTERNAL)
    if phase in ("prelude", "discover") and kind is None:
        return HookLoadError(f"the {phase} failed: {first}")
    line = user_line(text)
    if kind == "cap":
        return HookLoadError(f"the top-level code {tripped['message']}", line=line, code="HOOK_MEMORY")
    if kind == "wall" and tripped.get("message"):
        return HookLoadError(f"the top-level code ran past the wall-clock limit: {tripped['message']}", line=line,
                             code="HOOK_TIMEOUT")
    if kind is not None:
        return HookLoadError("the top-level code ran past the time limit", line=line, code="HOOK_TIMEOUT")
    return HookLoadError(f"could not load the source: {first}", line=line)


def callee(source: str, stack: str) -> str | None:
    """What a call that is "not a function" called (``ctx.Sendd``): QuickJS names no callee, but its first
    user frame's line and column point at it, so it is read back from the hook's source (:func:`member_at`)."""
    position = user_position(stack)
    return member_at(source, *position) if position and position[1] else None


def user_line(stack: str) -> int | None:
    """The line of the first stack frame that is not ours (``__agentctx_*``)."""
    position = user_position(stack)
    return position[0] if position else None


def user_position(stack: str) -> tuple[int, int] | None:
    """(line, column) of the first stack frame that is not ours; column 0 when the frame has none."""
    for text in stack.split("\n"):
        match = _FRAME.match(text)
        if match and not (match.group(1) or "").startswith("__agentctx"):
            return int(match.group(2)), int(match.group(3) or 0)
    return None


def member_at(source: str, line: int, column: int) -> str | None:
    """What a call at ``line``:``column`` of ``source`` called (``ctx.Sendd``), or None.

    QuickJS puts a failed call's position on the called member (``ctx.|Sendd(``), at the callee, or just
    inside its parentheses, so the callee is the last ``name.name(`` on the line starting at or before the
    column. A chain continued from the line above (``ctx\n  .Sendd(``) takes that line's end with it."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    found = [match for match in _CALLEE.finditer(text) if match.start() < max(column, 1)]
    if not found:
        return None
    match = found[-1]
    called = re.sub(r"\s+", "", match.group())
    before = text[:match.start()].rstrip()
    if before.endswith(".") and not before[:-1].strip() and line > 1:  # ".Sendd(" starts this line
        above = _CHAIN_END.search(lines[line - 2])
        if above:
            called = re.sub(r"\s+", "", above.group()) + "." + called
    return called


def line_in(source: str, function_text: str) -> int | None:
    """The line of ``source`` a function's text starts on (None when it is not there verbatim)."""
    at = source.find(function_text)
    return source.count("\n", 0, at) + 1 if at >= 0 else None


__all__ = ["INTERNAL", "Diagnosis", "internal", "load_error", "member_at", "user_line"]
