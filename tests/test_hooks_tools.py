"""Tool round trips through run_turn(tools=[...]): the runner's module docstring, step 6 and step 8.

A model response that calls tools is committed, each call runs (one type-4 tool result per call,
appended as it completes), and the model is called again with all of it — steps 3–6 once per model
response, ``Done`` once. A tool's failure is an error tool result the model reads, not a failed
turn; a failure before the final response is committed takes the whole turn back to the user input.
"""

from __future__ import annotations

import functools
import asyncio
import copy
import threading

import pydantic
import warnings

import pytest

from agentctx_widgets import Context, ScriptedModel, hooks_from_python, run_turn, run_turn_async
from agentctx_widgets.models.tools import Tool, ToolDefinitionError
from agentctx_widgets.output import without_echoes as shown

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing


def user(text):
    return {"type": 2, "content": [{"type": "text", "text": text}]}


def assistant(text):
    return {"type": 3, "content": [{"type": "text", "text": text}]}


def calling(*calls, text=None):
    """The assistant message a response with these (id, name, arguments) tool calls assembles to."""
    blocks = [] if text is None else [{"type": "text", "text": text}]
    blocks += [{"type": "toolCall", "callId": call_id, "name": name, "arguments": arguments}
               for call_id, name, arguments in calls]
    return {"type": 3, "content": blocks}


def tool_result(call_id, name, text, *, error=False):
    message = {"type": 4, "callId": call_id, "name": name, "content": [{"type": "text", "text": text}]}
    if error:
        message["error"] = True
    return message


WEATHER_CALL = {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]}


def get_weather(city: str) -> str:
    """Get the weather for a city.

    Args:
        city: The city's name.
    """
    return f"21°C and sunny in {city}"


WEATHER_SPEC = {
    "name": "get_weather",
    "description": "Get the weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city's name."}},
                   "required": ["city"], "additionalProperties": False},
}


# -- one round trip ---------------------------------------------------------------------------------


def test_one_tool_round_commits_call_result_and_final_answer():
    context = Context()
    model = ScriptedModel([WEATHER_CALL, "It is 21°C"])
    result = run_turn(context, "Weather in Paris?", model=model, tools=[get_weather])
    assert result.error is None and result.ok
    assert context.messages() == [
        user("Weather in Paris?"),
        calling(("c1", "get_weather", {"city": "Paris"})),
        {"type": 4, "callId": "c1", "name": "get_weather",
         "content": [{"type": "text", "text": "21°C and sunny in Paris"}]},
        assistant("It is 21°C"),
    ]
    assert len(model.calls) == 2
    assert result.response["content"] == "It is 21°C" and result.response["tool_calls"] == []
    assert result.response["message"] == assistant("It is 21°C")


def test_the_second_model_call_receives_the_call_and_its_result():
    model = ScriptedModel([WEATHER_CALL, "It is 21°C"])
    result = run_turn(Context(), "Weather in Paris?", model=model, tools=[get_weather])
    assert model.calls[0] == [user("Weather in Paris?")]
    assert model.calls[1] == [
        user("Weather in Paris?"),
        calling(("c1", "get_weather", {"city": "Paris"})),
        tool_result("c1", "get_weather", "21°C and sunny in Paris"),
    ]
    assert result.model_messages == model.calls[1]  # the messages of the last call


def test_every_model_call_is_offered_the_tools_next_to_the_callers_options():
    seen = []

    class OptionsModel(ScriptedModel):
        def stream(self, messages, *, options=None):
            seen.append(copy.deepcopy(options))
            return super().stream(messages, options=options)

    model = OptionsModel([WEATHER_CALL, "done"])
    run_turn(Context(), "hi", model=model, tools=[get_weather], options={"temperature": 0})
    assert seen == [{"temperature": 0, "tools": [WEATHER_SPEC]}] * 2


