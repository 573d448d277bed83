"""Anthropic Messages: the request builder, the stream translator, and the real SDK on a loopback server.

Expected request bodies are written from Anthropic's API reference ("Messages", "Vision", "PDF
support", "Tool use", "Extended thinking"), not from the builder's output; the captures under
``tests/vectors/wire/anthropic/`` follow the documented streaming format ("Streaming Messages").
"""

from __future__ import annotations

import functools
import asyncio
import base64

import anthropic as anthropic_sdk
import pytest
from wire_server import Reply, WireServer, assemble, capture, capture_data, sse_events, translate_with

from agentctx_widgets import Context, run_turn
from agentctx_widgets.context import usage_normalize
from agentctx_widgets.models import AnthropicModel, ModelError, build_anthropic_request
from agentctx_widgets.models.anthropic import AnthropicTranslator
from agentctx_widgets.models.convert import RequestError
from agentctx_widgets.models.tools import as_tools

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing

MODEL = "claude-sonnet-4-5"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
PDF = base64.b64encode(b"%PDF-1.4 fake").decode()


def build(messages, **options):
    return build_anthropic_request(messages, model=MODEL, options={"max_tokens": 1024, **options})


def user(*blocks_or_text):
    return {"type": 2, "content": [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks_or_text]}


def place_of(error: RequestError) -> str:
    return str(error).split(":", 1)[0]


# -- (a) the request builder -------------------------------------------------------------------

def test_system_messages_go_top_level_joined_by_a_blank_line():
    body = build([{"type": 1, "content": [{"type": "text", "text": "You are terse."}]},
                  {"type": 1, "content": [{"type": "text", "text": "Answer in French."}]},
                  user("Hello")])
    assert body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You are terse.\n\nAnswer in French.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        "stream": True,
    }


def test_images_as_base64_and_url_sources():
    body = build([user("What is in these?",
                       {"type": "image", "content": PNG, "mimetype": "image/png"},
                       {"type": "image", "url": "https://upload.wikimedia.org/ant.jpg"},
                       {"type": "binary", "mimetype": "image/jpeg", "filename": "cat.jpg", "content": "/9j/4AAQ"},
                       {"type": "image", "url": "data:image/webp;base64,UklGRg=="})])
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is in these?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "https://upload.wikimedia.org/ant.jpg"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklGRg=="}},
    ]}]


def test_pdf_and_plain_text_binaries_become_document_blocks():
    notes = base64.b64encode("Grüße: line one\nline two".encode()).decode()
    body = build([user({"type": "binary", "mimetype": "application/pdf", "filename": "report.pdf", "content": PDF},
                       {"type": "binary", "mimetype": "text/plain", "filename": "notes.txt", "content": notes},
                       "Summarise both.")])
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
         "title": "report.pdf"},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Grüße: line one\nline two"},
         "title": "notes.txt"},
        {"type": "text", "text": "Summarise both."},
    ]}]


def test_a_tool_round_trip_sends_signed_thinking_tool_use_and_merged_tool_results():
    messages = [
        user("Weather in Paris and Rome?"),
        {"type": 3, "content": [
            {"type": "thinking", "text": "Two cities, two calls.", "signature": "EqQBCgIYAhIM"},
            {"type": "text", "text": "Checking."},
            {"type": "toolCall", "callId": "toolu_01A", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"type": "toolCall", "callId": "toolu_01B", "name": "get_weather", "arguments": '{"city": "Rome"}'},
        ]},
        {"type": 4, "callId": "toolu_01A", "content": [{"type": "text", "text": "18°C, cloudy"}]},
        {"type": 4, "callId": "toolu_01B", "error": True, "content": [{"type": "text", "text": "service down"}]},
        user("Use Celsius."),
    ]
    assert build(messages) == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two cities, two calls.", "signature": "EqQBCgIYAhIM"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Rome"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": [{"type": "text", "text": "18°C, cloudy"}]},
                {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [{"type": "text", "text": "service down"}],
                 "is_error": True},
                {"type": "text", "text": "Use Celsius."},
            ]},
        ],
        "stream": True,
    }


