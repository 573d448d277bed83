"""An assistant's ``mcp`` servers' tools reach the model as Yao offers them (issue 24), against the real fixture
server over stdio (tests/fixtures/mcp_server.py, shaped like Yao's echo test server).

Yao at YaoApp/yao 5a3f9a6a: ``agent/assistant/mcp.go`` (``MCPToolName`` :31-39, ``ParseMCPToolName`` :48-71,
``buildMCPTools`` :75-216, ``executeSingleToolCall`` :240-415, ``executeMultipleToolCallsParallel`` :417-677,
``isRetryableToolError`` :484-535),
``build.go:546-595`` (the tools appended to the completion options), ``agent.go:359-494`` (retry),
``loop.go`` (the tool loop), ``agent/store/types/types.go:298-357`` (the server entries' forms).
Yao's own scenario is ``tests.mcp-tools``: server ``echo`` with tools ``ping`` and ``echo``
(``agent/assistant/mcp_integration_test.go:29-42``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from agentctx_widgets import Context, ScriptedModel, run_turn  # noqa: E402
from agentctx_widgets.models.mcp import McpServer  # noqa: E402
from agentctx_widgets.yao import load_assistant  # noqa: E402
from agentctx_widgets.yao.assistant_files import AssistantLoadError  # noqa: E402
from agentctx_widgets.yao.registries import (mcp_server_configs, mcp_tool_name, parse_mcp_tool_name,  # noqa: E402
                                             parsed_content)

pytestmark = pytest.mark.timeout(120)

FIXTURE = Path(__file__).parent / "fixtures" / "mcp_server.py"


@pytest.fixture(scope="module")
def echo():
    server = McpServer.stdio(sys.executable, [str(FIXTURE), "--lifetime", "100"], name="echo", timeout=10)
    yield server
    server.close()


def write_assistant(root: Path, mcp: dict, *, config: dict | None = None) -> Path:
    directory = root / "assistants" / "notes"
    directory.mkdir(parents=True)
    (root / "app.yao").write_text("{}")
    (directory / "package.yao").write_text(json.dumps({"name": "Notes", "mcp": mcp}))
    if config is not None:
        (root / "mcps").mkdir()
        (root / "mcps" / "echo.mcp.yao").write_text(json.dumps(config))
    return directory


def call(name: str, arguments: dict, call_id: str = "call_1") -> dict:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def test_the_model_is_offered_the_listed_tools_by_yaos_names_and_the_call_runs_on_the_server(tmp_path, echo):
    """mcp_integration_test.go:29-42's tests.mcp-tools: echo's ping and echo, named echo__ping / echo__echo
    (mcp.go:150), described and shaped by the server (mcp.go:153-157); the call goes back to the server, its
    content parsed (types.go:97-149) goes to the model in the tool loop (loop.go:143-158), the reply is kept."""
    package_mcp = {"servers": [{"server_id": "echo", "tools": ["ping", "echo"]}]}
    assistant = load_assistant(write_assistant(tmp_path, package_mcp), mcp={"echo": echo})
    model = ScriptedModel([call("echo__echo", {"message": "hi", "uppercase": True}), "It said HI."], chunk_size=100)
    context = Context()
    result = run_turn(context, "say hi", assistant=assistant, model=model)
    assert result.ok, result.error
    offered = result.model_options[0]["tools"]
    assert [tool["name"] for tool in offered] == ["echo__ping", "echo__echo"]
    assert offered[1]["description"] == "Echo a message back, uppercased when asked."
    assert offered[1]["parameters"]["required"] == ["message"]
    assert set(offered[1]["parameters"]["properties"]) == {"message", "uppercase"}
    assert model.calls[1][-1] == {"type": 4, "callId": "call_1", "name": "echo__echo", "content": [
        {"type": "text", "text": '{"echo":"HI","uppercase":true,"original_length":2}'}]}
    assert result.response["tools"] == [{"toolcall_id": "call_1", "server": "echo", "tool": "echo",
                                         "arguments": '{"message":"hi","uppercase":true}',
                                         "result": {"echo": "HI", "uppercase": True, "original_length": 2}}]
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 3]
    assert context.messages()[-1]["content"][0]["text"] == "It said HI."
    assert not result.diagnostics


def test_a_server_without_a_tools_list_offers_all_its_tools_after_the_python_ones(tmp_path, echo):
    """mcp.go:129-147: no filter, every tool; build.go:586-591: appended after the tools already there."""
    def lookup(word: str) -> str:
        """Look a word up."""
        return word

    assistant = load_assistant(write_assistant(tmp_path, {"servers": ["echo"]}), mcp={"echo": echo})
    result = run_turn(Context(), "hi", assistant=assistant, model=ScriptedModel(["hello"]), tools=[lookup])
    names = [tool["name"] for tool in result.model_options[0]["tools"]]
    assert names == ["lookup", "echo__ping", "echo__echo", "echo__status", "echo__fail", "echo__crash",
                     "echo__hang", "echo__big", "echo__pid"]


def test_a_tool_error_the_model_can_fix_asks_it_again(tmp_path, echo):
    """An isError result is "tool call error: <content>" (mcp.go:394-404), retryable unless it reads as an MCP
    internal issue (mcp.go:484-535): the model gets its call, the error and the retry prompt (agent.go:804-846)."""
    assistant = load_assistant(write_assistant(tmp_path, {"servers": ["echo"]}), mcp={"echo": echo})
    model = ScriptedModel([call("echo__fail", {"reason": "bad city"}), call("echo__ping", {"count": 2}, "call_2"),
                           "Pinged twice."], chunk_size=100)
    result = run_turn(Context(), "go", assistant=assistant, model=model)
    assert result.ok, result.error
    assert len(model.calls) == 3
    error, prompt = model.calls[1][-2], model.calls[1][-1]
    assert error["error"] is True and error["name"] == "echo__fail"
    # a retry request shows ToolCallResult.Content as it is (agent.go:824-829): the isError result's content
    assert error["content"][0]["text"] == ('[{"type":"text","text":'
                                           '"Error executing tool fail: failed on purpose: bad city"}]')
    assert prompt["type"] == 1
    assert result.response["tools"][0]["result"] == {"message": "pong", "count": 2}


def test_an_mcp_internal_issue_fails_the_request(tmp_path, echo):
    """"timeout" / "unavailable" / "connection" … are not retryable (mcp.go:491-509): agent.go:413-431."""
    assistant = load_assistant(write_assistant(tmp_path, {"servers": ["echo"]}), mcp={"echo": echo})
    model = ScriptedModel([call("echo__fail", {"reason": "the service is unavailable"}), "never"], chunk_size=100)
    result = run_turn(Context(), "go", assistant=assistant, model=model, check=False)
    assert result.error["message"] == "tool calls failed with non-retryable errors (MCP internal issues)"
    assert len(model.calls) == 1


def test_a_server_that_crashes_mid_call_fails_the_request_and_the_next_one_runs(tmp_path):
    """The crash is "… the server stopped (Connection closed)": a connection issue, not retryable; the server
    starts again on the next call."""
    server = McpServer.stdio(sys.executable, [str(FIXTURE), "--lifetime", "100"], name="echo", timeout=10)
    with server:
        assistant = load_assistant(write_assistant(tmp_path, {"servers": ["echo"]}), mcp={"echo": server})
        crashed = run_turn(Context(), "go", assistant=assistant,
                           model=ScriptedModel([call("echo__crash", {}), "never"], chunk_size=100), check=False)
        assert crashed.error["message"] == "tool calls failed with non-retryable errors (MCP internal issues)"
        again = run_turn(Context(), "go", assistant=assistant,
                         model=ScriptedModel([call("echo__status", {}), "online"], chunk_size=100))
    assert again.ok, again.error
    assert again.response["tools"][0]["result"] == {"status": "online"}


def test_bad_arguments_are_retryable(tmp_path, echo):
    """Arguments that are not an object are the model's to fix (mcp.go:329-342); so are arguments that do
    not fit the tool's listed schema, checked before the call as Yao checks them (mcp.go:344-356: "argument
    validation failed", retryable); the server never sees them."""
    assistant = load_assistant(write_assistant(tmp_path, {"servers": ["echo"]}), mcp={"echo": echo})
    model = ScriptedModel([{"tool_calls": [{"id": "call_1", "name": "echo__echo", "arguments": "[1]"}]},
                           call("echo__echo", {"message": 5}, "call_2"), call("echo__echo", {"message": "5"}, "call_3"),
                           "5"], chunk_size=100)
    result = run_turn(Context(), "echo 5", assistant=assistant, model=model)
    assert result.ok, result.error
    assert model.calls[1][-2]["content"][0]["text"] == "arguments must be an object, got list"  # Content
    refused = model.calls[2][-2]["content"][0]["text"]
    assert refused == "argument validation failed: arguments.message: 5 is not of type 'string'"
    assert result.response["tools"][0]["result"]["echo"] == "5"


