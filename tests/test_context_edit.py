import pytest

from agentctx_widgets.context import rebuild_message


def test_keeps_recognised_fields_only():
    msg = {
        "type": 3, "id": "resp_123", "model": "gpt-x", "usage": {"inputTokens": 1}, "name": "bot",
        "content": [
            {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}, "draft": "hj"},
            {"type": "thinking", "text": "hm", "signature": "sig=="},
            {"type": "toolCall", "callId": "c1", "name": "f", "arguments": {"a": 1}, "id": "fc_9"},
            {"type": "binary", "mimetype": "image/png", "filename": "x.png", "content": "AA==", "path": "/tmp/x.png"},
            {"type": "custom", "anything": [1]},
        ],
        "error": {"message": "cut", "retry": 5, "code": 429},
    }
    assert rebuild_message(msg) == {
        "type": 3, "name": "bot",
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "thinking", "text": "hm"},
            {"type": "toolCall", "callId": "c1", "name": "f", "arguments": {"a": 1}},
            {"type": "binary", "mimetype": "image/png", "filename": "x.png", "content": "AA=="},
            {"type": "custom", "anything": [1]},
        ],
        "error": {"message": "cut", "retry": 5},
    }


def test_result_is_independent():
    msg = {"type": 4, "callId": "c1", "error": True, "content": [{"type": "toolCall", "callId": "c", "name": "f",
                                                                 "arguments": {"deep": [1]}}]}
    rebuilt = rebuild_message(msg)
    assert rebuilt["callId"] == "c1" and rebuilt["error"] is True
    rebuilt["content"][0]["arguments"]["deep"].append(2)
    assert msg["content"][0]["arguments"] == {"deep": [1]}
    assert rebuilt is not msg


def test_invalid_error_values_are_dropped():
    assert "error" not in rebuild_message({"type": 3, "content": [], "error": {"code": 1}})


def test_invalid_message_raises():
    with pytest.raises(TypeError, match=r"message\.content"):
        rebuild_message({"type": 3})
