"""``ctx.workspace``: Yao's workspace file system, on a local directory you pass, and never outside it.

Upstream (YaoApp/yao 5a3f9a6a) mounts ``ctx.workspace`` only when the request has a V2 workspace
(``agent/context/jsapi.go:164-171``); its methods are ``ReadFile WriteFile ReadDir MkdirAll Remove
RemoveAll Rename Copy Stat Exists`` (``agent/context/jsapi_workspace.go:20-29``), each throwing
``"<Method> requires …"`` for missing arguments and ``"<Method> failed: <error>"`` when the file system
refuses (``jsapi_workspace.go:39-280``). Return shapes are the binding's: ``ReadFile`` a string,
``ReadDir`` ``[{name, is_dir, size}]``, ``Stat`` ``{name, size, is_dir, mode, mtime}`` (``mtime`` in ms),
``Exists`` a boolean (only "does not exist" is false: ``jsapi_workspace.go:274-275``).

Paths are relative to the root (a leading ``/`` means the root too, as a workspace's paths do); one
that resolves outside it — ``..``, an absolute path elsewhere, a symlink pointing out — is refused
with ``"<Method> failed: path escapes the workspace: <path>"`` before anything is touched.

What a workspace directory holds came from outside too (a download, a sandbox), so: ``ReadFile`` and
``Copy`` open only regular files (a FIFO, a device, a socket — or a symlink to one — is refused by
``stat`` before any open, so no call can block the engine thread that waits on it), ``ReadFile`` refuses
a file over ``MAX_READ_BYTES`` by its size before reading a byte, ``WriteFile`` never writes through a
symlink or into a FIFO (a new file put in place whole), and ``Copy`` of a directory checks every entry
first: a symlink in it that points outside the workspace is refused (naming it) before anything is
copied, one that points inside is copied as the file it names. ``ReadDir`` lists at most
``MAX_DIR_ENTRIES`` entries and ``Copy`` plans at most that many; ``Copy`` refuses, by the sizes it
stats before copying a byte, a copy over ``MAX_COPY_BYTES`` in all (it runs on the engine thread, which
no time limit can interrupt inside a system call), and never writes more than it stated.

``ReadFile`` and ``Copy`` are interruptible: they read and write :data:`COPY_CHUNK` bytes at a time and
check between chunks whether the call must stop — the turn interrupted (Ctrl-C, the request's stop) or
the JavaScript hook past its time or wall-clock limit (``hooks.js_bridge.bound_call_stopped``: a kill of
the hook's worker cannot stop a host call running in the kernel), or the workspace's own ``stop`` set —
and then fail with ``"<Method> failed: stopped (<why>) after <n> of <m> bytes …"``. A stopped or failed
``Copy`` leaves nothing half-written: a file is written to a ``mkstemp`` file beside its destination and
renamed into place only when whole (an existing destination stays as it was), and a directory copy
(whose destination it creates) is removed whole.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..context.safe_write import UnsafeFileError, _symlink_refusal, check_regular, open_regular, write_atomic
from ..context.store import _kind
from ..hooks.js_bridge import bound_call_stopped
from .values import YaoServiceError, js_int32, js_string

MAX_READ_BYTES = 64 * 1024 * 1024
"""``ReadFile`` of a larger file is refused by its size (it becomes one JavaScript string)."""
MAX_COPY_BYTES = 256 * 1024 * 1024
"""``Copy`` of more bytes than this (one file, or a tree's files together) is refused before copying."""
MAX_DIR_ENTRIES = 10_000
"""``ReadDir`` of a directory with more entries, or ``Copy`` of a tree with more, is refused."""
COPY_CHUNK = 1 << 20
"""Bytes per read (and write) of ``ReadFile`` and ``Copy``; whether to stop is checked between chunks."""

_WHY = {"interrupt": "the turn was interrupted", "time": "the hook's time limit",
        "wall": "the hook's wall-clock limit"}


class Workspace:
    """A workspace confined to ``root`` (which must be an existing directory). ``stop`` (anything with
    ``is_set()``, e.g. a request's ``StopSignal``) stops a ``ReadFile`` or ``Copy`` in progress once set;
    a JavaScript hook's interrupt and limits stop them without it."""

    def __init__(self, root: str | os.PathLike, stop: Any = None) -> None:
        path = Path(root)
        if not path.is_dir():
            raise ValueError(f"Workspace(root): not a directory: {str(path)!r}")
        self.root = path.resolve()
        self.stop = stop

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(self, method: str, raw: Any) -> Path:
        """The absolute path for ``raw`` inside the root, or the error ``method`` throws."""
        text = js_string(raw)
        candidate = (self.root / text.lstrip("/")).resolve()
        if candidate != self.root and self.root not in candidate.parents:
            raise YaoServiceError(f"{method} failed: path escapes the workspace: {text}")
        return candidate

    def ReadFile(self, *args: Any) -> str:  # noqa: N802 - Yao's method names
        path = self._path("ReadFile", args)
        data = self._do("ReadFile", lambda: _read_file(path, self._stopped))
        return data.decode("utf-8", errors="replace")

    def WriteFile(self, *args: Any) -> None:  # noqa: N802
        if len(args) < 2:
            raise YaoServiceError("WriteFile requires path and content arguments")
        path = self.resolve("WriteFile", args[0])
        content = js_string(args[1]).encode()
        self._do("WriteFile", lambda: write_atomic(path, content, "WriteFile"))

    def ReadDir(self, *args: Any) -> list[dict]:  # noqa: N802
        """Entries sorted by name, as Go's ``os.ReadDir`` returns them."""
        raw = args[0] if args and isinstance(args[0], str) else "."
        path = self.resolve("ReadDir", raw)

        def listing() -> list[dict]:
            items = []
            with os.scandir(path) as entries:
                for entry in entries:
                    if len(items) >= MAX_DIR_ENTRIES:
                        raise UnsafeFileError(f"ReadDir: {path} holds more than {MAX_DIR_ENTRIES} entries "
                                              f"(MAX_DIR_ENTRIES); refusing to list it")
                    item: dict[str, Any] = {"name": entry.name, "is_dir": entry.is_dir(follow_symlinks=False)}
                    item["size"] = js_int32(entry.stat(follow_symlinks=False).st_size)
                    items.append(item)
            return sorted(items, key=lambda item: item["name"])

        return self._do("ReadDir", listing)

    def MkdirAll(self, *args: Any) -> None:  # noqa: N802
        path = self._path("MkdirAll", args)
        self._do("MkdirAll", lambda: path.mkdir(parents=True, exist_ok=True))

    def Remove(self, *args: Any) -> None:  # noqa: N802
        """A file or an empty directory (Go's ``os.Remove``)."""
        path = self._path("Remove", args)
        self._do("Remove", lambda: path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink())

    def RemoveAll(self, *args: Any) -> None:  # noqa: N802
        """A tree; a missing path is not an error (Go's ``os.RemoveAll``). The root itself is refused."""
        path = self._path("RemoveAll", args)
        if path == self.root:
            raise YaoServiceError("RemoveAll failed: refusing to remove the workspace root")
        if path.is_dir() and not path.is_symlink():
            self._do("RemoveAll", lambda: shutil.rmtree(path))
        elif path.exists() or path.is_symlink():
            self._do("RemoveAll", path.unlink)

    def Rename(self, *args: Any) -> None:  # noqa: N802
        if len(args) < 2:
            raise YaoServiceError("Rename requires oldName and newName arguments")
        old, new = self.resolve("Rename", args[0]), self.resolve("Rename", args[1])
        self._do("Rename", lambda: os.replace(old, new))

    def Copy(self, *args: Any) -> None:  # noqa: N802
        if len(args) < 2:
            raise YaoServiceError("Copy requires src and dst arguments")
        src, dst = self.resolve("Copy", args[0]), self.resolve("Copy", args[1])
        if src.is_dir():
            plan = self._copy_plan(src, dst)
            total = 0
            for _target, source in plan:
                if source is not None:
                    total = self._copy_size(source, src, total)
            self._do("Copy", lambda: _copy_planned(plan, total, self._stopped))
        else:
            self._do("Copy", lambda: _copy_planned([(dst, src)], self._copy_size(src, src, 0), self._stopped))

    def Stat(self, *args: Any) -> dict:  # noqa: N802
        path = self._path("Stat", args)
        info = self._do("Stat", path.stat)
        return {"name": path.name or self.root.name, "size": js_int32(info.st_size), "is_dir": path.is_dir(),
                "mode": js_int32(info.st_mode & 0o777 | (0x80000000 if path.is_dir() else 0)),
                "mtime": int(info.st_mtime * 1000)}

    def Exists(self, *args: Any) -> bool:  # noqa: N802
        return self._path("Exists", args).exists()

    def _copy_plan(self, src: Path, dst: Path) -> list[tuple[Path, Path | None]]:
        """Every ``(target, source)`` of copying the tree ``src`` to ``dst`` (``source`` ``None`` for a
        directory), each source resolved and inside the workspace; raises before anything is copied."""
        if dst == src or src in dst.parents:
            raise YaoServiceError(f"Copy failed: cannot copy {src.relative_to(self.root)} into itself")
        plan: list[tuple[Path, Path | None]] = [(dst, None)]
        folders = [(src, dst)]
        while folders:
            folder, base = folders.pop()
            with self._do("Copy", lambda: os.scandir(folder)) as scan:
                names = []
                for item in scan:
                    names.append(item.name)
                    if len(plan) - 1 + len(names) > MAX_DIR_ENTRIES:  # plan[0] is dst itself
                        raise YaoServiceError(f"Copy failed: {src.relative_to(self.root)} holds more than "
                                              f"{MAX_DIR_ENTRIES} entries (MAX_DIR_ENTRIES); refusing to copy it")
            for name in sorted(names):
                entry = folder / name
                real = entry.resolve()
                shown = entry.relative_to(self.root)
                if real != self.root and self.root not in real.parents:
                    raise YaoServiceError(f"Copy failed: path escapes the workspace: {shown} (a symlink to {real})")
                if real.is_dir():
                    if entry.is_symlink():  # a link to a folder inside: its own copy, never a loop through it
                        raise YaoServiceError(f"Copy failed: {shown} is a symlink to a directory; refusing to follow it")
                    plan.append((base / name, None))
                    folders.append((entry, base / name))
                else:
                    self._do("Copy", lambda: check_regular(entry, "Copy"))
                    plan.append((base / name, real))
        return plan

    def _copy_size(self, source: Path, src: Path, total: int) -> int:
        """``total`` plus the size of ``source`` (stat'ed, never opened), refused past ``MAX_COPY_BYTES``."""
        self._do("Copy", lambda: check_regular(source, "Copy"))
        size = self._do("Copy", lambda: os.stat(source)).st_size
        if total + size > MAX_COPY_BYTES:
            what = f"{src} is {size} bytes" if source == src else f"{src} holds {total + size} bytes or more"
            raise YaoServiceError(f"Copy failed: {what}, over the {MAX_COPY_BYTES}-byte limit (MAX_COPY_BYTES); "
                                  f"refusing to copy it")
        return total + size

    def _stopped(self) -> str | None:
        """Why a read or copy in progress must stop now (a key of ``_WHY``), or ``None``."""
        if self.stop is not None and self.stop.is_set():
            return "interrupt"
        return bound_call_stopped()

    def _path(self, method: str, args: tuple) -> Path:
        if not args:
            raise YaoServiceError(f"{method} requires a path argument")
        return self.resolve(method, args[0])

    @staticmethod
    def _do(method: str, action: Any) -> Any:
        try:
            return action()
        except UnsafeFileError as error:
            raise YaoServiceError(f"{method} failed: {str(error).split(': ', 1)[-1]}") from error
        except OSError as error:
            raise YaoServiceError(f"{method} failed: {error.strerror or error}") from error


def _read_file(path: Path, stopped: Callable[[], str | None]) -> bytes:
    """``read_regular`` under ``MAX_READ_BYTES``, a chunk at a time, stopping when ``stopped()`` says so."""
    fd, info = open_regular(path, "ReadFile")
    try:
        if info.st_size > MAX_READ_BYTES:
            raise UnsafeFileError(f"ReadFile: {path} is {info.st_size} bytes, over the {MAX_READ_BYTES}-byte limit; "
                                  f"refusing to read it")
        chunks, total = [], 0
        while total <= MAX_READ_BYTES:
            why = stopped()
            if why is not None:
                raise UnsafeFileError(f"ReadFile: stopped ({_WHY[why]}) after reading {total} of {info.st_size} "
                                      f"bytes of {path}")
            chunk = os.read(fd, min(COPY_CHUNK, MAX_READ_BYTES + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > MAX_READ_BYTES:  # it grew while we read
            raise UnsafeFileError(f"ReadFile: {path} grew past the {MAX_READ_BYTES}-byte limit while being read; "
                                  f"refusing it")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _copy_file(src: Path, dst: Path, budget: int, stopped: Callable[[], str | None]) -> int:
    """Copy one regular file (opened without blocking: never a FIFO or a device), keeping its mode bits;
    at most ``budget`` bytes (a file that grew since it was stat'ed is refused), :data:`COPY_CHUNK` at a
    time, checking ``stopped()`` before each. The bytes go to a ``mkstemp`` file beside ``dst``, renamed
    onto it once whole: a stop or a failure removes it and leaves ``dst`` as it was. Returns the bytes left."""
    try:
        before = os.lstat(dst)
    except FileNotFoundError:
        before = None
    if before is not None and stat.S_ISLNK(before.st_mode):
        raise UnsafeFileError(_symlink_refusal("Copy", dst))
    if before is not None and not stat.S_ISREG(before.st_mode):
        raise UnsafeFileError(f"Copy: {dst} is {_kind(before.st_mode)}, not a regular file; refusing to replace it")
    fd, info = open_regular(src, "Copy")
    try:
        out, temp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".copy", dir=dst.parent)
    except BaseException:
        os.close(fd)
        raise
    copied = 0
    try:
        try:
            while True:
                why = stopped()
                if why is not None:
                    raise UnsafeFileError(f"Copy: stopped ({_WHY[why]}) after copying {copied} of {info.st_size} "
                                          f"bytes of {src}; nothing was left at {dst}")
                chunk = os.read(fd, min(COPY_CHUNK, budget + 1))
                if not chunk:
                    break
                budget -= len(chunk)
                if budget < 0:
                    raise UnsafeFileError(f"Copy: {src} grew while being copied, past the size stated before "
                                          f"copying; refusing it")
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
                copied += len(chunk)
            os.fchmod(out, stat.S_IMODE(info.st_mode))
        finally:
            os.close(out)
        os.replace(temp, dst)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    finally:
        os.close(fd)
    return budget


def _copy_planned(plan: list[tuple[Path, Path | None]], budget: int, stopped: Callable[[], str | None]) -> None:
    """Carry out a plan (``_copy_plan``'s, or one file's): on a stop or a failure, a tree's destination
    (``plan[0]``, a directory this call created) is removed whole."""
    created: Path | None = None
    try:
        for target, source in plan:
            if source is None:
                target.mkdir(parents=True, exist_ok=False)
                created = created or target
            else:
                budget = _copy_file(source, target, budget, stopped)
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
