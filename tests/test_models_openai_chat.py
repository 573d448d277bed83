"""OpenAI Chat Completions: the request builder, the chunk translator, and the connector through the
real ``openai`` SDK against a loopback server speaking hand-written captures.

Every expected request body below is written from the Chat Completions API reference (``POST
/chat/completions``: message roles, content parts, ``tool_calls``, ``stream_options``), and every
capture under ``tests/vectors/wire/openai_chat/`` from the documented ``chat.completion.chunk``
stream, never from this code's output.
"""

from __future__ import annotations

import functools
import asyncio
import gc
import inspect
import socket
import sys

import openai
import orjson
import pytest

import agentctx_widgets
from agentctx_widgets import Context, hooks_from_python
from agentctx_widgets.context import create_assembler, validate_response_event
from agentctx_widgets.models import ModelError, OpenAIChatModel, build_chat_request
from agentctx_widgets.models.convert import RequestError
from agentctx_widgets.models.openai_chat import ChatTranslator
from agentctx_widgets.models.tools import Tool
from wire_server import Reply, WireServer, capture, capture_data, sse_events, translate_with

run_unchecked = functools.partial(agentctx_widgets.run_turn, check=False)  # these tests read failed turns

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing

MODEL = "gpt-4.1-mini"
DIR = "openai_chat/"


def body(messages, **kwargs):
    return build_chat_request(messages, model=MODEL, **kwargs)


def user(*blocks):
    return {"type": 2, "content": list(blocks)}


def text(value):
    return {"type": "text", "text": value}


def chunks_of(name):
    """The capture's data lines as dicts (``[DONE]`` left out)."""
    return capture_data(DIR + name)


def translate(name):
    return translate_with(ChatTranslator(), chunks_of(name))


def stream_reply(name, **kwargs):
    return Reply(body=sse_events(capture(DIR + name)), **kwargs)


def json_reply(name, status, **kwargs):
    return Reply(body=capture(DIR + name), status=status, content_type="application/json", **kwargs)


def events_from(model, messages=None, options=None):
    """Iterate ``model.stream`` directly: (events, the ModelError raised or None)."""
    messages = messages if messages is not None else [user(text("hi"))]
    seen = []

    async def run():
        async for event in model.stream(messages, options=options):
            seen.append(event)

    try:
        asyncio.run(run())
    except ModelError as error:
        return seen, error
    return seen, None


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


USER_HI = {"role": "user", "content": "hi"}
STREAMING = {"stream": True, "stream_options": {"include_usage": True}}


# -- build_chat_request ------------------------------------------------------------------------------


def test_system_and_user_text_become_string_contents():
    assert body([{"type": 1, "content": [text("Be brief.")]}, user(text("Hello"))]) == {
        "model": "gpt-4.1-mini",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_user_parts_text_image_url_data_url_pdf_and_wav():
    message = user(
        text("Look at these."),
        text("And the report."),
        {"type": "image", "url": "https://example.com/cat.png", "detail": "high"},
        {"type": "binary", "mimetype": "image/png", "filename": "dot.png", "content": "iVBORw0KGgo="},
        {"type": "binary", "mimetype": "application/pdf", "filename": "report.pdf", "content": "JVBERi0xLjQK"},
        {"type": "binary", "mimetype": "audio/wav", "filename": "hello.wav", "content": "UklGRiQAAABXQVZF"},
    )
    assert body([message])["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Look at these."},
        {"type": "text", "text": "And the report."},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "high"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "file", "file": {"filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjQK"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZF", "format": "wav"}},
    ]}]


def test_a_whole_tool_round_trip():
    messages = [
        user(text("Weather and time in Paris?")),
        {"type": 3, "content": [
            text("Checking both."),
            {"type": "toolCall", "callId": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"type": "toolCall", "callId": "call_2", "name": "get_time", "arguments": {"tz": "Europe/Paris"}},
        ]},
        {"type": 4, "callId": "call_1", "content": [text("18 C, cloudy")]},
        {"type": 4, "callId": "call_2", "content": [text("14:05")]},
    ]
    assert body(messages) == {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "user", "content": "Weather and time in Paris?"},
            {"role": "assistant", "content": "Checking both.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
                {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": '{"tz":"Europe/Paris"}'}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18 C, cloudy"},
            {"role": "tool", "tool_call_id": "call_2", "content": "14:05"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_an_assistant_with_only_tool_calls_has_empty_string_content_and_raw_string_arguments_stay():
    # "" rather than null: llama-cpp-python's server refuses null and a missing key (docs/servers.md)
    message = {"type": 3, "content": [{"type": "toolCall", "callId": "c", "name": "f", "arguments": "{not json"}]}
    assert body([message])["messages"] == [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]}]


def test_assistant_thinking_blocks_are_not_sent():
    messages = [
        {"type": 3, "content": [{"type": "thinking", "text": "hmm"}, text("Hi there.")]},
        {"type": 3, "content": [{"type": "thinking", "text": "only thoughts"}]},
    ]
    assert body(messages)["messages"] == [{"role": "assistant", "content": "Hi there."},
                                          {"role": "assistant", "content": ""}]


def test_records_in_the_messages_are_skipped():
    assert body([{"type": "checkpoint", "at": 1}, user(text("hi"))])["messages"] == [USER_HI]


