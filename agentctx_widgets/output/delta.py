"""The delta engine: how a stream of output messages folds into a state (DESIGN.md "Output messages
and deltas"). ``js/src/delta.js`` implements the same rules; ``tests/vectors/delta.json`` binds both.

State: ``{"order": [id, ...], "messages": {id: {"id", "type", "props", "done", "group_id"?,
"metadata"?}}}``.

Every message is first *planned* against a state (all checks that can fail, reading only; every
diagnostic is reported here) and then *committed* (writes only, cannot fail). So a bad message never
half-applies, a strict caller can refuse a message before anything of it is applied, and a caller
that owns its state (``Output``, the widget) can commit in place at a cost of the message's size, not
the state's. ``apply_message`` is the pure form: it returns a new state and shares unchanged entries
with the old one (treat states as immutable values).

The rules are those of the reference CUI client, YaoApp/cui at 9c35de9 (``chatbox/utils/delta.ts``
and the message loop of ``chatbox/hooks/useChat.ts``), case for case; an entry that is not done
stands for the client's cached message, a done one for a message whose cache entry is gone. Where
the client does something a hook author would not expect, the engine does it too and reports a
diagnostic (``report(code, where, **details)``, codes from ``diagnostics.DIAGNOSTICS``):

- A message without ``id`` (or with ``id: ""``) goes to the one slot ``"ai-response-unknown"``; from
  the second one on: ``shared_slot``.
- A delta for an id the state does not hold creates the message from empty props (``unknown_id``).
- A message for a done id starts afresh: a delta applies to empty props, a non-delta message replaces
  them, the entry keeps its place and is open again unless the message says ``done`` (``after_done``).
- ``type_change`` (any truthy value) with an id: the props start empty, the message's type is taken.
- A non-delta message replaces ``type`` and ``props``; ``delta_path``/``delta_action`` are ignored.
  A delta of another (non-empty) type switches the type (``type_changed``) unless it carries
  ``type_change``.
- ``done`` is the value on each message (not sticky).
- **One deliberate difference:** a bare done (``done: true``, no delta, ``props`` ``{}`` or absent)
  keeps the props, as the seed's "Mark as complete" example shows; the client at 9c35de9 blanks
  them, so when there were props to keep it is reported (``bare_done_kept``).
- A missing path (or ``""``) means the whole props; a missing action (or ``""``) means ``append``. An
  unknown action changes no props (type and done still apply): ``invalid_action``.
- ``append``: onto a string, JavaScript's ``+`` (a non-string is concatenated as its text,
  ``append_coerced``); onto a list, extend (a non-list value is wrapped); onto anything else the sent
  value replaces the target (``append_replaced`` when the target was a number, boolean or object).
  Without a path, key by key over the sent props.
- ``replace``/``set`` with a path put the sent value there; ``replace`` without a path makes the
  props a copy of the sent props, ``set`` without a path is a shallow update.
- ``merge`` is the client's ``deepMerge``: objects merge recursively, a ``null`` sent value never
  clears, a falsy sent value at the path itself is ignored (``merge_ignored``), and at a path two lists
  (or a list and an object) merge index by index (``merge_list_by_index``).
- A value the sent props do not have at the path is JavaScript's ``undefined`` (``missing_value``):
  appended as the text ``"undefined"``, pushed as ``null``, or deleting the key it is written to.
- Paths are the client's: split on ``.``, each part ``name`` or ``name[n]`` (ASCII letters, digits,
  ``_``); any other part is a literal key (``path_literal`` when it holds ``[``/``]`` or is empty).
  Missing or falsy values on the way become ``{}`` (``path_overwrote`` for a falsy one; a dotted index
  on a made object: ``path_made_object``), a bracket last part on a missing key makes a list, writing
  past the end of a list fills the gap with ``null`` (``list_padded``), and a key that is not an index
  on a list is stored where nothing shows it (``list_key_ignored``).
- A message the client throws on (a path through a string, a number or a missing list element) is
  dropped: the state does not change and only ``dropped`` is reported.
- Kept from before, against the client: ``group_id``/``metadata`` on a message replace the entry's
  and stay when absent; ``type: "event"`` messages are stored like any other; keys are plain data
  (own properties only: ``__proto__`` or ``constructor`` never reach ``Object.prototype``).

``DeltaError`` (codes ``invalid_state``, ``invalid_message``) is only for what is not a message or not
a state: a non-object message, a missing ``type`` (``""`` is a type, as in Yao; a delta never switches
to it), a wrongly typed envelope field, props or metadata that are not JSON.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._js_types import UNDEFINED, js_type
from .messages import clone_json

State = dict[str, Any]
Report = Callable[..., None]

SHARED_SLOT = "ai-response-unknown"
"""The id the client gives every message without one (useChat.ts: ``chunk.id || 'ai-response-unknown'``)."""

KNOWN_ACTIONS = ("append", "replace", "merge", "set")


_PART = re.compile(r"([A-Za-z0-9_]+)(?:\[([0-9]+)\])?")
_PLAIN = re.compile(r"[A-Za-z0-9_]+")
_INDEX = re.compile(r"0|[1-9][0-9]*")
_DIGITS = re.compile(r"[0-9]+")
_MAX_INDEX = 4294967294  # 2**32 - 2: the largest array index
_JS_SPACE = "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_RADIX = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")


class DeltaError(ValueError):
    """A message that is not a message, or a state that is not a state; ``code`` says which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Change:
    """A checked message, ready to commit.

    ``mode``: ``"put"`` (props replaced by ``value``), ``"close"`` (a bare done: props kept),
    ``"delta"`` (``value`` is a tuple of write ops on the props, applied onto ``{}`` when ``fresh``)
    or ``"drop"`` (the client drops the message: nothing is written, not even a new entry).
    """

    id: str
    is_new: bool
    type: str
    mode: str
    fresh: bool
    value: Any
    done: bool
    group_id: str | None
    metadata: dict[str, Any] | None


