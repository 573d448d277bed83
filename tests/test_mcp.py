"""Real MCP servers (issue 24): ``McpServer.stdio`` / ``.http`` and ``run_turn(tools=[server, function])``.

The servers are real: tests/fixtures/mcp_server.py, written with the official SDK's MCPServer (FastMCP
in mcp 1), started over stdio and over streamable HTTP on 127.0.0.1 (a uvicorn child on a free port that
exits by itself), and ``mcp-server-time``, the reference "time" server installed from PyPI by the test
extra (``pip install -e ".[test]"``), run as ``python -m mcp_server_time``. No wall-clock bounds: a
hang is ended by the call's timeout (set small), a crash by the server exiting.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from agentctx_widgets import Context, ScriptedModel, run_turn  # noqa: E402
from agentctx_widgets.models.mcp import McpError, McpServer, McpTool  # noqa: E402
from agentctx_widgets.models.tools import ToolDefinitionError, as_tools  # noqa: E402

pytestmark = pytest.mark.timeout(120)

FIXTURE = Path(__file__).parent / "fixtures" / "mcp_server.py"


def echo_server(**options):
    return McpServer.stdio(sys.executable, [str(FIXTURE), "--lifetime", "100"], name="echo", **options)


@pytest.fixture(scope="module")
def echo():
    with echo_server(timeout=1.5) as server:
        yield server


@pytest.fixture(scope="module")
def http_url():
    child = subprocess.Popen([sys.executable, str(FIXTURE), "--http", "--lifetime", "100"],
                             stdout=subprocess.PIPE, text=True)
    try:
        port = int(child.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        child.kill()
        child.wait()


def calls(*items):
    return {"tool_calls": [{"id": f"c{i}", "name": name, "arguments": arguments}
                           for i, (name, arguments) in enumerate(items, 1)]}


def results(context):
    return [m for m in context.messages() if m["type"] == 4]


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


# -- the client ------------------------------------------------------------------------------------


def test_stdio_server_lists_and_calls_tools_reads_resources_and_gets_prompts(echo):
    names = [tool["name"] for tool in echo.list_tools()["tools"]]
    assert names == ["ping", "echo", "status", "fail", "crash", "hang", "big", "pid"]
    called = echo.call_tool("echo", {"message": "hello world", "uppercase": True})
    assert called["isError"] is False
    assert json.loads(called["content"][0]["text"]) == {"echo": "HELLO WORLD", "uppercase": True,
                                                        "original_length": 11}
    assert [r["name"] for r in echo.list_resources()["resources"]] == ["info", "health"]
    assert echo.read_resource("echo://info")["contents"] == [
        {"uri": "echo://info", "mimeType": "application/json", "text": '{"name": "echo", "version": "1.0"}'}]
    assert [p["name"] for p in echo.list_prompts()["prompts"]] == ["test_connection", "test_echo"]
    prompt = echo.get_prompt("test_connection", {"detailed": "true"})
    assert prompt["messages"] == [{"role": "user", "content": {"type": "text",
                                                                "text": "Test the connection (detailed: true)."}}]
    assert "_meta" not in called and "resultType" not in prompt  # the protocol envelope is left out


def test_http_server_answers_the_same(http_url):
    with McpServer.http(http_url, name="echo-http", timeout=10) as server:
        assert server.call_tool("ping", {"message": "over http"})["content"][0]["text"].count("over http") == 1
        assert [r["uri"] for r in server.list_resources()["resources"]] == ["echo://info", "echo://health"]


def test_a_hanging_call_ends_at_its_timeout_and_the_server_still_answers(echo):
    with pytest.raises(McpError, match=r"MCP server 'echo': tools/call 'hang' did not answer within 0.5 s"):
        echo.call_tool("hang", timeout=0.5)
    assert echo.call_tool("status")["isError"] is False


def test_an_oversize_result_is_refused_naming_the_cap():
    with echo_server(max_result_bytes=10_000) as server:
        with pytest.raises(McpError, match=r"over the cap of 10,000 \(max_result_bytes=\); it was refused"):
            server.call_tool("big", {"size": 20_000})
        assert server.call_tool("big", {"size": 100})["isError"] is False


def test_a_crash_fails_that_call_naming_the_server_and_the_next_call_restarts_it():
    with echo_server() as server:
        first = json.loads(server.call_tool("pid")["content"][0]["text"])
        with pytest.raises(McpError, match=r"MCP server 'echo': tools/call 'crash' failed: the server stopped"):
            server.call_tool("crash")
        second = json.loads(server.call_tool("pid")["content"][0]["text"])
        assert second != first


def test_close_stops_the_child_process():
    server = echo_server()
    pid = json.loads(server.call_tool("pid")["content"][0]["text"])
    os.kill(pid, 0)  # alive
    server.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    server.close()  # idempotent


def test_a_command_that_does_not_exist_is_a_clear_error():
    server = McpServer.stdio("/nonexistent/mcp-server", name="nowhere")
    with pytest.raises(McpError, match=r"MCP server 'nowhere': could not start: FileNotFoundError"):
        server.list_tools()


def test_an_http_server_nobody_listens_on_names_what_failed_not_a_task_group():
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now: the connection is refused
    with McpServer.http(f"http://127.0.0.1:{port}/mcp", name="gone", timeout=10) as server:
        with pytest.raises(McpError) as raised:
            server.list_tools()
    message = str(raised.value)
    assert message.startswith("MCP server 'gone': could not start: ") and "TaskGroup" not in message, message


def test_a_server_that_never_answers_initialize_fails_its_start_not_its_calls():
    """Starting is bounded by start_timeout, apart from the calls' timeout (a short call timeout must not
    fail a server that is slow to import its SDK on a busy machine)."""
    silent = McpServer.stdio(sys.executable, ["-c", "import time; time.sleep(100)"], name="silent", timeout=0.5,
                             start_timeout=1)
    with silent, pytest.raises(McpError, match=r"^MCP server 'silent': did not start within 1 s"):
        silent.list_tools()
    with pytest.raises(ValueError, match="start_timeout must be a positive number"):
        McpServer.stdio("x", start_timeout=0)


def test_bad_arguments_are_refused_up_front():
    with pytest.raises(ValueError, match="McpServer.stdio\\(command\\)"):
        McpServer.stdio("")
    with pytest.raises(ValueError, match="McpServer.http\\(url\\)"):
        McpServer.http("ftp://example.org")
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        McpServer.stdio("x", timeout=0)


# -- run_turn(tools=[server, function]) -------------------------------------------------------------


def test_run_turn_offers_the_servers_tools_next_to_python_ones_and_runs_them_on_the_server(echo):
    seen = []

    class Recording(ScriptedModel):
        def stream(self, messages, *, options=None):
            seen.append(options)
            return super().stream(messages, options=options)

    context = Context()
    model = Recording([calls(("echo", {"message": "yo", "uppercase": True}), ("add", {"a": 2, "b": 3})), "done"])
    result = run_turn(context, "go", model=model, tools=[echo, add])
    assert result.ok
    offered = {tool["name"]: tool for tool in seen[0]["tools"]}
    assert list(offered) == ["ping", "echo", "status", "fail", "crash", "hang", "big", "pid", "add"]
    assert offered["echo"]["parameters"]["required"] == ["message"]
    assert "title" not in offered["echo"]["parameters"]
    echoed, added = results(context)
    assert json.loads(echoed["content"][0]["text"])["echo"] == "YO" and "error" not in echoed
    assert added["content"][0]["text"] == "5"


def test_a_tool_error_and_a_timeout_become_error_results_and_the_turn_goes_on(echo):
    context = Context()
    model = ScriptedModel([calls(("fail", {"reason": "no"}), ("hang", {}), ("status", {})), "done"])
    result = run_turn(context, "go", model=model, tools=[echo], check=False)
    assert result.ok and result.response["content"] == "done"
    failed, hung, status = results(context)
    assert failed["error"] is True and "failed on purpose: no" in failed["content"][0]["text"]
    assert hung["error"] is True and "did not answer within 1.5 s" in hung["content"][0]["text"]
    assert "error" not in status


def test_arguments_that_do_not_fit_the_tools_schema_are_refused_before_the_call(echo):
    """As a Python tool's arguments are validated before it runs (and as Yao checks an MCP tool's,
    agent/assistant/mcp.go:344-356): the model reads what was wrong and where; the server is not asked."""
    context = Context()
    model = ScriptedModel([calls(("echo", {"message": 5}), ("echo", {})), "sorry"])
    result = run_turn(context, "echo five", model=model, tools=[echo], check=False)
    assert result.ok and result.response["content"] == "sorry"
    wrong_type, missing = results(context)
    assert wrong_type["error"] is True and "arguments.message: 5 is not of type 'string'" in wrong_type["content"][0]["text"]
    assert missing["error"] is True and "arguments: 'message' is a required property" in missing["content"][0]["text"]


def test_a_server_that_crashes_mid_call_gives_an_error_result_and_the_turn_goes_on():
    with echo_server() as server:
        context = Context()
        model = ScriptedModel([calls(("crash", {})), calls(("status", {})), "still here"])
        result = run_turn(context, "go", model=model, tools=[server], check=False)
        assert result.ok and result.response["content"] == "still here"
        crashed, status = results(context)
        assert crashed["error"] is True and "MCP server 'echo'" in crashed["content"][0]["text"]
        assert "the server stopped" in crashed["content"][0]["text"]
        assert json.loads(status["content"][0]["text"]) == {"status": "online"}


def test_two_tools_of_one_name_are_refused_naming_the_server(echo):
    def status() -> str:
        return "mine"

    with pytest.raises(ToolDefinitionError, match=r"tools\[1\]: a second tool named 'status' \(the first: tools\[0\] "
                                                  r"\(McpServer.stdio\('echo'"):
        as_tools([echo, status])
    assert all(isinstance(tool, McpTool) for tool in as_tools([echo]))


# -- a server nobody here wrote: mcp-server-time from PyPI -------------------------------------------


def test_the_reference_time_server_answers_get_current_time():
    pytest.importorskip("mcp_server_time")
    with McpServer.stdio(sys.executable, ["-m", "mcp_server_time", "--local-timezone", "UTC"], name="time",
                         timeout=30) as server:
        names = {tool["name"] for tool in server.list_tools()["tools"]}
        assert {"get_current_time", "convert_time"} <= names
        answer = server.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
        assert answer["isError"] is False
        current = json.loads(answer["content"][0]["text"])
        assert current["timezone"] == "Asia/Tokyo" and current["datetime"].endswith("+09:00")
        context = Context()
        model = ScriptedModel([calls(("get_current_time", {"timezone": "Europe/Paris"})), "ok"])
        run_turn(context, "time?", model=model, tools=[server])
        assert json.loads(results(context)[0]["content"][0]["text"])["timezone"] == "Europe/Paris"
        bad = server.call_tool("get_current_time", {"timezone": "Not/AZone"})
        assert bad["isError"] is True


# -- Ctrl-C ------------------------------------------------------------------------------------------


def test_ctrl_c_during_a_hanging_mcp_call_stops_the_turn_and_the_next_turn_works():
    script = textwrap.dedent(f"""
        import json, os, signal, sys, threading, time
        from agentctx_widgets import Context, ScriptedModel, run_turn
        from agentctx_widgets.models.mcp import McpServer
        server = McpServer.stdio(sys.executable, [{str(FIXTURE)!r}, "--lifetime", "100"], name="echo", timeout=60)
        server.list_tools()
        def hang_started():  # the request is on the wire: the server's call is running
            return any(t.name == "agentctx-mcp" for t in threading.enumerate()) and calling.is_set()
        calling = threading.Event()
        original = server.acall_tool
        async def acall_tool(*args, **kwargs):
            calling.set()
            return await original(*args, **kwargs)
        server.acall_tool = acall_tool
        def watch():
            while not hang_started():
                time.sleep(0.01)
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=watch, daemon=True).start()
        context = Context()
        model = ScriptedModel([{{"tool_calls": [{{"id": "c1", "name": "hang", "arguments": {{}}}}]}}, "never"])
        try:
            run_turn(context, "go", model=model, tools=[server])
            raised = None
        except KeyboardInterrupt:
            raised = "KeyboardInterrupt"
        after = run_turn(Context(), "again", model=ScriptedModel([{{"tool_calls": [{{"id": "c2", "name": "status",
                         "arguments": {{}}}}]}}, "fine"]), tools=[server])
        server.close()
        print(json.dumps({{"raised": raised, "context": context.messages(), "after": after.response["content"]}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["raised"] == "KeyboardInterrupt"
    assert seen["context"] == [{"type": 2, "content": [{"type": "text", "text": "go"}]}]
    assert seen["after"] == "fine"
