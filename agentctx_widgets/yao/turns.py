"""One turn with a Yao assistant, as the front door runs it: ``run_turn(ctx, text, assistant=...)``.

Why a module of its own: the pieces (``load_assistant``, the TypeScript hooks, ``run_assistant``) know
nothing of each other or of the view; this joins them — a path loads the assistant, its script is
loaded once and again only when a file under ``src/`` changed (edit a hook, run the cell again), and a
``ContextView`` receives what the client would, message by message.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from .assistant import Assistant, load_assistant
from .runner import YaoTurnResult, run_assistant, run_assistant_async
from .typescript import load_ts_module_set
from .view_bridge import SeedViewBridge

__all__ = ["as_assistant", "run_with_assistant", "run_with_assistant_async", "script_hooks"]

_lock = threading.Lock()
_loaded: dict[tuple, Any] = {}
"""(script folder, entry, process names) → (files' stamp, hook set): a script is loaded once per edit."""


def as_assistant(assistant: Any, **load_options: Any) -> Assistant:
    """A loaded assistant, or the one at a path (``load_assistant``)."""
    if isinstance(assistant, (str, os.PathLike)):
        return load_assistant(assistant, **load_options)
    if not isinstance(getattr(assistant, "id", None), str):
        raise TypeError(f"assistant: expected a loaded assistant or its directory, got {type(assistant).__name__}")
    return assistant


def _stamp(folder: Path) -> tuple:
    return tuple(sorted((str(path.relative_to(folder)), path.stat().st_mtime_ns, path.stat().st_size)
                        for path in folder.rglob("*") if path.is_file()))


def script_hooks(assistant: Any) -> Any:
    """The assistant's hook script (``src/index.ts`` or ``.js``) as a hook set, None without one.

    Loaded again when a file under its folder changed since the last load (the old worker is closed).
    """
    script = getattr(assistant, "script", None)
    if script is None:
        return None
    folder = Path(script).parent
    processes = dict(getattr(assistant, "processes", None) or {})
    key = (str(folder.resolve()), Path(script).name, tuple(sorted(processes)))
    stamp = _stamp(folder)
    with _lock:
        cached = _loaded.get(key)
        if cached is not None and cached[0] == stamp and cached[2] == [id(fn) for fn in processes.values()]:
            return cached[1]
        hooks = load_ts_module_set(folder, Path(script).name, processes=processes)
        if cached is not None:
            close = getattr(cached[1], "close", None)
            if callable(close):
                close()
        _loaded[key] = (stamp, hooks, [id(fn) for fn in processes.values()])
        return hooks


class _ViewSink:
    """What the client receives, one message at a time, into a ContextView as the CUI client shows it
    (``SeedViewBridge``: message ids kept, lifecycle events on ``.events``)."""

    def __init__(self, view: Any) -> None:
        self.bridge = SeedViewBridge(view)

    def send(self, message: dict) -> None:
        self.bridge.write([message])


class _TraceToView:
    """``ctx.trace`` in the view: one ``event`` output message per trace node (``trace:<id>``), its label
    and status kept current as Yao's trace updates arrive (not part of the chat stream, as in Yao)."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self.nodes: dict[str, dict[str, str]] = {}

    def __call__(self, update: dict) -> None:
        data = update.get("data") if isinstance(update.get("data"), dict) else {}
        records = data.get("nodes") or ([data["node"]] if isinstance(data.get("node"), dict) else [])
        for record in records:
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                self.nodes[record["id"]] = {"label": str(record.get("label") or record["id"]),
                                            "status": str(record.get("status") or "")}
        node_id = update.get("node_id")
        if isinstance(node_id, str) and node_id in self.nodes and isinstance(data.get("status"), str):
            self.nodes[node_id]["status"] = data["status"]
        if update.get("type") in ("node_complete", "node_failed") and node_id in self.nodes:
            self.nodes[node_id]["status"] = "completed" if update["type"] == "node_complete" else "failed"
        touched = [record["id"] for record in records if isinstance(record, dict) and record.get("id") in self.nodes]
        for key in dict.fromkeys([*touched, *([node_id] if node_id in self.nodes else [])]):
            node = self.nodes[key]
            self.view.write([{"id": f"trace:{key}", "type": "event", "props": {
                "event": "trace", "name": node["label"], "message": f"{node['label']} · {node['status']}".rstrip(" ·"),
                "node_id": key, "status": node["status"]}}])


def _prepared(assistant: Any, view: Any, options: dict[str, Any]) -> Assistant:
    loaded = as_assistant(assistant)
    if view is not None and options.get("output") is None:
        options["output"] = _ViewSink(view)
    if view is not None and options.get("trace_listener") is None:
        options["trace_listener"] = _TraceToView(view)
    options.setdefault("hooks_of", script_hooks)
    for name in [name for name, value in options.items() if value is None and name in _NONE_IS_DEFAULT]:
        del options[name]
    return loaded


_NONE_IS_DEFAULT = frozenset({"hooks", "tools", "max_tool_rounds", "options", "connectors", "model"})


def _settled(view: Any, result: YaoTurnResult) -> YaoTurnResult:
    """The request's cost in the view's header (a request's calls are counted once it ends), then settled."""
    show = getattr(view, "set_turn_cost", None)
    if callable(show) and result.calls:
        show(result.cost, turn=result)
    settle = getattr(view, "settle", None)
    if callable(settle):
        settle()
    return result


def run_with_assistant(context: Any, user_input: Any, *, assistant: Any, view: Any = None,
                       **options: Any) -> YaoTurnResult:
    """``run_assistant`` for a loaded assistant or its directory, its script loaded (and reloaded after
    an edit) here, streaming into ``view`` when one is given."""
    loaded = _prepared(assistant, view, options)
    return _settled(view, run_assistant(context, user_input, assistant=loaded, **options))


async def run_with_assistant_async(context: Any, user_input: Any, *, assistant: Any, view: Any = None,
                                   **options: Any) -> YaoTurnResult:
    """:func:`run_with_assistant`, awaited."""
    loaded = _prepared(assistant, view, options)
    return _settled(view, await run_assistant_async(context, user_input, assistant=loaded, **options))
