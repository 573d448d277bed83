"""Model connectors: anything with ``stream(messages, *, options=None)`` yielding normalised events.

The SDK connectors import their SDK only when used (``pip install "agentctx-widgets[openai]"`` /
``[anthropic]``), so this package stays importable without either.
"""

from .anthropic import AnthropicModel, build_anthropic_request
from .errors import CODES
from .openai_chat import OpenAIChatModel, build_chat_request
from .protocol import Model, ModelError
from .scripted import ScriptedModel, ScriptedStream

__all__ = ["AnthropicModel", "CODES", "Model", "ModelError", "OpenAIChatModel", "ScriptedModel", "ScriptedStream", "build_anthropic_request", "build_chat_request"]