def new_state() -> State:
    """An empty state."""
    return {"order": [], "messages": {}}


# ---- JavaScript semantics for JSON values --------------------------------------------------------


def _is_index(key: str) -> bool:
    """Whether ``key`` is an array index (a canonical decimal below 2**32 - 1)."""
    return _INDEX.fullmatch(key) is not None and (len(key) < 10 or int(key) <= _MAX_INDEX)


def js_number(value: float | int) -> str:
    """ECMAScript ``Number::toString`` (``1.0`` → ``"1"``, ``1e21`` → ``"1e+21"``, ``-0.0`` → ``"0"``)."""
    if isinstance(value, int):
        if -(2**53) < value < 2**53:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    if value != value:
        return "NaN"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + js_number(-value)
    if math.isinf(value):
        return "Infinity"
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.rstrip("0")
    s = stripped.lstrip("0")
    k = len(s)
    n = (int(exponent) if exponent else 0) - len(fraction) + (len(digits) - len(stripped)) + k
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    e = n - 1
    sign = "+" if e >= 0 else "-"
    return (s if k == 1 else s[0] + "." + s[1:]) + "e" + sign + str(abs(e))


class _Drop(Exception):
    """The client throws (a TypeError or RangeError) on this message and drops it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def js_string(value: Any) -> str:
    """ECMAScript ``ToString`` of a JSON value (``None`` → ``"null"``, a list joined with ``,`` and
    ``null`` as ``""``, an object → ``"[object Object]"``, ``UNDEFINED`` → ``"undefined"``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    if "toString" in value:  # an own non-callable toString: ToPrimitive throws a TypeError
        raise _Drop("the client cannot turn an object with a 'toString' key into text (TypeError)")
    return "[object Object]"


def _string_to_number(text: str) -> float:
    text = text.strip(_JS_SPACE)
    if text == "":
        return 0.0
    radix = _RADIX.fullmatch(text)
    if radix is not None:
        base = {"x": 16, "o": 8, "b": 2}[radix[1].lower()]
        if any(int(char, 16) >= base for char in radix[2]):
            return math.nan
        try:
            return float(int(radix[2], base))
        except OverflowError:
            return math.inf
    if _DECIMAL.fullmatch(text) is None:
        return math.nan
    if "Infinity" in text:
        return -math.inf if text[0] == "-" else math.inf
    return float(text)


def _to_number(value: Any) -> float:
    """ECMAScript ``ToNumber`` of a JSON value."""
    if value is UNDEFINED:
        return math.nan
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        return _string_to_number(value)
    text = js_string(value)  # a list's text, "[object Object]" (NaN), or the TypeError of a 'toString' key
    return _string_to_number(text) if isinstance(value, list) else math.nan


def _truthy(value: Any) -> bool:
    if value is UNDEFINED or value is None or value is False:
        return False
    if isinstance(value, (int, float, str)):
        return bool(value)
    return True


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return js_string(value)


def _js_keys(obj: dict) -> list[str]:
    """An object's keys in JavaScript's order: array indexes ascending, then the rest as inserted."""
    if len(obj) < 2:
        return list(obj)
    indexes = [key for key in obj if _is_index(key)]
    if not indexes:
        return list(obj)
    indexes.sort(key=int)
    return indexes + [key for key in obj if not _is_index(key)]


def _utf16_length(text: str) -> int:
    return len(text) + sum(1 for char in text if char > "\uffff")


def _string_get(text: str, key: str) -> Any:
    if key == "length":
        return _utf16_length(text)
    if not _is_index(key):
        return UNDEFINED
    index = int(key)
    if text.isascii() or max(text) <= "\uffff":
        return text[index] if index < len(text) else UNDEFINED
    units = text.encode("utf-16-le", "surrogatepass")
    if 2 * index + 2 > len(units):
        return UNDEFINED
    return chr(int.from_bytes(units[2 * index:2 * index + 2], "little"))


def _get(value: Any, key: str) -> Any:
    """``value?.[key]`` for JSON data, own properties only."""
    if isinstance(value, dict):
        return value.get(key, UNDEFINED)
    if isinstance(value, list):
        if _is_index(key):
            index = int(key)
            return value[index] if index < len(value) else UNDEFINED
        return len(value) if key == "length" else UNDEFINED
    if isinstance(value, str):
        return _string_get(value, key)
    return UNDEFINED


_FLAT = (str, int, bool, type(None))


def _check_json(value: Any, where: str) -> None:
    """``DeltaError`` unless ``value`` is plain JSON data."""
    if type(value) is dict and all(type(item) in _FLAT for item in value.values()) \
            and all(type(key) is str for key in value):
        return  # the common case: a few strings (a streamed delta)
    stack = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str) or item is None or isinstance(item, (bool, int)):
            continue
        if isinstance(item, float):
            if math.isfinite(item):
                continue
            raise DeltaError("invalid_message", f"{at} is {item!r}, which JSON cannot carry")
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise DeltaError("invalid_message", f"{at} has a non-string key {key!r}")
                stack.append((child, f"{at}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{at}[{index}]") for index, child in enumerate(item))
        else:
            raise DeltaError("invalid_message", f"{at} is a {type(item).__name__}, which JSON cannot carry")


