"""Message and content-block discriminators, and the small constructors for messages.

Messages and blocks are plain JSON dicts (DESIGN.md "Data shapes"). The enums exist so code can say
``MessageType.USER`` instead of ``2``; the constructors store the plain values (``2``, ``"text"``) so a
message serialises identically whether it was built here or in the JavaScript library.

``ROLE_OF`` is the one table of chat roles (OpenAI's ``role``, which seed 000's hooks read): the hook
shapes, the usage report and anything else that names a message's role read it, never a literal
``{3: "assistant"}`` of their own.

Decision: ``text_content`` converts with ``str()`` (the seed's ``String()``), so ``None`` becomes
``"None"``; ``user_message`` accepts a mapping (or ``None``) as metadata and raises ``TypeError`` for
anything else, where JavaScript would silently spread nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum, StrEnum
from types import MappingProxyType
from typing import Any

__all__ = [
    "ContentType",
    "MessageType",
    "ROLE_OF",
    "TYPE_OF_ROLE",
    "assistant_message",
    "mimetype_of",
    "role_of",
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


ROLE_OF: Mapping[int, str] = MappingProxyType({
    MessageType.SYSTEM: "system",
    MessageType.USER: "user",
    MessageType.ASSISTANT: "assistant",
    MessageType.TOOL_RESULT: "tool",
})
"""Message type → chat role (``system``/``user``/``assistant``/``tool``); 0 (reserved) has none.

Keys are ``MessageType`` members, so a plain int looks up the same entry (``ROLE_OF[3]``). A bool is
an int to Python but never a message type: use ``role_of`` for values read from JSON."""

TYPE_OF_ROLE: Mapping[str, int] = MappingProxyType({
    **{role: int(kind) for kind, role in ROLE_OF.items()},
    "developer": int(MessageType.SYSTEM),  # OpenAI's (and Yao's) developer role is a system message
})
"""Chat role → message type as a plain int (what a message stores): ``ROLE_OF`` reversed, plus ``developer``."""


def role_of(kind: Any) -> str | None:
    """The chat role of a message's ``type`` value, or ``None`` when it has none (0, a bool, a record's string)."""
    if isinstance(kind, bool) or not isinstance(kind, int):
        return None
    return ROLE_OF.get(kind)


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
