"""JSON text exactly as Go's ``encoding/json`` writes it, so what we record is byte for byte what Yao
puts after ``data: `` (cui/writer.go:93-113, openai/writer.go:154-166 marshal with ``json.Marshal``).

Go decides key order by the value's kind: a **struct** keeps its declaration order, a **map** is sorted by
key. Python dicts do not say which they are, so structs are built as :class:`GoStruct` (order kept) and
every other dict is taken as a map (:func:`go_value` sorts it). ``json.Marshal`` also escapes ``<``, ``>``,
``&``, U+2028 and U+2029, writes ``\\b`` / ``\\f`` (Go 1.22+; Yao builds with go 1.25, go.mod:3), and
formats floats its own way (``encoding/json/encode.go`` ``floatEncoder``).
"""

from __future__ import annotations

import math
from typing import Any


class GoStruct(dict):
    """A dict standing for a Go struct: its keys stay in the order they were put (declaration order)."""

    __slots__ = ()


def go_value(value: Any) -> Any:
    """``value`` with every map (a plain dict) sorted by key, recursively, as Go marshals maps; a
    :class:`GoStruct` keeps its order. Lists and scalars are kept (lists copied)."""
    if isinstance(value, GoStruct):
        return GoStruct((key, go_value(item)) for key, item in value.items())
    if isinstance(value, dict):
        return {key: go_value(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [go_value(item) for item in value]
    return value


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
            "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _string(text: str) -> str:
    out = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char < " ":
            out.append(f"\\u{ord(char):04x}")
        elif "\ud800" <= char <= "\udfff":  # a lone surrogate is not UTF-8: Go writes U+FFFD
            out.append("\ufffd")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _float(number: float) -> str:
    if math.isnan(number) or math.isinf(number):
        raise ValueError(f"json: unsupported value: {number!r}")
    size = abs(number)
    if size != 0 and (size < 1e-6 or size >= 1e21):
        text = repr(number)  # shortest digits, exponent form in this range, as strconv's 'e' with -1
        if text[-4:-2] == "e-" and text[-2] == "0":  # Go's clean-up: e-07 -> e-7
            text = text[:-2] + text[-1]
        return text
    if number == int(number):
        return "-0" if number == 0 and math.copysign(1, number) < 0 else str(int(number))
    text = repr(number)
    if "e" not in text:
        return text
    from decimal import Decimal
    return format(Decimal(text), "f")


def dumps(value: Any) -> str:
    """The JSON text Go's ``json.Marshal`` writes for ``value`` (dict order as given: pass it through
    :func:`go_value` first, or build it so). Raises ``ValueError`` for NaN/Infinity (as Go does) and
    ``TypeError`` for what JSON cannot hold."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(str(key))}:{dumps(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(item) for item in value) + "]"
    raise TypeError(f"json: unsupported type: {type(value).__name__} ({value!r})")
