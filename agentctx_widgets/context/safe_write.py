"""Opening files that came from outside: read only regular files without blocking, never write through a
symlink this process did not create.

One place for it, so every writer (recordings, exports, suites) and every reader of outside files
(assistant packages, recordings, workspaces) refuses the same tricks the same way:

- :func:`open_regular` / :func:`read_regular`: a FIFO, a device, a socket or a directory (or a symlink to
  one) is refused by ``stat`` before it is opened (the session store's check), the open is ``O_NONBLOCK``
  and the descriptor is checked again with ``fstat``; ``read_regular`` refuses a file over its byte cap by
  its size, before reading, and never reads more than the cap + 1 bytes (a file that grows meanwhile).
- :func:`open_append` / :func:`open_truncate`: ``O_NOFOLLOW`` (a planted symlink, dangling or not, is
  refused) and ``O_NONBLOCK`` (a FIFO without a reader is refused, not waited on), regular files only.
- :func:`write_atomic`: a symlink at the target is refused; the new bytes go to a ``mkstemp`` file
  (``O_EXCL``: an unpredictable name, never an existing path) in the target's directory, then
  ``os.replace`` puts it in place, so a crash leaves the old file or the new one.

Every refusal is an :class:`UnsafeFileError` (a ``ValueError``) naming the file and what it is.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading
from pathlib import Path

from .store import _NOT_REGULAR_ERRNOS, SessionFileError, _check_regular, _fsync_dir, _kind

__all__ = ["UnsafeFileError", "check_regular", "open_append", "open_regular", "open_truncate", "read_regular", "write_atomic"]

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_umask_lock = threading.Lock()


class UnsafeFileError(ValueError):
    """A file refused because of what it is (not a regular file, a symlink to write through, too big)."""


def check_regular(path: str | os.PathLike, what: str) -> None:
    """Refuse ``path`` unless it is a regular file (or a symlink to one), by ``stat``, without opening it."""
    try:
        _check_regular(Path(path), what, creating=False)
    except SessionFileError as refused:
        raise UnsafeFileError(str(refused)) from None


def open_regular(path: str | os.PathLike, what: str) -> tuple[int, os.stat_result]:
    """Open ``path`` to read, only if it is a regular file (symlinks to one are followed): ``(fd, fstat)``.

    Never blocks on a FIFO or a device; the caller closes the descriptor."""
    path = Path(path)
    check_regular(path, what)
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as error:
        if error.errno in _NOT_REGULAR_ERRNOS:
            raise UnsafeFileError(f"{what}: {path} is not a regular file ({error.strerror}); refusing to open it") from None
        raise
    return fd, _regular_fd(fd, path, what, "open")


def read_regular(path: str | os.PathLike, what: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, refused (by its size, before reading) over ``max_bytes``."""
    fd, info = open_regular(path, what)
    try:
        if info.st_size > max_bytes:
            raise UnsafeFileError(f"{what}: {path} is {info.st_size} bytes, over the {max_bytes}-byte limit; "
                                  f"refusing to read it")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:  # it grew while we read
            raise UnsafeFileError(f"{what}: {path} grew past the {max_bytes}-byte limit while being read; "
                                  f"refusing it")
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_append(path: str | os.PathLike, what: str) -> int:
    """Open (creating) ``path`` to read and append, never through a symlink; returns the descriptor."""
    return _open_to_write(Path(path), what, os.O_RDWR | os.O_APPEND)


def open_truncate(path: str | os.PathLike, what: str) -> int:
    """Open (creating, else emptying) the regular file ``path`` to write, never through a symlink."""
    return _open_to_write(Path(path), what, os.O_WRONLY | os.O_TRUNC)


def _open_to_write(path: Path, what: str, mode: int) -> int:
    flags = (mode | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP or os.path.islink(path):
            raise UnsafeFileError(_symlink_refusal(what, path)) from None
        if error.errno in _NOT_REGULAR_ERRNOS:
            raise UnsafeFileError(f"{what}: {path} is not a regular file ({error.strerror}); refusing to write to it") from None
        raise
    _regular_fd(fd, path, what, "write to")
    return fd


def _regular_fd(fd: int, path: Path, what: str, verb: str) -> os.stat_result:
    """``fd``'s ``fstat``, once it is known to be a regular file (made blocking again: plain I/O from here
    on); otherwise ``fd`` is closed and the file refused."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFileError(f"{what}: {path} is {_kind(info.st_mode)}, not a regular file; refusing to {verb} it")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return info


def write_atomic(path: str | os.PathLike, data: bytes, what: str) -> Path:
    """Put ``data`` at ``path`` whole (a temporary file beside it, then a rename); returns the path.

    An existing regular file keeps its permission bits; a new one gets ``0o666`` less the umask."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise UnsafeFileError(_symlink_refusal(what, path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise UnsafeFileError(f"{what}: {path} is {_kind(info.st_mode)}, not a regular file; refusing to replace it")
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp_name, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)
    return path


def _symlink_refusal(what: str, path: Path) -> str:
    try:
        target = f" (to {os.readlink(path)!r})"
    except OSError:
        target = ""
    return f"{what}: {path} is a symlink{target}; refusing to write through it (write to the file itself)"


def _umask() -> int:
    with _umask_lock:  # the only portable way to read it is to set it; hold it for as short as possible
        mask = os.umask(0o022)
        os.umask(mask)
    return mask

