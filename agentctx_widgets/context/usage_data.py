"""Usage snapshots: provider aliases to one camelCase shape, lifetime sums, bounded extensions.

Canonical usage keys (all counts are non-negative numbers; each *includes* its cached/reasoning subset):

=================  ==================================================================================
``inputTokens``    ``inputTokens`` > ``prompt_tokens`` (OpenAI chat) > ``input_tokens`` (OpenAI
                   Responses, Anthropic) > ``promptTokenCount`` (+ ``toolUsePromptTokenCount``, Gemini).
                   Anthropic reports cache reads/writes *beside* ``input_tokens``, so when
                   ``input_tokens`` is used and ``cache_read_input_tokens`` or
                   ``cache_creation_input_tokens`` is present, they are added to it.
``outputTokens``   ``outputTokens`` > ``completion_tokens`` > ``output_tokens`` >
                   ``candidatesTokenCount`` + ``thoughtsTokenCount`` (Gemini counts thoughts apart).
``totalTokens``    always derived: ``inputTokens + outputTokens`` (absent counts as 0).
``cacheReadTokens``   ``cacheReadTokens`` > ``prompt_tokens_details.cached_tokens`` >
                   ``input_tokens_details.cached_tokens`` > ``cache_read_input_tokens`` >
                   ``cachedContentTokenCount`` > root ``cached_tokens``.
``cacheWriteTokens``  ``cacheWriteTokens`` > ``cache_creation_input_tokens``.
``reasoningTokens``   ``reasoningTokens`` > ``completion_tokens_details.reasoning_tokens`` >
                   ``output_tokens_details.reasoning_tokens`` > ``thoughtsTokenCount`` >
                   root ``reasoning_tokens`` > ``thinkingTokens``/``thinking_tokens``.
``cost``           a finite number, as reported.
``source``         ``"provider"`` or ``"estimate"`` when given.
``serviceTier``, ``inferenceGeo``   strings (``service_tier``, ``inference_geo`` aliases).
``details``        every field not consumed above (including the leftovers of ``*_details``
                   objects), passed through :func:`usage_details`.
=================  ==================================================================================

``usage_details`` limits: 256 nodes, depth 6 (containers nested at most 6 deep), 16 array entries,
1024 characters per string, keys of at most 128 characters (longer keys are dropped), 16,384
characters of text in all (keys and strings; a string is cut to what is left). Dropped: non-JSON
values, non-finite floats, integers beyond 2**53, cycles, prototype keys (``__proto__``,
``constructor``, ``prototype``) and attribution keys (see ``ATTRIBUTION_KEYS``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ATTRIBUTION_KEYS",
    "COUNTERS",
    "usage_add",
    "usage_details",
    "usage_normalize",
]

MAX_NODES = 256
MAX_DEPTH = 6
MAX_ARRAY = 16
MAX_STRING = 1024
MAX_KEY = 128
MAX_TEXT = 16 * 1024
MAX_SAFE_INT = 2**53

PROTOTYPE_KEYS = frozenset({"__proto__", "constructor", "prototype"})
ATTRIBUTION_KEYS = frozenset({
    "attribution", "user", "user_id", "userid", "email", "organization", "organization_id", "org_id",
    "project_id", "account_id", "api_key", "apikey",
})
COUNTERS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


class _Budget:
    def __init__(self) -> None:
        self.nodes = MAX_NODES
        self.text = MAX_TEXT


def _copy(value: Any, depth: int, budget: _Budget, path: set[int]) -> Any:
    """A bounded copy of ``value``, or ``_SKIP`` when it must be omitted."""
    if budget.nodes <= 0:
        return _SKIP
    if value is None or isinstance(value, bool):
        budget.nodes -= 1
        return value
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INT:
            return _SKIP
        budget.nodes -= 1
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return _SKIP
        budget.nodes -= 1
        return value
    if isinstance(value, str):
        cut = value[: min(MAX_STRING, budget.text)]
        if not cut and value:
            return _SKIP
        budget.nodes -= 1
        budget.text -= len(cut)
        return cut
    if not isinstance(value, (list, tuple, Mapping)) or depth >= MAX_DEPTH or id(value) in path:
        return _SKIP
    budget.nodes -= 1
    path.add(id(value))
    try:
        if isinstance(value, Mapping):
            result: Any = {}
            for key, item in list(value.items()):
                if budget.nodes <= 0:
                    break
                if (not isinstance(key, str) or len(key) > MAX_KEY or key in PROTOTYPE_KEYS
                        or key.lower() in ATTRIBUTION_KEYS or len(key) > budget.text):
                    continue
                budget.text -= len(key)
                copied = _copy(item, depth + 1, budget, path)
                if copied is not _SKIP:
                    result[key] = copied
        else:
            result = []
            for item in list(value)[:MAX_ARRAY]:
                if budget.nodes <= 0:
                    break
                copied = _copy(item, depth + 1, budget, path)
                if copied is not _SKIP:
                    result.append(copied)
    finally:
        path.discard(id(value))
    return result


_SKIP = object()


def usage_details(value: Any) -> Any:
    """A bounded, JSON-safe, independent copy of ``value`` (limits in the module docstring), or ``None``."""
    copied = _copy(value, 0, _Budget(), set())
    return None if copied is _SKIP else copied


_MAX_INT = 2**64 - 1  # the largest integer orjson writes as an int


def _fit(value: int | float) -> int | float:
    """A count JSON can carry: past 64-bit range an int becomes a float, as JavaScript has it."""
    return float(value) if isinstance(value, int) and not -(2**63) <= value <= _MAX_INT else value


def _count(value: Any) -> int | float | None:
    """``value`` as a non-negative finite count, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    if isinstance(value, int):
        return _fit(value)
    return int(value) if value.is_integer() and value <= _MAX_INT else value


