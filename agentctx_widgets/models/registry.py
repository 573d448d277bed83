"""``provider:model`` specs (``openai:gpt-4.1-mini``, ``anthropic:claude-sonnet-4-5``) → model objects.

One table, read by the magics' ``--model`` and by :func:`model_from_spec`. For a local
OpenAI-compatible server, ``openai:NAME`` with ``OPENAI_BASE_URL`` set (Ollama, vLLM, llama.cpp).
"""

from __future__ import annotations

import importlib
from typing import Any

PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("openai_chat", "OpenAIChatModel", "OpenAI Chat Completions, or any compatible server (OPENAI_BASE_URL)"),
    "openai-responses": ("openai_responses", "OpenAIResponsesModel", "the OpenAI Responses API"),
    "anthropic": ("anthropic", "AnthropicModel", "Anthropic Messages"),
}
"""Provider prefix → (module under agentctx_widgets.models, class, what it talks to)."""


def is_model_spec(text: Any) -> bool:
    """Does ``text`` look like ``provider:model`` with a known provider?"""
    return isinstance(text, str) and text.split(":", 1)[0] in PROVIDERS and ":" in text


def model_from_spec(spec: str, **kwargs: Any) -> Any:
    """The model a ``provider:model`` spec names; ``kwargs`` go to its constructor."""
    provider, _, model = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if provider not in PROVIDERS or not model.strip():
        known = ", ".join(f"{name}:MODEL ({what})" for name, (_, _, what) in PROVIDERS.items())
        raise ValueError(f"model spec {spec!r}: expected provider:model, one of {known}")
    module, cls, _ = PROVIDERS[provider]
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)(model.strip(), **kwargs)
