"""``Context``: an ordered message list with observers and an append-only, crash-safe session file.

Contract: docs/internals.md. Every method validates before it changes anything; observers are called
after the change with ``{"action": "added"|"updated"|"removed", "index", "message"}`` and an observer's
exception becomes a ``RuntimeWarning``. ``at(i)`` follows ``Array.prototype.at``: negative indexes count
from the end and an index out of range gives ``None``; ``replace``/``remove`` raise ``IndexError``.

Session file (``<dir>/<id or name or generated>.jsonl``, JSON Lines, one JSON value per line):

- line 1 is a header ``{"type": "context", "id", "name", "version": 1}``;
- a message or record line appends that entry to the list being rebuilt;
- ``{"type": "context.truncate", "length": n}`` cuts the list to ``n`` entries;
- ``{"type": "context.replace", "index": i, "message": m}`` sets entry ``i`` (a merge or replace of an
  entry that an earlier save already wrote);
- ``{"type": "context.remove", "index": i}`` deletes entry ``i``;
- ``{"type": "context.record", "record": r}`` appends a user record whose own ``type`` is ``context``
  or starts with ``context.`` (so it cannot be mistaken for one of the lines above).

``save()`` writes only what changed since the last save: the control lines for edits to entries
already written (journaled as they happen, so their cost does not depend on the list's length), then
the entries appended since. Edits made to message dicts outside these methods are not seen; use
``replace()``. One ``save()`` is one ``write`` of whole lines, then ``flush`` and ``os.fsync``, so a
crash can only cut the last save short. ``Context.load`` skips a line that does not parse (a cut last
line, say) with a ``RuntimeWarning`` naming its line number, and ``save()`` first ends such a cut line
with a newline. The first save of a context that was not loaded from an existing file starts with a
``context.truncate`` to 0, so the file always loads as this context.
"""

from __future__ import annotations

import atexit
import os
import re
import threading
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from .merge import append_message
from .validate import is_record, validate_context, validate_message

__all__ = ["Context"]

HEADER_TYPE = "context"
_CONTROL_PREFIX = "context."


def _stem(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip(".") or "context"


def _check_index(index: Any, length: int, what: str) -> int:
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"{what}: index must be an int, got {type(index).__name__}")
    position = index + length if index < 0 else index
    if not 0 <= position < length:
        raise IndexError(f"{what}: index {index} out of range for a context of {length}")
    return position


def _entry_line(entry: dict) -> dict:
    kind = entry.get("type")
    if isinstance(kind, str) and (kind == HEADER_TYPE or kind.startswith(_CONTROL_PREFIX)):
        return {"type": "context.record", "record": entry}
    return entry


