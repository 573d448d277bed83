"""OpenAI Responses: the request builder, the stream translator, and the real SDK on a loopback server.

Expected request bodies are written from OpenAI's API reference ("Create a model response": input
items — input message, function tool call, function tool call output, reasoning — and the flat
function tool), not from the builder's output; the captures under
``tests/vectors/wire/openai_responses/`` follow the documented streaming events ("Streaming events").
"""

from __future__ import annotations

import functools
import asyncio
import base64

import openai
import pytest
from wire_server import Reply, WireServer, assemble, capture, capture_data, sse_events, translate_with

from agentctx_widgets import Context, run_turn
from agentctx_widgets.context import usage_normalize
from agentctx_widgets.models import ModelError, OpenAIResponsesModel, build_responses_request
from agentctx_widgets.models.convert import RequestError
from agentctx_widgets.models.openai_responses import ResponsesTranslator

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing

MODEL = "o4-mini"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
PDF = base64.b64encode(b"%PDF-1.4 fake").decode()
CALL_PARIS = "call_Q2vXb7TQxXk4mBr1d9sYt3aH"
CALL_TOKYO = "call_Lm4Rz8WpVn2Kc6Hs0Jd5Qa1E"


def build(messages, **options):
    return build_responses_request(messages, model=MODEL, options=options or None)


def user(*blocks_or_text):
    return {"type": 2, "content": [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks_or_text]}


def system(text):
    return {"type": 1, "content": [{"type": "text", "text": text}]}


def place_of(error: RequestError) -> str:
    return str(error).split(":", 1)[0]


# -- (a) the request builder -------------------------------------------------------------------

def test_system_and_user_messages_are_input_messages():
    body = build([system("You are terse."), user("Hello"),
                  {"type": 1, "content": [{"type": "text", "text": "Answer in French."}, {"type": "text", "text": "Be kind."}]}])
    assert body == {
        "model": "o4-mini",
        "input": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": [{"type": "input_text", "text": "Hello"}]},
            {"role": "system", "content": "Answer in French.\n\nBe kind."},
        ],
        "stream": True,
        "store": False,
    }


def test_images_by_url_and_base64_always_carry_detail():
    body = build([user("What is in these?",
                       {"type": "image", "url": "https://upload.wikimedia.org/ant.jpg", "detail": "high"},
                       {"type": "image", "content": PNG, "mimetype": "image/png"},
                       {"type": "binary", "mimetype": "image/jpeg", "filename": "cat.jpg", "content": "/9j/4AAQ"},
                       {"type": "image", "url": "data:image/webp;base64,UklGRg==", "detail": "low"})])
    assert body["input"] == [{"role": "user", "content": [
        {"type": "input_text", "text": "What is in these?"},
        {"type": "input_image", "image_url": "https://upload.wikimedia.org/ant.jpg", "detail": "high"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
        {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "auto"},
        {"type": "input_image", "image_url": "data:image/webp;base64,UklGRg==", "detail": "low"},
    ]}]


def test_files_are_input_file_parts_with_a_data_url():
    body = build([user({"type": "binary", "mimetype": "application/pdf", "filename": "report.pdf", "content": PDF},
                       {"type": "binary", "mimetype": "text/csv", "content": "YSxiCjEsMgo="},
                       "Summarise both.")])
    assert body["input"] == [{"role": "user", "content": [
        {"type": "input_file", "filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PDF}"},
        {"type": "input_file", "filename": "file", "file_data": "data:text/csv;base64,YSxiCjEsMgo="},
        {"type": "input_text", "text": "Summarise both."},
    ]}]


def test_a_whole_tool_round_trip():
    messages = [
        system("Use the tools."),
        user("Weather in Paris and Tokyo?"),
        {"type": 3, "content": [
            {"type": "thinking", "text": "Plain thinking from another provider."},
            {"type": "thinking", "text": "Two cities, two calls.", "signature": "gAAAAABenc-1"},
            {"type": "text", "text": "Checking both."},
            {"type": "toolCall", "callId": CALL_PARIS, "name": "get_weather", "arguments": {"city": "Paris"}},
            {"type": "toolCall", "callId": CALL_TOKYO, "name": "get_weather", "arguments": '{"city": "Tokyo"}'},
        ]},
        {"type": 4, "callId": CALL_PARIS, "name": "get_weather", "content": [{"type": "text", "text": "18°C, sunny"}]},
        {"type": 4, "callId": CALL_TOKYO, "name": "get_weather", "error": True,
         "content": [{"type": "text", "text": "timeout"}, {"type": "text", "text": "try later"}]},
        {"type": 3, "content": [{"type": "text", "text": "Paris is sunny."}, {"type": "text", "text": "Tokyo timed out."}]},
        user("Thanks!"),
    ]
    assert build(messages) == {
        "model": "o4-mini",
        "input": [
            {"role": "system", "content": "Use the tools."},
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris and Tokyo?"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Two cities, two calls."}],
             "encrypted_content": "gAAAAABenc-1"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Checking both.", "annotations": []}]},
            {"type": "function_call", "call_id": CALL_PARIS, "name": "get_weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call", "call_id": CALL_TOKYO, "name": "get_weather", "arguments": '{"city": "Tokyo"}'},
            {"type": "function_call_output", "call_id": CALL_PARIS, "output": "18°C, sunny"},
            {"type": "function_call_output", "call_id": CALL_TOKYO, "output": "timeout\n\ntry later"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Paris is sunny.", "annotations": []},
                                              {"type": "output_text", "text": "Tokyo timed out.", "annotations": []}]},
            {"role": "user", "content": [{"type": "input_text", "text": "Thanks!"}]},
        ],
        "stream": True,
        "store": False,
    }