def test_tool_results_go_before_text_in_their_user_turn():
    # the API: "tool_result blocks must come FIRST in the content array"
    body = build([user("Go."),
                  {"type": 3, "content": [{"type": "toolCall", "callId": "toolu_1", "name": "now", "arguments": ""}]},
                  user("(quick please)"),
                  {"type": 4, "callId": "toolu_1", "content": [{"type": "text", "text": "12:00"},
                                                               {"type": "image", "content": PNG, "mimetype": "image/png"}]}])
    assert body["messages"][1:] == [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                {"type": "text", "text": "12:00"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]},
            {"type": "text", "text": "(quick please)"},
        ]},
    ]


def test_redacted_thinking_is_sent_back_and_unsigned_thinking_is_dropped():
    body = build([user("a"),
                  {"type": 3, "content": [{"type": "thinking", "text": "", "redacted": "EmwKAhgBEgy3va3p"},
                                          {"type": "thinking", "text": "from another provider"},
                                          {"type": "text", "text": "b"}]},
                  {"type": 3, "content": [{"type": "thinking", "text": "unsigned only"}]},
                  user("c"), user({"type": "text", "text": ""}, "d")])
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"},
                                          {"type": "text", "text": "b"}]},
        {"role": "user", "content": [{"type": "text", "text": "c"}, {"type": "text", "text": "d"}]},
    ]


