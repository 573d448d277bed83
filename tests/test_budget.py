"""``run_turn(budget=..., prices=...)`` (issue 23): a turn whose running cost would pass its budget is
stopped — the stream closed, nothing committed, ``BUDGET_EXCEEDED`` saying what was spent of what.

Every expected figure is worked out here by hand from OpenAI's published gpt-4o prices ($2.50 per million
input tokens, $10.00 per million output tokens) and the kit's token estimate (``context.usage``:
``ceil(words × 4/3)`` tokens), never read off this code's output. The streaming case runs against the
real loopback chat-completions server (``wire_server.py``) through the real ``openai`` SDK; its stop time
(the chunk that passed the budget reaching the client → ``run_turn`` back, and → the server seeing the
connection closed) is printed (``pytest -s``) and recorded as the test's ``stop_ms`` / ``server_ms``
properties (``--junitxml``), never compared with a bound: the test waits on events, not on a clock.
"""

from __future__ import annotations

import json
import math
import threading
import time
from decimal import Decimal
from typing import Any

import pytest

from agentctx_widgets import Context, ScriptedModel, hooks_from_python, run_turn
from agentctx_widgets.context.cost import PriceError
from agentctx_widgets.hooks.errors import TurnError
from agentctx_widgets.models import CODES, OpenAIChatModel
from magic_shell import assert_error, assert_turn_failure, ip, line, names, shell  # noqa: F401 - ip, shell: fixtures
from wire_server import Reply, WireServer

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing

IN, OUT = Decimal("2.50") / 1_000_000, Decimal("10.00") / 1_000_000
"""gpt-4o on OpenAI's price page: US dollars per input token, per output token."""

USER_HI = [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]


def chunk(text: str, model: str = "gpt-4o") -> str:
    return ('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"%s",'
            '"choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}\n\n' % (model, text))


class View:
    """What the runner needs of a view; notes when the pending text first holds ``mark``."""

    def __init__(self, mark: str = "") -> None:
        self.mark, self.seen_at, self.last = mark, None, None

    def write(self, messages: list[dict]) -> None:
        pass

    def set_pending(self, message: dict | None) -> None:
        self.last = None if message is None else json.loads(json.dumps(message))
        text = "".join(b.get("text", "") for b in (self.last or {}).get("content") or [])
        if self.mark and self.seen_at is None and self.mark in text:
            self.seen_at = time.perf_counter()


# -- a streaming turn, against a real server ---------------------------------------------------------


def test_a_streaming_turn_that_passes_its_budget_is_stopped_mid_stream_and_commits_nothing(record_property):
    # input "hi": 1 word -> 2 tokens -> $0.000005. Budget $0.001 leaves $0.000995: 99 output tokens at
    # $0.00001. One word a chunk: after 75 words the estimate is ceil(75 × 4/3) = 100 tokens > 99, so the
    # 75th chunk ("w74 ") passes it: spent 0.000005 + 100 × 0.00001 = $0.001005, shown $0.00101.
    body = [chunk(f"w{i} ") for i in range(300)]  # 6 s at 20 ms a chunk; the stop comes at ~1.5 s
    context, view = Context(), View(mark="w74 ")
    with WireServer(Reply(body, delay=0.02)) as server:
        closed_at: list[float] = []
        waiter = threading.Thread(target=lambda: server.disconnected.wait(30) and closed_at.append(time.perf_counter()))
        waiter.start()
        model = OpenAIChatModel("gpt-4o", base_url=server.url, api_key="test")
        result = run_turn(context, "hi", model=model, view=view, budget=0.001, check=False)
        returned_at = time.perf_counter()
        waiter.join(30)
        assert server.disconnected.is_set()  # the server saw the connection closed before it wrote all 300 chunks
        assert len(server.requests) == 1
    assert result.error["code"] == "BUDGET_EXCEEDED"
    assert result.error["message"] == ("the turn's cost passed its budget: spent ≈$0.00101 of $0.001 (estimated); "
                                       "the model stream was closed and nothing was committed")
    assert result.error["spent"] == 0.001005 and result.error["budget"] == 0.001 and result.error["estimated"] is True
    assert context.messages() == USER_HI  # the input stays, as after an interrupt; nothing of the reply
    partial = view.last
    assert partial["error"] == {"message": result.error["message"]}
    assert partial["content"][0]["text"] == "".join(f"w{i} " for i in range(75))  # stopped at the chunk that passed
    assert result.calls == [{"usage": {"inputTokens": 2, "outputTokens": 100, "totalTokens": 102, "source": "estimate"},
                             "model": "gpt-4o", "provider": "openai", "stopped": "budget"}]
    assert result.cost.total == 2 * IN + 100 * OUT == Decimal("0.001005") and result.cost.estimated
    stop_ms, server_ms = (returned_at - view.seen_at) * 1000, (closed_at[0] - view.seen_at) * 1000
    assert math.isfinite(stop_ms) and stop_ms >= 0 and math.isfinite(server_ms) and server_ms >= 0
    print(f"budget stop: chunk that passed it -> run_turn returned {stop_ms:.1f} ms, -> server saw the close "
          f"{server_ms:.1f} ms (20 ms between chunks)")
    record_property("stop_ms", round(stop_ms, 1))
    record_property("server_ms", round(server_ms, 1))


