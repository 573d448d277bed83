"""Rebuild a message from recognised schema fields only (stale provider/cache identifier cleanup).

Field policy (written here because the seed points to "the module header"):
- Message fields kept: ``type``, ``content``, ``callId`` (str), ``name`` (str), ``error`` (a str, a
  tool result's bool, or ``{"message": str, "retry"?: JSON}``). Dropped: everything else, notably
  provider ids (``id``, ``responseId``, ``providerId``), ``usage``, ``model``, cache markers.
- Block fields kept, by block type:
  ``text``/``thinking``: ``type``, ``text``;
  ``toolCall``: ``type``, ``callId``, ``name``, ``arguments``;
  ``binary``: ``type``, ``mimetype``, ``filename``, ``content``;
  ``image``: ``type``, ``url``, ``mimetype``, ``filename``, ``content``, ``detail``.
  Dropped: ``draft``, ``signature``, ``cache_control``, ``id`` and any other field.
- Blocks of an unknown type are copied whole (their schema is not ours to prune).
Values are deep-copied, so the result shares nothing with the input.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .validate import validate_message

__all__ = ["BLOCK_FIELDS", "rebuild_message"]

BLOCK_FIELDS: Mapping[str, tuple[str, ...]] = {
    "text": ("type", "text"),
    "thinking": ("type", "text"),
    "toolCall": ("type", "callId", "name", "arguments"),
    "binary": ("type", "mimetype", "filename", "content"),
    "image": ("type", "url", "mimetype", "filename", "content", "detail"),
}


def _rebuild_block(block: Mapping) -> dict:
    fields = BLOCK_FIELDS.get(block["type"])
    if fields is None:
        return copy.deepcopy(dict(block))
    return {key: copy.deepcopy(block[key]) for key in fields if key in block}


def _rebuild_error(error: Any) -> Any:
    if isinstance(error, (str, bool)):
        return error
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        kept = {"message": error["message"]}
        if "retry" in error:
            kept["retry"] = copy.deepcopy(error["retry"])
        return kept
    return None


def rebuild_message(msg: Any) -> dict:
    """A new message with only the recognised fields of ``msg`` and of its blocks."""
    validate_message(msg)
    rebuilt: dict = {"type": msg["type"], "content": [_rebuild_block(block) for block in msg["content"]]}
    for key in ("callId", "name"):
        if isinstance(msg.get(key), str):
            rebuilt[key] = msg[key]
    if "error" in msg:
        error = _rebuild_error(msg["error"])
        if error is not None:
            rebuilt["error"] = error
    return rebuilt