def test_neutral_tools_become_function_tools_and_native_ones_pass_through():
    native = {"type": "function", "function": {"name": "native", "parameters": {"type": "object", "properties": {}}}}
    options = {"tools": [
        {"name": "get_weather", "description": "Weather for a city",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
        {"name": "now"},
        native,
    ], "tool_choice": "auto"}
    assert body([user(text("hi"))], options=options) == {
        "model": "gpt-4.1-mini",
        "messages": [USER_HI],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {"type": "function", "function": {
                "name": "get_weather", "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
            {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}},
            native,
        ],
        "tool_choice": "auto",
    }


def test_stream_options_are_merged_over_include_usage():
    assert body([user(text("hi"))], options={"stream_options": {"include_obfuscation": False}})["stream_options"] == {
        "include_usage": True, "include_obfuscation": False}
    assert body([user(text("hi"))], options={"stream_options": None})["stream_options"] == {"include_usage": True}


def test_other_options_pass_through_unchanged():
    options = {"temperature": 0, "max_completion_tokens": 256, "reasoning_effort": "low", "seed": 7,
               "response_format": {"type": "json_object"}, "parallel_tool_calls": False}
    assert body([user(text("hi"))], options=options) == {
        "model": "gpt-4.1-mini", "messages": [USER_HI], **STREAMING,
        "temperature": 0, "max_completion_tokens": 256, "reasoning_effort": "low", "seed": 7,
        "response_format": {"type": "json_object"}, "parallel_tool_calls": False,
    }


@pytest.mark.parametrize(("messages", "options", "message"), [
    ([user(text("a")), {"type": 0, "content": [text("x")]}], None,
     "messages[1].type: 0 is not a message type a model can be sent (1 system, 2 user, 3 assistant, 4 tool result)"),
    ([user(text("a")), {"type": 3, "content": [text("b")]}, {"type": 4, "content": [text("c")]}], None,
     "messages[2].callId: a tool result needs the id of the call it answers"),
    ([{"type": 1, "content": [text("rules"), {"type": "image", "url": "https://example.com/x.png"}]}], None,
     "messages[0].content: a system message can hold only text blocks"),
    ([user(text("a"))], {"messages": [USER_HI]},
     "build_chat_request: options ['messages'] are set by the connector; pass messages and model instead"),
    ([user(text("a"), {"type": "thinking", "text": "t"})], None,
     "messages[0].content[1]: a thinking block belongs in an assistant message"),
    ([user(text("a"), {"type": "binary", "mimetype": "application/pdf", "filename": "x.pdf"})], None,
     "messages[0].content[1].content: a binary block needs base64 'content'"),
    ([user(text("a"), {"type": "video", "url": "https://example.com/v.mp4"})], None,
     "messages[0].content[1].type: Chat Completions has no input part for a 'video' block"),
], ids=["reserved-type-0", "tool-result-without-callId", "system-with-image", "options-messages",
        "thinking-in-user", "binary-without-content", "unknown-block"])
def test_request_errors_name_the_place(messages, options, message):
    with pytest.raises(RequestError) as caught:
        body(messages, options=options)
    assert str(caught.value) == message


# -- ChatTranslator over the captures ----------------------------------------------------------------

OPENAI_USAGE_TEXT = {"prompt_tokens": 1117, "completion_tokens": 75, "total_tokens": 1192,
                     "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
                     "completion_tokens_details": {"reasoning_tokens": 64, "audio_tokens": 0,
                                                   "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def test_translate_plain_text_with_the_usage_chunk():
    assert translate("text.sse") == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Hello"},
        {"type": "text_delta", "contentIndex": 0, "delta": "! How"},
        {"type": "text_delta", "contentIndex": 0, "delta": " can I help?"},
        {"type": "text_end", "contentIndex": 0},
        {"type": "done", "stopReason": "stop", "usage": OPENAI_USAGE_TEXT},
    ]


def test_translate_reasoning_content_then_content():
    assert translate("reasoning_content.sse") == [
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "The user"},
        {"type": "thinking_delta", "contentIndex": 0, "delta": " says hi."},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "Hi"},
        {"type": "text_delta", "contentIndex": 1, "delta": " there!"},
        {"type": "thinking_end", "contentIndex": 0},
        {"type": "text_end", "contentIndex": 1},
        {"type": "done", "stopReason": "stop", "usage": {
            "prompt_tokens": 6, "completion_tokens": 12, "total_tokens": 18,
            "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 9},
            "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 6}},
    ]


def test_translate_ollama_reasoning_then_content():
    assert translate("reasoning.sse") == [
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "Okay"},
        {"type": "thinking_delta", "contentIndex": 0, "delta": ", a greeting."},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "Hello!"},
        {"type": "thinking_end", "contentIndex": 0},
        {"type": "text_end", "contentIndex": 1},
        {"type": "done", "stopReason": "stop", "usage": {"prompt_tokens": 11, "completion_tokens": 20, "total_tokens": 31}},
    ]


def test_translate_a_refusal_is_a_text_block():
    assert translate("refusal.sse") == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "I'm sorry,"},
        {"type": "text_delta", "contentIndex": 0, "delta": " I can't help with that."},
        {"type": "text_end", "contentIndex": 0},
        {"type": "done", "stopReason": "stop", "usage": {
            "prompt_tokens": 31, "completion_tokens": 10, "total_tokens": 41,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}},
    ]


PARALLEL_EVENTS = [
    {"type": "tool_call_start", "contentIndex": 0, "callId": "call_Wn3kF8aR2pLxQ9vT5yZc1mBd", "name": "get_weather"},
    {"type": "tool_call_delta", "contentIndex": 0, "delta": '{"ci'},
    {"type": "tool_call_delta", "contentIndex": 0, "delta": 'ty": "Par'},
    {"type": "tool_call_delta", "contentIndex": 0, "delta": 'is", "unit": '},
    {"type": "tool_call_delta", "contentIndex": 0, "delta": '"c"}'},
    {"type": "tool_call_start", "contentIndex": 1, "callId": "call_Hq7sD2gJ9kLm4nPx6vRt8wYe", "name": "get_time"},
    {"type": "tool_call_delta", "contentIndex": 1, "delta": '{"tz"'},
    {"type": "tool_call_delta", "contentIndex": 1, "delta": ': "Europe/'},
    {"type": "tool_call_delta", "contentIndex": 1, "delta": 'Paris"}'},
    {"type": "tool_call_end", "contentIndex": 0},
    {"type": "tool_call_end", "contentIndex": 1},
    {"type": "done", "stopReason": "tool_calls", "usage": {
        "prompt_tokens": 112, "completion_tokens": 52, "total_tokens": 164,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}},
]

