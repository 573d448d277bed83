"""Appending with merging: one merged block per sub-type instead of a chain of fragments.

Rules (DESIGN.md "Merging"):
- Adjacent text blocks fold, and adjacent thinking blocks fold, when each carries nothing but
  ``type`` and a string ``text``. They are joined with a blank line (``"\\n\\n"``) unless the first
  already ends in a newline. Decision: when either side is empty, no separator is added.
- The incoming message's own blocks fold first; then it merges into the context's last entry when
  that is a message of the same type, neither is a tool result (type 4), and their fields other than
  ``type``/``content`` are equal. The merged content re-folds.
- ``merge=False`` only stops the merge into the last entry; the incoming message's own blocks
  still fold.
- A message with no content and no failed-response error is dropped with a ``UserWarning``.
- Records (string ``type``) are appended as they are, never merged.

Folding builds new block dicts and a new content list; blocks are never edited in place.
"""

from __future__ import annotations

import warnings
from typing import Any

from .types import MessageType
from .validate import has_content, has_error, is_record, validate_message

__all__ = ["append_message", "fold_blocks", "mergeable"]

_FOLDABLE = frozenset({"text", "thinking"})


def _plain(block: Any) -> bool:
    return (isinstance(block, dict) and block.get("type") in _FOLDABLE
            and isinstance(block.get("text"), str) and block.keys() == {"type", "text"})


def _join(first: str, second: str) -> str:
    if not first or not second or first.endswith("\n"):
        return first + second
    return first + "\n\n" + second


def fold_blocks(blocks: list) -> list:
    """A new block list where adjacent plain text (or thinking) blocks are joined into one."""
    folded: list = []
    for block in blocks:
        previous = folded[-1] if folded else None
        if previous is not None and _plain(block) and _plain(previous) and previous["type"] == block["type"]:
            folded[-1] = {"type": previous["type"], "text": _join(previous["text"], block["text"])}
        else:
            folded.append(block)
    return folded


def mergeable(previous: Any, message: dict) -> bool:
    """May ``message`` merge into ``previous`` (same type, not tool results, equal other fields)?"""
    if not isinstance(previous, dict) or is_record(previous):
        return False
    kind = previous.get("type")
    if kind != message.get("type") or kind == MessageType.TOOL_RESULT:
        return False
    others = lambda m: {k: v for k, v in m.items() if k not in ("type", "content")}  # noqa: E731
    return others(previous) == others(message)


def append_message(context: list, message: Any, *, merge: bool = True) -> dict | None:
    """Append ``message`` to ``context`` in place, merging into the last message when possible.

    Returns the stored message (the previous one when merged), or ``None`` when an empty message was
    dropped. Everything is validated before anything changes.
    """
    return store_message(context, message, merge=merge, in_place=True)


def store_message(context: list, message: Any, *, merge: bool, in_place: bool) -> dict | None:
    """:func:`append_message`; with ``in_place`` false a merge puts a new dict in the last entry's place
    instead of editing it (a ``Context``'s way: a message read from it never changes afterwards)."""
    if not isinstance(context, list):
        raise TypeError(f"append_message: context must be a list, got {type(context).__name__}")
    if is_record(message):
        context.append(message)
        return message
    validate_message(message, f"context[{len(context)}]")
    folded = fold_blocks(message["content"])
    if not has_content({"content": folded}) and not has_error(message):
        warnings.warn(f"append_message: dropped an empty message (type {message['type']!r})", UserWarning, stacklevel=3)
        return None
    message["content"] = folded
    if merge and context and mergeable(context[-1], message):
        previous = context[-1] if in_place else dict(context[-1])
        previous["content"] = fold_blocks(previous["content"] + folded)
        context[-1] = previous
        return previous
    context.append(message)
    return message
