"""agentctx_widgets.yao.runner: one Yao request in Assistant.Stream's order (yao 5a3f9a6a).

The hooks are Python functions written after yao-dev-app's ``assistants/tests/create`` and
``tests/next`` scenarios (``src/index.ts``), so no TypeScript engine is needed; each test names the
upstream test or source lines it ports. Expected values are read off the Go structs and code cited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from fakes import FakeClock

from agentctx_widgets import Context, ScriptedModel
from agentctx_widgets.output.diagnostics import DIAGNOSTICS
from agentctx_widgets.yao.runner import YaoTurnResult, run_assistant


@dataclass
class Assistant:
    id: str
    prompts: list = field(default_factory=lambda: [{"role": "system", "content": "You are a test assistant."}])
    connector: str = ""
    options: dict = field(default_factory=dict)
    mcp: dict | None = None
    hooks: Any = None
    name: str = ""


IDS = {"context_id": "ctx-1", "request_id": "req-1", "trace_id": "trace-1", "chat_id": "chat-1"}


def run(text: Any, *, model: Any = None, **kwargs: Any) -> tuple[YaoTurnResult, Context, ScriptedModel]:
    context = Context(name="yao")
    model = model if model is not None else ScriptedModel(["Hi!"], chunk_size=100)
    kwargs.setdefault("assistant", Assistant("tests.create"))
    result = run_assistant(context, text, model=model, clock=FakeClock(tick=1.0, wall_ms=0), **{**IDS, **kwargs})
    return result, context, model


def texts(messages: list[dict]) -> list[tuple[int, str]]:
    return [(m["type"], "".join(b.get("text", "") for b in m["content"])) for m in messages]


def event_names(result: YaoTurnResult) -> list[str]:
    return [e["props"]["event"] for e in result.events]


# -- Create (hook/create_integration_test.go, after yao-dev-app assistants/tests/create/src/index.ts) --


def create_scenarios(ctx: Any, messages: list[dict], options: dict) -> Any:
    """tests/create's Create: the first message's content picks the scenario (index.ts:25-70)."""
    content = messages[0]["content"]
    if content == "return_null":
        return None
    if content == "return_empty":
        return {}
    if content == "return_full":
        return {"messages": [{"role": "system", "content": "You are a helpful assistant."},
                             {"role": "user", "content": "Hello!"}],
                "audio": {"voice": "alloy", "format": "mp3"}, "temperature": 0.7, "max_tokens": 2000,
                "max_completion_tokens": 1500, "metadata": {"test": "full_response", "user_id": "test_user_123"}}
    if content == "return_partial":
        return {"messages": [{"role": "user", "content": "Partial test"}], "temperature": 0.5}
    if content == "adjust_context":
        return {"connector": "adjusted-connector", "locale": "zh-cn", "theme": "dark",
                "route": "/adjusted/route", "metadata": {"adjusted": True}}
    return {"messages": [{"role": "user", "content": content}]}


@pytest.mark.parametrize("scenario", ["return_null", "return_undefined", "return_empty"])
def test_create_returning_nothing_keeps_the_input(scenario: str) -> None:
    """create_integration_test.go:24-41 (null, undefined → nil; {} → empty messages) and build.go:35-41:
    with no messages from Create the model gets the prompts, then the full messages."""
    hooks = {"Create": lambda ctx, messages, options: None if scenario == "return_undefined"
             else create_scenarios(ctx, messages, options)}
    result, context, model = run(scenario, hooks=hooks)
    assert result.ok, result.error
    assert texts(model.calls[0]) == [(1, "You are a test assistant."), (2, scenario)]
    assert ("create" in result.response) is (scenario == "return_empty")  # Response.create is omitempty
    assert result.response.get("create", None) == ({} if scenario == "return_empty" else None)
    assert texts(context.messages()) == [(2, scenario), (3, "Hi!")]
    assert result.model_options == [None]


def test_create_full_return_sets_messages_options_and_metadata() -> None:
    """create_integration_test.go:43-64 (ReturnFull); build.go:29-60 (the prompts go before Create's
    messages), build.go:471-490 (audio, temperature, max_tokens, max_completion_tokens win) and
    create.go:62-71 (metadata merged into ctx, which stream_end carries, agent.go:740)."""
    result, _, model = run("return_full", hooks={"Create": create_scenarios},
                           assistant=Assistant("tests.create", options={"temperature": 0.1, "top_p": 0.9}))
    assert texts(model.calls[0]) == [(1, "You are a test assistant."), (1, "You are a helpful assistant."),
                                     (2, "Hello!")]
    assert result.model_options == [{"temperature": 0.7, "top_p": 0.9, "max_tokens": 2000,
                                     "max_completion_tokens": 1500, "audio": {"voice": "alloy", "format": "mp3"}}]
    end = result.events[-1]["props"]["data"]
    assert end["metadata"] == {"test": "full_response", "user_id": "test_user_123"}
    assert result.response["create"]["max_tokens"] == 2000


def test_create_partial_return() -> None:
    """create_integration_test.go:66-76 (ReturnPartial): one message, temperature 0.5, no max_tokens."""
    result, _, model = run("return_partial", hooks={"Create": create_scenarios})
    assert texts(model.calls[0]) == [(1, "You are a test assistant."), (2, "Partial test")]
    assert result.model_options == [{"temperature": 0.5}]
    assert result.response["create"] == {"messages": [{"role": "user", "content": "Partial test"}],
                                         "temperature": 0.5}


def test_create_sees_every_ctx_field() -> None:
    """create_integration_test.go:90-99 (VerifyContext), after tests/create's scenarioVerifyContext
    (index.ts:179-298): the ctx a hook gets carries the request's fields."""
    def create(ctx: Any, messages: list[dict], options: dict) -> dict:
        checks = [ctx.chat_id == "chat-1", ctx.assistant_id == "tests.create", ctx.locale == "en-us",
                  ctx.theme == "light", ctx.client == {"type": "web", "user_agent": "TestAgent/1.0", "ip": "127.0.0.1"},
                  ctx.referer == "api", ctx.accept == "cui-web", ctx.authorized["user_id"] == "test-user-123"]
        verdict = "success:all_fields_validated" if all(checks) else f"failure:{checks}"
        return {"messages": [{"role": "system", "content": verdict}]}

    result, _, model = run("verify_context", hooks={"Create": create}, locale="en-us", theme="light",
                           client={"type": "web", "user_agent": "TestAgent/1.0", "ip": "127.0.0.1"},
                           referer="api", authorized={"user_id": "test-user-123"})
    assert texts(model.calls[0])[1] == (1, "success:all_fields_validated")