def test_a_signature_only_thinking_block_is_a_reasoning_item_with_an_empty_summary():
    body = build([user("hi"), {"type": 3, "content": [
        {"type": "thinking", "text": "", "signature": "gAAAAABenc-2"},
        {"type": "toolCall", "callId": "call_1", "name": "now", "arguments": {}}]}])
    assert body["input"][1:] == [
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAABenc-2"},
        {"type": "function_call", "call_id": "call_1", "name": "now", "arguments": "{}"},
    ]


def test_a_tool_result_with_an_image_sends_a_list_of_input_parts():
    body = build([{"type": 4, "callId": "call_shot", "content": [
        {"type": "text", "text": "the screenshot:"}, {"type": "image", "content": PNG, "mimetype": "image/png"}]}])
    assert body["input"] == [{"type": "function_call_output", "call_id": "call_shot", "output": [
        {"type": "input_text", "text": "the screenshot:"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
    ]}]


def test_neutral_tools_are_flat_non_strict_functions_and_native_tools_pass_through():
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body = build([user("hi")], tools=[
        {"name": "get_weather", "description": "Current weather for a city", "parameters": schema},
        {"name": "now", "description": ""},
        {"name": "lookup", "description": "Exact lookup", "parameters": schema, "strict": True},
        {"type": "web_search", "search_context_size": "low"},
    ])
    assert body["tools"] == [
        {"type": "function", "name": "get_weather", "description": "Current weather for a city",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
         "strict": False},
        {"type": "function", "name": "now", "parameters": {"type": "object", "properties": {}}, "strict": False},
        {"type": "function", "name": "lookup", "description": "Exact lookup",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
         "strict": True},
        {"type": "web_search", "search_context_size": "low"},
    ]


def test_other_options_go_into_the_body_unchanged_and_store_can_be_turned_on():
    body = build([user("hi")], reasoning={"effort": "low", "summary": "auto"}, include=["reasoning.encrypted_content"],
                 max_output_tokens=512, temperature=0.2, instructions="Be brief.", store=True,
                 text={"format": {"type": "text"}, "verbosity": "low"}, tool_choice="auto", parallel_tool_calls=False)
    assert body == {
        "model": "o4-mini",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": True,
        "store": True,
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 512,
        "temperature": 0.2,
        "instructions": "Be brief.",
        "text": {"format": {"type": "text"}, "verbosity": "low"},
        "tool_choice": "auto",
        "parallel_tool_calls": False,
    }


def test_store_is_false_by_default_and_model_options_merge_under_call_options():
    model = OpenAIResponsesModel(MODEL, api_key="test", reasoning={"effort": "high"}, max_output_tokens=100)
    assert model.request([user("hi")], {"max_output_tokens": 50}) == {
        "model": "o4-mini",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": True,
        "store": False,
        "reasoning": {"effort": "high"},
        "max_output_tokens": 50,
    }


def test_records_are_skipped():
    assert build([{"type": "meta", "title": "x"}, user("hi")])["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


@pytest.mark.parametrize(("messages", "options", "place"), [
    ([user("a"), user("b"), user("c"), user("d", {"type": "thinking", "text": "x"})], {}, "messages[3].content[1]"),
    ([{"type": 1, "content": [{"type": "image", "url": "https://x/y.png"}]}], {}, "messages[0].content"),
    ([user("q"), {"type": 4, "content": [{"type": "text", "text": "r"}]}], {}, "messages[1].callId"),
    ([user("q"), {"type": 3, "content": [{"type": "text", "text": "a"}, {"type": "image", "url": "https://x/y.png"}]}], {},
     "messages[1].content[1].type"),
    ([user({"type": "image", "mimetype": "image/png"})], {}, "messages[0].content[0]"),
    ([user({"type": "binary", "mimetype": "application/pdf", "filename": "a.pdf"})], {}, "messages[0].content[0].content"),
    ([user({"type": "audio", "content": "AAAA"})], {}, "messages[0].content[0].type"),
    ([user("q"), {"type": 3, "content": [{"type": "toolCall", "name": "f", "arguments": {}}]}], {},
     "messages[1].content[0].callId"),
    ([user("q"), {"type": 3, "content": [{"type": "toolCall", "callId": "c", "arguments": {}}]}], {},
     "messages[1].content[0].name"),
    ([{"type": 7, "content": []}], {}, "messages[0].type"),
    ([user("q"), {"type": 4, "callId": "c", "content": ["bare string"]}], {}, "messages[1].content[0]"),
    ([user("q")], {"input": "other"}, "build_responses_request"),
    ([user("q")], {"tools": [{"description": "no name"}]}, "options['tools'][0]"),
])
def test_request_errors_name_the_place(messages, options, place):
    with pytest.raises(RequestError) as caught:
        build_responses_request(messages, model=MODEL, options=options)
    assert place_of(caught.value) == place


def test_request_error_messages_say_what_is_wrong():
    with pytest.raises(RequestError) as caught:
        build([user("q"), {"type": 3, "content": [{"type": "binary", "mimetype": "application/pdf", "content": PDF}]}])
    assert str(caught.value) == ("messages[1].content[0].type: an assistant message can hold text, thinking and "
                                 "toolCall blocks, not 'binary'")
    with pytest.raises(RequestError) as caught:
        build([user("q", {"type": "toolCall", "callId": "c", "name": "f", "arguments": {}})])
    assert str(caught.value) == "messages[0].content[1]: a toolCall block belongs in an assistant message"


# -- (b) the translator over the captures ------------------------------------------------------

def raw_events(name: str) -> list[dict]:
    return capture_data(f"openai_responses/{name}")


def translate(events: list[dict]) -> list[dict]:
    return translate_with(ResponsesTranslator(), events)


TEXT_USAGE = {"input_tokens": 9, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 8,
              "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 17}


def test_text_capture():
    events = translate(raw_events("text.sse"))
    assert events == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Hello"},
        {"type": "text_delta", "contentIndex": 0, "delta": "! How can"},
        {"type": "text_delta", "contentIndex": 0, "delta": " I help?"},
        {"type": "text_end", "contentIndex": 0, "text": "Hello! How can I help?"},
        {"type": "done", "stopReason": "stop", "usage": TEXT_USAGE},
    ]
    assert assemble(events) == ({"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]}, TEXT_USAGE)


def test_reasoning_summary_parts_fold_into_one_signed_thinking_block():
    events = translate(raw_events("reasoning.sse"))
    usage = {"input_tokens": 14, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 152,
             "output_tokens_details": {"reasoning_tokens": 128}, "total_tokens": 166}
    assert events == [
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "**Adding numbers**\n\nThe user asks for 17 + 25"},
        {"type": "thinking_delta", "contentIndex": 0, "delta": ", which is 42."},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "\n\n**Answering briefly**"},
        {"type": "thinking_end", "contentIndex": 0, "signature": "gAAAAABoodCzR3Vp-enc-reasoning-1"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "17 + 25 = "},
        {"type": "text_delta", "contentIndex": 1, "delta": "42"},
        {"type": "text_end", "contentIndex": 1, "text": "17 + 25 = 42"},
        {"type": "done", "stopReason": "stop", "usage": usage},
    ]
    assert assemble(events)[0] == {"type": 3, "content": [
        {"type": "thinking", "text": "**Adding numbers**\n\nThe user asks for 17 + 25, which is 42.\n\n**Answering briefly**",
         "signature": "gAAAAABoodCzR3Vp-enc-reasoning-1"},
        {"type": "text", "text": "17 + 25 = 42"},
    ]}


def test_two_parallel_function_calls_with_arguments_split_across_deltas():
    events = translate(raw_events("tool_calls.sse"))
    usage = {"input_tokens": 61, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 83,
             "output_tokens_details": {"reasoning_tokens": 24}, "total_tokens": 144}
    assert events == [
        {"type": "thinking_start", "contentIndex": 0},  # no summary, but the encrypted reasoning goes back
        {"type": "thinking_end", "contentIndex": 0, "text": "", "signature": "gAAAAABooePK-enc-reasoning-2"},
        {"type": "tool_call_start", "contentIndex": 1, "callId": CALL_PARIS, "name": "get_weather"},
        {"type": "tool_call_delta", "contentIndex": 1, "delta": '{"ci'},
        {"type": "tool_call_delta", "contentIndex": 1, "delta": 'ty":"Pa'},
        {"type": "tool_call_delta", "contentIndex": 1, "delta": 'ris"}'},
        {"type": "tool_call_end", "contentIndex": 1, "arguments": '{"city":"Paris"}'},
        {"type": "tool_call_start", "contentIndex": 2, "callId": CALL_TOKYO, "name": "get_weather"},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": '{"city"'},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": ':"Tok'},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": 'yo"}'},
        {"type": "tool_call_end", "contentIndex": 2, "arguments": '{"city":"Tokyo"}'},
        {"type": "done", "stopReason": "tool_calls", "usage": usage},
    ]
    assert assemble(events)[0] == {"type": 3, "content": [
        {"type": "thinking", "text": "", "signature": "gAAAAABooePK-enc-reasoning-2"},
        {"type": "toolCall", "callId": CALL_PARIS, "name": "get_weather", "arguments": {"city": "Paris"}},
        {"type": "toolCall", "callId": CALL_TOKYO, "name": "get_weather", "arguments": {"city": "Tokyo"}},
    ]}