def test_neutral_tools_get_input_schema_and_native_tools_pass_through():
    weather = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body = build([user("hi")], tools=[
        {"name": "get_weather", "description": "Current weather in a city", "parameters": weather},
        {"name": "now", "description": "", "parameters": None},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ])
    assert body["tools"] == [
        {"name": "get_weather", "description": "Current weather in a city", "input_schema": weather},
        {"name": "now", "input_schema": {"type": "object", "properties": {}}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ]


def test_other_options_go_into_the_body_unchanged():
    body = build_anthropic_request([user("hi")], model=MODEL, options={
        "max_tokens": 16000, "temperature": 1, "top_k": 5, "stop_sequences": ["###"],
        "thinking": {"type": "enabled", "budget_tokens": 10000},
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
        "metadata": {"user_id": "u-42"}, "system": [{"type": "text", "text": "Cached.", "cache_control": {"type": "ephemeral"}}],
    })
    assert body == {
        "model": "claude-sonnet-4-5", "max_tokens": 16000,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "stream": True,
        "temperature": 1, "top_k": 5, "stop_sequences": ["###"],
        "thinking": {"type": "enabled", "budget_tokens": 10000},
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
        "metadata": {"user_id": "u-42"},
        "system": [{"type": "text", "text": "Cached.", "cache_control": {"type": "ephemeral"}}],
    }


@pytest.mark.parametrize(("messages", "options", "place"), [
    ([user("hi"), {"type": 3, "content": [{"type": "text", "text": "x"},
                                          {"type": "toolCall", "callId": "t1", "name": "f", "arguments": "{not json"}]}],
     {}, "messages[1].content[1].arguments"),
    ([user("hi"), {"type": 3, "content": [{"type": "toolCall", "callId": "t1", "name": "f", "arguments": "[1, 2]"}]}],
     {}, "messages[1].content[0].arguments"),
    ([user("hi"), {"type": 3, "content": [{"type": "toolCall", "name": "f", "arguments": {}}]}],
     {}, "messages[1].content[0].callId"),
    ([user("hi"), {"type": 4, "content": [{"type": "text", "text": "r"}]}], {}, "messages[1].callId"),
    ([user("look", {"type": "image", "mimetype": "image/png"})], {}, "messages[0].content[1]"),
    ([user({"type": "thinking", "text": "t"})], {}, "messages[0].content[0]"),
    ([user({"type": "binary", "mimetype": "audio/wav", "filename": "a.wav", "content": "UklGRg=="})],
     {}, "messages[0].content[0]"),
    ([user({"type": "binary", "mimetype": "text/plain", "filename": "n.txt", "content": "%%%"})],
     {}, "messages[0].content[0].content"),
    ([{"type": 1, "content": [{"type": "text", "text": "s"}, {"type": "image", "url": "https://x/y.png"}]}, user("hi")],
     {}, "messages[0].content[1]"),
    ([user("hi"), {"type": 3, "content": [{"type": "image", "url": "https://x/y.png"}]}], {}, "messages[1].content[0].type"),
    ([user("hi"), {"type": 7, "content": []}], {}, "messages[1].type"),
    ([user("hi")], {"stream": False}, "build_anthropic_request"),
    ([user("hi")], {"max_tokens": 0}, "build_anthropic_request"),
    ([{"type": 1, "content": [{"type": "text", "text": "s"}]}, user("hi")], {"system": "other"}, "build_anthropic_request"),
])
def test_request_errors_name_the_place(messages, options, place):
    with pytest.raises(RequestError) as caught:
        build_anthropic_request(messages, model=MODEL, options={"max_tokens": 1024, **options})
    assert place_of(caught.value) == place


def test_the_unparsable_argument_error_quotes_the_arguments():
    with pytest.raises(RequestError) as caught:
        build([user("hi"), {"type": 3, "content": [{"type": "toolCall", "callId": "t1", "name": "f", "arguments": "{not json"}]}])
    assert str(caught.value) == ("messages[1].content[0].arguments: tool_use input must be a JSON object; "
                                 "these arguments do not parse: '{not json'")


def test_max_tokens_is_required_and_the_model_supplies_4096():
    with pytest.raises(RequestError) as caught:
        build_anthropic_request([user("hi")], model=MODEL)
    assert "options['max_tokens'] must be a positive int" in str(caught.value)
    model = AnthropicModel(MODEL, api_key="test")
    assert model.request([user("hi")])["max_tokens"] == 4096
    assert AnthropicModel(MODEL, api_key="test", max_tokens=300).request([user("hi")], {"temperature": 0}) == {
        "model": MODEL, "max_tokens": 300, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": True, "temperature": 0}
    with pytest.raises(ValueError, match="max_tokens"):
        AnthropicModel(MODEL, api_key="test", max_tokens=0)


# -- (b) the translator over the captures ------------------------------------------------------

def raw_events(name: str) -> list[dict]:
    return capture_data(f"anthropic/{name}")


def translate(events: list[dict]) -> list[dict]:
    return translate_with(AnthropicTranslator(), events)


def test_text_capture():
    assert translate(raw_events("text.sse")) == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Hello"},
        {"type": "text_delta", "contentIndex": 0, "delta": "! How can I help?"},
        {"type": "text_end", "contentIndex": 0},
        {"type": "done", "stopReason": "end_turn", "usage": {"input_tokens": 25, "output_tokens": 15}},
    ]


def test_thinking_capture_keeps_the_signature_and_replaces_cumulative_usage():
    events = translate(raw_events("thinking.sse"))
    assert events == [
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "The user greets me. "},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "A short friendly reply fits."},
        {"type": "thinking_end", "contentIndex": 0, "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "Hi there"},
        {"type": "text_delta", "contentIndex": 1, "delta": "!"},
        {"type": "text_end", "contentIndex": 1},
        {"type": "done", "stopReason": "end_turn", "usage": {"input_tokens": 36, "output_tokens": 42}},
    ]
    message, usage = assemble(events)
    assert message == {"type": 3, "content": [
        {"type": "thinking", "text": "The user greets me. A short friendly reply fits.",
         "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
        {"type": "text", "text": "Hi there!"}]}
    assert usage == {"input_tokens": 36, "output_tokens": 42}  # 42, not 1 + 42


def test_two_parallel_tool_use_blocks_with_split_input_json():
    events = translate(raw_events("tool_use.sse"))
    assert events == [
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "Two cities: call get_weather twice."},
        {"type": "thinking_end", "contentIndex": 0, "signature": "ErUBCkYIBRgCIkB0c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw=="},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "Let me check both cities."},
        {"type": "text_end", "contentIndex": 1},
        {"type": "tool_call_start", "contentIndex": 2, "callId": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather"},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": '{"location": "San Fra'},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": 'ncisco, CA", "unit": "fah'},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": 'renheit"}'},
        {"type": "tool_call_end", "contentIndex": 2},
        {"type": "tool_call_start", "contentIndex": 3, "callId": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "name": "get_weather"},
        {"type": "tool_call_delta", "contentIndex": 3, "delta": '{"locat'},
        {"type": "tool_call_delta", "contentIndex": 3, "delta": 'ion": "Paris, France"}'},
        {"type": "tool_call_end", "contentIndex": 3},
        {"type": "done", "stopReason": "tool_use", "usage": {"input_tokens": 472, "output_tokens": 89}},
    ]
    message, _ = assemble(events)
    assert message["content"][2:] == [
        {"type": "toolCall", "callId": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather",
         "arguments": {"location": "San Francisco, CA", "unit": "fahrenheit"}},
        {"type": "toolCall", "callId": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "name": "get_weather",
         "arguments": {"location": "Paris, France"}},
    ]


