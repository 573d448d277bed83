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
from collections.abc import Callable, Hashable
from typing import Any

import orjson

from ..context import MessageType
from .connector import Provider, SdkModel, Translator
from .convert import (RequestError, given, is_image, is_native_tool, joined_text, media_type, not_input,
                      numbered, split_options, tool_schema)

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
    return _converted(at, message, _assistant_block if kind == MessageType.ASSISTANT else _user_block)


def _converted(at: str, message: dict, convert: Callable[[dict, str], dict | None]) -> list[dict]:
    """The message's blocks converted, those with nothing to send (``None``) left out."""
    converted = (convert(block, f"{at}.content[{n}]") for n, block in enumerate(message["content"]))
    return [block for block in converted if block is not None]


def _tool_result(at: str, message: dict) -> dict:
    call_id = given(message.get("callId"), f"{at}.callId: a tool result needs the id of the tool_use it "
                                           "answers")
    content = _converted(at, message, lambda block, place: _user_block(block, place, in_result=True))
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
    raise not_input(kind, at, "the Messages API has no input block")


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
    call_id = given(block.get("callId"), f"{at}.callId: a tool call needs its id")
    name = given(block.get("name"), f"{at}.name: a tool call needs the tool's name")
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

class AnthropicTranslator(Translator):
    """Raw Messages stream events (dicts) → normalised events (pure; one instance per response)."""

    provider = PROVIDER
    cut_short = "before message_stop"

    def __init__(self) -> None:
        super().__init__()  # blocks keyed by Anthropic's index
        self._state: dict[Hashable, dict] = {}  # a thinking or tool_use block's own fields
        self._skipped: set[int] = set()  # server-tool blocks, run by Anthropic
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None

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
        return self._done(stopReason=self._stop_reason, usage=dict(self._usage) or None)

    def _bad(self, what: str) -> list[dict]:
        return self._failed(f"anthropic: {what}", "BAD_STREAM")

    # -- block events ---------------------------------------------------------------------------
    def _block_start(self, event: dict) -> list[dict]:
        at, block = event.get("index"), event.get("content_block")
        if not isinstance(at, int) or not isinstance(block, dict):
            return self._bad(f"content_block_start without an index and a content_block: {event!r:.120}")
        if at in self._open or at in self._skipped:
            return []
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            return self._delta(at, kind, text) if isinstance(text, str) and text else self._start(at, kind)
        if kind in ("thinking", "redacted_thinking"):
            signature = block.get("signature")
            state = self._state[at] = {"signature": signature if isinstance(signature, str) else ""}
            if kind == "redacted_thinking":
                state["redacted"] = str(block.get("data", ""))
            thinking = block.get("thinking")
            return (self._delta(at, "thinking", thinking) if isinstance(thinking, str) and thinking
                    else self._start(at, "thinking"))
        if kind == "tool_use":
            self._state[at] = {"input": block.get("input")}  # the arguments, unless deltas follow
            events = self._start(at, "tool_call")
            events[0].update(callId=str(block.get("id") or f"toolu_{events[0]['contentIndex']}"),
                             name=str(block.get("name", "")))
            return events
        self._skipped.add(at)
        return []

    def _block_delta(self, event: dict) -> list[dict]:
        at, delta = event.get("index"), event.get("delta")
        if at in self._skipped:
            return []
        block = self._open.get(at)  # type: ignore[arg-type]
        if block is None or not isinstance(delta, dict):
            return self._bad(f"content_block_delta for block {at!r}, which is not open")
        kind = delta.get("type")
        if kind == "text_delta" and block == "text" and isinstance(delta.get("text"), str):
            return self._delta(at, "text", delta["text"]) if delta["text"] else []
        if kind == "thinking_delta" and block == "thinking" and isinstance(delta.get("thinking"), str):
            return self._delta(at, "thinking", delta["thinking"]) if delta["thinking"] else []
        if kind == "signature_delta" and block == "thinking" and isinstance(delta.get("signature"), str):
            self._state[at]["signature"] += delta["signature"]
            return []
        if kind == "input_json_delta" and block == "tool_call" and isinstance(delta.get("partial_json"), str):
            if not delta["partial_json"]:
                return []
            self._state[at]["input"] = None  # streamed: the deltas are the arguments
            return self._delta(at, "tool_call", delta["partial_json"])
        return []  # citations_delta and other additions carry nothing the Context keeps

    def _block_stop(self, event: dict) -> list[dict]:
        at = event.get("index")
        return self._end(at) if at in self._open else []

    def _end(self, key: Hashable, **fields: Any) -> list[dict]:
        state = self._state.pop(key, {})
        if self._open[key] == "thinking":
            if state.get("signature"):
                fields["signature"] = state["signature"]
            if "redacted" in state:
                fields["redacted"] = state["redacted"]
        elif self._open[key] == "tool_call" and isinstance(state["input"], dict) and state["input"]:
            fields["arguments"] = state["input"]  # input given whole at the start, with no deltas
        return super()._end(key, **fields)

    handlers = {
        "message_start": _message_start,
        "content_block_start": _block_start,
        "content_block_delta": _block_delta,
        "content_block_stop": _block_stop,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
        "error": Translator._stream_error,
    }  # ping, and types added later: nothing


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