def test_create_adjusts_the_context_and_the_connector() -> None:
    """create_integration_test.go:101-116 (AdjustContext), hook_unit_test.go:108-175
    (locale/theme/route override, metadata merge, connector is call-level): Next sees the adjusted ctx
    and the ``connector`` in its options; the adjusted connector's model answers."""
    seen: dict = {}

    def next_hook(ctx: Any, payload: dict, options: dict) -> None:
        seen.update(locale=ctx.locale, theme=ctx.theme, route=ctx.route, metadata=ctx.metadata, options=options)

    other = ScriptedModel(["from the adjusted connector"], chunk_size=100)
    result, _, default = run("adjust_context", hooks={"Create": create_scenarios, "Next": next_hook},
                             connectors={"adjusted-connector": other}, locale="en-us", theme="light",
                             metadata={"existing": 1})
    assert seen == {"locale": "zh-cn", "theme": "dark", "route": "/adjusted/route",
                    "metadata": {"existing": 1, "adjusted": True}, "options": {"connector": "adjusted-connector"}}
    assert default.calls == [] and len(other.calls) == 1
    assert result.diagnostics == []
    assert result.response["completion"]["content"] == "from the adjusted connector"


def test_create_cannot_override_the_assistant_id() -> None:
    """create.go:45: "AssistantID cannot be overridden"; HookCreateResponse has no assistant_id field
    (types.go:411-453), so Go ignores the key — reported as unknown_return_key."""
    seen = []
    hooks = {"Create": lambda ctx, m, o: {"assistant_id": "other"},
             "Next": lambda ctx, p, o: seen.append(ctx.assistant_id)}
    result, _, _ = run("hi", hooks=hooks)
    assert seen == ["tests.create"] and result.response["assistant_id"] == "tests.create"
    assert [d["code"] for d in result.diagnostics] == ["unknown_return_key"]
    assert "'assistant_id'" in result.diagnostics[0]["message"]


def test_create_delegate_skips_the_model_and_ends_the_root_stream_once() -> None:
    """agent.go:245-274: Create's delegate runs the target assistant with the same ctx (next.go:42-67);
    no model call for the root and no Next; the root sends stream_end ("completed", no usage) once."""
    target = Assistant("tests.hook-echo", prompts=[{"role": "system", "content": "Echo."}])
    handoff = {"agent_id": "tests.hook-echo", "messages": [{"role": "user", "content": "Hello from delegated agent"}]}
    hooks = {"Create": lambda ctx, m, o: {"delegate": handoff},
             "Next": lambda ctx, p, o: pytest.fail("the root's Next must not run after a delegate")}
    result, context, model = run("route me", hooks=hooks, assistants={"tests.hook-echo": target})
    assert texts(model.calls[0]) == [(1, "Echo."), (2, "Hello from delegated agent")]
    assert event_names(result) == ["stream_start", "message_start", "message_end", "stream_end"]
    assert result.events[-1]["props"]["data"]["status"] == "completed"
    assert "usage" not in result.events[-1]["props"]["data"]
    assert result.response["assistant_id"] == "tests.hook-echo"
    assert texts(context.messages()) == [(2, "route me"), (3, "Hi!")]
    assert result.hooks_called == ["Create"]


def test_delegate_to_an_unknown_assistant_fails_the_request() -> None:
    """next.go:49-52: "failed to load delegated assistant '<id>'" ends the request with an error."""
    hooks = {"Create": lambda ctx, m, o: {"delegate": {"agent_id": "nobody", "messages": []}}}
    result, context, _ = run("x", hooks=hooks)
    assert result.error["message"].startswith("failed to load delegated assistant 'nobody'")
    assert result.events[-1]["props"]["data"]["status"] == "error"
    assert texts(context.messages()) == [(2, "x")]


# -- Next (hook/next_integration_test.go, next.go) -----------------------------------------------------