def test_redacted_thinking_capture():
    events = translate(raw_events("redacted_thinking.sse"))
    data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"
    assert events[:2] == [{"type": "thinking_start", "contentIndex": 0},
                          {"type": "thinking_end", "contentIndex": 0, "redacted": data}]
    message, _ = assemble(events)
    assert message == {"type": 3, "content": [{"type": "thinking", "text": "", "redacted": data},
                                              {"type": "text", "text": "Done."}]}
    # and it goes back as the API wants it
    assert build([user("q"), message])["messages"][1] == {"role": "assistant", "content": [
        {"type": "redacted_thinking", "data": data}, {"type": "text", "text": "Done."}]}


def test_an_overloaded_error_event_mid_stream():
    translator = AnthropicTranslator()
    out = [event for raw in raw_events("error_overloaded.sse") for event in translator.feed(raw)]
    assert out[-1] == {"type": "error", "error": {"message": "anthropic stream error: Overloaded",
                                                  "code": "OVERLOADED", "provider": "anthropic"}}
    assert out[:-1] == [{"type": "text_start", "contentIndex": 0},
                        {"type": "text_delta", "contentIndex": 0, "delta": "Partial ans"}]
    assert translator.finish() == []
    assert translator.feed({"type": "message_stop"}) == []
    assert ModelError.from_event_error(out[-1]["error"]).retryable


def test_cache_usage_capture_keeps_anthropic_names():
    events = translate(raw_events("cache_usage.sse"))
    usage = {"input_tokens": 21, "cache_creation_input_tokens": 188, "cache_read_input_tokens": 2048,
             "output_tokens": 503, "service_tier": "standard"}
    assert events[-1] == {"type": "done", "stopReason": "end_turn", "usage": usage}
    assert usage_normalize(usage) == {"inputTokens": 2257, "outputTokens": 503, "totalTokens": 2760,
                                      "cacheReadTokens": 2048, "cacheWriteTokens": 188, "serviceTier": "standard"}


def test_later_usage_replaces_field_by_field_and_null_keeps_the_earlier_value():
    translator = AnthropicTranslator()
    translator.feed({"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 5,
                                                                    "output_tokens": 1}}})
    translator.feed({"type": "message_delta", "delta": {"stop_reason": "max_tokens"},
                     "usage": {"output_tokens": 30, "input_tokens": None, "server_tool_use": {"web_search_requests": 1}}})
    assert translator.feed({"type": "message_stop"}) == [{"type": "done", "stopReason": "max_tokens", "usage": {
        "input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 30, "server_tool_use": {"web_search_requests": 1}}}]


def test_a_stream_without_message_stop_is_incomplete_and_its_open_blocks_close():
    events = raw_events("tool_use.sse")
    cut = next(i for i, e in enumerate(events) if e.get("index") == 3 and e["type"] == "content_block_delta")
    out = translate(events[:cut + 1])
    assert out[-3:] == [
        {"type": "tool_call_delta", "contentIndex": 3, "delta": '{"locat'},
        {"type": "tool_call_end", "contentIndex": 3},
        {"type": "error", "error": {"message": "anthropic: the stream ended before message_stop (the response is incomplete)",
                                    "code": "INCOMPLETE", "provider": "anthropic"}},
    ]


def test_server_tool_blocks_are_left_out_and_indexes_stay_dense():
    out = translate([
        {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_1",
                                                                      "name": "web_search", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"query": "x"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "web_search_tool_result",
                                                                      "tool_use_id": "srvtoolu_1", "content": []}},
        {"type": "content_block_stop", "index": 1},
        {"type": "ping"},
        {"type": "something_new", "index": 9},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": "Found "}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "citations_delta", "citation": {"type": "web"}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "it."}},
        {"type": "content_block_stop", "index": 2},
        {"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "f",
                                                                      "input": {"a": 1}}},
        {"type": "content_block_stop", "index": 3},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}},
        {"type": "message_stop"},
    ])
    assert out == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Found "},
        {"type": "text_delta", "contentIndex": 0, "delta": "it."},
        {"type": "text_end", "contentIndex": 0},
        {"type": "tool_call_start", "contentIndex": 1, "callId": "toolu_9", "name": "f"},
        {"type": "tool_call_end", "contentIndex": 1, "arguments": {"a": 1}},
        {"type": "done", "stopReason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 7}},
    ]


