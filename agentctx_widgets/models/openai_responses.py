"""OpenAI Responses API (``POST /v1/responses``), streaming and stateless.

Two pure halves and a thin class, as in :mod:`.openai_chat`:

- :func:`build_responses_request` — Context messages → the request body. The Context is the state,
  so every request carries the whole conversation as ``input`` items and ``store`` is ``False``
  unless the options say otherwise (nothing is kept on OpenAI's side to refer back to).
- :class:`ResponsesTranslator` — Responses streaming events (as dicts) → normalised events.
- :class:`OpenAIResponsesModel` — the SDK connector (see :mod:`.connector`).

How Context messages become ``input`` items (the API reference's "Input item list"):

- system → ``{"role": "system", "content": text}``. An input message, not ``instructions``: a system
  message keeps its place in the conversation (a mid-conversation system message stays mid-
  conversation), ``instructions`` stays free for the caller's options, and the reference documents
  ``system`` and ``developer`` as equals that outrank ``user``; ``system`` is what the Context calls it
  and what OpenAI-compatible Responses servers understand.
- user → ``{"role": "user", "content": [input_text | input_image | input_file]}``. ``input_image``
  always carries ``detail`` (the reference lists it as required; ``"auto"`` is its default); files go
  as ``input_file`` with a base64 data URL in ``file_data``.
- assistant → its blocks in order: runs of text blocks become one ``{"role": "assistant", "content":
  [{"type": "output_text", "text", "annotations": []}]}`` (assistant content must be ``output_text``,
  which requires ``annotations``), a toolCall a ``function_call`` item with JSON-string arguments,
  a thinking block whose ``signature`` holds a reasoning item's ``encrypted_content`` a ``reasoning``
  item (``{"type": "reasoning", "summary": [...], "encrypted_content"}``, without the ``rs_`` id: with
  ``store: false`` an id makes the API look the item up and fail). Other thinking blocks are dropped:
  with nothing stored, a reasoning item is usable only through its encrypted content. Order is kept, so a reasoning item still
  precedes the function calls it led to, as the API requires. To get ``encrypted_content`` back at
  all, pass ``include=["reasoning.encrypted_content"]`` (not added by default: not every model or
  compatible server accepts it).
- tool result → ``{"type": "function_call_output", "call_id", "output"}``: the text, or a list of
  input parts when the result holds images or files. The API has no field for the ``error`` flag.

Neutral tools become the flat ``{"type": "function", "name", "description", "parameters", "strict":
false}``: the Responses API treats a tool without ``strict`` as strict and rewrites its schema (every
property required), which would change what the tool accepts; a tool may say ``"strict": true``.

Translation: text and refusal parts are text blocks keyed by ``(output_index, content_index)``; a
reasoning item is one thinking block (summary parts, or ``reasoning_text`` parts, joined by a blank
line) whose ``thinking_end`` carries ``encrypted_content`` as ``signature``; a function call item is a
tool call (``callId`` is its ``call_id``). ``response.completed`` → ``done`` (``stopReason``
``"tool_calls"`` when the response called a function, else ``"stop"``; ``usage`` as the provider
wrote it); ``response.incomplete`` → ``done`` with ``incomplete_details.reason`` as ``stopReason``
(the text so far is the answer, cut short); ``response.failed`` and ``error`` events → ``error``; a
stream without any of these → ``error`` ``INCOMPLETE``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import orjson

from ..context import MessageType
from .connector import Provider, SdkModel, Translator
from .convert import (RequestError, data_url, given, image_source, is_image, is_native_tool, joined_text,
                      not_input, numbered, only_text, split_options, tool_schema)
from .errors import code_for

PROVIDER = "openai"

# ``response.error.code`` values (the Response object's ``error``) that PROVIDER_TYPES does not name.
_FAILED_CODES = {
    "invalid_prompt": "REFUSED",
    "bio_policy": "REFUSED",
    "misalignment_policy_violation": "REFUSED",
    "vector_store_timeout": "TIMEOUT",
    "data_residency_mismatch": "BAD_REQUEST",
}


def _failed_code(provider_code: Any) -> str:
    """Our code for a ``response.failed`` the shared table does not know: an image the API could not
    use is a bad request; anything else failed the response itself (``REFUSED``)."""
    if not isinstance(provider_code, str):
        return "REFUSED"
    if "image" in provider_code:
        return "BAD_REQUEST"
    return _FAILED_CODES.get(provider_code, "REFUSED")


# -- the request ------------------------------------------------------------------------------------

def build_responses_request(messages: list[dict], *, model: str, options: dict | None = None) -> dict:
    """The ``POST /v1/responses`` body for ``messages`` (pure)."""
    tools, rest = split_options(options, "build_responses_request", messages)
    body: dict[str, Any] = {
        "model": model,
        "input": [item for index, message in numbered(messages) for item in _items(index, message)],
        "stream": True,
        "store": False,
    }
    if tools:
        body["tools"] = [_tool(tool) for tool in tools]
    body.update(rest)  # store, include, reasoning, max_output_tokens, instructions, ... as given
    return body


def _items(index: int, message: dict) -> list[dict]:
    kind = message["type"]
    at = f"messages[{index}]"
    if kind == MessageType.TOOL_RESULT:
        call_id = given(message.get("callId"), f"{at}.callId: a tool result needs the id of the call it "
                                               "answers")
        return [{"type": "function_call_output", "call_id": call_id, "output": _output(message, at)}]
    if kind == MessageType.ASSISTANT:
        return _assistant(message, at)
    if kind == MessageType.SYSTEM:
        if not only_text(message):
            raise RequestError(f"{at}.content: a system message can hold only text blocks")
        return [{"role": "system", "content": joined_text(message)}]
    parts = [_part(block, f"{at}.content[{n}]") for n, block in enumerate(message["content"])]
    return [{"role": "user", "content": parts}]


def _assistant(message: dict, at: str) -> list[dict]:
    items: list[dict] = []
    texts: list[dict] = []

    def flush() -> None:
        if texts:
            items.append({"role": "assistant", "content": list(texts)})
            texts.clear()

    for n, block in enumerate(message["content"]):
        place = f"{at}.content[{n}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append({"type": "output_text", "text": str(block.get("text", "")), "annotations": []})
        elif kind == "thinking":
            signature = block.get("signature")
            if isinstance(signature, str) and signature:
                flush()
                text = str(block.get("text") or "")
                items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": text}] if text else [],
                              "encrypted_content": signature})
        elif kind == "toolCall":
            flush()
            items.append(_call(block, place))
        else:
            raise RequestError(f"{place}.type: an assistant message can hold text, thinking and toolCall blocks, "
                               f"not {kind!r}")
    flush()
    return items


def _call(block: dict, at: str) -> dict:
    call_id = given(block.get("callId"), f"{at}.callId: a toolCall block needs the call's id")
    name = given(block.get("name"), f"{at}.name: a toolCall block needs the function's name")
    arguments = block.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": raw}


def _output(message: dict, at: str) -> str | list[dict]:
    """A tool result's ``output``: its text, or input parts when it holds more than text."""
    if only_text(message):
        return joined_text(message)
    return [_part(block, f"{at}.content[{n}]") for n, block in enumerate(message["content"])]


