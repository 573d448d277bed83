"""A Yao assistant's ``src/`` (TypeScript or JavaScript modules) loaded as one hook set in QuickJS.

Yao transpiles ``src/index.ts`` and bundles what it imports (gou ``runtime/v8/script.go``:
``TransformTS`` 208-260, ``replaceImportCode`` 436-500). Here the same happens inside the hook set's
QuickJS worker, with no Node at run time: sucrase (bundled as ``static/ts_transpile.js``) strips the
types keeping every line where it was, and ``module_loader.js`` links the modules — relative imports
inside ``src/``, ``@yao/runtime`` (``Process``, ``time``), ``@yao/agent`` (types only) — and refuses any
other import with an error naming the importing file and line.

Each module is evaluated at its own offset of one line numbering (``_Layout``), so any engine line
names a module and its line: errors are re-raised naming the ``.ts`` file and line (``file`` and
``line`` on the exception, and in its message).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from ..context.safe_write import UnsafeFileError, read_regular
from ..hooks.errors import HookError, HookLoadError, HookReturnError, HookTimeoutError
from ..hooks.hook_context import HookContext
from ..hooks.js_hooks import JsHooks

MARK = "[agentctx-yao] "
"""What ``module_loader.js`` puts before the JSON of a load error."""
PROCESS_GLOBAL = "__agentctx_yao_process"
"""The host function behind ``Process`` (the loader takes it off the global object before any module runs)."""
MODULE_SUFFIXES = (".ts", ".js")

_LOOP = re.compile(r"\b(?:while|for|do)\b")
_FRAME = re.compile(r"^(\s*at )(?:(\S+) )?\(?<input>:(\d+)(?::(\d+))?\)?\s*$")


def _static_text(name: str) -> str:
    try:
        return resources.files("agentctx_widgets").joinpath("static", name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuntimeError(f"agentctx_widgets/static/{name} is missing: build the front end (cd js && npm run "
                           "build) or reinstall the package") from None


class TypeScriptLoadError(HookLoadError):
    """A module of ``src/`` could not be loaded: a syntax error, a refused import, a top-level throw.
    ``file`` is its path (``src/index.ts``), ``line`` / ``column`` where, when known."""

    def __init__(self, message: str, *, file: str, line: int | None = None, column: int | None = None,
                 name: str | None = None, stack: str | None = None) -> None:
        super().__init__(message, line=line, name=name, stack=stack)
        self.file, self.column = file, column

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.line is not None and self.column is not None:
            where += f":{self.column}"
        return f"{where}: {self.detail}"


@dataclass(frozen=True)
class _Module:
    path: str  # relative to src/, with "/" ("lib/util.ts")
    source: str
    start: int  # its first line in the shared numbering
    lines: int

    @property
    def end(self) -> int:
        return self.start + self.lines + 2  # the loader adds two lines after the code


class _Layout:
    """Where each module sits in the one line numbering every module is evaluated at."""

    def __init__(self, label: str, sources: dict[str, str]) -> None:
        self.label = label  # how files are named in messages: "src"
        self.modules: list[_Module] = []
        start = 1
        for path in sorted(sources):
            module = _Module(path, sources[path], start, sources[path].count("\n") + 1)
            self.modules.append(module)
            start = module.end

    def name(self, path: str) -> str:
        return f"{self.label}/{path}"

    def locate(self, line: int) -> tuple[str, int] | None:
        """(file as shown, its line) for an engine line, or ``None`` outside every module."""
        for module in self.modules:
            if module.start <= line < module.end:
                return self.name(module.path), min(line - module.start + 1, module.lines)
        return None

    def loop_line(self, file: str, line: int) -> int:
        """QuickJS places a loop that calls nothing at its function's first line (see
        ``JsHooks._running_line``): the first loop from ``line`` on in that file, else ``line``."""
        module = next((module for module in self.modules if self.name(module.path) == file), None)
        if module is None:
            return line
        lines = module.source.split("\n")
        return next((at + 1 for at in range(line - 1, len(lines)) if _LOOP.search(lines[at])), line)

    def frames(self, stack: str) -> tuple[str, list[tuple[str, int, None]]]:
        """The stack with module frames renamed to their files, and those frames' (file, line, None).
        Columns are left out: they count in the transpiled code (only lines stay where they were)."""
        found: list[tuple[str, int, None]] = []
        out = []
        for text in stack.split("\n"):
            match = _FRAME.match(text)
            where = None
            if match and not (match.group(2) or "").startswith(("__agentctx", "<eval>")):
                where = self.locate(int(match.group(3)))
            if where is None:
                out.append(text)
                continue
            file, line = where
            found.append((file, line, None))
            function = match.group(2)
            place = f"{file}:{line}"
            out.append(f"{match.group(1)}{function} ({place})" if function else f"{match.group(1)}{place}")
        return "\n".join(out), found

    def spec(self, entry: str, processes: list[str]) -> dict:
        files = {module.path: {"source": module.source, "start": module.start, "lines": module.lines}
                 for module in self.modules}
        return {"entry": entry, "files": files, "processes": processes}


MAX_SOURCE_BYTES = 1024 * 1024
"""The largest ``src/`` module read (a hook script is a few KB; the package's own files have this cap too)."""

MAX_SOURCES = 1000
"""The most ``.ts`` / ``.js`` modules ``src/`` may hold, and ``MAX_SOURCES_BYTES`` their total."""

MAX_SOURCES_BYTES = 16 * 1024 * 1024


def _read_sources(src_dir: Path) -> dict[str, str]:
    """Every ``.ts`` / ``.js`` file under ``src_dir`` (not ``.d.ts``), by its path relative to it: regular
    files only (a FIFO or ``/dev/zero`` is refused before it is opened), each at most ``MAX_SOURCE_BYTES``,
    at most ``MAX_SOURCES`` of them and ``MAX_SOURCES_BYTES`` together. ``src_dir``'s parent is the
    assistant: a ``src_dir`` that resolves outside it (a symlink) is refused, naming it; a file or folder
    inside symlinked out of ``src_dir`` is not a module (``rglob`` does not enter a symlinked folder)."""
    sources: dict[str, str] = {}
    try:
        root = src_dir.resolve()
    except (RuntimeError, OSError):
        raise TypeScriptLoadError("is a symlink loop; refusing to read it", file=src_dir.name) from None
    assistant = src_dir.absolute().parent.resolve()
    if not root.is_relative_to(assistant):  # src/ itself a symlink out: its modules are not the assistant's
        raise TypeScriptLoadError(f"is a symlink to {root}, which is outside {assistant}; an assistant reads "
                                  f"only its own files", file=src_dir.name)
    total = 0
    for path in sorted(src_dir.rglob("*")):
        if path.suffix not in MODULE_SUFFIXES or path.name.endswith(".d.ts"):
            continue
        relative = path.relative_to(src_dir).as_posix()
        file = f"{src_dir.name}/{relative}"
        try:
            real = path.resolve()
        except (RuntimeError, OSError):  # a symlink loop (Python 3.11 raises RuntimeError)
            raise TypeScriptLoadError("is a symlink loop; refusing to read it", file=file) from None
        if not real.is_relative_to(root):
            continue  # a symlink out of src/: not a module of this assistant (an import of it is refused)
        if path.is_dir():
            continue
        if len(sources) >= MAX_SOURCES:
            raise TypeScriptLoadError(f"src/ holds more than {MAX_SOURCES} modules (MAX_SOURCES)", file=file)
        try:
            data = read_regular(path, "assistant module", MAX_SOURCE_BYTES)
        except UnsafeFileError as error:
            raise TypeScriptLoadError(str(error).removeprefix("assistant module: "), file=file) from None
        except OSError as error:  # a dangling symlink inside src/
            raise TypeScriptLoadError(f"cannot be read: {error.strerror}", file=file) from None
        total += len(data)
        if total > MAX_SOURCES_BYTES:
            raise TypeScriptLoadError(f"src/'s modules pass {MAX_SOURCES_BYTES} bytes together (MAX_SOURCES_BYTES)",
                                      file=file)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise TypeScriptLoadError(f"is not UTF-8 text ({error.reason} at byte {error.start})",
                                      file=file) from error
        sources[relative] = text.replace("\r\n", "\n").replace("\r", "\n")  # Yao reads sources LF too
    return sources


def _check_processes(processes: Mapping[str, Callable[..., Any]] | None) -> dict[str, Callable[..., Any]]:
    if processes is None:
        return {}
    if not isinstance(processes, Mapping):
        raise TypeError(f"processes: expected a mapping of process name to callable, got {type(processes).__name__}")
    for name, function in processes.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"processes: a process name must be a non-empty string, got {name!r}")
        if not callable(function):
            raise TypeError(f"processes[{name!r}]: expected a callable, got {type(function).__name__}")
    return dict(processes)


