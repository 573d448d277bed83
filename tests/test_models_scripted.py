"""ScriptedModel: deterministic, real normalised events."""

from __future__ import annotations

import asyncio

import pytest

from agentctx_widgets.context import create_assembler, validate_response_event
from agentctx_widgets.models import Model, ModelError, ScriptedModel


def events_of(model, messages=None):
    return list(model.stream(messages or []))


def test_a_string_reply_is_chunked_text_between_start_and_done():
    assert events_of(ScriptedModel(["Hello world"], chunk_size=4)) == [
        {"type": "start", "model": "scripted"},
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "Hell"},
        {"type": "text_delta", "contentIndex": 0, "delta": "o wo"},
        {"type": "text_delta", "contentIndex": 0, "delta": "rld"},
        {"type": "text_end", "contentIndex": 0, "text": "Hello world"},
        {"type": "done"},
    ]


def test_thinking_text_and_tool_calls_get_their_own_content_indexes():
    reply = {"thinking": "hmm", "text": "ok", "tool_calls": [
        {"id": "c1", "name": "add", "arguments": {"a": 1}},
        {"id": "c2", "name": "raw", "arguments": "not json"},
    ], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    events = events_of(ScriptedModel([reply], chunk_size=100, model="m1"))
    assert events == [
        {"type": "start", "model": "m1"},
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "hmm"},
        {"type": "thinking_end", "contentIndex": 0, "text": "hmm"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "ok"},
        {"type": "text_end", "contentIndex": 1, "text": "ok"},
        {"type": "tool_call_start", "contentIndex": 2, "callId": "c1", "name": "add"},
        {"type": "tool_call_delta", "contentIndex": 2, "delta": '{"a":1}'},
        {"type": "tool_call_end", "contentIndex": 2},
        {"type": "tool_call_start", "contentIndex": 3, "callId": "c2", "name": "raw"},
        {"type": "tool_call_delta", "contentIndex": 3, "delta": "not json"},
        {"type": "tool_call_end", "contentIndex": 3},
        {"type": "done", "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
    ]
    for event in events:
        validate_response_event(event)
    assembler = create_assembler()
    for event in events:
        assembler.consume(event)
    assert assembler.message() == {"type": 3, "content": [
        {"type": "thinking", "text": "hmm"},
        {"type": "text", "text": "ok"},
        {"type": "toolCall", "callId": "c1", "name": "add", "arguments": {"a": 1}},
        {"type": "toolCall", "callId": "c2", "name": "raw", "arguments": "not json"},
    ]}


def test_model_usage_is_the_default_and_a_reply_usage_wins():
    model = ScriptedModel(["a", {"text": "b", "usage": {"input_tokens": 9, "output_tokens": 1}}], usage={"prompt_tokens": 1})
    assert events_of(model)[-1] == {"type": "done", "usage": {"prompt_tokens": 1}}
    assert events_of(model)[-1] == {"type": "done", "usage": {"input_tokens": 9, "output_tokens": 1}}


def test_error_reply_ends_with_an_error_event_after_the_content():
    events = events_of(ScriptedModel([{"text": "par", "error": {"message": "cut", "code": "RATE_LIMIT"}}]))
    assert events[-2:] == [{"type": "text_end", "contentIndex": 0, "text": "par"},
                           {"type": "error", "error": {"message": "cut", "code": "RATE_LIMIT"}}]
    assert events_of(ScriptedModel([{"error": "plain"}])) == [{"type": "start", "model": "scripted"},
                                                             {"type": "error", "error": "plain"}]


def test_exception_reply_is_raised_from_the_stream_after_the_content():
    seen = []
    with pytest.raises(ConnectionError, match="socket closed"):
        for event in ScriptedModel([{"text": "ab", "error": ConnectionError("socket closed")}]).stream([]):
            seen.append(event["type"])
    assert seen == ["start", "text_start", "text_delta", "text_end"]


def test_last_reply_repeats_and_calls_are_recorded():
    model = ScriptedModel(["one", "two"])
    texts = [events_of(model, [{"n": i}])[-2]["text"] for i in range(4)]
    assert texts == ["one", "two", "two", "two"]
    assert model.calls == [[{"n": 0}], [{"n": 1}], [{"n": 2}], [{"n": 3}]]
    model.reset()
    assert events_of(model)[-2]["text"] == "one"


def test_callable_reply_sees_the_messages():
    model = ScriptedModel(lambda messages: f"you sent {len(messages)}")
    assert events_of(model, [{}, {}])[-2]["text"] == "you sent 2"


def test_async_iteration_gives_the_same_events_and_sleeps_with_asyncio(monkeypatch):
    slept: list[tuple[str, float]] = []

    async def fake_async_sleep(seconds):
        slept.append(("asyncio", seconds))

    monkeypatch.setattr(asyncio, "sleep", fake_async_sleep)
    monkeypatch.setattr("time.sleep", lambda s: slept.append(("time", s)))
    model = ScriptedModel(["abcdef"], chunk_size=2, delay=0.01)

    async def collect():
        return [event async for event in model.stream([])]

    async_events = asyncio.run(collect())
    assert slept == [("asyncio", 0.01)] * 3
    slept.clear()
    assert list(model.stream([])) == async_events
    assert slept == [("time", 0.01)] * 3


@pytest.mark.parametrize(
    ("replies", "error", "match"),
    [
        ([], ValueError, "at least one reply"),
        ([3], TypeError, r"replies\[0\]: expected a string, dict or callable, got int"),
        (["ok", {"txt": "x"}], ValueError, r"replies\[1\]: unknown keys \['txt'\]"),
        ([{"text": 5}], TypeError, r"replies\[0\]\.text: expected a string"),
        ([{"tool_calls": [{"name": "f"}]}], ValueError, r"replies\[0\]\.tool_calls\[0\]"),
    ],
)
def test_bad_replies_are_rejected_naming_the_reply(replies, error, match):
    with pytest.raises(error, match=match):
        ScriptedModel(replies)


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="chunk_size"):
        ScriptedModel(["x"], chunk_size=0)
    with pytest.raises(ValueError, match="delay"):
        ScriptedModel(["x"], delay=-1)


def test_scripted_model_satisfies_the_model_protocol():
    assert isinstance(ScriptedModel(["x"]), Model)


def test_model_error_from_event_error():
    error = ModelError.from_event_error({"message": "slow down", "code": "RATE_LIMIT", "retry": 2})
    assert (error.message, error.code, error.retry) == ("slow down", "RATE_LIMIT", 2)
    assert ModelError.from_event_error("plain").message == "plain"
