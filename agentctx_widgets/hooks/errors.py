"""Errors a hook can cause, each naming the hook and (for JavaScript) the source line."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any


class HookError(Exception):
    """A hook failed. ``hook`` is its name (``"Create"``), ``line`` the JavaScript (or Python)
    source line when known, ``code`` a short reason the ``Error`` hook can branch on."""

    default_code = "HOOK_ERROR"

    def __init__(
        self,
        message: str,
        *,
        hook: str | None = None,
        line: int | None = None,
        code: str | None = None,
        name: str | None = None,
        stack: str | None = None,
        value: Any = None,
        member: str | None = None,
        origin: str | None = None,
    ) -> None:
        self.detail = message
        self.hook = hook
        self.line = line
        self.code = code or self.default_code
        self.name = name or type(self).__name__
        self.stack = stack
        self.value = value  # what a JavaScript hook threw, as JSON data, when it was not an Error
        self.member = member  # for "not a function": what was called (``ctx.Sendd``), read from the source
        self.origin = origin  # where the source is, as its author knows it (``%%agentctx hooks greet``)
        super().__init__(self._text())

    def _text(self) -> str:
        where = self.hook or "hook"
        if self.origin and self.line is not None:
            where += f" ({self.origin}, line {self.line})"
        elif self.line is not None:
            where += f" (line {self.line})"
        elif self.origin:
            where += f" ({self.origin})"
        return f"{where}: {self.detail}"

    def relocate(self, *, first_line: int = 1, origin: str | None = None) -> HookError:
        """Count ``line`` from ``first_line`` (the source's first line is that line of its cell or file)
        and name the ``origin``; returns this error. Called once, by the hook set that raised it."""
        if self.line is not None and first_line != 1:
            self.line += first_line - 1
        if origin and not self.origin:
            self.origin = origin
        self.args = (self._text(),)
        return self

    def to_dict(self) -> dict:
        """The ``error`` argument the ``Error`` hook receives."""
        error = {"message": str(self), "code": self.code, "name": self.name, "hook": self.hook, "line": self.line}
        if self.member is not None:
            error["member"] = self.member
        if self.origin is not None:
            error["origin"] = self.origin
        return error


class HookLoadError(HookError):
    """The hook source could not be loaded (a JavaScript syntax error, a bad hooks object)."""

    default_code = "HOOK_LOAD"


class HookThrewError(HookError):
    """The hook raised (Python) or threw (JavaScript, any value, Error or not)."""

    default_code = "HOOK_THREW"


class HookTimeoutError(HookError):
    """A JavaScript hook ran past its time limit (an endless loop, say)."""

    default_code = "HOOK_TIMEOUT"


class HookMemoryError(HookError):
    """A JavaScript hook ran out of its memory limit."""

    default_code = "HOOK_MEMORY"


class HookStackOverflowError(HookError):
    """A JavaScript hook recursed past the stack limit."""

    default_code = "HOOK_STACK_OVERFLOW"


class HookReturnError(HookError):
    """A hook returned something other than nothing or the documented object for its name."""

    default_code = "HOOK_RETURN"


class BudgetError(Exception):
    """A turn stopped by its budget (``run_turn(budget=...)``): ``code`` is ``BUDGET_EXCEEDED`` (its
    running cost would pass the budget) or ``BUDGET_UNPRICED`` (a model call the price table cannot
    price, so the budget cannot be kept). ``spent`` is what the turn's calls cost (Decimal USD; the call
    that was stopped estimated), ``budget`` the limit, ``estimated`` whether any of it was an estimate,
    ``call`` the stopped call as ``TurnResult.calls`` keeps one (its usage estimated or reported), or
    ``None`` when the call was not made. Never given to the ``Error`` hook: a retry would pass it again."""

    def __init__(self, message: str, *, code: str = "BUDGET_EXCEEDED", spent: Decimal | None = None,
                 budget: Decimal | None = None, estimated: bool = False, call: dict | None = None) -> None:
        super().__init__(message)
        self.message, self.code, self.spent, self.budget = message, code, spent, budget
        self.estimated, self.call = estimated, call

    def to_dict(self) -> dict:
        """The turn's ``result.error``: ``{message, code, name, hook, spent?, budget, estimated}`` (USD numbers)."""
        error: dict[str, Any] = {"message": self.message, "code": self.code, "name": "BudgetError", "hook": None}
        if self.spent is not None:
            error["spent"] = float(self.spent)
        if self.budget is not None:
            error["budget"] = float(self.budget)
        error["estimated"] = self.estimated
        return error


