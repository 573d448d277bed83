"""A key a server echoes inside its event stream (issue 21): an SSE ``error`` chunk, Anthropic's ``error``
event, the Responses API's ``error`` and ``response.failed``. Each reaches no error, output message, repr
or Context message, on every connector: the connector blanks out the call's secrets where every model
error passes. Real loopback servers (tests/wire_server.py), the real SDKs.
"""

from __future__ import annotations

import functools

import orjson
import pytest
from wire_server import Reply, WireServer, capture, sse_events

import agentctx_widgets
from agentctx_widgets import AnthropicModel, Context, OpenAIChatModel, OpenAIResponsesModel

run_unchecked = functools.partial(agentctx_widgets.run_turn, check=False)

KEY = "sk-live-Zq8wXv7uTs6rPo5n"
ECHO = f"Invalid key {KEY} for this organization"


def _with_key(name: str, old: str, new: str = ECHO) -> list[str]:
    text = capture(name)
    assert old in text  # the capture still says what we replace, so the key really is sent
    return sse_events(text.replace(old, new))


def chat_error_chunk() -> tuple[WireServer, object]:
    body = _with_key("openai_chat/error_midstream.sse",
                     "The server had an error while processing your request. Sorry about that!")
    server = WireServer(Reply(body), lifetime=20)
    return server, lambda url: OpenAIChatModel("gpt-4.1-mini", base_url=url, api_key=KEY, timeout=10)


def anthropic_error_event() -> tuple[WireServer, object]:
    body = _with_key("anthropic/error_overloaded.sse", '"message":"Overloaded"', f'"message":"{ECHO}"')
    server = WireServer(Reply(body), prefix="", lifetime=20)
    return server, lambda url: AnthropicModel("claude-sonnet-4-5", base_url=url, api_key=KEY, timeout=10)


def responses_error_event() -> tuple[WireServer, object]:
    body = _with_key("openai_responses/error_event.sse", "Rate limit reached for o4-mini")
    server = WireServer(Reply(body), lifetime=20)
    return server, lambda url: OpenAIResponsesModel("o4-mini", base_url=url, api_key=KEY, timeout=10)


def responses_nested_error_event() -> tuple[WireServer, object]:
    body = _with_key("openai_responses/error_event_nested.sse", "Rate limit reached for o4-mini")
    server = WireServer(Reply(body), lifetime=20)
    return server, lambda url: OpenAIResponsesModel("o4-mini", base_url=url, api_key=KEY, timeout=10)


def responses_failed() -> tuple[WireServer, object]:
    body = _with_key("openai_responses/failed.sse", "The model failed to generate a response.")
    server = WireServer(Reply(body), lifetime=20)
    return server, lambda url: OpenAIResponsesModel("o4-mini", base_url=url, api_key=KEY, timeout=10)


CASES = {
    "openai_chat error chunk": chat_error_chunk,
    "anthropic error event": anthropic_error_event,
    "responses error event": responses_error_event,
    "responses nested error event": responses_nested_error_event,
    "responses response.failed": responses_failed,
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_key_echoed_in_the_stream_reaches_no_error_output_repr_or_context(case: str) -> None:
    server, model_for = CASES[case]()
    with server:
        context = Context()
        result = run_unchecked(context, "hi", model=model_for(server.url))
        assert server.requests, "the model reached the server"
    assert result.error is not None
    assert "Invalid key *** for this organization" in result.error["message"]  # the server's text, blanked
    assert KEY not in orjson.dumps(result.error).decode()
    assert KEY not in repr(result)
    shown = [m for m in result.output if m.get("type") == "error"]
    assert shown and all(KEY not in orjson.dumps(m, default=str).decode() for m in shown)
    assert all(KEY not in orjson.dumps(m, default=str).decode() for m in result.output)
    assert KEY not in orjson.dumps(context.messages(), default=str).decode()
