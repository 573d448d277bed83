"""The ops waiting for the next batch, in which a run of string appends to one output message folds.

Why: a model streams one tiny ``append`` delta per token, and a batch leaves at most every 30 ms;
sending each delta as its own op would cost the comm (and the page) per token. So consecutive string
appends to one output message's top-level prop become one ``out`` op standing where the first of them
stood, even when appends to other messages interleave (several streams at once). Per delta this costs
O(1): the text joins a list; the list is joined and applied to the state once, when the fold ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .protocol_types import Op, OutOp, OutputEntry

_APPEND_KEYS = frozenset({"id", "type", "props", "delta", "delta_path", "delta_action"})

ALL = object()
"""``end_folds(ALL)``: end every fold."""


class _Fold:
    """Consecutive string appends to one output message's top-level prop, not yet applied."""

    __slots__ = ("id", "type", "key", "parts", "index")

    def __init__(self, msg_id: str, msg_type: str, key: str, text: str, index: int) -> None:
        self.id = msg_id
        self.type = msg_type
        self.key = key
        self.parts = [text]
        """The appended strings; the first is already applied to the state (it opened the fold)."""
        self.index = index
        """Where the fold stands in the queue (its op replaces the placeholder there)."""

    def op(self) -> OutOp:
        return {"op": "out", "message": {
            "id": self.id, "type": self.type, "props": {self.key: "".join(self.parts)},
            "delta": True, "delta_path": self.key, "delta_action": "append"}}

    def rest(self) -> dict[str, Any]:
        """The appends not yet applied to the state, as one message."""
        return {"id": self.id, "type": self.type, "props": {self.key: "".join(self.parts[1:])},
                "delta": True, "delta_path": self.key, "delta_action": "append"}


def string_append(message: dict[str, Any], key: str) -> str | None:
    """The text of ``message`` when it is a plain string append onto the top-level prop ``key`` (only
    the append fields, one prop), else None: the only kind of message a fold takes in."""
    if not message.get("delta") or not message.keys() <= _APPEND_KEYS \
            or message.get("delta_action", "append") != "append":
        return None
    props = message.get("props")
    if type(props) is not dict or len(props) != 1:
        return None
    text = props.get(key)
    return text if type(text) is str else None


class FoldingQueue:
    """Ops queued for the next batch; open folds are placeholders until ``end_folds`` or ``take``.

    ``apply(message)`` writes a fold's not-yet-applied text into the owner's state when the fold ends
    (the owner applied the fold's first append itself, before ``push_output``). Not thread-safe: the
    owner holds its lock.
    """

    __slots__ = ("_ops", "_folds", "_apply")

    def __init__(self, apply: Callable[[dict[str, Any]], None]) -> None:
        self._ops: list[Any] = []  # Op dicts and _Fold placeholders, in order
        self._folds: dict[str, dict[str, _Fold]] = {}
        """Open folds by output id, then prop."""
        self._apply = apply

    def __bool__(self) -> bool:
        return bool(self._ops)

    def try_fold(self, message: dict[str, Any]) -> bool:
        """The O(1) path: take ``message`` into an open fold when it is one more string append to the
        same message and prop (nothing is applied yet). False: the caller applies it and calls
        ``push_output``."""
        try:
            folds = self._folds.get(message.get("id"))  # type: ignore[arg-type]
        except TypeError:  # an unhashable id: not ours to judge here
            return False
        if folds is None:
            return False
        key = message.get("delta_path")
        fold = folds.get(key) if type(key) is str else None
        if fold is None or message.get("type", fold.type) != fold.type:
            return False
        text = string_append(message, key)  # type: ignore[arg-type]
        if text is None:
            return False
        fold.parts.append(text)
        return True

    def try_append(self, msg_id: str, mtype: str, key: str, text: str) -> bool:
        """``try_fold`` for a text append already checked to be the stream's own shape (``Output``'s
        fast path: a plain string append onto the top-level prop ``key``), given as its parts: True when
        an open fold of that id, prop and type took it in."""
        folds = self._folds.get(msg_id)
        if folds is None:
            return False
        fold = folds.get(key)
        if fold is None or fold.type != mtype:
            return False
        fold.parts.append(text)
        return True

    def push_output(self, message: dict[str, Any], stored: OutputEntry | None) -> None:
        """Queue ``message``, already applied to the state (``stored`` is its entry there now): it
        opens a fold when it is a plain string append onto a string of an open message."""
        key = message.get("delta_path")
        text = None
        if type(key) is str and key and "." not in key and "[" not in key and stored is not None \
                and not stored.get("done") and type(stored["props"].get(key)) is str:
            text = string_append(message, key)
        if text is None:
            self._ops.append({"op": "out", "message": message})
            return
        fold = _Fold(message["id"], stored["type"], key, text, len(self._ops))  # type: ignore[index,arg-type]
        self._folds.setdefault(message["id"], {})[key] = fold  # type: ignore[index]
        self._ops.append(fold)

    def push(self, op: Op) -> None:
        """Queue an op as it is (end the folds it must follow first)."""
        self._ops.append(op)

    def end_folds(self, msg_id: Any = ALL) -> None:
        """Apply the open folds' rest to the state and freeze them into ops: those of one output id
        (before another kind of message for it), or all of them (``ALL``: before anything else).
        The ops stay queued."""
        if msg_id is ALL:
            groups = list(self._folds.values())
            self._folds = {}
        else:
            group = self._folds.pop(msg_id, None) if isinstance(msg_id, str) else None
            groups = [] if group is None else [group]
        for group in groups:
            for fold in group.values():
                if len(fold.parts) > 1:
                    self._apply(fold.rest())
                self._ops[fold.index] = fold.op()

    def take(self) -> list[Op]:
        """End every fold and hand over the queued ops (the queue is then empty)."""
        self.end_folds()
        ops, self._ops = self._ops, []
        return ops