def test_output_carries_the_tool_call_then_the_answer():
    result = run_turn(Context(), "hi", model=ScriptedModel([WEATHER_CALL, "It is 21°C"]), tools=[get_weather])
    assert [(m["type"], m["props"].get("content", m["props"].get("name"))) for m in shown(result.output)] == [
        ("tool_call", "get_weather"), ("text", "It is 21°C")]
    assert result.output[0]["props"] == {"id": "c1", "name": "get_weather", "arguments": '{"city":"Paris"}'}


def test_tool_results_lists_what_the_tools_produced():
    result = run_turn(Context(), "hi", model=ScriptedModel([WEATHER_CALL, "ok"]), tools=[get_weather])
    assert result.tool_results == [tool_result("c1", "get_weather", "21°C and sunny in Paris")]


def test_a_non_string_return_is_json_text():
    def lookup(city: str) -> dict:
        return {"city": city, "temp": 21.5, "rain": False}

    reply = {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"city": "Paris"}}]}
    result = run_turn(Context(), "hi", model=ScriptedModel([reply, "ok"]), tools=[lookup])
    assert result.tool_results == [tool_result("c1", "lookup", '{"city":"Paris","temp":21.5,"rain":false}')]


def test_two_parallel_calls_give_two_results_in_call_order():
    order = []

    def get_weather(city: str) -> str:
        order.append(city)
        return f"{len(city)} degrees in {city}"

    reply = {"text": "Checking both.", "tool_calls": [
        {"id": "a", "name": "get_weather", "arguments": {"city": "Paris"}},
        {"id": "b", "name": "get_weather", "arguments": {"city": "Oslo"}},
    ]}
    context, model = Context(), ScriptedModel([reply, "Paris is warmer"])
    result = run_turn(context, "Paris or Oslo?", model=model, tools=[get_weather])
    assert order == ["Paris", "Oslo"]
    expected_results = [tool_result("a", "get_weather", "5 degrees in Paris"),
                        tool_result("b", "get_weather", "4 degrees in Oslo")]
    assert result.tool_results == expected_results
    assert context.messages() == [
        user("Paris or Oslo?"),
        calling(("a", "get_weather", {"city": "Paris"}), ("b", "get_weather", {"city": "Oslo"}), text="Checking both."),
        *expected_results,
        assistant("Paris is warmer"),
    ]
    assert model.calls[1] == context.messages()[:4]


def test_two_rounds_then_an_answer():
    second = {"tool_calls": [{"id": "c2", "name": "get_weather", "arguments": {"city": "Rome"}}]}
    context, model = Context(), ScriptedModel([WEATHER_CALL, second, "Both sunny"])
    result = run_turn(context, "Paris, then Rome", model=model, tools=[get_weather])
    assert result.ok and len(model.calls) == 3
    assert context.messages() == [
        user("Paris, then Rome"),
        calling(("c1", "get_weather", {"city": "Paris"})),
        tool_result("c1", "get_weather", "21°C and sunny in Paris"),
        calling(("c2", "get_weather", {"city": "Rome"})),
        tool_result("c2", "get_weather", "21°C and sunny in Rome"),
        assistant("Both sunny"),
    ]
    assert model.calls[2] == context.messages()[:5]


# -- failures the model reads -----------------------------------------------------------------------


def test_a_tool_that_raises_becomes_an_error_result_and_the_turn_goes_on():
    def get_weather(city: str) -> str:
        raise ValueError(f"no station near {city}")

    context, model = Context(), ScriptedModel([WEATHER_CALL, "Sorry, no data"])
    result = run_turn(context, "Weather in Paris?", model=model, tools=[get_weather])
    failed = {"type": 4, "callId": "c1", "name": "get_weather",
              "content": [{"type": "text", "text": "get_weather raised ValueError: no station near Paris"}],
              "error": True}
    assert result.ok and result.error is None
    assert result.tool_results == [failed]
    assert model.calls[1][-1] == failed
    assert context.messages() == [user("Weather in Paris?"), calling(("c1", "get_weather", {"city": "Paris"})),
                                  failed, assistant("Sorry, no data")]