# ---- paths ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PathPart:
    """One ``.``-separated part of a ``delta_path`` as the client reads it."""

    raw: str
    key: str  # the property name (the whole part when it is a literal key)
    index: str | None  # a bracket's index as a property key ("01" → "1"), or None
    literal: bool  # the part does not match ``name`` / ``name[n]``: used as a key as it stands


def _bracket_key(digits: str) -> str:
    """``parseInt(digits)`` as a property key."""
    number = int(digits)
    return str(number) if number < 2**53 else js_number(number)


@lru_cache(maxsize=1024)
def parse_path(path: str) -> tuple[PathPart, ...]:
    """The parts of a ``delta_path``: ``items[0].name`` → ``items`` index ``0``, then ``name``."""
    parts = []
    for raw in path.split("."):
        match = _PART.fullmatch(raw)
        if match is None:
            parts.append(PathPart(raw, raw, None, True))
        else:
            parts.append(PathPart(raw, match[1], None if match[2] is None else _bracket_key(match[2]), False))
    return tuple(parts)


# ---- planning --------------------------------------------------------------------------------------

_HIDDEN, _LENGTH, _PATH = "hidden", "length", "path"


class _Loc:
    """Where a write lands: a path in the props (``list_len``/``index`` set when its parent is a list),
    a key of a list that is not an index (``hidden``), or a list's ``length``."""

    __slots__ = ("kind", "path", "list_len", "index", "text", "key")

    def __init__(self, kind: str, path: tuple | None, list_len: int | None, index: int | None, text: str,
                 key: str) -> None:
        self.kind, self.path, self.list_len, self.index, self.text, self.key = kind, path, list_len, index, text, key


