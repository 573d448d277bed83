"""The hook lifecycle: hooks in Python or JavaScript, run turn by turn against a Context and a model.

See DESIGN.md "The hook lifecycle" and docs/internals.md "agentctx_widgets.hooks / .models".
"""

from .base import HOOK_NAMES, Hooks
from .hook_context import HookContext
from .errors import (
    HookError,
    HookLoadError,
    HookMemoryError,
    HookReturnError,
    HookStackOverflowError,
    HookThrewError,
    HookTimeoutError,
    TurnError,
    error_dict,
)
from .js_hooks import JsHooks, hooks_from_js
from .python_hooks import PythonHooks, hooks_from_python
from .runner import TurnResult, TurnView, run_seed_turn, run_seed_turn_async
from .usage_log import context_usage, reset_session_usage, session_usage

__all__ = [
    "HOOK_NAMES",
    "HookContext",
    "HookError",
    "HookLoadError",
    "HookMemoryError",
    "HookReturnError",
    "HookStackOverflowError",
    "HookThrewError",
    "HookTimeoutError",
    "Hooks",
    "JsHooks",
    "PythonHooks",
    "TurnError",
    "TurnResult",
    "TurnView",
    "context_usage",
    "error_dict",
    "hooks_from_js",
    "hooks_from_python",
    "reset_session_usage",
    "run_seed_turn",
    "run_seed_turn_async",
    "session_usage",
]