def test_a_refusal_is_shown_as_text():
    events = translate(raw_events("refusal.sse"))
    assert events[:-1] == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "I'm sorry, "},
        {"type": "text_delta", "contentIndex": 0, "delta": "I can't help with that."},
        {"type": "text_end", "contentIndex": 0, "text": "I'm sorry, I can't help with that."},
    ]
    assert events[-1]["stopReason"] == "stop"
    assert assemble(events)[0] == {"type": 3, "content": [{"type": "text", "text": "I'm sorry, I can't help with that."}]}


def test_response_failed_is_an_error_with_the_code_of_response_error():
    events = translate(raw_events("failed.sse"))
    assert events == [
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "The answer"},
        {"type": "error", "error": {"message": "openai response failed (server_error): The model failed to generate a response.",
                                    "code": "SERVER_ERROR", "provider": "openai"}},
    ]


@pytest.mark.parametrize(("code", "ours"), [
    ("rate_limit_exceeded", "RATE_LIMIT"), ("invalid_prompt", "REFUSED"), ("vector_store_timeout", "TIMEOUT"),
    ("invalid_image_url", "BAD_REQUEST"), ("image_too_large", "BAD_REQUEST"), (None, "REFUSED"),
])
def test_response_failed_codes(code, ours):
    failed = {"type": "response.failed", "response": {"status": "failed", "error": {"code": code, "message": "no"}}}
    assert translate([failed])[0]["error"]["code"] == ours