def test_next_payload_is_messages_completion_tools_error() -> None:
    """hook/next.go:22-28 builds the payload from exactly these four keys; agent.go:513-517 passes
    fullMessages (no system prompts), the completion, the tool results (nil here) and no error."""
    payloads = []
    result, _, _ = run("hello", hooks={"Next": lambda ctx, payload, options: payloads.append(payload)},
                       model=ScriptedModel([{"text": "Hi!", "usage": {"prompt_tokens": 10, "completion_tokens": 2}}]))
    assert payloads == [{
        "messages": [{"role": "user", "content": "hello"}],
        "completion": {"id": "", "object": "chat.completion", "created": 4, "model": "scripted", "role": "assistant",
                       "content": "Hi!", "finish_reason": "stop",
                       "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}},
        "tools": None,
        "error": "",
    }]
    assert result.next is None and "next" not in result.response  # a null Next: the standard response


def test_next_custom_data_becomes_response_next() -> None:
    """next_integration_test.go:57-73 (ReturnCustomData), next.go:23-36: data is Response.next as is."""
    data = {"message": "Custom response from Next Hook", "test": True, "timestamp": 1}
    result, _, _ = run("x", hooks={"Next": lambda ctx, p, o: {"data": data, "metadata": {"hook": "next"}}})
    assert result.next == data and result.response["next"] == data


def test_next_without_data_leaves_the_whole_return_in_next() -> None:
    """next_integration_test.go:45-55 (ReturnEmpty) and next.go:69-88: with no delegate and no data the
    standard response's next is the NextHookResponse itself (metadata kept)."""
    result, _, _ = run("x", hooks={"Next": lambda ctx, p, o: {"metadata": {"hook": "next", "processed": True}}})
    assert result.next == {"metadata": {"hook": "next", "processed": True}}
    assert result.response["completion"]["content"] == "Hi!"


def test_next_delegate_calls_the_injected_delegate() -> None:
    """next_integration_test.go:93-107 (ReturnDelegate), next.go:19-21: the delegated response is the answer."""
    calls = []

    def delegate(agent_id: str, messages: list[dict], options: dict) -> dict:
        calls.append((agent_id, messages, options))
        return {"assistant_id": agent_id, "next": {"echo": messages[0]["content"]}}

    handoff = {"agent_id": "tests.hook-echo", "options": {"mode": "x"},
               "messages": [{"role": "user", "content": "Hello from delegated agent"}]}
    hooks = {"Next": lambda ctx, p, o: {"delegate": handoff}}
    result, _, _ = run("x", hooks=hooks, delegate=delegate)
    assert calls == [("tests.hook-echo", [{"role": "user", "content": "Hello from delegated agent"}], {"mode": "x"})]
    assert result.response == {"assistant_id": "tests.hook-echo", "next": {"echo": "Hello from delegated agent"}}
    assert result.next == {"echo": "Hello from delegated agent"}


# -- tools ---------------------------------------------------------------------------------------------


def get_weather(city: str) -> dict:
    """The weather in a city."""
    return {"city": city, "temp": 21}


TOOL_REPLY = {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]}


def test_tools_with_next_go_to_the_payload_and_no_loop_runs() -> None:
    """agent.go:359-411 (results as ToolCallResponse, types.go:464-471) and 502-517 (with a script, Next
    gets them; no tool loop): next_integration_test.go:133-151 (VerifyTools) counts them the same way."""
    def next_hook(ctx: Any, payload: dict, options: dict) -> dict:
        tools = payload["tools"]
        return {"data": {"total_tools": len(tools), "successful": sum(1 for t in tools if not t.get("error")),
                         "first": tools[0]}}

    model = ScriptedModel([TOOL_REPLY, "never"], chunk_size=100)
    result, context, _ = run("weather?", hooks={"Next": next_hook}, tools=[get_weather], model=model)
    assert len(model.calls) == 1
    assert result.next == {"total_tools": 1, "successful": 1,
                           "first": {"toolcall_id": "call_1", "server": "", "tool": "get_weather",
                                     "arguments": '{"city":"Paris"}', "result": {"city": "Paris", "temp": 21}}}
    assert [m["type"] for m in context.messages()] == [2, 3, 4]


def test_no_script_and_tool_calls_run_the_tool_loop() -> None:
    """agent.go:550-586 and loop.go:32-122: with no hook script the results go back to the model
    (assistant message + one tool message with the result's JSON, loop.go:143-158) until it answers."""
    model = ScriptedModel([TOOL_REPLY, "It is 21 degrees in Paris."], chunk_size=100)
    result, context, _ = run("weather?", tools=[get_weather], model=model)
    assert result.ok, result.error
    assert len(model.calls) == 2
    second = model.calls[1]
    assert second[-1] == {"type": 4, "callId": "call_1", "name": "get_weather",
                          "content": [{"type": "text", "text": '{"city":"Paris","temp":21}'}]}
    assert result.response["completion"]["content"] == "It is 21 degrees in Paris."
    assert [t["toolcall_id"] for t in result.response["tools"]] == ["call_1"]
    assert result.model_options[1] == result.model_options[0]  # the same CompletionOptions (loop.go:56)
    assert [tool["name"] for tool in result.model_options[0]["tools"]] == ["get_weather"]
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 3]


def test_tool_loop_at_max_turns_falls_back_to_the_loop_fallback_assistant() -> None:
    """loop.go:121 ("tool loop reached max turns") and agent.go:564-581: the request delegates to
    __yao.loop_fallback with the results as Markdown (loop.go:204-270)."""
    got = []
    model = ScriptedModel([{**TOOL_REPLY, "usage": {"prompt_tokens": 7, "completion_tokens": 1}},
                           {**TOOL_REPLY, "usage": {"prompt_tokens": 9, "completion_tokens": 1}}],
                          chunk_size=100)  # always calls the tool again
    result, _, _ = run("weather?", tools=[get_weather], model=model, max_tool_rounds=2,
                       delegate=lambda agent_id, messages, options: got.append((agent_id, messages)) or {"fallback": 1})
    assert len(model.calls) == 3 and result.response == {"fallback": 1}
    assert got[0][0] == "__yao.loop_fallback"
    # stream_end reports the completion before the loop, the one agent.go:616 still holds
    assert result.events[-1]["props"]["data"]["usage"] == {"prompt_tokens": 7, "completion_tokens": 1,
                                                           "total_tokens": 8}
    markdown = got[0][1][0]["content"]
    assert "**User**: weather?" in markdown and '### get_weather\n```json\n{"city":"Paris","temp":21}\n```' in markdown


