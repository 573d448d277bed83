"""``LiveState``: a delta state its owner updates in place, with streamed text kept as parts.

Why: a stream appends to one text prop thousands of times. Concatenating onto the accumulated string
copies it on every delta unless CPython happens to own the only reference and can grow it in place;
keeping the appended pieces and joining them when the state is read makes every append O(1) whatever
the text's length. ``Output`` owns two of these (its pending and its flushed state).

Invariant: while a prop has open parts, its entry exists, is not done and has the parts' type, and the
string stored in the entry is stale; every read (``read``, ``entry_copy``) and every planned or committed
change for that id folds the parts back first, so outside this class the state is plain data.
"""

from __future__ import annotations

from typing import Any

from .delta import SHARED_SLOT, Change, State, commit_change, new_state, plan_message
from .messages import clone_json

Report = Any

TAIL_PARTS = 256
"""Pieces an open text collects before they are joined into one chunk (bounds the per-piece memory:
a 5-character piece costs a ~55-byte str object; a chunk of 256 costs one)."""


class _OpenText:
    """The text of one prop: ``chunks`` (joined pieces, the first is the entry's string) + ``tail``."""

    __slots__ = ("type", "chunks", "tail")

    def __init__(self, mtype: str, start: str) -> None:
        self.type = mtype
        self.chunks = [start]
        self.tail: list[str] = []

    def add(self, text: str) -> None:
        tail = self.tail
        tail.append(text)
        if len(tail) >= TAIL_PARTS:
            self.chunks.append("".join(tail))
            tail.clear()

    def text(self) -> str:
        if self.tail:
            self.chunks.append("".join(self.tail))
            self.tail.clear()
        return self.chunks[0] if len(self.chunks) == 1 else "".join(self.chunks)

    def __len__(self) -> int:
        return len(self.chunks) + len(self.tail)


class LiveState:
    """One delta state plus the open text appends not yet folded into it."""

    __slots__ = ("_state", "_open")

    def __init__(self) -> None:
        self._state: State = new_state()
        self._open: dict[str, dict[str, _OpenText]] = {}

    # ---- the fast path -------------------------------------------------------------------------

    def append_text(self, msg_id: str, mtype: str, key: str, text: str) -> bool:
        """Append ``text`` to the string prop ``key`` of the open message ``msg_id`` and return True;
        or return False, changing nothing, when that is not the case here (no such message, done,
        another type, a target that is not a string): the caller then plans the message in full.

        ``mtype`` ``""`` never switches a type (the engine's rule), so it matches any entry.
        """
        texts = self._open.get(msg_id)
        if texts is not None:
            open_text = texts.get(key)
            if open_text is not None and (open_text.type == mtype or not mtype):
                tail = open_text.tail  # _OpenText.add, inlined: this runs once per streamed delta
                tail.append(text)
                if len(tail) >= TAIL_PARTS:
                    open_text.chunks.append("".join(tail))
                    tail.clear()
                return True
        entry = self._state["messages"].get(msg_id)
        if entry is None or entry["done"] or (mtype and mtype != entry["type"]):
            return False
        target = entry["props"].get(key)
        if type(target) is not str:
            return False
        open_text = _OpenText(entry["type"], target)
        open_text.add(text)
        if texts is None:
            self._open[msg_id] = {key: open_text}
        else:
            texts[key] = open_text
        return True

    # ---- the full path -------------------------------------------------------------------------

    def plan(self, message: dict[str, Any], report: Report = None) -> Change:
        """``plan_message`` for a normalized message, against the folded state."""
        self._fold(message.get("id") or SHARED_SLOT)
        return plan_message(self._state, message, report=report, checked=True)

    def commit(self, change: Change) -> None:
        """Write a change planned on this state (or on an equal one)."""
        self._fold(change.id)
        commit_change(self._state, change)

    def entry_copy(self, msg_id: str) -> dict[str, Any] | None:
        """A copy of one entry (None when absent), its text folded."""
        self._fold(msg_id)
        entry = self._state["messages"].get(msg_id)
        return None if entry is None else clone_json(entry)

    def restore(self, order_length: int, saved: dict[str, dict[str, Any] | None]) -> None:
        """Undo commits: cut ``order`` back to ``order_length`` and put back (or remove) the saved entries."""
        state = self._state
        del state["order"][order_length:]
        for msg_id, entry in saved.items():
            self._open.pop(msg_id, None)
            if entry is None:
                state["messages"].pop(msg_id, None)
            else:
                state["messages"][msg_id] = entry

    def read(self) -> State:
        """The state itself with every open text folded in (the caller copies before handing it out)."""
        for msg_id in list(self._open):
            self._fold(msg_id)
        return self._state

    def open_pieces(self, msg_id: str, key: str) -> int:
        """How many strings make up the open text of ``msg_id``'s ``key`` (0: none open) — for tests."""
        open_text = self._open.get(msg_id, {}).get(key)
        return 0 if open_text is None else len(open_text)

    def _fold(self, msg_id: str) -> None:
        texts = self._open.pop(msg_id, None)
        if texts is not None:
            props = self._state["messages"][msg_id]["props"]
            for key, open_text in texts.items():
                props[key] = open_text.text()