def test_invalid_arguments_are_an_error_result():
    reply = {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"town": "Paris"}}]}
    ran = []

    def get_weather(city: str) -> str:
        ran.append(city)
        return "never"

    model = ScriptedModel([reply, "Let me fix that"])
    result = run_turn(Context(), "hi", model=model, tools=[get_weather])
    expected = tool_result("c1", "get_weather", "invalid arguments for get_weather: city: Field required; "
                                                "town: Extra inputs are not permitted", error=True)
    assert ran == [] and result.ok
    assert result.tool_results == [expected] and model.calls[1][-1] == expected


def test_arguments_that_are_not_json_are_an_error_result():
    reply = {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": '{"city": "Par'}]}
    model = ScriptedModel([reply, "oops"])
    result = run_turn(Context(), "hi", model=model, tools=[get_weather])
    assert result.ok
    assert result.tool_results == [tool_result("c1", "get_weather", "the arguments are not valid JSON: '{\"city\": \"Par'",
                                               error=True)]


def test_an_unknown_tool_is_an_error_result():
    def get_time(zone: str) -> str:
        return "noon"

    reply = {"tool_calls": [{"id": "c9", "name": "get_forecast", "arguments": {}}]}
    model = ScriptedModel([reply, "I cannot forecast"])
    context = Context()
    result = run_turn(context, "hi", model=model, tools=[get_weather, get_time])
    expected = tool_result("c9", "get_forecast", "there is no tool named 'get_forecast'; the tools are get_weather, get_time",
                           error=True)
    assert result.ok and result.tool_results == [expected]
    assert context.messages()[2] == expected and context.at(-1) == assistant("I cannot forecast")


def test_an_async_tool_is_awaited_on_the_turns_loop():
    where = []

    async def get_weather(city: str) -> str:
        await asyncio.sleep(0)
        where.append(threading.current_thread() is threading.main_thread())
        return f"async sun in {city}"

    result = run_turn(Context(), "hi", model=ScriptedModel([WEATHER_CALL, "ok"]), tools=[get_weather])
    assert result.tool_results == [tool_result("c1", "get_weather", "async sun in Paris")]
    assert where == [False]  # coroutine functions run on the turn's own loop (caller.call_user_code)


def test_tools_with_the_async_entry_point():
    async def main():
        return await run_turn_async(Context(), "hi", model=ScriptedModel([WEATHER_CALL, "ok"]), tools=[get_weather])

    result = asyncio.run(main())
    assert result.ok and result.tool_results == [tool_result("c1", "get_weather", "21°C and sunny in Paris")]


# -- hooks around tool rounds ------------------------------------------------------------------------


def recording_hooks(calls, **extra):
    def make(name):
        def hook(*args):
            calls.append(name)
            if name in extra:
                return extra[name](*args)
            return None
        return hook

    return hooks_from_python({name: make(name) for name in ("Create", "Before", "After", "Done", "Error")})


def test_hook_order_for_one_tool_round():
    calls = []
    result = run_turn(Context(), "hi", hooks=recording_hooks(calls), model=ScriptedModel([WEATHER_CALL, "ok"]),
                      tools=[get_weather])
    assert calls == ["Create", "Before", "After", "Before", "After", "Done"]
    assert result.hooks_called == ["Create", "Before", "After", "Before", "After", "Done"]


def test_what_the_hooks_see_in_each_round():
    seen = []
    hooks = hooks_from_python({
        "Before": lambda ctx, m, r: seen.append(("Before", copy.deepcopy(m), r["content"], r["tool_calls"])),
        "After": lambda ctx, m, r: seen.append(("After", None, r["content"], r["tool_calls"])),
        "Done": lambda ctx, m, r: seen.append(("Done", copy.deepcopy(m), r["content"], r["tool_calls"])),
    })
    run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel([WEATHER_CALL, "It is 21°C"]), tools=[get_weather])
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    round_trip = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "21°C and sunny in Paris", "tool_call_id": "c1", "name": "get_weather"},
    ]
    assert seen == [
        ("Before", [{"role": "user", "content": "hi"}], "", [call]),
        ("After", None, "", [call]),
        ("Before", round_trip, "It is 21°C", []),
        ("After", None, "It is 21°C", []),
        ("Done", round_trip, "It is 21°C", []),
    ]