def test_a_server_not_registered_here_is_skipped_with_a_diagnostic_and_its_calls_fail(tmp_path, echo):
    """mcp.go:116-120: Yao logs and skips a server it cannot select; here it is a yao_mcp_not_offered diagnostic,
    as is a listed tool the server does not have. A call of the unregistered server's tool fails the request
    (mcp.go:266-275: not retryable)."""
    directory = write_assistant(tmp_path, {"servers": ["notes", {"echo": ["ping", "nope"]}]})
    assistant = load_assistant(directory, mcp={"echo": echo})
    result = run_turn(Context(), "hi", assistant=assistant, model=ScriptedModel(["hello"]))
    assert result.ok, result.error
    assert [tool["name"] for tool in result.model_options[0]["tools"]] == ["echo__ping"]
    notes, nope = result.diagnostics
    assert notes["code"] == nope["code"] == "yao_mcp_not_offered"
    assert notes["message"].startswith("MCP server 'notes': it is not registered here, so the model is not "
                                       "offered its tools")
    assert "load_assistant(path, mcp={'notes': McpServer.stdio(command, args)})" in notes["message"]
    assert nope["message"].startswith("MCP server 'echo': it has no tool 'nope' (its tools: ping, echo,")
    called = run_turn(Context(), "hi", assistant=assistant,
                      model=ScriptedModel([call("notes__search", {"q": "x"}), "never"], chunk_size=100), check=False)
    assert called.error["message"] == "tool calls failed with non-retryable errors (MCP internal issues)"


