"""What a server says about its answer: the model it ran (a typo is accepted silently by local servers)
and whether the token limit cut the reply. Expected values written from each API's documented fields."""

from __future__ import annotations

import pytest

from agentctx_widgets.models.answer import answered_model, call_facts, is_truncated, same_model


@pytest.mark.parametrize(("requested", "answered"), [
    ("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"),  # OpenAI answers with the dated snapshot
    ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
    ("gpt-4", "gpt-4-0613"),
    ("llama3.2", "llama3.2:latest"),  # Ollama's default tag
    ("Qwen/Qwen2.5-0.5B", "qwen/qwen2.5-0.5b"),
])
def test_snapshots_and_tags_of_the_asked_model_are_the_same_model(requested, answered):
    assert same_model(requested, answered)


@pytest.mark.parametrize(("requested", "answered"), [
    ("gpt-4.1", "gpt-4.1-mini"),
    ("smollm2-typo", "/models/SmolLM2-135M-Instruct.Q4_1.gguf"),
    ("llama3.2", "llama3.1:latest"),
])
def test_another_model_is_not_the_same_model(requested, answered):
    assert not same_model(requested, answered)


def test_a_calls_record_keeps_the_stop_reason_whether_it_was_cut_and_who_answered():
    assert call_facts({"type": "done", "stopReason": "length"}) == {"stopReason": "length", "truncated": True}
    assert call_facts({"type": "done", "stopReason": "stop", "responseModel": "m2"}) == {"stopReason": "stop",
                                                                                       "responseModel": "m2"}
    assert call_facts({"type": "done"}) == {}


def test_truncating_stop_reasons_of_each_api():
    assert [is_truncated(r) for r in ("length", "max_tokens", "max_output_tokens", "model_context_window_exceeded")] == [True] * 4
    assert [is_truncated(r) for r in ("stop", "tool_calls", "end_turn", "content_filter", None, 3)] == [False] * 6


def test_the_answered_model_from_each_apis_chunks():
    assert answered_model({"object": "chat.completion.chunk", "model": "m1", "choices": []}) == "m1"
    assert answered_model({"type": "message_start", "message": {"model": "claude-x"}}) == "claude-x"
    assert answered_model({"type": "response.created", "response": {"model": "o4-mini"}}) == "o4-mini"
    assert answered_model({"type": "content_block_delta"}) is None
    assert answered_model({"model": ""}) is None