def test_a_stopped_turn_raises_turn_error_with_check_and_the_next_turn_works():
    context = Context()
    model = ScriptedModel(["word " * 2000], chunk_size=5, model="gpt-4o")
    with pytest.raises(TurnError) as raised:
        run_turn(context, "hi", model=model, budget=Decimal("0.001"))
    assert raised.value.code == "BUDGET_EXCEEDED" and "spent ≈$0.00101 of $0.001" in str(raised.value)
    assert "raise it" in str(raised.value)  # the hint
    assert raised.value.result.response is None and context.messages() == USER_HI
    after = run_turn(context, "again", model=ScriptedModel(["fine"], model="gpt-4o"), budget=1)
    assert after.ok and context.at(-1)["content"][0]["text"] == "fine"


def test_the_error_hook_is_not_asked_to_retry_a_turn_the_budget_stopped():
    asked: list[Any] = []
    hooks = hooks_from_python({"Error": lambda ctx, messages, error: (asked.append(error), {"retry": True})[1]})
    model = ScriptedModel(["word " * 2000], chunk_size=5, model="gpt-4o")
    result = run_turn(Context(), "hi", model=model, hooks=hooks, budget=0.001, check=False)
    assert result.error["code"] == "BUDGET_EXCEEDED" and asked == [] and result.retries == 0
    assert len(model.calls) == 1
    assert result.output[-1] == {"type": "error", "props": {"message": result.error["message"], "code": "BUDGET_EXCEEDED"}}


def test_a_call_whose_input_alone_passes_the_budget_is_not_made():
    # 3000 words -> 4000 tokens -> 4000 × $0.0000025 = $0.01 > $0.005
    context, model = Context(), ScriptedModel(["never"], model="gpt-4o")
    result = run_turn(context, "word " * 3000, model=model, budget=0.005, check=False)
    assert result.error["code"] == "BUDGET_EXCEEDED" and model.calls == []
    assert result.error["message"] == ("the turn's cost would pass its budget: spent $0 of $0.005, and the next model "
                                       "call's input alone would cost ≈$0.01 (estimated); the call was not made and "
                                       "nothing was committed")
    assert result.calls == [] and result.cost.total == 0 and len(context) == 1


# -- tool round trips: the budget covers every call ------------------------------------------------


def lookup(city: str) -> str:
    """The weather in a city."""
    return f"21°C in {city}"


CALL = {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"city": "Oslo"}}]}
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}  # a call: 1000 × $0.0000025 + 100 × $0.00001 = $0.0035


def test_text_without_spaces_is_metered_by_its_characters_too():
    """Twenty thousand CJK characters are one "word" to the kit's estimate: the meter also counts a token
    per four characters. gpt-4o, budget $0.001: "hi" estimates at 2 input tokens ($0.000005), which leaves
    $0.000995 = 99 output tokens at $10 per million; 100-character chunks reach 100 tokens at the 4th."""
    context = Context()
    model = ScriptedModel(["数" * 20_000], model="gpt-4o", chunk_size=100)
    result = run_turn(context, "hi", model=model, budget=0.001, check=False)
    assert result.error["code"] == "BUDGET_EXCEEDED", result.error
    assert result.calls[-1]["usage"]["outputTokens"] == 100 and result.calls[-1]["stopped"] == "budget"
    assert len(context) == 1  # the input stays, nothing of the reply is committed


class _Unnamed:
    """A custom model with no ``model`` attribute: only its stream's start says what it is."""

    def stream(self, messages, options=None):
        yield {"type": "start", "model": "gpt-4o", "provider": "openai"}
        yield {"type": "text_delta", "contentIndex": 0, "delta": "hello"}
        yield {"type": "done", "stopReason": "stop", "usage": {"inputTokens": 5000, "outputTokens": 2}}


