"""Anthropic Messages (``POST /v1/messages``, streaming).

Two pure halves and a thin class:

- :func:`build_anthropic_request` — Context messages → the Messages request body, as the API
  reference documents it: ``system`` at the top level, ``user``/``assistant`` turns that alternate
  (consecutive messages of one role are merged, since the API requires alternation), tool results as
  ``tool_result`` blocks inside a user turn (before any text, as the API requires), images and PDFs as
  base64 or URL sources, plain-text files as text documents, and the assistant's signed thinking sent
  back (Anthropic rejects a tool round trip whose thinking lost its signature).
- :class:`AnthropicTranslator` — the SDK's raw stream events as dicts → normalised events. Usage is
  cumulative in this API (``message_start`` then ``message_delta``), so later counts replace earlier
  ones; the names stay Anthropic's (``usage_normalize`` reads them).
- :class:`AnthropicModel` — the SDK connector (see :mod:`.connector`).

Server tools (``server_tool_use``, ``web_search_tool_result``, …) run at Anthropic: their blocks are not
tool calls for the runner to execute, so the translator leaves them out.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import orjson

from ..context import MessageType, content_indexer
from .connector import Provider, SdkModel
from .convert import (RequestError, is_image, is_native_tool, joined_text, media_type, numbered,
                      split_options, tool_schema)
from .errors import error_event

PROVIDER = "anthropic"
_DATA_URL = re.compile(r"^data:([^;,]+);base64,(.*)$", re.DOTALL)
_ROLE = {MessageType.USER: "user", MessageType.TOOL_RESULT: "user", MessageType.ASSISTANT: "assistant"}


# -- the request -------------------------------------------------------------------------------

def build_anthropic_request(messages: list[dict], *, model: str, options: dict | None = None) -> dict:
    """The Messages API request body for ``messages`` (pure). ``options["max_tokens"]`` is required."""
    tools, rest = split_options(options, "build_anthropic_request", messages)
    max_tokens = rest.pop("max_tokens", None)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise RequestError("build_anthropic_request: options['max_tokens'] must be a positive int "
                           f"(the Messages API requires it), got {max_tokens!r}")
    system: list[str] = []
    turns: list[dict] = []
    for index, message in numbered(messages):
        if message["type"] == MessageType.SYSTEM:
            system.append(_system_text(index, message))
            continue
        role = _ROLE[message["type"]]
        content = _content(index, message)
        if not content:
            continue  # the API refuses empty turns (an assistant turn of unsigned thinking, say)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(content)
        else:
            turns.append({"role": role, "content": content})
    for turn in turns:
        if turn["role"] == "user":  # tool_result blocks must come first in their user turn
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    text = "\n\n".join(part for part in system if part)
    if text:
        if "system" in rest:
            raise RequestError("build_anthropic_request: options['system'] and system messages both give the "
                               "system prompt; use one")
        body["system"] = text
    body["messages"] = turns
    body["stream"] = True
    if tools:
        body["tools"] = [_tool(tool) for tool in tools]
    body.update(rest)
    return body


def _system_text(index: int, message: dict) -> str:
    for position, block in enumerate(message["content"]):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise RequestError(f"messages[{index}].content[{position}]: a system message can hold only text blocks")
    return joined_text(message)


def _content(index: int, message: dict) -> list[dict]:
    at = f"messages[{index}]"
    kind = message["type"]
    if kind == MessageType.TOOL_RESULT:
        return [_tool_result(at, message)]
    convert = _assistant_block if kind == MessageType.ASSISTANT else _user_block
    out = []
    for position, block in enumerate(message["content"]):
        if not isinstance(block, dict):
            raise RequestError(f"{at}.content[{position}]: expected a content block, got {block!r:.80}")
        converted = convert(block, f"{at}.content[{position}]")
        if converted is not None:
            out.append(converted)
    return out


def _tool_result(at: str, message: dict) -> dict:
    call_id = message.get("callId")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{at}.callId: a tool result needs the id of the tool_use it answers")
    content = []
    for position, block in enumerate(message["content"]):
        if not isinstance(block, dict):
            raise RequestError(f"{at}.content[{position}]: expected a content block, got {block!r:.80}")
        converted = _user_block(block, f"{at}.content[{position}]", in_result=True)
        if converted is not None:
            content.append(converted)
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
    if content:
        result["content"] = content
    if message.get("error") is True:
        result["is_error"] = True
    return result


def _user_block(block: dict, at: str, *, in_result: bool = False) -> dict | None:
    kind = block.get("type")
    if kind == "text":
        text = str(block.get("text", ""))
        return {"type": "text", "text": text} if text else None  # the API refuses empty text blocks
    if is_image(block):
        return _image(block, at)
    if kind == "binary":
        return _document(block, at, in_result)
    if kind in ("thinking", "toolCall"):
        raise RequestError(f"{at}: a {kind} block belongs in an assistant message")
    raise RequestError(f"{at}.type: the Messages API has no input block for a {kind!r} block")


def _image(block: dict, at: str) -> dict:
    url = block.get("url")
    if isinstance(url, str) and url:
        encoded = _DATA_URL.match(url)
        if encoded:  # a URL source must be fetchable; a data: URL goes as base64
            return {"type": "image", "source": {"type": "base64", "media_type": encoded[1], "data": encoded[2]}}
        if url.startswith("data:"):
            raise RequestError(f"{at}.url: a data: URL image must be base64-encoded")
        return {"type": "image", "source": {"type": "url", "url": url}}
    content = block.get("content")
    if not isinstance(content, str) or not content:
        raise RequestError(f"{at}: an image block needs a 'url' or base64 'content'")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type(block, "image/png"), "data": content}}


def _document(block: dict, at: str, in_result: bool) -> dict:
    mime = media_type(block).split(";")[0].strip().lower()
    content = block.get("content")
    if not isinstance(content, str) or not content:
        raise RequestError(f"{at}.content: a binary block needs base64 'content'")
    if mime == "application/pdf":
        document: dict[str, Any] = {"type": "document",
                                    "source": {"type": "base64", "media_type": "application/pdf", "data": content}}
    elif mime.startswith("text/"):
        try:
            text = base64.b64decode(content, validate=True).decode("utf-8")
        except (binascii.Error, ValueError) as error:
            raise RequestError(f"{at}.content: a {mime} binary must be base64 of UTF-8 text ({error})") from error
        document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    elif in_result:  # a tool's output the API cannot take still tells the model something came back
        return {"type": "text", "text": f"[binary: {block.get('filename') or mime}]"}
    else:
        raise RequestError(f"{at}: the Messages API takes images, PDFs and plain text, not {mime!r}")
    if isinstance(block.get("filename"), str) and block["filename"]:
        document["title"] = block["filename"]
    return document


def _assistant_block(block: dict, at: str) -> dict | None:
    kind = block.get("type")
    if kind == "text":
        text = str(block.get("text", ""))
        return {"type": "text", "text": text} if text else None
    if kind == "thinking":
        redacted, signature = block.get("redacted"), block.get("signature")
        if isinstance(redacted, str) and redacted:
            return {"type": "redacted_thinking", "data": redacted}
        if isinstance(signature, str) and signature:
            return {"type": "thinking", "thinking": str(block.get("text", "")), "signature": signature}
        return None  # unsigned thinking (another provider's, or edited) cannot be sent back
    if kind == "toolCall":
        return _tool_use(block, at)
    raise RequestError(f"{at}.type: the Messages API takes no {kind!r} block in an assistant message")


def _tool_use(block: dict, at: str) -> dict:
    call_id, name = block.get("callId"), block.get("name")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{at}.callId: a tool call needs its id")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{at}.name: a tool call needs the tool's name")
    arguments = block.get("arguments")
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        arguments = {}
    elif isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            raise RequestError(f"{at}.arguments: tool_use input must be a JSON object; these arguments do not "
                               f"parse: {block['arguments']!r:.80}") from None
    if not isinstance(arguments, dict):
        raise RequestError(f"{at}.arguments: tool_use input must be a JSON object, got {type(arguments).__name__}")
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def _tool(tool: dict) -> dict:
    if is_native_tool(tool):
        return tool
    out: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        out["description"] = tool["description"]
    out["input_schema"] = tool_schema(tool)
    return out


# -- the stream --------------------------------------------------------------------------------

class AnthropicTranslator:
    """Raw Messages stream events (dicts) → normalised events (pure; one instance per response)."""

    def __init__(self) -> None:
        self._indexes = content_indexer()
        self._open: dict[int, dict] = {}  # Anthropic index -> {"kind", "index", ...}, in start order
        self._skipped: set[int] = set()  # server-tool blocks, run by Anthropic
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None
        self._ended = False

    def feed(self, event: dict) -> list[dict]:
        if self._ended or not isinstance(event, dict):
            return []
        handler = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
            "error": self._error,
        }.get(event.get("type"))
        return handler(event) if handler else []  # ping, and types added later

    def finish(self) -> list[dict]:
        """End of the stream: without ``message_stop`` the response is incomplete."""
        if self._ended:
            return []
        self._ended = True
        events = self._close_all()
        events.append({"type": "error", "error": {
            "message": "anthropic: the stream ended before message_stop (the response is incomplete)",
            "code": "INCOMPLETE", "provider": PROVIDER}})
        return events

    # -- message events -------------------------------------------------------------------------
    def _merge_usage(self, usage: Any) -> None:
        """Cumulative counts: a later value replaces the earlier one, field by field."""
        if isinstance(usage, dict):
            self._usage.update({key: value for key, value in usage.items() if value is not None})

    def _message_start(self, event: dict) -> list[dict]:
        message = event.get("message")
        if isinstance(message, dict):
            self._merge_usage(message.get("usage"))
        return []

    def _message_delta(self, event: dict) -> list[dict]:
        delta = event.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            self._stop_reason = delta["stop_reason"]
        self._merge_usage(event.get("usage"))
        return []

    def _message_stop(self, event: dict) -> list[dict]:
        self._ended = True
        events = self._close_all()
        done: dict[str, Any] = {"type": "done"}
        if self._stop_reason is not None:
            done["stopReason"] = self._stop_reason
        if self._usage:
            done["usage"] = dict(self._usage)
        events.append(done)
        return events

    def _error(self, event: dict) -> list[dict]:
        self._ended = True
        return [error_event(event, provider=PROVIDER)]

    def _bad(self, what: str) -> list[dict]:
        self._ended = True
        return [{"type": "error", "error": {"message": f"anthropic: {what}", "code": "BAD_STREAM", "provider": PROVIDER}}]

    # -- block events ---------------------------------------------------------------------------
    def _block_start(self, event: dict) -> list[dict]:
        at, block = event.get("index"), event.get("content_block")
        if not isinstance(at, int) or not isinstance(block, dict):
            return self._bad(f"content_block_start without an index and a content_block: {event!r:.120}")
        if at in self._open or at in self._skipped:
            return []
        kind = block.get("type")
        if kind == "text":
            state = self._start(at, "text")
            events = [{"type": "text_start", "contentIndex": state["index"]}]
            if isinstance(block.get("text"), str) and block["text"]:
                events.append({"type": "text_delta", "contentIndex": state["index"], "delta": block["text"]})
            return events
        if kind in ("thinking", "redacted_thinking"):
            state = self._start(at, "thinking")
            state["signature"] = block.get("signature") if isinstance(block.get("signature"), str) else ""
            if kind == "redacted_thinking":
                state["redacted"] = str(block.get("data", ""))
            events = [{"type": "thinking_start", "contentIndex": state["index"]}]
            if isinstance(block.get("thinking"), str) and block["thinking"]:
                events.append({"type": "thinking_delta", "contentIndex": state["index"], "delta": block["thinking"]})
            return events
        if kind == "tool_use":
            state = self._start(at, "tool_call")
            state["input"], state["streamed"] = block.get("input"), False
            return [{"type": "tool_call_start", "contentIndex": state["index"],
                     "callId": str(block.get("id") or f"toolu_{state['index']}"), "name": str(block.get("name", ""))}]
        self._skipped.add(at)
        return []

    def _start(self, at: int, kind: str) -> dict:
        state = self._open[at] = {"kind": kind, "index": self._indexes.of(("block", at))}
        return state

    def _block_delta(self, event: dict) -> list[dict]:
        at, delta = event.get("index"), event.get("delta")
        if at in self._skipped:
            return []
        state = self._open.get(at)  # type: ignore[arg-type]
        if state is None or not isinstance(delta, dict):
            return self._bad(f"content_block_delta for block {at!r}, which is not open")
        kind, index = delta.get("type"), state["index"]
        if kind == "text_delta" and state["kind"] == "text" and isinstance(delta.get("text"), str):
            return [{"type": "text_delta", "contentIndex": index, "delta": delta["text"]}] if delta["text"] else []
        if kind == "thinking_delta" and state["kind"] == "thinking" and isinstance(delta.get("thinking"), str):
            return [{"type": "thinking_delta", "contentIndex": index, "delta": delta["thinking"]}] if delta["thinking"] else []
        if kind == "signature_delta" and state["kind"] == "thinking" and isinstance(delta.get("signature"), str):
            state["signature"] += delta["signature"]
            return []
        if kind == "input_json_delta" and state["kind"] == "tool_call" and isinstance(delta.get("partial_json"), str):
            if not delta["partial_json"]:
                return []
            state["streamed"] = True
            return [{"type": "tool_call_delta", "contentIndex": index, "delta": delta["partial_json"]}]
        return []  # citations_delta and other additions carry nothing the Context keeps

    def _block_stop(self, event: dict) -> list[dict]:
        state = self._open.pop(event.get("index"), None)  # type: ignore[arg-type]
        return [] if state is None else [_end(state)]

    def _close_all(self) -> list[dict]:
        events = [_end(state) for state in self._open.values()]
        self._open.clear()
        return events


def _end(state: dict) -> dict:
    event: dict[str, Any] = {"type": f"{state['kind']}_end", "contentIndex": state["index"]}
    if state["kind"] == "thinking":
        if state.get("signature"):
            event["signature"] = state["signature"]
        if "redacted" in state:
            event["redacted"] = state["redacted"]
    elif state["kind"] == "tool_call" and not state["streamed"] and isinstance(state["input"], dict) and state["input"]:
        event["arguments"] = state["input"]  # input given whole at the start, with no deltas
    return event


# -- the SDK -----------------------------------------------------------------------------------

ANTHROPIC = Provider(
    name=PROVIDER,
    sdk="anthropic",
    extra="anthropic",
    key_env="ANTHROPIC_API_KEY",
    base_url_env="ANTHROPIC_BASE_URL",
    client_class="AsyncAnthropic",
    build_request=build_anthropic_request,
    translator=AnthropicTranslator,
    endpoint="messages",
)


class AnthropicModel(SdkModel):
    """Anthropic Messages streaming.

    ``AnthropicModel("claude-sonnet-4-5")`` reads ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL``.
    ``max_tokens`` is required by the API, hence a default; other options (``temperature=0``,
    ``thinking={"type": "enabled", "budget_tokens": 2048}``, ``tool_choice=…``) go into every request.
    """

    provider = ANTHROPIC

    def __init__(self, model: str, *, max_tokens: int = 4096, **kwargs: Any) -> None:
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError(f"AnthropicModel(max_tokens): expected a positive int, got {max_tokens!r}")
        super().__init__(model, max_tokens=max_tokens, **kwargs)