def test_a_script_without_next_runs_tools_but_no_loop() -> None:
    """agent.go:502 vs 550: the tool loop runs only when the assistant has no hook script at all, so a
    script with Create alone leaves the tool results unanswered — diagnostic no_tool_loop."""
    model = ScriptedModel([TOOL_REPLY, "never"], chunk_size=100)
    result, _, _ = run("weather?", hooks={"Create": lambda ctx, m, o: None}, tools=[get_weather], model=model)
    assert len(model.calls) == 1
    assert [d["code"] for d in result.diagnostics] == ["no_tool_loop"]
    assert result.response["tools"][0]["result"] == {"city": "Paris", "temp": 21}


def test_a_non_retryable_tool_error_fails_the_request() -> None:
    """agent.go:413-431 with mcp.go:484-509: "timeout" is not retryable, so the request fails."""
    def slow(city: str) -> str:
        raise TimeoutError("timeout talking to the weather service")

    slow.__name__ = "get_weather"
    result, context, _ = run("weather?", tools=[slow], model=ScriptedModel([TOOL_REPLY], chunk_size=100))
    assert result.error["message"] == "tool calls failed with non-retryable errors (MCP internal issues)"
    assert result.events[-1]["props"]["data"]["status"] == "error"
    assert texts(context.messages()) == [(2, "weather?")]


# -- errors as Yao treats them (hook/script.go) --------------------------------------------------------


def test_is_not_defined_inside_a_hook_becomes_a_null_return_with_a_diagnostic() -> None:
    """hook/script.go:37-42: any error whose text has "is not defined" is a nil return — here a
    misspelled name inside Create (Python says "name 'mesages' is not defined"). The request goes on."""
    def create(ctx: Any, messages: list[dict], options: dict) -> dict:
        return {"messages": mesages}  # noqa: F821 - the bug Yao hides

    result, _, model = run("hello", hooks={"Create": create})
    assert result.ok and texts(model.calls[0])[-1] == (2, "hello")
    assert [d["code"] for d in result.diagnostics] == ["hook_error_hidden"]
    assert "is not defined" in result.diagnostics[0]["message"]
    assert result.hooks_called == ["Create"]


def test_is_not_a_function_is_hidden_too() -> None:
    """hook/script.go:39: "is not a function" (a TypeError in QuickJS) is a nil return as well."""
    def next_hook(ctx: Any, payload: dict, options: dict) -> None:
        raise TypeError("TypeError: ctx.memory.Gett is not a function")

    result, _, _ = run("x", hooks={"Next": next_hook})
    assert result.ok and result.next is None
    assert result.diagnostics[0]["code"] == "hook_error_hidden"
    assert set(DIAGNOSTICS) >= {d["code"] for d in result.diagnostics}


def test_any_other_hook_error_fails_the_request_before_the_model() -> None:
    """agent.go:226-234: a Create error ends the request with stream_end status "error" and the error text."""
    def create(ctx: Any, messages: list[dict], options: dict) -> None:
        raise ValueError("boom")

    result, context, model = run("hello", hooks={"Create": create})
    assert model.calls == []
    assert result.error["message"] == "boom" and result.error["hook"] == "Create"
    end = {"event": "stream_end", "message": "Stream completed", "data": {
        "request_id": "req-1", "context_id": "ctx-1", "trace_id": "trace-1", "timestamp": 2000, "duration_ms": 1000,
        "status": "error", "error": "boom"}}
    assert result.events[-1] == {"type": "event", "props": end}
    assert texts(context.messages()) == [(2, "hello")]


def test_a_mistyped_create_field_is_gos_unmarshal_error() -> None:
    """hook/create.go:100-103: encoding/json refuses a string for HookCreateResponse.temperature (float64)."""
    result, _, model = run("x", hooks={"Create": lambda ctx, m, o: {"temperature": "hot"}})
    assert result.error["message"] == ("failed to unmarshal to HookCreateResponse: json: cannot unmarshal string "
                                       "into Go struct field HookCreateResponse.temperature of type float64")
    assert model.calls == []


# -- the whole event sequence ----------------------------------------------------------------------------


def test_the_message_sequence_of_a_request_whole() -> None:
    """agent.go:123-125 and 616 (stream_start, stream_end), handlers/stream.go:123-206 and 436-572
    (message_start, one delta per chunk with C*/M* ids, message_end with chunk_count and the content),
    output/builtin.go:113-122 (the event message), and a hook's ctx.Send in its place between them."""
    def create(ctx: Any, messages: list[dict], options: dict) -> None:
        ctx.Send({"type": "loading", "props": {"message": "thinking..."}, "id": "L1"})

    model = ScriptedModel([{"text": "Hello!", "usage": {"prompt_tokens": 5, "completion_tokens": 1}}], chunk_size=3)
    result, _, _ = run("hi", hooks={"Create": create}, model=model, metadata={"k": "v"},
                       assistant=Assistant("tests.create", name="Create Test"))
    assert result.messages == [
        {"type": "event", "props": {"event": "stream_start", "message": "Stream started", "data": {
            "context_id": "ctx-1", "request_id": "req-1", "timestamp": 1000, "chat_id": "chat-1",
            "trace_id": "trace-1", "assistant": {"assistant_id": "tests.create", "name": "Create Test"},
            "metadata": {"k": "v"}}}},
        {"type": "loading", "props": {"message": "thinking..."}, "id": "L1"},
        {"type": "event", "props": {"event": "message_start", "message": "Message started", "data": {
            "message_id": "M1", "type": "text", "timestamp": 2000}}},
        {"chunk_id": "C1", "message_id": "M1", "type": "text", "delta": True, "props": {"content": "Hel"}},
        {"chunk_id": "C2", "message_id": "M1", "type": "text", "delta": True, "props": {"content": "lo!"}},
        {"type": "event", "props": {"event": "message_end", "message": "Message completed", "data": {
            "message_id": "M1", "type": "text", "timestamp": 3000, "duration_ms": 1000, "chunk_count": 2,
            "status": "completed", "extra": {"content": "Hello!"}}}},
        {"type": "event", "props": {"event": "stream_end", "message": "Stream completed", "data": {
            "request_id": "req-1", "context_id": "ctx-1", "trace_id": "trace-1", "timestamp": 5000,
            "duration_ms": 4000, "status": "completed",
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}, "metadata": {"k": "v"}}}},
    ]
    assert event_names(result) == ["stream_start", "message_start", "message_end", "stream_end"]
    assert result.usage["inputTokens"] == 5 and result.usage["outputTokens"] == 1


