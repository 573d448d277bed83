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


def test_one_role_table_both_ways_and_no_role_for_what_is_not_a_message_type():
    from agentctx_widgets.context.types import ROLE_OF, TYPE_OF_ROLE, role_of

    assert dict(ROLE_OF) == {1: "system", 2: "user", 3: "assistant", 4: "tool"}
    assert dict(TYPE_OF_ROLE) == {"system": 1, "user": 2, "assistant": 3, "tool": 4, "developer": 1}
    assert all(type(kind) is int for kind in TYPE_OF_ROLE.values())  # what a message stores, not the enum
    assert [role_of(kind) for kind in (1, 2, 3, 4, MessageType.ASSISTANT)] == ["system", "user", "assistant",
                                                                              "tool", "assistant"]
    # 0 is reserved, a bool is an int to Python but never a type, a record's type is a string
    assert [role_of(kind) for kind in (0, True, False, 5, -1, "checkpoint", None, 3.0)] == [None] * 8
    with pytest.raises(TypeError):
        ROLE_OF[5] = "robot"  # read-only
