"""A context's lifetime cost (issue 23): the ledger of ``context/ledger.py`` that ``hooks.usage_log.record_usage``
writes and ``Context.cost`` / ``context_cost`` / ``%agentctx usage`` read.

Figures are computed by hand from the providers' published price pages (and checked to be genai-prices 0.2.3's and 0.2.5's):
gpt-4o $2.50 / $10.00 per million input / output tokens; claude-sonnet-4 $3 / $15, cache read $0.30, cache
write (5 minutes) $3.75.
"""

from __future__ import annotations

import gc
import random
from decimal import Decimal
from importlib.metadata import version

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_widgets import Context, ScriptedModel, run_turn
from agentctx_widgets.context import ledger
from agentctx_widgets.context.cost import Cost, PriceError, cost_of_calls
from agentctx_widgets.hooks.usage_log import (context_cost, context_cost_by_model, context_spend, context_usage,
                                              record_usage, reset_session_usage, session_cost, session_usage)

M = Decimal(1_000_000)
GPT_4O = {"model": "gpt-4o", "provider": "openai"}
SONNET = {"model": "claude-sonnet-4-20250514", "provider": "anthropic"}
# 1000 input + 100 output on gpt-4o: 1000 * 2.50 / M + 100 * 10 / M = $0.0025 + $0.0010
GPT_4O_USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}
GPT_4O_COST = Decimal("0.0035")
# Anthropic reports cache reads / writes beside input_tokens: 500 uncached * 3 + 200 read * 0.30
# + 300 written * 3.75 + 100 out * 15, per million = 0.0015 + 0.00006 + 0.001125 + 0.0015
SONNET_USAGE = {"input_tokens": 500, "cache_read_input_tokens": 200, "cache_creation_input_tokens": 300,
                "output_tokens": 100}
SONNET_COST = Decimal("0.004185")


@pytest.fixture(autouse=True)
def fresh_ledger():
    reset_session_usage()
    yield
    reset_session_usage()


def test_hand_computed_figures_agree_with_the_table():
    assert GPT_4O_COST == 1000 * Decimal("2.50") / M + 100 * Decimal("10.00") / M
    assert SONNET_COST == (500 * 3 + 200 * Decimal("0.30") + 300 * Decimal("3.75") + 100 * 15) / M
    assert cost_of_calls([{"usage": GPT_4O_USAGE, **GPT_4O}]).total == GPT_4O_COST
    assert cost_of_calls([{"usage": SONNET_USAGE, **SONNET}]).total == SONNET_COST


def test_a_context_with_no_turns_costs_zero():
    context = Context()
    assert context.cost == Cost.zero() and context_cost(context) == Cost.zero()
    assert context_cost_by_model(context) == {} and context_spend(context).calls == 0


def test_lifetime_cost_over_several_turns_and_models():
    context, other = Context(), Context()
    record_usage(GPT_4O_USAGE, context, call=GPT_4O)
    record_usage(GPT_4O_USAGE, context, call=GPT_4O)          # a tool round trip: two gpt-4o calls
    record_usage(SONNET_USAGE, context, call=SONNET)
    record_usage(GPT_4O_USAGE, other, call=GPT_4O)
    total = context.cost
    assert total.total == 2 * GPT_4O_COST + SONNET_COST == Decimal("0.011185")
    assert total.calls == 3 and total.complete and not total.estimated
    assert total.parts["input"] == (2000 * Decimal("2.5") + 500 * 3) / M
    assert total.parts["cache_read"] == 200 * Decimal("0.30") / M
    assert total.parts["cache_write"] == 300 * Decimal("3.75") / M
    assert total.parts["output"] == (200 * 10 + 100 * 15) / M
    assert total.source == f"genai-prices {version('genai-prices')} (bundled data)"
    by_model = context_cost_by_model(context)
    assert list(by_model) == ["gpt-4o", "claude-sonnet-4-20250514"]
    assert by_model["gpt-4o"].total == 2 * GPT_4O_COST and by_model["gpt-4o"].calls == 2
    spend = context_spend(context)
    assert [(m.model, m.calls, m.usage["totalTokens"]) for m in spend.models] == [
        ("gpt-4o", 2, 2200), ("claude-sonnet-4-20250514", 1, 1100)]
    assert context_usage(context)["inputTokens"] == 3000
    assert other.cost.total == GPT_4O_COST
    assert session_cost().total == 3 * GPT_4O_COST + SONNET_COST and session_usage()["responses"] == 4