def test_configured_servers_are_offered_only_when_started(tmp_path):
    """Nothing starts without start_mcp=True (yao/mcp_config.py): the model is offered no tool and says why."""
    config = {"transport": "stdio", "command": sys.executable, "arguments": [str(FIXTURE), "--lifetime", "100"]}
    directory = write_assistant(tmp_path, {"servers": [{"echo": {"tools": ["status"]}}]}, config=config)
    held = load_assistant(directory)
    assert "mcp" not in held.services
    result = run_turn(Context(), "hi", assistant=held, model=ScriptedModel(["hello"]))
    assert result.model_options[0] is None or "tools" not in result.model_options[0]
    assert [d["code"] for d in result.diagnostics] == ["yao_mcp_not_offered"]
    started = load_assistant(directory, start_mcp=True)
    try:
        ran = run_turn(Context(), "hi", assistant=started,
                       model=ScriptedModel([call("echo__status", {}), "online"], chunk_size=100))
    finally:
        started.services["mcp"].close()
    assert ran.ok, ran.error
    assert [tool["name"] for tool in ran.model_options[0]["tools"]] == ["echo__status"]
    assert ran.response["tools"][0] == {"toolcall_id": "call_1", "server": "echo", "tool": "status",
                                        "arguments": "{}", "result": {"status": "online"}}


def test_create_mcp_servers_replace_the_assistants(tmp_path, echo):
    """mcp.go:79-92: a Create hook's mcp_servers are used instead of package.yao's."""
    directory = write_assistant(tmp_path, {"servers": [{"echo": ["ping"]}]})
    (directory / "src").mkdir()
    (directory / "src" / "index.ts").write_text(
        "function Create(ctx: any, messages: any[]) {\n"
        "  return { mcp_servers: [{ server_id: 'echo', tools: ['status'] }] };\n}\n")
    assistant = load_assistant(directory, mcp={"echo": echo})
    result = run_turn(Context(), "hi", assistant=assistant, model=ScriptedModel(["hello"]))
    assert result.ok, result.error
    assert [tool["name"] for tool in result.model_options[0]["tools"]] == ["echo__status"]


