"""agentctx-widgets: build, watch and regression-test LLM agent hooks in Jupyter.

The public API is the names in ``__all__``. They load lazily (PEP 562), so ``import agentctx_widgets``
stays light and pulls in Jupyter packages only when ``ContextView`` or the magics are used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# The whole of seed 001 (the Agent.Context library), snake_case.
_CONTEXT_NAMES = (
    "Context",
    "ContentType",
    "EventType",
    "MessageType",
    "MIME_BY_EXTENSION",
    "FALLBACK_CONTEXT_WINDOWS",
    "TOKENS_PER_WORD",
    "assembly_callbacks",
    "create_assembler",
    "normalize_callbacks",
    "binary_content",
    "content_indexer",
    "text_content",
    "callback_name",
    "dispatch",
    "is_response_event",
    "validate_response_event",
    "fallback_context_window",
    "append_message",
    "assistant_message",
    "error_text",
    "file_message",
    "has_content",
    "has_error",
    "is_record",
    "rebuild_message",
    "system_message",
    "user_message",
    "is_message",
    "validate_message",
    "parse_context",
    "is_context",
    "validate_context",
    "detect_mime",
    "mimetype_of",
    "estimate_tokens",
    "estimate_context_tokens",
    "usage_add",
    "usage_details",
    "estimate_usage",
    "finalize_usage",
    "usage_headers",
    "usage_normalize",
    "word_count",
)

# name -> submodule that owns it
_EXPORTS: dict[str, str] = {name: "context" for name in _CONTEXT_NAMES}
_EXPORTS.update(
    {
        "Output": "output",
        "OutputMessageError": "output",
        "DeltaError": "output",
        "StandardAdapter": "output",
        "CuiAdapter": "output",
        "run_turn": "hooks",
        "run_turn_async": "hooks",
        "TurnResult": "hooks",
        "HookContext": "hooks",
        "HookError": "hooks",
        "hooks_from_js": "hooks",
        "hooks_from_python": "hooks",
        "Model": "models",
        "ScriptedModel": "models",
        "ContextView": "widget",
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
