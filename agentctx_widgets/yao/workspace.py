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
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

from ..context.safe_write import UnsafeFileError, check_regular, open_regular, open_truncate, read_regular, write_atomic
from .values import YaoServiceError, js_string

MAX_READ_BYTES = 64 * 1024 * 1024
"""``ReadFile`` of a larger file is refused by its size (it becomes one JavaScript string)."""
MAX_COPY_BYTES = 256 * 1024 * 1024
"""``Copy`` of more bytes than this (one file, or a tree's files together) is refused before copying."""
MAX_DIR_ENTRIES = 10_000
"""``ReadDir`` of a directory with more entries, or ``Copy`` of a tree with more, is refused."""


class Workspace:
    """A workspace confined to ``root`` (which must be an existing directory)."""

    def __init__(self, root: str | os.PathLike) -> None:
        path = Path(root)
        if not path.is_dir():
            raise ValueError(f"Workspace(root): not a directory: {str(path)!r}")
        self.root = path.resolve()

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
        path = self._path("ReadFile", args, "a path argument")
        data = self._do("ReadFile", lambda: read_regular(path, "ReadFile", MAX_READ_BYTES))
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
                    item["size"] = _int32(entry.stat(follow_symlinks=False).st_size)
                    items.append(item)
            return sorted(items, key=lambda item: item["name"])

        return self._do("ReadDir", listing)

    def MkdirAll(self, *args: Any) -> None:  # noqa: N802
        path = self._path("MkdirAll", args, "a path argument")
        self._do("MkdirAll", lambda: path.mkdir(parents=True, exist_ok=True))

    def Remove(self, *args: Any) -> None:  # noqa: N802
        """A file or an empty directory (Go's ``os.Remove``)."""
        path = self._path("Remove", args, "a path argument")
        self._do("Remove", lambda: path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink())

    def RemoveAll(self, *args: Any) -> None:  # noqa: N802
        """A tree; a missing path is not an error (Go's ``os.RemoveAll``). The root itself is refused."""
        path = self._path("RemoveAll", args, "a path argument")
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
            self._do("Copy", lambda: _copy_planned(plan, total))
        else:
            self._do("Copy", lambda: _copy_planned([(dst, src)], self._copy_size(src, src, 0)))

    def Stat(self, *args: Any) -> dict:  # noqa: N802
        path = self._path("Stat", args, "a path argument")
        info = self._do("Stat", path.stat)
        return {"name": path.name or self.root.name, "size": _int32(info.st_size), "is_dir": path.is_dir(),
                "mode": _int32(info.st_mode & 0o777 | (0x80000000 if path.is_dir() else 0)),
                "mtime": int(info.st_mtime * 1000)}

    def Exists(self, *args: Any) -> bool:  # noqa: N802
        path = self._path("Exists", args, "a path argument")
        return path.exists()

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

    def _path(self, method: str, args: tuple, needs: str) -> Path:
        if not args:
            raise YaoServiceError(f"{method} requires {needs}")
        return self.resolve(method, args[0])

    @staticmethod
    def _do(method: str, action: Any) -> Any:
        try:
            return action()
        except UnsafeFileError as error:
            raise YaoServiceError(f"{method} failed: {str(error).split(': ', 1)[-1]}") from error
        except OSError as error:
            raise YaoServiceError(f"{method} failed: {error.strerror or error}") from error


def _copy_file(src: Path, dst: Path, budget: int) -> int:
    """Copy one regular file (opened without blocking: never a FIFO or a device), keeping its mode bits;
    at most ``budget`` bytes (a file that grew since it was stat'ed is refused). Returns the bytes left."""
    fd, info = open_regular(src, "Copy")
    with os.fdopen(fd, "rb") as source, os.fdopen(open_truncate(dst, "Copy"), "wb") as target:
        while chunk := source.read(min(1 << 20, budget + 1)):
            budget -= len(chunk)
            if budget < 0:
                raise UnsafeFileError(f"Copy: {src} grew while being copied, past the size stated before "
                                      f"copying; refusing it")
            target.write(chunk)
        os.fchmod(target.fileno(), stat.S_IMODE(info.st_mode))
    return budget


def _copy_planned(plan: list[tuple[Path, Path | None]], budget: int) -> None:
    for target, source in plan:
        if source is None:
            target.mkdir(parents=True, exist_ok=False)
        else:
            budget = _copy_file(source, target, budget)


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31