def test_names_and_server_entries_as_yao_reads_them(tmp_path):
    """mcp.go:22-71 (mcp_unit_test's cases) and types.go:298-357 (mcp_test.go:12-90's cases)."""
    assert mcp_tool_name("echo", "ping") == "echo__ping"
    assert mcp_tool_name("github.enterprise", "search") == "github_enterprise__search"
    assert parse_mcp_tool_name("github_enterprise__search") == ("github.enterprise", "search")
    assert parse_mcp_tool_name("a__b__c") is None and parse_mcp_tool_name("ping") is None
    assert mcp_server_configs({"servers": ["s1", {"s2": ["t1", "t2"]}, {"s3": {"resources": ["r"], "tools": ["t"]}},
                                          {"server_id": "s4", "tools": ["t"]}]}) == [
        {"server_id": "s1", "tools": []}, {"server_id": "s2", "tools": ["t1", "t2"]},
        {"server_id": "s3", "tools": ["t"]}, {"server_id": "s4", "tools": ["t"]}]
    with pytest.raises(AssistantLoadError, match=r"package.yao: mcp format error: servers\[0\]: MCPServerConfig "
                                                 r"object must have exactly one key or server_id field"):
        load_assistant(write_assistant(tmp_path, {"servers": [{"a": ["x"], "b": ["y"]}]}))


def test_parsed_content_follows_tool_call_result():
    """types.go:97-149: text as JSON or as it is, an image's fields, a resource's object, one result alone."""
    assert parsed_content([]) is None
    assert parsed_content([{"type": "text", "text": '{"a": 1}'}]) == {"a": 1}
    assert parsed_content([{"type": "text", "text": "plain"},
                           {"type": "image", "data": "QQ==", "mimeType": "image/png"},
                           {"type": "resource", "resource": {"uri": "x://y"}}]) == [
        "plain", {"type": "image", "data": "QQ==", "mimeType": "image/png"}, {"uri": "x://y"}]


def test_the_requests_stop_ends_a_call_in_flight_on_the_server(tmp_path):
    """Ctrl-C (the request's stop) cancels the awaiting call: the request ends cancelled, the context keeps only
    the input, the server answers the next call. The server's timeout is 100 s: had the stop not reached the
    call, it would have ended in a non-retryable timeout error instead (the test does not time it)."""
    import asyncio
    import threading

    from agentctx_widgets.hooks.turn_core import StopSignal
    from agentctx_widgets.yao.runner import run_assistant

    server = McpServer.stdio(sys.executable, [str(FIXTURE), "--lifetime", "100"], name="echo", timeout=100)
    with server:
        assistant = load_assistant(write_assistant(tmp_path, {"servers": ["echo"]}), mcp={"echo": server})
        assert server.call_tool("status")["isError"] is False  # started
        stop, context = StopSignal(), Context()
        model = ScriptedModel([call("echo__hang", {}), "never"], chunk_size=100)
        calling = threading.Event()  # the stop comes once the hang call is on its way, however slow the machine
        original = server.acall_tool

        async def acall_tool(*args, **kwargs):
            calling.set()
            return await original(*args, **kwargs)

        server.acall_tool = acall_tool
        stopper = threading.Thread(target=lambda: calling.wait(60) and stop.set())
        stopper.start()
        with pytest.raises(asyncio.CancelledError):
            run_assistant(context, "wait", assistant=assistant, model=model, stop=stop)
        stopper.join()
        assert calling.is_set()
        assert [m["type"] for m in context.messages()] == [2]
        assert server.call_tool("status")["isError"] is False


# -- several calls in one reply: executeMultipleToolCallsParallel (mcp.go:417-479) ----------------------

def several(*calls: tuple[str, str, object]) -> dict:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments} for call_id, name, arguments in calls]}


def test_several_calls_are_grouped_by_server_and_one_whose_arguments_do_not_parse_gets_no_result(tmp_path, echo):
    """mcp.go:427-437 groups the calls by server (Go's map order is random; here, the order of each server's
    first call), :560-566 skips a call whose arguments jsoniter cannot read into an object (no result, a log
    line: here the yao_tool_call_dropped diagnostic), and each server's calls run at once (CallToolsParallel)."""
    counted: list[dict] = []
    assistant = load_assistant(write_assistant(tmp_path, {"servers": ["echo", "py"]}),
                               mcp={"echo": echo, "py": {"count": lambda args: counted.append(args) or {"n": 1}}})
    model = ScriptedModel([several(("call_1", "echo__ping", {"count": 2}), ("call_2", "py__count", {}),
                                   ("call_3", "echo__echo", "not json"), ("call_4", "echo__status", {})),
                           "done"], chunk_size=100)
    result = run_turn(Context(), "go", assistant=assistant, model=model)
    assert [(t["toolcall_id"], t["result"]) for t in result.response["tools"]] == [
        ("call_1", {"message": "pong", "count": 2}), ("call_4", {"status": "online"}), ("call_2", {"n": 1})]
    assert [m["callId"] for m in model.calls[1] if m["type"] == 4] == ["call_1", "call_4", "call_2"]  # no call_3
    assert [d["code"] for d in result.diagnostics] == ["yao_tool_call_dropped"]
    assert result.diagnostics[0]["message"].startswith("the model's call call_3 of 'echo__echo' gets no result: "
                                                       "its arguments are not JSON")
    assert counted == [{}]