def test_stream_start_and_end_are_written_in_gos_field_order() -> None:
    """The lifecycle events' data are Go structs, so Yao writes their fields in declaration order, not
    sorted: ``StreamStartData`` / ``StreamEndData`` / ``AssistantInfo`` / ``UsageInfo`` (yao afab9c2
    ``agent/output/message/types.go:292-314``, ``:249-267``; the same at 5a3f9a6a ``:329-351``,
    ``:286-304``), marshalled by ``agent.go:707-719`` and ``:734-753``; the props around them are a map
    (``data``, ``event``, ``message``, sorted). The text is what the CUI client reads after ``data:``."""
    from agentctx_widgets.yao.go_json import dumps

    model = ScriptedModel([{"text": "Hi", "usage": {"prompt_tokens": 5, "completion_tokens": 1}}], chunk_size=100)
    result, _, _ = run("hi", model=model, metadata={"z": 1, "a": 2},
                       assistant=Assistant("tests.create", name="Create Test"))
    start, end = result.events[0], result.events[-1]
    assert dumps(start) == (
        '{"type":"event","props":{"data":{"context_id":"ctx-1","request_id":"req-1","timestamp":1000,'
        '"chat_id":"chat-1","trace_id":"trace-1","assistant":{"assistant_id":"tests.create","name":"Create Test"},'
        '"metadata":{"a":2,"z":1}},"event":"stream_start","message":"Stream started"}}')
    assert dumps(end) == (
        '{"type":"event","props":{"data":{"request_id":"req-1","context_id":"ctx-1","trace_id":"trace-1",'
        '"timestamp":5000,"duration_ms":4000,"status":"completed",'
        '"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6},"metadata":{"a":2,"z":1}},'
        '"event":"stream_end","message":"Stream completed"}}')
    assert f"data: {dumps(start)}" in result.client


def test_message_start_and_end_are_written_in_gos_field_order() -> None:
    """``EventMessageStartData`` / ``EventMessageEndData`` / ``EventToolCallInfo`` in declaration order
    (yao 5a3f9a6a ``agent/output/message/types.go:356-387``), as ``handlers/stream.go:137-170`` and
    ``:530-541`` send them; ``extra`` is a map. A tool call's start names id, name, index, no arguments."""
    from agentctx_widgets.yao.go_json import dumps

    model = ScriptedModel([{"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
                           "Sunny."], chunk_size=100)
    result, _, _ = run("weather?", model=model, tools=[get_weather], assistant=Assistant("tests.tools"))
    data = [dumps(e["props"]["data"]) for e in result.events if e["props"]["event"] in ("message_start", "message_end")]
    assert data[0] == ('{"message_id":"M1","type":"tool_call","timestamp":2000,'
                       '"tool_call":{"id":"call_1","name":"get_weather","index":0}}')
    assert data[1].startswith('{"message_id":"M1","type":"tool_call","timestamp":') and \
        '"duration_ms":' in data[1] and data[1].index('"duration_ms"') < data[1].index('"chunk_count"') < \
        data[1].index('"status":"completed"') < data[1].index('"extra":{"content":')


def test_bad_arguments_are_refused_with_the_place() -> None:
    with pytest.raises(TypeError, match=r"run_assistant: unknown keyword\(s\) \['colour'\]"):
        run("x", colour="red")
    with pytest.raises(TypeError, match=r"run_assistant\(assistant=…\)"):
        run_assistant(Context(name="x"), "x", assistant=object())
    with pytest.raises(ValueError, match=r"hooks: 'Before' is not a Yao hook"):
        run("x", hooks={"Before": lambda *a: None})


def test_a_tool_call_streams_as_yaos_handler_writes_it() -> None:
    """handlers/stream.go:242-334: the first chunk merges {id, type, index, name, arguments}, the next
    ones append to props.arguments (delta_path "arguments"); message_start carries the tool_call info
    (EventToolCallInfo, output/message/types.go:382-387); message_end's content is the buffered deltas."""
    model = ScriptedModel([{"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}]},
                           "done"], chunk_size=10)
    result, _, _ = run("weather?", tools=[get_weather], model=model)
    first_call = result.messages[1:6]
    assert first_call == [
        {"type": "event", "props": {"event": "message_start", "message": "Message started", "data": {
            "message_id": "M1", "type": "tool_call", "timestamp": 2000,
            "tool_call": {"id": "call_1", "name": "get_weather", "index": 0}}}},
        {"chunk_id": "C1", "message_id": "M1", "type": "tool_call", "delta": True, "delta_action": "merge",
         "props": {"id": "call_1", "type": "function", "index": 0, "name": "get_weather", "arguments": ""}},
        {"chunk_id": "C2", "message_id": "M1", "type": "tool_call", "delta": True, "delta_action": "append",
         "delta_path": "arguments", "props": {"index": 0, "arguments": '{"city":"P'}},
        {"chunk_id": "C3", "message_id": "M1", "type": "tool_call", "delta": True, "delta_action": "append",
         "delta_path": "arguments", "props": {"index": 0, "arguments": 'aris"}'}},
        {"type": "event", "props": {"event": "message_end", "message": "Message completed", "data": {
            "message_id": "M1", "type": "tool_call", "timestamp": 3000, "duration_ms": 1000, "chunk_count": 3,
            "status": "completed", "extra": {"content":
                '[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]'
                '[{"index":0,"function":{"arguments":"{\\"city\\":\\"P"}}]'
                '[{"index":0,"function":{"arguments":"aris\\"}"}}]'}}}},
    ]
    # the loop's answer is the next logical message: M2, its chunk C4
    assert result.messages[6]["props"]["data"]["message_id"] == "M2"
    assert result.messages[7]["chunk_id"] == "C4"


def test_a_retryable_tool_error_asks_the_model_again() -> None:
    """agent.go:413-490 with mcp.go:343-356: arguments that fail validation are retryable; the model is
    called again with its call, the error results and a system message (agent.go:804-846)."""
    bad = {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"town": "Paris"}}]}
    model = ScriptedModel([bad, TOOL_REPLY, "21 degrees."], chunk_size=100)
    result, _, _ = run("weather?", tools=[get_weather], model=model)
    assert result.ok, result.error
    assert len(model.calls) == 3
    retry = model.calls[1]
    assert retry[-2]["type"] == 4 and retry[-2]["error"] is True
    # the result's Content as it is, no "Error: " (buildToolRetryMessages, agent.go:824-829)
    assert retry[-2]["content"][0]["text"].startswith("argument validation failed:")
    assert retry[-1]["type"] == 1
    assert result.response["completion"]["content"] == "21 degrees."


