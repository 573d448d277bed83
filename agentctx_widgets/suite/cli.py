"""``python -m agentctx_widgets suite check SUITE --hooks FILE | --assistant DIR``: a suite checked outside a notebook.

Every case of the suite file is re-run with the hooks in ``FILE`` (or the Yao assistant in ``DIR``) against
its recorded model answers, offline (``Suite(path).check``). The text diff (or the reason) of each case
that is not ``passed`` is printed, then one summary line (``3 cases: 2 passed, 1 changed``) and the cost
line (``cost: recorded $0.0105, checked $0.007 (Δ -$0.0035)``, the turns priced as recorded). Exit code 0
when every case passed, 1 when any is ``changed``, ``failed`` or ``model_changed``, 2 for bad input (one
``agentctx: suite check: …`` line on stderr naming the file, as ``export`` does). ``--html OUT`` also
writes the report as a static page (no JavaScript; rows open to their side-by-side diffs).

What ``--hooks FILE`` may be (the pytest plugin, ``pytest_plugin.py``, loads hooks the same way):

- ``.js``: seed-API JavaScript hooks (``function Create(ctx, messages) {…}``), as ``hooks_from_js``
  loads them; errors name the file and its line. One hook set (one worker) per concurrent case.
- ``.ts``: the same, written in TypeScript: its types are stripped by the bundled sucrase
  (``static/ts_transpile.js``, lines kept where they were), then loaded as a ``.js`` file. Imports are not
  linked (a Yao assistant's ``src/`` is: ``--assistant DIR``).
- ``.py``: a Python module, run with its folder on ``sys.path`` as ``python FILE`` would. Its hooks are its
  ``hooks`` attribute when it has one — a hook set, a dict of hook functions, or a function of no
  arguments that makes a hook set (called once per concurrent case) — else its top-level functions named
  ``Create``, ``Before``, ``After``, ``Done``, ``Error`` (lower case accepted), as ``hooks_from_python``
  collects them from a module. Python hook sets are shared by the concurrent cases.

``suite record`` is not a command: recording needs a real model, which is a Python object
(``Suite.record(path, cases, model=…)`` in a notebook or a script).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..context.safe_write import UnsafeFileError, read_regular, write_atomic
from ..html.common import esc

__all__ = ["MAX_HOOKS_BYTES", "HookSource", "SuiteCliError", "load_assistant_source", "load_hook_file",
           "main", "read_suite", "report_page", "report_text"]

MAX_HOOKS_BYTES = 16 << 20
"""The largest hooks file read (bytes), refused by its size before reading."""

HOOK_SUFFIXES = (".js", ".ts", ".py")


class SuiteCliError(Exception):
    """Bad input: one line (naming the file) for stderr, exit code 2."""


class HookSource:
    """Hooks loaded once from a file or an assistant directory, handed to ``Suite.check`` as its
    arguments (``source.arguments``). A JavaScript set is a factory: the set loaded to check the file is
    the first thread's, the other threads load their own. ``close()`` closes what was never handed out."""

    def __init__(self, described: str, *, hooks: Any = None, assistant: Any = None,
                 make: Callable[[], Any] | None = None) -> None:
        self.described = described
        self._hooks, self._assistant, self._make = hooks, assistant, make
        self._lock = threading.Lock()

    @property
    def arguments(self) -> dict[str, Any]:
        """``hooks=`` or ``assistant=`` for ``Suite.check``."""
        if self._assistant is not None:
            return {"assistant": self._assistant}
        if self._make is None:
            return {"hooks": self._hooks}

        def hooks() -> Any:  # a plain function: Suite calls it once per thread, and closes what it made
            with self._lock:
                spare, self._hooks = self._hooks, None
            return spare if spare is not None else self._make()

        return {"hooks": hooks}

    def close(self) -> None:
        with self._lock:
            spare, self._hooks = (self._hooks, None) if self._make is not None else (None, self._hooks)
        close = getattr(spare, "close", None)
        if callable(close):
            close()


# ---- loading hooks ----


def load_hook_file(path: str | Path, what: str = "--hooks") -> HookSource:
    """The hooks in ``path`` (the module docstring says what each suffix is); ``SuiteCliError`` naming the
    file (after ``what``, the option that gave it) when it cannot be read or loaded, or defines no hook."""
    try:
        return _hook_file(Path(path))
    except SuiteCliError as error:
        text = str(error)
        raise SuiteCliError(what + text.removeprefix("--hooks") if text.startswith("--hooks") else text) from None


