"""What a suite's turns cost (issue 23): kept in the suite file when recorded, checked at the recorded prices
(a table update changes no check), ``reprice()`` beside today's, Δ cost in the report and the diff, old suite
files with no cost, ``prices=`` kept in the header, and ``Suite.record(budget=…)``.

Figures by hand: gpt-4o costs $2.50 / $10.00 per million input / output tokens (OpenAI's price page), so a
call of 1000 prompt and 100 completion tokens costs 1000 * 2.5e-6 + 100 * 10e-6 = $0.0025 + $0.001 = $0.0035."""

from __future__ import annotations

from decimal import Decimal

import genai_prices
import orjson
import pytest

from agentctx_widgets import hooks_from_js
from agentctx_widgets.context.cost import PriceError
from agentctx_widgets.models import ScriptedModel
from agentctx_widgets.suite import Suite, SuiteBudgetExceeded, SuiteFileError, diff

USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}
CALL = Decimal("0.0035")
CASES = ["hi", ["one", "two"]]  # three turns, one model call each: 3 * $0.0035 = $0.0105
DOUBLED = {"gpt-4o": {"input": 5.0, "output": 20.0}}  # "today's table": every gpt-4o price twice what it was
DROP_TOOL_CALLS = "function Before(ctx, messages, response) { response.tool_calls = []; return { response }; }"


def lookup(order: str) -> str:
    """Where an order is."""
    return f"order {order} ships on Friday"


def answer(messages):
    """A tool call for the user's question, then the answer once the tool's result is in."""
    if messages[-1]["type"] == 2:
        return {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"order": "42"}}]}
    return "It ships on Friday."


def gpt_4o(reply=lambda messages: "You said " + messages[-1]["content"][0]["text"], **usage):
    return ScriptedModel(reply, usage=usage or USAGE, model="gpt-4o")


