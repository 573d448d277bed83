"""The JSON shapes of one Yao request, as the Go structs at yao 5a3f9a6a marshal them.

A hook's return goes through Go's ``encoding/json`` (``hook/create.go:94-103``, ``hook/next.go:57-66``),
so a wrong type is an error in Go's words, ``null`` leaves a field unset and an unknown key is ignored
(we report those keys, since ``{delegat: …}`` is a typo Yao swallows). What the runner hands back
(``CompletionResponse``, ``ToolCallResponse``, ``Response``) keeps the structs' JSON tags and
``omitempty`` rules (``agent/context/types.go:396-491``, ``types_llm.go:123-155``).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..hooks.errors import HookReturnError
from ..hooks.returns import CREATE_FIELDS as SEED_CREATE_FIELDS
from ..hooks.returns import MODEL_OPTION_FIELDS, unknown_keys  # noqa: F401 - the request reads them from here
from ..hooks.returns import go_decode, go_type_error
from ..models.openai_shapes import OPENAI_USAGE, arguments_of

CREATE_FIELDS: dict[str, str] = {
    **{key: kind for key, kind in SEED_CREATE_FIELDS.items() if key != "assistant_id"},
    "mcp_servers": "[]context.MCPServerConfig",
    "prompt_preset": "string",
    "disable_global_prompts": "bool",
    "uses": "context.Uses",
    "force_uses": "bool",
    "search": "interface {}",
    "delegate": "context.DelegateConfig",
}
"""HookCreateResponse's JSON fields and Go types today (``types.go:411-453``): afab9c2's (the seed's,
``hooks/returns.py``) and seven more. No ``assistant_id``: the assistant id "cannot be overridden - it's
set at initialization and immutable" (``create.go:45``)."""

NEXT_FIELDS: dict[str, str] = {
    "delegate": "context.DelegateConfig",
    "data": "interface {}",
    "metadata": "map[string]interface {}",
}
"""NextHookResponse's JSON fields (``types.go:474-484``)."""


def as_json(value: Any, hook: str) -> Any:
    """``value`` after the JSON round trip Yao's bridge gives it (``json.Marshal`` of the JS value)."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError as error:
        raise HookReturnError(f"failed to marshal {hook} hook result: {error}", hook=hook) from None


def decode(value: Any, hook: str, struct: str, fields: dict[str, str]) -> dict | None:
    """``value`` decoded into ``struct`` as Go would (``hooks.returns.go_type_error``): ``None`` for
    null/undefined, else a dict of the fields it set; a mistyped field raises HookReturnError in Go's
    words."""
    if value is None:
        return None
    problem = go_type_error(value, struct, fields)
    if problem is not None:
        raise HookReturnError(problem[0], hook=hook)
    return go_decode(value, fields)


def usage_info(usage: dict | None) -> dict | None:
    """The kit's usage as Yao's ``message.UsageInfo`` (``output/message/types.go:296-304``)."""
    if usage is None:
        return None
    return {alias: int(usage.get(key) or 0) for alias, key in OPENAI_USAGE.items()}


_FINISH = {"toolUse": "tool_calls", "tool_use": "tool_calls", "tool_calls": "tool_calls", "length": "length",
           "maxTokens": "length", "max_tokens": "length", "stop": "stop", "end_turn": "stop", "endTurn": "stop"}


def completion_response(response: dict, *, id: str = "", model: str = "", created: int = 0,
                        stop_reason: str | None = None) -> dict:
    """A ``CompletionResponse`` (``types_llm.go:123-155``) from an OpenAI-like response (the runner's, or
    ``ctx.llm``'s): ``id``/``object``/``created``/``model``/``role``/``finish_reason`` always, the rest
    when set."""
    calls = response.get("tool_calls") or []
    finish = _FINISH.get(stop_reason or "", "tool_calls" if calls else "stop")
    completion: dict[str, Any] = {"id": id, "object": "chat.completion", "created": created, "model": model,
                                  "role": "assistant"}
    if response.get("content"):
        completion["content"] = response["content"]
    if calls:
        completion["tool_calls"] = calls
    if response.get("thinking"):
        completion["reasoning_content"] = response["thinking"]
    completion["finish_reason"] = finish
    usage = usage_info(response.get("usage"))
    if usage is not None:
        completion["usage"] = usage
    return completion


def tool_call_response(call: dict, *, result: Any = None, error: str = "") -> dict:
    """A ``ToolCallResponse`` (``types.go:464-471``): ``server`` is empty (our tools are not MCP servers)."""
    answer: dict[str, Any] = {"toolcall_id": call["id"], "server": "", "tool": call["function"]["name"]}
    arguments = call["function"].get("arguments")
    if arguments not in (None, ""):
        answer["arguments"] = arguments
    if result is not None:
        answer["result"] = result
    if error:
        answer["error"] = error
    return answer


def tool_message_text(tool: dict) -> str:
    """The tool-role content Yao's loop feeds back: ``Error: …`` or the result's JSON (``loop.go:144-151``)."""
    if tool.get("error"):
        return f"Error: {tool['error']}"
    if tool.get("result") is not None:
        return orjson.dumps(tool["result"]).decode()
    return ""


def call_arguments(call: dict) -> Any:
    """A call's ``arguments`` parsed (``models.openai_shapes.arguments_of``)."""
    return arguments_of(call["function"].get("arguments"))


def tool_result_message(tool: dict) -> dict:
    """The tool-role message Yao feeds back (``loop.go:143-158``), as a Context tool result."""
    message: dict[str, Any] = {"type": 4, "callId": tool["toolcall_id"], "name": tool["tool"],
                               "content": [{"type": "text", "text": tool_message_text(tool)}]}
    if tool.get("error"):
        message["error"] = True
    return message


def fallback_markdown(full_view: list[dict], tools: list[dict]) -> str:
    """``buildLoopFallbackMarkdown`` (``loop.go:221-270``), in our words where Yao's are prose."""
    def text(message: dict) -> str:
        content = message.get("content")
        if isinstance(content, list):
            return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        return content if isinstance(content, str) else ""

    parts = ["## Assistant Context\n\n"]
    parts += [f"{text(m)}\n\n" for m in full_view if m.get("role") == "system" and text(m)]
    parts.append("## Conversation\n\n")
    names = {"user": "User", "assistant": "Assistant"}
    parts += [f"**{names[m['role']]}**: {text(m)}\n\n" for m in full_view if m.get("role") in names and text(m)]
    parts.append("## Tool Results\n\n")
    for tool in tools:
        name = f"{tool['server']}.{tool['tool']}" if tool.get("server") else tool["tool"]
        body = f"Error: {tool['error']}\n\n" if tool.get("error") else \
            f"```json\n{orjson.dumps(tool.get('result')).decode()}\n```\n\n"
        parts.append(f"### {name}\n{body}")
    parts.append("---\nPlease answer the user's question based on the above context and tool results.\n"
                 "Respond in the same language as the user.\n")
    return "".join(parts)
