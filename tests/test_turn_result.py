"""One result base for both lifecycles (issue 19): ``TurnResult`` (the seed's) and ``YaoTurnResult``
(today's Yao request) share their common fields, ``ok``, the check that raises ``TurnError`` and the
repr through ``hooks.turn_result.TurnOutcome``; each prints as it did before the base existed."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from agentctx_widgets import Context, ScriptedModel, TurnError, run_turn
from agentctx_widgets.hooks.runner import TurnResult
from agentctx_widgets.hooks.turn_result import TurnOutcome, checked
from agentctx_widgets.yao.runner import YaoTurnResult, run_assistant

SHARED = ["response", "usage", "error", "diagnostics", "hooks_called", "console", "calls", "prices"]


class _Assistant:
    id = "tests.plain"
    prompts = [{"role": "system", "content": "be brief"}]


@pytest.mark.parametrize("cls", [TurnResult, YaoTurnResult])
def test_both_results_hold_the_shared_fields_from_the_one_base(cls):
    assert issubclass(cls, TurnOutcome)
    own = {f.name: f for f in dataclasses.fields(cls)}
    base = {f.name: f for f in dataclasses.fields(TurnOutcome)}
    assert list(base) == SHARED
    for name in SHARED:
        assert name not in cls.__dict__.get("__annotations__", {}), f"{cls.__name__} declares {name} again"
        assert own[name].default is base[name].default and own[name].default_factory is base[name].default_factory
    shown = {name for name, f in own.items() if f.repr}
    assert set(cls.REPR_FIELDS) == shown and len(cls.REPR_FIELDS) == len(shown) and "prices" not in shown


def test_the_seed_result_prints_as_before():
    result = TurnResult(response={"a": 1}, usage={"u": 2}, output=[{"o": 1}], error={"message": "x"}, retries=2,
                        diagnostics=[{"d": 1}], console=[{"c": 1}], hooks_called=["Create"])
    assert repr(result) == (
        "TurnResult(response={'a': 1}, usage={'u': 2}, output=[{'o': 1}], chunks=[], console=[{'c': 1}], "
        "hooks_called=['Create'], timings={}, error={'message': 'x'}, retries=2, model_messages=[], calls=[], "
        "tool_results=[], diagnostics=[{'d': 1}])")


def test_the_yao_result_prints_as_before():
    result = YaoTurnResult(response={"r": 1}, next=3, events=[{"e": 1}], usage={"u": 1}, error={"message": "m"},
                           hooks_called=["Next"], console=[{"c": 2}], accept="standard", trace={"t": 1})
    assert repr(result) == (
        "YaoTurnResult(response={'r': 1}, next=3, events=[{'e': 1}], messages=[], usage={'u': 1}, "
        "error={'message': 'm'}, diagnostics=[], hooks_called=['Next'], console=[{'c': 2}], model_messages=[], "
        "model_options=[], accept='standard', trace={'t': 1}, calls=[])")


def test_a_result_that_holds_itself_prints_without_recursing():
    result = TurnResult()
    result.response = {"self": result}
    assert repr(result).startswith("TurnResult(response={'self': ...}, usage=None")


@pytest.mark.parametrize("cls", [TurnResult, YaoTurnResult])
def test_ok_and_the_check_are_the_bases(cls):
    good = cls(response={"x": 1})
    assert good.ok and good.raise_for_error() is good and checked(good, True) is good
    bad = cls(error={"message": "the server hung up", "code": "NETWORK"})
    assert not bad.ok and checked(bad, False) is bad
    with pytest.raises(TurnError) as raised:
        checked(bad, True)
    assert raised.value.result is bad and raised.value.code == "NETWORK"
    assert "the server hung up" in str(raised.value)


def test_both_lifecycles_return_the_base():
    seed = run_turn(Context(), "hi", model=ScriptedModel(["Hello"]))
    yao = run_assistant(Context(), "hi", assistant=_Assistant(), model=ScriptedModel(["Hi"]))
    assert isinstance(seed, TurnResult) and isinstance(yao, YaoTurnResult)
    for result in (seed, yao):
        assert isinstance(result, TurnOutcome) and result.ok and result.usage["totalTokens"] > 0


# gpt-4o on OpenAI's price page: $2.50 per million input tokens, $10.00 per million output tokens.
GPT_4O_CALL = Decimal("1000") * Decimal("2.50") / 1_000_000 + Decimal("100") * Decimal("10.00") / 1_000_000


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"21°C in {city}"


def test_a_seed_turn_costs_each_of_its_model_calls_priced_as_the_model_that_answered():
    call = {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"city": "Oslo"}}]}
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    result = run_turn(Context(), "weather?", model=ScriptedModel([call, "21°C"], usage=usage, model="gpt-4o"),
                      tools=[lookup])
    assert result.ok and len(result.calls) == 2 and result.calls[0]["model"] == "gpt-4o"
    assert result.cost.total == 2 * GPT_4O_CALL == Decimal("0.0070")
    assert result.cost.calls == 2 and not result.cost.estimated and result.cost.unpriced == ()
    assert result.cost.parts["input"] == Decimal("0.0050") and result.cost.parts["output"] == Decimal("0.0020")


def test_a_yao_request_keeps_its_calls_and_costs_them_too():
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    result = run_assistant(Context(), "hi", assistant=_Assistant(),
                           model=ScriptedModel(["Hi"], usage=usage, model="gpt-4o"))
    assert result.ok and [call["usage"]["inputTokens"] for call in result.calls] == [1000]
    assert result.cost.total == GPT_4O_CALL


def test_an_unknown_model_is_unpriced_never_free_until_prices_say_so():
    result = run_turn(Context(), "hi", model=ScriptedModel(["Hello"]))
    assert result.cost.total is None and result.cost.unpriced == ("scripted",) and result.cost.estimated
    result.prices = {"scripted": "free"}
    assert result.cost.total == 0 and result.cost.free
    assert TurnResult().cost.total == 0 and TurnResult().cost.calls == 0
