"""Small pieces every request builder needs: walking Context messages, block text, data URLs, tools.

Request builders are pure functions from Context messages (seed 001 shapes) to a provider's request
body; what they have in common is here so each provider module holds only its own format.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..context import is_record, mimetype_of
from ..context.types import role_of

TEXT = "text"
RESERVED_OPTIONS = frozenset({"model", "messages", "stream", "input"})


class RequestError(ValueError):
    """A Context message a provider cannot be sent, named by its place (``messages[3].content[1]``)."""


def numbered(messages: list[dict]) -> Iterator[tuple[int, dict]]:
    """``(index, message)`` for every message (records skipped), checking the message type."""
    if not isinstance(messages, list):
        raise RequestError(f"messages: expected a list of Context messages, got {type(messages).__name__}")
    for index, message in enumerate(messages):
        if is_record(message):
            continue
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            raise RequestError(f"messages[{index}]: expected a Context message {{type, content: [...]}}, got {message!r:.80}")
        for position, block in enumerate(message["content"]):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise RequestError(f"messages[{index}].content[{position}]: expected a block {{type, ...}}, got {block!r:.80}")
        kind = message.get("type")
        if role_of(kind) is None:  # also a bool: True == 1 to Python, but no message type
            raise RequestError(f"messages[{index}].type: {kind!r} is not a message type a model can be sent "
                               "(1 system, 2 user, 3 assistant, 4 tool result)")
        yield index, message


def given(value: Any, problem: str) -> str:
    """``value`` when it is a non-empty string, else a ``RequestError`` saying ``problem``."""
    if not isinstance(value, str) or not value:
        raise RequestError(problem)
    return value


def not_input(kind: Any, at: str, refusal: str) -> RequestError:
    """The error for a block a provider takes no input of: a thinking or toolCall block belongs in an
    assistant message; any other, ``refusal`` (``"the Messages API has no input block"``)."""
    if kind in ("thinking", "toolCall"):
        return RequestError(f"{at}: a {kind} block belongs in an assistant message")
    return RequestError(f"{at}.type: {refusal} for a {kind!r} block")


def blocks(message: dict, *types: str) -> list[dict]:
    """The message's blocks of the given types (all when none given), in order."""
    return [block for block in message["content"] if isinstance(block, dict) and (not types or block.get("type") in types)]


def joined_text(message: dict, kind: str = TEXT) -> str:
    """The text of the message's ``kind`` blocks joined with a blank line (how a string content reads)."""
    return "\n\n".join(str(block.get("text", "")) for block in blocks(message, kind))


def only_text(message: dict) -> bool:
    return all(block.get("type") == TEXT for block in message["content"])


def media_type(block: dict, default: str = "application/octet-stream") -> str:
    return mimetype_of(block) or default


def data_url(block: dict, default: str = "application/octet-stream") -> str | None:
    """``data:<mime>;base64,<content>`` for a block carrying base64 ``content``, else None."""
    content = block.get("content")
    if not isinstance(content, str) or not content:
        return None
    return f"data:{media_type(block, default)};base64,{content}"


def image_source(block: dict, at: str) -> tuple[str, str]:
    """(``"url"``, URL) or (``"base64"``, data URL) for an image or image/* binary block."""
    url = block.get("url")
    if isinstance(url, str) and url:
        return "url", url
    encoded = data_url(block, "image/png")
    if encoded is None:
        raise RequestError(f"{at}: an image block needs a 'url' or base64 'content'")
    return "base64", encoded


def is_image(block: dict) -> bool:
    return block.get("type") == "image" or (block.get("type") == "binary" and media_type(block).startswith("image/"))


def tool_result_text(message: dict) -> str:
    """A tool result's text: its text blocks, with a placeholder naming any other block."""
    parts = []
    for block in message["content"]:
        if block.get("type") == TEXT:
            parts.append(str(block.get("text", "")))
        else:
            parts.append(f"[{block.get('type')}: {block.get('filename') or media_type(block)}]")
    return "\n\n".join(parts)


TOOL_CHOICE_ROUNDS = ("first", "every")


def after_tool_results(messages: Any) -> bool:
    """Is this call a later round of a tool loop (the last message the model sees is a tool result)?"""
    if not isinstance(messages, list):
        return False
    last = next((m for m in reversed(messages) if isinstance(m, dict) and not is_record(m)), None)
    return last is not None and last.get("type") == 4


def round_options(messages: Any, options: dict, builder: str) -> dict:
    """``options`` for this round of a tool loop. ``tool_choice`` holds for the first round only (a forced
    choice repeated after the tool results could only end at ``max_tool_rounds``), unless
    ``tool_choice_rounds="every"``; ``tool_choice_rounds`` itself is ours and never sent."""
    rounds = options.pop("tool_choice_rounds", "first")
    if rounds not in TOOL_CHOICE_ROUNDS:
        raise RequestError(f"{builder}: options['tool_choice_rounds'] must be 'first' or 'every', got {rounds!r}")
    if rounds == "first" and "tool_choice" in options and after_tool_results(messages):
        del options["tool_choice"]
    return options


def split_options(options: dict | None, builder: str, messages: Any = None) -> tuple[list[dict], dict]:
    """(neutral tools, the other options for this round) — refusing options that would overwrite the
    request itself. With ``messages``, :func:`round_options` applies."""
    options = round_options(messages, dict(options or {}), builder)
    reserved = sorted(RESERVED_OPTIONS & set(options))
    if reserved:
        raise RequestError(f"{builder}: options {reserved} are set by the connector; pass messages and model instead")
    tools = options.pop("tools", None) or []
    if not isinstance(tools, list):
        raise RequestError(f"{builder}: options['tools'] must be a list, got {type(tools).__name__}")
    for position, tool in enumerate(tools):
        if not isinstance(tool, dict) or not (isinstance(tool.get("name"), str) or isinstance(tool.get("type"), str)):
            raise RequestError(f"options['tools'][{position}]: expected {{name, description, parameters}}, got {tool!r:.80}")
    return tools, options


def is_native_tool(tool: dict) -> bool:
    """A tool already in a provider's own shape (``{"type": "web_search", ...}``), passed through as is."""
    return "name" not in tool or "type" in tool


def tool_schema(tool: dict) -> dict[str, Any]:
    """A neutral tool's JSON Schema (an object schema; an empty one when it takes no arguments)."""
    return tool.get("parameters") or {"type": "object", "properties": {}}
