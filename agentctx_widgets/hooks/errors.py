"""Errors a hook can cause, each naming the hook and (for JavaScript) the source line."""

from __future__ import annotations

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
    ) -> None:
        self.detail = message
        self.hook = hook
        self.line = line
        self.code = code or self.default_code
        self.name = name or type(self).__name__
        self.stack = stack
        self.value = value  # what a JavaScript hook threw, as JSON data, when it was not an Error
        where = hook or "hook"
        if line is not None:
            where += f" (line {line})"
        super().__init__(f"{where}: {message}")

    def to_dict(self) -> dict:
        """The ``error`` argument the ``Error`` hook receives."""
        return {"message": str(self), "code": self.code, "name": self.name, "hook": self.hook, "line": self.line}


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


def error_dict(failure: BaseException) -> dict:
    """The ``error`` argument of the Error hook (and ``TurnResult.error``) for any exception.

    ``{message, code, name, hook, line?}``; a :class:`~agentctx_widgets.models.ModelError` adds its
    ``status``, ``retry`` (seconds) and ``provider`` when it has them.
    """
    from ..models import ModelError

    if isinstance(failure, HookError):
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