class _Planner:
    """Runs the client's code for one message against a read-only state, recording write ops."""

    def __init__(self, name: str) -> None:
        self.id = name
        self.base = f"message '{name}'"
        self.notes: list[tuple[str, str, dict[str, Any]]] = []
        self.ops: list[tuple] = []

    def note(self, code: str, where: str | None = None, **details: Any) -> None:
        self.notes.append((code, self.base if where is None else f"{self.base} {where}", details))

    # -- locations ---------------------------------------------------------------------------------

    def locate(self, node: tuple, key: str, text: str) -> _Loc:
        """Where ``node[key] = ...`` writes; raises ``_Drop`` when the client throws."""
        path, value, at = node
        if value is UNDEFINED or value is None:
            raise _Drop(f"{at} does not exist, so the client cannot set {text} (TypeError)")
        if isinstance(value, dict):
            return _Loc(_PATH, None if path is None else (*path, key), None, None, text, key)
        if isinstance(value, list):
            if _is_index(key):
                index = int(key)
                return _Loc(_PATH, None if path is None else (*path, index), len(value), index, text, key)
            if path is None:
                return _Loc(_PATH, None, None, None, text, key)
            return _Loc(_LENGTH if key == "length" else _HIDDEN, path, len(value), None, text, key)
        raise _Drop(f"{at} is a {js_type(value)}, so the client cannot set {text} (TypeError)")

    def ensure(self, node: tuple, key: str, make_list: bool, text: str, made_object_key: str | None) -> tuple:
        """``node[key] = node[key] || ({} or [])``; returns the node for ``node[key]``."""
        path, value, at = node
        if value is UNDEFINED or value is None:
            raise _Drop(f"{at} does not exist, so the client cannot reach {text} (TypeError)")
        current = _get(value, key)
        if _truthy(current):
            if not isinstance(value, (dict, list)):
                raise _Drop(f"{at} is a {js_type(value)}, so the client cannot set {text} (TypeError)")
            loc = self.locate(node, key, text)
            return (loc.path if loc.kind == _PATH else None, current, text)
        loc = self.locate(node, key, text)
        if loc.kind == _LENGTH:
            raise _Drop(f"the client cannot use the length of {at} as a container (RangeError)")
        fresh: Any = [] if make_list else {}
        if loc.kind == _HIDDEN:
            self.note("list_key_ignored", text, path=text, key=key)
            return (None, fresh, text)
        if loc.path is None:
            return (None, fresh, text)
        if current is not UNDEFINED:
            self.note("path_overwrote", text, path=text, kind=js_type(current))
        if made_object_key is not None:
            self.note("path_made_object", f"{text}.{made_object_key}", path=f"{text}.{made_object_key}",
                      key=made_object_key)
        self.padded(loc)
        self.ops.append(("ensure", loc.path, make_list))
        return (loc.path, fresh, text)

    def padded(self, loc: _Loc) -> None:
        if loc.list_len is not None and loc.index is not None and loc.index > loc.list_len:
            self.note("list_padded", loc.text, path=loc.text, length=loc.list_len)

    # -- writes ------------------------------------------------------------------------------------

    def put(self, loc: _Loc, value: Any) -> None:
        if loc.kind == _HIDDEN:
            self.note("list_key_ignored", loc.text, path=loc.text, key=loc.key)
            return
        if loc.path is None:
            return
        if loc.kind == _LENGTH:
            number = _to_number(value)
            if not (math.isfinite(number) and number >= 0 and number == int(number) and number <= 2**32 - 1):
                raise _Drop(f"the client cannot set {loc.text} to {js_string(value)} (RangeError)")
            if int(number) > loc.list_len:  # type: ignore[operator]
                self.note("list_padded", loc.text, path=loc.text, length=loc.list_len)
            self.ops.append(("length", loc.path, int(number)))
            return
        self.padded(loc)
        self.ops.append(("put", loc.path, value))

    def keep(self, loc: _Loc, target: Any) -> None:
        """``node[key] = target``, where ``target`` was read at ``loc``: nothing changes (past the end of a
        list it adds a hole). A primitive may have been read through a value the walk replaced (the
        ``length`` of ``""``), so it is written again."""
        if target is not UNDEFINED and not isinstance(target, (dict, list)):
            self.put(loc, target)
        elif loc.kind == _PATH and loc.path is not None and loc.list_len is not None and loc.index >= loc.list_len:
            self.padded(loc)
            self.ops.append(("keep", loc.path))

    # -- merge (deepMerge) -------------------------------------------------------------------------

    def merge(self, loc: _Loc, target: Any, source: Any) -> None:
        """Write ``deepMerge(target, source)`` at ``loc`` (``target`` is what ``loc`` holds)."""
        if loc.kind == _HIDDEN:
            self.note("list_key_ignored", loc.text, path=loc.text, key=loc.key)
            return
        if source is UNDEFINED:
            self.note("missing_value", loc.text, path=loc.text, effect="the value there is kept")
            self.keep(loc, target)
        elif not _truthy(source):
            self.note("merge_ignored", loc.text, path=loc.text, value=_json_text(source))
            self.keep(loc, target)
        elif not _truthy(target) or not isinstance(target, (dict, list)) or not isinstance(source, (dict, list)):
            self.put(loc, source)
        else:
            if isinstance(target, list) or isinstance(source, list):
                self.note("merge_list_by_index", loc.text, path=loc.text, source=js_type(source), target=js_type(target))
            self.merge_children(loc.path, target, source, loc.text)

    def merge_children(self, path: tuple | None, target: Any, source: Any, text: str) -> None:
        """The loop of ``deepMerge`` over the source's keys, writing into (a copy of) ``target``."""
        is_list = isinstance(target, list)
        length = len(target) if is_list else 0
        keys = [str(i) for i in range(len(source))] if isinstance(source, list) else _js_keys(source)
        for key in keys:
            value = source[int(key)] if isinstance(source, list) else source[key]
            if is_list:
                at = f"{text}[{key}]"
                if _is_index(key):
                    index = int(key)
                    child = _Loc(_PATH, None if path is None else (*path, index), length, index, at, key)
                    current = target[index] if index < len(target) else UNDEFINED
                elif path is None:
                    child = _Loc(_PATH, None, None, None, at, key)
                    current = length if key == "length" else UNDEFINED
                elif key == "length":
                    child = _Loc(_LENGTH, path, length, None, at, key)
                    current = length
                else:
                    child = _Loc(_HIDDEN, path, length, None, at, key)
                    current = UNDEFINED
            else:
                at = f"{text}.{key}"
                child = _Loc(_PATH, None if path is None else (*path, key), None, None, at, key)
                current = target.get(key, UNDEFINED)
            before = len(self.ops)
            if isinstance(value, dict) or value is None:
                self.merge(child, current, value)
            else:
                self.put(child, value)
            if is_list and len(self.ops) > before:
                op = self.ops[-1]
                if child.kind == _LENGTH and op[0] == "length":
                    length = op[2]
                elif child.index is not None and op[0] in ("put", "keep") and child.index >= length:
                    length = child.index + 1

    # -- the actions ---------------------------------------------------------------------------------

    def delta(self, action: str, base: dict, props: dict, raw_path: str) -> None:
        """The ops of a delta onto ``base`` (``{}`` for a fresh entry); raises ``_Drop``."""
        if action not in KNOWN_ACTIONS:
            self.note("invalid_action", action=action)
        elif raw_path:
            self.path_delta(action, base, props, raw_path)
        else:
            self.whole_delta(action, base, props)

    def path_delta(self, action: str, base: dict, props: dict, raw_path: str) -> None:
        """A delta at ``delta_path``: what the client reads there (getValueByPath), what it writes, where
        (setValueByPath's walk), then the write."""
        parts = parse_path(raw_path)
        for part in parts:
            if part.literal and ("[" in part.raw or "]" in part.raw or part.raw == ""):
                self.note("path_literal", f"props.{raw_path}", part=part.raw)
        full = f"props.{raw_path}"
        target, sent = _read_path(base, parts), _read_path(props, parts)
        spec = self.path_write(action, target, sent, full)
        loc = self.walk(base, parts, full)
        if spec[0] == "put":
            self.put(loc, spec[1])
        elif spec[0] == "merge":
            self.merge(loc, spec[1], spec[2])
        elif loc.kind == _PATH and loc.path is not None:  # concat / extend: the target's own place
            self.ops.append((spec[0], loc.path, spec[1]))

    def path_write(self, action: str, target: Any, sent: Any, full: str) -> tuple:
        """What a path delta writes: ``("concat", text)``, ``("extend", items)``, ``("put", value)`` or
        ``("merge", target, sent)``."""
        if action == "merge":
            return ("merge", target, sent)
        if action != "append":  # replace, set
            if sent is UNDEFINED:
                self.note("missing_value", full, path=full, effect=_removes(target))
            return ("put", sent)
        if isinstance(target, str):
            if isinstance(sent, str):
                return ("concat", sent)
            if sent is UNDEFINED:
                self.note("missing_value", full, path=full, effect='appends the text "undefined"')
                return ("concat", "undefined")
            text = js_string(sent)
            self.note("append_coerced", full, kind=js_type(sent), path=full, text=text)
            return ("concat", text)
        if isinstance(target, list):
            if sent is UNDEFINED:
                self.note("missing_value", full, path=full, effect="adds null to the list")
                return ("extend", [None])
            return ("extend", sent if isinstance(sent, list) else [sent])
        if sent is UNDEFINED:
            self.note("missing_value", full, path=full, effect=_removes(target))
        elif target is not UNDEFINED and target is not None:
            self.note("append_replaced", full, kind=js_type(target), path=full)
        return ("put", sent)

    def walk(self, base: dict, parts: tuple[PathPart, ...], full: str) -> _Loc:
        """setValueByPath: walk to the last part, making what is missing; where the write lands."""
        node: tuple = ((), base, "props")
        text = "props"
        for i, part in enumerate(parts[:-1]):
            following = parts[i + 1]
            made_key = following.key if (not following.literal and following.index is None
                                         and _DIGITS.fullmatch(following.key)) else None
            if part.index is not None:
                holder = self.ensure(node, part.key, True, f"{text}.{part.key}", None)
                text = f"{text}.{part.raw}"
                node = _element(holder, part.index, text)
            else:
                text = f"{text}.{part.raw}"
                node = self.ensure(node, part.key, False, text, made_key)
        last = parts[-1]
        if last.index is not None:
            holder = self.ensure(node, last.key, True, f"{text}.{last.key}", None)
            return self.locate(holder, last.index, full)
        return self.locate(node, last.key, full)

    def whole_delta(self, action: str, base: dict, props: dict) -> None:
        if action == "replace":
            self.ops.append(("props", props))
        elif action == "merge":
            self.merge_children((), base, props, "props")
        elif action == "set":
            for key in _js_keys(props):
                self.ops.append(("put", (key,), props[key]))
        else:  # append, key by key
            for key in _js_keys(props):
                value, current, at = props[key], base.get(key, UNDEFINED), f"props.{key}"
                if isinstance(current, str):
                    if isinstance(value, str):
                        text = value
                    else:
                        text = js_string(value)
                        self.note("append_coerced", at, kind=js_type(value), path=at, text=text)
                    self.ops.append(("concat", (key,), text))
                elif isinstance(current, list):
                    self.ops.append(("extend", (key,), value if isinstance(value, list) else [value]))
                else:
                    if current is not UNDEFINED and current is not None:
                        self.note("append_replaced", at, kind=js_type(current), path=at)
                    self.ops.append(("put", (key,), value))