class ProcessError(Exception):
    """A registered process raised: thrown in JavaScript at the ``Process(...)`` call."""


def _dispatcher(processes: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    def __agentctx_yao_process(name: str, *args: Any) -> Any:
        function = processes.get(name)
        if function is None:  # the loader checks first; a name only reaches here once it is registered
            raise ProcessError(f"Exception|404:{name} not found")
        try:
            return function(*args)
        except Exception as error:
            raise ProcessError(f"Process {name!r} raised {type(error).__name__}: {error}") from error

    return __agentctx_yao_process


def _yao_result(hook: str, value: Any, *, line: int | None = None) -> dict | None:
    """What a Yao hook may return here: nothing, or an object (its fields are the runner's to apply)."""
    if value is None or isinstance(value, dict):
        return value
    kind = "an array" if isinstance(value, list) else type(value).__name__
    raise HookReturnError(f"returned {kind}; expected nothing (null) or an object", hook=hook, line=line)


class TypeScriptHooks:
    """A Yao assistant's ``Create`` / ``Next`` (the ``Hooks`` protocol), errors naming ``.ts`` lines."""

    def __init__(self, js: JsHooks, layout: _Layout) -> None:
        self._js, self._layout = js, layout
        js.lines = {}  # its lines are of the generated source; ours come from the stack (see _relocate)
        self.names: frozenset[str] = js.names

    async def call(self, name: str, ctx: HookContext, *args: Any) -> dict | None:
        try:
            return await self._js.call(name, ctx, *args)
        except HookError as error:
            raise self._relocate(error) from error

    def take_console(self) -> list[dict]:
        return self._js.take_console()

    def interrupt(self) -> None:
        self._js.interrupt()

    def close(self) -> None:
        self._js.close()

    @property
    def worker_pid(self) -> int | None:
        return self._js.worker_pid

    def _relocate(self, error: HookError) -> HookError:
        """The same error, its line that of the ``.ts`` file (named in the message and as ``file``)."""
        stack, frames = self._layout.frames(error.stack or "")
        if frames:
            file, line, _ = frames[0]
        elif error.line is not None and self._layout.locate(error.line) is not None:
            file, line = self._layout.locate(error.line)  # type: ignore[misc]
        else:
            return error
        if isinstance(error, HookTimeoutError):
            line = self._layout.loop_line(file, line)
        moved = type(error)(f"{error.detail} (at {file}:{line})", hook=error.hook, line=line, code=error.code,
                            name=error.name, stack=stack or error.stack, value=error.value)
        moved.file = file  # type: ignore[attr-defined]
        return moved


def _load_error(error: HookLoadError, layout: _Layout) -> HookLoadError:
    """The loader's JSON report (after :data:`MARK`) as a :class:`TypeScriptLoadError`."""
    text = error.detail
    at = text.find(MARK)
    if at < 0:
        return error
    try:
        info = orjson.loads(text[at + len(MARK):])
    except orjson.JSONDecodeError:
        return error
    kind, file = info.get("kind"), layout.name(info["file"]) if info.get("file") else "src"
    stack, frames = layout.frames(info.get("stack") or "")
    line, column = info.get("line"), info.get("column")
    if kind == "import":
        own = [frame for frame in frames if frame[0] == file] or frames
        if own:
            file, line, column = own[0]
        return TypeScriptLoadError(info["message"], file=file, line=line, column=column, stack=stack)
    if kind == "syntax":
        if line is None and frames:
            file, line, column = frames[0]
        message = info["message"]
        message = re.sub(r"^Error transforming \S+: ", "", message)
        message = re.sub(r" \(\d+:\d+\)$", "", message)
        name = info.get("name") or "SyntaxError"
        return TypeScriptLoadError(f"{name}: {message}", file=file, line=line, column=column, stack=stack, name=name)
    if kind == "threw" and frames:
        file, line, column = frames[0]
        return TypeScriptLoadError(f"the top-level code threw {info['name']}: {info['message']}", file=file,
                                   line=line, column=column, stack=stack, name=info["name"])
    return TypeScriptLoadError(f"{info.get('name', 'Error')}: {info.get('message')}", file=file, stack=stack)


def load_ts_module_set(
    src_dir: str | Path,
    entry: str | None = None,
    *,
    processes: Mapping[str, Callable[..., Any]] | None = None,
    **limits: Any,
) -> TypeScriptHooks:
    """Load the hooks of a Yao assistant's ``src/`` folder (``entry``: ``index.ts``, else ``index.js``).

    ``processes`` maps Yao process names to Python callables: ``Process("models.user.find", 1)`` in a
    hook calls ``processes["models.user.find"](1)`` in the kernel (arguments and result as JSON); an
    unregistered name throws a JavaScript ``Error`` naming it. ``limits`` are ``hooks_from_js``'s
    (``time_limit``, ``memory_limit``, ``sleep``, …). Raises :class:`TypeScriptLoadError` naming the
    file and line of a syntax error, a refused import or a top-level throw.
    """
    src = Path(src_dir)
    if not src.is_dir():
        raise FileNotFoundError(f"load_ts_module_set: {src} is not a directory")
    table = _check_processes(processes)
    sources = _read_sources(src)
    if entry is None:
        entry = next((name for name in ("index.ts", "index.js") if name in sources), "index.ts")
    if entry not in sources:
        raise TypeScriptLoadError(f"no entry module (found {sorted(sources) or 'no .ts or .js files'})",
                                  file=f"{src.name}/{entry}")
    layout = _Layout(src.name, sources)
    spec = orjson.dumps(layout.spec(entry, sorted(table))).decode()
    loader = resources.files(__package__).joinpath("module_loader.js").read_text(encoding="utf-8")
    source = (f"{loader.rstrip().rstrip(';')}((function () {{{_static_text('ts_transpile.js')}\n"
              f"return __agentctx_sucrase; }})(), {spec});\n")
    js_globals = dict(limits.pop("globals", None) or {})
    js_globals[PROCESS_GLOBAL] = _dispatcher(table)
    try:
        js = JsHooks(source, globals=js_globals, result_check=_yao_result, **limits)
    except HookLoadError as error:
        raise _load_error(error, layout) from error
    return TypeScriptHooks(js, layout)


__all__ = ["ProcessError", "TypeScriptHooks", "TypeScriptLoadError", "load_ts_module_set"]