def lines(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture
def suite(tmp_path):
    return Suite.record(tmp_path / "suite.jsonl", CASES, model=gpt_4o(), concurrency=1)


def test_each_recorded_turn_keeps_its_calls_and_cost_and_the_header_names_the_table(suite):
    header, first, second = lines(suite.path)
    assert header["priceSource"] == f"genai-prices {genai_prices.__version__} (bundled data)" and "prices" not in header
    turn = first["results"][0]
    assert turn["cost"]["total"] == 0.0035 and turn["cost"]["parts"] == {"input": 0.0025, "output": 0.001}
    assert turn["cost"]["source"] == header["priceSource"] and turn["cost"]["estimated"] is False
    assert turn["calls"] == [{"usage": {"inputTokens": 1000, "outputTokens": 100, "totalTokens": 1100,
                                        "source": "provider"}, "model": "gpt-4o", "cost": turn["cost"]}]
    assert [result["cost"]["total"] for result in second["results"]] == [0.0035, 0.0035]
    assert suite.cost.total == 3 * CALL and suite.price_source == header["priceSource"]


def test_a_check_costs_what_the_recording_cost_and_says_so(suite):
    report = suite.check()
    assert report.ok and report.cost.total == report.recorded_cost.total == Decimal("0.0105")
    assert [(case.recorded_cost.total, case.cost.total, case.cost_delta) for case in report.cases.values()] == [
        (CALL, CALL, 0), (2 * CALL, 2 * CALL, 0)]
    assert str(report) == "2 cases: 2 passed\ncost: recorded $0.0105, checked $0.0105"


def test_a_table_update_changes_no_check_and_reprice_shows_both(suite):
    report = suite.check(prices=DOUBLED)  # today's prices stand in for an updated table
    assert report.cost.total == Decimal("0.0105") and report.cost_line() == "cost: recorded $0.0105, checked $0.0105"
    repriced = report.reprice()
    assert [(case, then.total, now.total) for case, then, now in repriced.rows] == [
        ("case-1", CALL, 2 * CALL), ("case-2", 2 * CALL, 4 * CALL)]
    assert repriced.delta == Decimal("0.0105")
    text = str(repriced).splitlines()
    assert text[0].split() == ["case", "recorded", "prices", "today's", "prices", "Δ", "cost"]
    assert text[1].split() == ["case-1", "$0.0035", "$0.007", "+$0.0035"]
    assert text[3].split() == ["total", "$0.0105", "$0.021", "+$0.0105"]
    assert text[4] == (f"recorded prices: genai-prices {genai_prices.__version__} (bundled data); today's prices: "
                       "prices=")
    html = repriced.to_html()
    assert '<tr class="actx-suite-total"><td>total</td><td>$0.0105</td><td>$0.021</td><td>+$0.0105</td></tr>' in html
    # Suite.reprice: the recorded turns, no check needed; without prices= today's table is the same table
    again = suite.reprice()
    assert again.recorded.total == again.today.total == Decimal("0.0105") and again.delta == 0


def test_a_model_the_updated_table_dropped_keeps_its_recorded_price_and_reprices_unpriced(suite, monkeypatch):
    def no_prices(*args, **kwargs):
        raise LookupError("no such model")

    monkeypatch.setattr(genai_prices, "calc_price", no_prices)
    report = suite.check()
    assert report.cost.total == Decimal("0.0105") and report.cost.complete
    repriced = report.reprice()
    assert repriced.today.total is None and repriced.today.unpriced == ("gpt-4o",)
    assert str(repriced).splitlines()[3].split() == ["total", "$0.0105", "unpriced", "—"]


def test_a_hook_that_drops_the_tool_call_costs_one_call_less_in_the_report_and_the_diff(tmp_path):
    recorded = Suite.record(tmp_path / "tools.jsonl", ["where is 42?"], model=gpt_4o(answer), tools=[lookup],
                            concurrency=1)
    assert recorded.cost.total == 2 * CALL  # the tool call, then the answer
    report = recorded.check(hooks=hooks_from_js(DROP_TOOL_CALLS), tools=[lookup], prices=DOUBLED)
    case = report.cases["case-1"]
    # one call fewer, priced as recorded (not at the doubled prices): $0.007 -> $0.0035
    assert (case.status, case.tokens_delta, case.cost.total, case.cost_delta) == ("changed", -1100, CALL, -CALL)
    assert "usage" in case.summary and "cost" in case.summary
    text = str(case.diff)
    assert "  usage.totalTokens: 2200 -> 1100 (-1100)\n  cost: $0.007 -> $0.0035 (-$0.0035)" in text
    assert report.cost_line() == "cost: recorded $0.007, checked $0.0035 (Δ -$0.0035)"
    html = report.to_html()
    assert '<td class="actx-diff-path">cost</td>' in html and '<span class="actx-diff-delta">(-$0.0035)</span>' in html
    assert '<td class="actx-suite-n">-1100</td>' in html and '<td class="actx-suite-n">-$0.0035</td></tr>' in html
    assert ">$0.007</span>" in html and ">$0.0035</span>" in html


def test_the_diff_of_two_turn_results_shows_the_cost_when_the_usage_changed():
    from agentctx_widgets import Context, run_turn

    small = run_turn(Context(), "hi", model=gpt_4o())
    large = run_turn(Context(), "hi", model=gpt_4o(prompt_tokens=2000, completion_tokens=100))
    text = str(diff(small, large))  # 2000 * 2.5e-6 + 100 * 1e-5 = $0.006
    assert "  usage.inputTokens: 1000 -> 2000 (+1000)" in text and "  cost: $0.0035 -> $0.006 (+$0.0025)" in text
    assert "cost" not in str(diff(small, run_turn(Context(), "hi", model=gpt_4o())))  # same usage: no cost line


def test_an_old_suite_file_without_costs_loads_and_checks_and_says_not_recorded(suite):
    header, *cases = lines(suite.path)
    for case in cases:
        for turn in case["results"]:
            del turn["cost"], turn["calls"]
    del header["priceSource"]
    suite.path.write_bytes(b"\n".join(orjson.dumps(line) for line in [header, *cases]) + b"\n")
    old = Suite(suite.path)
    assert old.cost is None and old.price_source is None
    report = old.check()
    assert report.ok and report.recorded_cost is None and report.cost.total == Decimal("0.0105")  # today's table
    assert report.cost_line() == "cost: not recorded in this suite file; checked $0.0105 at today's prices"
    html = report.to_html()
    assert html.count(">not recorded</span>") == 3 and "<td class=\"actx-suite-n\">—</td></tr></table>" in html
    assert str(old.reprice()).splitlines()[-2].split() == ["total", "not", "recorded", "not", "recorded", "—"]


def test_prices_given_to_record_price_every_turn_and_are_kept_for_check(tmp_path):
    mine = {"my-model": {"input": 1, "output": 2}}  # 1000 * 1e-6 + 100 * 2e-6 = $0.0012 a call
    model = ScriptedModel("ok", usage=USAGE, model="my-model")
    recorded = Suite.record(tmp_path / "mine.jsonl", CASES, model=model, prices=mine, concurrency=1)
    header = lines(recorded.path)[0]
    assert header["prices"] == mine and header["priceSource"] == "prices="
    again = Suite(recorded.path)
    assert again.prices == mine and again.cost.total == Decimal("0.0036")
    report = again.check()
    assert report.cost.total == Decimal("0.0036") and report.reprice().today.total == Decimal("0.0036")
    with pytest.raises(PriceError, match=r"Suite.record\(prices=…\): prices\['x'\].output: missing"):
        Suite.record(tmp_path / "bad.jsonl", CASES, model=model, prices={"x": {"input": 1}})
    assert not (tmp_path / "bad.jsonl").exists()


def test_estimated_and_unpriced_costs_read_as_such_never_as_zero(tmp_path):
    estimated = Suite.record(tmp_path / "est.jsonl", ["hi"], model=ScriptedModel("hello", model="gpt-4o"))
    report = estimated.check()
    # the kit estimates 2 input and 2 output tokens: 2 * 2.5e-6 + 2 * 10e-6 = $0.000025, marked as an estimate
    assert report.cost.estimated and report.cost_line() == "cost: recorded ≈$0.000025, checked ≈$0.000025"
    assert ">≈$0.000025</span>" in report.to_html()
    unpriced = Suite.record(tmp_path / "unpriced.jsonl", ["hi"], model=ScriptedModel("hello", usage=USAGE))
    report = unpriced.check()
    assert report.cost.total is None and report.cost_line().startswith("cost: recorded unpriced, checked unpriced\n")
    assert ">unpriced</span>" in report.to_html() and "$0<" not in report.to_html()


def test_a_suite_budget_stops_recording_once_passed_and_writes_nothing(tmp_path):
    model = gpt_4o()
    path = tmp_path / "budget.jsonl"
    with pytest.raises(SuiteBudgetExceeded) as caught:
        Suite.record(path, ["a", "b", "c"], model=model, budget=0.005, concurrency=1)
    assert str(caught.value) == ("Suite.record stopped: the turns recorded so far cost $0.007, over the budget $0.005 "
                                 f"(after turn 1 of case 'case-2'); nothing written to {path} (a suite file is written "
                                 "whole or not at all)")
    assert (caught.value.spent, caught.value.budget) == (2 * CALL, Decimal("0.005"))
    assert len(model.calls) == 2 and not path.exists()  # the third case never ran
    exact = Suite.record(path, ["a", "b", "c"], model=gpt_4o(), budget=Decimal("0.0105"), concurrency=2)
    assert exact.cost.total == Decimal("0.0105")  # reaching the budget is not passing it


def test_a_suite_budget_stops_a_turn_as_it_streams_not_only_after_it(tmp_path):
    """The turn gets what is left of the suite's budget (run_turn(budget=)): a 30,000-word reply from gpt-4o
    (about 40,000 output tokens, $0.40 at $10 per million) is stopped a few tokens past $0.001, where
    counting only finished turns spent it all."""
    path = tmp_path / "long.jsonl"
    with pytest.raises(SuiteBudgetExceeded) as caught:
        Suite.record(path, ["a"], model=ScriptedModel(["word " * 30_000], model="gpt-4o"), budget=0.001, concurrency=1)
    assert Decimal("0.001") < caught.value.spent < Decimal("0.0011")
    assert not path.exists()


def test_a_budget_cannot_be_kept_for_an_unpriced_model_and_must_be_a_positive_amount(tmp_path):
    with pytest.raises(SuiteBudgetExceeded, match=r"turn 1 of case 'case-1' used a model no price is known for "
                                                  r"\(scripted\), so the budget \$1 cannot be kept: give its price"):
        Suite.record(tmp_path / "x.jsonl", ["a"], model=ScriptedModel("ok"), budget=1)
    for bad in (0, -1, True, "1", float("inf")):
        with pytest.raises((TypeError, ValueError), match=r"Suite\.record\(budget=…\): expected a (finite )?number of US "
                                                         r"dollars"):  # run_turn's rule and words
            Suite.record(tmp_path / "x.jsonl", ["a"], model=ScriptedModel("ok"), budget=bad)
    assert not (tmp_path / "x.jsonl").exists()


def test_a_bad_cost_or_price_in_the_file_is_refused_naming_the_line(suite):
    header, *cases = lines(suite.path)
    cases[1]["results"][1]["cost"]["total"] = "a lot"
    suite.path.write_bytes(b"\n".join(orjson.dumps(line) for line in [header, *cases]) + b"\n")
    with pytest.raises(SuiteFileError, match=r"suite.jsonl:3: case 'case-2' turn 2: Cost.from_dict: total must be a "
                                             "finite number"):
        Suite(suite.path)
    header["prices"] = {"gpt-4o": {"input": 1}}
    suite.path.write_bytes(b"\n".join(orjson.dumps(line) for line in [header]) + b"\n")
    with pytest.raises(SuiteFileError, match=r"suite.jsonl:1: the header's prices: prices\['gpt-4o'\].output: missing"):
        Suite(suite.path)