def test_create_replacement_stays_what_the_model_sees_in_later_rounds():
    hooks = hooks_from_python(create=lambda ctx, m: {"messages": [{"role": "system", "content": "Be brief."}, *m]})
    model, context = ScriptedModel([WEATHER_CALL, "ok"]), Context()
    run_turn(context, "hi", hooks=hooks, model=model, tools=[get_weather])
    assert model.calls[1] == [
        {"type": 1, "content": [{"type": "text", "text": "Be brief."}]},
        user("hi"),
        calling(("c1", "get_weather", {"city": "Paris"})),
        tool_result("c1", "get_weather", "21°C and sunny in Paris"),
    ]
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 3]  # the system message is not committed


def test_before_removing_the_tool_calls_means_no_tool_runs():
    ran = []

    def get_weather(city: str) -> str:
        ran.append(city)
        return "sun"

    calls = []
    hooks = recording_hooks(calls, Before=lambda ctx, m, r: {"response": {"tool_calls": []}})
    reply = {"text": "Let me check.", **WEATHER_CALL}
    context, model = Context(), ScriptedModel([reply, "never asked"])
    result = run_turn(context, "hi", hooks=hooks, model=model, tools=[get_weather])
    assert ran == [] and len(model.calls) == 1
    assert result.ok and result.tool_results == []
    assert context.messages() == [user("hi"), assistant("Let me check.")]
    assert calls == ["Create", "Before", "After", "Done"]
    assert result.response["tool_calls"] == [] and result.response["content"] == "Let me check."


def test_python_hooks_and_tools_run_on_the_calling_thread():
    where = []

    def get_weather(city: str) -> str:
        where.append(("tool", threading.current_thread() is threading.main_thread()))
        return "sun"

    hooks = hooks_from_python({
        "Before": lambda ctx, m, r: where.append(("Before", threading.current_thread() is threading.main_thread())),
    })
    assert threading.current_thread() is threading.main_thread()
    run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel([WEATHER_CALL, "ok"]), tools=[get_weather])
    assert where == [("Before", True), ("tool", True), ("Before", True)]


# -- bounds and failures: nothing half-committed ----------------------------------------------------


def test_max_tool_rounds_ends_the_turn_with_an_error_and_takes_it_back():
    count = []

    def get_weather(city: str) -> str:
        count.append(city)
        return "sun"

    context, model = Context(), ScriptedModel([WEATHER_CALL])  # the last reply repeats: always a tool call
    result = run_turn(context, "hi", model=model, tools=[get_weather], max_tool_rounds=1)
    assert result.error["code"] == "MAX_TOOL_ROUNDS"
    assert result.error == {"message": "the model still called tools after 1 rounds (max_tool_rounds)",
                            "code": "MAX_TOOL_ROUNDS", "name": "ModelError", "hook": None}
    assert context.messages() == [user("hi")]
    assert len(model.calls) == 2 and count == ["Paris"]  # the second round's calls never ran
    assert result.response is None
    assert result.output[-1] == {"type": "error", "props": {"message": result.error["message"], "code": "MAX_TOOL_ROUNDS"}}


def test_max_tool_rounds_zero_allows_no_round():
    context, model = Context(), ScriptedModel([WEATHER_CALL, "never"])
    result = run_turn(context, "hi", model=model, tools=[get_weather], max_tool_rounds=0)
    assert result.error["code"] == "MAX_TOOL_ROUNDS" and len(model.calls) == 1
    assert result.tool_results == [] and context.messages() == [user("hi")]