class PromptedAssistant:
    """An assistant with Assistant's prompt methods (yao/assistant.py), recording what it was asked."""

    id = "tests.prompted"
    connector = ""
    options: dict = {}
    mcp = None
    prompts = [{"type": 1, "content": [{"type": "text", "text": "default"}]}]

    def __init__(self) -> None:
        self.asked: list = []

    def prompt_variables(self, *, locale: str | None = None, chat_id: str | None = None,
                         metadata: dict | None = None, **request: str) -> dict:
        return {"LOCALE": locale or "", "CHAT_ID": chat_id or "", **request, **(metadata or {})}

    def request_prompts(self, variables: dict | None = None, *, preset: str | None = None,
                        disable_global: bool | None = None) -> list[dict]:
        self.asked.append((variables, preset, disable_global))
        return [{"role": "system", "content": f"prompt {preset or 'default'} in {variables['LOCALE']}"}]

    def display_name(self, locale: str | None = None) -> str:
        return f"Name ({locale})"


def test_prompts_come_from_the_assistant_with_the_requests_variables_and_preset() -> None:
    """build.go:62-175: Create's prompt_preset and disable_global_prompts choose the prompts, which
    are filled with the request's $CTX. variables (build.go:177-267, after Create adjusted ctx);
    stream_start names the assistant in the request's locale (agent.go:718, assistant.go:115)."""
    assistant = PromptedAssistant()
    hooks = {"Create": lambda ctx, m, o: {"prompt_preset": "task.analysis", "disable_global_prompts": True,
                                          "locale": "zh-cn"}}
    result, _, model = run("hi", assistant=assistant, hooks=hooks, theme="dark", metadata={"team": "t1"})
    # USER_ID: the notebook's identity, as no authorized= was given (runner.NOTEBOOK_AUTHORIZED)
    assert assistant.asked == [({"LOCALE": "zh-cn", "CHAT_ID": "chat-1", "THEME": "dark", "USER_ID": "notebook",
                                 "team": "t1"}, "task.analysis", True)]
    assert texts(model.calls[0]) == [(1, "prompt task.analysis in zh-cn"), (2, "hi")]
    assert result.events[0]["props"]["data"]["assistant"] == {"assistant_id": "tests.prompted", "name": "Name ()"}


def test_delegation_loads_the_targets_hooks_and_uses_the_assistants_own_table() -> None:
    """next.go:49 (Get(delegate.AgentID)) and 57-66: the target runs with its own hooks; with no
    assistants= the loaded assistant's own table (load_assistant(assistants=...)) is used."""
    target = Assistant("tests.hook-echo", prompts=[{"role": "system", "content": "Echo."}])
    root = Assistant("tests.root", hooks={"Create": lambda ctx, m, o: {"delegate": {
        "agent_id": "tests.hook-echo", "messages": [{"role": "user", "content": "over to you"}]}}})
    root.assistants = {"tests.hook-echo": target}
    seen = []
    scripts = {"tests.root": root.hooks,
               "tests.hook-echo": {"Next": lambda ctx, p, o: seen.append(ctx.assistant_id) or {"data": "echoed"}}}
    result, _, _ = run("hi", assistant=root, hooks_of=lambda a: scripts[a.id])
    assert seen == ["tests.hook-echo"] and result.next == "echoed"
    assert result.hooks_called == ["Create", "Next"]


def test_what_hooks_send_goes_through_the_output_rules_and_reaches_the_sink() -> None:
    """A hook's ctx.Send goes through the kit's Output (its delta rules and diagnostics, output/
    diagnostics.py: unknown_id) and reaches output= in order, the same list as result.messages."""
    got = []

    class Sink:
        def send(self, message: dict) -> None:
            got.append(message)

    def create(ctx: Any, messages: list[dict], options: dict) -> None:
        ctx.Send({"type": "text", "props": {"content": "x"}, "id": "never-sent", "delta": True})

    result, _, _ = run("hi", hooks={"Create": create}, output=Sink())
    assert got == result.messages and len(got) == 6
    assert [d["code"] for d in result.diagnostics] == ["unknown_id"]


