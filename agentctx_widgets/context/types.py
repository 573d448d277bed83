"""Message and content-block discriminators, and the small constructors for messages.

Messages and blocks are plain JSON dicts (DESIGN.md "Data shapes"). The enums exist so code can say
``MessageType.USER`` instead of ``2``; the constructors store the plain values (``2``, ``"text"``) so a
message serialises identically whether it was built here or in the JavaScript library.

Decision: ``text_content`` converts with ``str()`` (the seed's ``String()``), so ``None`` becomes
``"None"``; ``user_message`` accepts a mapping (or ``None``) as metadata and raises ``TypeError`` for
anything else, where JavaScript would silently spread nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum, StrEnum
from typing import Any

__all__ = [
    "ContentType",
    "MessageType",
    "assistant_message",
    "mimetype_of",
    "system_message",
    "text_content",
    "user_message",
]


class ContentType(StrEnum):
    """Content block discriminators (the block's ``type`` string)."""

    TEXT = "text"
    IMAGE = "image"
    BINARY = "binary"
    THINKING = "thinking"
    TOOL_CALL = "toolCall"


class MessageType(IntEnum):
    """Numeric message types. 0 is reserved."""

    RESERVED = 0
    SYSTEM = 1
    USER = 2
    ASSISTANT = 3
    TOOL_RESULT = 4


def text_content(text: Any) -> dict:
    """A text block holding ``str(text)``."""
    return {"type": ContentType.TEXT.value, "text": str(text)}


def system_message(text: Any) -> dict:
    """A system message with one text block made from ``text``."""
    return {"type": int(MessageType.SYSTEM), "content": [text_content(text)]}


def user_message(text: Any, metadata: Mapping | None = None) -> dict:
    """A user message: a list is used as the block list as-is, anything else becomes one text block.

    ``metadata`` is copied over the message last, so it can override ``type``/``content``.
    """
    content = text if isinstance(text, list) else [text_content(text)]
    message: dict = {"type": int(MessageType.USER), "content": content}
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            raise TypeError(f"user_message: metadata must be a mapping, got {type(metadata).__name__}")
        message.update(metadata)
    return message


def assistant_message(content: list | None = None) -> dict:
    """An assistant message whose content is ``content`` itself (not copied, not validated)."""
    return {"type": int(MessageType.ASSISTANT), "content": [] if content is None else content}


def mimetype_of(block: Any) -> str | None:
    """The block's media type: a non-empty ``mimetype``, else a non-empty ``mime``, else ``None``."""
    if not isinstance(block, Mapping):
        return None
    for key in ("mimetype", "mime"):
        value = block.get(key)
        if isinstance(value, str) and value:
            return value
    return None
