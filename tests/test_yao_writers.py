"""Today's Yao writers (yao/writers.py) on the seed's routing, chunking and converter table.

Expected values are written from YaoApp/yao 5a3f9a6a's agent/output/adapters/openai/converter.go
(convertToolCall 93-116, convertToLink 253-278, generateViewLink 281-305, getLinkTemplate's fallback
308-315) and writer.go (role 78-88, [DONE] 189-207).
"""

from __future__ import annotations

import pytest

from agentctx_widgets.output.adapters import CUI_ACCEPTS, CuiAdapter, StandardAdapter, adapter_for, for_accept
from agentctx_widgets.output.message_types import YAO_BASE_URL, StandardConfig
from agentctx_widgets.yao import writers
from agentctx_widgets.yao.writers import CuiWriter, OpenAIWriter, convert, writer_for

YAO = StandardConfig(base_url=YAO_BASE_URL)


def bodies(message: dict, config: StandardConfig = YAO) -> list[dict]:
    return [emit.body for emit in convert(message, config)]


@pytest.mark.parametrize("accept", ["cui-web", "cui-native", "cui-desktop", "standard", "", "CUI-WEB", "cui"])
def test_one_routing_for_both_apis(accept: str) -> None:
    cui = accept in ("cui-web", "cui-native", "cui-desktop")
    assert isinstance(adapter_for(accept), CuiAdapter if cui else StandardAdapter)
    assert isinstance(writer_for(accept), CuiWriter if cui else OpenAIWriter)
    assert for_accept(accept, lambda: "c", lambda **o: o, x=1) == ("c" if cui else {"x": 1})


def test_the_constants_are_the_seeds() -> None:
    assert writers.CUI_ACCEPTS is CUI_ACCEPTS and writers.DONE == "[DONE]"
    assert writer_for("cui-web", created=1).__class__ is CuiWriter  # options go to the standard writer only


@pytest.mark.parametrize(("props", "calls"), [
    ({"id": "c1", "name": "n", "arguments": "{}"}, [{"id": "c1", "type": "function"}]),
    ({"id": "c1", "function": {"name": "n"}}, [{"id": "c1", "type": "function", "function": {"name": "n"}}]),
    ({"id": "c1", "function": "x", "name": "n"}, [{"id": "c1", "type": "function"}]),
    ({"name": "n"}, []),
    (None, []),
])
def test_tool_call_keeps_only_id_and_function(props: dict | None, calls: list) -> None:
    message = {"type": "tool_call", "message_id": "M2", **({"props": props} if props is not None else {})}
    assert bodies(message) == [{"tool_calls": calls}]


@pytest.mark.parametrize(("kind", "props", "text"), [
    ("file", {"url": "u"}, "📎 [Download File](u)"),
    ("audio", {"url": "u"}, "🔊 [Play Audio](u)"),
    ("video", {}, f"🎬 [Watch Video]({YAO_BASE_URL}/agent/view/video/M3)"),
    ("button", {"text": "Go"}, f"🔘 [Go]({YAO_BASE_URL}/agent/view/button/M3)"),
    ("button", {"url": "u", "text": 3}, "🔘 [Button](u)"),
    ("user_input", {"content": "x"}, f"📎 [View {YAO_BASE_URL}/agent/view/user_input/M3](user_input)"),
    ("my_widget", {"url": "http://x"}, "📎 [View http://x](my_widget)"),
    ("plan", {}, f"📎 [View {YAO_BASE_URL}/agent/view/plan/M3](plan)"),
])
def test_links_use_the_template_or_yaos_fallback(kind: str, props: dict, text: str) -> None:
    assert bodies({"type": kind, "message_id": "M3", "props": props}) == [{"content": text}]


@pytest.mark.parametrize("kind", ["video", "button", "user_input", "my_widget", "execute"])
def test_no_base_url_no_view_link(kind: str) -> None:
    assert bodies({"type": kind, "message_id": "M3", "props": {}}, StandardConfig()) == []


def test_chunks_take_the_message_id_and_role_on_the_first_text_chunk_only() -> None:
    writer = OpenAIWriter(created=7)
    writer.write([{"type": "error", "props": {"message": "bad"}},
                  {"type": "loading", "message_id": "M0", "props": {"message": "..."}},
                  {"type": "thinking", "message_id": "M1", "props": {"content": "a"}},
                  {"type": "text", "message_id": "M2", "props": {"content": "b"}}])
    writer.close()
    writer.close()
    error, loading, thinking, text, done = writer.chunks
    assert error == {"error": {"code": "server_error", "message": "bad", "type": "server_error"}}
    assert [c["id"] for c in (loading, thinking, text)] == ["M0", "M1", "M2"]
    assert [c["choices"][0]["delta"].get("role") for c in (loading, thinking, text)] == [None, "assistant", None]
    assert list(thinking) == sorted(thinking) and thinking["created"] == 7  # a Go map: keys sorted
    assert done == "[DONE]" and writer.text.endswith("data: [DONE]\n\n") and writer.text.count("[DONE]") == 1