def test_an_interrupt_leaves_the_context_at_the_input() -> None:
    """Cancelling the request (the kernel's stop button) takes the partial turn back out of the Context."""
    import asyncio

    from agentctx_widgets.yao.runner import run_assistant_async

    class Hanging:
        def stream(self, messages: list[dict], *, options: dict | None = None) -> Any:
            async def events() -> Any:
                yield {"type": "start"}
                yield {"type": "text_start", "contentIndex": 0}
                yield {"type": "text_delta", "contentIndex": 0, "delta": "partial"}
                await asyncio.Event().wait()
            return events()

    context = Context(name="x")

    async def main() -> None:
        task = asyncio.create_task(run_assistant_async(context, "hi", assistant=Assistant("a"), model=Hanging()))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert texts(context.messages()) == [(2, "hi")]


def test_quickjs_not_a_function_is_read_as_v8s_is_not_a_function() -> None:
    """hook/script.go:38-40 matches V8's text ("o.fn is not a function"); QuickJS-NG throws the same
    TypeError as "not a function" (measured with yao/typescript.py: `o.fn()`, `ctx.nothing()`, `(3)()`),
    so it is hidden the same way; a TypeError of another text still fails the request."""
    from agentctx_widgets.hooks.errors import HookThrewError

    def quickjs(text: str) -> Any:
        def create(ctx: Any, messages: list[dict], options: dict) -> None:
            raise HookThrewError(f"{text} (at src/index.ts:3)", hook="Create", line=3, name="TypeError")
        return {"Create": create}

    hidden, _, _ = run("x", hooks=quickjs("TypeError: not a function"))
    assert hidden.ok and [d["code"] for d in hidden.diagnostics] == ["hook_error_hidden"]
    failed, _, _ = run("x", hooks=quickjs("TypeError: cannot read property 'here' of undefined"))
    assert failed.error["message"] == "TypeError: cannot read property 'here' of undefined (at src/index.ts:3)"


# -- a real assistant directory: load_assistant + TypeScript hooks --------------------------------------

RUNNER_APP = __import__("pathlib").Path(__file__).parent / "fixtures" / "yao_runner" / "assistants" / "tests"


@pytest.fixture(scope="module")
def echo_assistant() -> Any:
    """tests/fixtures/yao_runner: runner-echo (prompts.yml, src/index.ts with Create and Next) and the
    runner-target it delegates to, loaded as Yao loads them; the TypeScript engine is closed after."""
    from agentctx_widgets.yao.assistant import load_assistant
    from agentctx_widgets.yao.typescript import load_ts_module_set

    target = load_assistant(RUNNER_APP / "runner-target")
    echo = load_assistant(RUNNER_APP / "runner-echo", assistants=[target])
    hooks = load_ts_module_set(echo.script.parent)
    try:
        yield echo, hooks
    finally:
        hooks.close()


def run_echo(echo_assistant: Any, text: str, **kwargs: Any) -> tuple[YaoTurnResult, ScriptedModel]:
    assistant, hooks = echo_assistant
    model = ScriptedModel(["ok"], chunk_size=100)
    result = run_assistant(Context(name="e2e"), text, assistant=assistant, connectors={"echo-model": model},
                           hooks_of=lambda a: hooks if a is assistant else None, locale="en-us",
                           clock=FakeClock(tick=1.0, wall_ms=0), **{**IDS, **kwargs})
    return result, model


def test_a_loaded_assistant_runs_create_the_model_and_next(echo_assistant: Any) -> None:
    """The whole path on a directory: package.yao's connector picks the model (agent.go:646-650) with its
    options (build.go:301-309); prompts.yml is filled with $CTX. variables after Create changed the
    locale (build.go:177-267); Next's data is Response.next (next.go:23-36)."""
    result, model = run_echo(echo_assistant, "full")
    assert result.ok, result.error
    assert texts(model.calls[0]) == [(1, "You are Runner Echo, answering in zh-cn."), (2, "rewritten by Create")]
    assert result.model_options == [{"temperature": 0.7, "max_tokens": 64}]
    assert result.next == {"keys": ["completion", "error", "messages", "tools"], "answer": "ok",
                           "locale": "zh-cn", "scenario": "full"}
    assert event_names(result) == ["stream_start", "message_start", "message_end", "stream_end"]
    assert result.events[0]["props"]["data"]["assistant"] == {"assistant_id": "tests.runner-echo",
                                                              "type": "assistant", "name": "Runner Echo"}


def test_a_loaded_assistants_typo_is_hidden_with_its_ts_line(echo_assistant: Any) -> None:
    """hook/script.go:37-42 on a real TypeScript hook: `mesages` (index.ts:18) is a ReferenceError
    "is not defined", so Create counts as null; the diagnostic names the .ts line."""
    result, model = run_echo(echo_assistant, "typo")
    assert result.ok and texts(model.calls[0])[-1] == (2, "typo")
    assert [d["code"] for d in result.diagnostics] == ["hook_error_hidden"]
    assert "mesages is not defined" in result.diagnostics[0]["message"]
    assert "index.ts:18" in result.diagnostics[0]["message"]


def test_a_loaded_assistant_delegates_to_its_table(echo_assistant: Any) -> None:
    """agent.go:245-274 with load_assistant(assistants=[...]): runner-target answers with its own
    prompts; it has no script, so no Next runs after the hand-over."""
    fallback = ScriptedModel(["taken over"], chunk_size=100)
    result, echo_model = run_echo(echo_assistant, "delegate", model=fallback)
    assert result.ok, result.error
    assert echo_model.calls == []
    assert texts(fallback.calls[0]) == [(1, "You take over."), (2, "over to you")]
    assert result.response["assistant_id"] == "tests.runner-target" and result.hooks_called == ["Create"]
    assert result.response["completion"]["content"] == "taken over"