def test_max_tool_rounds_must_be_a_non_negative_int():
    with pytest.raises(ValueError, match=r"max_tool_rounds"):
        run_turn(Context(), "hi", model=ScriptedModel(["x"]), tools=[get_weather], max_tool_rounds=-1)


def test_a_model_error_in_round_two_takes_the_whole_turn_back():
    context, model = Context(), ScriptedModel([WEATHER_CALL, {"text": "It is", "error": "upstream 500"}])
    result = run_turn(context, "hi", model=model, tools=[get_weather])
    assert result.error == {"message": "upstream 500", "code": "MODEL_ERROR", "name": "ModelError", "hook": None}
    assert context.messages() == [user("hi")]
    assert result.response is None


def test_a_retry_after_a_failed_round_two_starts_from_the_user_message_again():
    calls = []
    hooks = recording_hooks(calls, Error=lambda ctx, m, e: {"retry": True})
    model = ScriptedModel([WEATHER_CALL, {"error": {"message": "busy", "code": "RATE_LIMIT"}}, WEATHER_CALL, "It is 21°C"])
    context = Context()
    result = run_turn(context, "hi", hooks=hooks, model=model, tools=[get_weather])
    assert result.ok and result.retries == 1
    assert model.calls[2] == [user("hi")]  # the first attempt's round was taken back
    assert context.messages() == [
        user("hi"),
        calling(("c1", "get_weather", {"city": "Paris"})),
        tool_result("c1", "get_weather", "21°C and sunny in Paris"),
        assistant("It is 21°C"),
    ]
    assert calls == ["Create", "Before", "After", "Error", "Create", "Before", "After", "Before", "After", "Done"]


def test_a_failing_after_in_the_tool_round_takes_the_round_back():
    def after(ctx, messages, response):
        if response["tool_calls"]:
            raise RuntimeError("after failed")

    context = Context()
    result = run_turn(context, "hi", hooks=hooks_from_python(after=after),
                      model=ScriptedModel([WEATHER_CALL, "never"]), tools=[get_weather])
    assert result.error["hook"] == "After" and "after failed" in result.error["message"]
    assert context.messages() == [user("hi")]  # the round's response was not the final one


def test_usage_is_summed_over_every_model_call():
    replies = [
        {**WEATHER_CALL, "usage": {"prompt_tokens": 100, "completion_tokens": 12}},
        {"text": "It is 21°C", "usage": {"prompt_tokens": 130, "completion_tokens": 7}},
    ]
    result = run_turn(Context(), "hi", model=ScriptedModel(replies), tools=[get_weather])
    assert result.usage == {"inputTokens": 230, "outputTokens": 19, "totalTokens": 249, "source": "provider"}
    assert result.calls == [
        {"usage": {"inputTokens": 100, "outputTokens": 12, "totalTokens": 112, "source": "provider"}, "model": "scripted"},
        {"usage": {"inputTokens": 130, "outputTokens": 7, "totalTokens": 137, "source": "provider"}, "model": "scripted"},
    ]


# -- without tools= -----------------------------------------------------------------------------------