def _read_path(obj: Any, parts: tuple[PathPart, ...]) -> Any:
    """getValueByPath: the value at the path's parts (``UNDEFINED`` where there is none)."""
    for part in parts:
        obj = _get(obj, part.key)
        if part.index is not None:
            obj = _get(obj, part.index)
    return obj


def _element(holder: tuple, index: str, text: str) -> tuple:
    """The walk's node for ``holder[index]`` (a bracket part): its path in the props when it has one."""
    h_path, h_value, _ = holder
    element = _get(h_value, index)
    if h_path is None or not isinstance(h_value, (dict, list)):
        e_path = None
    elif isinstance(h_value, dict):
        e_path = (*h_path, index)
    else:
        e_path = (*h_path, int(index)) if _is_index(index) else None
    return (e_path, element, text)


def _removes(target: Any) -> str:
    return "nothing is written there" if target is UNDEFINED else "the value there is removed"


def _invalid(message: str) -> DeltaError:
    return DeltaError("invalid_message", message)


def _envelope(message: Any, checked: bool = False) -> tuple[str, dict, str | None, bool, bool, str, str]:
    """Check the message's own fields (same order as the JavaScript engine). ``checked``: the message
    comes from ``normalize_message``, which already made its props and metadata plain JSON."""
    if not isinstance(message, dict):
        raise _invalid(f"message must be an object, got {js_type(message)}")
    mtype = message.get("type")
    if not isinstance(mtype, str):
        raise _invalid(f"message.type must be a string, got {mtype!r}")
    props = message.get("props")
    if props is None:
        props = {}
    elif not isinstance(props, dict):
        raise _invalid(f"message.props must be an object, got {js_type(props)}")
    elif not checked:
        _check_json(props, "message.props")
    msg_id = message.get("id")
    if msg_id is not None and not isinstance(msg_id, str):
        raise _invalid(f"message.id must be a string, got {msg_id!r}")
    flags = []
    for flag in ("delta", "done"):
        value = message.get(flag)
        if value is not None and not isinstance(value, bool):
            raise _invalid(f"message.{flag} must be a boolean, got {value!r}")
        flags.append(bool(value))
    action = message.get("delta_action")
    if action is not None and not isinstance(action, str):
        raise _invalid(f"message.delta_action must be a string, got {action!r}")
    raw_path = message.get("delta_path")
    if raw_path is not None and not isinstance(raw_path, str):
        raise _invalid(f"message.delta_path must be a string, got {raw_path!r}")
    group_id = message.get("group_id")
    if group_id is not None and not isinstance(group_id, str):
        raise _invalid(f"message.group_id must be a string, got {group_id!r}")
    metadata = message.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise _invalid(f"message.metadata must be an object, got {js_type(metadata)}")
        if not checked:
            _check_json(metadata, "message.metadata")
    return mtype, props, msg_id or None, flags[0], flags[1], action or "append", raw_path or ""


