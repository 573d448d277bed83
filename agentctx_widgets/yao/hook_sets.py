"""The hook script a Yao request runs: a loaded script (``yao/typescript.py``'s ``TypeScriptHooks``)
or Python ``Create`` / ``Next`` functions, called as Yao calls the script's functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from ..hooks.caller import call_user_code


@runtime_checkable
class YaoHooks(Protocol):
    """A hook script: ``names`` holds the hooks it defines; ``call`` runs one and returns its value
    as plain JSON data (``None`` for null/undefined) or raises (the same shape as ``hooks.base.Hooks``)."""

    names: frozenset[str]

    async def call(self, name: str, ctx: Any, *args: Any) -> Any: ...


class PythonYaoHooks:
    """``Create`` / ``Next`` (lowercase accepted) as Python callables, sync or async; each is called
    as Yao calls the script's function: ``Create(ctx, messages, options)``, ``Next(ctx, payload, options)``."""

    def __init__(self, functions: dict[str, Callable]) -> None:
        self.functions: dict[str, Callable] = {}
        for key, function in functions.items():
            name = {"create": "Create", "next": "Next"}.get(key, key)
            if name not in ("Create", "Next"):
                raise ValueError(f"hooks: {key!r} is not a Yao hook; the hooks are Create and Next")
            if not callable(function):
                raise TypeError(f"hooks[{key!r}]: expected a function, got {type(function).__name__}")
            self.functions[name] = function
        self.names = frozenset(self.functions)

    async def call(self, name: str, ctx: Any, *args: Any) -> Any:
        return await call_user_code(self.functions[name], ctx, *args)


def as_yao_hooks(hooks: Any) -> YaoHooks | None:
    """A hook set from ``hooks``: ``None``, a :class:`YaoHooks`, or a dict / object / module of functions."""
    if hooks is None or isinstance(hooks, YaoHooks):
        return hooks
    if isinstance(hooks, dict):
        return PythonYaoHooks(hooks)
    found = {name: getattr(hooks, name) for name in ("Create", "Next", "create", "next")
             if callable(getattr(hooks, name, None))}
    if not found:
        raise TypeError(f"hooks: {type(hooks).__name__} has no Create or Next function")
    return PythonYaoHooks({key: fn for key, fn in found.items() if key[0].isupper() or key.title() not in found})


def hooks_for(assistant: Any, hooks_of: Callable[[Any], Any] | None = None) -> YaoHooks | None:
    """An assistant's hook script: ``hooks_of(assistant)`` when given, else ``assistant.hooks``."""
    if hooks_of is not None and callable(hooks_of):
        return as_yao_hooks(hooks_of(assistant))
    return as_yao_hooks(getattr(assistant, "hooks", None))