def _part(block: Any, at: str) -> dict:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return {"type": "input_text", "text": str(block.get("text", ""))}
    if kind is not None and is_image(block):
        _, url = image_source(block, at)
        detail = block.get("detail")
        return {"type": "input_image", "image_url": url, "detail": detail if isinstance(detail, str) else "auto"}
    if kind == "binary":
        encoded = data_url(block)
        if encoded is None:
            raise RequestError(f"{at}.content: a binary block needs base64 'content'")
        return {"type": "input_file", "filename": str(block.get("filename") or "file"), "file_data": encoded}
    raise not_input(kind, at, "the Responses API has no input part")


def _tool(tool: dict) -> dict:
    if is_native_tool(tool):
        return tool
    function: dict[str, Any] = {"type": "function", "name": tool["name"], "parameters": tool_schema(tool),
                                "strict": tool["strict"] if isinstance(tool.get("strict"), bool) else False}
    if tool.get("description"):
        function["description"] = tool["description"]
    return function


# -- the stream -------------------------------------------------------------------------------------

class ResponsesTranslator(Translator):
    """Responses streaming event dicts → normalised events (pure; one instance per response)."""

    provider = PROVIDER
    cut_short = "before response.completed"

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[Hashable] = set()  # every block key that started
        self._parts: dict[Hashable, Hashable] = {}  # thinking key -> the part its last delta belonged to
        self._calls: dict[Hashable, dict] = {}  # item key -> {"id", "name", "buffer", "started", "ended"}
        self._called = False

    # -- keys and blocks ------------------------------------------------------------------------
    @staticmethod
    def _item(event: dict) -> Hashable:
        """The output item an event belongs to: its ``output_index``, else the item's id."""
        index = event.get("output_index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        item = event.get("item") if isinstance(event.get("item"), dict) else {}
        return event.get("item_id") or item.get("id")

    def _start(self, key: Hashable, kind: str) -> list[dict]:
        self._seen.add(key)
        return super()._start(key, kind)

    # -- text and refusal -----------------------------------------------------------------------
    def _text_key(self, event: dict) -> Hashable:
        return ("text", self._item(event), event.get("content_index", 0))

    def _text_delta(self, event: dict) -> list[dict]:
        delta = event.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        return self._delta(self._text_key(event), "text", delta)

    def _text_done(self, event: dict) -> list[dict]:
        final = event.get("text") if event.get("type") == "response.output_text.done" else event.get("refusal")
        return self._final_text(self._text_key(event), final if isinstance(final, str) else None)

    def _final_text(self, key: Hashable, final: str | None) -> list[dict]:
        if key in self._open:
            return self._end(key, **({"text": final} if final is not None else {}))
        if key in self._seen or not final:
            return []
        return self._start(key, "text") + self._end(key, text=final)

    # -- reasoning ------------------------------------------------------------------------------
    def _thinking_delta(self, event: dict) -> list[dict]:
        delta = event.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        key = ("thinking", self._item(event))
        part = (event["type"], event.get("summary_index", event.get("content_index", 0)))
        if key in self._parts and self._parts[key] != part:
            delta = "\n\n" + delta  # the next summary part: one block, parts a paragraph apart
        self._parts[key] = part
        return self._delta(key, "thinking", delta)

    def _reasoning_done(self, key: Hashable, item: dict) -> list[dict]:
        encrypted = item.get("encrypted_content")
        signature = {"signature": encrypted} if isinstance(encrypted, str) and encrypted else {}
        if key in self._open:
            return self._end(key, **signature)
        if key in self._seen:
            return []
        text = "\n\n".join(str(part.get("text", "")) for field in ("summary", "content")
                           for part in item.get(field) or [] if isinstance(part, dict) and part.get("text"))
        if not text and not signature:
            return []  # reasoning the caller can neither read nor send back
        return self._start(key, "thinking") + self._end(key, text=text, **signature)

    # -- function calls -------------------------------------------------------------------------
    def _call_state(self, key: Hashable) -> dict:
        return self._calls.setdefault(key, {"id": None, "name": "", "buffer": "", "started": False, "ended": False})

    def _call_start(self, key: Hashable, item: dict) -> list[dict]:
        state = self._call_state(key)
        if state["started"]:
            return []
        block = ("call", key)
        index = self._indexes.of(block)
        state["started"] = True
        state["id"] = item.get("call_id") or item.get("id") or f"call_{index}"
        state["name"] = str(item.get("name") or "")
        self._called = True
        events = self._start(block, "tool_call")
        events[0].update(callId=state["id"], name=state["name"])
        buffered = state["buffer"] or (item.get("arguments") if isinstance(item.get("arguments"), str) else "")
        if buffered:
            events.append({"type": "tool_call_delta", "contentIndex": index, "delta": buffered})
        return events

    def _call_end(self, key: Hashable, arguments: Any) -> list[dict]:
        state = self._call_state(key)
        if state["ended"] or not state["started"]:
            return []
        state["ended"] = True
        return self._end(("call", key), **({"arguments": arguments} if isinstance(arguments, str) else {}))

    def _arguments_delta(self, event: dict) -> list[dict]:
        delta = event.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        key = self._item(event)
        state = self._call_state(key)
        if not state["started"]:
            state["buffer"] += delta  # before output_item.added: kept until the call's name is known
            return []
        return [{"type": "tool_call_delta", "contentIndex": self._indexes.of(("call", key)), "delta": delta}]

    def _arguments_done(self, event: dict) -> list[dict]:
        return self._call_end(self._item(event), event.get("arguments"))

    # -- output items ---------------------------------------------------------------------------
    def _item_added(self, event: dict) -> list[dict]:
        item = event.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            return self._call_start(self._item(event), item)
        return []  # message and reasoning blocks start at their first delta

    def _item_done(self, event: dict) -> list[dict]:
        item = event.get("item")
        if not isinstance(item, dict):
            return []
        key = self._item(event)
        kind = item.get("type")
        if kind == "function_call":
            return self._call_start(key, item) + self._call_end(key, item.get("arguments"))
        if kind == "reasoning":
            return self._reasoning_done(("thinking", key), item)
        if kind == "message":
            events: list[dict] = []
            for position, part in enumerate(item.get("content") or []):
                if isinstance(part, dict):
                    final = part.get("text") if part.get("type") == "output_text" else part.get("refusal")
                    events += self._final_text(("text", key, position), final if isinstance(final, str) else None)
            return events
        return []

    # -- the end --------------------------------------------------------------------------------
    def _response_done(self, response: Any, stop: str) -> list[dict]:
        usage = response.get("usage") if isinstance(response, dict) else None
        return self._done(stopReason=stop, usage=usage if isinstance(usage, dict) else None)

    def _completed(self, event: dict) -> list[dict]:
        return self._response_done(event.get("response"), "tool_calls" if self._called else "stop")

    def _incomplete(self, event: dict) -> list[dict]:
        response = event.get("response") if isinstance(event.get("response"), dict) else {}
        details = response.get("incomplete_details") if isinstance(response.get("incomplete_details"), dict) else {}
        reason = details.get("reason")
        return self._response_done(response, reason if isinstance(reason, str) and reason else "incomplete")

    def _response_failed(self, event: dict) -> list[dict]:
        response = event.get("response") if isinstance(event.get("response"), dict) else {}
        error = response.get("error") if isinstance(response.get("error"), dict) else {}
        provider_code = error.get("code")
        code = code_for(None, provider_code)
        if code == "MODEL_ERROR":
            code = _failed_code(provider_code)
        detail = f" ({provider_code})" if isinstance(provider_code, str) else ""
        message = error.get("message") if isinstance(error.get("message"), str) else "no error message"
        return self._failed(f"{PROVIDER} response failed{detail}: {message}", code)

    handlers = {  # created, in_progress, *.added parts, annotations: nothing
        "response.output_item.added": _item_added,
        "response.output_item.done": _item_done,
        "response.output_text.delta": _text_delta,
        "response.refusal.delta": _text_delta,
        "response.output_text.done": _text_done,
        "response.refusal.done": _text_done,
        "response.reasoning_summary_text.delta": _thinking_delta,
        "response.reasoning_text.delta": _thinking_delta,
        "response.function_call_arguments.delta": _arguments_delta,
        "response.function_call_arguments.done": _arguments_done,
        "response.completed": _completed,
        "response.incomplete": _incomplete,
        "response.failed": _response_failed,
        # documented flat {code, message}, or the nested {error: {...}} seen in production
        "error": Translator._stream_error,
    }


# -- the connector ----------------------------------------------------------------------------------

RESPONSES = Provider(
    name=PROVIDER,
    sdk="openai",
    extra="openai",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    client_class="AsyncOpenAI",
    build_request=build_responses_request,
    translator=ResponsesTranslator,
    endpoint="responses",
)


class OpenAIResponsesModel(SdkModel):
    """OpenAI's Responses API, streaming, stateless (``store=False``; the Context is the state).

    ``OpenAIResponsesModel("o4-mini", reasoning={"effort": "low", "summary": "auto"},
    include=["reasoning.encrypted_content"])`` streams reasoning summaries as thinking blocks and
    sends the encrypted reasoning back on the next call of a tool round trip. Reads
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` unless given ``api_key`` / ``base_url`` / ``client``.
    """

    provider = RESPONSES
