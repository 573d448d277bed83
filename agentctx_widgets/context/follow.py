"""``SessionFollower``: keeps a Context equal to a session file that another process is appending to.

Why its own module: ``Context.load`` reads a file once; following one a writer is still appending to
needs state that ``load`` has no use for — where the last complete line ended, the bytes of a line the
writer is still writing, and which file was read (to notice it being replaced). This class holds that
and nothing about threads or widgets: each ``poll()`` reads what was appended since the last one and
applies it through the Context's own methods, so every subscriber sees each change.

What one ``poll()`` does (the lines mean what they mean to ``Context.load``: docs/internals.md):

- complete new lines (ending in ``\\n``) are applied in order; the bytes after the last newline are held
  until their newline arrives (``partial_bytes``);
- a message line is appended without merging, a record as it is, the ``context.*`` control lines become
  ``truncate`` / ``replace`` / ``remove`` / an appended record, and line 1's header is kept in ``header``;
- a line that cannot be applied (not JSON, refused as ``load`` refuses it, not a message, an index out
  of range, an empty message the Context would drop, a second header) is skipped and reported once, by
  its line number, as a diagnostic ``{code, message, where, hint}`` in the poll's result;
- the file being replaced (a new inode at the path: rotated, or removed and created again), cut short,
  or changed in place below what was read, restarts it: the Context is cleared and refilled from the new
  file's first line, with a ``watch_restarted`` diagnostic saying why;
- no file at the path: nothing happens (the Context keeps what it had) until one appears.

The open descriptor is kept between polls, so the old file's inode cannot be reused by a new file
while it is held: a new file at the path always has another ``(st_dev, st_ino)``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import orjson

from .store import MAX_LINE_BYTES, Context, RefusedJSON, _refusal, decode_json
from .validate import has_content, has_error, is_record, validate_message

__all__ = ["SessionFollower", "check_followable", "diagnostic"]

READ_CHUNK = 1 << 20
"""Bytes read per step: a large file is taken in steps of this, never whole."""

POLL_BYTES = 8 << 20
"""Bytes one ``poll()`` reads at most; ``behind`` says more is waiting (the watcher polls again at once),
so what a big append holds is applied and reported as it goes, not after the whole of it."""

BAD_LINES_PER_POLL = 20
"""Bad lines one poll reports one by one; past that it counts them in one ``watch_bad_lines`` item."""

_HEAD_BYTES = 256  # the first bytes of the file, and the last ones before the read position, are
_TAIL_BYTES = 64  # compared at every poll to notice a file rewritten in place past where it was read

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def diagnostic(code: str, message: str, where: str, hint: str) -> dict[str, str]:
    """A diagnostic in the shape the view's header lists."""
    return {"code": code, "message": message, "where": where, "hint": hint}