def _check_state(state: Any) -> None:
    if not (isinstance(state, dict) and isinstance(state.get("order"), list)
            and isinstance(state.get("messages"), dict)):
        raise DeltaError("invalid_state", "state must be {'order': [...], 'messages': {...}}")


def plan_message(state: State, message: Any, report: Report | None = None, *, checked: bool = False) -> Change:
    """Check ``message`` against ``state`` without changing either; raises ``DeltaError``.

    ``checked=True`` (``Output``): the message is ``normalize_message``'s, already plain JSON, so the walk
    over its props is not done a second time on every delta.

    Every diagnostic is passed to ``report(code, where, **details)`` before this returns (so a strict
    ``report`` that raises stops the message before anything of it is applied).
    """
    _check_state(state)
    mtype, props, msg_id, delta, done, action, raw_path = _envelope(message, checked)
    shared = msg_id is None
    if shared:
        msg_id = SHARED_SLOT
    entry = _entry(state["messages"], msg_id)
    if delta and not shared and entry is not None:
        change = _text_onto_text(entry, message, msg_id, mtype, props, done, action, raw_path)
        if change is not None:
            return change
    plan = _Planner(msg_id)
    if shared and entry is not None:
        plan.note("shared_slot", count="2 or more")
    closed = entry is not None and _truthy(entry.get("done", UNDEFINED))
    if closed:
        plan.note("after_done", id=msg_id)
    if delta:
        fresh = entry is None or closed or (_truthy(message.get("type_change", UNDEFINED)) and not shared)
        change = _plan_delta(plan, entry, fresh, message, mtype, props, done, action, raw_path)
    else:
        change = _plan_whole(plan, entry, message, mtype, props, done)
    _release(plan, report)
    return change