def test_the_model_that_answered_prices_the_call():
    context = Context()
    record_usage(GPT_4O_USAGE, context, call={"model": "gpt-4o-mini", "responseModel": "gpt-4o", "provider": "openai"})
    assert context.cost.total == GPT_4O_COST and list(context_cost_by_model(context)) == ["gpt-4o"]


def test_an_unknown_model_is_unpriced_never_zero():
    context = Context()
    record_usage(GPT_4O_USAGE, context, call={"model": "my-finetune"})
    alone = context.cost
    assert alone.total is None and alone.unpriced == ("my-finetune",) and not alone.complete
    assert "prices={'my-finetune'" in alone.message
    record_usage(GPT_4O_USAGE, context, call=GPT_4O)
    mixed = context.cost
    assert mixed.total == GPT_4O_COST and mixed.unpriced == ("my-finetune",) and mixed.calls == 2
    assert str(mixed) == "$0.0035 + unpriced: my-finetune"


def test_a_call_recorded_without_its_model_is_unpriced():
    context = Context()
    record_usage(GPT_4O_USAGE, context)
    assert context.cost.total is None and context.cost.unpriced == (ledger.NO_MODEL,)


def test_prices_given_with_the_turn_price_its_calls_and_are_copied():
    context, prices = Context(), {"my-model": {"input": 1.0, "output": 2.0}, "llama3.2": "free"}
    record_usage(GPT_4O_USAGE, context, call={"model": "my-model"}, prices=prices)
    record_usage(GPT_4O_USAGE, context, call={"model": "llama3.2"}, prices=prices)
    prices["my-model"]["input"] = 100.0                     # after the call: does not reprice it
    by_model = context_cost_by_model(context)
    assert by_model["my-model"].total == (1000 * 1 + 100 * 2) / M == Decimal("0.0012")
    assert by_model["llama3.2"].total == 0 and by_model["llama3.2"].free
    assert context.cost.total == Decimal("0.0012") and context.cost.source == "prices= + prices= (free)"


def test_bad_prices_or_call_are_refused_before_anything_is_recorded():
    context = Context()
    with pytest.raises(PriceError, match=r"prices\['m'\]\.output: missing"):
        record_usage(GPT_4O_USAGE, context, call={"model": "m"}, prices={"m": {"input": 1}})
    with pytest.raises(TypeError, match="call must be a dict"):
        record_usage(GPT_4O_USAGE, context, call="gpt-4o")
    assert context_usage(context) == {} and session_usage() == {"responses": 0} and context.cost == Cost.zero()


def test_an_estimated_call_makes_the_cost_an_estimate():
    context = Context()
    record_usage({"inputTokens": 1000, "outputTokens": 100, "source": "estimate"}, context, call=GPT_4O)
    assert context.cost.total == GPT_4O_COST and context.cost.estimated


def test_a_dropped_context_is_forgotten_and_a_plain_object_counts_for_the_session_only():
    context = Context()
    record_usage(GPT_4O_USAGE, context, call=GPT_4O)
    record_usage(GPT_4O_USAGE, 42, call=GPT_4O)             # not weak-referenceable
    assert len(ledger._by_context) == 1
    del context
    gc.collect()
    assert len(ledger._by_context) == 0 and session_cost().total == 2 * GPT_4O_COST


def test_usage_the_table_refuses_is_unpriced_with_why():
    context = Context()  # more cached tokens than input tokens: genai-prices refuses to price it
    record_usage({"inputTokens": 10, "outputTokens": 1, "cacheReadTokens": 50}, context, call=GPT_4O)
    assert context.cost.total is None and context.cost.unpriced == ("gpt-4o (usage does not add up)",)


