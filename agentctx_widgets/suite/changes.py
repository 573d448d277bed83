"""The values a diff is made of: a :class:`Change` of one field, a turn's :class:`TurnDiff`, and the word
runs that mark what changed inside a text (both the text form and the HTML use them)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

import orjson

from .records import TurnRecord

__all__ = ["MISSING", "Change", "TurnDiff", "word_ops", "shown"]


class _Missing:
    """Where one side has nothing (a turn, a tool call, an output or a key the other side has)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Change:
    """One difference: ``path`` names the field (``text``, ``tool_calls[0].arguments``,
    ``outputs[#2].props.content``, ``usage.outputTokens``); ``old`` / ``new`` is :data:`MISSING` where
    that side has none."""

    path: str
    old: Any = MISSING
    new: Any = MISSING

    @property
    def kind(self) -> str:
        return "added" if self.old is MISSING else "removed" if self.new is MISSING else "changed"


@dataclass(frozen=True)
class TurnDiff:
    """One turn's differences (``index`` counts from 1); ``status`` is ``same``, ``changed``, ``added`` (only
    the new run has the turn) or ``removed``."""

    index: int
    input: str
    status: str
    changes: tuple[Change, ...] = ()
    old: TurnRecord | None = None
    new: TurnRecord | None = None


# ---- words ----

_WORD = re.compile(r"\s+|\w+|[^\w\s]")


def word_ops(old: str, new: str) -> list[tuple[str, str]]:
    """``old`` → ``new`` as ``(op, text)`` runs by words: ``=`` kept, ``-`` removed, ``+`` added."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    ops: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("+", "".join(b[j1:j2])))
    return ops


def shown(value: Any) -> str:
    if value is MISSING:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=repr).decode()
