"""The delta engine: how a stream of output messages folds into a state (DESIGN.md "Output messages
and deltas"). ``js/src/delta.js`` implements the same rules; ``tests/vectors/delta.json`` binds both.

State: ``{"order": [id, ...], "messages": {id: {"id", "type", "props", "done", "group_id"?,
"metadata"?}}}``.

Every message is first *planned* against a state (all checks that can fail, reading only) and then
*committed* (writes only, cannot fail). So a bad message never half-applies, and a caller that owns its
state (``Output``, the widget) can commit in place at a cost of the message's size, not the state's.
``apply_message`` is the pure form: it returns a new state and shares unchanged entries with the old one
(treat states as immutable values).

Decisions beyond the seed, shared with the JavaScript engine:
- A message without ``id`` gets ``"#<n>"``, n = ``len(order)``; if that id is taken, n counts up.
- A delta for an id the state does not hold is an error (``unknown_id``): there is nothing to update,
  and a typo'd id should surface where it was sent.
- A non-delta message replaces ``type`` and ``props``; a delta keeps the entry's ``type``.
- A ``done`` message with no props and no delta only closes (props kept); otherwise its props/delta are
  applied first. Any later message for a closed id is an error (``closed``).
- ``group_id`` / ``metadata`` on a message replace the entry's; when absent the entry keeps its own.
- A path walks dicts by key and lists by decimal index (``items.0`` = ``items[0]``); missing dict keys on
  the way are created as dicts; a list index must exist (no growing lists by index).
- ``append`` onto a missing or ``null`` target sets it; ``str + str`` concatenates; onto a list extends
  (a non-list value is wrapped); anything else is ``type_mismatch``.

Error codes: ``invalid_state``, ``invalid_message``, ``invalid_action``, ``bad_path``, ``closed``,
``unknown_id``, ``missing_value``, ``bad_index``, ``not_container``, ``type_mismatch``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass
from typing import Any

from .messages import DELTA_ACTIONS, clone_json, is_bare_close

State = dict[str, Any]

_SEGMENT = re.compile(r"([^\[\]]*)((?:\[[0-9]+\])*)")
_BRACKET = re.compile(r"\[([0-9]+)\]")
_INDEX = re.compile(r"[0-9]+")
_MISSING: Any = object()


class DeltaError(ValueError):
    """A message that cannot be applied to a state; ``code`` says why (see the module docstring)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Change:
    """A checked message, ready to commit: what to write, where, for which id."""

    id: str
    is_new: bool
    type: str
    mode: str  # "put" (props replaced), "close" (bare done), or a delta action
    path: tuple[str, ...] | None
    value: Any  # the full props ("put"), or the sent value / sent props (delta)
    done: bool
    group_id: str | None
    metadata: dict[str, Any] | None


def new_state() -> State:
    """An empty state."""
    return {"order": [], "messages": {}}


@lru_cache(maxsize=1024)
def parse_path(path: str) -> tuple[str, ...]:
    """``items.0.name`` and ``items[0].name`` both give ``("items", "0", "name")``."""
    segments: list[str] = []
    for part in path.split("."):
        match = _SEGMENT.fullmatch(part)
        if match is None or part == "":
            raise DeltaError("bad_path", f"delta_path {path!r} is not a dotted path (bad part {part!r})")
        if match[1]:
            segments.append(match[1])
        segments.extend(_BRACKET.findall(match[2]))
    return tuple(segments)


def _where(path: tuple[str, ...], upto: int) -> str:
    return ".".join(("props", *path[:upto]))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "object", list: "list", str: "string", bool: "boolean"}.get(type(value), type(value).__name__)


def _list_index(segment: str, items: list, path: tuple[str, ...], upto: int) -> int:
    if _INDEX.fullmatch(segment) is None or int(segment) >= len(items):
        raise DeltaError("bad_index", f"{_where(path, upto)}: no index {segment!r} in a list of {len(items)}")
    return int(segment)


