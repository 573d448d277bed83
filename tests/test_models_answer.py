"""What a server says about its answer: the model it ran (a typo is accepted silently by local servers)
and whether the token limit cut the reply. Expected values written from each API's documented fields."""

from __future__ import annotations

import pytest

from agentctx_widgets.models.answer import answered_model, is_truncated, model_mismatch, same_model


@pytest.mark.parametrize(("requested", "answered"), [
    ("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"),  # OpenAI answers with the dated snapshot
    ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
    ("gpt-4", "gpt-4-0613"),
    ("llama3.2", "llama3.2:latest"),  # Ollama's default tag
    ("Qwen/Qwen2.5-0.5B", "qwen/qwen2.5-0.5b"),
])
def test_snapshots_and_tags_of_the_asked_model_are_the_same_model(requested, answered):
    assert same_model(requested, answered)
    assert model_mismatch(requested, answered) is None


@pytest.mark.parametrize(("requested", "answered"), [
    ("gpt-4.1", "gpt-4.1-mini"),
    ("smollm2-typo", "/models/SmolLM2-135M-Instruct.Q4_1.gguf"),
    ("llama3.2", "llama3.1:latest"),
])
def test_another_model_is_a_mismatch_with_a_diagnostic(requested, answered):
    assert not same_model(requested, answered)
    assert model_mismatch(requested, answered, where="calls[0]") == {
        "code": "MODEL_MISMATCH", "message": f"asked for model {requested!r}, the server answered as {answered!r}",
        "where": "calls[0]",
        "hint": "local servers run the model they loaded whatever name is sent: check the name "
                "(GET /v1/models lists what the server serves)"}


def test_truncating_stop_reasons_of_each_api():
    assert [is_truncated(r) for r in ("length", "max_tokens", "max_output_tokens", "model_context_window_exceeded")] == [True] * 4
    assert [is_truncated(r) for r in ("stop", "tool_calls", "end_turn", "content_filter", None, 3)] == [False] * 6


def test_the_answered_model_from_each_apis_chunks():
    assert answered_model({"object": "chat.completion.chunk", "model": "m1", "choices": []}) == "m1"
    assert answered_model({"type": "message_start", "message": {"model": "claude-x"}}) == "claude-x"
    assert answered_model({"type": "response.created", "response": {"model": "o4-mini"}}) == "o4-mini"
    assert answered_model({"type": "content_block_delta"}) is None
    assert answered_model({"model": ""}) is None
