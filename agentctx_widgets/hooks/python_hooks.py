"""Hooks written in Python: plain functions (sync or async) found on a module, dict or object."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from .base import HOOK_NAMES
from .caller import call_user_code
from .hook_context import HookContext
from .errors import HookError, HookLoadError, HookThrewError
from .returns import check_result


class PythonHooks:
    """Python hook functions. ``Create(ctx, messages)`` etc. receive a :class:`HookContext`,
    messages and responses as plain dicts, and return a dict or nothing (``async def`` works too)."""

    def __init__(self, functions: dict[str, Callable]) -> None:
        self.functions = dict(functions)
        self.names = frozenset(self.functions)

    async def call(self, name: str, ctx: HookContext, *args: Any) -> dict | None:
        function = self.functions[name]
        try:
            result = await call_user_code(function, ctx, *args)  # on the calling thread: Ctrl-C reaches it
        except HookError:
            raise
        except Exception as error:  # noqa: BLE001 - every hook failure goes to the Error hook
            raise _threw(name, function, error) from error
        return check_result(name, result, line=_line_of(function))

    def take_console(self) -> list[dict]:
        return []


def hooks_from_python(obj: Any = None, **functions: Callable) -> PythonHooks:
    """Collect ``Create / Before / After / Done / Error`` (lowercase accepted) from a module, a
    dict, an object with such methods, or keyword arguments: ``hooks_from_python(create=f)``."""
    found: dict[str, Callable] = {}
    sources: list[tuple[str, Any]] = []
    if obj is not None:
        if isinstance(obj, dict):
            sources.extend(obj.items())
        else:
            sources.extend((attr, getattr(obj, attr, None)) for attr in dir(obj))
    sources.extend(functions.items())
    for key, value in sources:
        name = _hook_name(key)
        if name is None or value is None:
            continue
        if not callable(value):
            raise HookLoadError(f"{key} is {type(value).__name__}, not a function", hook=name)
        if name in found and found[name] is not value:
            raise HookLoadError(f"defined twice ({name} and {name.lower()}); keep one", hook=name)
        found[name] = value
    if obj is not None and not isinstance(obj, dict) and not found and not functions:
        raise HookLoadError(f"no hooks found on {obj!r}; expected functions named {', '.join(HOOK_NAMES)}")
    return PythonHooks(found)


def _hook_name(key: Any) -> str | None:
    if not isinstance(key, str):
        return None
    for name in HOOK_NAMES:
        if key in (name, name.lower()):
            return name
    return None


def _line_of(function: Callable) -> int | None:
    code = getattr(function, "__code__", None)
    return code.co_firstlineno if code else None


def _threw(name: str, function: Callable, error: Exception) -> HookThrewError:
    """Name the line inside the hook's own file where the exception surfaced."""
    line = None
    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    code = getattr(error, "code", None)
    return HookThrewError(
        f"{type(error).__name__}: {error}",
        hook=name,
        line=line,
        name=type(error).__name__,
        code=code if isinstance(code, str) else None,
    )
