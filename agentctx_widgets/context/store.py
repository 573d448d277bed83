"""``Context``: an ordered message list with observers and an append-only, crash-safe session file.

Contract: docs/internals.md. Every method validates before it changes anything; observers are called
after the change with ``{"action": "added"|"updated"|"removed", "index", "message"}`` and an observer's
exception becomes a ``RuntimeWarning``. ``at(i)`` follows ``Array.prototype.at``: negative indexes count
from the end and an index out of range gives ``None``; ``replace``/``remove`` raise ``IndexError``.

Session file (``<dir>/<stem>.jsonl``, JSON Lines, one JSON value per line):

- the stem is ``file_stem(id or name or a generated name)``: one text, one stem, never shared. Bytes
  other than ``A-Z a-z 0-9 . _ -`` (and a leading ``.``) are written ``%XX``, so ``abc-1`` stays
  ``abc-1.jsonl`` while ``team/alpha`` is ``team%2Falpha.jsonl`` and ``team_alpha`` is
  ``team_alpha.jsonl``; a stem over ``MAX_STEM_BYTES`` is cut and ends in ``~`` + SHA-256 of the text;
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
line, say) with a ``SkippedLinesWarning`` (a ``RuntimeWarning``) naming its line number (the first
``MAX_REPORTED_LINES`` bad lines; the rest are counted in one last warning), and ``save()`` first ends such a cut line
with a newline. The first save of a context that was not loaded from an existing file starts with a
``context.truncate`` to 0, so the file always loads as this context.

What may be opened, read and written (each refusal is a ``SessionFileError``, a ``ValueError``):

- only regular files (``load`` follows a symlink to one): a FIFO, a device, a socket, a directory is
  refused by ``stat`` before it is opened, and every open is ``O_NONBLOCK`` and checked again with ``fstat``;
- ``save`` never writes through a symlink (dangling or not, planted before or during the save): it is
  refused naming the path, the open is ``O_NOFOLLOW`` and a rewrite's temporary file is a ``mkstemp``
  file beside the session file, renamed over its name;
- a line over ``MAX_LINE_BYTES`` or nested deeper than ``MAX_DEPTH``, or with a key twice in one
  object, is refused by ``load`` naming the line (and the context the file holds); lines are read one
  at a time, at most ``MAX_LINE_BYTES`` + 1 bytes each; ``save`` refuses to write such a line;
- ``save`` refuses a file whose header is another context's (or that is not a session file), naming
  both; this also covers two names one file system folds together (``Team`` / ``team``);
- ``save`` holds ``fcntl.flock`` on the file (``load`` a shared one) and waits for another writer's
  at most ``LOCK_TIMEOUT`` seconds; two objects saving one file (each loaded from it) append whole
  saves one after the other, so the file keeps every entry of both; once another writer has appended,
  a save that edits entries already saved (their indexes no longer match the file) is refused;
- after each save (and load) the file's ``(st_dev, st_ino)``, size and first and last bytes are
  recorded; a file found replaced, cut short or changed in place is rewritten whole from this context
  (a new file renamed over it) with a ``RuntimeWarning``, never appended to.
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from .cost import Cost
from .ledger import context_cost
from .merge import store_message
from .usage import message_words
from .validate import is_record, validate_context, validate_message

try:
    import fcntl
except ImportError:  # no advisory locks (Windows): saves go unlocked
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_TIMEOUT", "MAX_DEPTH", "MAX_LINE_BYTES", "MAX_REPORTED_LINES", "MAX_STEM_BYTES", "Context",
           "SessionFileError", "SkippedLinesWarning", "file_stem"]

HEADER_TYPE = "context"
_CONTROL_PREFIX = "context."

#: A session-file line longer than this (bytes, without its newline) is refused by load and by save.
MAX_LINE_BYTES = 64 * 1024 * 1024
#: A line whose arrays and objects nest deeper than this (the line's own object counts 1) is refused.
MAX_DEPTH = 200
#: How long save() waits for another writer's lock (and load() for a writer's), in seconds.
LOCK_TIMEOUT = 10.0
#: A file stem longer than this (bytes, after escaping) is shortened and ends in a hash.
MAX_STEM_BYTES = 200
#: ``load`` warns for this many skipped lines one by one; the rest are counted in one last warning.
MAX_REPORTED_LINES = 20

_READ_BUFFER = 1 << 20
_HEADER_SCAN_BYTES = 1 << 20  # how much of line 1 save() reads to learn whose file it is
_HEAD_BYTES = 256  # the first and last bytes of the file recorded after each save, to notice changes
_TAIL_BYTES = 64
_NOT_REGULAR_ERRNOS = (errno.ENXIO, errno.EISDIR, errno.ELOOP, errno.EAGAIN, errno.ENODEV)
"""What a non-blocking open of a FIFO, a device, a directory or a symlink loop fails with."""


class SessionFileError(ValueError):
    """A session file that ``Context`` refuses to open, read or write; the message names the file, the
    reason, and for a refused line its number."""


class SkippedLinesWarning(RuntimeWarning):
    """Lines ``Context.load`` skipped: one line named, or (the last warning) the count of the rest.

    ``lines`` is how many skipped lines this warning stands for, so the total is the sum over them."""

    def __init__(self, message: str, lines: int = 1) -> None:
        super().__init__(message)
        self.lines = lines


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
        self._words: list[int] = [message_words(entry) for entry in entries]
        """Words per entry (what estimate_context_tokens counts), kept in step with every change, so an
        estimate of the whole context after one append costs one message, not the whole walk."""
        self._id = id
        self._name = name
        self._dir = Path(dir) if dir is not None else None
        stem = file_stem(id or name or f"context-{uuid.uuid4().hex[:12]}")
        self._file = _SessionFile(self._dir / f"{stem}.jsonl" if self._dir is not None else None)
        self._observers: list[Callable[[dict], Any]] = []
        self._lock = threading.RLock()
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

    @property
    def cost(self) -> Cost:
        """What the model calls of the turns run on this context in this process cost (its lifetime cost:
        every billed call, a failed turn's too; ``Cost.zero()`` when none ran, *unpriced* for a model no
        table or ``prices=`` knows, never $0). Read from ``context/ledger.py``, which the runners write."""
        return context_cost(self)

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

    def word_count(self) -> int:
        """Words in every countable string of the context (the running total behind its token estimate)."""
        with self._lock:
            return sum(self._words)

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

    # -- changing -----------------------------------------------------------------------------
    def append(self, message: Any, *, merge: bool = True) -> dict | None:
        """Append with ``append_message`` semantics; returns the stored message or ``None`` if dropped."""
        with self._lock:
            before = len(self._messages)
            stored = store_message(self._messages, _own(message), merge=merge, in_place=False)
            if stored is None:
                return None
            if len(self._messages) == before:  # merged into a new dict in the last entry's place
                self._words[before - 1] = message_words(stored)
                self._file.replaced(before - 1, stored)
                self._notify("updated", before - 1, stored)
            else:
                self._words.append(message_words(stored))
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
            self._words[position] = message_words(message)
            self._file.replaced(position, message)
            self._notify("updated", position, message)
            return message

    def remove(self, index: int) -> dict:
        """Remove and return the entry at ``index``."""
        with self._lock:
            position = _check_index(index, len(self._messages), "Context.remove")
            removed = self._messages.pop(position)
            del self._words[position]
            self._file.removed(position)
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
            del self._words[length:]
            self._file.truncated(length)
            for offset in range(len(removed) - 1, -1, -1):
                self._notify("removed", length + offset, removed[offset])
            return removed

    def clear(self) -> list:
        """Remove every entry."""
        return self.truncate(0)

    # -- session file (the writing is _SessionFile's) -----------------------------------------
    @property
    def path(self) -> Path | None:
        """The session file ``save()`` writes, or ``None`` without a ``dir``."""
        return self._file.path

    def save(self) -> Path:
        """Append what changed since the last save to the session file, durably; returns its path.

        Takes the file's advisory lock (waiting at most ``LOCK_TIMEOUT`` seconds). Raises
        ``SessionFileError`` (nothing written) for a file that is not a regular file, that holds another
        context, or that another writer appended to when this save would edit entries already saved.
        """
        if self._file.path is None:
            raise ValueError("Context.save: this context has no dir to save into")
        header = {"type": HEADER_TYPE, "id": self._id, "name": self._name, "version": 1}
        with self._lock:
            self._file.save(header, self._messages)
        return self._file.path

    def _save_at_exit(self) -> None:
        try:
            self.save()
        except Exception as exc:  # noqa: BLE001 - interpreter shutdown: report, never raise
            warnings.warn(f"Context.save at exit failed: {exc!r}", RuntimeWarning, stacklevel=1)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Context:
        """Rebuild a context from its session file; unreadable lines are skipped with a warning
        (a ``SkippedLinesWarning``: the first ``MAX_REPORTED_LINES`` one by one, the rest counted in one).

        Raises ``SessionFileError`` for a path that is not a regular file (checked before it is opened)
        and for a refused line (over ``MAX_LINE_BYTES``, nested deeper than ``MAX_DEPTH``, or with a key
        twice in one object), naming the line and the context the file holds.
        """
        path = Path(path)
        fd, _ = _open_locked(path, "Context.load", write=False)
        try:
            with open(fd, "rb", buffering=_READ_BUFFER, closefd=False) as stream:
                entries, header, consumed = _read_session(stream, path)
            state = _FileState.of(fd, consumed)
        finally:
            os.close(fd)
        context = cls(id=header.get("id"), name=header.get("name"), dir=path.parent)
        context._messages = entries
        context._words = [message_words(entry) for entry in entries]
        context._file = _SessionFile(path, state, synced=len(entries))
        return context


class _SessionFile:
    """A ``Context``'s session file and what this object knows of it: the edits made to entries already
    saved (journaled as control lines as they happen, so a save's cost does not depend on the list's
    length) and what it last read or wrote there, which each save compares with the file it finds to
    notice a file replaced, cut short or changed behind its back."""

    def __init__(self, path: Path | None, state: _FileState | None = None, *, synced: int = 0) -> None:
        self.path = path
        self.synced = synced  # entries [0, synced) are in the file once the journal is replayed
        self.journal: list[tuple[str, dict]] = []  # (what the line is, the line) of each edit since
        self.state = state  # None: this object has not read or written the file yet
        self.shared = False  # another writer has appended to the file since this object read it

    # -- the journal of edits to entries already saved ----------------------------------------
    def replaced(self, index: int, entry: dict) -> None:
        if index < self.synced:
            label = f"the replacement of entry {index}"
            if self.journal and self.journal[-1][0] == label:
                self.journal.pop()  # the newer entry supersedes it
            line = {"type": "context.replace", "index": index, "message": _entry_line(entry)}
            self.journal.append((label, line))

    def removed(self, index: int) -> None:
        if index < self.synced:
            self.journal.append((f"the removal of entry {index}", {"type": "context.remove", "index": index}))
            self.synced -= 1

    def truncated(self, length: int) -> None:
        if length < self.synced:
            self.journal.append((f"the truncation to {length}",
                                 {"type": "context.truncate", "length": length}))
            self.synced = length

    # -- saving -------------------------------------------------------------------------------
    def save(self, header: dict, entries: list) -> None:
        """``Context.save``: ``entries`` (the context's, under its lock) made the file's, as little written
        as will do."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, info = _open_locked(self.path, "Context.save", write=True)
        try:
            self._save_locked(fd, info, header, entries)
        finally:
            os.close(fd)  # releases the lock
        self.synced = len(entries)
        self.journal = []

    def _save_locked(self, fd: int, info: os.stat_result, header: dict, entries: list) -> None:
        size, known, path = info.st_size, self.state, self.path
        whole = [("the header", header), *_entry_lines(entries)]  # a file that holds exactly this context
        if known is None:  # this object has not read or written the file yet
            if size == 0:
                self._write_whole(fd, info, whole, in_place=True)
                return
            verdict = self._owner(fd, size, header)
            if verdict == "ours":  # a fresh context of this id: the file is reset to it
                self._append(fd, size, [("the reset", {"type": "context.truncate", "length": 0}),
                                        *_entry_lines(entries)])
                return
            if verdict == "cut":
                warnings.warn(f"Context.save: {path} holds only a header cut short (a first save killed "
                              f"mid-write); rewriting it whole", RuntimeWarning, stacklevel=4)
            self._write_whole(fd, info, whole, in_place=False)
            return
        problem = None
        if (info.st_dev, info.st_ino) != (known.dev, known.ino):
            problem = "was replaced (or removed) since this context last read or wrote it"
        elif size < known.size:
            problem = f"was cut short since this context last read or wrote it ({size} bytes, {known.size} expected)"
        elif _snapshot_bytes(fd, known.size) != (known.head, known.tail):
            problem = "was changed in place since this context last read or wrote it"
        if problem is not None:
            if size > 0:
                self._owner(fd, size, header)  # another context's file, or no session file: refused
            warnings.warn(f"Context.save: {path} {problem}; rewriting it whole from this context "
                          f"({len(entries)} entries)", RuntimeWarning, stacklevel=4)
            self._write_whole(fd, info, whole, in_place=size == 0)
            return
        grown = size > known.size
        if (grown or self.shared) and self.journal:
            raise SessionFileError(
                f"Context.save: {path} also holds lines another writer appended since this context read it, "
                f"so the indexes of entries already saved no longer match the file, and this save would edit "
                f"them ({len(self.journal)} edits); nothing written. Context.load the file again to edit it")
        self._append(fd, size, self.journal + _entry_lines(entries, self.synced))
        if grown:
            self.shared = True

    def _owner(self, fd: int, size: int, header: dict) -> str:
        """Whose file this is, from its header: ``"ours"``, ``"cut"`` (a header of ours cut short),
        ``"blank"`` (nothing but whitespace); raises ``SessionFileError`` for anything else."""
        path, our_id, our_name = self.path, header["id"], header["name"]
        first = _pread(fd, min(size, _HEADER_SCAN_BYTES), 0)
        end = first.find(b"\n")
        line = first if end == -1 else first[:end]
        if len(first) == size and not first.strip():
            return "blank"
        if end == -1 and len(first) == size and orjson.dumps(header).startswith(line):
            return "cut"
        value = None
        if end != -1 or len(first) == size:
            try:
                value = decode_json(line)
            except (RefusedJSON, orjson.JSONDecodeError):
                value = None
        if isinstance(value, dict) and value.get("type") == HEADER_TYPE:
            their_id, their_name = _header_field(value, "id"), _header_field(value, "name")
            if their_id == our_id and (our_id is not None or their_name == our_name):
                return "ours"
            raise SessionFileError(
                f"Context.save: {path} holds {_who(their_id, their_name)}, not this one "
                f"({_who(our_id, our_name)}); refusing to write into another context's file "
                f"(Context.load({str(path)!r}) opens it)")
        raise SessionFileError(f"Context.save: {path} is not a session file (line 1 is not a context header); "
                               f"refusing to write into it")

    def _append(self, fd: int, size: int, lines: list[tuple[str, dict]]) -> None:
        if lines:
            data = _encode(lines)
            if size > 0 and _pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # end a line a killed save cut short
            _write_all(fd, data)
            os.fsync(fd)
        self.state = _FileState.of(fd)

    def _write_whole(self, fd: int, info: os.stat_result, lines: list, *, in_place: bool) -> None:
        data = _encode(lines)
        if in_place:  # the file is empty: write into it
            _write_all(fd, data)
            os.fsync(fd)
            self.state = _FileState.of(fd)
        else:  # a new file put in its place atomically, so a crash leaves the old one or the new one
            real = self.path  # never a symlink (_open_locked opened it O_NOFOLLOW); os.replace replaces it
            tmp_fd, tmp_name = tempfile.mkstemp(prefix=".agentctx-", suffix=".tmp", dir=real.parent)
            try:
                if fcntl is not None:
                    fcntl.flock(tmp_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new: free; held until written
                _write_all(tmp_fd, data)
                if hasattr(os, "fchmod"):
                    os.fchmod(tmp_fd, stat.S_IMODE(info.st_mode))
                os.fsync(tmp_fd)
                os.replace(tmp_name, real)
                _fsync_dir(real.parent)
                self.state = _FileState.of(tmp_fd)
            except BaseException:
                if os.path.exists(tmp_name):
                    os.unlink(tmp_name)
                raise
            finally:
                os.close(tmp_fd)
        self.shared = False


def _entry_lines(entries: list, start: int = 0) -> list[tuple[str, dict]]:
    """The lines of ``entries[start:]``, each named by its index (what ``_encode`` names in a refusal)."""
    return [(f"entry {index}", _entry_line(entries[index])) for index in range(start, len(entries))]


# -- file names ------------------------------------------------------------------------------------

_UNSAFE_BYTE = re.compile(rb"[^A-Za-z0-9._-]")


def file_stem(text: str) -> str:
    """The file name (without ``.jsonl``) for a context id or name; one stem per text, never shared.

    Bytes other than ``A-Z a-z 0-9 . _ -`` in the text's UTF-8 (and a leading ``.``) are written as
    ``%XX``, so a plain id stays readable (``abc-1``) and ``team/alpha`` (``team%2Falpha``) never meets
    ``team_alpha``. A stem longer than ``MAX_STEM_BYTES`` keeps its first part and ends in ``~`` and the
    SHA-256 of the text (``~`` is always escaped, so a shortened stem never equals a plain one).
    """
    raw = text.encode("utf-8", "surrogatepass")
    stem = _UNSAFE_BYTE.sub(lambda match: b"%%%02X" % match[0][0], raw)
    if stem.startswith(b"."):
        stem = b"%2E" + stem[1:]
    if len(stem) > MAX_STEM_BYTES:
        keep = stem[:MAX_STEM_BYTES - 65]
        cut = keep.find(b"%", len(keep) - 2)
        if cut != -1:  # do not end inside an escape
            keep = keep[:cut]
        stem = keep + b"~" + hashlib.sha256(raw).hexdigest().encode("ascii")
    return stem.decode("ascii")


def _who(context_id: str | None, name: str | None) -> str:
    if context_id is not None:
        return f"context id {context_id!r}"
    return f"the context named {name!r} (no id)" if name is not None else "a context with no id or name"


def _header_field(line: dict, key: str) -> str | None:
    value = line.get(key)
    return value if isinstance(value, str) and value else None


# -- opening: regular files only, under the advisory lock ----------------------------------------

def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def _refusal(what: str, path: Path, mode: int) -> SessionFileError:
    kind = _kind(mode)
    if os.path.islink(path):
        kind = f"a symlink to {os.path.realpath(path)}, which is {kind}"
    return SessionFileError(f"{what}: {path} is {kind}, not a regular file; refusing to open it")


def _symlink_refusal(what: str, path: Path) -> SessionFileError:
    try:
        target = f" (to {os.readlink(path)!r})"
    except OSError:
        target = ""
    return SessionFileError(f"{what}: {path} is a symlink{target}; refusing to write through a symlink this "
                            f"process did not create (to keep the session elsewhere, give that folder as dir=)")


def _check_regular(path: Path, what: str, *, creating: bool) -> None:
    """Refuse anything but a regular file by ``stat``, before it is opened; to read (``creating`` false) a
    symlink to a regular file is followed, to write (``creating``) any symlink at ``path`` is refused."""
    if creating and os.path.islink(path):
        raise _symlink_refusal(what, path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if creating:
            return
        raise
    if not stat.S_ISREG(info.st_mode):
        raise _refusal(what, path, info.st_mode)


def _open_locked(path: Path, what: str, *, write: bool) -> tuple[int, os.stat_result]:
    """Open ``path`` (never blocking: ``O_NONBLOCK``) and take its lock, exclusive to write, shared to read.

    The path is checked with ``stat`` before the open and the descriptor with ``fstat`` after it (the
    path may change in between); after the lock is granted the path must still name the locked file
    (a save may have put a new file in its place meanwhile), otherwise the open is retried. To write,
    the open is ``O_NOFOLLOW`` (a symlink planted after the check is refused too, not followed) and the
    path is compared with ``lstat``.
    """
    deadline = time.monotonic() + LOCK_TIMEOUT
    flags = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    flags |= (os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)) if write else os.O_RDONLY
    while True:
        _check_regular(path, what, creating=write)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as error:
            if write and (error.errno == errno.ELOOP or os.path.islink(path)):
                raise _symlink_refusal(what, path) from None
            if error.errno in _NOT_REGULAR_ERRNOS:
                raise SessionFileError(f"{what}: {path} is not a regular file ({error.strerror}); "
                                       f"refusing to open it") from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _refusal(what, path, info.st_mode)
            _flock(fd, deadline, path, what, exclusive=write)
            try:
                current = os.lstat(path) if write else os.stat(path)
            except FileNotFoundError:
                current = None
            if current is not None and (current.st_dev, current.st_ino) == (info.st_dev, info.st_ino):
                return fd, os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the path names another file now: open that one
        if time.monotonic() > deadline:
            raise SessionFileError(f"{what}: {path} kept being replaced for {LOCK_TIMEOUT:g} s (LOCK_TIMEOUT)")


def _flock(fd: int, deadline: float, path: Path, what: str, *, exclusive: bool) -> None:
    if fcntl is None:  # no advisory locks on this platform
        return
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    delay = 0.0002
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as error:
            if error.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                return  # a file system without flock: go on unlocked
            raise
        if time.monotonic() >= deadline:
            raise SessionFileError(f"{what}: {path} is locked by another writer for more than {LOCK_TIMEOUT:g} s "
                                   f"(LOCK_TIMEOUT); nothing {'written' if exclusive else 'read'}")
        time.sleep(delay)
        delay = min(delay * 2, 0.005)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _FileState(NamedTuple):
    """What ``save()`` expects to find: the file's (st_dev, st_ino), size, first and last bytes."""

    dev: int
    ino: int
    size: int
    head: bytes
    tail: bytes

    @classmethod
    def of(cls, fd: int, size: int | None = None) -> _FileState:
        info = os.fstat(fd)
        size = info.st_size if size is None else size
        return cls(info.st_dev, info.st_ino, size, *_snapshot_bytes(fd, size))


def _snapshot_bytes(fd: int, size: int) -> tuple[bytes, bytes]:
    """The first ``_HEAD_BYTES`` and the last ``_TAIL_BYTES`` of the file's first ``size`` bytes."""
    head = _pread(fd, min(size, _HEAD_BYTES), 0)
    tail_start = max(0, size - _TAIL_BYTES)
    return head, _pread(fd, size - tail_start, tail_start)


def _pread(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # no pread (Windows); callers hold the file's lock
    return os.read(fd, size)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# -- reading and writing lines ------------------------------------------------------------------

class RefusedJSON(Exception):
    """A line the session format refuses (too deep, a key twice); the message says why."""


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACES_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_A_BRACKET = bytes(byte for byte in range(256) if byte not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")], _STEP[ord("]")] = 1, -1


def too_deep(raw: bytes) -> bool:
    """Whether the valid JSON text ``raw`` nests arrays and objects more than ``MAX_DEPTH`` deep.

    Linear and in C loops: the brackets outside strings, as +1/-1, and the highest running sum."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:  # the usual line: too few brackets to be deep
        return False
    shape = _STRING.sub(b"", raw).translate(_BRACES_AS_BRACKETS, _NOT_A_BRACKET)
    return max(accumulate(map(_STEP.__getitem__, shape)), default=0) > MAX_DEPTH


def decode_json(raw: bytes) -> Any:
    """One line's JSON value; ``orjson.JSONDecodeError`` when it is not JSON, ``RefusedJSON`` when it nests
    deeper than ``MAX_DEPTH`` or an object in it has a key twice (which value counts would depend on the
    reader: orjson and JavaScript keep the last, others the first)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        if "depth limit" in str(error):
            raise RefusedJSON(f"nests deeper than {MAX_DEPTH} levels (MAX_DEPTH)") from None
        raise
    if not isinstance(value, (dict, list)):
        return value
    if too_deep(raw):
        raise RefusedJSON(f"nests deeper than {MAX_DEPTH} levels (MAX_DEPTH)")
    try:  # what orjson itself wrote (every line save() writes) re-encodes to the same bytes: no key twice
        same = orjson.dumps(value) == raw.strip()
    except orjson.JSONEncodeError:
        same = False
    if not same:
        try:
            json.loads(raw, object_pairs_hook=_no_duplicates)
        except _DuplicateKey as duplicate:
            raise RefusedJSON(f"has the key {duplicate.args[0]!r} twice in one object, which readers resolve "
                           f"differently") from None
        except ValueError:
            pass  # orjson read it; the json module's own opinion of it does not matter
    return value


def _encode(lines: list[tuple[str, dict]]) -> bytes:
    """The bytes of ``lines``; raises ``SessionFileError`` naming the first that ``load`` would refuse."""
    chunks = []
    for label, line in lines:
        data = orjson.dumps(line)
        if len(data) > MAX_LINE_BYTES:
            raise SessionFileError(f"Context.save: {label} is {len(data)} bytes as a line, over the "
                                   f"{MAX_LINE_BYTES}-byte limit (MAX_LINE_BYTES); nothing written")
        if too_deep(data):
            raise SessionFileError(f"Context.save: {label} nests deeper than {MAX_DEPTH} levels as a line "
                                   f"(MAX_DEPTH); nothing written")
        chunks.append(data)
        chunks.append(b"\n")
    return b"".join(chunks)


def _read_session(stream: Any, path: Path) -> tuple[list, dict, int]:
    """Replay the lines of ``stream``: (entries, header fields, bytes read). Reads one line at a time,
    at most ``MAX_LINE_BYTES`` + 1 bytes of it."""
    entries: list = []
    header: dict = {}
    consumed = 0
    number = 0
    skips = _Skips(path)
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        number += 1
        consumed += len(raw)
        cut = not raw.endswith(b"\n")  # no newline after it: the last line, where a save was cut short
        if not cut:
            raw = raw[:-1]
        elif len(raw) > MAX_LINE_BYTES:
            raise SessionFileError(f"Context.load: {path}{_held(header)} line {number} is longer than "
                                   f"{MAX_LINE_BYTES} bytes (MAX_LINE_BYTES); refusing to read it")
        if not raw.strip():
            continue
        try:
            line = decode_json(raw)
        except RefusedJSON as refused:
            raise SessionFileError(f"Context.load: {path}{_held(header)} line {number} {refused}; "
                                   f"refusing to load it") from None
        except orjson.JSONDecodeError:
            skips.skip(number, "was cut short" if cut else "is not valid JSON")
            continue
        problem = _apply_line(entries, line, header, number)
        if problem:
            skips.skip(number, problem)
    skips.close()
    return entries, header, consumed


class _Skips:
    """The warnings for skipped lines: the first ``MAX_REPORTED_LINES`` one by one, then one count of the
    rest (with their first and last line numbers), so a file of bad lines costs no memory per line."""

    def __init__(self, path: Path) -> None:
        self.path, self.count, self.first, self.last = path, 0, 0, 0

    def skip(self, number: int, reason: str) -> None:
        self.count += 1
        if self.count <= MAX_REPORTED_LINES:
            warnings.warn(SkippedLinesWarning(f"Context.load: {self.path} line {number} {reason}; skipped"),
                          stacklevel=4)
        else:
            self.first, self.last = self.first or number, number

    def close(self) -> None:
        rest = self.count - MAX_REPORTED_LINES
        if rest > 0:
            warnings.warn(SkippedLinesWarning(
                f"Context.load: {self.path}: {rest} more bad line{'s' * (rest != 1)} skipped "
                f"(lines {self.first}–{self.last}; {self.count} in all)", lines=rest), stacklevel=4)


def _held(header: dict) -> str:
    if "id" in header:
        return f" (context id {header['id']!r})"
    return f" (context named {header['name']!r})" if "name" in header else ""


def _apply_line(entries: list, line: Any, header: dict, number: int) -> str | None:
    """Apply one session-file line to ``entries``; a reason string when the line is unusable."""
    kind = line.get("type") if isinstance(line, dict) else None
    if kind == HEADER_TYPE:
        if number == 1:
            header.update({k: line[k] for k in ("id", "name") if isinstance(line.get(k), str) and line[k]})
            return None
        other = _header_field(line, "id")
        return f"is a second header (of context id {other!r})" if other is not None else "is a second header"
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
