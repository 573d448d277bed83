"""OpenAI Chat Completions — and every server that speaks it (Ollama, vLLM, llama.cpp, LM Studio,
Gemini's OpenAI endpoint) through ``base_url``.

Two pure halves and a thin class:

- :func:`build_chat_request` — Context messages → the ``POST /chat/completions`` body, as the API
  reference documents it: system/user/assistant/tool roles, image and file input parts, assistant
  ``tool_calls`` with JSON-string arguments, one ``tool`` message per tool result, streaming with
  ``stream_options.include_usage`` so the last chunk carries the usage.
- :class:`ChatTranslator` — ``chat.completion.chunk`` dicts → normalised events. ``reasoning_content``
  (DeepSeek, vLLM, llama.cpp) or ``reasoning`` (Ollama, OpenRouter) deltas become a thinking block;
  ``content`` a text block; ``refusal`` a text block of its own (the refusal is what the model said);
  ``tool_calls`` deltas, keyed by their ``index`` and split across any number of chunks, become
  ``tool_call_*`` events (Gemini's endpoint sends whole calls without ``index``: keyed by ``id``).
  ``done`` carries the usage chunk, llama-server's ``timings`` as ``serverTimings``, and ``stopReason`` (``finish_reason`` as sent: Gemini says
  ``"stop"`` after tool calls).
- :class:`OpenAIChatModel` — the SDK connector (see :mod:`.connector`). Options the SDK's
  ``create`` does not name (vLLM's ``top_k``, ``chat_template_kwargs``) are sent through its
  ``extra_body``, so they reach the server as body fields.

Thinking blocks are not sent back: Chat Completions has no input field for them (DeepSeek documents
that ``reasoning_content`` must not be sent back).
"""

from __future__ import annotations

from typing import Any

from ..context import MessageType
from .connector import Provider, SdkModel, Translator
from .convert import (RequestError, blocks, data_url, given, image_source, is_image, is_native_tool,
                      joined_text, media_type, not_input, numbered, only_text, split_options,
                      tool_result_text, tool_schema)
from .compat import apply_profile
from .openai_shapes import tool_call_of

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
_ROLE = {MessageType.SYSTEM: "system", MessageType.USER: "user"}


def build_chat_request(messages: list[dict], *, model: str, options: dict | None = None) -> dict:
    """The Chat Completions request body for ``messages`` (pure)."""
    tools, rest = split_options(options, "build_chat_request", messages)
    compat = rest.pop("compat", None)  # a server profile (models/compat.py), not a body field
    body: dict[str, Any] = {"model": model, "messages": [m for i, msg in numbered(messages) for m in _messages(i, msg)],
                            "stream": True}
    stream_options = rest.pop("stream_options", None) or {}
    body["stream_options"] = {"include_usage": True, **stream_options}
    if tools:
        body["tools"] = [_tool(tool) for tool in tools]
    body.update(rest)
    return apply_profile(compat, body)


def _messages(index: int, message: dict) -> list[dict]:
    kind = message["type"]
    at = f"messages[{index}]"
    if kind == MessageType.TOOL_RESULT:
        call_id = given(message.get("callId"), f"{at}.callId: a tool result needs the id of the call it "
                                               "answers")
        return [{"role": "tool", "tool_call_id": call_id, "content": tool_result_text(message)}]
    if kind == MessageType.ASSISTANT:
        # content is always a string, "" when the message holds only tool calls: the spec allows null,
        # but llama-cpp-python's server refuses null (pydantic: "Input should be a valid string") and a
        # missing key (its chat templates read content); every server in docs/servers.md takes "".
        out: dict[str, Any] = {"role": "assistant", "content": joined_text(message)}
        calls = [tool_call_of(block) for block in blocks(message, "toolCall")]
        if calls:
            out["tool_calls"] = calls
        return [out]
    role = _ROLE[kind]
    if only_text(message):
        return [{"role": role, "content": joined_text(message)}]
    if kind == MessageType.SYSTEM:
        raise RequestError(f"{at}.content: a system message can hold only text blocks")
    return [{"role": role, "content": [_part(block, f"{at}.content[{n}]") for n, block in enumerate(message["content"])]}]


def _part(block: dict, at: str) -> dict:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if is_image(block):
        _, url = image_source(block, at)
        image: dict[str, Any] = {"url": url}
        if isinstance(block.get("detail"), str):
            image["detail"] = block["detail"]
        return {"type": "image_url", "image_url": image}
    if kind == "binary":
        mime = media_type(block)
        encoded = data_url(block)
        if encoded is None:
            raise RequestError(f"{at}.content: a binary block needs base64 'content'")
        if mime in _AUDIO_FORMATS:
            return {"type": "input_audio", "input_audio": {"data": block["content"], "format": _AUDIO_FORMATS[mime]}}
        return {"type": "file", "file": {"filename": str(block.get("filename") or "file"), "file_data": encoded}}
    raise not_input(kind, at, "Chat Completions has no input part")