def error_dict(failure: BaseException) -> dict:
    """The ``error`` argument of the Error hook (and ``TurnResult.error``) for any exception.

    ``{message, code, name, hook, line?}``; a :class:`~agentctx_widgets.models.ModelError` adds its
    ``status``, ``retry`` (seconds) and ``provider`` when it has them.
    """
    from ..models import ModelError

    if isinstance(failure, (HookError, BudgetError)):
        return failure.to_dict()
    if isinstance(failure, ModelError):
        error: dict[str, Any] = {"message": failure.message, "code": failure.code, "name": "ModelError", "hook": None}
        for key in ("status", "retry", "provider"):
            value = getattr(failure, key)
            if value is not None:
                error[key] = value
        return error
    code = getattr(failure, "code", None)
    return {"message": f"{type(failure).__name__}: {failure}", "code": code if isinstance(code, str) else "TURN_ERROR",
            "name": type(failure).__name__, "hook": None}


# -- a failed turn, raised -------------------------------------------------------------------------

HINTS: dict[str, str] = {
    "HOOK_THREW": "fix the hook at that line (its console lines are on result.console)",
    "HOOK_LOAD": "the hook source does not load: fix it at that line",
    "HOOK_TIMEOUT": "the hook ran past its time limit: look for an endless loop, or raise time_limit= when loading it",
    "HOOK_MEMORY": "the hook used more memory or output than its limits allow: look for a runaway loop",
    "HOOK_STACK_OVERFLOW": "the hook recursed too deep: look for a function that calls itself without end",
    "HOOK_RETURN": "return nothing, or the object the hook's name documents (e.g. {messages} from Create)",
    "MAX_TOOL_ROUNDS": "the model kept calling tools: raise max_tool_rounds=, or check what the tools return",
    "BUDGET_EXCEEDED": "the turn would have cost more than budget=: raise it, shorten the context or cap the reply "
                       "(max_tokens); result.cost is what it spent, the stopped call estimated",
    "BUDGET_UNPRICED": "a budget needs the model's price: give run_turn(prices={'MODEL': {'input': ..., "
                       "'output': ...}}) in USD per million tokens, or 'free' for a local model",
}
"""What to do about a failed turn, by the code of a hook or the lifecycle (a model's error says what to do
in its own message: ``models.hints``; the default: read ``result.error``)."""


def failure_report(error: Any) -> dict:
    """A failed turn's ``result.error`` (the seed's or a Yao request's) as ``{summary, what, code, hook?,
    tool?, line?, origin?, member?, message, hint}``: what failed, where, and what to do, in words.

    Shared by :class:`TurnError`'s message and the settled document of a failed turn, so both say the same.
    """
    error = dict(error) if isinstance(error, dict) else {"message": str(error)}
    cause = error.get("cause") if isinstance(error.get("cause"), dict) else {}
    code = str(error.get("code") or cause.get("code") or "TURN_ERROR")
    hook, tool = error.get("hook") or cause.get("hook"), error.get("tool")
    message = str(error.get("message") or "the turn failed")
    report: dict[str, Any] = {"code": code}
    for key in ("line", "origin", "member"):
        value = error.get(key) if error.get(key) is not None else cause.get(key)
        if value is not None:
            report[key] = value
    if hook:
        report["hook"] = str(hook)
        prefix = re.match(rf"{re.escape(str(hook))}(?: \([^)]*\))?: ", message)
        if prefix:  # the seed's HookError text starts with where it was: said once, below
            message = message[prefix.end():]
        what = f"the {hook} hook"
        if report.get("line") is not None:
            what += f" ({report['origin']}, line {report['line']})" if report.get("origin") else f" (line {report['line']})"
    elif tool:
        report["tool"] = str(tool)
        what = f"the tool {tool!r}"
    elif "ModelError" in (error.get("name"), cause.get("name")):
        what = "the model"
    else:
        what = "the turn"
    hint = HINTS.get(code)
    if hint is None and report.get("member"):
        hint = f"{report['member']} is not a function: check its spelling"
    elif hint is not None and report.get("member"):
        hint = f"{report['member']} is not a function: check its spelling; {hint}"
    report.update(what=what, message=message,
                  hint=hint or "result.error holds the details (run_turn(check=False) returns the result instead)")
    report["summary"] = f"{what} failed [{code}]: {message}"
    return report


class TurnError(Exception):
    """``run_turn`` failed: what failed (the error code), where (a hook and its line, the model, a tool)
    and a hint. ``result`` is the failed ``TurnResult`` (or ``YaoTurnResult``); ``report`` the same facts
    as data (:func:`failure_report`). ``run_turn(check=False)`` returns the result instead of raising."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.error = getattr(result, "error", None) or {}
        self.report = failure_report(self.error)
        self.code = self.report["code"]
        super().__init__(f"{self.report['summary']}\nhint: {self.report['hint']}")