def test_a_retryable_failure_among_several_calls_runs_that_servers_calls_again_one_by_one(tmp_path):
    """mcp.go:464-470: a server's parallel calls with a retryable error (shouldRetrySequential, :538-548) run
    again sequentially, so each ran twice (the yao_tools_rerun diagnostic says so); then the model is asked
    again with the errors (agent.go:413-466)."""
    ran: list[str] = []

    def flaky(args):
        ran.append("flaky")
        raise ValueError("invalid city")

    assistant = load_assistant(write_assistant(tmp_path, {"servers": ["py"]}),
                               mcp={"py": {"flaky": flaky, "count": lambda args: ran.append("count") or {"n": len(ran)}}})
    model = ScriptedModel([several(("c1", "py__flaky", {}), ("c2", "py__count", {})),
                           several(("c3", "py__count", {})), "done"], chunk_size=100)
    result = run_turn(Context(), "go", assistant=assistant, model=model)
    assert ran == ["flaky", "count", "flaky", "count", "count"]  # the parallel pass, the rerun, the retry's call
    assert [d["code"] for d in result.diagnostics] == ["yao_tools_rerun"]
    retried = [m["content"][0]["text"] for m in model.calls[1] if m["type"] == 4]
    # the rerun's answers (a lone call's texts), as a retry request shows them: Content (agent.go:824-829)
    assert retried == ["tool call failed: invalid city", '[{"type":"text","text":"{\\"n\\":4}"}]']
    assert result.response["tools"][0]["result"] == {"n": 5}


def test_a_failed_calls_result_is_its_parsed_content_as_yao_gives_it(echo):
    """agent.go:390-400 sets every ToolCallResponse's result to ParsedContent (types.go:97-149), of a failed
    call too: an isError result's content parsed (the text, not JSON), or the error text itself."""
    import asyncio

    from agentctx_widgets.yao.registries import Mcp, call_offered

    registry = Mcp()
    registry.register("echo", echo)
    _, _, result, error, again, content = asyncio.run(call_offered(registry, "echo__fail", '{"reason": "bad city"}'))
    assert result == "Error executing tool fail: failed on purpose: bad city" and again is True
    assert error == 'tool call error: [{"type":"text","text":"Error executing tool fail: failed on purpose: bad city"}]'
    assert content == error.removeprefix("tool call error: ")  # ToolCallResult.Content: the content's JSON
    _, _, result, error, again, content = asyncio.run(call_offered(registry, "nowhere__x", "{}"))
    assert result == error == content and error.startswith("failed to select MCP client 'nowhere': ") and again is False


def test_empty_arguments_skip_the_schema_check_and_unknown_blocks_stay_as_they_are(echo):
    """mcp.go:313-357 parses and validates only `if toolCall.Function.Arguments != ""`: a call with none
    reaches the server (whose own answer is then the result); types.go:139-141 keeps a block of a type it
    does not know as it is (agent/context/mcp.go:823-828, for ctx.mcp, gives {type, text} instead)."""
    import asyncio

    from agentctx_widgets.yao.registries import Mcp, call_offered, parse_tool_content

    registry = Mcp()
    registry.register("echo", echo)
    _, _, _, checked, _, _ = asyncio.run(call_offered(registry, "echo__echo", '{"message": 5}'))
    assert checked.startswith("argument validation failed: ")
    _, _, _, error, _, _ = asyncio.run(call_offered(registry, "echo__echo", ""))
    assert not error.startswith("argument validation failed")  # the server was called
    audio = [{"type": "audio", "data": "x"}]
    assert parsed_content(audio) == {"type": "audio", "data": "x"}
    assert parse_tool_content({"content": audio}) == {"type": "audio", "text": ""}