def test_a_delta_for_a_block_never_started_is_a_bad_stream():
    translator = AnthropicTranslator()
    assert translator.feed({"type": "content_block_delta", "index": 4, "delta": {"type": "text_delta", "text": "x"}}) == [
        {"type": "error", "error": {"message": "anthropic: content_block_delta for block 4, which is not open",
                                    "code": "BAD_STREAM", "provider": "anthropic"}}]
    assert translator.finish() == []


# -- (c) through the real SDK on a loopback server ---------------------------------------------

def sse_reply(name: str, **kwargs) -> Reply:
    return Reply(sse_events(capture(f"anthropic/{name}")), **kwargs)


def json_reply(name: str, status: int, **headers: str) -> Reply:
    return Reply(capture(f"anthropic/{name}"), status=status, content_type="application/json",
                 headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", **headers})


def server_for(*replies: Reply) -> WireServer:
    return WireServer(list(replies), prefix="", lifetime=20)  # the SDK appends /v1/messages itself


def test_a_thinking_turn_through_the_sdk():
    with server_for(sse_reply("thinking.sse")) as server:
        model = AnthropicModel(MODEL, base_url=server.url, api_key="test", max_tokens=2048,
                               thinking={"type": "enabled", "budget_tokens": 1024}, temperature=1)
        ctx = Context()
        result = run_turn(ctx, "hi", model=model, options={"metadata": {"user_id": "u-1"}})
    assert result.error is None
    assert ctx.messages() == [
        {"type": 2, "content": [{"type": "text", "text": "hi"}]},
        {"type": 3, "content": [
            {"type": "thinking", "text": "The user greets me. A short friendly reply fits.",
             "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
            {"type": "text", "text": "Hi there!"}]},
    ]
    assert result.usage == {"inputTokens": 36, "outputTokens": 42, "totalTokens": 78, "source": "provider"}
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.json == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": True,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "temperature": 1,
        "metadata": {"user_id": "u-1"},
    }
    assert request.headers["anthropic-version"]
    # SDK 2.x sends the key as a bearer token; older ones as x-api-key
    assert "test" in (request.headers.get("x-api-key"), request.headers.get("authorization", "").removeprefix("Bearer "))


def test_a_second_turn_after_a_tool_round_trip_sends_the_signature_back():
    with server_for(sse_reply("tool_use.sse"), sse_reply("text.sse")) as server:
        model = AnthropicModel(MODEL, base_url=server.url, api_key="test")
        ctx = Context()
        ctx.append({"type": 1, "content": [{"type": "text", "text": "Use the tools."}]})
        first = run_turn(ctx, "Weather in SF and Paris?", model=model)
        assert first.error is None and first.usage["outputTokens"] == 89
        ctx.append({"type": 4, "callId": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "content": [{"type": "text", "text": "64°F"}]})
        ctx.append({"type": 4, "callId": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "error": True,
                    "content": [{"type": "text", "text": "timeout"}]})
        second = run_turn(ctx, "Thanks!", model=model)
    assert second.error is None
    assert ctx.messages()[-1] == {"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]}
    assert server.requests[1].json == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": "Use the tools.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in SF and Paris?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two cities: call get_weather twice.",
                 "signature": "ErUBCkYIBRgCIkB0c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw=="},
                {"type": "text", "text": "Let me check both cities."},
                {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather",
                 "input": {"location": "San Francisco, CA", "unit": "fahrenheit"}},
                {"type": "tool_use", "id": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "name": "get_weather",
                 "input": {"location": "Paris, France"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                 "content": [{"type": "text", "text": "64°F"}]},
                {"type": "tool_result", "tool_use_id": "toolu_01AbCdEfGhIjKlMnOpQrStUv",
                 "content": [{"type": "text", "text": "timeout"}], "is_error": True},
                {"type": "text", "text": "Thanks!"},
            ]},
        ],
        "stream": True,
    }


