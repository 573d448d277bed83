"""Yao assistants as they are today (YaoApp/yao 5a3f9a6a, its CUI client 66cb383f), run on the kit's
hooks and models (issue #13).

``load_assistant(path)`` reads an assistant directory; ``run_turn(ctx, text, assistant=...)`` (or
``run_assistant``) runs one request in Yao's order — ``Create``, the model, tools, ``Next`` — with the
script's TypeScript transpiled inside the hook engine; ``YaoOutput`` is the current output API and
``YaoServices`` the ``ctx`` members (memory, trace, llm, agent, mcp, search, workspace).
"""

from .api_generation import detect_api
from .assistant import Assistant, load_assistant
from .assistant_files import AssistantLoadError
from .binding import YaoHookContext, current_context, hook_context_for, script_api
from .cui_state import CuiState
from .memory import MemoryStore
from .output import YaoCallError, YaoOutput
from .registries import Mcp, Search
from .runner import YaoTurnResult, run_assistant, run_assistant_async
from .service_calls import call_service, mounted
from .services import YaoServices
from .typescript import ProcessError, TypeScriptHooks, TypeScriptLoadError, load_ts_module_set
from .values import NotAvailableHere, YaoServiceError
from .view_bridge import SeedViewBridge
from .workspace import Workspace
from .writers import CuiWriter, OpenAIWriter, writer_for

__all__ = [
    "Assistant", "AssistantLoadError", "CuiState", "CuiWriter", "Mcp", "MemoryStore", "NotAvailableHere",
    "OpenAIWriter", "ProcessError", "Search", "SeedViewBridge", "TypeScriptHooks", "TypeScriptLoadError",
    "Workspace", "YaoCallError", "YaoHookContext", "YaoOutput", "YaoServiceError", "YaoServices", "YaoTurnResult",
    "call_service", "current_context", "detect_api", "hook_context_for", "load_assistant", "load_ts_module_set",
    "mounted", "run_assistant", "run_assistant_async", "script_api", "writer_for",
]
