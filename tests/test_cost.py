"""Honest cost (issue 23): the kit's usage priced from genai-prices, checked against hand-computed figures.

Every expected figure below is computed by hand from the provider's published price per million tokens
(the arithmetic is in the comment). The same rates are what genai-prices 0.2.x has for these models; a
test pins the rate so that a table update that changes it fails here, loudly, instead of drifting.

The usage each test prices is the kit's own: the provider's raw stream events go through the connector's
translator (what ``done.usage`` carries) and ``finalize_usage`` (what ``stream_reply`` keeps on
``TurnResult.calls[i]["usage"]``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_widgets.context import estimate_usage, finalize_usage, usage_add
from agentctx_widgets.context.cost import Cost, PriceError, cost, cost_of_calls, money
from agentctx_widgets.models.anthropic import AnthropicTranslator
from agentctx_widgets.models.openai_chat import ChatTranslator
from agentctx_widgets.models.openai_responses import ResponsesTranslator

D = Decimal
AT = datetime(2026, 11, 1, tzinfo=timezone.utc)  # a fixed request date: prices change over time (o3, below)


def done_usage(translator, events: list[dict]) -> dict:
    """The usage the connector's ``done`` event carries, finalised as ``stream_reply`` does."""
    out = [event for raw in events for event in translator.feed(raw)] + translator.finish()
    done = [event for event in out if event.get("type") == "done"]
    assert len(done) == 1, out
    return finalize_usage(done[0].get("usage"), [], {"type": 3, "content": []})