def _own(value: Any) -> Any:
    """A private deep copy of JSON-like data (dicts and lists copied, other values shared)."""
    if isinstance(value, dict):
        return {key: _own(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_own(item) for item in value]
    return value


class Context:
    """The conversation context (seed 001 ``Context``).

    Entries are the context's own: what is passed in is copied, and a change never edits a stored dict
    in place (a merge stores a new one), so a message read earlier through ``at``/``messages`` keeps
    what it said. Change entries only through the methods.
    """

    def __init__(self, messages: Iterable | None = None, *, id: str | None = None, name: str | None = None,  # noqa: A002
                 dir: str | os.PathLike | None = None, flush_on_exit: bool = False) -> None:  # noqa: A002
        entries = list(messages) if messages is not None else []
        validate_context(entries)
        entries = [_own(entry) for entry in entries]
        for label, value in (("id", id), ("name", name)):
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"Context: {label} must be a non-empty string, got {value!r}")
        if flush_on_exit and dir is None:
            raise ValueError("Context: flush_on_exit=True needs a dir to save into")
        self._messages: list = entries
        self._id = id
        self._name = name
        self._dir = Path(dir) if dir is not None else None
        self._path: Path | None = None
        self._observers: list[Callable[[dict], Any]] = []
        self._lock = threading.RLock()
        # Save state: entries [0, _synced) are in the file once _journal is replayed.
        self._synced = 0
        self._journal: list[tuple] = []
        self._file_known = False  # the file is known to hold exactly this context (loaded or saved)
        if flush_on_exit:
            atexit.register(self._save_at_exit)

    # -- reading ------------------------------------------------------------------------------
    @property
    def id(self) -> str | None:  # noqa: A003
        return self._id

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def dir(self) -> Path | None:  # noqa: A003
        return self._dir

    def __len__(self) -> int:
        return len(self._messages)

    def at(self, index: int) -> dict | None:
        """Entry ``index`` (negative counts from the end), or ``None`` when out of range."""
        try:
            return self._messages[_check_index(index, len(self._messages), "Context.at")]
        except IndexError:
            return None

    def messages(self) -> list:
        """A new list of the entries (shared, not copied: never edited later, and not yours to edit)."""
        return list(self._messages)

    def __iter__(self) -> Iterator:
        return iter(tuple(self._messages))

    def __repr__(self) -> str:
        return f"Context(id={self._id!r}, name={self._name!r}, messages={len(self._messages)})"

    # -- observers ----------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[dict], Any]) -> Callable[[], None]:
        """Call ``fn(change)`` after every change; returns a function that unsubscribes."""
        if not callable(fn):
            raise TypeError(f"Context.subscribe: expected a function, got {type(fn).__name__}")
        self._observers.append(fn)

        def unsubscribe() -> None:
            if fn in self._observers:
                self._observers.remove(fn)
        return unsubscribe

    def _notify(self, action: str, index: int, message: dict) -> None:
        change = {"action": action, "index": index, "message": message}
        for fn in list(self._observers):
            try:
                fn(change)
            except Exception as exc:  # noqa: BLE001 - an observer must never undo a change
                warnings.warn(f"Context observer {fn!r} raised {exc!r}", RuntimeWarning, stacklevel=3)

    # -- journal of edits to entries already saved --------------------------------------------
    def _journal_replace(self, index: int) -> None:
        if index < self._synced:
            entry = self._messages[index]
            last = self._journal[-1] if self._journal else None
            if last and last[0] == "replace" and last[1] == index:
                self._journal[-1] = ("replace", index, entry)  # the newer entry supersedes it
            else:
                self._journal.append(("replace", index, entry))

    def _journal_remove(self, index: int) -> None:
        if index < self._synced:
            self._journal.append(("remove", index))
            self._synced -= 1

    def _journal_truncate(self, length: int) -> None:
        if length < self._synced:
            self._journal.append(("truncate", length))
            self._synced = length

    # -- changing -----------------------------------------------------------------------------
    def append(self, message: Any, *, merge: bool = True) -> dict | None:
        """Append with ``append_message`` semantics; returns the stored message or ``None`` if dropped."""
        with self._lock:
            entry = _own(message)
            before = len(self._messages)
            last = self._messages[-1] if self._messages else None
            fresh = None  # a new dict for append_message to merge into, so `last` itself never changes
            if merge and isinstance(last, dict) and not is_record(last):
                fresh = dict(last)
                self._messages[-1] = fresh
            merged = False
            try:
                stored = append_message(self._messages, entry, merge=merge)
                merged = fresh is not None and stored is fresh
            finally:
                if fresh is not None and not merged:
                    self._messages[before - 1] = last
            if stored is None:
                return None
            if merged:
                self._journal_replace(before - 1)
                self._notify("updated", before - 1, stored)
            else:
                self._notify("added", before, stored)
            return stored

    def extend(self, messages: Iterable) -> list:
        """Append each of ``messages`` (merging); all are validated before the first is appended."""
        if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Iterable):
            raise TypeError(f"Context.extend: expected a list of messages, got {type(messages).__name__}")
        batch = list(messages)
        with self._lock:
            start = len(self._messages)
            for offset, message in enumerate(batch):
                if not is_record(message):
                    validate_message(message, f"context[{start + offset}]")
            return [stored for message in batch if (stored := self.append(message)) is not None]

    def replace(self, index: int, message: Any) -> dict:
        """Put ``message`` at ``index`` (no merging)."""
        with self._lock:
            position = _check_index(index, len(self._messages), "Context.replace")
            if not is_record(message):
                validate_message(message, f"context[{position}]")
            message = _own(message)
            self._messages[position] = message
            self._journal_replace(position)
            self._notify("updated", position, message)
            return message

    def remove(self, index: int) -> dict:
        """Remove and return the entry at ``index``."""
        with self._lock:
            position = _check_index(index, len(self._messages), "Context.remove")
            removed = self._messages.pop(position)
            self._journal_remove(position)
            self._notify("removed", position, removed)
            return removed

    def truncate(self, length: int) -> list:
        """Keep the first ``length`` entries; one ``removed`` change per entry, last index first."""
        if not isinstance(length, int) or isinstance(length, bool):
            raise TypeError(f"Context.truncate: length must be an int, got {type(length).__name__}")
        if length < 0:
            raise ValueError(f"Context.truncate: length must be >= 0, got {length}")
        with self._lock:
            removed = self._messages[length:]
            if not removed:
                return []
            del self._messages[length:]
            self._journal_truncate(length)
            for offset in range(len(removed) - 1, -1, -1):
                self._notify("removed", length + offset, removed[offset])
            return removed

    def clear(self) -> list:
        """Remove every entry."""
        return self.truncate(0)

    # -- session file -------------------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        """The session file ``save()`` writes, or ``None`` without a ``dir``."""
        if self._path is None and self._dir is not None:
            stem = self._id or self._name or f"context-{uuid.uuid4().hex[:12]}"
            self._path = self._dir / f"{_stem(stem)}.jsonl"
        return self._path

    def _pending_lines(self, size: int) -> list[dict]:
        if size == 0:
            head = [{"type": HEADER_TYPE, "id": self._id, "name": self._name, "version": 1}]
            return head + [_entry_line(entry) for entry in self._messages]
        if not self._file_known:
            return [{"type": "context.truncate", "length": 0}] + [_entry_line(entry) for entry in self._messages]
        lines: list[dict] = []
        for op in self._journal:
            if op[0] == "replace":
                lines.append({"type": "context.replace", "index": op[1], "message": _entry_line(op[2])})
            elif op[0] == "remove":
                lines.append({"type": "context.remove", "index": op[1]})
            else:
                lines.append({"type": "context.truncate", "length": op[1]})
        lines.extend(_entry_line(entry) for entry in self._messages[self._synced:])
        return lines

    def save(self) -> Path:
        """Append what changed since the last save to the session file, durably; returns its path."""
        path = self.path
        if path is None:
            raise ValueError("Context.save: this context has no dir to save into")
        with self._lock:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                lines = self._pending_lines(size)
                if lines:
                    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
                    if size > 0 and _last_byte(path) != b"\n":
                        data = b"\n" + data
                    _write_all(fd, data)
                    os.fsync(fd)
            finally:
                os.close(fd)
            self._file_known = True
            self._synced = len(self._messages)
            self._journal = []
            return path

    def _save_at_exit(self) -> None:
        try:
            self.save()
        except Exception as exc:  # noqa: BLE001 - interpreter shutdown: report, never raise
            warnings.warn(f"Context.save at exit failed: {exc!r}", RuntimeWarning, stacklevel=1)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Context:
        """Rebuild a context from its session file; unreadable lines are skipped with a warning."""
        path = Path(path)
        data = path.read_bytes()
        entries: list = []
        header: dict = {}
        raw_lines = data.split(b"\n")
        for number, raw in enumerate(raw_lines, start=1):
            if not raw.strip():
                continue
            cut = number == len(raw_lines)  # no newline after it: a save was cut short here
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                reason = "was cut short" if cut else "is not valid JSON"
                warnings.warn(f"Context.load: {path} line {number} {reason}; skipped", RuntimeWarning, stacklevel=2)
                continue
            problem = _apply_line(entries, line, header, number)
            if problem:
                warnings.warn(f"Context.load: {path} line {number} {problem}; skipped", RuntimeWarning, stacklevel=2)
        context = cls(id=header.get("id"), name=header.get("name"), dir=path.parent)
        context._messages = entries
        context._path = path
        context._file_known = True
        context._synced = len(entries)
        return context


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