MODELS = [GPT_4O, SONNET, {"model": "gpt-4o-mini", "provider": "openai"}, {"model": "my-model"},
          {"model": "local"}, {"model": "claude-3-5-haiku-latest"}]
PRICES = {"my-model": {"input": 0.5, "output": 1.5, "cache_read": 0.05}, "local": "free"}

a_call = st.builds(
    lambda model, inputs, outputs, cached, estimated: {
        **model, "usage": {"inputTokens": inputs, "outputTokens": outputs, "cacheReadTokens": min(cached, inputs),
                           **({"source": "estimate"} if estimated else {})}},
    st.sampled_from(MODELS), st.integers(0, 300_000), st.integers(0, 50_000), st.integers(0, 300_000), st.booleans())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(a_call, min_size=1, max_size=4), min_size=1, max_size=6))
def test_a_contexts_cost_is_the_sum_of_its_turns_costs(turns):
    reset_session_usage()
    context = Context()
    for calls in turns:
        for call in calls:
            record_usage(call["usage"], context, call=call, prices=PRICES)
    expected = sum((cost_of_calls(calls, prices=PRICES) for calls in turns), Cost.zero())
    assert context.cost == expected
    assert context.cost.calls == sum(len(calls) for calls in turns)
    by_model = context_cost_by_model(context)
    assert sum(by_model.values(), Cost.zero()).total == expected.total
    assert sum(c.calls for c in by_model.values()) == expected.calls


def test_a_context_costs_what_its_turns_results_cost_fixed_seed():
    """The same property without hypothesis' shrinking: 25 random cases from a fixed seed."""
    rng = random.Random(23)
    for _ in range(25):
        reset_session_usage()
        context = Context()
        turns = [[{**rng.choice(MODELS), "usage": {"inputTokens": rng.randrange(200_000),
                                                   "outputTokens": rng.randrange(20_000)}}
                  for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 5))]
        for calls in turns:
            for call in calls:
                record_usage(call["usage"], context, call=call, prices=PRICES)
        assert context.cost == sum((cost_of_calls(c, prices=PRICES) for c in turns), Cost.zero())


def test_run_turn_records_each_call_priced_as_its_result_is():
    context = Context()
    model = ScriptedModel(["one", "two"], usage=GPT_4O_USAGE, model="gpt-4o")
    first = run_turn(context, "a", model=model)
    second = run_turn(context, "b", model=model)
    assert context.cost == first.cost + second.cost
    assert context.cost.total == 2 * GPT_4O_COST


def test_run_turn_adds_every_call_to_the_context_ledger():
    context = Context()
    model = ScriptedModel(["one", "two"], usage=GPT_4O_USAGE, model="gpt-4o")
    run_turn(context, "a", model=model)
    run_turn(context, "b", model=model)
    assert context_spend(context).calls == 2 and context.cost.calls == 2
    assert context_usage(context)["inputTokens"] == 2000


def test_calls_waiting_to_be_priced_stay_bounded_when_no_cost_is_read():
    """The ledger prices calls lazily, but a process that never reads a cost (a long suite check) keeps at
    most SETTLE_AT of them waiting; what it then reads is still every call: 300 gpt-4o calls of 10 in / 1
    out, 300 x ($0.000025 + $0.00001) = $0.0105 by OpenAI's price page."""
    from decimal import Decimal

    from agentctx_widgets.context import ledger
    from agentctx_widgets.hooks.usage_log import context_cost, record_usage

    context = Context(name="long")
    assert 300 > ledger.SETTLE_AT
    for _ in range(300):
        record_usage({"inputTokens": 10, "outputTokens": 1, "totalTokens": 11}, context, call={"model": "gpt-4o"})
        assert len(ledger._queue) < ledger.SETTLE_AT
    assert context_cost(context).total == Decimal("0.0105") and context_cost(context).calls == 300
