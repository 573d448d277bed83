import pytest

from agentctx_widgets.context import (ContentType, MessageType, assistant_message, mimetype_of, system_message,
                                      text_content, user_message)


def test_enums_hold_the_seed_values():
    assert [m.value for m in MessageType] == [0, 1, 2, 3, 4]
    assert MessageType.TOOL_RESULT == 4
    assert {c.value for c in ContentType} == {"text", "image", "binary", "thinking", "toolCall"}
    assert ContentType.TOOL_CALL == "toolCall"
    assert f"{ContentType.TEXT}" == "text"


def test_text_content_converts_with_str():
    assert text_content("hi") == {"type": "text", "text": "hi"}
    assert text_content(42) == {"type": "text", "text": "42"}
    assert type(text_content("x")["type"]) is str


def test_text_content_propagates_conversion_errors():
    class Bad:
        def __str__(self):
            raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        text_content(Bad())


def test_system_and_assistant_messages():
    assert system_message("be brief") == {"type": 1, "content": [{"type": "text", "text": "be brief"}]}
    assert assistant_message() == {"type": 3, "content": []}
    blocks = [{"type": "text", "text": "a"}]
    assert assistant_message(blocks)["content"] is blocks


def test_user_message_text_blocks_and_metadata():
    assert user_message("hello") == {"type": 2, "content": [{"type": "text", "text": "hello"}]}
    blocks = [{"type": "text", "text": "x"}]
    assert user_message(blocks)["content"] is blocks
    assert user_message("q", {"name": "ann"}) == {"type": 2, "content": [{"type": "text", "text": "q"}], "name": "ann"}
    assert user_message("q", {"type": 1})["type"] == 1  # metadata is spread last and may override


def test_user_message_rejects_non_mapping_metadata():
    with pytest.raises(TypeError, match="metadata"):
        user_message("q", 5)


def test_mimetype_of_prefers_mimetype_then_mime():
    assert mimetype_of({"mimetype": "image/png", "mime": "image/gif"}) == "image/png"
    assert mimetype_of({"mimetype": "", "mime": "image/gif"}) == "image/gif"
    assert mimetype_of({"mime": 3}) is None
    assert mimetype_of(None) is None
    assert mimetype_of("image/png") is None