class SessionFollower:
    """Follows the session file at ``path`` into ``context`` (which it clears when the file restarts)."""

    def __init__(self, path: str | os.PathLike, context: Context) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"SessionFollower: path must be a str or os.PathLike, got {type(path).__name__}")
        if not isinstance(context, Context):
            raise TypeError(f"SessionFollower: context must be a Context, got {type(context).__name__}")
        self.path = Path(path)
        self.context = context
        self.header: dict[str, Any] | None = None
        """Line 1 of the file being followed, when it is a context header."""
        self.lines_read = 0
        """Complete lines read from the file being followed (its last line number read)."""
        self.restarts = 0
        """How many times the file was replaced, cut short or rewritten and read again from its start."""
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._position = 0  # bytes of the file read: complete lines plus the partial line held
        self._partial = bytearray()
        self._skipping = False  # inside a line over MAX_LINE_BYTES: drop bytes until its newline
        self._head = b""
        self._tail = b""
        self._seen_file = False  # a file was followed before (so the next one is a restart)
        self._reported: set[str] = set()  # path-level problems reported while they last
        self.bad_lines = 0
        """Every bad line met since the follower started (restarts included)."""
        self.behind = False
        """The last poll stopped at ``POLL_BYTES`` with more of the file to read."""
        self._bad_in_poll = 0
        self._unlisted: list[int] = []  # [count, first line, last line] of this poll's bad lines not listed

    @property
    def partial_bytes(self) -> int:
        """Bytes of a line held until its newline arrives (the writer is in the middle of writing it)."""
        return len(self._partial)

    def close(self) -> None:
        """Let go of the file (the Context keeps what it has)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ------------------------------------------------------------------ polling

    def poll(self) -> list[dict[str, str]]:
        """Apply what the file gained since the last poll (at most ``POLL_BYTES`` of it); returns this
        poll's diagnostics: at most ``BAD_LINES_PER_POLL`` bad lines one by one, the rest counted."""
        found: list[dict[str, str]] = []
        self.behind = False
        self._bad_in_poll = 0
        self._unlisted = []
        try:
            self._poll(found)
        finally:
            if self._unlisted:
                count, first, last = self._unlisted
                found.append(diagnostic(
                    "watch_bad_lines", f"{self.path}: {count} more bad lines skipped (lines {first}–{last})",
                    f"{self.path}:{first}", "the writer should write one JSON message or record per line"))
        return [item for item in found if item]

    def _poll(self, found: list) -> None:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            if self._fd is not None:
                self.close()
                found.append(self._once("removed", diagnostic(
                    "watch_removed", f"{self.path} was removed; showing what it held until a new file appears",
                    str(self.path), "the view restarts from the new file's first line once it is created")))
            return
        if not stat.S_ISREG(info.st_mode):
            found.append(self._once("kind", diagnostic(
                "watch_unreadable", str(_refusal("watch", self.path, info.st_mode)), str(self.path),
                "watch a session file (.jsonl) that Context.save or another writer appends to")))
            return
        self._reported.discard("kind")
        if self._fd is not None and (info.st_dev, info.st_ino) != self._identity:
            self.close()
        if self._fd is None and not self._open(info, found):
            return
        self._reported.discard("removed")
        size = os.fstat(self._fd).st_size
        reason = self._restart_reason(size)
        if reason is not None:
            self._restart(reason, found)
        self._read_to(size, found)

    def _once(self, key: str, item: dict[str, str]) -> dict[str, str] | None:
        """``item`` the first time ``key``'s problem is seen (until it clears), else None."""
        if key in self._reported:
            return None
        self._reported.add(key)
        return item

    def _open(self, info: os.stat_result, found: list) -> bool:
        try:
            fd = os.open(self.path, _OPEN_FLAGS)
        except FileNotFoundError:
            return False  # removed between the stat and the open: the next poll sees it
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            os.close(fd)  # the path changed between the stat and the open: the next poll tries again
            return False
        self._fd, self._identity = fd, (opened.st_dev, opened.st_ino)
        if self._seen_file:
            self._restart(f"{self.path} is a new file (rotated, or removed and created again)", found)
        else:
            self._seen_file = True
            self._rewind()
        return True

    def _restart_reason(self, size: int) -> str | None:
        if size < self._position:
            return f"{self.path} was cut short ({size} bytes, {self._position} read)"
        if self._position and (self._pread(len(self._head), 0) != self._head or self._pread(
                len(self._tail), self._position - len(self._tail)) != self._tail):
            return f"{self.path} was rewritten in place"
        return None

    def _restart(self, reason: str, found: list) -> None:
        dropped = len(self.context)
        self.restarts += 1
        self._rewind()
        self.context.clear()
        found.append(diagnostic(
            "watch_restarted", f"{reason}: restarted from its first line ({dropped} entries cleared)",
            str(self.path), "a writer that rewrites the file makes the view start over; appending keeps it"))

    def _rewind(self) -> None:
        self._position = 0
        self._partial = bytearray()
        self._skipping = False
        self._head = self._tail = b""
        self.lines_read = 0
        self.header = None

    def _pread(self, size: int, offset: int) -> bytes:
        return os.pread(self._fd, size, offset) if size > 0 else b""

    # ------------------------------------------------------------------ lines

    def _read_to(self, size: int, found: list) -> None:
        budget = POLL_BYTES
        while self._position < size:
            if budget <= 0:
                self.behind = True
                return
            budget -= min(READ_CHUNK, size - self._position)
            data = self._pread(min(READ_CHUNK, size - self._position), self._position)
            if not data:
                break  # cut short between the fstat and the read: the next poll restarts
            if len(self._head) < _HEAD_BYTES:
                self._head += data[:_HEAD_BYTES - len(self._head)]
            self._position += len(data)
            self._tail = (self._tail + data[-_TAIL_BYTES:])[-_TAIL_BYTES:]
            self._take(data, found)

    def _take(self, data: bytes, found: list) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end == -1:
                break
            if self._skipping:
                self._skipping = False
            else:
                self._partial += data[start:end]
                self._line(bytes(self._partial), found)
            self._partial = bytearray()
            self.lines_read += 1
            start = end + 1
        if not self._skipping:
            self._partial += data[start:]
            if len(self._partial) > MAX_LINE_BYTES:
                self._report_bad(found, self.lines_read + 1, f"is longer than {MAX_LINE_BYTES} bytes (MAX_LINE_BYTES)")
                self._partial = bytearray()
                self._skipping = True

    def _report_bad(self, found: list, number: int, reason: str) -> None:
        item = self._bad(number, reason)
        if item is not None:
            found.append(item)

    def _bad(self, number: int, reason: str) -> dict[str, str] | None:
        """The diagnostic of bad line ``number`` — or None past ``BAD_LINES_PER_POLL`` in this poll, where it
        is only counted (memory stays bounded however many bad lines a read holds)."""
        self.bad_lines += 1
        self._bad_in_poll += 1
        if self._bad_in_poll > BAD_LINES_PER_POLL:
            if self._unlisted:
                self._unlisted[0] += 1
                self._unlisted[2] = number
            else:
                self._unlisted = [1, number, number]
            return None
        return diagnostic("watch_bad_line", f"{self.path} line {number} {reason}; skipped",
                          f"{self.path}:{number}", "the writer should write one JSON message or record per line")

    def _line(self, raw: bytes, found: list) -> None:
        number = self.lines_read + 1
        if not raw.strip():
            return
        try:
            line = decode_json(raw)
        except RefusedJSON as refused:
            self._report_bad(found, number, str(refused))
            return
        except orjson.JSONDecodeError:
            self._report_bad(found, number, "is not valid JSON")
            return
        try:
            problem = self._apply(line, number)
        except (TypeError, ValueError, IndexError) as error:
            problem = f"cannot be applied ({error})"
        if problem is not None:
            self._report_bad(found, number, problem)

    def _apply(self, line: Any, number: int) -> str | None:
        """Apply one decoded line to the Context; a reason when it is unusable (nothing changed then)."""
        kind = line.get("type") if isinstance(line, dict) else None
        if kind == "context":
            if number == 1:
                self.header = line
                return None
            return "is a second header"
        if kind == "context.truncate":
            length = line.get("length")
            if not isinstance(length, int) or isinstance(length, bool) or length < 0:
                return "is a malformed context.truncate line"
            self.context.truncate(length)
        elif kind == "context.replace":
            index, message = line.get("index"), line.get("message")
            if isinstance(message, dict) and message.get("type") == "context.record":
                message = message.get("record")
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.context) \
                    or not isinstance(message, dict):
                return f"is a malformed context.replace line (index {index!r}, {len(self.context)} entries)"
            self.context.replace(index, message)
        elif kind == "context.remove":
            index = line.get("index")
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.context):
                return f"is a malformed context.remove line (index {index!r}, {len(self.context)} entries)"
            self.context.remove(index)
        elif kind == "context.record":
            if not is_record(line.get("record")):
                return "is a malformed context.record line"
            self.context.append(line["record"], merge=False)
        elif is_record(line):
            self.context.append(line, merge=False)
        else:
            try:
                validate_message(line, f"line {number}")
            except TypeError as error:
                return f"is not a message ({error})"
            if not has_content(line) and not has_error(line):
                return "is an empty message, which a Context does not keep"
            self.context.append(line, merge=False)
        return None


def check_followable(path: str | os.PathLike) -> None:
    """Raise ``SessionFileError`` when something other than a regular file (a directory, a FIFO…) is at
    ``path``; no file yet is fine (a follower waits for it)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise _refusal("watch", Path(path), info.st_mode)