def chat_usage(usage: dict) -> dict:
    chunks = [{"choices": [{"index": 0, "delta": {"content": "hi"}}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
              {"choices": [], "usage": usage}]
    return done_usage(ChatTranslator(), chunks)


def responses_usage(usage: dict) -> dict:
    events = [{"type": "response.completed", "response": {"status": "completed", "output": [], "usage": usage}}]
    return done_usage(ResponsesTranslator(), events)


def anthropic_usage(start: dict, delta: dict) -> dict:
    events = [{"type": "message_start", "message": {"id": "m", "role": "assistant", "content": [], "usage": start}},
              {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": delta},
              {"type": "message_stop"}]
    return done_usage(AnthropicTranslator(), events)


def per_million(tokens: int, usd: str) -> Decimal:
    return D(tokens) * D(usd) / D(1_000_000)


# -- OpenAI Chat Completions ------------------------------------------------------------------------


def test_gpt_4o_chat_cached_prompt_tokens_are_inside_prompt_tokens():
    # OpenAI: gpt-4o $2.50 input, $1.25 cached input, $10.00 output per 1M tokens.
    # prompt_tokens 12,000 of which cached 8,192 -> uncached 3,808.
    # 3,808 x 2.50 = 9,520; 8,192 x 1.25 = 10,240; 1,500 x 10 = 15,000 -> 34,760 / 1e6 = $0.03476
    usage = chat_usage({"prompt_tokens": 12_000, "completion_tokens": 1_500, "total_tokens": 13_500,
                        "prompt_tokens_details": {"cached_tokens": 8_192, "audio_tokens": 0},
                        "completion_tokens_details": {"reasoning_tokens": 0}})
    c = cost(usage, "gpt-4o", "openai", at=AT)
    assert c.total == D("0.03476")
    assert dict(c.parts) == {"input": D("0.00952"), "cache_read": D("0.01024"), "output": D("0.015")}
    assert c.currency == "USD" and not c.estimated and c.complete and c.priced_as == ("openai/gpt-4o",)
    assert c.source.startswith("genai-prices 0.2.") and "(bundled data)" in c.source
    assert str(c) == "$0.0348"


def test_gpt_4o_mini_chat():
    # OpenAI: gpt-4o-mini $0.15 input, $0.075 cached, $0.60 output per 1M.
    # 30,000 x 0.15 = 4,500; 10,000 x 0.075 = 750; 5,000 x 0.60 = 3,000 -> 8,250 / 1e6 = $0.00825
    usage = chat_usage({"prompt_tokens": 40_000, "completion_tokens": 5_000,
                        "prompt_tokens_details": {"cached_tokens": 10_000}})
    c = cost(usage, "gpt-4o-mini", "openai", at=AT)
    assert c.total == D("0.00825")
    assert c.parts["cache_read"] == D("0.00075")


def test_o4_mini_reasoning_tokens_are_inside_completion_tokens_and_priced_as_output():
    # OpenAI: o4-mini $1.10 input, $0.275 cached, $4.40 output per 1M; reasoning is billed as output.
    # uncached 3,000 - 1,024 = 1,976 x 1.10 = 2,173.6; 1,024 x 0.275 = 281.6;
    # completion 6,000 (4,800 of them reasoning) x 4.40 = 26,400 -> 28,855.2 / 1e6 = $0.0288552
    usage = chat_usage({"prompt_tokens": 3_000, "completion_tokens": 6_000,
                        "prompt_tokens_details": {"cached_tokens": 1_024},
                        "completion_tokens_details": {"reasoning_tokens": 4_800}})
    assert usage["reasoningTokens"] == 4_800 and usage["outputTokens"] == 6_000
    c = cost(usage, "o4-mini", "openai", at=AT)
    assert c.total == D("0.0288552")
    assert "reasoning" not in c.parts  # not priced apart: inside output, once
    assert c.parts["output"] == D("0.0264")


def test_audio_tokens_are_priced_at_the_audio_rates():
    # OpenAI: gpt-audio text $2.50 in / $10 out, audio $32 in / $64 out per 1M; audio_tokens are inside
    # prompt_tokens / completion_tokens. 600 x 2.50 = 1,500; 400 x 32 = 12,800; 200 x 10 = 2,000;
    # 300 x 64 = 19,200 -> 35,500 / 1e6 = $0.0355
    usage = chat_usage({"prompt_tokens": 1_000, "completion_tokens": 500,
                        "prompt_tokens_details": {"audio_tokens": 400, "cached_tokens": 0},
                        "completion_tokens_details": {"audio_tokens": 300, "reasoning_tokens": 0}})
    c = cost(usage, "gpt-audio", "openai", at=AT)
    assert c.total == D("0.0355")
    assert dict(c.parts) == {"input": D("0.0143"), "output": D("0.0212")}


def test_the_kit_model_spec_names_its_provider():
    usage = chat_usage({"prompt_tokens": 1_000_000, "completion_tokens": 0})
    # 1,000,000 x 2.50 / 1e6 = $2.50
    assert cost(usage, "openai:gpt-4o", at=AT).total == D("2.5")
    assert cost(usage, "gpt-4o", at=AT).total == D("2.5")  # provider guessed from the name


# -- OpenAI Responses --------------------------------------------------------------------------------


def test_o3_responses_input_and_output_details():
    # OpenAI: o3 $2.00 input, $0.50 cached, $8.00 output per 1M (since the 2025-06-10 price cut).
    # uncached 20,000 - 15,000 = 5,000 x 2 = 10,000; 15,000 x 0.50 = 7,500;
    # output 2,500 (2,000 reasoning) x 8 = 20,000 -> 37,500 / 1e6 = $0.0375
    usage = responses_usage({"input_tokens": 20_000, "output_tokens": 2_500, "total_tokens": 22_500,
                             "input_tokens_details": {"cached_tokens": 15_000},
                             "output_tokens_details": {"reasoning_tokens": 2_000}})
    c = cost(usage, "o3", "openai", at=AT)
    assert c.total == D("0.0375")
    assert dict(c.parts) == {"input": D("0.01"), "cache_read": D("0.0075"), "output": D("0.02")}


def test_o3_before_the_price_cut_is_priced_at_the_old_input_and_output_rates():
    # o3 was $10 input / $40 output per 1M before 2025-06-10: 1,000 x 10 + 1,000 x 40 = 50,000 / 1e6 = $0.05
    usage = responses_usage({"input_tokens": 1_000, "output_tokens": 1_000})
    assert cost(usage, "o3", "openai", at=datetime(2025, 5, 1, tzinfo=timezone.utc)).total == D("0.05")
    # and $2 / $8 after: 1,000 x 2 + 1,000 x 8 = 10,000 / 1e6 = $0.01
    assert cost(usage, "o3", "openai", at=AT).total == D("0.01")


def test_gpt_4_1_responses():
    # OpenAI: gpt-4.1 $2.00 input, $0.50 cached, $8.00 output per 1M.
    # 40,000 x 2 = 80,000; 60,000 x 0.50 = 30,000; 1,000 x 8 = 8,000 -> 118,000 / 1e6 = $0.118
    usage = responses_usage({"input_tokens": 100_000, "output_tokens": 1_000,
                             "input_tokens_details": {"cached_tokens": 60_000}})
    assert cost(usage, "gpt-4.1", "openai", at=AT).total == D("0.118")


def test_an_openai_flex_service_tier_is_priced_at_the_flex_rate():
    # OpenAI Flex: o3 $1.00 input, $4.00 output per 1M: 5,000 x 1 + 3,000 x 4 = 17,000 / 1e6 = $0.017
    c = cost({"prompt_tokens": 5_000, "completion_tokens": 3_000, "service_tier": "flex"}, "o3", "openai", at=AT)
    assert c.total == D("0.017")


def test_an_anthropic_batch_is_priced_at_the_batch_rate():
    # Anthropic Message Batches: half price; Claude Haiku 4.5 $0.50 input, $2.50 output per 1M.
    # usage.service_tier "batch": 1,000 x 0.50 + 1,000 x 2.50 = 3,000 / 1e6 = $0.003 (standard: $0.006)
    usage = anthropic_usage({"input_tokens": 1_000, "output_tokens": 1, "service_tier": "batch"},
                            {"output_tokens": 1_000})
    assert usage["serviceTier"] == "batch"
    assert cost(usage, "claude-haiku-4-5", "anthropic", at=AT).total == D("0.003")
    assert cost({**usage, "serviceTier": "standard"}, "claude-haiku-4-5", "anthropic", at=AT).total == D("0.006")


# -- Anthropic ----------------------------------------------------------------------------------------


def test_claude_sonnet_4_cache_writes_5m_and_1h_and_reads():
    # Anthropic: Sonnet 4 $3 input, $3.75 5-minute cache write, $6 1-hour cache write, $0.30 cache read,
    # $15 output per 1M. input_tokens (2,000) excludes the cache reads and writes.
    # 2,000 x 3 = 6,000; 30,000 x 0.30 = 9,000; 6,000 x 3.75 = 22,500; 4,000 x 6 = 24,000;
    # 800 x 15 = 12,000 -> 73,500 / 1e6 = $0.0735
    usage = anthropic_usage({"input_tokens": 2_000, "cache_creation_input_tokens": 10_000,
                             "cache_read_input_tokens": 30_000, "output_tokens": 1,
                             "cache_creation": {"ephemeral_5m_input_tokens": 6_000, "ephemeral_1h_input_tokens": 4_000}},
                            {"output_tokens": 800})
    assert usage["inputTokens"] == 42_000  # the kit's inputTokens: every input token
    c = cost(usage, "claude-sonnet-4-20250514", "anthropic", at=AT)
    assert c.total == D("0.0735")
    assert dict(c.parts) == {"input": D("0.006"), "cache_read": D("0.009"), "cache_write": D("0.0465"),
                             "output": D("0.012")}
    assert c.priced_as == ("anthropic/claude-sonnet-4-0",)


def test_claude_3_5_sonnet_cache_write_without_the_ttl_split_is_the_5_minute_rate():
    # Anthropic: Claude 3.5 Sonnet $3 input, $3.75 cache write, $15 output per 1M.
    # 500 x 3 = 1,500; 10,000 x 3.75 = 37,500; 300 x 15 = 4,500 -> 43,500 / 1e6 = $0.0435
    usage = anthropic_usage({"input_tokens": 500, "cache_creation_input_tokens": 10_000,
                             "cache_read_input_tokens": 0, "output_tokens": 1}, {"output_tokens": 300})
    c = cost(usage, "claude-3-5-sonnet-20241022", "anthropic", at=AT)
    assert c.total == D("0.0435")
    assert c.parts["cache_write"] == D("0.0375")


def test_claude_3_5_haiku_cache_reads():
    # Anthropic: Claude Haiku 3.5 $0.80 input, $0.08 cache read, $4 output per 1M.
    # 1,000 x 0.80 = 800; 100,000 x 0.08 = 8,000; 2,000 x 4 = 8,000 -> 16,800 / 1e6 = $0.0168
    usage = anthropic_usage({"input_tokens": 1_000, "cache_read_input_tokens": 100_000, "output_tokens": 1},
                            {"output_tokens": 2_000})
    assert cost(usage, "claude-3-5-haiku-20241022", "anthropic", at=AT).total == D("0.0168")


def test_claude_haiku_4_5_one_hour_cache_write():
    # Anthropic: Claude Haiku 4.5 $1 input, $2 1-hour cache write, $5 output per 1M.
    # 3,000 x 1 = 3,000; 2,000 x 2 = 4,000; 1,000 x 5 = 5,000 -> 12,000 / 1e6 = $0.012
    usage = anthropic_usage({"input_tokens": 3_000, "cache_creation_input_tokens": 2_000, "output_tokens": 1,
                             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2_000}},
                            {"output_tokens": 1_000})
    assert cost(usage, "claude-haiku-4-5", "anthropic", at=AT).total == D("0.012")


def test_a_long_context_tier_applies_per_call():
    # Claude Sonnet 4.5 (genai-prices' table): $3 / $15 per 1M up to 200k input tokens, $6 / $22.50 above.
    # one call of 250,000 input: 250,000 x 6 = 1,500,000; 1,000 x 22.50 = 22,500 -> $1.5225
    big = {"inputTokens": 250_000, "outputTokens": 1_000, "source": "provider"}
    assert cost(big, "claude-sonnet-4-5", "anthropic", at=AT).total == D("1.5225")
    # two calls of 150,000 each stay below the tier: 2 x (150,000 x 3 + 1,000 x 15) = 2 x 465,000 = $0.93;
    # pricing their summed usage (300,000) would say 2 x (150,000 x 6 + 1,000 x 22.5) = $1.845
    half = {"inputTokens": 150_000, "outputTokens": 1_000, "source": "provider"}
    calls = [{"usage": half, "model": "claude-sonnet-4-5", "provider": "anthropic"}] * 2
    assert cost_of_calls(calls, at=AT).total == D("0.93")
    assert cost(usage_add(half, half), "claude-sonnet-4-5", "anthropic", at=AT).total == D("1.845")


def test_priced_apart_reasoning_is_its_own_part():
    # genai-prices prices Perplexity's Sonar Deep Research reasoning apart: $2 input, $8 output, $3 reasoning.
    # 5,000 x 2 = 10,000; (3,000 - 2,000) x 8 = 8,000; 2,000 x 3 = 6,000 -> 24,000 / 1e6 = $0.024
    usage = chat_usage({"prompt_tokens": 5_000, "completion_tokens": 3_000,
                        "completion_tokens_details": {"reasoning_tokens": 2_000}})
    c = cost(usage, "perplexity/sonar-deep-research", "openrouter", at=AT)
    assert c.total == D("0.024")
    assert dict(c.parts) == {"input": D("0.01"), "output": D("0.008"), "reasoning": D("0.006")}


# -- unpriced, free, user prices ----------------------------------------------------------------------


def test_an_unknown_model_is_unpriced_never_zero():
    c = cost({"inputTokens": 10, "outputTokens": 5}, "my-finetune-v3")
    assert c.total is None and c.unpriced == ("my-finetune-v3",) and not c.complete
    assert c.total != 0
    assert "prices={'my-finetune-v3': {'input': ..., 'output': ...}}" in c.message
    assert str(c).startswith("unpriced: my-finetune-v3 — ")
    assert repr(c) == "Cost(unpriced: my-finetune-v3)"


def test_a_local_server_is_unpriced_even_for_a_known_model_name():
    # an OpenAI-compatible server on this machine: its base URL is no provider the table knows
    c = cost({"inputTokens": 10, "outputTokens": 5}, "gpt-4o", "http://127.0.0.1:8080/v1")
    assert c.total is None and "'free'" in c.message


def test_no_model_named_is_unpriced():
    c = cost({"inputTokens": 10, "outputTokens": 5}, None)
    assert c.total is None and c.unpriced == ("(no model named)",)


def test_a_local_model_marked_free():
    for free in ("free", 0, 0.0, {"input": 0, "output": 0}):
        c = cost({"inputTokens": 1_000, "outputTokens": 500}, "llama3.2:3b", prices={"llama3.2:3b": free})
        assert c.total == 0 and c.complete and c.free and c.source == "prices= (free)", free
        assert str(c) == "$0 (free)"


def test_user_prices_per_million_tokens_extend_the_table():
    # my-model: $1 input, $0.10 cache read, $2 output per 1M.
    # (10,000 - 4,000) x 1 = 6,000; 4,000 x 0.10 = 400; 2,000 x 2 = 4,000 -> 10,400 / 1e6 = $0.0104
    usage = {"inputTokens": 10_000, "outputTokens": 2_000, "cacheReadTokens": 4_000}
    c = cost(usage, "my-model", prices={"my-model": {"input": 1.0, "output": 2, "cache_read": D("0.1")}})
    assert c.total == D("0.0104") and c.source == "prices=" and c.priced_as == ("prices=/my-model",)
    # without a cache_read price, a cached token is an input token: 10,000 x 1 + 2,000 x 2 = $0.014
    assert cost(usage, "My-Model", prices={"my-model": {"input": 1, "output": 2}}).total == D("0.014")


def test_user_prices_override_the_table():
    # gpt-4o at a negotiated $1 / $4 per 1M: 1,000 x 1 + 1,000 x 4 = 5,000 / 1e6 = $0.005
    usage = {"inputTokens": 1_000, "outputTokens": 1_000}
    assert cost(usage, "gpt-4o", "openai", prices={"openai:gpt-4o": {"input": 1, "output": 4}}).total == D("0.005")
    assert cost(usage, "gpt-4o", "openai", at=AT).total == D("0.0125")  # 1,000 x 2.5 + 1,000 x 10


def test_user_prices_1h_cache_writes():
    # $1 input, $1.25 5-min write, $2 1-hour write, $5 output: 1,000 x 1 + 1,000 x 1.25 + 1,000 x 2
    # + 100 x 5 = 4,750 / 1e6 = $0.00475
    usage = anthropic_usage({"input_tokens": 1_000, "cache_creation_input_tokens": 2_000, "output_tokens": 1,
                             "cache_creation": {"ephemeral_5m_input_tokens": 1_000, "ephemeral_1h_input_tokens": 1_000}},
                            {"output_tokens": 100})
    prices = {"m": {"input": 1, "output": 5, "cache_write": 1.25, "cache_write_1h": 2}}
    assert cost(usage, "m", prices=prices).total == D("0.00475")


@pytest.mark.parametrize(("prices", "message"), [
    ([("m", 1)], "prices: must be a dict of model name -> price, got list"),
    ({"m": {"input": -1, "output": 2}}, "prices['m'].input: must be a finite, non-negative number"),
    ({"m": {"input": 1, "output": "2"}}, "prices['m'].output: must be a number of USD per million tokens, got str"),
    ({"m": {"input": 1, "output": True}}, "prices['m'].output: must be a number"),
    ({"m": {"input": 1, "output": float("nan")}}, "prices['m'].output: must be a finite"),
    ({"m": {"input": 1}}, "prices['m'].output: missing; 'input' and 'output' are required"),
    ({"m": {"input": 1, "output": 2, "cached": 0.5}}, "prices['m'].cached: not a price key; the keys are input, output"),
    ({"m": {"input": 1, "output": 2, "cache_write_1h": 2}}, "prices['m'].cache_write_1h: needs 'cache_write' too"),
    ({"m": "gratis"}, "prices['m']: must be {'input': ..., 'output': ...}"),
    ({"m": 0.5}, "prices['m']: must be {'input': ..., 'output': ...}"),
    ({"": "free"}, "prices: every key must be a model name"),
])
def test_bad_prices_are_refused_naming_the_key(prices, message):
    with pytest.raises(PriceError) as raised:
        cost({"inputTokens": 1, "outputTokens": 1}, "gpt-4o", prices=prices)
    assert message in str(raised.value)


def test_a_bad_entry_is_refused_even_when_another_model_is_priced():
    with pytest.raises(PriceError, match=r"prices\['other'\].input"):
        cost({"inputTokens": 1, "outputTokens": 1}, "gpt-4o", prices={"other": {"input": "x", "output": 1}})


def test_provider_usage_that_does_not_add_up_is_an_error():
    with pytest.raises(ValueError, match="cost: the usage does not add up"):
        cost({"inputTokens": 10, "outputTokens": 1, "cacheReadTokens": 50, "source": "provider"}, "gpt-4o", "openai")


# -- estimates ------------------------------------------------------------------------------------------


def test_estimated_usage_is_marked():
    usage = estimate_usage([{"type": 2, "content": [{"type": "text", "text": "one two three"}]}],
                           {"type": 3, "content": [{"type": "text", "text": "four five six"}]})
    # 3 words -> ceil(3 x 4/3) = 4 tokens each way: 4 x 2.50 + 4 x 10 = 50 / 1e6 = $0.00005
    c = cost(usage, "gpt-4o", "openai", at=AT)
    assert c.estimated and c.total == D("0.00005")
    assert str(c) == "$0.00005 (est.)"


def test_an_estimate_keeps_the_reports_cache_counts_within_its_totals():
    # finalize_usage without a full provider report: estimated input/output, the report's cache count kept;
    # the 100 cached tokens cannot exceed the 4 estimated input tokens: 4 cached x 1.25 + 4 x 10 = 45 / 1e6
    usage = finalize_usage({"prompt_tokens_details": {"cached_tokens": 100}},
                           [{"type": 2, "content": [{"type": "text", "text": "one two three"}]}],
                           {"type": 3, "content": [{"type": "text", "text": "four five six"}]})
    assert usage["source"] == "estimate" and usage["cacheReadTokens"] == 100
    assert cost(usage, "gpt-4o", "openai", at=AT).total == D("0.000045")


# -- sums -------------------------------------------------------------------------------------------------


def test_priced_plus_unpriced_stays_marked():
    priced = cost({"inputTokens": 1_000, "outputTokens": 0}, "gpt-4o", "openai", at=AT)  # 1,000 x 2.5 = $0.0025
    unknown = cost({"inputTokens": 10, "outputTokens": 5}, "my-model")
    both = priced + unknown
    assert both.total == D("0.0025") and both.unpriced == ("my-model",) and not both.complete
    assert str(both) == "$0.0025 + unpriced: my-model"
    assert (unknown + unknown).total is None and (unknown + unknown).unpriced == ("my-model",)
    reverse = unknown + priced
    assert reverse.total == D("0.0025") and reverse.unpriced == ("my-model",) and reverse.calls == 2
    assert str(reverse + priced) == "$0.005 + unpriced: my-model"


def test_sum_of_costs_and_the_zero_cost():
    a = cost({"inputTokens": 1_000, "outputTokens": 0}, "gpt-4o", "openai", at=AT)
    b = cost({"inputTokens": 0, "outputTokens": 1_000, "source": "estimate"}, "claude-3-5-haiku-20241022", at=AT)
    total = sum([a, b])
    # 1,000 x 2.50 = 2,500; 1,000 x 4 = 4,000 -> 6,500 / 1e6 = $0.0065
    assert total.total == D("0.0065") and total.estimated and total.calls == 2
    assert total.priced_as == ("openai/gpt-4o", "anthropic/claude-3-5-haiku-latest")
    assert Cost.zero().total == 0 and Cost.zero() + a == a
    assert cost_of_calls([]) == Cost.zero()


def test_cost_of_calls_prices_each_call_as_the_model_that_answered():
    calls = [{"usage": {"inputTokens": 1_000, "outputTokens": 100}, "model": "gpt-4o", "provider": "openai"},
             {"usage": {"inputTokens": 1_000, "outputTokens": 100}, "model": "gpt-4o", "provider": "openai",
              "responseModel": "gpt-4o-mini"}]
    # 1,000 x 2.50 + 100 x 10 = 3,500; 1,000 x 0.15 + 100 x 0.60 = 210 -> 3,710 / 1e6 = $0.00371
    assert cost_of_calls(calls, at=AT).total == D("0.00371")
    with pytest.raises(TypeError, match=r"calls\[0\]"):
        cost_of_calls(["not a call"])


def test_a_cost_is_an_immutable_value_that_round_trips_through_json():
    c = cost(chat_usage({"prompt_tokens": 12_000, "completion_tokens": 1_500,
                         "prompt_tokens_details": {"cached_tokens": 8_192}}), "gpt-4o", "openai", at=AT)
    with pytest.raises(AttributeError):
        c.total = D(0)
    assert Cost.from_dict(c.to_dict()) == c
    assert c.to_dict()["total"] == 0.03476
    with pytest.raises(ValueError, match="Cost.from_dict: total must be a finite number"):
        Cost.from_dict({**c.to_dict(), "total": "lots"})
    assert hash(c) == hash(Cost.from_dict(c.to_dict()))


def test_money_formatting():
    assert [money(D(x)) for x in ("0", "1.234", "0.012345", "0.00012345", "12", "0.0400", "0.00250", "0.019999")] == \
        ["$0", "$1.23", "$0.0123", "$0.000123", "$12.00", "$0.04", "$0.0025", "$0.02"]
    # just under $1 rounds up to 1.0000 and reads "$1" (js/test/render-cost.test.js pins the same), never "$1."
    assert [money(D(x)) for x in ("0.99996", "-0.99996", "0.999")] == ["$1", "-$1", "$0.999"]


# -- properties -------------------------------------------------------------------------------------------

counts = st.integers(min_value=0, max_value=2_000_000)


@st.composite
def call_usage(draw):
    """One call's canonical usage: cache reads/writes within its input, reasoning within its output."""
    inputs, outputs = draw(counts), draw(counts)
    read = draw(st.integers(0, inputs))
    write = draw(st.integers(0, inputs - read))
    reasoning = draw(st.integers(0, outputs))
    return {"inputTokens": inputs, "outputTokens": outputs, "cacheReadTokens": read, "cacheWriteTokens": write,
            "reasoningTokens": reasoning, "source": "provider"}


UNTIERED = [("gpt-4o", "openai"), ("o4-mini", "openai"), ("claude-sonnet-4-20250514", "anthropic"),
            ("claude-3-5-haiku-20241022", "anthropic"), ("perplexity/sonar-deep-research", "openrouter")]


@settings(max_examples=60, deadline=None)
@given(st.lists(call_usage(), min_size=1, max_size=5), st.sampled_from(UNTIERED))
def test_cost_is_additive_over_the_calls_of_a_turn(calls, model):
    """Without a long-context tier, the sum of the calls' costs is the cost of their summed usage, exactly."""
    name, provider = model
    each = [cost(usage, name, provider, at=AT) for usage in calls]
    summed = calls[0]
    for usage in calls[1:]:
        summed = usage_add(summed, usage)
    together = cost(summed, name, provider, at=AT)
    total = sum(each, Cost.zero())
    assert total.total == together.total
    assert dict(total.parts) == dict(together.parts)
    assert sum(total.parts.values()) == total.total


@settings(max_examples=60, deadline=None)
@given(call_usage(), st.sampled_from(UNTIERED))
def test_parts_add_up_and_every_part_is_non_negative(usage, model):
    c = cost(usage, *model, at=AT)
    assert sum(c.parts.values()) == c.total
    assert all(amount >= 0 for amount in c.parts.values())


@settings(max_examples=40, deadline=None)
@given(call_usage(), call_usage())
def test_user_prices_are_additive_too(a, b):
    prices = {"m": {"input": 0.7, "output": 2.1, "cache_read": 0.07, "cache_write": 0.875, "reasoning": 3}}
    assert cost(a, "m", prices=prices).total + cost(b, "m", prices=prices).total == \
        cost(usage_add(a, b), "m", prices=prices).total


def test_one_label_rule_for_every_place_a_cost_is_shown():
    """context.cost.cost_label: the usage table, the documents and the suite reports differ only in how an
    estimate and the unpriced rest are written (hand-written expectations)."""
    from agentctx_widgets.context.cost import cost_label

    priced = Cost(D("0.0035"), {"input": D("0.0025"), "output": D("0.001")})
    estimate = Cost(D("0.0035"), {"input": D("0.0035")}, estimated=True)
    partly = priced + Cost(None, {}, unpriced=("my-model",), priced=0)
    free = Cost(D("0"), {}, free=True)
    assert [cost_label(c) for c in (priced, estimate, partly, free)] == [
        "$0.0035", "≈$0.0035", "$0.0035 + unpriced", "$0 (free)"]
    assert cost_label(Cost(None, {}, unpriced=("x",), priced=0)) == "unpriced"  # never $0
    assert cost_label(estimate, approx="≈{} (estimated)") == "≈$0.0035 (estimated)"
    assert cost_label(partly, partly="unpriced: my-model") == "$0.0035 + unpriced: my-model"