def test_run_turn_with_tools_sends_the_results_and_the_signed_thinking_back():
    def get_weather(location: str, unit: str = "celsius") -> str:
        """Current weather in a city."""
        if location.startswith("Paris"):
            raise RuntimeError("service down")
        return f"64 {unit}"

    with server_for(sse_reply("tool_use.sse"), sse_reply("text.sse")) as server:
        ctx = Context()
        result = run_turn(ctx, "Weather?", model=AnthropicModel(MODEL, base_url=server.url, api_key="test"),
                          tools=[get_weather])
    assert result.error is None
    assert result.usage == {"inputTokens": 472 + 25, "outputTokens": 89 + 15, "totalTokens": 601, "source": "provider"}
    schema = as_tools([get_weather])[0].spec["parameters"]  # models/tools.py's schema; here only where it goes
    assert schema["required"] == ["location"]
    tools = [{"name": "get_weather", "description": "Current weather in a city.", "input_schema": schema}]
    assert server.requests[0].json["tools"] == tools
    assert server.requests[1].json == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two cities: call get_weather twice.",
                 "signature": "ErUBCkYIBRgCIkB0c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw=="},
                {"type": "text", "text": "Let me check both cities."},
                {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather",
                 "input": {"location": "San Francisco, CA", "unit": "fahrenheit"}},
                {"type": "tool_use", "id": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "name": "get_weather",
                 "input": {"location": "Paris, France"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                 "content": [{"type": "text", "text": "64 fahrenheit"}]},
                {"type": "tool_result", "tool_use_id": "toolu_01AbCdEfGhIjKlMnOpQrStUv",
                 "content": [{"type": "text", "text": "get_weather raised RuntimeError: service down"}], "is_error": True},
            ]},
        ],
        "stream": True,
        "tools": tools,
    }
    assert ctx.messages()[-1] == {"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]}


def test_an_extra_body_option_is_merged_into_the_body():
    with server_for(sse_reply("text.sse")) as server:
        model = AnthropicModel(MODEL, base_url=server.url, api_key="test", max_tokens=8, top_p=0.9,
                               extra_body={"context_management": {"edits": []}})
        assert run_turn(Context(), "hi", model=model).error is None
    assert server.requests[0].json == {
        "model": "claude-sonnet-4-5", "max_tokens": 8,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "stream": True,
        "top_p": 0.9, "context_management": {"edits": []}}

def test_tools_reach_the_wire_as_input_schema():
    with server_for(sse_reply("text.sse")) as server:
        model = AnthropicModel(MODEL, base_url=server.url, api_key="test", max_tokens=64)
        result = run_turn(Context(), "hi", model=model, options={"tools": [
            {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {}}}],
            "tool_choice": {"type": "any"}})
    assert result.error is None
    assert server.requests[0].json == {
        "model": "claude-sonnet-4-5", "max_tokens": 64,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "stream": True,
        "tools": [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object", "properties": {}}}],
        "tool_choice": {"type": "any"},
    }


def test_cache_usage_through_the_sdk():
    with server_for(sse_reply("cache_usage.sse")) as server:
        result = run_turn(Context(), "chapters?", model=AnthropicModel(MODEL, base_url=server.url, api_key="test"))
    assert result.usage == {"inputTokens": 2257, "outputTokens": 503, "totalTokens": 2760, "cacheReadTokens": 2048,
                            "cacheWriteTokens": 188, "serviceTier": "standard", "source": "provider"}


def test_the_start_event_carries_rate_limit_headers():
    async def collect(model):
        return [event async for event in model.stream([user("hi")])]

    with server_for(sse_reply("text.sse", headers={"anthropic-ratelimit-requests-remaining": "49",
                                                   "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:00Z"})) as server:
        events = asyncio.run(collect(AnthropicModel(MODEL, base_url=server.url, api_key="test")))
    assert events[0] == {"type": "start", "model": "claude-sonnet-4-5", "provider": "anthropic", "rateLimits": {
        "anthropic-ratelimit-requests-remaining": "49", "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:00Z"}}
    assert events[1:] == translate(raw_events("text.sse"))


def test_a_sync_client_gives_the_same_turn():
    with server_for(sse_reply("thinking.sse")) as server:
        client = anthropic_sdk.Anthropic(api_key="test", base_url=server.url, max_retries=0)
        ctx = Context()
        result = run_turn(ctx, "hi", model=AnthropicModel(MODEL, client=client))
    assert result.error is None
    assert ctx.messages()[1]["content"][0]["signature"] == "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    assert result.usage["outputTokens"] == 42
    assert server.requests[0].json["max_tokens"] == 4096


def test_closing_the_event_stream_closes_the_http_stream():
    async def read_then_close(model):
        events = model.stream([user("hi")])
        seen = [await events.__anext__() for _ in range(3)]
        await events.aclose()
        return seen

    with server_for(sse_reply("thinking.sse", delay=0.1)) as server:
        seen = asyncio.run(read_then_close(AnthropicModel(MODEL, base_url=server.url, api_key="test")))
        assert server.disconnected.wait(5)  # the server saw the socket go while it was still writing
    assert [event["type"] for event in seen] == ["start", "thinking_start", "thinking_delta"]

# -- (d) errors through the SDK ----------------------------------------------------------------

def failed_turn(*replies: Reply) -> tuple[dict, str]:
    """(the turn's error, what its message says the request went to)."""
    with server_for(*replies) as server:
        ctx = Context()
        result = run_turn(ctx, "hi", model=AnthropicModel(MODEL, base_url=server.url, api_key="test"))
    assert result.response is None
    assert ctx.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]  # nothing committed
    return result.error, f"POST {server.url}/v1/messages, model {MODEL!r}"


