"""The front door with a Yao assistant: ``run_turn(ctx, text, assistant=...)`` loads the directory, runs
its TypeScript hooks, reloads them after an edit, and streams into a view."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentctx_widgets import Context, ContextView, ScriptedModel, run_turn

APP = Path(__file__).parent / "fixtures" / "yao_runner"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    shutil.copytree(APP, tmp_path / "app")
    return tmp_path / "app"


def test_run_turn_with_an_assistant_directory_returns_what_next_returned(app):
    ctx = Context(name="yao")
    result = run_turn(ctx, "hello", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["Hi"]))
    assert result.ok and result.hooks_called == ["Create", "Next"]
    # the fixture's Next reports the payload's keys and the completion's text (index.ts, Next); today's
    # ctx has metadata {} when none was given (jsapi.go), so `ctx.metadata.scenario` is undefined: no key
    assert result.next == {"keys": ["completion", "error", "messages", "tools"], "answer": "Hi", "locale": ""}
    assert [event["props"]["event"] for event in result.events] == ["stream_start", "message_start", "message_end",
                                                                     "stream_end"]
    assert [(m["type"], m["content"][0]["text"]) for m in ctx.messages()] == [(2, "hello"), (3, "Hi")]


def test_an_edited_hook_is_loaded_again_on_the_next_turn(app):
    script = app / "assistants/tests/runner-echo/src/index.ts"
    ctx = Context()
    first = run_turn(ctx, "one", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["A"]))
    assert first.next["answer"] == "A"
    script.write_text(script.read_text().replace("answer: payload.completion ? payload.completion.content : null,",
                                                 'answer: "edited",'))
    second = run_turn(ctx, "two", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["B"]))
    assert second.next["answer"] == "edited"


def test_a_view_receives_what_the_client_would(app):
    ctx = Context(name="yao")
    view = ContextView(ctx)
    run_turn(ctx, "hello", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["Hi"]), view=view)
    state = view.state()
    assert [m["content"][0]["text"] for m in state["context"]] == ["hello", "Hi"]
    # what the CUI client shows: the reply under its message id (the lifecycle events are not messages)
    shown = [(state["outputs"]["messages"][key]["type"], state["outputs"]["messages"][key]["props"])
             for key in state["outputs"]["order"]]
    assert shown == [("text", {"content": "Hi"})], shown
    view.close()


def test_seed_only_arguments_and_bad_assistants_are_refused(app):
    with pytest.raises(TypeError, match=r"max_retries, strict are the seed lifecycle's"):
        run_turn(Context(), "x", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["A"]),
                 strict=True, max_retries=1)
    with pytest.raises(TypeError, match="expected a loaded assistant or its directory"):
        run_turn(Context(), "x", assistant=42, model=ScriptedModel(["A"]))


# ---- %agentctx run --assistant, in a real IPython shell ----------------------------------------------
from magic_shell import assert_error, ip, line, shell  # noqa: E402,F401 - fixtures


def test_the_magic_runs_an_assistant_and_prints_what_next_returned(ip, app):
    result, out = line(ip, f'run chat "hello" --assistant {app}/assistants/tests/runner-echo --result r')
    assert out.stderr == ""
    summary, next_line = out.stdout.splitlines()[:2]
    assert summary.startswith("turn done: ") and summary.endswith("hooks: Create, Next")
    assert next_line == ('  next: {"answer": "Scripted reply to: hello", "keys": ["completion", "error", "messages", '
                         '"tools"], "locale": ""}')
    assert ip.user_ns["r"].next["answer"] == "Scripted reply to: hello"
    assert [m["type"] for m in ip.user_ns["chat"].messages()] == [2, 3]
    (turn,) = ip.turns
    assert "[assistant] Scripted reply to: hello" in turn.document.text()


def test_the_magic_names_a_bad_assistant_and_binds_nothing(ip, app, tmp_path):
    _, out = line(ip, f'run fresh "hello" --assistant {tmp_path}/nowhere')
    assert_error(out, "run: --assistant", "no such assistant directory")
    assert "fresh" not in ip.user_ns
    broken = app / "assistants/tests/runner-echo/package.yao"
    broken.write_text('{\n  "name": "Runner Echo",\n  "connector": \n}\n')
    _, out = line(ip, f'run fresh "hello" --assistant {app}/assistants/tests/runner-echo')
    assert_error(out, "run: --assistant", "runner-echo/package.yao:4: not JSON with comments")
    assert "fresh" not in ip.user_ns


def test_a_current_api_script_gets_todays_ctx_with_ids_shared_with_the_model(app):
    """A script that uses Send's return value runs with today's ctx (binding.py): the id it gets is the
    request's next M id, and the model's message continues the same counter (yao 5a3f9a6a
    agent/output/message/utils.go:10-50: one IDGenerator per request)."""
    script = app / "assistants/tests/runner-echo/src/index.ts"
    script.write_text(script.read_text().replace(
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n  return {\n    data: {",
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n"
        "  const id = ctx.Send({ type: \"text\", props: { content: \"noted\" } });\n  return {\n    data: {\n      id,"))
    result = run_turn(Context(), "hello", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["Hi"]))
    assert result.ok, result.error
    assert result.next["id"] == "M2"  # M1 was the model's reply
    sent = [m for m in result.messages if m.get("type") == "text" and m.get("props", {}).get("content") == "noted"]
    assert [m["message_id"] for m in sent] == ["M2"]


def test_a_hook_calls_another_loaded_assistant_with_ctx_agent_call(app):
    """``ctx.agent.Call(id, messages)`` runs the other assistant's own request (its prompt, the model) and
    returns ``{agent_id, response, content}`` (yao 5a3f9a6a agent/caller/orchestrator.go:223-296)."""
    from agentctx_widgets.yao import load_assistant

    script = app / "assistants/tests/runner-echo/src/index.ts"
    script.write_text(script.read_text().replace(
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n  return {\n    data: {",
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n"
        "  const sub = ctx.agent.Call(\"tests.runner-target\", [{ role: \"user\", content: \"over to you\" }]);\n"
        "  return {\n    data: {\n      sub: [sub.agent_id, sub.content, sub.error ?? null],"))
    target = load_assistant(app / "assistants/tests/runner-target")
    caller = load_assistant(app / "assistants/tests/runner-echo", assistants=[target])
    model = ScriptedModel(["First answer", "Second answer"])  # the caller's call, then the target's
    result = run_turn(Context(), "hello", assistant=caller, model=model)
    assert result.ok, result.error
    assert result.next["sub"] == ["tests.runner-target", "Second answer", None]
    unknown = load_assistant(app / "assistants/tests/runner-echo")  # no assistants loaded with it
    failed = run_turn(Context(), "hello", assistant=unknown, model=ScriptedModel(["A"]))
    assert failed.next["sub"][0] == "tests.runner-target" and failed.next["sub"][1] is None
    assert failed.next["sub"][2].startswith("failed to get agent:")


def test_what_each_client_receives(app):
    """A CUI client gets Yao's SSE event stream, props' keys in Go's (sorted) order; a standard client
    Yao's OpenAI chunks, the trace link first and ``data: [DONE]`` last (yao 5a3f9a6a
    agent/output/adapters/openai/adapter.go, output.go:25-51)."""
    cui = run_turn(Context(), "hello", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["Hi"]))
    first = cui.client.split("\n\n")[0]
    assert first.startswith('data: {"type":"event","props":{"data":{') and '"event":"stream_start"' in first
    assert "[DONE]" not in cui.client and cui.chunks == []
    standard = run_turn(Context(), "hello", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["Hi"]),
                        accept="standard")
    assert standard.chunks[-1] == "[DONE]" and standard.client.endswith("data: [DONE]\n\n")
    deltas = [chunk["choices"][0]["delta"] for chunk in standard.chunks if isinstance(chunk, dict) and "choices" in chunk]
    assert deltas[0]["content"].startswith("🚀 Assistant is processing - [View process](")
    assert deltas[1] == {"content": "Hi", "role": "assistant"}


def test_mcp_and_workspace_answer_from_what_load_assistant_was_given(app, tmp_path):
    """``ctx.mcp.CallTool`` reaches a registered Python function and ``ctx.workspace`` the directory
    passed to ``load_assistant`` (yao 5a3f9a6a agent/context/jsapi.go's mcp / workspace members)."""
    from agentctx_widgets.yao import Mcp, load_assistant

    script = app / "assistants/tests/runner-echo/src/index.ts"
    script.write_text(script.read_text().replace(
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n  return {\n    data: {",
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n"
        "  const found = ctx.mcp.CallTool(\"shop\", \"lookup\", { order: 42 });\n"
        "  ctx.workspace.MkdirAll(\"notes\");\n"
        "  ctx.workspace.WriteFile(\"notes/order.txt\", \"order 42 looked up\");\n"
        "  return {\n    data: {\n      found,"))
    mcp = Mcp()
    mcp.register("shop", {"lookup": lambda arguments: {"order": arguments["order"], "status": "shipped"}})
    work = tmp_path / "work"
    work.mkdir()
    loaded = load_assistant(app / "assistants/tests/runner-echo", mcp=mcp, workspace=work)
    result = run_turn(Context(), "hello", assistant=loaded, model=ScriptedModel(["Hi"]))
    assert result.ok, result.error
    assert (work / "notes" / "order.txt").read_text() == "order 42 looked up"
    assert "shipped" in str(result.next["found"])


def test_the_trace_a_hook_records_is_on_the_result_and_in_the_view(app):
    script = app / "assistants/tests/runner-echo/src/index.ts"
    script.write_text(script.read_text().replace(
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n  return {",
        "function Next(ctx: agent.Context, payload: any, options: any): any {\n"
        "  const step = ctx.trace.Add({ q: 1 }, { label: \"Look up the order\" });\n"
        "  ctx.trace.Info(\"found it\");\n  step.Complete({ ok: true });\n  return {"))
    ctx = Context()
    view = ContextView(ctx)
    result = run_turn(ctx, "hello", assistant=app / "assistants/tests/runner-echo", model=ScriptedModel(["Hi"]),
                      view=view)
    assert result.ok, result.error
    assert result.trace["label"] == "Look up the order" and result.trace["status"] == "completed"
    outputs = view.state()["outputs"]
    node = outputs["messages"][f"trace:{result.trace['id']}"]
    assert node["type"] == "event" and node["props"]["message"] == "Look up the order · completed"
    view.close()
