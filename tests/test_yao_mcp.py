"""ctx.mcp against a real MCP server (issue 24): Yao's method names and result shapes, as Yao's own tests
ask them (agent/context/jsapi_mcp_integration_test.go at YaoApp/yao 5a3f9a6a), from the fixture server
shaped like Yao's echo test server (tests/fixtures/mcp_server.py), over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from agentctx_widgets import Context, ScriptedModel, run_turn  # noqa: E402
from agentctx_widgets.models.mcp import McpServer  # noqa: E402
from agentctx_widgets.yao import load_assistant  # noqa: E402
from agentctx_widgets.yao.registries import Mcp, parse_tool_content  # noqa: E402
from agentctx_widgets.yao.values import NotAvailableHere, YaoServiceError  # noqa: E402

pytestmark = pytest.mark.timeout(120)

FIXTURE = Path(__file__).parent / "fixtures" / "mcp_server.py"


@pytest.fixture(scope="module")
def mcp():
    registry = Mcp()
    registry.register("echo", McpServer.stdio(sys.executable, [str(FIXTURE), "--lifetime", "100"], name="echo",
                                              timeout=2))
    registry.register("py", {"double": lambda args: {"value": args["n"] * 2}})
    yield registry
    registry.close()


def test_list_and_read_resources_list_tools_as_yaos_tests_ask(mcp):
    """jsapi_mcp_integration_test.go:27-111: resources by name, one content, tools by name."""
    resources = mcp.ListResources("echo", "")["resources"]
    assert len(resources) == 2 and {r["name"] for r in resources} == {"info", "health"}
    assert len(mcp.ReadResource("echo", "echo://info")["contents"]) == 1
    tools = {tool["name"] for tool in mcp.ListTools("echo", "")["tools"]}
    assert {"ping", "status", "echo"} <= tools


def test_call_tool_returns_the_parsed_content(mcp):
    """jsapi_mcp_integration_test.go:114-138 and :713-771: the text block parsed as JSON, returned alone."""
    assert mcp.CallTool("echo", "ping", {"count": 3, "message": "test"}) == {"message": "test", "count": 3}
    assert mcp.CallTool("echo", "echo", {"message": "test message", "uppercase": True}) == {
        "echo": "TEST MESSAGE", "uppercase": True, "original_length": 12}
    assert mcp.CallTools("echo", [{"name": "ping"}, {"name": "status"}]) == [
        {"message": "pong", "count": 1}, {"status": "online"}]
    assert mcp.CallToolsParallel("echo", [{"name": "ping"}, {"name": "echo", "arguments": {"message": "hello"}}]) == [
        {"message": "pong", "count": 1}, {"echo": "hello", "uppercase": False, "original_length": 5}]


def test_a_failed_call_of_call_tools_is_its_slots_text_not_the_whole_calls_error(mcp):
    """gou's client (41aeff7 mcp/client/tools.go:165-176, 222-233) makes each failed call of CallTools /
    CallToolsParallel an isError result "Error calling tool NAME: failed to call tool: ERR" (:105), which
    agent/context/mcp.go:586-596 parses as any result: the hook reads the text in that slot, the other calls
    answer. CallTool alone still throws, and an unknown server fails the whole call (mcp.go:297-301)."""
    hung = ("Error calling tool hang: failed to call tool: MCP server 'echo': tools/call 'hang' did not answer "
            "within 2 s (timeout=)")
    assert mcp.CallToolsParallel("echo", [{"name": "hang"}, {"name": "ping"}]) == [hung, {"message": "pong", "count": 1}]
    assert mcp.CallTools("echo", [{"name": "ping"}, {"name": "hang"}]) == [{"message": "pong", "count": 1}, hung]
    assert mcp.CallTools("py", [{"name": "double", "arguments": {"n": 2}}, {"name": "triple"}]) == [
        {"value": 4}, "Error calling tool triple: failed to call tool: tool 'triple' not found on MCP server 'py' "
                      "(registered: double)"]
    with pytest.raises(YaoServiceError, match="did not answer within 2 s"):
        mcp.CallTool("echo", "hang", {})
    with pytest.raises(NotAvailableHere, match="MCP server 'nowhere' is not available here"):
        mcp.CallToolsParallel("nowhere", [{"name": "ping"}])


def test_call_tools_parallel_ends_at_the_hooks_limit_and_checks_every_argument_first(mcp, monkeypatch):
    """The calls run on threads of their own, where the hook's time or wall limit (what the bridge reports
    for the hook's own thread) is not seen: the wait asks it, stops, and tells every call to end, instead of
    returning slots once the server's own timeout passed. Arguments are converted before any call runs, as
    the binding converts the whole array first (jsapi_mcp.go:166-169)."""
    import threading

    from agentctx_widgets.yao import values
    from agentctx_widgets.yao.fanout import FanOutStopped

    limit, calling = threading.Event(), threading.Event()
    monkeypatch.setattr(values, "bound_call_stopped", lambda: "time" if limit.is_set() else None)
    server = mcp.servers["echo"]
    original = server.call_tool
    monkeypatch.setattr(server, "call_tool", lambda *args, **kwargs: (calling.set(), original(*args, **kwargs))[1])
    threading.Thread(target=lambda: calling.wait(60) and limit.set()).start()  # the limit, once the call is on
    with pytest.raises(FanOutStopped):
        mcp.CallToolsParallel("echo", [{"name": "hang"}])
    monkeypatch.undo()
    ran = []
    mcp.register("tracked", {"t": lambda args: ran.append(args) or 1})
    with pytest.raises(YaoServiceError, match="^invalid tools parameter: "):
        mcp.CallTools("tracked", [{"name": "t", "arguments": {"n": 1}}, {"name": "t", "arguments": {"n": 2 ** 70}}])
    assert ran == []
    assert mcp.CallToolsParallel("echo", [{"name": "ping"}]) == [{"message": "pong", "count": 1}]  # still serves


def test_prompts_list_and_get(mcp):
    """jsapi_mcp_integration_test.go:209-262."""
    prompts = mcp.ListPrompts("echo", "")["prompts"]
    assert {p["name"] for p in prompts} == {"test_connection", "test_echo"}
    got = mcp.GetPrompt("echo", "test_connection", {"detailed": "true"})
    assert len(got["messages"]) == 1 and got["messages"][0]["content"]["text"].endswith("(detailed: true).")


def test_samples_of_a_real_server_are_yaos_empty_answer(mcp):
    """gou mcp/client/samples.go: a server that is not a Yao process has no samples."""
    assert mcp.ListSamples("echo", "tool", "ping") == {"samples": [], "total": 0}
    with pytest.raises(YaoServiceError, match="^sample not found$"):
        mcp.GetSample("echo", "tool", "ping", 0)
    with pytest.raises(YaoServiceError, match="^index must be a number$"):
        mcp.GetSample("echo", "tool", "ping", "0")


def test_all_any_race_keep_one_slot_per_request(mcp):
    """mcp.go:625-760; jsapi_mcp_integration_test.go:292-442 (All: 3 results, the failing one with error)."""
    everything = mcp.All([{"mcp": "echo", "tool": "ping"}, {"mcp": "nowhere", "tool": "x"},
                          {"mcp": "py", "tool": "double", "arguments": {"n": 4}}])
    assert len(everything) == 3
    assert everything[0] == {"mcp": "echo", "tool": "ping", "result": {"message": "pong", "count": 1}}
    assert everything[1]["error"].startswith("MCP server 'nowhere' is not available here")
    assert everything[2] == {"mcp": "py", "tool": "double", "result": {"value": 8}}
    raced = mcp.Race([{"mcp": "echo", "tool": "hang"}, {"mcp": "py", "tool": "double", "arguments": {"n": 1}}])
    assert len(raced) == 2 and raced[1] == {"mcp": "py", "tool": "double", "result": {"value": 2}}
    anyone = mcp.Any([{"mcp": "nowhere", "tool": "x"}, {"mcp": "echo", "tool": "status"}])
    assert len(anyone) == 2 and anyone[1]["result"] == {"status": "online"}
    with pytest.raises(YaoServiceError, match="^request.tool is required and must be a string$"):
        mcp.All([{"mcp": "echo"}])


def test_a_hang_or_an_unknown_tool_is_the_error_the_hook_sees(mcp):
    with pytest.raises(YaoServiceError, match=r"MCP server 'echo': tools/call 'hang' did not answer within 2 s"):
        mcp.CallTool("echo", "hang", {})
    assert mcp.CallTool("echo", "nope", {}) == "Unknown tool: nope"  # an isError result is content, as in mcp.go:222-237


def test_parse_tool_content_follows_mcp_go():
    """mcp.go:788-834: text as JSON or as it is, images as {type, data, mimeType}, one block alone."""
    assert parse_tool_content({"content": []}) is None
    assert parse_tool_content({"content": [{"type": "text", "text": "plain"}]}) == "plain"
    assert parse_tool_content({"content": [{"type": "text", "text": "[1]"},
                                           {"type": "image", "data": "QQ==", "mimeType": "image/png"}]}) == [
        [1], {"type": "image", "data": "QQ==", "mimeType": "image/png"}]


# -- a Yao hook against the real server ---------------------------------------------------------------


def write_assistant(root: Path, *, config: dict | None = None) -> Path:
    directory = root / "assistants" / "reader"
    (directory / "src").mkdir(parents=True)
    (root / "app.yao").write_text("{}")
    (directory / "package.yao").write_text(json.dumps({"name": "Reader"}))
    (directory / "src" / "index.ts").write_text(
        "function Create(ctx: any, messages: any[]) {\n"
        "  const info = ctx.mcp.ReadResource('echo', 'echo://info').contents[0].text;\n"
        "  const prompt = ctx.mcp.GetPrompt('echo', 'test_echo', { message: 'hi' }).messages[0].content.text;\n"
        "  const tools = ctx.mcp.ListTools('echo').tools.length;\n"
        "  return { messages: [{ role: 'user', content: info + ' | ' + prompt + ' | ' + tools }] };\n"
        "}\n")
    if config is not None:
        (root / "mcps").mkdir()
        (root / "mcps" / "echo.mcp.yao").write_text(json.dumps(config))
    return directory


def test_a_typescript_hook_reads_resources_and_prompts_from_the_real_server(tmp_path):
    server = McpServer.stdio(sys.executable, [str(FIXTURE), "--lifetime", "100"], name="echo")
    with server:
        assistant = load_assistant(write_assistant(tmp_path), mcp={"echo": server})
        result = run_turn(Context(), "hello", assistant=assistant, model=ScriptedModel(["ok"]))
    (seen,) = result.response["create"]["messages"]
    assert seen["content"] == '{"name": "echo", "version": "1.0"} | Please echo: hi | 8'


def test_configured_servers_start_only_when_asked(tmp_path):
    config = {"label": "Echo", "transport": "stdio", "command": sys.executable,
              "arguments": [str(FIXTURE), "--lifetime", "100"]}
    directory = write_assistant(tmp_path, config=config)
    held = load_assistant(directory)
    (found,) = [d for d in held.diagnostics if d["code"] == "yao_mcp_not_started"]
    assert "MCP server 'echo' was not started: it would run McpServer.stdio('echo': " in found["message"]
    assert str(FIXTURE) in found["message"] and "start_mcp=True" in found["hint"]
    assert "mcp" not in held.services
    started = load_assistant(directory, start_mcp=True)
    try:
        result = run_turn(Context(), "hello", assistant=started, model=ScriptedModel(["ok"]))
        assert result.response["create"]["messages"][0]["content"].endswith("| Please echo: hi | 8")
    finally:
        started.services["mcp"].close()


def test_a_transport_that_cannot_run_here_is_named(tmp_path):
    directory = write_assistant(tmp_path, config={"transport": "process", "tools": {"ping": "scripts.x.Ping"}})
    (found,) = [d for d in load_assistant(directory).diagnostics if d["code"] == "yao_mcp_not_run"]
    assert found["message"] == "MCP server 'echo': transport 'process' does not run here"


def test_a_call_from_a_hooks_thread_ends_when_the_request_stops_not_at_its_timeout():
    """A JavaScript hook's ctx.mcp call waits on the bridge thread, where Ctrl-C does not land; the request's
    stop (which Ctrl-C sets) ends it. The server's timeout is 100 s here: the error saying 'stopped' is how
    we know it was the stop (the test does not time it)."""
    import threading

    from agentctx_widgets.hooks.turn_core import StopSignal

    registry = Mcp()
    registry.register("slow", McpServer.stdio(sys.executable, [str(FIXTURE), "--lifetime", "100"], name="slow",
                                              timeout=100))
    registry.stop = StopSignal()
    try:
        assert registry.CallTool("slow", "ping", {}) == {"message": "pong", "count": 1}  # started, answering
        failed: list[BaseException] = []
        server, calling = registry.servers["slow"], threading.Event()
        original = server.call_tool
        server.call_tool = lambda *args, **kwargs: (calling.set(), original(*args, **kwargs))[1]
        waiting = threading.Thread(target=lambda: _call_and_keep(registry, failed))
        waiting.start()
        assert calling.wait(60)  # the call is under way before the stop comes
        registry.stop.set()
        waiting.join(60)
        assert not waiting.is_alive()
        assert len(failed) == 1 and isinstance(failed[0], YaoServiceError)
        assert str(failed[0]) == "MCP server 'slow': the call was stopped (interrupt)"
    finally:
        registry.close()


def _call_and_keep(registry, failed):
    try:
        registry.CallTool("slow", "hang", {})
    except BaseException as error:  # noqa: BLE001 - kept for the test to read
        failed.append(error)


def test_requests_sharing_an_assistants_registry_each_have_their_own_stop():
    """An assistant's ``services["mcp"]`` serves every request, and a suite runs requests at once: each
    request's services see the shared registrations but their own stop, so one request's Ctrl-C ends its
    own calls and no other's (before, the last request to start set the stop for all of them)."""
    from agentctx_widgets.hooks.turn_core import StopSignal
    from agentctx_widgets.yao.registries import Search
    from agentctx_widgets.yao.services import YaoServices

    shared_mcp, shared_search = Mcp(), Search()
    first = YaoServices(mcp=shared_mcp, search=shared_search)
    second = YaoServices(mcp=shared_mcp, search=shared_search)
    for member in (first.mcp, first.search, second.mcp, second.search):
        member.stop = StopSignal()
    first.mcp.stop.set()
    first.search.stop.set()
    assert first.mcp._stopped() == "interrupt" and first.search._stopped() == "interrupt"
    assert second.mcp._stopped() is None and second.search._stopped() is None
    first.mcp.register("tools", {"echo": lambda arguments: arguments})  # a hook registers during a request
    assert second.mcp.CallTool("tools", "echo", {"x": 1}) == {"x": 1}
    assert "tools" in shared_mcp.servers and shared_mcp.stop is None
