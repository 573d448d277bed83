"""agentctx-widgets: build, watch and regression-test LLM agent hooks in Jupyter.

The public API is the names in ``__all__``. They load lazily (PEP 562), so ``import agentctx_widgets``
stays light and pulls in Jupyter packages only when ``ContextView`` or the magics are used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

from .context import __all__ as _CONTEXT_NAMES  # the whole of seed 001; pure Python, light to import

# name -> submodule that owns it
_EXPORTS: dict[str, str] = {name: "context" for name in _CONTEXT_NAMES}
_EXPORTS.update(
    {
        "Output": "output",
        "OutputMessageError": "output",
        "DeltaError": "output",
        "SinkError": "output",
        "DiagnosticError": "output",
        "StandardAdapter": "output",
        "CuiAdapter": "output",
        "run_turn": "turns",
        "run_turn_async": "turns",
        "TurnResult": "hooks",
        "TurnError": "hooks",
        "HookContext": "hooks",
        "HookError": "hooks",
        "HookLoadError": "hooks",
        "HookThrewError": "hooks",
        "HookTimeoutError": "hooks",
        "HookMemoryError": "hooks",
        "HookStackOverflowError": "hooks",
        "HookReturnError": "hooks",
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
    }
)

__all__ = [*_EXPORTS, "load_ipython_extension", "__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
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
