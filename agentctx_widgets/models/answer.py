"""What a server said about its own answer: which model ran, and whether the reply was cut off.

Local servers accept any model name and run what they loaded (llama-server, llama-cpp-python with one
model), so a typo goes unnoticed unless someone reads the ``model`` field the server answered with. And a
reply cut at the token limit reads as complete unless its stop reason is looked at. The connector puts
the answered model on the ``done`` event (``responseModel``, when it is not the one asked for), and a
model call's record says ``truncated: True`` when the stop reason says the limit cut it (:func:`call_facts`).
"""

from __future__ import annotations

import re
from typing import Any

TRUNCATING_STOPS = frozenset({"length", "max_tokens", "max_output_tokens", "model_context_window_exceeded"})
"""Stop reasons that mean "cut at a limit": Chat Completions ``finish_reason: "length"``, Anthropic
``stop_reason: "max_tokens"`` / ``"model_context_window_exceeded"``, Responses
``incomplete_details.reason: "max_output_tokens"``."""

_SNAPSHOT = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|:latest)$")
"""What a provider appends to an alias for the snapshot it ran (``gpt-4.1-mini-2025-04-14``,
``claude-sonnet-4-5-20250929``, ``gpt-4-0613``, Ollama's ``llama3.2:latest``)."""


def call_facts(done: dict) -> dict:
    """What a model call's record (``result.calls[i]``) keeps of its ``done`` event: ``stopReason``,
    ``truncated: True`` when a token limit cut the reply, ``responseModel`` when another model answered,
    ``serverTimings`` when the server timed its own work (llama-server: prompt and predicted tokens, ms,
    tokens per second), ``recordedPrices`` when a replayed call carries the prices it was recorded with
    (``ReplayModel``; ``context.cost.cost_of_calls`` prices the call at them)."""
    facts = {key: done[key] for key in ("stopReason", "responseModel", "serverTimings") if done.get(key)}
    if isinstance(done.get("recordedPrices"), dict):
        facts["recordedPrices"] = done["recordedPrices"]
    if is_truncated(done.get("stopReason")):
        facts["truncated"] = True
    return facts


def is_truncated(stop_reason: Any) -> bool:
    """Did the reply stop because a token limit cut it?"""
    return isinstance(stop_reason, str) and stop_reason in TRUNCATING_STOPS


def same_model(requested: str, answered: str) -> bool:
    """Is ``answered`` the model asked for, or a dated snapshot of it (case and ``:latest`` aside)?"""
    asked, said = requested.strip().lower(), answered.strip().lower()
    if said == asked or _SNAPSHOT.sub("", said) == _SNAPSHOT.sub("", asked):
        return True
    return said.startswith(asked) and _SNAPSHOT.fullmatch(said[len(asked):]) is not None


def answered_model(chunk: dict) -> str | None:
    """The ``model`` a stream chunk says answered: a Chat chunk's ``model``, Anthropic's
    ``message_start.message.model``, a Responses event's ``response.model``."""
    for holder in (chunk, chunk.get("message"), chunk.get("response")):
        if isinstance(holder, dict) and isinstance(holder.get("model"), str) and holder["model"].strip():
            return holder["model"]
    return None
