import math

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_widgets.context import usage_add, usage_details, usage_normalize


def test_openai_chat_aliases():
    got = usage_normalize({"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                           "prompt_tokens_details": {"cached_tokens": 100, "audio_tokens": 0},
                           "completion_tokens_details": {"reasoning_tokens": 12}})
    assert got == {"inputTokens": 120, "outputTokens": 30, "totalTokens": 150, "cacheReadTokens": 100,
                   "reasoningTokens": 12, "details": {"prompt_tokens_details": {"audio_tokens": 0}}}


def test_openai_responses_aliases():
    got = usage_normalize({"input_tokens": 50, "output_tokens": 9, "input_tokens_details": {"cached_tokens": 20},
                           "output_tokens_details": {"reasoning_tokens": 4}})
    assert got == {"inputTokens": 50, "outputTokens": 9, "totalTokens": 59, "cacheReadTokens": 20,
                   "reasoningTokens": 4}


def test_anthropic_cache_counts_are_added_to_input():
    got = usage_normalize({"input_tokens": 10, "cache_read_input_tokens": 200, "cache_creation_input_tokens": 30,
                           "output_tokens": 7, "service_tier": "standard"})
    assert got == {"inputTokens": 240, "outputTokens": 7, "totalTokens": 247, "cacheReadTokens": 200,
                   "cacheWriteTokens": 30, "serviceTier": "standard"}


def test_gemini_thoughts_count_as_output():
    got = usage_normalize({"promptTokenCount": 80, "candidatesTokenCount": 10, "thoughtsTokenCount": 25,
                           "cachedContentTokenCount": 60, "totalTokenCount": 115})
    assert got == {"inputTokens": 80, "outputTokens": 35, "totalTokens": 115, "cacheReadTokens": 60,
                   "reasoningTokens": 25}


def test_canonical_fields_outrank_aliases_and_invalid_fields_are_omitted():
    got = usage_normalize({"inputTokens": 3, "prompt_tokens": 99, "outputTokens": -1, "completion_tokens": 2,
                           "reasoningTokens": 1, "thinkingTokens": 5, "cost": float("inf"), "source": "bogus"})
    assert got == {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5, "reasoningTokens": 1}


def test_normalize_is_idempotent_and_independent():
    raw = {"prompt_tokens": 1, "completion_tokens": 2, "extra": {"deep": [1, 2]}, "cost": 0.2,
           "serviceTier": "flex", "source": "provider"}
    once = usage_normalize(raw)
    assert once == {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3, "cost": 0.2, "source": "provider",
                    "serviceTier": "flex", "details": {"extra": {"deep": [1, 2]}}}
    assert usage_normalize(once) == once
    once["details"]["extra"]["deep"].append(3)
    assert raw["extra"]["deep"] == [1, 2]
    assert usage_normalize("junk") == {"totalTokens": 0}


def test_usage_add_sums_counters_and_replaces_metadata():
    total = {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2, "cost": 0.1, "serviceTier": "flex",
             "details": {"a": 1}}
    new = usage_add(total, {"prompt_tokens": 4, "completion_tokens": 1, "cost": 0.05, "source": "provider"})
    assert new == {"inputTokens": 14, "outputTokens": 6, "cacheReadTokens": 2, "totalTokens": 20,
                   "cost": 0.15000000000000002, "source": "provider"}
    assert total["inputTokens"] == 10  # not mutated
    assert usage_add(total, None)["inputTokens"] == 10  # invalid report ignored
    assert usage_add({}, {})["totalTokens"] == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=3000),
    lambda children: st.lists(children, max_size=40) | st.dictionaries(st.text(max_size=200), children, max_size=40),
    max_leaves=600,
)


def measure(value, depth=0):
    """(nodes, max container depth, max array length, max string, max key, total text)."""
    if isinstance(value, dict):
        stats = [1, depth + 1, 0, 0, max((len(k) for k in value), default=0), sum(len(k) for k in value)]
        children = list(value.values())
    elif isinstance(value, list):
        stats = [1, depth + 1, len(value), 0, 0, 0]
        children = value
    else:
        text = len(value) if isinstance(value, str) else 0
        return [1, depth, 0, text, 0, text]
    for child in children:
        sub = measure(child, depth + 1)
        stats = [stats[0] + sub[0], max(stats[1], sub[1]), max(stats[2], sub[2]), max(stats[3], sub[3]),
                 max(stats[4], sub[4]), stats[5] + sub[5]]
    return stats


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_usage_details_stays_within_its_limits(value):
    copied = usage_details(value)
    if copied is None:
        return
    nodes, depth, array, string, key, text = measure(copied)
    assert nodes <= 256 and depth <= 6 and array <= 16 and string <= 1024 and key <= 128 and text <= 16 * 1024
    orjson.dumps(copied)  # JSON-safe: no NaN/inf
    assert usage_details(copied) == copied  # idempotent


def test_usage_details_drops_invalid_values_cycles_and_special_keys():
    loop: dict = {"ok": 1}
    loop["self"] = loop
    got = usage_details({"nan": math.nan, "set": {1}, "fn": print, 1: "int key", "__proto__": {"x": 1},
                         "constructor": 1, "user": "bob@example.com", "loop": loop, "fine": [1, "a", None]})
    assert got == {"loop": {"ok": 1}, "fine": [1, "a", None]}
    assert usage_details(math.inf) is None
    assert usage_details(object()) is None


def test_usage_details_truncates_without_markers():
    got = usage_details({"s": "x" * 5000, "list": list(range(40)), "k" * 129: 1})
    assert got == {"s": "x" * 1024, "list": list(range(16))}
    deep = {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}
    assert usage_details(deep) == {"a": {"b": {"c": {"d": {"e": {}}}}}}  # six nested dicts
    assert measure(usage_details(deep))[1] == 6