def _find(props: dict, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in a state's props, or ``_MISSING`` when a dict key on the way is absent."""
    current: Any = props
    for depth, segment in enumerate(path):
        if isinstance(current, dict):
            if segment not in current:
                return _MISSING
            current = current[segment]
        elif isinstance(current, list):
            current = current[_list_index(segment, current, path, depth)]
        else:
            raise DeltaError("not_container",
                             f"{_where(path, depth)} is a {_kind(current)}, not an object or a list")
    return current


def _read_sent(props: dict, path: tuple[str, ...], raw_path: str) -> Any:
    """The value at ``path`` in the sent props; any failure is ``missing_value``."""
    current: Any = props
    for segment in path:
        if isinstance(current, dict) and segment in current:
            current = current[segment]
        elif isinstance(current, list) and _INDEX.fullmatch(segment) and int(segment) < len(current):
            current = current[int(segment)]
        else:
            raise DeltaError("missing_value", f"message.props has no value at delta_path {raw_path!r}")
    return current


def _check_append(target: Any, value: Any, where: str) -> None:
    if target is _MISSING or target is None or isinstance(target, list):
        return
    if isinstance(target, str) and isinstance(value, str):
        return
    raise DeltaError("type_mismatch", f"cannot append a {_kind(value)} onto the {_kind(target)} at {where}")


def _invalid(message: str) -> DeltaError:
    return DeltaError("invalid_message", message)


def _envelope(message: Any) -> tuple[str, dict, str | None, bool, bool, str, tuple[str, ...] | None]:
    """Check the message's own fields (same order as the JavaScript engine)."""
    if not isinstance(message, dict):
        raise _invalid(f"message must be an object, got {_kind(message)}")
    mtype = message.get("type")
    if not isinstance(mtype, str) or mtype == "":
        raise _invalid(f"message.type must be a non-empty string, got {mtype!r}")
    props = message.get("props")
    if props is None:
        props = {}
    elif not isinstance(props, dict):
        raise _invalid(f"message.props must be an object, got {_kind(props)}")
    msg_id = message.get("id")
    if msg_id is not None and (not isinstance(msg_id, str) or msg_id == ""):
        raise _invalid(f"message.id must be a non-empty string, got {msg_id!r}")
    flags = []
    for flag in ("delta", "done"):
        value = message.get(flag)
        if value is not None and not isinstance(value, bool):
            raise _invalid(f"message.{flag} must be a boolean, got {value!r}")
        flags.append(bool(value))
    action = message.get("delta_action")
    if action is None:
        action = "append"
    elif not isinstance(action, str) or action not in DELTA_ACTIONS:
        raise DeltaError("invalid_action", f"message.delta_action must be one of {', '.join(DELTA_ACTIONS)}, "
                                           f"got {action!r}")
    raw_path = message.get("delta_path")
    if raw_path is not None and not isinstance(raw_path, str):
        raise DeltaError("bad_path", f"message.delta_path must be a string, got {raw_path!r}")
    path = parse_path(raw_path) if raw_path else None
    group_id = message.get("group_id")
    if group_id is not None and not isinstance(group_id, str):
        raise _invalid(f"message.group_id must be a string, got {group_id!r}")
    metadata = message.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise _invalid(f"message.metadata must be an object, got {_kind(metadata)}")
    return mtype, props, msg_id, flags[0], flags[1], action, path


def _check_state(state: Any) -> None:
    if not (isinstance(state, dict) and isinstance(state.get("order"), list)
            and isinstance(state.get("messages"), dict)):
        raise DeltaError("invalid_state", "state must be {'order': [...], 'messages': {...}}")


def plan_message(state: State, message: Any) -> Change:
    """Check ``message`` against ``state`` without changing either; raises ``DeltaError``."""
    _check_state(state)
    mtype, props, msg_id, delta, done, action, path = _envelope(message)
    messages = state["messages"]
    if msg_id is None:
        n = len(state["order"])
        while f"#{n}" in messages:
            n += 1
        msg_id = f"#{n}"
    entry = messages.get(msg_id)
    if entry is not None and not (isinstance(entry, dict) and isinstance(entry.get("props"), dict)
                                  and isinstance(entry.get("type"), str)):
        raise DeltaError("invalid_state", f"state entry {msg_id!r} is not {{'id', 'type', 'props', 'done'}}")
    if entry is not None and entry.get("done"):
        raise DeltaError("closed", f"message {msg_id!r} is done; it takes no more messages")
    extras = (message.get("group_id"), message.get("metadata"))
    if not delta:
        close_only = entry is not None and is_bare_close(message)
        return Change(msg_id, entry is None, mtype, "close" if close_only else "put", None, props, done, *extras)
    if entry is None:
        raise DeltaError("unknown_id", f"delta for message {msg_id!r}, which was never sent")
    base = entry["props"]
    if path is None:
        if action == "append":
            for key, value in props.items():
                _check_append(base.get(key, _MISSING), value, f"props.{key}")
        return Change(msg_id, False, entry["type"], action, None, props, done, *extras)
    value = _read_sent(props, path, message["delta_path"])
    target = _find(base, path)
    if action == "append":
        _check_append(target, value, _where(path, len(path)))
    return Change(msg_id, False, entry["type"], action, path, value, done, *extras)


# ---- commit: writes only; every check already passed in plan_message -------------------------------


def _merge_into(target: Any, value: Any) -> Any:
    """Recursive merge of objects (in place on ``target``); anything else: ``value`` wins."""
    if isinstance(target, dict) and isinstance(value, dict):
        for key, item in value.items():
            target[key] = _merge_into(target[key], item) if key in target else clone_json(item)
        return target
    return clone_json(value)


def _append_at(parent: Any, key: Any, value: Any) -> None:
    """Append ``value`` onto ``parent[key]``; ``parent`` is a dict (any key) or a list (valid index)."""
    target = parent.get(key) if isinstance(parent, dict) else parent[key]
    if isinstance(target, list):
        if isinstance(value, list):
            target.extend(clone_json(value))
        else:
            target.append(clone_json(value))
    elif isinstance(target, str):
        text = target
        target = None
        parent[key] = None  # drop the container's reference so CPython can grow ``text`` in place
        text += value
        parent[key] = text
    else:  # missing or null
        parent[key] = clone_json(value)


def _slot(props: dict, path: tuple[str, ...]) -> tuple[Any, Any]:
    """The container holding ``path``'s last segment, and that segment as a key; makes missing dicts."""
    current: Any = props
    for segment in path[:-1]:
        if isinstance(current, list):
            current = current[int(segment)]
        else:
            if segment not in current:
                current[segment] = {}
            current = current[segment]
    last = path[-1]
    return current, int(last) if isinstance(current, list) else last


def _apply_delta(entry: dict, change: Change) -> None:
    props = entry["props"]
    if change.path is None:
        if change.mode == "append":
            for key, value in change.value.items():
                _append_at(props, key, value)
        elif change.mode == "replace":
            entry["props"] = clone_json(change.value)
        elif change.mode == "merge":
            _merge_into(props, change.value)
        else:  # set
            for key, value in change.value.items():
                props[key] = clone_json(value)
        return
    parent, key = _slot(props, change.path)
    if change.mode == "append":
        _append_at(parent, key, change.value)
    elif change.mode == "merge":
        current = parent.get(key, _MISSING) if isinstance(parent, dict) else parent[key]
        parent[key] = clone_json(change.value) if current is _MISSING else _merge_into(current, change.value)
    else:  # replace, set
        parent[key] = clone_json(change.value)


def commit_change(state: State, change: Change) -> None:
    """Write a planned change into ``state`` in place (the state must be the one it was planned on)."""
    messages = state["messages"]
    if change.is_new:
        entry = {"id": change.id, "type": change.type, "props": {}, "done": False}
        state["order"].append(change.id)
        messages[change.id] = entry
    else:
        entry = messages[change.id]
    if change.mode == "put":
        entry["type"] = change.type
        entry["props"] = clone_json(change.value)
    elif change.mode != "close":
        _apply_delta(entry, change)
    if change.done:
        entry["done"] = True
    if change.group_id is not None:
        entry["group_id"] = change.group_id
    if change.metadata is not None:
        entry["metadata"] = clone_json(change.metadata)


def apply_message_in_place(state: State, message: Any) -> str:
    """Apply ``message`` to a state the caller owns; returns the message's id.

    Costs the size of the message (plus the touched string/list growing), not the state's. On error
    raises ``DeltaError`` and the state is unchanged.
    """
    change = plan_message(state, message)
    commit_change(state, change)
    return change.id


def apply_message(state: State, message: Any) -> State:
    """A new state with ``message`` applied; ``state`` and ``message`` are never mutated."""
    change = plan_message(state, message)
    messages = dict(state["messages"])
    if not change.is_new:
        messages[change.id] = clone_json(messages[change.id])
    new = {"order": list(state["order"]), "messages": messages}
    commit_change(new, change)
    return new
