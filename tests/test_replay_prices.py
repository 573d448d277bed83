"""A ReplayModel recording keeps the price it was recorded with (issue 23): a regression notebook's cost
does not change when the genai-prices table is updated; ``result.reprice()`` shows both.

Expected figures are by hand from the providers' price pages: gpt-4o is $2.50 per million input tokens,
$10.00 per million output tokens, $1.25 per million cached input tokens (OpenAI's pricing page), so 1000
in / 100 out is 1000 × 2.5e-6 + 100 × 10e-6 = $0.0025 + $0.001 = $0.0035. At $5 / $20 the same call is
1000 × 5e-6 + 100 × 20e-6 = $0.005 + $0.002 = $0.007.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from decimal import Decimal

import genai_prices
import pytest
from genai_prices.types import ModelPrice

from agentctx_widgets import Context, ScriptedModel, run_turn
from agentctx_widgets.context.cost import PriceError, Repriced, cost_of_calls, recorded_cost, table_prices
from agentctx_widgets.models import replay as replay_module
from agentctx_widgets.models.replay import ReplayFileError, ReplayModel, request_key

run_turn = functools.partial(run_turn, check=False)

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing

USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}
TABLE = f"genai-prices {genai_prices.__version__} (bundled data)"
GPT_4O = {"model": "gpt-4o", "rates": {"input": "2.5", "output": "10", "cache_read": "1.25"}, "source": TABLE}


def scripted(model="gpt-4o", usage=USAGE):
    return ScriptedModel(["Hi there."], usage=usage, model=model)


def record(path, model="gpt-4o", usage=USAGE):
    result = run_turn(Context(), "hi", model=ReplayModel(path, model=scripted(model, usage), mode="record"))
    assert result.ok, result.error
    return result


def replay(path, **options):
    result = run_turn(Context(), "hi", model=ReplayModel(path, mode="replay"), **options)
    assert result.ok, result.error
    return result


def lines_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def rewrite(path, edit):
    """Each line of the recording after ``edit(entry)`` (the key is the request's hash, so it still loads)."""
    entries = lines_of(path)
    for entry in entries:
        edit(entry)
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")


@pytest.fixture
def doubled_table(monkeypatch):
    """The table "updated": gpt-4o at $5 / $20 per million (what genai-prices' calc_price answers)."""
    original = genai_prices.calc_price

    def calc_price(usage, model_ref, **kwargs):
        found = original(usage, model_ref, **kwargs)
        price = ModelPrice(input_mtok=Decimal(5), output_mtok=Decimal(20))
        return dataclasses.replace(found, model_price=price, **price.calc_price(usage))

    monkeypatch.setattr(genai_prices, "calc_price", calc_price)


def test_a_recording_keeps_the_tables_rates_for_the_model_that_answered(tmp_path):
    path = tmp_path / "calls.jsonl"
    result = record(path)
    (entry,) = lines_of(path)
    assert entry["prices"] == GPT_4O
    assert sorted(entry) == ["events", "key", "model", "prices", "request"]
    assert result.cost.total == Decimal("0.0035")
    assert result.cost.source == TABLE  # the live call: today's table, as it was


def test_the_answering_model_is_the_one_priced(tmp_path):
    """The done event's responseModel (a server that ran another model than the one asked for) wins."""
    path = tmp_path / "calls.jsonl"
    model = scripted("gpt-4o")
    original = model.stream

    def stream(messages, *, options=None):
        for event in original(messages, options=options):
            yield {**event, "responseModel": "gpt-4o-mini"} if event["type"] == "done" else event

    model.stream = stream
    run_turn(Context(), "hi", model=ReplayModel(path, model=model, mode="record"))
    # gpt-4o-mini: $0.15 / $0.60 per million, cached input $0.075 (OpenAI's pricing page)
    assert lines_of(path)[0]["prices"]["rates"] == {"input": "0.15", "output": "0.6", "cache_read": "0.075"}


def test_a_replay_keeps_the_recorded_price_when_the_table_changes(tmp_path, request):
    path = tmp_path / "calls.jsonl"
    record(path)
    request.getfixturevalue("doubled_table")  # the table is updated after the recording
    result = replay(path)
    assert result.calls[0]["recordedPrices"] == GPT_4O
    assert result.cost.total == Decimal("0.0035")
    assert dict(result.cost.parts) == {"input": Decimal("0.0025"), "output": Decimal("0.001")}
    assert result.cost.source == f"recorded: {TABLE}"
    recorded, today = result.reprice()
    assert (recorded.total, today.total) == (Decimal("0.0035"), Decimal("0.007"))
    assert today.source == TABLE


def test_edited_recorded_rates_are_the_ones_a_replay_uses(tmp_path):
    path = tmp_path / "calls.jsonl"
    record(path)
    rewrite(path, lambda entry: entry["prices"].update(rates={"input": "5", "output": "20"}))
    result = replay(path)
    assert result.cost.total == Decimal("0.007")
    assert dict(result.cost.parts) == {"input": Decimal("0.005"), "output": Decimal("0.002")}
    repriced = result.reprice()
    assert isinstance(repriced, Repriced)
    assert repriced.today.total == Decimal("0.0035")
    assert repriced.delta == Decimal("-0.0035")
    assert str(repriced) == (f"recorded prices: $0.007 (recorded: {TABLE})\n"
                             f"today's prices:  $0.0035 ({TABLE})\n"
                             "Δ cost: -$0.0035")


def test_recorded_cache_read_rate_prices_cached_tokens(tmp_path):
    """400 of 1000 input tokens cached, recorded at input $2.50, cache read $0.50, output $10:
    600 × 2.5e-6 + 400 × 0.5e-6 + 100 × 10e-6 = $0.0015 + $0.0002 + $0.001 = $0.0027."""
    path = tmp_path / "calls.jsonl"
    record(path, usage={**USAGE, "prompt_tokens_details": {"cached_tokens": 400}})
    rewrite(path, lambda entry: entry["prices"]["rates"].update(cache_read="0.5"))
    result = replay(path)
    assert result.cost.total == Decimal("0.0027")
    assert result.cost.parts["cache_read"] == Decimal("0.0002")
    # today's table: cache read $1.25: 600 × 2.5e-6 + 400 × 1.25e-6 + 100 × 10e-6 = $0.003
    assert result.reprice().today.total == Decimal("0.003")


def test_an_old_recording_without_prices_is_priced_by_todays_table(tmp_path, doubled_table):
    path = tmp_path / "calls.jsonl"
    record(path)
    rewrite(path, lambda entry: entry.pop("prices"))
    result = replay(path)
    assert "recordedPrices" not in result.calls[0]
    assert result.cost.total == Decimal("0.007")  # the (changed) table of today
    assert result.cost.source == TABLE
    recorded, today = result.reprice()
    assert recorded == today
    assert result.reprice().delta == 0
    assert str(result.reprice()).endswith("Δ cost: none")


def test_prices_given_to_run_turn_win_over_recorded_ones(tmp_path):
    """$1 / $2 per million: 1000 × 1e-6 + 100 × 2e-6 = $0.0012."""
    path = tmp_path / "calls.jsonl"
    record(path)
    result = replay(path, prices={"gpt-4o": {"input": 1, "output": 2}})
    assert result.cost.total == Decimal("0.0012")
    assert result.cost.source == "prices="
    assert result.reprice().today.total == Decimal("0.0012")
    # another model's price does not touch this call's recorded one
    other = replay(path, prices={"my-model": {"input": 1, "output": 2}})
    assert other.cost.source == f"recorded: {TABLE}"
    # reprice's own prices= apply to today's side
    assert other.reprice(prices={"gpt-4o": {"input": 10, "output": 10}}).today.total == Decimal("0.011")


def test_a_model_the_table_does_not_know_gets_no_prices(tmp_path):
    path = tmp_path / "calls.jsonl"
    record(path, model="my-finetune")
    assert "prices" not in lines_of(path)[0]
    result = replay(path)
    assert result.cost.total is None
    assert result.cost.unpriced == ("my-finetune",)


def test_recording_never_fails_because_of_pricing(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the price table is broken")

    monkeypatch.setattr(replay_module, "table_prices", broken)
    path = tmp_path / "calls.jsonl"
    record(path)
    (entry,) = lines_of(path)
    assert "prices" not in entry
    assert entry["events"][-1]["type"] == "done"


def test_the_key_hashes_the_request_only(tmp_path):
    """The stored prices are not part of the key: it is the hash of the request alone, so a line keeps its
    key when prices are added to it (add_prices.py) or stripped."""
    path = tmp_path / "calls.jsonl"
    record(path)
    (entry,) = lines_of(path)
    assert "prices" in entry and entry["key"] == request_key(entry["request"])


def test_a_forged_recorded_prices_field_on_an_event_is_not_believed(tmp_path, doubled_table):
    """Only the line's checked ``prices`` are handed on; a done event's own ``recordedPrices`` is dropped."""
    path = tmp_path / "calls.jsonl"
    record(path)

    def forge(entry):
        entry.pop("prices")
        entry["events"][-1]["recordedPrices"] = "anything at all"

    rewrite(path, forge)
    result = replay(path)
    assert "recordedPrices" not in result.calls[0]
    assert result.cost.total == Decimal("0.007")


def test_re_recording_a_replay_keeps_the_first_recorded_price(tmp_path, doubled_table):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    record(first)  # under the doubled table: rates 5 / 20
    assert lines_of(first)[0]["prices"]["rates"] == {"input": "5", "output": "20"}
    rewrite(first, lambda entry: entry["prices"].update(rates={"input": "1", "output": "1"}))
    run_turn(Context(), "hi", model=ReplayModel(second, model=ReplayModel(first, mode="replay"), mode="record"))
    assert lines_of(second)[0]["prices"]["rates"] == {"input": "1", "output": "1"}


GOOD = GPT_4O


@pytest.mark.parametrize(("prices", "reason"), [
    ("cheap", "prices: must be an object {model, rates, source}, got str"),
    ([1, 2], "prices: must be an object {model, rates, source}, got list"),
    ({**GOOD, "tiers": []}, "exactly the keys model, rates, source; not so for 'tiers'"),
    ({"model": "gpt-4o", "rates": GOOD["rates"]}, "not so for 'source'"),
    ({**GOOD, "model": ""}, "prices.model: must be a non-empty string of at most 256 characters"),
    ({**GOOD, "model": "m" * 257}, "prices.model: must be a non-empty string of at most 256 characters"),
    ({**GOOD, "source": 3}, "prices.source: must be a non-empty string"),
    ({**GOOD, "rates": "2.5"}, "prices.rates: must be an object of at most 6 rates"),
    ({**GOOD, "rates": {f"k{i}": "1" for i in range(7)}}, "prices.rates: must be an object of at most 6 rates"),
    ({**GOOD, "rates": {"input": 2.5, "output": "10"}}, "prices.rates.input: must be a decimal string"),
    ({**GOOD, "rates": {"input": "1e3", "output": "10"}}, "prices.rates.input: must be a decimal string"),
    ({**GOOD, "rates": {"input": "-1", "output": "10"}}, "prices.rates.input: must be a decimal string"),
    ({**GOOD, "rates": {"input": "NaN", "output": "10"}}, "prices.rates.input: must be a decimal string"),
    ({**GOOD, "rates": {"input": "Infinity", "output": "10"}}, "prices.rates.input: must be a decimal string"),
    ({**GOOD, "rates": {"input": "1" * 13, "output": "10"}}, "prices.rates.input: must be a decimal string"),
    ({**GOOD, "rates": {"input": "2.5", "output": "1." + "0" * 13}}, "prices.rates.output: must be a decimal string"),
    ({**GOOD, "rates": {"input": "2.5"}}, "prices.rates.output: missing"),
    ({**GOOD, "rates": {"input": "2.5", "output": "10", "audio": "1"}}, "prices.rates.audio: not a price key"),
    ({**GOOD, "rates": {"input": "1", "output": "1", "cache_write_1h": "1"}}, "needs 'cache_write' too"),
])
def test_a_hostile_recorded_price_refuses_the_file(tmp_path, prices, reason):
    path = tmp_path / "calls.jsonl"
    record(path)
    rewrite(path, lambda entry: entry.update(prices=prices))
    with pytest.raises(ReplayFileError) as refused:
        ReplayModel(path, mode="replay")
    message = str(refused.value)
    assert f"{path} line 1 has a bad recorded price: " in message
    assert reason in message
    assert message.endswith("refusing the file (re-record it)")


def test_table_prices_keeps_a_tiered_prices_base_tier():
    """Claude Sonnet 4.5 (Anthropic's pricing page): $3 / $15 per million, cache read $0.30, cache write
    $3.75 (5 minutes) and $6 (1 hour) up to 200k input tokens; the base tier is what is kept."""
    kept = table_prices({"input_tokens": 10, "output_tokens": 1}, "claude-sonnet-4-5", "anthropic")
    assert kept == {"model": "claude-sonnet-4-5", "source": TABLE, "rates": {
        "input": "3", "output": "15", "cache_read": "0.3", "cache_write": "3.75", "cache_write_1h": "6"}}
    assert table_prices(USAGE, "openai:gpt-4o") == GPT_4O  # the kit's provider:model spec
    assert table_prices(USAGE, "no-such-model-anywhere") is None
    assert table_prices(USAGE, None) is None


def test_a_call_the_recorded_rates_cannot_price_is_priced_by_the_table():
    """Web searches are a charge a recording does not keep: such a call is priced by today's table."""
    usage = {"input_tokens": 1000, "output_tokens": 100, "server_tool_use": {"web_search_requests": 1}}
    assert recorded_cost(usage, GPT_4O) is None
    priced = cost_of_calls([{"usage": usage, "model": "gpt-4o", "recordedPrices": GPT_4O}])
    assert priced.source == TABLE


def test_a_hand_built_call_with_a_bad_recorded_price_names_it():
    with pytest.raises(PriceError, match=r"calls\[1\]\.recordedPrices\.rates\.input: must be a decimal string"):
        cost_of_calls([{"usage": USAGE, "model": "gpt-4o"},
                       {"usage": USAGE, "model": "gpt-4o", "recordedPrices": {**GPT_4O, "rates": {"input": 1}}}])


def test_recorded_and_table_costs_add_with_both_sources():
    total = cost_of_calls([{"usage": USAGE, "model": "gpt-4o"},
                           {"usage": USAGE, "model": "gpt-4o", "recordedPrices": GPT_4O}])
    assert total.total == Decimal("0.007")
    assert total.source == f"{TABLE} + recorded: {TABLE}"


def test_repriced_shows_the_recorded_price_beside_todays(doubled_table):
    """Recorded at $2.50 / $10 per million (1000 x 2.5 + 100 x 10 = $0.0035), today $5 / $20 ($0.007)."""
    calls = [{"usage": USAGE, "model": "gpt-4o", "recordedPrices": GPT_4O}]
    repriced = Repriced(cost_of_calls(calls), cost_of_calls(calls, recorded=False))
    assert (repriced.recorded.total, repriced.today.total, repriced.delta) == (
        Decimal("0.0035"), Decimal("0.007"), Decimal("0.0035"))


def test_a_contexts_lifetime_cost_keeps_the_recorded_price_too(tmp_path):
    """The context ledger (Context.cost, %agentctx usage) prices a replayed call as the turn does: at the
    recorded rates (edited to $5 / $20 per million: 1000 x 5 + 100 x 20 = $0.007), not today's $0.0035."""
    path = tmp_path / "calls.jsonl"
    record(path)
    rewrite(path, lambda entry: entry["prices"].update(rates={"input": "5", "output": "20"}))
    context = Context(name="replayed")
    result = run_turn(context, "hi", model=ReplayModel(path, model=scripted(), mode="replay"))
    assert result.cost.total == Decimal("0.007")
    assert context.cost.total == Decimal("0.007") and context.cost.source == f"recorded: {TABLE}"