def test_a_call_whose_start_names_a_model_too_dear_for_its_input_is_counted_as_made():
    """The stream was open (the provider bills the input), so the call is in result.calls and the message
    does not say "not made": 3,000 words estimate at 4,000 input tokens, $0.01 at $2.50 per million."""
    result = run_turn(Context(), "word " * 3000, model=_Unnamed(), budget=0.001, check=False)
    assert result.error["code"] == "BUDGET_EXCEEDED" and "not made" not in result.error["message"]
    assert "spent ≈$0.01 of $0.001" in result.error["message"]
    assert [(c["model"], c["usage"]["inputTokens"], c["stopped"]) for c in result.calls] == [("gpt-4o", 4000, "budget")]


def test_a_tool_round_trip_whose_second_call_passes_the_budget_fails_and_takes_the_round_back():
    context = Context()
    model = ScriptedModel([CALL, "21°C"], usage=USAGE, model="gpt-4o")
    result = run_turn(context, "weather?", model=model, tools=[lookup], budget=0.005, check=False)
    # the first call ($0.0035) fits; the second's reported usage makes $0.0070 > $0.005, once its done came
    assert result.error["code"] == "BUDGET_EXCEEDED" and len(model.calls) == 2
    assert result.error["message"] == ("the turn's cost passed its budget: spent $0.007 of $0.005; the model stream "
                                       "was closed and nothing was committed")
    assert result.error["spent"] == 0.007 and result.error["estimated"] is False
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "weather?"}]}]  # no tool round
    assert len(result.tool_results) == 1  # the tool ran once, before the second call
    assert [call.get("stopped") for call in result.calls] == [None, "budget"]
    assert result.cost.total == 2 * (1000 * IN + 100 * OUT) == Decimal("0.0070") and not result.cost.estimated


def test_a_turn_that_spends_exactly_its_budget_passes_nothing():
    result = run_turn(Context(), "weather?", model=ScriptedModel([CALL, "21°C"], usage=USAGE, model="gpt-4o"),
                      tools=[lookup], budget=Decimal("0.007"))
    assert result.ok and result.cost.total == Decimal("0.0070")


# -- a Yao assistant's request ---------------------------------------------------------------------


class _Assistant:
    id = "tests.budget"
    prompts = [{"role": "system", "content": "be brief"}]


def test_a_yao_request_that_passes_its_budget_is_stopped_and_commits_nothing():
    # input: "be brief" + "hi" = 3 words -> 4 tokens -> $0.00001; $0.00099 left: 99 output tokens; the 75th
    # word makes 100: spent 0.00001 + 0.001 = $0.00101
    context = Context()
    model = ScriptedModel(["word " * 2000], chunk_size=5, model="gpt-4o")
    result = run_turn(context, "hi", assistant=_Assistant(), model=model, budget=0.001, check=False)
    assert result.error["code"] == "BUDGET_EXCEEDED"
    assert result.error["message"] == ("the turn's cost passed its budget: spent ≈$0.00101 of $0.001 (estimated); "
                                       "the model stream was closed and nothing was committed")
    assert context.messages() == USER_HI
    end = result.events[-1]["props"]
    assert end["event"] == "stream_end" and end["data"]["status"] == "error"
    assert end["data"]["error"] == result.error["message"]
    streamed = "".join(m["props"].get("content", "") for m in result.messages if m.get("type") == "text")
    assert streamed.startswith("word word ") and streamed.count("word") < 100  # the stream stopped early
    assert result.cost.total == 4 * IN + 100 * OUT == Decimal("0.00101")
    assert result.calls[-1]["stopped"] == "budget"


def test_a_yao_request_with_a_tool_loop_is_stopped_by_the_budget_not_sent_to_the_loop_fallback():
    class WithTools(_Assistant):
        mcp = {"options": {}}

    context = Context()
    model = ScriptedModel([CALL, CALL, "done"], usage=USAGE, model="gpt-4o")
    result = run_turn(context, "weather?", assistant=WithTools(), model=model, tools=[lookup], budget=0.005,
                      check=False)
    assert result.error["code"] == "BUDGET_EXCEEDED" and len(model.calls) == 2
    assert result.error["spent"] == 0.007 and len(context) == 1


# -- prices, an unpriced model, bad budgets ----------------------------------------------------------


def test_prices_given_to_run_turn_show_up_in_the_result_cost_for_both_lifecycles():
    prices = {"my-model": {"input": 1.0, "output": 2.0}}  # 1000 × $1/M + 100 × $2/M = $0.0012
    for extra in ({}, {"assistant": _Assistant()}):
        result = run_turn(Context(), "hi", model=ScriptedModel(["ok"], usage=USAGE, model="my-model"), prices=prices,
                          **extra)
        assert result.prices == prices
        assert result.cost.total == Decimal("0.0012") and result.cost.source == "prices="