def _hook_file(file: Path) -> HookSource:
    if file.suffix not in HOOK_SUFFIXES:
        raise SuiteCliError(f"--hooks: {file}: not a hooks file (a .js, .ts or .py file)")
    try:
        data = read_regular(file, "--hooks", MAX_HOOKS_BYTES)
    except FileNotFoundError:
        raise SuiteCliError(f"--hooks: {file}: no such file") from None
    except UnsafeFileError as error:
        raise SuiteCliError(str(error)) from None
    except OSError as error:
        raise SuiteCliError(f"--hooks: {file}: cannot read it ({error.strerror or error})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SuiteCliError(f"--hooks: {file}: not UTF-8 text (byte {error.start})") from None
    if file.suffix == ".py":
        return _python_source(file, text)
    source = _typescript_stripped(file, text) if file.suffix == ".ts" else text
    return _js_source(file, source)


def _js_source(file: Path, source: str) -> HookSource:
    from ..hooks import HookError, hooks_from_js

    def make() -> Any:
        return hooks_from_js(source, origin=str(file))

    try:
        first = make()
    except HookError as error:
        raise SuiteCliError(f"--hooks: {_naming(file, error)}") from None
    if not first.names:
        first.close()
        raise SuiteCliError(f"--hooks: {file}: defines none of the hooks (Create, Before, After, Done, Error)")
    return HookSource(str(file), hooks=first, make=make)


def _typescript_stripped(file: Path, text: str) -> str:
    """``text`` with its TypeScript types stripped (sucrase, every line kept where it was)."""
    import quickjs

    from ..yao.typescript import _static_text

    engine = quickjs.Context()
    try:
        engine.eval(_static_text("ts_transpile.js"))
        stripped = engine.eval("(source, path) => __agentctx_sucrase.strip(source, path, true)")(text, file.name)
    except quickjs.JSException as error:
        first = (str(error).splitlines() or [type(error).__name__])[0]  # the transpiler's own stack is no help
        raise SuiteCliError(f"--hooks: {file}: does not parse as TypeScript ({first})") from None
    # sucrase writes `"use strict";` (and `exports` for an `export function`) on line 1: a declaration in
    # front of it on the same line keeps the lines and the sloppy mode a .js file has.
    return "var exports = {};" + stripped


def _python_source(file: Path, text: str) -> HookSource:
    from ..hooks import HOOK_NAMES, HookError, hooks_from_python

    module = _run_module(file, text)
    found = getattr(module, "hooks", None)
    names = (*HOOK_NAMES, *map(str.lower, HOOK_NAMES))
    if found is None and not any(callable(getattr(module, name, None)) for name in names):
        raise SuiteCliError(f"--hooks: {file}: defines none of the hooks (functions named {', '.join(HOOK_NAMES)}, "
                            "or a `hooks` attribute)")
    try:
        if found is None:
            hooks = hooks_from_python(module)
        elif isinstance(found, dict):
            hooks = hooks_from_python(found)
        elif isinstance(found, types.FunctionType):
            return _python_factory(file, found)
        elif _is_hook_set(found):
            hooks = found
        else:
            raise SuiteCliError(f"--hooks: {file}: its `hooks` is a {type(found).__name__}: expected a hook set, a "
                                "dict of hook functions, or a function that makes a hook set")
    except HookError as error:
        raise SuiteCliError(f"--hooks: {_naming(file, error)}") from None
    if not hooks.names:
        raise SuiteCliError(f"--hooks: {file}: defines none of the hooks (Create, Before, After, Done, Error, "
                            "or a `hooks` attribute)")
    return HookSource(str(file), hooks=hooks)


def _python_factory(file: Path, factory: Callable[[], Any]) -> HookSource:
    try:
        first = factory()
    except Exception as error:  # noqa: BLE001 - the user's function: any failure is bad input
        raise SuiteCliError(f"--hooks: {file}: hooks() raised {type(error).__name__}: {_one_line(error)}") from None
    if not _is_hook_set(first):
        raise SuiteCliError(f"--hooks: {file}: hooks() returned a {type(first).__name__}, not a hook set "
                            "(hooks_from_python(…) or hooks_from_js(…))")
    return HookSource(str(file), hooks=first, make=factory)


def _run_module(file: Path, text: str) -> types.ModuleType:
    """The module ``file`` holds, run as ``python FILE`` would run it (its folder first on ``sys.path``)."""
    name = "agentctx_suite_hooks_" + re.sub(r"\W", "_", file.stem)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    filename = str(file)
    try:
        code = compile(text, filename, "exec")
    except SyntaxError as error:
        raise SuiteCliError(f"--hooks: {file}:{error.lineno}: SyntaxError: {error.msg}") from None
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module  # as importlib does: a dataclass or pickle in the module finds it
    try:
        exec(code, module.__dict__)  # the user's own hooks file, as `python FILE` would run it
    except Exception as error:  # noqa: BLE001 - any failure while importing it is bad input
        sys.modules.pop(name, None)
        import traceback

        lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
        where = f"{file}:{lines[-1]}" if lines else str(file)
        raise SuiteCliError(f"--hooks: {where}: importing it raised {type(error).__name__}: {_one_line(error)}") \
            from None
    return module


def _is_hook_set(value: Any) -> bool:
    return isinstance(getattr(value, "names", None), (frozenset, set)) and callable(getattr(value, "call", None))


def load_assistant_source(path: str | Path, what: str = "--assistant") -> HookSource:
    """The Yao assistant at ``path`` (``load_assistant``), its hook script loaded now so a script that
    does not load is bad input, not a failed case."""
    from ..hooks import HookError
    from ..yao import load_assistant
    from ..yao.turns import script_hooks

    directory = Path(path)
    try:
        assistant = load_assistant(directory)
        script_hooks(assistant)  # cached: the turns reuse it
    except (HookError, OSError, ValueError) as error:  # AssistantLoadError is a ValueError
        text = _one_line(error)
        raise SuiteCliError(f"{what}: {text if str(directory) in text else f'{directory}: {text}'}") from None
    return HookSource(str(directory), assistant=assistant)


def _naming(file: Path, error: BaseException) -> str:
    """The error's text, led by the file unless it names it already (``hook (hooks.js, line 3): …``)."""
    text = _one_line(error)
    return text if f"({file}, line" in text else f"{file}: {text}"


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


# ---- checking, and the report as text and as a page ----


def read_suite(path: str | Path) -> Any:
    """``Suite(path)``; ``SuiteCliError`` (naming the file, and the line) for a file that cannot be read."""
    from .suite import Suite, SuiteFileError

    try:
        return Suite(path)
    except SuiteFileError as error:
        raise SuiteCliError(str(error)) from None


def report_text(report: Any, suite_path: str | Path) -> str:
    """Each case that did not pass (its text diff or reason), then the summary line and the cost line
    (recorded, checked at the recorded prices, Δ; how to price what is unpriced)."""
    differing = [case.text() for case in report.cases.values() if case.status != "passed"]
    return "".join(f"{text}\n\n" for text in differing) + f"{suite_path}: {report.headline()}\n{report.cost_line()}\n"


def report_page(report: Any, title: str) -> str:
    """The report's table as a standalone page: opens from disk, runs no script, fetches nothing."""
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            '<meta name="referrer" content="no-referrer"><meta name="color-scheme" content="light dark">'
            f"<title>{esc(title)}</title></head>\n<body>\n{report.to_html()}\n</body></html>\n")


