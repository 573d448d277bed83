"""JSON with comments, exactly the dialect Yao reads ``*.yao`` / ``*.jsonc`` files in.

Yao parses ``package.yao`` with gou's ``application.Parse`` (YaoApp/gou ``application/application.go:91``):
``trim`` (``application.go:127``) blanks ``//`` line comments and ``/* */`` block comments and turns a
comma before ``}`` or ``]`` into a space, keeping every byte offset and line break, then hands the text to
a strict JSON decoder (jsoniter). So comments and trailing commas are accepted, and nothing else of JSON5:
no single quotes, unquoted keys, hex numbers, ``NaN``. We strip the same way (our own code, same rules)
and decode with the standard library, whose errors carry the line and column — right in the original
file, because stripping never moves a character.

Why not a library: ``json5`` (already installed with JupyterLab) accepts a superset (``{a: 'x'}`` loads
there and fails in Yao, so an assistant would work here and break in production); ``commentjson`` has not
been released since 2020; ``json-with-comments`` is close but we would still have to check it strips
exactly as gou does. The rules are twenty lines; a test pins each.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from ..context.store import MAX_DEPTH, too_deep  # the session store's linear depth check

__all__ = ["MAX_DEPTH", "JSONCError", "check_depth", "loads_json", "loads_jsonc", "strip_jsonc"]


class JSONCError(ValueError):
    """A JSONC text that does not parse; ``line`` and ``column`` are 1-based, in the original text."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.reason = message
        self.line = line
        self.column = column
        super().__init__(f"line {line} column {column}: {message}")