def test_401_names_where_the_key_came_from():
    error, where = failed_turn(json_reply("error_401.json", 401))
    assert error == {"message": f"anthropic answered HTTP 401: invalid x-api-key ({where}; the API key came from api_key=)",
                     "code": "AUTHENTICATION", "name": "ModelError", "hook": None, "status": 401, "provider": "anthropic"}


def test_429_is_a_rate_limit_with_the_retry_after_hint():
    error, where = failed_turn(json_reply("error_429.json", 429, **{"retry-after": "7"}))
    assert error == {"message": "anthropic answered HTTP 429: This request would exceed the rate limit for your "
                                f"organization of 50 requests per minute. ({where}; retry after 7 s)",
                     "code": "RATE_LIMIT", "name": "ModelError", "hook": None, "status": 429, "retry": 7.0,
                     "provider": "anthropic"}


def test_429_model_error_fields_from_the_stream_itself():
    async def first_event(model):
        async for event in model.stream([user("hi")]):
            return event

    with server_for(json_reply("error_429.json", 429, **{"retry-after": "7"})) as server:
        with pytest.raises(ModelError) as caught:
            asyncio.run(first_event(AnthropicModel(MODEL, base_url=server.url, api_key="test")))
    failure = caught.value
    assert (failure.code, failure.status, failure.retry, failure.provider, failure.request_id) == (
        "RATE_LIMIT", 429, 7.0, "anthropic", "req_011CSHoEeqs5C35K2UUqR7Fy")
    assert failure.retryable
    assert len(server.requests) == 1  # SDK retries are off: the Error hook decides


def test_529_is_overloaded():
    error, where = failed_turn(json_reply("error_529.json", 529))
    assert (error["code"], error["status"], error["message"]) == ("OVERLOADED", 529, f"anthropic answered HTTP 529: Overloaded ({where})")


def test_400_is_a_bad_request_with_the_api_message():
    error, _ = failed_turn(json_reply("error_400.json", 400))
    assert error["code"] == "BAD_REQUEST" and error["status"] == 400
    assert error["message"].startswith("anthropic answered HTTP 400: messages.1.content.0.type: Expected `thinking`")


def test_an_overloaded_error_event_mid_stream_commits_nothing():
    # the SDK raises APIStatusError (status 200) for ``event: error``; it must read as the stream error it is
    error, _ = failed_turn(sse_reply("error_overloaded.sse"))
    assert error == {"message": "anthropic stream error: Overloaded", "code": "OVERLOADED", "name": "ModelError",
                     "hook": None, "provider": "anthropic"}


def test_a_connection_cut_mid_stream():
    error, _ = failed_turn(sse_reply("thinking.sse", cut_after=3))
    assert error["code"] == "CONNECTION"
    assert error["message"].startswith("anthropic: the connection failed: ")


def test_malformed_sse_is_a_bad_stream():
    error, _ = failed_turn(sse_reply("malformed.sse"))
    assert error["code"] == "BAD_STREAM"
    assert error["message"].startswith("anthropic: the stream was malformed: JSONDecodeError: ")


def test_a_stream_that_ends_before_message_stop_is_incomplete():
    pieces = sse_events(capture("anthropic/text.sse"))[:-1]
    error, _ = failed_turn(Reply(pieces))
    assert error == {"message": "anthropic: the stream ended before message_stop (the response is incomplete)",
                     "code": "INCOMPLETE", "name": "ModelError", "hook": None, "provider": "anthropic"}