# ---- the command (its arguments are defined in ``agentctx_widgets/__main__.py``, which stays light) ----


def main(args: argparse.Namespace) -> int:
    """Run ``suite check`` (``args.suite``, ``.hooks`` or ``.assistant``, ``.concurrency``, ``.html``): 0 every
    case passed, 1 something differs, 130 interrupted; bad input raises ``SuiteCliError`` for the caller
    to print (exit code 2)."""
    target = Path(args.html) if args.html else None
    if target is not None and target.is_dir():
        raise SuiteCliError(f"--html: {target}: is a directory; give a file name")
    suite = read_suite(args.suite)  # before the hooks load: a bad path is said at once
    source = load_hook_file(args.hooks) if args.hooks else load_assistant_source(args.assistant)
    try:
        report = suite.check(concurrency=args.concurrency, **source.arguments)
    except KeyboardInterrupt:
        print(f"agentctx: suite check: {args.suite}: interrupted", file=sys.stderr)
        return 130
    finally:
        source.close()
    if target is not None:
        data = report_page(report, f"{Path(args.suite).name} · agentctx suite check").encode("utf-8")
        try:
            write_atomic(target, data, "--html")
        except UnsafeFileError as error:
            raise SuiteCliError(str(error)) from None
        except OSError as error:
            raise SuiteCliError(f"--html: {target}: cannot write ({error.strerror or error})") from None
        print(f"wrote {target} ({len(data) / 1024:,.0f} KB)")
    sys.stdout.write(report_text(report, args.suite))
    return 0 if report.ok else 1
