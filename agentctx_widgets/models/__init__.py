"""Model connectors: anything with ``stream(messages, *, options=None)`` yielding normalised events.

The SDK connectors import their SDK only when used (``pip install "agentctx-widgets[openai]"`` /
``[anthropic]``), so this package stays importable without either.
"""

from .anthropic import AnthropicModel, build_anthropic_request
from .errors import CODES
from .mcp import McpError, McpServer
from .openai_chat import OpenAIChatModel, build_chat_request
from .openai_responses import OpenAIResponsesModel, build_responses_request
from .protocol import Model, ModelError
from .registry import PROVIDERS, model_from_spec
from .replay import ReplayModel
from .scripted import ScriptedModel, ScriptedStream
from .tools import Tool

__all__ = [
    "AnthropicModel",
    "CODES",
    "McpError",
    "McpServer",
    "Model",
    "ModelError",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "PROVIDERS",
    "ReplayModel",
    "ScriptedModel",
    "ScriptedStream",
    "Tool",
    "build_anthropic_request",
    "build_chat_request",
    "build_responses_request",
    "model_from_spec",
]
