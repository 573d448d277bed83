"""``%agentctx run --model provider:model`` and ``--tools`` through a real IPython shell and a loopback
server that speaks the provider's wire format (the SDK reads its base URL and key from the environment,
as it would for a local OpenAI-compatible server)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from agentctx_widgets import magics as magics_module
from agentctx_widgets.context import Context
from agentctx_widgets.models import AnthropicModel, OpenAIChatModel, OpenAIResponsesModel, model_from_spec

sys.path.insert(0, str(Path(__file__).parent))
from wire_server import Reply, WireServer, capture, sse_events  # noqa: E402


@pytest.fixture()
def ip(monkeypatch: pytest.MonkeyPatch) -> Any:
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "agentctx_widgets")
    monkeypatch.setattr(magics_module, "display", lambda *args, **kwargs: None)
    before = set(shell.user_ns)
    yield shell
    for name in set(shell.user_ns) - before:
        del shell.user_ns[name]


def run(shell: InteractiveShell, text: str) -> Any:
    with capture_output() as captured:
        shell.run_line_magic("agentctx", text)
    return captured


def test_a_provider_spec_talks_to_the_server_in_openai_base_url(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with WireServer(Reply(sse_events(capture("openai_chat/text.sse")))) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        out = run(ip, 'run conv "hi there" --model openai:llama3.2 --result r')
        assert out.stderr == ""
        assert server.requests[0].path == "/v1/chat/completions"
        assert server.requests[0].headers["authorization"] == "Bearer local"
        assert server.requests[0].json == {
            "model": "llama3.2",
            "messages": [{"role": "user", "content": "hi there"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    conv = ip.user_ns["conv"]
    assert conv.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi there"}]},
                               {"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]}]
    # the capture's usage chunk: 1117 prompt (1024 cached) + 75 completion tokens
    assert out.stdout.startswith("turn done: 1,117 in + 75 out = 1,192 tokens (provider), ")
    assert ip.user_ns["r"].usage["cacheReadTokens"] == 1024


def test_tools_by_name_run_in_the_turn(ip: Any) -> None:
    from agentctx_widgets import ScriptedModel

    def lookup(order: int) -> str:
        """Where an order is."""
        return f"order {order} ships today"

    ip.user_ns.update(lookup=lookup, bot=ScriptedModel([
        {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"order": 42}}]}, "It ships today."]))
    out = run(ip, 'run conv "where is 42?" --model bot --tools lookup')
    assert out.stderr == ""
    assert [m["type"] for m in ip.user_ns["conv"].messages()] == [2, 3, 4, 3]
    assert ip.user_ns["conv"].at(2)["content"] == [{"type": "text", "text": "order 42 ships today"}]
    assert ", tools: lookup, 2 model calls" in out.stdout


@pytest.mark.parametrize(("text", "message"), [
    ('run conv "hi" --tools nothing_here', "agentctx: run: --tools nothing_here: no variable\n"),
    ('run conv "hi" --tools number', "agentctx: run: --tools number: a int, not a function\n"),
    ('run conv "hi" --model anthropic:', "agentctx: run: --model anthropic:: model spec 'anthropic:': expected "
     "provider:model, one of openai:MODEL (OpenAI Chat Completions, or any compatible server (OPENAI_BASE_URL)), "
     "openai-responses:MODEL (the OpenAI Responses API), anthropic:MODEL (Anthropic Messages)\n"),
])
def test_bad_tools_and_specs_are_one_line_and_bind_nothing(ip: Any, text: str, message: str) -> None:
    ip.user_ns["number"] = 3
    out = run(ip, text)
    assert out.stderr == message and "conv" not in ip.user_ns


def test_a_failing_provider_leaves_the_context_unchanged_and_says_why(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    body = '{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}'
    with WireServer(Reply(body, status=401, content_type="application/json")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        ip.user_ns["conv"] = conv = Context()
        conv.append({"type": 2, "content": [{"type": "text", "text": "earlier"}]})
        out = run(ip, 'run conv "hi" --model openai:gpt-4.1-mini')
    assert out.stderr == "" and out.stdout == (f"agentctx: run: openai answered HTTP 401: Incorrect API key provided (POST {server.url}"
                          "/chat/completions, model 'gpt-4.1-mini'; the API key came from the environment variable "
                          "OPENAI_API_KEY (which is not set)) [AUTHENTICATION]; the context is unchanged\n")
    assert conv.messages() == [{"type": 2, "content": [{"type": "text", "text": "earlier"}]}]


def test_model_from_spec_knows_three_providers() -> None:
    assert type(model_from_spec("openai:gpt-4.1-mini", api_key="k")) is OpenAIChatModel
    assert type(model_from_spec("openai-responses:o4-mini", api_key="k")) is OpenAIResponsesModel
    claude = model_from_spec("anthropic:claude-sonnet-4-5", api_key="k")
    assert type(claude) is AnthropicModel and claude.spec == "anthropic:claude-sonnet-4-5"
    with pytest.raises(ValueError, match=r"model spec 'gemini:pro': expected provider:model, one of openai:MODEL"):
        model_from_spec("gemini:pro")


def test_a_missing_sdk_names_the_extra(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    out = run(ip, 'run conv "hi" --model anthropic:claude-sonnet-4-5')
    assert out.stderr == ("agentctx: run: --model anthropic:claude-sonnet-4-5: the 'anthropic' package is needed for "
                          'this model: pip install "agentctx-widgets[anthropic]"\n')
    assert "conv" not in ip.user_ns
