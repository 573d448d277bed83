"""What our messages call a value's type: JavaScript's ``typeof`` for JSON data, the one vocabulary of
every diagnostic and error that names one (the delta engine, the envelope check, an assistant's files,
Go's decode errors).

``js/src/delta.js`` ``kind`` gives the browser's engine the same names (the delta diagnostics must read the
same from both engines); the QuickJS prelude (``hooks/js_prelude.js`` ``__agentctx_kind``) names live
JavaScript values in the words of Yao's own errors ("an array", "a Date").
"""

from __future__ import annotations

from typing import Any

__all__ = ["UNDEFINED", "js_type", "with_article"]


class _Undefined:
    """JavaScript's ``undefined``: what a read finds where there is nothing."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Any = _Undefined()

_NAMES = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "string", list: "list",
          dict: "object", _Undefined: "undefined"}


def js_type(value: Any) -> str:
    """``undefined``, ``null``, ``boolean``, ``number``, ``string``, ``list`` (a JavaScript array: the
    delta diagnostics' word, as in ``list_padded``) or ``object``; for anything JSON cannot carry, its
    Python type's name (``set``)."""
    name = _NAMES.get(type(value))
    if name is not None:
        return name
    for kind, name in _NAMES.items():  # subclasses (an IntEnum, an OrderedDict)
        if isinstance(value, kind):
            return name
    return type(value).__name__


def with_article(name: str) -> str:
    """``a list``, ``an object``; ``null`` and ``undefined`` stay bare (they are values, not kinds)."""
    if name in ("null", "undefined"):
        return name
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"