TWO_CALLS = [
    {"type": "toolCall", "callId": "call_Wn3kF8aR2pLxQ9vT5yZc1mBd", "name": "get_weather",
     "arguments": {"city": "Paris", "unit": "c"}},
    {"type": "toolCall", "callId": "call_Hq7sD2gJ9kLm4nPx6vRt8wYe", "name": "get_time", "arguments": {"tz": "Europe/Paris"}},
]


def test_translate_two_parallel_tool_calls_split_across_chunks():
    events = translate("parallel_tool_calls.sse")
    assert events == PARALLEL_EVENTS
    assembler = create_assembler()
    for event in events:
        validate_response_event(event)
        assembler.consume(event)
    assert assembler.message() == {"type": 3, "content": TWO_CALLS}


def test_translate_gemini_style_whole_calls_without_index():
    assert translate("gemini_tool_call.sse") == [
        {"type": "tool_call_start", "contentIndex": 0, "callId": "function-call-5290412907712345678", "name": "get_weather"},
        {"type": "tool_call_delta", "contentIndex": 0, "delta": '{"city":"Paris","unit":"c"}'},
        {"type": "tool_call_start", "contentIndex": 1, "callId": "function-call-5290412907712349999", "name": "get_time"},
        {"type": "tool_call_delta", "contentIndex": 1, "delta": '{"tz":"Europe/Paris"}'},
        {"type": "tool_call_end", "contentIndex": 0},
        {"type": "tool_call_end", "contentIndex": 1},
        {"type": "done", "stopReason": "stop", "usage": {"completion_tokens": 24, "prompt_tokens": 87, "total_tokens": 151}},
    ]


def test_translate_finish_reason_length():
    assert translate("length.sse") == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Once upon"},
        {"type": "text_delta", "contentIndex": 0, "delta": " a time"},
        {"type": "text_end", "contentIndex": 0},
        {"type": "done", "stopReason": "length", "usage": {
            "prompt_tokens": 14, "completion_tokens": 4, "total_tokens": 18,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}},
    ]


def test_translate_an_error_data_line_ends_the_stream():
    assert translate("error_midstream.sse") == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Partial"},
        {"type": "error", "error": {
            "message": "openai stream error: The server had an error while processing your request. Sorry about that!",
            "code": "SERVER_ERROR", "provider": "openai"}},
    ]


def test_translate_no_finish_reason_is_incomplete():
    assert translate("no_finish.sse") == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Cut"},
        {"type": "text_delta", "contentIndex": 0, "delta": " short"},
        {"type": "text_end", "contentIndex": 0},
        {"type": "error", "error": {
            "message": "openai: the stream ended without a finish_reason (the response is incomplete)",
            "code": "INCOMPLETE", "provider": "openai"}},
    ]


def chunk(delta=None, finish=None, index=0):
    return {"object": "chat.completion.chunk", "choices": [{"index": index, "delta": delta or {}, "finish_reason": finish}]}


