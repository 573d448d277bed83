"""Per-server request profiles for OpenAI-compatible servers, chosen by name: ``compat="ollama"``.

The request :func:`~agentctx_widgets.models.openai_chat.build_chat_request` makes is one every server of
docs/servers.md accepts (an assistant tool-call message's ``content`` is ``""``, one ``tool`` message
per result, ``stream_options.include_usage``). A profile changes the body only where a server's source
shows it reads the request differently from the OpenAI reference, so the same options mean the same
thing everywhere:

- ``max_completion_tokens``: Ollama's and llama-cpp-python's request types have only ``max_tokens``
  and drop the newer name without a word (ollama openai/openai.go ``ChatCompletionRequest``,
  llama-cpp-python llama_cpp/server/types.py ``CreateChatCompletionRequest``): the limit would be
  ignored. Their profiles send it as ``max_tokens``.
- ``parallel_tool_calls``: llama-server reads it with a default of ``false`` (tools/server
  ``oaicompat_chat_params_parse``: ``json_value(body, "parallel_tool_calls", false)``) where the OpenAI
  reference defaults to ``true``, so a model asked for two calls makes one per round. Its profile
  sends ``true`` when tools are offered and the caller did not say.

Every other server (vLLM, LM Studio, LiteLLM proxy, OpenAI) needs no profile: ``compat=None``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .convert import RequestError


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    adjust: Callable[[dict], dict]


def _max_tokens(body: dict) -> dict:
    if "max_completion_tokens" in body and "max_tokens" not in body:
        body = dict(body)
        body["max_tokens"] = body.pop("max_completion_tokens")
    return body


def _parallel_tool_calls(body: dict) -> dict:
    if body.get("tools") and "parallel_tool_calls" not in body:
        body = {**body, "parallel_tool_calls": True}
    return body


PROFILES: dict[str, Profile] = {
    "ollama": Profile("ollama", "max_completion_tokens is sent as max_tokens (the only name Ollama reads)",
                      _max_tokens),
    "llama-cpp-python": Profile("llama-cpp-python", "max_completion_tokens is sent as max_tokens (the only "
                                "name its server reads)", _max_tokens),
    "llama-server": Profile("llama-server", "parallel_tool_calls: true when tools are offered (llama-server "
                            "defaults to false)", _parallel_tool_calls),
}
"""Every ``compat=`` name, with what it changes."""


def apply_profile(name: Any, body: dict) -> dict:
    """``body`` as the server called ``name`` reads it (``None``: unchanged). An unknown name is refused,
    naming the known ones."""
    if name is None:
        return body
    profile = PROFILES.get(name) if isinstance(name, str) else None
    if profile is None:
        known = ", ".join(repr(key) for key in PROFILES)
        raise RequestError(f"compat={name!r}: expected one of {known} or None (servers that need no profile)")
    return profile.adjust(body)