@pytest.mark.parametrize("name", ["error_event.sse", "error_event_nested.sse"])
def test_an_error_event_is_a_rate_limit_error(name):
    assert translate(raw_events(name)) == [{"type": "error", "error": {
        "message": "openai stream error: Rate limit reached for o4-mini in organization org-test on tokens per min "
                   "(TPM): Limit 200000, Used 199500, Requested 1200. Please try again in 210ms.",
        "code": "RATE_LIMIT", "provider": "openai"}}]


def test_response_incomplete_is_done_with_the_reason_not_an_error():
    events = translate(raw_events("incomplete.sse"))
    assert events[-2:] == [
        {"type": "text_end", "contentIndex": 0, "text": "Once upon a time, in a kingdom by the sea, there lived"},
        {"type": "done", "stopReason": "max_output_tokens", "usage": {
            "input_tokens": 12, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 16,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 28}},
    ]


def test_usage_with_cached_and_reasoning_tokens_is_passed_as_written_and_normalises():
    events = translate(raw_events("usage_cached.sse"))
    usage = {"input_tokens": 2150, "input_tokens_details": {"cached_tokens": 1920}, "output_tokens": 96,
             "output_tokens_details": {"reasoning_tokens": 64}, "total_tokens": 2246}
    assert events == [  # a reasoning item with neither summary nor encrypted content leaves no block
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Section 4.2 covers it."},
        {"type": "text_end", "contentIndex": 0, "text": "Section 4.2 covers it."},
        {"type": "done", "stopReason": "stop", "usage": usage},
    ]
    assert usage_normalize(usage) == {"inputTokens": 2150, "outputTokens": 96, "totalTokens": 2246,
                                      "cacheReadTokens": 1920, "reasoningTokens": 64}