def test_tool_call_keying_edge_cases():
    translator = ChatTranslator()
    events = []
    for piece in [
        # text first, then a call whose arguments come before its name, then no id at all
        chunk({"content": "ok"}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f", "arguments": ":1}"}}]}),
        # a proxy numbering every call 0: a new id at index 0 is a new call
        chunk({"tool_calls": [{"index": 0, "id": "c2", "type": "function", "function": {"name": "g", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
        # no index and no id: more arguments for the latest call (Gemini splitting a call)
        chunk({"tool_calls": [{"id": "c3", "function": {"name": "h", "arguments": '{"b":'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": "2}"}}]}),
        # no id ever: a made-up one from the content index
        chunk({"tool_calls": [{"index": 5, "function": {"name": "k", "arguments": "[]"}}]}),
        chunk({"content": "ignored"}, index=1),  # n > 1: other choices are not assembled
        chunk(finish="tool_calls"),
    ]:
        events += translator.feed(piece)
    events += translator.finish()
    assert events == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "ok"},
        {"type": "tool_call_start", "contentIndex": 1, "callId": "c1", "name": "f"},
        {"type": "tool_call_delta", "contentIndex": 1, "delta": '{"a"'},
        {"type": "tool_call_delta", "contentIndex": 1, "delta": ":1}"},
        {"type": "tool_call_start", "contentIndex": 2, "callId": "c2", "name": "g"},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": "{}"},
        {"type": "tool_call_start", "contentIndex": 3, "callId": "c3", "name": "h"},
        {"type": "tool_call_delta", "contentIndex": 3, "delta": '{"b":'},
        {"type": "tool_call_delta", "contentIndex": 3, "delta": "2}"},
        {"type": "tool_call_start", "contentIndex": 4, "callId": "call_4", "name": "k"},
        {"type": "tool_call_delta", "contentIndex": 4, "delta": "[]"},
        {"type": "text_end", "contentIndex": 0},
        {"type": "tool_call_end", "contentIndex": 1},
        {"type": "tool_call_end", "contentIndex": 2},
        {"type": "tool_call_end", "contentIndex": 3},
        {"type": "tool_call_end", "contentIndex": 4},
        {"type": "done", "stopReason": "tool_calls"},
    ]
    assert translator.feed(chunk({"content": "late"})) == []
    assert translator.finish() == []


# -- the connector through the real SDK --------------------------------------------------------------


def test_run_turn_through_the_sdk_commits_the_message_with_provider_usage():
    with WireServer(stream_reply("text.sse")) as server:
        context = Context()
        model = OpenAIChatModel("gpt-4.1-mini", base_url=server.url, api_key="test")
        result = run_unchecked(context, "hi", model=model)
    assert result.error is None
    assert context.messages() == [
        {"type": 2, "content": [{"type": "text", "text": "hi"}]},
        {"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]},
    ]
    assert result.usage == {
        "inputTokens": 1117, "outputTokens": 75, "totalTokens": 1192, "cacheReadTokens": 1024, "reasoningTokens": 64,
        "details": {"prompt_tokens_details": {"audio_tokens": 0},
                    "completion_tokens_details": {"audio_tokens": 0, "accepted_prediction_tokens": 0,
                                                  "rejected_prediction_tokens": 0}},
        "source": "provider",
    }
    [request] = server.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test"
    assert request.json == {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}],
                            "stream": True, "stream_options": {"include_usage": True}}


def test_the_first_event_is_start_with_the_rate_limit_headers():
    headers = {"x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6ms", "x-request-id": "req_1"}
    with WireServer(stream_reply("length.sse", headers=headers)) as server:
        events, error = events_from(OpenAIChatModel(MODEL, base_url=server.url, api_key="test"))
    assert error is None
    assert events[0] == {"type": "start", "model": "gpt-4.1-mini", "provider": "openai",
                         "rateLimits": {"x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6ms"}}
    assert events[1:] == translate("length.sse")


def test_a_reply_cut_at_the_token_limit_says_so_on_its_call():
    """Issue 20 §4: a reply cut by finish_reason "length" was shown as complete (only the stop reason said it)."""
    with WireServer(stream_reply("length.sse")) as server:
        result = run_unchecked(Context(), "hi", model=OpenAIChatModel(MODEL, base_url=server.url, api_key="test"))
    assert result.error is None
    assert result.calls[0]["stopReason"] == "length" and result.calls[0]["truncated"] is True


@pytest.mark.parametrize("name", ["reasoning_content.sse", "reasoning.sse", "refusal.sse", "gemini_tool_call.sse"])
def test_the_sdk_keeps_every_field_the_translator_reads(name):
    """What the SDK parses (``reasoning_content``, ``reasoning``, an index-less tool call) reaches the
    translator as the capture has it: the SDK's events equal the translator's over the raw capture."""
    answered = chunks_of(name)[0]["model"]  # asked for by the name it answers with: no responseModel
    with WireServer(stream_reply(name)) as server:
        events, error = events_from(OpenAIChatModel(answered, base_url=server.url, api_key="test"))
    assert error is None
    assert events == [{"type": "start", "model": answered, "provider": "openai"}, *translate(name)]


def test_a_server_answering_as_another_model_says_so_on_done():
    # reasoning.sse answers as the model the server ran (the capture's "model"), not the one asked for
    answered = chunks_of("reasoning.sse")[0]["model"]
    with WireServer(stream_reply("reasoning.sse")) as server:
        events, error = events_from(OpenAIChatModel("smollm2-typo", base_url=server.url, api_key="test"))
    assert error is None and answered != "smollm2-typo"
    assert events[-1] == {**translate("reasoning.sse")[-1], "responseModel": answered}
    with WireServer(stream_reply("reasoning.sse")) as server:
        result = run_unchecked(Context(), "hi", model=OpenAIChatModel("smollm2-typo", base_url=server.url, api_key="t"))
    assert result.calls[0]["responseModel"] == answered and "truncated" not in result.calls[0]


def test_parallel_tool_calls_through_the_sdk_commit_two_tool_call_blocks():
    with WireServer(stream_reply("parallel_tool_calls.sse")) as server:
        context = Context()
        result = run_unchecked(context, "hi", model=OpenAIChatModel(MODEL, base_url=server.url, api_key="test"))
    assert result.error is None
    assert context.messages()[1] == {"type": 3, "content": TWO_CALLS}
    assert result.response["tool_calls"] == [
        {"id": "call_Wn3kF8aR2pLxQ9vT5yZc1mBd", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city":"Paris","unit":"c"}'}},
        {"id": "call_Hq7sD2gJ9kLm4nPx6vRt8wYe", "type": "function",
         "function": {"name": "get_time", "arguments": '{"tz":"Europe/Paris"}'}},
    ]


def get_weather(city: str, unit: str = "c") -> str:
    """Weather for a city."""
    return f"18 {unit.upper()}, cloudy in {city}"


def get_time(tz: str) -> str:
    """The local time in a time zone."""
    return "14:05"


def test_a_tool_round_through_run_turn_sends_calls_and_results_back():
    replies = [stream_reply("parallel_tool_calls.sse"), stream_reply("text.sse")]
    with WireServer(replies) as server:
        context = Context()
        result = run_unchecked(context, "hi", model=OpenAIChatModel(MODEL, base_url=server.url, api_key="t"),
                                           tools=[get_weather, get_time])
    assert result.error is None
    assert result.response["content"] == "Hello! How can I help?"
    tools = [{"type": "function", "function": Tool(get_weather).spec},
             {"type": "function", "function": Tool(get_time).spec}]
    assert tools[0]["function"]["description"] == "Weather for a city."
    first, second = (request.json for request in server.requests)
    assert first == {"model": "gpt-4.1-mini", "messages": [USER_HI], **STREAMING, "tools": tools}
    assert second == {"model": "gpt-4.1-mini", "messages": [
        USER_HI,
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_Wn3kF8aR2pLxQ9vT5yZc1mBd", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Paris","unit":"c"}'}},
            {"id": "call_Hq7sD2gJ9kLm4nPx6vRt8wYe", "type": "function",
             "function": {"name": "get_time", "arguments": '{"tz":"Europe/Paris"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_Wn3kF8aR2pLxQ9vT5yZc1mBd", "content": "18 C, cloudy in Paris"},
        {"role": "tool", "tool_call_id": "call_Hq7sD2gJ9kLm4nPx6vRt8wYe", "content": "14:05"},
    ], **STREAMING, "tools": tools}
    assert [m["type"] for m in context.messages()] == [2, 3, 4, 4, 3]


def test_the_rounds_of_a_turn_and_the_next_turn_share_one_connection():
    """Issue 20: every call built its own SDK client (~27 ms, most of it the TLS context) and connection."""
    replies = [stream_reply("parallel_tool_calls.sse"), stream_reply("text.sse")]
    with WireServer(replies) as server:
        model = OpenAIChatModel(MODEL, base_url=server.url, api_key="t")
        context = Context()
        first = run_unchecked(context, "hi", model=model, tools=[get_weather, get_time])
        second = run_unchecked(context, "again", model=model)
    assert first.error is None and second.error is None
    assert second.response["content"] == "Hello! How can I help?"
    peers = {request.peer for request in server.requests}
    assert len(server.requests) == 3 and len(peers) == 1  # both rounds and the next turn: one connection


def test_a_key_changed_in_the_environment_between_turns_is_a_new_client(monkeypatch):
    with WireServer(stream_reply("text.sse")) as server:
        model = OpenAIChatModel(MODEL, base_url=server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "first-key")
        assert run_unchecked(Context(), "hi", model=model).error is None
        monkeypatch.setenv("OPENAI_API_KEY", "second-key")
        assert run_unchecked(Context(), "hi", model=model).error is None
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer first-key", "Bearer second-key"]


def test_two_turns_at_once_from_two_threads_both_complete():
    import threading

    replies = [Reply(body=sse_events(capture(DIR + "text.sse")), delay=0.05)]
    with WireServer(replies) as server:
        model = OpenAIChatModel(MODEL, base_url=server.url, api_key="t")
        results: list = []
        threads = [threading.Thread(target=lambda: results.append(run_unchecked(Context(), "hi", model=model)))
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [r.response["content"] for r in results] == ["Hello! How can I help?"] * 2


def test_a_pool_builds_one_client_per_settings_and_closes_it():
    from agentctx_widgets.models.clients import open_pool

    async def two_calls() -> tuple[int, list]:
        with WireServer(stream_reply("text.sse")) as server:
            model = OpenAIChatModel(MODEL, base_url=server.url, api_key="t")
            other = OpenAIChatModel(MODEL, base_url=server.url, api_key="t")  # same settings: same client
            async with open_pool() as pool:
                for each in (model, other, model):
                    events = [e async for e in each.stream([{"type": 2, "content": [{"type": "text", "text": "hi"}]}])]
                    assert events[-1]["type"] == "done"
                clients = list(pool._clients.values())
            return pool.built, clients

    built, clients = asyncio.run(two_calls())
    assert built == 1 and len(clients) == 1
    assert clients[0].is_closed()


@pytest.mark.parametrize(("rounds", "second_choice"), [(None, None), ("first", None), ("every", "required")])
def test_tool_choice_holds_for_the_first_round_unless_every_round_is_asked(rounds, second_choice):
    """A forced tool_choice repeated after the tool results could only end at max_tool_rounds."""
    replies = [stream_reply("parallel_tool_calls.sse"), stream_reply("text.sse")]
    options = {"tool_choice": "required", **({"tool_choice_rounds": rounds} if rounds else {})}
    with WireServer(replies) as server:
        result = run_unchecked(Context(), "hi", model=OpenAIChatModel(MODEL, base_url=server.url, api_key="t"),
                                           tools=[get_weather, get_time], options=options)
    assert result.error is None and result.response["content"] == "Hello! How can I help?"
    first, second = (request.json for request in server.requests)
    assert first["tool_choice"] == "required" and "tool_choice_rounds" not in first
    assert second.get("tool_choice") == second_choice and "tool_choice_rounds" not in second


def test_tool_choice_rounds_must_be_first_or_every():
    with pytest.raises(RequestError, match=r"options\['tool_choice_rounds'\] must be 'first' or 'every', got 'all'"):
        body([user(text("hi"))], options={"tool_choice_rounds": "all"})


def test_the_environment_variables_are_used_without_api_key_or_client(monkeypatch):
    with WireServer(stream_reply("text.sse")) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        model = OpenAIChatModel(MODEL)
        result = run_unchecked(Context(), "hi", model=model)
    assert result.error is None
    assert result.response["content"] == "Hello! How can I help?"
    [request] = server.requests
    assert (request.path, request.headers["authorization"]) == ("/v1/chat/completions", "Bearer sk-from-env")
    assert model.key_source == "the environment variable OPENAI_API_KEY"


def test_a_sync_client_works_through_the_sync_driver():
    with WireServer(stream_reply("parallel_tool_calls.sse")) as server, \
            openai.OpenAI(api_key="sync-key", base_url=server.url, max_retries=0) as client:
        model = OpenAIChatModel(MODEL, client=client)
        events = model.stream([user(text("hi"))])
        assert inspect.isgenerator(events)
        assert list(events) == [{"type": "start", "model": "gpt-4.1-mini", "provider": "openai"}, *PARALLEL_EVENTS]
        context = Context()
        result = run_unchecked(context, "hi", model=model)
    assert result.error is None
    assert context.messages()[1] == {"type": 3, "content": TWO_CALLS}
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer sync-key", "Bearer sync-key"]
    assert server.requests[1].json == {"model": "gpt-4.1-mini", "messages": [USER_HI], **STREAMING}


def test_per_call_options_merge_over_the_constructors():
    with WireServer(stream_reply("text.sse")) as server:
        model = OpenAIChatModel(MODEL, base_url=server.url, api_key="test", temperature=1, max_completion_tokens=64)
        result = run_unchecked(Context(), "hi", model=model, options={"temperature": 0})
    assert result.error is None
    assert server.requests[0].json == {"model": "gpt-4.1-mini", "messages": [USER_HI], **STREAMING,
                                       "temperature": 0, "max_completion_tokens": 64}
    assert model.options == {"temperature": 1, "max_completion_tokens": 64}


def test_options_the_sdk_does_not_name_still_reach_the_server():
    """vLLM's ``top_k`` / ``chat_template_kwargs``: not parameters of the SDK's ``create`` (which would
    raise TypeError), so they travel in ``extra_body``, merged with one the caller gave."""
    with WireServer(stream_reply("text.sse")) as server:
        model = OpenAIChatModel("qwen3", base_url=server.url, api_key="vllm", top_k=20,
                                chat_template_kwargs={"enable_thinking": False}, extra_body={"min_p": 0.05})
        events, error = events_from(model)
    assert error is None
    assert server.requests[0].json == {"model": "qwen3", "messages": [USER_HI], **STREAMING,
                                       "top_k": 20, "chat_template_kwargs": {"enable_thinking": False}, "min_p": 0.05}


def test_one_model_serves_several_turns():
    """Each run_turn runs its own event loop: a client kept from the first turn would fail the second
    with "Event loop is closed"."""
    with WireServer(stream_reply("text.sse")) as server:
        context = Context()
        model = OpenAIChatModel(MODEL, base_url=server.url, api_key="test")
        errors = [run_unchecked(context, "hi", model=model).error for _ in range(3)]
    assert errors == [None, None, None]
    assert len(server.requests) == 3
    assert [m["type"] for m in context.messages()] == [2, 3, 2, 3, 2, 3]


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # the dead loop's socket: the misuse under test
def test_an_async_client_passed_in_serves_turn_after_turn():
    """Turns run on the kept loop, so the user's own async client (bound to the loop it first ran in) works
    for every turn; it failed the second one with "Event loop is closed" while each turn had a loop."""
    with WireServer(stream_reply("text.sse")) as server:
        client = openai.AsyncOpenAI(api_key="t", base_url=server.url, max_retries=0)
        model = OpenAIChatModel(MODEL, client=client)
        first = run_unchecked(Context(), "hi", model=model)
        second = run_unchecked(Context(), "hi", model=model)
        del client, model
        gc.collect()
    assert first.error is None and second.error is None
    assert second.response["content"] == "Hello! How can I help?"


# -- errors through the SDK --------------------------------------------------------------------------


def fail(reply, **model_kwargs):
    events, error, _ = fail_at(reply, **model_kwargs)
    return events, error


def fail_at(reply, **model_kwargs):
    """(events, the ModelError, ``POST <url>`` the request went to)."""
    with WireServer(reply) as server:
        model = OpenAIChatModel(MODEL, base_url=server.url, **({"api_key": "test"} | model_kwargs))
        events, error = events_from(model)
    assert isinstance(error, ModelError), events
    return events, error, f"POST {server.url}/chat/completions"


def test_401_names_the_key_source():
    events, error, url = fail_at(json_reply("error_401.json", 401))
    assert events == []
    assert (error.code, error.status, error.retry, error.provider) == ("AUTHENTICATION", 401, None, "openai")
    assert error.message == ("openai answered HTTP 401: Incorrect API key provided: test. You can find your API key at "
                             f"https://platform.openai.com/account/api-keys. ({url}, model 'gpt-4.1-mini'; "
                             "the API key came from api_key=)")
    assert (error.url, error.model, error.hint) == (url, "gpt-4.1-mini", None)


def test_401_with_the_key_from_the_environment_says_so(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
    with WireServer(json_reply("error_401.json", 401)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        events, error = events_from(OpenAIChatModel(MODEL))
    assert error.code == "AUTHENTICATION"
    assert error.message.endswith("; the API key came from the environment variable OPENAI_API_KEY)")
    assert "sk-bad" not in error.message
    assert server.requests[0].headers["authorization"] == "Bearer sk-bad"


def test_429_with_retry_after_seconds():
    _, error, url = fail_at(json_reply("error_429.json", 429, headers={"retry-after": "2"}))
    assert (error.code, error.status, error.retry) == ("RATE_LIMIT", 429, 2.0)
    assert error.retryable is True
    assert error.message.endswith("Please try again in 2s. Visit https://platform.openai.com/account/rate-limits "
                                  f"to learn more. ({url}, model 'gpt-4.1-mini'; retry after 2 s)")


def test_429_with_retry_after_ms():
    _, error = fail(json_reply("error_429.json", 429, headers={"retry-after-ms": "1500"}))
    assert (error.code, error.status, error.retry) == ("RATE_LIMIT", 429, 1.5)


@pytest.mark.parametrize(("name", "status", "code", "text"), [
    ("error_400_context_length.json", 400, "CONTEXT_LENGTH",
     "openai answered HTTP 400: This model's maximum context length is 1047576 tokens. However, your messages "
     "resulted in 1100321 tokens. Please reduce the length of the messages."),
    ("error_500.json", 500, "SERVER_ERROR",
     "openai answered HTTP 500: The server had an error while processing your request. Sorry about that!"),
    ("error_503.json", 503, "UNAVAILABLE", "openai answered HTTP 503: The server is overloaded or not ready yet."),
])
def test_http_errors_map_to_codes(name, status, code, text):
    events, error, url = fail_at(json_reply(name, status))
    assert events == []
    assert (error.code, error.status, error.retry, error.message) == (
        code, status, None, f"{text} ({url}, model 'gpt-4.1-mini')")


@pytest.mark.parametrize(("status", "body", "content_type", "said"), [
    # FastAPI's default bodies (llama-cpp-python's 401 and an unknown route), as starlette writes them
    (401, '{"detail":"Invalid API key"}', "application/json", "Invalid API key"),
    (404, '{"detail":"Not Found"}', "application/json", "Not Found"),
    # FastAPI's request validation body: the first three places, then how many more
    (422, '{"detail":[{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{}},'
          '{"type":"string_type","loc":["body","model"],"msg":"Input should be a valid string","input":1},'
          '{"type":"missing","loc":["body","a"],"msg":"Field required"},{"type":"missing","loc":["body","b"],"msg":"x"}]}',
     "application/json", "body.messages: Field required; body.model: Input should be a valid string; "
                         "body.a: Field required (and 1 more)"),
    # error as a plain string (Ollama's {"error": "model \"x\" not found, try pulling it first"})
    (404, '{"error":"model \\"nope\\" not found, try pulling it first"}', "application/json",
     'model "nope" not found, try pulling it first'),
    (502, "Bad Gateway\n", "text/plain", "Bad Gateway"),
    (500, "", "text/plain", "no error message (the body was empty)"),
    (500, '{"status":"broken"}', "application/json", 'no error message; the body was {"status": "broken"}'),
])
def test_every_error_body_shape_gives_the_servers_own_message(status, body, content_type, said):
    _, error, url = fail_at(Reply(body, status=status, content_type=content_type))
    assert error.status == status
    assert error.message.startswith(f"openai answered HTTP {status}: {said} ({url}, model 'gpt-4.1-mini'")


def test_a_base_url_without_v1_gets_the_hint_on_its_404():
    with WireServer(Reply('{"detail":"Not Found"}', status=404, content_type="application/json"), prefix="") as server:
        events, error = events_from(OpenAIChatModel(MODEL, base_url=server.url, api_key="test"))
    assert server.requests[0].path == "/chat/completions"
    assert error.code == "NOT_FOUND"
    assert error.message == (f"openai answered HTTP 404: Not Found (POST {server.url}/chat/completions, model "
                             f"'gpt-4.1-mini'). Hint: base_url {server.url} has no /v1: OpenAI-compatible servers "
                             "(Ollama, llama-server, vLLM, LM Studio, LiteLLM) serve /v1/chat/completions, so try "
                             f"base_url='{server.url}/v1'")
    assert error.hint.startswith(f"base_url {server.url} has no /v1")


def test_a_404_with_v1_asks_whether_the_model_exists():
    _, error, url = fail_at(Reply('{"error":"model \\"gpt-4.1-mini\\" not found, try pulling it first"}',
                                  status=404, content_type="application/json"))
    base = url.removeprefix("POST ").removesuffix("/chat/completions")
    assert error.hint == f"is 'gpt-4.1-mini' a model this server serves? {base}/models lists them"


def test_connection_refused_names_the_url_and_the_usual_ports():
    base = f"http://127.0.0.1:{free_port()}/v1"
    events, error = events_from(OpenAIChatModel(MODEL, base_url=base, api_key="test"))
    assert error.code == "CONNECTION"
    assert f"(POST {base}/chat/completions, model 'gpt-4.1-mini')" in error.message
    assert error.hint == (f"nothing accepted the connection at {base}: is the server running, on this host and port? "
                          "(default ports: Ollama 11434, llama-server 8080, llama-cpp-python 8000, vLLM 8000, "
                          "LM Studio 1234, LiteLLM proxy 4000)")
    assert error.message.endswith(". Hint: " + error.hint)


def test_a_401_with_the_key_under_a_near_miss_name_says_which_variable_is_read(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_KEY", "sk-proj-0123456789abcdef")
    with WireServer(json_reply("error_401.json", 401)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        _, error = events_from(OpenAIChatModel(MODEL))
    assert error.hint == "OPENAI_API_KEY is not set but OPENAI_KEY is: the SDK reads OPENAI_API_KEY (or pass api_key=)"
    assert "sk-proj-0123456789abcdef" not in error.message


def test_a_key_the_server_echoes_is_blanked_and_urls_lose_query_and_user_info():
    key = "sk-live-abcdefghijklmnop"
    reply = Reply('{"error":{"message":"Invalid key sk-live-abcdefghijklmnop","type":"invalid_request_error",'
                  '"code":"invalid_api_key"}}', status=401, content_type="application/json")
    with WireServer(reply) as server:
        host = server.url.removeprefix("http://")
        client = openai.AsyncOpenAI(base_url=f"http://user:pw@{host}", api_key=key, max_retries=0,
                                    default_query={"key": "secret-query"})
        model = OpenAIChatModel(MODEL, client=client)
        _, error = events_from(model)
    assert key not in error.message and "secret-query" not in error.message and "pw@" not in error.message
    assert error.message.startswith(f"openai answered HTTP 401: Invalid key *** (POST {server.url}/chat/completions, ")


def test_an_error_data_line_mid_stream_raises_and_commits_nothing():
    events, error = fail(stream_reply("error_midstream.sse"))
    assert events == [{"type": "start", "model": "gpt-4.1-mini", "provider": "openai"},
                      {"type": "text_start", "contentIndex": 0},
                      {"type": "text_delta", "contentIndex": 0, "delta": "Partial"}]
    assert (error.code, error.status, error.provider) == ("SERVER_ERROR", None, "openai")
    assert error.message == ("openai stream error: The server had an error while processing your request. "
                             "Sorry about that!")
    with WireServer(stream_reply("error_midstream.sse")) as server:
        context = Context()
        result = run_unchecked(context, "hi", model=OpenAIChatModel(MODEL, base_url=server.url, api_key="t"))
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]
    assert result.error == {"message": error.message, "code": "SERVER_ERROR", "name": "ModelError", "hook": None,
                            "provider": "openai"}
    assert result.response is None


def test_no_finish_reason_is_incomplete_through_run_turn():
    with WireServer(stream_reply("no_finish.sse")) as server:
        context = Context()
        result = run_unchecked(context, "hi", model=OpenAIChatModel(MODEL, base_url=server.url, api_key="t"))
    assert result.error == {"message": "openai: the stream ended without a finish_reason (the response is incomplete)",
                            "code": "INCOMPLETE", "name": "ModelError", "hook": None, "provider": "openai"}
    assert context.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]


def test_a_connection_cut_mid_stream_is_connection():
    events, error = fail(stream_reply("parallel_tool_calls.sse", cut_after=3))
    assert events == [{"type": "start", "model": "gpt-4.1-mini", "provider": "openai"}, *PARALLEL_EVENTS[:3]]
    assert (error.code, error.status) == ("CONNECTION", None)
    assert error.message.startswith("openai: the connection failed: ")
    assert error.retryable is True


def test_malformed_sse_data_is_a_clear_bad_stream_error():
    pieces = sse_events(capture(DIR + "text.sse"))
    events, error = fail(Reply(body=[pieces[0], "data: {not json\n\n", *pieces[1:]]))
    assert events == [{"type": "start", "model": "gpt-4.1-mini", "provider": "openai"}]
    assert error.code == "BAD_STREAM"
    assert error.message == ("openai: the stream was malformed: JSONDecodeError: Expecting property name enclosed "
                             "in double quotes: line 1 column 2 (char 1)")
    assert type(error.__cause__).__name__ == "JSONDecodeError"


def test_an_unreachable_port_is_connection():
    model = OpenAIChatModel(MODEL, base_url=f"http://127.0.0.1:{free_port()}/v1", api_key="test")
    events, error = events_from(model)
    assert events == []
    assert (error.code, error.status) == ("CONNECTION", None)
    assert error.message.startswith("openai: the connection failed: Connection error.")


def test_a_slow_server_times_out():
    with WireServer(stream_reply("text.sse", first_delay=1.0)) as server:
        model = OpenAIChatModel(MODEL, base_url=server.url, api_key="test", timeout=0.2)
        events, error = events_from(model)
    assert events == [{"type": "start", "model": "gpt-4.1-mini", "provider": "openai"}]  # the headers came at once
    assert (error.code, error.status) == ("TIMEOUT", None)
    assert error.message.startswith("openai: the request timed out")


def test_closing_the_stream_early_closes_the_http_stream():
    """What the runner does on an interrupt: the provider must see the connection go, and stop."""
    with WireServer(stream_reply("parallel_tool_calls.sse", delay=0.05)) as server:
        model = OpenAIChatModel(MODEL, base_url=server.url, api_key="test")

        async def two_then_close():
            events = model.stream([user(text("hi"))])
            seen = [await events.__anext__(), await events.__anext__()]
            await events.aclose()
            return seen

        seen = asyncio.run(two_then_close())
        assert server.disconnected.wait(3)
    assert seen == [{"type": "start", "model": "gpt-4.1-mini", "provider": "openai"}, PARALLEL_EVENTS[0]]


def test_the_error_hook_sees_the_code():
    seen = []
    hooks = hooks_from_python(Error=lambda ctx, messages, error: seen.append(dict(error)))
    with WireServer(json_reply("error_429.json", 429, headers={"retry-after": "2"})) as server:
        result = run_unchecked(Context(), "hi", hooks=hooks,
                                           model=OpenAIChatModel(MODEL, base_url=server.url, api_key="t"))
    message = capture(DIR + "error_429.json")
    expected_message = (f"openai answered HTTP 429: {orjson.loads(message)['error']['message']} "
                        f"(POST {server.url}/chat/completions, model 'gpt-4.1-mini'; retry after 2 s)")
    assert seen == [{"message": expected_message, "code": "RATE_LIMIT", "name": "ModelError", "hook": None,
                     "status": 429, "retry": 2.0, "provider": "openai"}]
    assert result.error == seen[0]


def test_the_error_hook_can_retry_after_a_server_error():
    hooks = hooks_from_python(Error=lambda ctx, messages, error: {"retry": True} if error["code"] == "UNAVAILABLE" else None)
    with WireServer([json_reply("error_503.json", 503), stream_reply("text.sse")]) as server:
        context = Context()
        result = run_unchecked(context, "hi", hooks=hooks,
                                           model=OpenAIChatModel(MODEL, base_url=server.url, api_key="t"))
    assert (result.error, result.retries, len(server.requests)) == (None, 1, 2)
    assert context.messages()[1] == {"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]}


# -- without the SDK ---------------------------------------------------------------------------------


def test_a_missing_sdk_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError) as caught:
        OpenAIChatModel(MODEL)
    assert str(caught.value) == ("the 'openai' package is needed for this model: "
                                 "pip install \"agentctx-widgets[openai]\"")
    assert OpenAIChatModel(MODEL, client=object()).model == "gpt-4.1-mini"  # a client of one's own needs no import


def test_constructor_arguments_are_checked():
    with pytest.raises(ValueError) as caught:
        OpenAIChatModel(" ")
    assert str(caught.value) == "OpenAIChatModel(model): expected a model id such as 'gpt-4.1-mini', got ' '"
    with pytest.raises(ValueError) as caught:
        OpenAIChatModel(MODEL, client=object(), api_key="x")
    assert str(caught.value) == "OpenAIChatModel: give client= or api_key=/base_url=, not both"
    assert repr(OpenAIChatModel(MODEL, base_url="http://localhost:11434/v1", api_key="ollama")) == (
        "OpenAIChatModel('gpt-4.1-mini', base_url='http://localhost:11434/v1')")
