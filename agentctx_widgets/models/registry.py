"""``provider:model`` specs (``openai:gpt-4.1-mini``, ``anthropic:claude-sonnet-4-5``) → model objects.

One table (``connector.PROVIDERS``), read by the magics' ``--model`` and by :func:`model_from_spec`.
For a local OpenAI-compatible server, ``openai:NAME`` with ``OPENAI_BASE_URL`` set (Ollama, vLLM,
llama.cpp). The connector modules are imported here, plainly: importing them loads no SDK.
"""

from __future__ import annotations

from typing import Any

from .anthropic import AnthropicModel
from .connector import PROVIDERS
from .openai_chat import OpenAIChatModel
from .openai_responses import OpenAIResponsesModel

_CLASSES = {cls.__name__: cls for cls in (AnthropicModel, OpenAIChatModel, OpenAIResponsesModel)}


def is_model_spec(text: Any) -> bool:
    """Does ``text`` look like ``provider:model`` with a known provider?"""
    return isinstance(text, str) and text.split(":", 1)[0] in PROVIDERS and ":" in text


def model_from_spec(spec: str, **kwargs: Any) -> Any:
    """The model a ``provider:model`` spec names; ``kwargs`` go to its constructor."""
    provider, _, model = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if provider not in PROVIDERS or not model.strip():
        known = ", ".join(f"{name}:MODEL ({what})" for name, (_, _, what) in PROVIDERS.items())
        raise ValueError(f"model spec {spec!r}: expected provider:model, one of {known}")
    return _CLASSES[PROVIDERS[provider][1]](model.strip(), **kwargs)