def _entry(messages: dict, msg_id: str) -> dict | None:
    """The state's entry for ``msg_id`` (``None`` when it has none); ``DeltaError`` when it is not one."""
    entry = messages.get(msg_id)
    if entry is not None and not (isinstance(entry, dict) and isinstance(entry.get("props"), dict)
                                  and isinstance(entry.get("type"), str)):
        raise DeltaError("invalid_state", f"state entry {msg_id!r} is not {{'id', 'type', 'props', 'done'}}")
    return entry


def _text_onto_text(entry: dict, message: dict, msg_id: str, mtype: str, props: dict, done: bool, action: str,
                    raw_path: str) -> Change | None:
    """The stream's own case, nothing to check or report: a string appended onto an open entry's string
    at a plain key, the type unchanged. ``None`` for anything else."""
    if (action == "append" and (mtype == entry["type"] or not mtype) and "type_change" not in message
            and not _truthy(entry.get("done", UNDEFINED)) and _PLAIN.fullmatch(raw_path)):
        sent, target = props.get(raw_path), entry["props"].get(raw_path)
        if type(sent) is str and type(target) is str:
            return Change(msg_id, False, entry["type"], "delta", False, (("concat", (raw_path,), sent),), done,
                          message.get("group_id"), message.get("metadata"))
    return None


def _plan_whole(plan: _Planner, entry: dict | None, message: dict, mtype: str, props: dict, done: bool) -> Change:
    """A message that is not a delta: its props replace the entry's, except a bare done, which keeps them
    (the seed's example)."""
    msg_id, group_id, metadata = plan.id, message.get("group_id"), message.get("metadata")
    if done and not props and entry is not None:
        if entry["props"]:
            plan.note("bare_done_kept", id=msg_id)
        return Change(msg_id, False, mtype, "close", False, None, True, group_id, metadata)
    return Change(msg_id, entry is None, mtype, "put", False, props, done, group_id, metadata)