def _tool(tool: dict) -> dict:
    if is_native_tool(tool):
        return tool
    function: dict[str, Any] = {"name": tool["name"], "parameters": tool_schema(tool)}
    if tool.get("description"):
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


class ChatTranslator(Translator):
    """``chat.completion.chunk`` dicts → normalised events (pure; one instance per response)."""

    provider = "openai"
    cut_short = "without a finish_reason"

    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[Any, dict] = {}  # tool-call key -> {"id", "given", "name", "buffer", "started"}
        self._by_index: dict[int, Any] = {}  # a delta's tool_calls[].index -> the call it continues
        self._by_id: dict[str, Any] = {}
        self._last_call: Any = None
        self._usage: Any = None
        self._timings: dict | None = None
        self._finish: str | None = None

    def feed(self, chunk: dict) -> list[dict]:
        if self._ended:
            return []
        if isinstance(chunk.get("error"), dict):  # an OpenAI-compatible server's error inside the stream
            return self._stream_error(chunk)
        events: list[dict] = []
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):  # llama-server's own figures (result_timings::to_json)
            self._timings = chunk["timings"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # n > 1: only the first choice is assembled
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                events += self._delta("thinking", "thinking", reasoning)
            if isinstance(delta.get("content"), str) and delta["content"]:
                events += self._delta("text", "text", delta["content"])
            if isinstance(delta.get("refusal"), str) and delta["refusal"]:
                events += self._delta("refusal", "text", delta["refusal"])
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    events += self._tool_call(call)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
        return events

    def finish(self) -> list[dict]:
        """End of the stream: close the open blocks, then ``done`` (or ``error`` when it was cut short)."""
        if self._ended or self._finish is None:
            return super().finish()
        return self._done(stopReason=self._finish, usage=self._usage, serverTimings=self._timings)

    def _call_key(self, call: dict) -> Any:
        """Which call a ``tool_calls`` delta continues. OpenAI keys deltas by ``index`` and sends the
        ``id`` on the first only. Gemini's OpenAI endpoint sends no ``index`` (each call whole, with its
        ``id``); a delta with neither continues the latest call. A new ``id`` at a known ``index`` is a new
        call (proxies that number every call 0), never more arguments for the old one."""
        index, given = call.get("index"), call.get("id")
        index = index if isinstance(index, int) and not isinstance(index, bool) else None
        given = given if isinstance(given, str) and given else None
        key = None
        if index is not None:
            key = self._by_index.get(index)
            if key is not None and given and self._calls[key]["given"] not in (None, given):
                key = None
        elif given:
            key = self._by_id.get(given)
        elif self._last_call is not None:
            key = self._last_call
        if key is None:
            key = ("tool", len(self._calls))
            self._calls[key] = {"id": None, "given": None, "name": "", "buffer": "", "started": False}
        if index is not None:
            self._by_index[index] = key
        if given:
            self._by_id.setdefault(given, key)
        self._last_call = key
        return key

    def _tool_call(self, call: dict) -> list[dict]:
        key = self._call_key(call)
        state = self._calls[key]
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        if isinstance(call.get("id"), str) and call["id"] and not state["given"]:
            state["given"] = call["id"]
        if isinstance(function.get("name"), str) and function["name"] and not state["started"]:
            state["name"] = function["name"]
        arguments = function.get("arguments")
        events: list[dict] = []
        if not state["started"] and state["name"]:
            state["started"] = True
            events = self._start(key, "tool_call")
            state["id"] = state["given"] or f"call_{events[0]['contentIndex']}"
            events[0].update(callId=state["id"], name=state["name"])
            if state["buffer"]:
                events += self._delta(key, "tool_call", state["buffer"])
        if isinstance(arguments, str) and arguments:
            if state["started"]:
                events += self._delta(key, "tool_call", arguments)
            else:
                state["buffer"] += arguments
        return events


CHAT = Provider(
    name="openai",
    sdk="openai",
    extra="openai",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    client_class="AsyncOpenAI",
    build_request=build_chat_request,
    translator=ChatTranslator,
    endpoint="chat.completions",
)


class OpenAIChatModel(SdkModel):
    """OpenAI Chat Completions streaming, or any OpenAI-compatible server through ``base_url``.

    ``OpenAIChatModel("gpt-4.1-mini")`` reads ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``;
    ``OpenAIChatModel("llama3.2", base_url="http://localhost:11434/v1", api_key="ollama")`` talks to
    Ollama. ``options`` (``temperature=0``, ``max_completion_tokens=…``, ``reasoning_effort=…``) go into
    every request.
    """

    provider = CHAT