def _apply_line(entries: list, line: Any, header: dict, number: int) -> str | None:
    """Apply one session-file line to ``entries``; a reason string when the line is unusable."""
    kind = line.get("type") if isinstance(line, dict) else None
    if kind == HEADER_TYPE:
        if number == 1:
            header.update({k: line[k] for k in ("id", "name") if isinstance(line.get(k), str) and line[k]})
            return None
        return "is a second header"
    if kind == "context.truncate":
        length = line.get("length")
        if isinstance(length, int) and length >= 0:
            del entries[length:]
            return None
    elif kind == "context.replace":
        index, message = line.get("index"), line.get("message")
        if isinstance(message, dict) and message.get("type") == "context.record":
            message = message.get("record")
        if isinstance(index, int) and 0 <= index < len(entries) and isinstance(message, dict):
            if not is_record(message):
                try:
                    validate_message(message, f"line {number}.message")
                except TypeError as exc:
                    return f"replaces entry {index} with something that is not a message ({exc})"
            entries[index] = message
            return None
    elif kind == "context.remove":
        index = line.get("index")
        if isinstance(index, int) and 0 <= index < len(entries):
            del entries[index]
            return None
    elif kind == "context.record":
        if is_record(line.get("record")):
            entries.append(line["record"])
            return None
    elif is_record(line):
        entries.append(line)
        return None
    else:
        try:
            validate_message(line, f"line {number}")
        except TypeError as exc:
            return f"is not a message ({exc})"
        entries.append(line)
        return None
    return f"is a malformed {kind} line"