def test_without_tools_a_tool_call_response_is_committed_and_the_turn_ends():
    seen = []
    hooks = hooks_from_python({"After": lambda ctx, m, r: seen.append(r["tool_calls"])})
    context, model = Context(), ScriptedModel([WEATHER_CALL, "never asked"])
    result = run_turn(context, "hi", hooks=hooks, model=model)
    assert result.ok and len(model.calls) == 1 and result.tool_results == []
    assert context.messages() == [user("hi"), calling(("c1", "get_weather", {"city": "Paris"}))]
    assert seen == [[{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]]
    assert result.response["tool_calls"] == seen[0]


def test_a_bad_tool_list_is_refused_before_the_turn_starts():
    context = Context()
    with pytest.raises(ToolDefinitionError, match=r"^tools\[1\]: a second tool named 'get_weather'$"):
        run_turn(context, "hi", model=ScriptedModel(["x"]), tools=[get_weather, get_weather])
    assert len(context) == 0


def test_before_removing_the_only_content_leaves_an_empty_response_that_is_dropped():
    ran = []

    def get_weather(city: str) -> str:
        ran.append(city)
        return "sun"

    hooks = hooks_from_python(before=lambda ctx, m, r: {"response": {"tool_calls": []}})
    context, model = Context(), ScriptedModel([WEATHER_CALL, "never asked"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said as a diagnostic, not as the store's warning
        result = run_turn(context, "hi", hooks=hooks, model=model, tools=[get_weather])
    assert ran == [] and len(model.calls) == 1 and result.ok
    [empty] = result.diagnostics
    assert empty["code"] == "empty_reply" and "the Before hook's response left nothing" in empty["message"]
    assert context.messages() == [user("hi")]
    assert result.response["message"] == {"type": 3, "content": []}


def test_a_failing_done_after_tool_rounds_leaves_the_whole_turn_committed():
    def done(ctx, messages, response):
        raise RuntimeError("done failed")

    context = Context()
    result = run_turn(context, "hi", hooks=hooks_from_python(done=done), model=ScriptedModel([WEATHER_CALL, "It is 21°C"]),
                      tools=[get_weather])
    assert result.error["hook"] == "Done" and "done failed" in result.error["message"]
    assert context.messages() == [
        user("hi"),
        calling(("c1", "get_weather", {"city": "Paris"})),
        tool_result("c1", "get_weather", "21°C and sunny in Paris"),
        assistant("It is 21°C"),
    ]
    assert result.response["content"] == "It is 21°C"  # the final response was committed and sent


def test_a_failing_after_of_the_final_response_leaves_it_committed():
    def after(ctx, messages, response):
        if not response["tool_calls"]:
            raise RuntimeError("late failure")

    context = Context()
    result = run_turn(context, "hi", hooks=hooks_from_python(after=after), model=ScriptedModel([WEATHER_CALL, "fine"]),
                      tools=[get_weather])
    assert result.error["hook"] == "After"
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 3] and context.at(-1) == assistant("fine")


def test_before_can_rewrite_a_tool_calls_arguments():
    ran = []

    def get_weather(city: str) -> str:
        ran.append(city)
        return f"rain in {city}"

    def before(ctx, messages, response):
        if response["tool_calls"]:
            call = copy.deepcopy(response["tool_calls"][0])
            call["function"]["arguments"] = '{"city": "Lyon"}'
            return {"response": {"tool_calls": [call]}}
        return None

    context = Context()
    run_turn(context, "hi", hooks=hooks_from_python(before=before), model=ScriptedModel([WEATHER_CALL, "ok"]),
             tools=[get_weather])
    assert ran == ["Lyon"]
    assert context.at(1) == calling(("c1", "get_weather", {"city": "Lyon"}))
    assert context.at(2) == tool_result("c1", "get_weather", "rain in Lyon")


class Place(pydantic.BaseModel):
    city: str
    country: str = "FR"


LOCATED: list = []


def locate(place: Place) -> Place:  # module level: the postponed hint "Place" resolves from the globals
    LOCATED.append(place)
    return place


def test_a_named_tool_object_and_a_pydantic_argument():
    LOCATED.clear()
    reply = {"tool_calls": [{"id": "c1", "name": "where", "arguments": {"place": {"city": "Nice"}}}]}
    result = run_turn(Context(), "hi", model=ScriptedModel([reply, "ok"]), tools=[Tool(locate, name="where")])
    assert LOCATED == [Place(city="Nice", country="FR")] and isinstance(LOCATED[0], Place)
    assert result.tool_results == [tool_result("c1", "where", '{"city":"Nice","country":"FR"}')]


def test_tool_time_is_in_the_timings():
    result = run_turn(Context(), "hi", model=ScriptedModel([WEATHER_CALL, "ok"]), tools=[get_weather])
    assert {"model", "commit", "tools", "total"} <= set(result.timings)
    assert result.timings["tools"] >= 0
