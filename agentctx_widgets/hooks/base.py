"""What the runner needs from a set of hooks, whatever language they are written in."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .hook_context import HookContext

HOOK_NAMES = ("Create", "Before", "After", "Done", "Error")


@runtime_checkable
class Hooks(Protocol):
    """A set of lifecycle hooks.

    ``names`` lists the hooks present. ``call`` runs one (the runner awaits it) and returns its
    result as plain JSON data (a dict, or ``None`` for "nothing"), or raises a ``HookError``.
    ``console`` collects captured console lines (``{"level", "hook", "text"}``) since the last
    ``take_console()``.
    """

    names: frozenset[str]

    async def call(self, name: str, ctx: HookContext, *args: Any) -> dict | None: ...

    def take_console(self) -> list[dict]: ...
