"""agentctx-widgets: build, watch and regression-test LLM agent hooks in Jupyter.

The front door is the names in ``__all__``: what a notebook user types. The rest lives in its subpackage
(``agentctx_widgets.context`` holds every name of the Agent.Context library, ``agentctx_widgets.output`` the
Output API's errors and adapters, ``agentctx_widgets.hooks`` the hook errors, ``agentctx_widgets.yao`` the
Yao assistants; ``cost`` and ``Cost`` live in ``agentctx_widgets.context.cost``). Names load lazily (PEP 562), so ``import agentctx_widgets`` stays light and pulls in Jupyter
packages only when ``ContextView`` or the magics are used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

from .context import __all__ as _CONTEXT_NAMES  # the whole of seed 001; pure Python, light to import

# The front door: what a notebook user types. name -> submodule that owns it.
_EXPORTS: dict[str, str] = {
    "Context": "context",
    "user_message": "context",
    "system_message": "context",
    "assistant_message": "context",
    "Output": "output",
    "run_turn": "turns",
    "run_turn_async": "turns",
    "TurnResult": "hooks",
    "TurnError": "hooks",
    "HookContext": "hooks",
    "HookError": "hooks",
    "hooks_from_js": "hooks",
    "hooks_from_python": "hooks",
    "Model": "models",
    "ModelError": "models",
    "ScriptedModel": "models",
    "ReplayModel": "models",
    "OpenAIChatModel": "models",
    "OpenAIResponsesModel": "models",
    "AnthropicModel": "models",
    "Tool": "models",
    "ContextView": "widget",
    "TurnDisplay": "widget",
    "TurnDocument": "widget",
    "watch": "widget.watch",
    "Watcher": "widget.watch",
    "to_html": "html",
    "show": "notebook",
    "usage": "notebook",
    "run": "notebook",
    "diff": "suite",
    "Suite": "suite",
    "cost": "context.cost",  # the function: agentctx_widgets.context.cost is its module (never exported as "cost")
    "Cost": "context.cost",
}

# Still importable from the root, not listed in ``__all__``: every seed-001 name (DESIGN.md: "every
# seed-001 function is importable too") and the names the root exported before the front door shrank
# (issue 19), so that code written against them keeps working. New code imports them from their subpackage.
_ALSO: dict[str, str] = {name: "context" for name in _CONTEXT_NAMES if name not in _EXPORTS}
_ALSO.update({name: "output" for name in ("OutputMessageError", "DeltaError", "SinkError", "DiagnosticError",
                                          "StandardAdapter", "CuiAdapter")})
_ALSO.update({name: "hooks" for name in ("HookLoadError", "HookThrewError", "HookTimeoutError", "HookMemoryError",
                                         "HookStackOverflowError", "HookReturnError")})

__all__ = [*_EXPORTS, "load_ipython_extension", "__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name) or _ALSO.get(name)
    if module is None:
        raise AttributeError(f"module 'agentctx_widgets' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentctx_widgets``: register the ``%agentctx`` magics."""
    from .magics import load_ipython_extension as _load

    _load(ipython)
