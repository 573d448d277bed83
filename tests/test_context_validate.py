import pytest

from agentctx_widgets.context import (error_text, has_content, has_error, is_context, is_message, is_record,
                                      validate_context, validate_message)


def test_is_record_needs_a_string_type():
    assert is_record({"type": "checkpoint"})
    assert not is_record({"type": 2, "content": []})
    assert not is_record(["type"])
    assert not is_record(None)


def test_is_message_core_shape():
    assert is_message({"type": 2, "content": []})
    assert is_message({"type": 3, "content": [{"type": "text", "text": "x"}], "extra": 1})
    assert not is_message({"type": "2", "content": []})
    assert not is_message({"type": True, "content": []})
    assert not is_message({"type": 2, "content": "hi"})
    assert not is_message([2, []])
    assert not is_message({"type": 2, "content": ["text"]})


def test_validate_message_returns_same_object():
    msg = {"type": 2, "content": [], "z": 1, "a": 2}
    assert validate_message(msg) is msg
    assert list(msg) == ["type", "content", "z", "a"]


@pytest.mark.parametrize("bad, where", [
    ("nope", r"^context\[2\]: expected a message dict"),
    ({"content": []}, r"^context\[2\]\.type"),
    ({"type": 2}, r"^context\[2\]\.content"),
    ({"type": 2, "content": [1]}, r"^context\[2\]\.content\[0\]: expected a block"),
    ({"type": 2, "content": [{"text": "x"}]}, r"^context\[2\]\.content\[0\]\.type"),
])
def test_validate_message_errors_name_the_address(bad, where):
    with pytest.raises(TypeError, match=where):
        validate_message(bad, "context[2]")


def test_validate_message_default_address():
    with pytest.raises(TypeError, match=r"^message\.type"):
        validate_message({"type": None, "content": []})


def test_validate_context_allows_records_and_names_the_index():
    ctx = [{"type": "meta"}, {"type": 2, "content": []}]
    assert validate_context(ctx) is ctx
    assert is_context([])
    with pytest.raises(TypeError, match=r"context\[1\]\.content"):
        validate_context([{"type": 1, "content": []}, {"type": 2}])
    with pytest.raises(TypeError, match="expected a list"):
        validate_context({"type": 2, "content": []})
    assert not is_context([{"type": 2}])
    assert not is_context("[]")


def test_has_content():
    assert has_content({"type": 2, "content": [{"type": "text", "text": "x"}]})
    assert not has_content({"type": 2, "content": []})
    assert not has_content({"type": 3, "content": [{"type": "text", "text": ""}]})
    assert not has_content({"type": 3, "content": [{"type": "thinking"}]})
    assert not has_content({"type": 3, "content": [{"type": "image"}]})  # reduced to its discriminator
    assert has_content({"type": 3, "content": [{"type": "toolCall", "callId": "c", "name": "f", "arguments": {}}]})
    assert has_content({"type": 2, "content": [{"type": "binary", "content": "AAA="}]})
    assert not has_content(None)


def test_has_error_and_error_text():
    assert has_error({"type": 3, "content": [], "error": "boom"})
    assert error_text({"type": 3, "content": [], "error": "boom"}) == "boom"
    limited = {"type": 3, "content": [], "error": {"message": "rate limited", "retry": 30}}
    assert has_error(limited) and error_text(limited) == "rate limited"
    tool_failure = {"type": 4, "content": [], "callId": "c", "error": True}
    assert not has_error(tool_failure) and error_text(tool_failure) == ""
    assert not has_error({"error": ""})
    assert not has_error({"error": {"message": ""}})
    assert error_text(None) == ""