def _pick(sources: list[tuple[Mapping, str]], consumed: dict[int, set[str]]) -> int | float | None:
    """The first valid count among ``(mapping, key)`` pairs; every key seen is marked consumed."""
    found = None
    for mapping, key in sources:
        if key in mapping:
            consumed.setdefault(id(mapping), set()).add(key)
            if found is None:
                found = _count(mapping[key])
    return found


def _sub(reported: Mapping, key: str) -> Mapping:
    value = reported.get(key)
    return value if isinstance(value, Mapping) else {}


_TOTAL_ALIASES = ("totalTokens", "total_tokens", "totalTokenCount")
_DETAIL_OBJECTS = ("prompt_tokens_details", "completion_tokens_details", "input_tokens_details", "output_tokens_details")


def usage_normalize(reported: Any) -> dict:
    """An independent canonical snapshot of one request's usage, without estimating anything."""
    if not isinstance(reported, Mapping):
        return {"totalTokens": 0}
    consumed: dict[int, set[str]] = {id(reported): set(_TOTAL_ALIASES)}
    prompt_d, completion_d = _sub(reported, "prompt_tokens_details"), _sub(reported, "completion_tokens_details")
    input_d, output_d = _sub(reported, "input_tokens_details"), _sub(reported, "output_tokens_details")
    r = reported
    result: dict = {}

    cache_read = _pick([(r, "cacheReadTokens"), (prompt_d, "cached_tokens"), (input_d, "cached_tokens"),
                        (r, "cache_read_input_tokens"), (r, "cachedContentTokenCount"), (r, "cached_tokens")], consumed)
    cache_write = _pick([(r, "cacheWriteTokens"), (r, "cache_creation_input_tokens")], consumed)
    reasoning = _pick([(r, "reasoningTokens"), (completion_d, "reasoning_tokens"), (output_d, "reasoning_tokens"),
                       (r, "thoughtsTokenCount"), (r, "reasoning_tokens"), (r, "thinkingTokens"),
                       (r, "thinking_tokens")], consumed)

    inputs = _pick([(r, "inputTokens"), (r, "prompt_tokens")], consumed)
    if inputs is None:
        anthropic = _pick([(r, "input_tokens")], consumed)
        if anthropic is not None:
            extras = [_count(r.get(k)) or 0 for k in ("cache_read_input_tokens", "cache_creation_input_tokens")]
            inputs = anthropic + sum(extras)
    if inputs is None:
        gemini = _pick([(r, "promptTokenCount")], consumed)
        if gemini is not None:
            inputs = gemini + (_pick([(r, "toolUsePromptTokenCount")], consumed) or 0)
    else:
        _pick([(r, "input_tokens"), (r, "promptTokenCount")], consumed)

    outputs = _pick([(r, "outputTokens"), (r, "completion_tokens"), (r, "output_tokens")], consumed)
    if outputs is None:
        candidates = _pick([(r, "candidatesTokenCount")], consumed)
        if candidates is not None:
            outputs = candidates + (_count(r.get("thoughtsTokenCount")) or 0)
    else:
        _pick([(r, "candidatesTokenCount")], consumed)

    for key, value in (("inputTokens", inputs), ("outputTokens", outputs)):
        if value is not None:
            result[key] = value
    result["totalTokens"] = _fit((inputs or 0) + (outputs or 0))
    for key, value in (("cacheReadTokens", cache_read), ("cacheWriteTokens", cache_write), ("reasoningTokens", reasoning)):
        if value is not None:
            result[key] = value

    consumed[id(r)].update(("cost", "source", "serviceTier", "service_tier", "inferenceGeo", "inference_geo", "details"))
    cost = r.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost):
        result["cost"] = _fit(cost)  # an integer cost past 64 bits becomes a float, as counts do
    if r.get("source") in ("provider", "estimate"):
        result["source"] = r["source"]
    for canonical, alias in (("serviceTier", "service_tier"), ("inferenceGeo", "inference_geo")):
        value = r.get(canonical) if isinstance(r.get(canonical), str) else r.get(alias)
        if isinstance(value, str):
            result[canonical] = value

    extras: dict = {}
    if isinstance(r.get("details"), Mapping):
        extras.update(r["details"])
    for key, value in r.items():
        if key in consumed[id(r)] or key in _DETAIL_OBJECTS:
            continue
        extras[key] = value
    for key in _DETAIL_OBJECTS:
        sub = _sub(r, key)
        left = {k: v for k, v in sub.items() if k not in consumed.get(id(sub), set())}
        if left:
            extras[key] = left
    details = usage_details(extras) if extras else None
    if details:
        result["details"] = details
    return result


_METADATA = ("source", "serviceTier", "inferenceGeo", "details")


def usage_add(total: Any, reported: Any) -> dict:
    """New lifetime totals: counters and cost summed, ``totalTokens`` recomputed, metadata from ``reported``.

    An invalid (non-dict) report is ignored: the result is then a normalised copy of ``total``.
    """
    base = usage_normalize(total)
    if not isinstance(reported, Mapping):
        result = base
        result.setdefault("inputTokens", 0)
        result.setdefault("outputTokens", 0)
        return result
    report = usage_normalize(reported)
    result: dict = {}
    for key in COUNTERS:
        if key in base or key in report or key in ("inputTokens", "outputTokens"):
            result[key] = _fit(base.get(key, 0) + report.get(key, 0))
    result["totalTokens"] = _fit(result["inputTokens"] + result["outputTokens"])
    if "cost" in base or "cost" in report:
        result["cost"] = _fit(base.get("cost", 0) + report.get("cost", 0))
    for key in _METADATA:
        if key in report:
            result[key] = report[key]
    return result