def strip_jsonc(text: str) -> str:
    """``text`` with comments blanked and trailing commas removed, same length and same line breaks.

    Inside a comment, tabs, carriage returns and newlines are kept and every other character becomes a
    space (gou ``application.go:133-161``); strings are copied as they are, an escaped quote included
    (``application.go:167-181``); a ``,`` followed only by whitespace before ``}`` or ``]`` becomes a space
    (``application.go:182-191``). An unterminated block comment blanks to the end, as in gou.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if text.startswith(("//", "/*"), i):
            block = text[i + 1] == "*"
            end = text.find("*/" if block else "\n", i + 2)
            end = n if end < 0 else end + 2 * block  # a line comment keeps its newline
            out.append(_COMMENTED.sub(" ", text[i:end]))
            i = end
            continue
        out.append(char)
        i += 1
        if char == '"':
            end = min(_string_end(text, i - 1) + 1, n)
            out.append(text[i:end])
            i = end
        elif char in "}]":
            _blank_trailing_comma(out)
    return "".join(out)


_COMMENTED = re.compile(r"[^\t\r\n]")
"""What a comment blanks: every character but tabs, carriage returns and newlines."""


def _string_end(text: str, quote: int) -> int:
    """The offset of the quote that closes the JSON string opened at ``quote`` (``len(text)`` if none)."""
    i, n = quote + 1, len(text)
    while i < n and not (text[i] == '"' and _unescaped(text, i)):
        i += 1
    return i


def _unescaped(text: str, quote: int) -> bool:
    """Whether the quote at ``quote`` is preceded by an even number of backslashes."""
    backslashes = 0
    j = quote - 1
    while j >= 0 and text[j] == "\\":
        backslashes += 1
        j -= 1
    return backslashes % 2 == 0


def _blank_trailing_comma(out: list[str]) -> None:
    """Turn the last non-blank character before the closing bracket just appended into a space if it is ``,``."""
    for j in range(len(out) - 2, -1, -1):
        piece = out[j]
        if piece.strip() == "":  # whitespace, or a blanked comment
            continue
        if piece == ",":
            out[j] = " "
        return


class _Constant(ValueError):
    """``NaN`` / ``Infinity``: Python's decoder takes them, Go's does not."""


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


class _HugeInteger(ValueError):
    """An integer longer than Python converts (``sys.get_int_max_str_digits()``, 4300 by default)."""


def _parse_int(digits: str) -> int:
    try:
        return int(digits)
    except ValueError:
        raise _HugeInteger(digits) from None


def loads_jsonc(text: str) -> Any:
    """Parse Yao-style JSONC; raise :class:`JSONCError` with the line and column of the first problem."""
    return loads_json(strip_jsonc(text))


def loads_json(text: str) -> Any:
    """Parse strict JSON as Go's decoder does (no ``NaN`` / ``Infinity``), nesting checked first; raise
    :class:`JSONCError` with the line and column of the first problem, an integer too long for Python
    to convert (``sys.get_int_max_str_digits()``) included."""
    check_depth(text)
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int)
    except json.JSONDecodeError as error:
        raise JSONCError(error.msg, error.lineno, error.colno) from error
    except _Constant as error:
        line, column = _position(text, _first_outside_strings(text, str(error)))
        raise JSONCError(f"{error} is not JSON (Yao's decoder refuses it)", line, column) from error
    except _HugeInteger as error:
        line, column = _position(text, _first_long_digits(text))
        raise JSONCError(f"an integer of {len(str(error).lstrip('-'))} digits is over the "
                         f"{sys.get_int_max_str_digits()}-digit limit (sys.get_int_max_str_digits()); refusing it",
                         line, column) from error


def _first_long_digits(text: str) -> int:
    """The offset of the first run of more digits than Python converts, outside strings (0 when none)."""
    limit = sys.get_int_max_str_digits()
    for i in _outside_strings(text):
        if text[i].isdigit() and not (i > 0 and text[i - 1].isdigit()):
            end = i
            while end < len(text) and text[end].isdigit():
                end += 1
            if end - i > limit:
                return i - (i > 0 and text[i - 1] == "-")
    return 0


def check_depth(text: str) -> None:
    """Raise :class:`JSONCError` at the first bracket nested deeper than ``MAX_DEPTH`` (checked before
    parsing, in linear time, so a 100,000-deep file is a clear error and not a ``RecursionError``)."""
    if not too_deep(text.encode("utf-8", "surrogatepass")):
        return
    depth = 0
    for i in _outside_strings(text):
        if text[i] in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line, column = _position(text, i)
                raise JSONCError(f"nests deeper than {MAX_DEPTH} levels (MAX_DEPTH)", line, column)
        elif text[i] in "]}":
            depth -= 1


def _first_outside_strings(text: str, token: str) -> int:
    """The offset of the first ``token`` not inside a JSON string (0 when not found)."""
    return next((i for i in _outside_strings(text) if text.startswith(token, i)), 0)


def _outside_strings(text: str) -> Iterator[int]:
    """Each offset of ``text`` that is not in a JSON string (its quotes included), in order."""
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            i = _string_end(text, i) + 1
            continue
        yield i
        i += 1


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def top_level_key_lines(text: str) -> dict[str, int]:
    """The 1-based line of each key of the top-level object in a JSONC text (the last, for a repeated key).

    Lets an error about a field's value name the line where the author wrote it; comments are skipped
    by scanning the stripped text, whose lines are the original's.
    """
    stripped = strip_jsonc(text)
    lines: dict[str, int] = {}
    depth, i, n, line = 0, 0, len(stripped), 1
    while i < n:
        char = stripped[i]
        if char == "\n":
            line += 1
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        elif char == '"':
            start, start_line = i, line
            i = _string_end(stripped, i)
            line += stripped.count("\n", start, i)
            j = i + 1
            while j < n and stripped[j] in " \t\r\n":
                j += 1
            if depth == 1 and j < n and stripped[j] == ":":
                try:
                    lines[json.loads(stripped[start : i + 1])] = start_line
                except json.JSONDecodeError:
                    pass  # a malformed key: loads_jsonc reports it
        i += 1
    return lines
