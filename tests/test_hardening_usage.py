"""usage_normalize / finalize_usage on arbitrary JSON: never raise, and what they return is a sane usage.

tests/test_context_usage_data.py checks the aliases by hand and fuzzes usage_details only; these
properties cover the whole normalisation on anything a provider (or a bug) might send.
"""

from __future__ import annotations

import math

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_widgets.context import finalize_usage, usage_add, usage_normalize

COUNTER_KEYS = ["inputTokens", "outputTokens", "totalTokens", "prompt_tokens", "completion_tokens", "total_tokens",
                "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount",
                "toolUsePromptTokenCount", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens", "cost",
                "source", "details", "prompt_tokens_details", "completion_tokens_details", "service_tier",
                "serviceTier", "cached_tokens", "reasoning_tokens"]
# Numbers as orjson parses them, past the 64-bit range too (orjson gives floats there; Python may give ints).
SCALAR = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(max_value=1e30) | st.floats(0, 1)
          | st.sampled_from([float("nan"), float("inf"), -0.0]) | st.text(max_size=6)
          | st.sampled_from(["provider", "estimate", "12", "-1", "1e3"]))
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(COUNTER_KEYS) | st.text(max_size=5), inner, max_size=5),
    max_leaves=12,
)
REPORTS = JSON | st.dictionaries(st.sampled_from(COUNTER_KEYS), JSON, max_size=8)
TEXT_MESSAGE = st.fixed_dictionaries({"type": st.sampled_from([2, 3]),
                                      "content": st.lists(st.fixed_dictionaries({"type": st.just("text"),
                                                                                 "text": st.text(max_size=20)}),
                                                          max_size=2)})
COUNTS = ("inputTokens", "outputTokens", "totalTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


def check_usage(usage):
    assert isinstance(usage, dict)
    for key in COUNTS:
        if key in usage:
            value = usage[key]
            # a count is a non-negative finite number (fractions are kept: some providers bill them)
            assert isinstance(value, (int, float)) and not isinstance(value, bool), (key, value)
            assert math.isfinite(value) and value >= 0, (key, value)
    assert usage["totalTokens"] == pytest.approx(usage.get("inputTokens", 0) + usage.get("outputTokens", 0), rel=1e-12)
    if "cost" in usage:
        assert isinstance(usage["cost"], (int, float)) and math.isfinite(usage["cost"])
    if "source" in usage:
        assert usage["source"] in ("provider", "estimate")
    orjson.dumps(usage)  # writable by the package's JSON library (session files, the view's snapshot)


@given(REPORTS)
@settings(max_examples=500, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_usage_normalize_never_raises_and_returns_a_sane_usage(reported):
    before = orjson.dumps(reported, option=orjson.OPT_NON_STR_KEYS) if _dumpable(reported) else None
    usage = usage_normalize(reported)
    check_usage(usage)
    if before is not None:
        assert orjson.dumps(reported, option=orjson.OPT_NON_STR_KEYS) == before  # the report is not touched
    assert usage_normalize(usage) == usage  # a normalised usage is its own normal form


@given(REPORTS, st.lists(TEXT_MESSAGE, max_size=3), JSON | TEXT_MESSAGE)
@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_finalize_usage_never_raises_and_says_where_its_counts_come_from(reported, context, message):
    usage = finalize_usage(reported, context, message)
    check_usage(usage)
    assert usage["source"] in ("provider", "estimate")
    assert "inputTokens" in usage and "outputTokens" in usage


def _dumpable(value) -> bool:
    try:
        orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return True


def test_a_huge_reported_count_stays_writable():
    """orjson gives a float for 18446744073709551616; Python callers may pass ints past 64 bits."""
    reported = orjson.loads(b'{"inputTokens": 18446744073709551616, "outputTokens": 1}')
    assert orjson.loads(orjson.dumps(usage_normalize(reported)))["inputTokens"] == 2.0**64
    for huge in (2**64 - 1, 2**80):
        usage = usage_normalize({"inputTokens": huge, "outputTokens": huge})
        check_usage(usage)
        check_usage(usage_add(usage, usage))  # sums past 64 bits become floats, still exact-enough and writable


def test_a_cost_past_64_bits_stays_writable_json():
    """Found by the property test above once Hypothesis drew -(2**63) - 1 from the suite's constants."""
    from agentctx_widgets.context import usage_add, usage_normalize

    assert usage_normalize({"cost": -(2**63) - 1})["cost"] == float(-(2**63) - 1)
    assert usage_add({"cost": 2**64 - 1}, {"cost": 5})["cost"] == float(2**64 + 4)
    assert usage_normalize({"cost": 12})["cost"] == 12  # in range: an int stays an int
    orjson.dumps(usage_add({"cost": 2**64 - 1}, {"cost": 5}))