def test_a_priced_local_model_keeps_to_a_budget():
    model = ScriptedModel(["word " * 2000], chunk_size=5, model="my-local")
    free = run_turn(Context(), "hi", model=model, prices={"my-local": "free"}, budget=0.0001)
    assert free.ok and free.cost.total == 0 and free.cost.free
    model = ScriptedModel(["word " * 2000], chunk_size=5, model="my-local")
    # $10 per million output tokens: $0.0001 leaves 0.0001 - 2 × $1/M = $0.000098 -> 9 tokens; the 7th word makes 10
    paid = run_turn(Context(), "hi", model=model, prices={"my-local": {"input": 1, "output": 10}}, budget=0.0001,
                    check=False)
    assert paid.error["code"] == "BUDGET_EXCEEDED" and paid.cost.total == Decimal("0.000102")


@pytest.mark.parametrize("extra", [{}, {"assistant": _Assistant()}])
def test_a_budget_with_a_model_no_table_can_price_fails_up_front_saying_to_give_prices(extra):
    context, model = Context(), ScriptedModel(["x"], model="my-finetune-7")
    with pytest.raises(ValueError, match=r"budget=.*'my-finetune-7' cannot be priced.*prices=\{'my-finetune-7'"):
        run_turn(context, "hi", model=model, budget=0.5, **extra)
    assert len(context) == 0 and model.calls == []  # before anything ran


def test_a_connector_the_table_cannot_price_fails_the_turn_with_budget_unpriced():
    hooks = hooks_from_python(create=lambda ctx, messages: {"connector": "local"})
    local = ScriptedModel(["x"], model="my-finetune-7")
    context = Context()
    result = run_turn(context, "hi", model=ScriptedModel(["y"], model="gpt-4o"), hooks=hooks,
                      connectors={"local": local}, budget=0.5, check=False)
    assert result.error["code"] == "BUDGET_UNPRICED" and local.calls == []
    assert "my-finetune-7" in result.error["message"] and "prices=" in result.error["message"]
    assert len(context) == 1 and "BUDGET_UNPRICED" in CODES and "BUDGET_EXCEEDED" in CODES


@pytest.mark.parametrize(("budget", "error"), [
    ("0.5", TypeError), (True, TypeError), ([1], TypeError), (0, ValueError), (-1, ValueError),
    (float("nan"), ValueError), (float("inf"), ValueError), (Decimal("NaN"), ValueError), (Decimal("-0.1"), ValueError),
])
def test_bad_budgets_are_refused_before_anything_runs(budget, error):
    for extra, where in (({}, "run_turn"), ({"assistant": _Assistant()}, "run_assistant")):
        context, model = Context(), ScriptedModel(["x"], model="gpt-4o")
        with pytest.raises(error, match=rf"{where}\(budget=…\)"):
            run_turn(context, "hi", model=model, budget=budget, **extra)
        assert len(context) == 0 and model.calls == []


def test_bad_prices_are_refused_before_anything_runs():
    context, model = Context(), ScriptedModel(["x"], model="gpt-4o")
    with pytest.raises(PriceError, match=r"prices\['m'\]\.output: missing"):
        run_turn(context, "hi", model=model, prices={"m": {"input": 1}})
    assert len(context) == 0 and model.calls == []


# -- %agentctx run --budget ------------------------------------------------------------------------


def test_the_run_magic_passes_its_budget_and_says_what_was_spent(ip: Any) -> None:
    ip.user_ns["bot"] = ScriptedModel(["word " * 2000], chunk_size=5, model="gpt-4o")
    before = names(ip)
    _, out = line(ip, 'run chat "hi" --model bot --budget 0.001 --result turn')
    assert_turn_failure(out, "spent ≈$0.00101 of $0.001 (estimated)", "[BUDGET_EXCEEDED]")
    assert ip.user_ns["turn"].error["code"] == "BUDGET_EXCEEDED" and names(ip) - before == {"turn"}
    _, out = line(ip, 'run chat "hi" --model bot --budget $5')
    assert out.stderr == "" and ip.user_ns["chat"].at(-1)["content"][0]["text"].startswith("word word")


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf"])
def test_the_run_magic_refuses_a_bad_budget_in_one_line(ip: Any, value: str) -> None:
    before = names(ip)
    _, out = line(ip, f'run chat "hi" --budget {value}')
    assert_error(out, "run: argument --budget: budget must be a number of US dollars", repr(value))
    assert names(ip) == before


def test_the_run_magic_with_a_budget_and_an_unpriced_model_says_so(ip: Any) -> None:
    _, out = line(ip, 'run chat "hi" --budget 0.5')  # the scripted default model has no price
    assert_error(out, "run_turn(budget=…): 'scripted' cannot be priced", "the context is unchanged")
    assert "chat" not in ip.user_ns