def test_a_callers_ctx_and_id_generator_plug_in() -> None:
    """hook_ctx= is the ctx hooks get (the current output API's ctx, whose Send returns an id) and
    id_generator= its message.IDGenerator (utils.go:10-50): a message the hook sends takes M1 and the
    model's message M2, one counter per request as in Yao; the assistant id and given fields are set on it."""
    sink: list[dict] = []

    class Ids:
        def __init__(self) -> None:
            self.counts = {"M": 0, "C": 0}

        def message(self) -> str:
            self.counts["M"] += 1
            return f"M{self.counts['M']}"

        def chunk(self) -> str:
            self.counts["C"] += 1
            return f"C{self.counts['C']}"

    ids = Ids()

    class CurrentCtx:
        chat_id, locale, theme, route, referer, connector, accept = "kept-chat", "", "", "", "", "", ""
        assistant_id, metadata, authorized, client = "", None, None, {}

        def Send(self, message: dict) -> str:  # noqa: N802 - Yao's name
            message_id = ids.message()
            sink.append({**message, "message_id": message_id})
            return message_id

    class Sink:
        def send(self, message: dict) -> None:
            sink.append(message)

    ctx = CurrentCtx()
    sent = []
    hooks = {"Create": lambda c, m, o: sent.append(c.Send({"type": "text", "props": {"content": "hello"}}))}
    result = run_assistant(Context(name="x"), "hi", assistant=Assistant("tests.create"), hooks=hooks,
                           model=ScriptedModel(["Hi!"], chunk_size=100), hook_ctx=ctx, id_generator=ids,
                           output=Sink(), clock=FakeClock(tick=1.0, wall_ms=0), locale="fr")
    assert result.ok, result.error
    assert sent == ["M1"]
    assert (ctx.assistant_id, ctx.chat_id, ctx.locale) == ("tests.create", "kept-chat", "fr")
    assert [m.get("message_id") or m["props"]["data"].get("message_id") for m in sink] == [
        None, "M1", "M2", "M2", "M2", None]  # stream_start, the hook's, message_start, C1, message_end, stream_end
    assert result.response["chat_id"] == "kept-chat"


def test_an_unknown_connector_is_reported_once_and_the_default_model_answers() -> None:
    """agent.go:646-677 resolves the connector or falls back; here the fallback is model=, and the
    connector name nobody mapped is reported once per request (unknown_connector), tool loop included."""
    model = ScriptedModel([TOOL_REPLY, "ok"], chunk_size=100)
    result, _, _ = run("x", assistant=Assistant("a", connector="gpt-x"), model=model, tools=[get_weather],
                       connectors={"other": ScriptedModel(["no"])})
    assert len(model.calls) == 2
    assert [d["code"] for d in result.diagnostics] == ["unknown_connector"]
    assert "'gpt-x'" in result.diagnostics[0]["message"]


def test_no_model_for_the_connector_ends_the_request_before_stream_start() -> None:
    """agent.go:113-121: the connector is resolved before stream_start; when it fails, stream_end
    (status "error") is the only event and no hook runs."""
    context = Context(name="x")
    result = run_assistant(context, "hi", assistant=Assistant("a", connector="gpt-x"), clock=FakeClock(tick=1.0, wall_ms=0),
                           hooks={"Create": lambda ctx, m, o: pytest.fail("Create must not run")}, **IDS)
    assert event_names(result) == ["stream_end"]
    assert result.events[0]["props"]["data"]["status"] == "error"
    assert result.error["message"].startswith("connector not specified: no model for connector 'gpt-x'")
    assert result.hooks_called == []


def test_a_mistyped_delegate_field_names_the_nested_struct_and_path() -> None:
    """hook/create.go:100-103 through encoding/json's addErrorContext (decode.go): the innermost struct
    (DelegateConfig) and the whole field path (delegate.agent_id) name a nested type error; null fields
    are simply unset (hook_unit_test.go:48-55: an empty map decodes to nothing set)."""
    result, _, model = run("x", hooks={"Create": lambda ctx, m, o: {"delegate": {"agent_id": 5}}})
    assert result.error["message"] == ("failed to unmarshal to HookCreateResponse: json: cannot unmarshal number "
                                       "into Go struct field DelegateConfig.delegate.agent_id of type string")
    assert model.calls == []
    nulls, _, _ = run("x", hooks={"Create": lambda ctx, m, o: {"temperature": None, "delegate": None, "locale": None}})
    assert nulls.ok and nulls.response["create"] == {} and nulls.model_options == [None]


def test_an_empty_reply_is_said_once_and_commits_nothing_for_it(recwarn: pytest.WarningsRecorder) -> None:
    """Issue 20: an empty reply committed nothing, said nothing, and leaked the store's UserWarning."""
    result, context, _ = run("hello", model=ScriptedModel([""], chunk_size=100))
    assert [d["code"] for d in result.diagnostics] == ["empty_reply"]
    assert texts(context.messages()) == [(2, "hello")]
    assert not [w for w in recwarn if "dropped an empty message" in str(w.message)]


def test_a_reply_cut_off_by_the_token_limit_is_said_once() -> None:
    result, context, _ = run("hello", model=ScriptedModel([{"text": "Once upon a", "stop": "length"}], chunk_size=100))
    assert [d["code"] for d in result.diagnostics] == ["reply_cut_off"]
    assert texts(context.messages())[-1] == (3, "Once upon a")