def test_a_stream_without_a_terminal_event_is_incomplete_and_its_open_blocks_close():
    events = translate(raw_events("text.sse")[:6])
    assert events[-2:] == [
        {"type": "text_end", "contentIndex": 0},
        {"type": "error", "error": {"message": "openai: the stream ended before response.completed (the response is incomplete)",
                                    "code": "INCOMPLETE", "provider": "openai"}},
    ]


def test_nothing_after_a_terminal_event():
    translator = ResponsesTranslator()
    assert translator.feed({"type": "response.completed", "response": {"usage": None}}) == [
        {"type": "done", "stopReason": "stop"}]
    assert translator.feed({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "x"}) == []
    assert translator.finish() == []


def test_arguments_before_their_item_wait_for_its_name_and_text_only_in_item_done_still_shows():
    events = translate([
        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": '{"q":'},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": "fc_1", "type": "function_call", "call_id": "call_9", "name": "search", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": '"x"}'},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"id": "fc_1", "type": "function_call", "call_id": "call_9", "name": "search", "arguments": '{"q":"x"}'}},
        {"type": "response.output_item.done", "output_index": 1, "item": {"id": "msg_1", "type": "message", "content": [
            {"type": "output_text", "text": "Found it.", "annotations": []}]}},
        {"type": "response.output_item.done", "output_index": 2, "item": {
            "id": "rs_2", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Late summary."}]}},
        {"type": "response.completed", "response": {}},
    ])
    assert events == [
        {"type": "tool_call_start", "contentIndex": 0, "callId": "call_9", "name": "search"},
        {"type": "tool_call_delta", "contentIndex": 0, "delta": '{"q":'},
        {"type": "tool_call_delta", "contentIndex": 0, "delta": '"x"}'},
        {"type": "tool_call_end", "contentIndex": 0, "arguments": '{"q":"x"}'},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_end", "contentIndex": 1, "text": "Found it."},
        {"type": "thinking_start", "contentIndex": 2},
        {"type": "thinking_end", "contentIndex": 2, "text": "Late summary."},
        {"type": "done", "stopReason": "tool_calls"},
    ]


def test_reasoning_text_deltas_are_thinking_too():
    events = translate([
        {"type": "response.reasoning_text.delta", "output_index": 0, "item_id": "rs_1", "content_index": 0, "delta": "Let me"},
        {"type": "response.reasoning_text.delta", "output_index": 0, "item_id": "rs_1", "content_index": 0, "delta": " think."},
        {"type": "response.output_item.done", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}},
        {"type": "response.completed", "response": {"usage": {"input_tokens": 1, "output_tokens": 2}}},
    ])
    assert assemble(events) == ({"type": 3, "content": [{"type": "thinking", "text": "Let me think."}]},
                                {"input_tokens": 1, "output_tokens": 2})


# -- (c) through the real SDK on a loopback server ----------------------------------------------

def sse_reply(name: str, **reply) -> Reply:
    return Reply(sse_events(capture(f"openai_responses/{name}")), **reply)


def json_reply(name: str, status: int, **headers: str) -> Reply:
    return Reply(capture(f"openai_responses/{name}"), status=status, content_type="application/json",
                 headers={"x-request-id": "req_3f1c2a9b8d7e6f50", **headers})


def server_for(*replies: Reply) -> WireServer:
    return WireServer(list(replies), lifetime=20)  # base_url ends in /v1, as OpenAI's does


def model_on(server: WireServer, **options) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(MODEL, base_url=server.url, api_key="test", timeout=10, **options)


def test_a_text_turn_through_the_sdk():
    with server_for(sse_reply("text.sse")) as server:
        ctx = Context()
        result = run_turn(ctx, "hi", model=model_on(server), options={"temperature": 0})
    assert result.error is None
    assert ctx.messages() == [
        {"type": 2, "content": [{"type": "text", "text": "hi"}]},
        {"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]},
    ]
    assert result.usage == {"inputTokens": 9, "outputTokens": 8, "totalTokens": 17, "cacheReadTokens": 0,
                            "reasoningTokens": 0, "source": "provider"}
    assert [call["stopReason"] for call in result.calls] == ["stop"]
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.json == {
        "model": "o4-mini",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": True,
        "store": False,
        "temperature": 0,
    }
    assert request.headers["authorization"] == "Bearer test"


def test_a_reasoning_turn_keeps_the_summary_and_its_signature():
    with server_for(sse_reply("reasoning.sse")) as server:
        ctx = Context()
        ctx.append(system("Be brief."))
        model = model_on(server, reasoning={"effort": "medium", "summary": "auto"}, include=["reasoning.encrypted_content"])
        result = run_turn(ctx, "17 + 25?", model=model)
    assert result.error is None
    assert ctx.messages()[-1] == {"type": 3, "content": [
        {"type": "thinking", "text": "**Adding numbers**\n\nThe user asks for 17 + 25, which is 42.\n\n**Answering briefly**",
         "signature": "gAAAAABoodCzR3Vp-enc-reasoning-1"},
        {"type": "text", "text": "17 + 25 = 42"},
    ]}
    assert result.usage == {"inputTokens": 14, "outputTokens": 152, "totalTokens": 166, "cacheReadTokens": 0,
                            "reasoningTokens": 128, "source": "provider"}
    assert server.requests[0].json == {
        "model": "o4-mini",
        "input": [{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": [{"type": "input_text", "text": "17 + 25?"}]}],
        "stream": True,
        "store": False,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }


def test_a_tool_round_trip_through_the_sdk_sends_calls_outputs_and_reasoning_back():
    def get_weather(city: str) -> str:
        """Current weather for a city"""
        return {"Paris": "18°C, sunny", "Tokyo": "24°C, rain"}[city]

    with server_for(sse_reply("tool_calls.sse"), sse_reply("text.sse")) as server:
        ctx = Context()
        result = run_turn(ctx, "Weather in Paris and Tokyo?", model=model_on(server), tools=[get_weather])
    assert result.error is None
    assert ctx.messages() == [
        {"type": 2, "content": [{"type": "text", "text": "Weather in Paris and Tokyo?"}]},
        {"type": 3, "content": [
            {"type": "thinking", "text": "", "signature": "gAAAAABooePK-enc-reasoning-2"},
            {"type": "toolCall", "callId": CALL_PARIS, "name": "get_weather", "arguments": {"city": "Paris"}},
            {"type": "toolCall", "callId": CALL_TOKYO, "name": "get_weather", "arguments": {"city": "Tokyo"}},
        ]},
        {"type": 4, "callId": CALL_PARIS, "name": "get_weather", "content": [{"type": "text", "text": "18°C, sunny"}]},
        {"type": 4, "callId": CALL_TOKYO, "name": "get_weather", "content": [{"type": "text", "text": "24°C, rain"}]},
        {"type": 3, "content": [{"type": "text", "text": "Hello! How can I help?"}]},
    ]
    assert [call["stopReason"] for call in result.calls] == ["tool_calls", "stop"]
    assert result.usage == {"inputTokens": 70, "outputTokens": 91, "totalTokens": 161, "cacheReadTokens": 0,
                            "reasoningTokens": 24, "source": "provider"}
    tool = {"type": "function", "name": "get_weather", "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                           "additionalProperties": False},
            "strict": False}
    assert [request.path for request in server.requests] == ["/v1/responses", "/v1/responses"]
    assert server.requests[1].json == {
        "model": "o4-mini",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris and Tokyo?"}]},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAABooePK-enc-reasoning-2"},
            {"type": "function_call", "call_id": CALL_PARIS, "name": "get_weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call", "call_id": CALL_TOKYO, "name": "get_weather", "arguments": '{"city":"Tokyo"}'},
            {"type": "function_call_output", "call_id": CALL_PARIS, "output": "18°C, sunny"},
            {"type": "function_call_output", "call_id": CALL_TOKYO, "output": "24°C, rain"},
        ],
        "stream": True,
        "store": False,
        "tools": [tool],
    }


def test_a_tool_call_turn_without_tools_commits_the_calls_with_parsed_arguments():
    with server_for(sse_reply("tool_calls.sse")) as server:
        ctx = Context()
        result = run_turn(ctx, "Weather?", model=model_on(server), options={"tools": [
            {"name": "get_weather", "description": "Current weather for a city",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]})
    assert result.error is None
    assert [block["arguments"] for block in ctx.messages()[1]["content"] if block["type"] == "toolCall"] == [
        {"city": "Paris"}, {"city": "Tokyo"}]
    assert server.requests[0].json["tools"] == [
        {"type": "function", "name": "get_weather", "description": "Current weather for a city",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
         "strict": False}]


def test_cached_and_reasoning_usage_through_the_sdk():
    with server_for(sse_reply("usage_cached.sse")) as server:
        result = run_turn(Context(), "Which section?", model=model_on(server))
    assert result.usage == {"inputTokens": 2150, "outputTokens": 96, "totalTokens": 2246, "cacheReadTokens": 1920,
                            "reasoningTokens": 64, "source": "provider"}


def test_an_incomplete_response_is_committed_with_its_reason():
    with server_for(sse_reply("incomplete.sse")) as server:
        ctx = Context()
        result = run_turn(ctx, "A long story", model=model_on(server, max_output_tokens=16))
    assert result.error is None
    assert ctx.messages()[-1] == {"type": 3, "content": [
        {"type": "text", "text": "Once upon a time, in a kingdom by the sea, there lived"}]}
    assert result.calls[0]["stopReason"] == "max_output_tokens"
    assert server.requests[0].json["max_output_tokens"] == 16


def test_the_start_event_carries_rate_limit_headers_and_every_event_survives_the_sdk():
    async def collect(model):
        return [event async for event in model.stream([user("17 + 25?")])]

    headers = {"x-ratelimit-remaining-requests": "499", "x-ratelimit-reset-tokens": "50ms"}
    with server_for(sse_reply("reasoning.sse", headers=headers)) as server:
        events = asyncio.run(collect(model_on(server)))
    assert events[0] == {"type": "start", "model": "o4-mini", "provider": "openai", "rateLimits": {
        "x-ratelimit-remaining-requests": "499", "x-ratelimit-reset-tokens": "50ms"}}
    assert events[1:] == translate(raw_events("reasoning.sse"))


def test_a_sync_client_gives_the_same_turn():
    with server_for(sse_reply("tool_calls.sse")) as server:
        client = openai.OpenAI(api_key="test", base_url=server.url, max_retries=0, timeout=10)
        ctx = Context()
        result = run_turn(ctx, "Weather?", model=OpenAIResponsesModel(MODEL, client=client))
    assert result.error is None
    assert ctx.messages()[1]["content"][0] == {"type": "thinking", "text": "", "signature": "gAAAAABooePK-enc-reasoning-2"}
    assert result.usage["outputTokens"] == 83
    assert server.requests[0].path == "/v1/responses"


# -- (d) errors through the SDK ----------------------------------------------------------------

def failed_turn(*replies: Reply) -> dict:
    error, _ = failed_turn_at(*replies)
    return error


def failed_turn_at(*replies: Reply) -> tuple[dict, str]:
    """(the turn's error, what its message says the request went to)."""
    with server_for(*replies) as server:
        ctx = Context()
        result = run_turn(ctx, "hi", model=model_on(server))
    assert result.response is None
    assert ctx.messages() == [{"type": 2, "content": [{"type": "text", "text": "hi"}]}]  # nothing committed
    assert len(server.requests) == 1  # SDK retries are off: the Error hook decides
    return result.error, f"POST {server.url}/responses, model {MODEL!r}"


def test_401_names_where_the_key_came_from():
    error, where = failed_turn_at(json_reply("error_401.json", 401))
    assert error == {"message": "openai answered HTTP 401: Incorrect API key provided: test. You can find your API key "
                                f"at https://platform.openai.com/account/api-keys. ({where}; the API key came from api_key=)",
                     "code": "AUTHENTICATION", "name": "ModelError", "hook": None, "status": 401, "provider": "openai"}


def test_401_without_a_key_names_the_environment_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with server_for(json_reply("error_401.json", 401)) as server:
        result = run_turn(Context(), "hi", model=OpenAIResponsesModel(MODEL, base_url=server.url, timeout=10))
    assert result.error["code"] == "AUTHENTICATION"
    assert result.error["message"].endswith(
        "; the API key came from the environment variable OPENAI_API_KEY (which is not set))")


@pytest.mark.parametrize(("headers", "retry"), [({"retry-after-ms": "1500"}, 1.5), ({"retry-after": "3"}, 3.0)])
def test_429_is_a_rate_limit_with_the_retry_hint(headers, retry):
    error, where = failed_turn_at(json_reply("error_429.json", 429, **headers))
    assert error == {"message": "openai answered HTTP 429: Rate limit reached for o4-mini in organization org-test on "
                                "requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 1.5s. "
                                "Visit https://platform.openai.com/account/rate-limits to learn more."
                                f" ({where}; retry after {retry:g} s)",
                     "code": "RATE_LIMIT", "name": "ModelError", "hook": None, "status": 429, "retry": retry,
                     "provider": "openai"}


def test_429_model_error_fields_from_the_stream_itself():
    async def first_event(model):
        async for event in model.stream([user("hi")]):
            return event

    with server_for(json_reply("error_429.json", 429, **{"retry-after-ms": "1500"})) as server:
        with pytest.raises(ModelError) as caught:
            asyncio.run(first_event(model_on(server)))
    failure = caught.value
    assert (failure.code, failure.status, failure.retry, failure.provider, failure.request_id) == (
        "RATE_LIMIT", 429, 1.5, "openai", "req_3f1c2a9b8d7e6f50")
    assert failure.retryable


def test_500_is_a_server_error():
    error, where = failed_turn_at(json_reply("error_500.json", 500))
    assert error == {"message": "openai answered HTTP 500: The server had an error while processing your request. "
                                f"Sorry about that! ({where})",
                     "code": "SERVER_ERROR", "name": "ModelError", "hook": None, "status": 500, "provider": "openai"}


def test_response_failed_commits_nothing():
    error = failed_turn(sse_reply("failed.sse"))
    assert error == {"message": "openai response failed (server_error): The model failed to generate a response.",
                     "code": "SERVER_ERROR", "name": "ModelError", "hook": None, "provider": "openai"}


@pytest.mark.parametrize("name", ["error_event.sse", "error_event_nested.sse"])
def test_an_error_event_mid_stream_is_a_rate_limit_and_commits_nothing(name):
    # the documented flat event reaches the translator; the nested one seen in production makes the SDK raise
    error = failed_turn(sse_reply(name))
    assert error == {"message": "openai stream error: Rate limit reached for o4-mini in organization org-test on tokens "
                                "per min (TPM): Limit 200000, Used 199500, Requested 1200. Please try again in 210ms.",
                     "code": "RATE_LIMIT", "name": "ModelError", "hook": None, "provider": "openai"}


def test_a_connection_cut_mid_stream():
    error = failed_turn(sse_reply("text.sse", cut_after=3))
    assert error["code"] == "CONNECTION"
    assert error["message"].startswith("openai: the connection failed: ")


def test_malformed_sse_is_a_bad_stream():
    error = failed_turn(sse_reply("malformed.sse"))
    assert error["code"] == "BAD_STREAM"
    assert error["message"].startswith("openai: the stream was malformed: JSONDecodeError: ")


def test_a_stream_that_ends_before_response_completed_is_incomplete():
    error = failed_turn(Reply(sse_events(capture("openai_responses/text.sse"))[:-1]))
    assert error == {"message": "openai: the stream ended before response.completed (the response is incomplete)",
                     "code": "INCOMPLETE", "name": "ModelError", "hook": None, "provider": "openai"}