def _plan_delta(plan: _Planner, entry: dict | None, fresh: bool, message: dict, mtype: str, props: dict,
                done: bool, action: str, raw_path: str) -> Change:
    """A delta, onto empty props when ``fresh``: its ops, the type it leaves, or a drop (the client throws)."""
    msg_id, group_id, metadata = plan.id, message.get("group_id"), message.get("metadata")
    is_new = entry is None
    if is_new:
        plan.note("unknown_id", id=msg_id)
    base = {} if fresh else entry["props"]  # type: ignore[index]
    base_type = mtype if fresh else entry["type"]  # type: ignore[index]
    try:
        plan.delta(action, base, props, raw_path)
    except _Drop as drop:
        plan.notes = []
        plan.note("dropped", reason=drop.reason)
        return Change(msg_id, is_new, base_type, "drop", False, (), done, group_id, metadata)
    new_type = base_type
    if mtype and mtype != base_type and not _truthy(message.get("type_change", UNDEFINED)):
        plan.note("type_changed", id=msg_id, new=mtype, old=base_type)
        new_type = mtype
    return Change(msg_id, is_new, new_type, "delta", fresh, tuple(plan.ops), done, group_id, metadata)


def _release(plan: _Planner, report: Report | None) -> None:
    if report is not None:
        for code, where, details in plan.notes:
            report(code, where, **details)


# ---- commit: writes only; every check already passed in plan_message -------------------------------


def _write(parent: Any, key: Any, value: Any) -> None:
    """``parent[key] = value`` with JSON's view of ``undefined`` (a deleted key, a null element)."""
    if isinstance(parent, list):
        if key < len(parent):
            parent[key] = None if value is UNDEFINED else value
        else:
            parent.extend([None] * (key - len(parent)))
            parent.append(None if value is UNDEFINED else value)
    elif value is UNDEFINED:
        parent.pop(key, None)
    else:
        parent[key] = value


def _run_ops(entry: dict, ops: tuple) -> None:
    for op in ops:
        kind = op[0]
        if kind == "props":
            entry["props"] = clone_json(op[1])
            continue
        if kind == "length":
            items = entry["props"]
            for key in op[1]:
                items = items[key]
            if op[2] < len(items):
                del items[op[2]:]
            else:
                items.extend([None] * (op[2] - len(items)))
            continue
        path = op[1]
        parent: Any = entry["props"]
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        if kind == "concat":
            text = parent[key]
            parent[key] = None  # drop the container's reference so CPython can grow ``text`` in place
            text += op[2]
            parent[key] = text
        elif kind == "put":
            _write(parent, key, op[2] if op[2] is UNDEFINED else clone_json(op[2]))
        elif kind == "ensure":
            _write(parent, key, [] if op[2] else {})
        elif kind == "extend":
            parent[key].extend(clone_json(op[2]))
        elif key >= len(parent):  # keep: past the end of a list it leaves a hole
            _write(parent, key, UNDEFINED)


def commit_change(state: State, change: Change) -> None:
    """Write a planned change into ``state`` in place (the state it was planned on, or an equal one)."""
    if change.mode == "drop":
        return
    messages = state["messages"]
    if change.is_new:
        entry = {"id": change.id, "type": change.type, "props": {}, "done": False}
        state["order"].append(change.id)
        messages[change.id] = entry
    else:
        entry = messages[change.id]
    entry["type"] = change.type
    if change.mode == "put":
        entry["props"] = clone_json(change.value)
    elif change.mode == "delta":
        if change.fresh:
            entry["props"] = {}
        _run_ops(entry, change.value)
    entry["done"] = change.done
    if change.group_id is not None:
        entry["group_id"] = change.group_id
    if change.metadata is not None:
        entry["metadata"] = clone_json(change.metadata)


def apply_message_in_place(state: State, message: Any, report: Report | None = None) -> str:
    """Apply ``message`` to a state the caller owns; returns the message's id.

    Costs the size of the message (plus the touched string/list growing), not the state's. On error
    raises ``DeltaError`` and the state is unchanged.
    """
    change = plan_message(state, message, report)
    commit_change(state, change)
    return change.id


def apply_message(state: State, message: Any, report: Report | None = None) -> State:
    """A new state with ``message`` applied; ``state`` and ``message`` are never mutated."""
    change = plan_message(state, message, report)
    if change.mode == "drop":
        return {"order": list(state["order"]), "messages": dict(state["messages"])}
    messages = dict(state["messages"])
    if not change.is_new:
        messages[change.id] = clone_json(messages[change.id])
    new = {"order": list(state["order"]), "messages": messages}
    commit_change(new, change)
    return new
