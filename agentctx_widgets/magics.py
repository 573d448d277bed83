"""``%agentctx``: show, measure and run agent contexts from notebook cells.

Load with ``%load_ext agentctx_widgets``. The subcommands and their options are defined once, in
``_magic_args`` (argparse); ``%agentctx help`` prints them, this docstring ends with the same text, and
docs/api.md's copy is checked against it (tests/test_readme.py). The plain-Python functions behind
``show``, ``usage`` and ``run`` are in ``agentctx_widgets.notebook``.

``%agentctx help`` also prints where the shipped nbval sanitizer is (``agentctx_widgets/nbval_sanitize.cfg``):
pass it to ``pytest --nbval NOTEBOOK --nbval-sanitize-with=PATH`` to regression-test your own notebooks (keep the
``=``: with a space pytest takes PATH for a test path and failures no longer name the notebook).

Any failure — a bad argument, an unknown variable, a missing file, a hook that fails — prints one line
``agentctx: ...``, never a traceback, and changes nothing: no variable is bound, and a context a failed
turn touched is put back as it was. The line goes to stderr, except a turn's own failure (a hook, the
model, a tool): that goes to stdout, where the turn's summary line would be, so nbval's diff of the cell
shows it.
"""

from __future__ import annotations

import copy
import dis
import json
import keyword
import re
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display

from ._magic_args import MagicError, command_help, overview, parse_magic
from .context.safe_write import UnsafeFileError, write_atomic
from .context.types import MessageType
from .hooks.base import HOOK_NAMES

if TYPE_CHECKING:
    from ._usage_report import UsageReport

__all__ = ["AgentContextMagics", "load_ipython_extension"]
__doc__ = f"{__doc__}\n{overview()}\n"

SANITIZER_PATH = Path(__file__).with_name("nbval_sanitize.cfg")
"""The nbval sanitizer shipped for users' own notebooks (``--nbval-sanitize-with``)."""
REPLAY_CHUNK_SECONDS = 0.02
"""Pause between two streamed chunks of a replayed assistant message at ``--speed 1``."""

_PYTHON_CELL = re.compile(r"^\s*(?:async\s+)?def\s", re.MULTILINE)
_JS_FUNCTION = re.compile(r"\bfunction\b|=>")
_CHUNK = re.compile(r"\s*\S+\s*")


def _report(message: str) -> None:
    print(f"agentctx: {message}", file=sys.stderr)


def _kind(value: Any) -> str:
    return type(value).__name__


def _plural(count: int, noun: str) -> str:
    """``1 message``, ``2 messages``."""
    return f"{count} {noun}{'s' * (count != 1)}"


def _identifier(name: str, what: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise MagicError(f"{what}: {name!r} is not a valid Python variable name")
    return name


def detect_language(cell: str) -> str:
    """``python`` when the cell compiles as Python and defines a function (``def``), else ``js``: decided
    by what parses, so a JavaScript cell with a ``def`` line in a string or comment stays JavaScript."""
    if not _PYTHON_CELL.search(cell):
        return "js"
    try:
        compile(cell, "<%%agentctx hooks>", "exec")
    except SyntaxError:  # neither parses cleanly yet: a JavaScript function keyword decides
        return "js" if _JS_FUNCTION.search(cell) else "python"
    return "python"


def stream_chunks(text: str) -> list[str]:
    """Split text into word-sized chunks that join back to exactly ``text``."""
    chunks = _CHUNK.findall(text)
    return chunks if "".join(chunks) == text else [text]


def _describe_error(error: Any) -> str:
    if isinstance(error, BaseException):
        return f"{_kind(error)}: {error}"
    if isinstance(error, Mapping):
        message = str(error.get("message") or error.get("error") or dict(error))
        code = error.get("code")
        return f"{message} [{code}]" if code else message
    return str(error)


@magics_class
class AgentContextMagics(Magics):
    """The ``%agentctx`` line magic and ``%%agentctx`` cell magic."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.hook_sets: dict[str, Any] = {}
        """Hook sets defined with ``%%agentctx hooks NAME``, by name."""
        self.last_result: Any = None
        """The TurnResult of the last ``%agentctx run`` (for inspection after a run)."""
        self._turns_of: dict[int, list[_TurnOutputs]] = {}
        """The output messages of each ``%agentctx run`` turn, by its Context's id (for ``export``)."""

    @property
    def _ns(self) -> dict[str, Any]:
        return self.shell.user_ns

    # ---- displaying where the magic stands -------------------------------------------------
    def _where_it_stands(self, value: Any) -> Any:
        """Display ``value`` now unless IPython will (the magic is the cell's last expression), as
        ``%timeit`` prints wherever it stands; return it either way (``x = %agentctx usage ctx``)."""
        if not self._displayed_by_ipython():
            display(value)
        return value

    @staticmethod
    def _displayed_by_ipython() -> bool:
        """Will IPython display what this call returns — is it the cell's last expression?

        IPython compiles a cell's last expression statement on its own in ``single`` mode, which ends
        it with ``PRINT_EXPR`` (the displayhook); every other statement is compiled without one. So the
        statement that called ``run_line_magic`` says it, whatever the history holds (nbval and
        nbclient may run cells without storing them)."""
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            if code.co_name == "<module>" and "run_line_magic" in code.co_names:
                return any(ins.opname == "PRINT_EXPR" or (ins.opname == "CALL_INTRINSIC_1" and ins.arg == 1)
                           for ins in dis.get_instructions(code))
            frame = frame.f_back
        return False  # called from Python code, not from a cell

    @line_cell_magic
    def agentctx(self, line: str, cell: str | None = None) -> Any:
        """Show, measure and run agent contexts; ``%agentctx help`` lists the subcommands."""
        name = "agentctx"
        try:
            command = parse_magic(line, cell)
            name = command.name
            handler: Callable[[Any, str | None], Any] = getattr(self, f"_do_{command.name}")
            return handler(command.args, command.cell)
        except MagicError as error:
            _report(str(error))
        except Exception as error:  # a failure inside the package: one line, never a traceback
            _report(f"{name}: {_kind(error)}: {error}")
        return None

    # ---- resolving names ------------------------------------------------------------------
    def _load_path(self, path: str | Path, what: str) -> Any:
        from .notebook import UnreadableSessionError, load_session

        try:
            context, skipped = load_session(path)
        except FileNotFoundError:
            raise MagicError(f"{what}: no such file: {str(path)!r}") from None
        except UnreadableSessionError as error:
            raise MagicError(f"{what}: {error}") from None
        except (OSError, ValueError, TypeError) as error:
            raise MagicError(f"{what}: cannot read {Path(path).name}: {error}") from None
        if skipped:  # one summary line naming the first few, not one line per bad line
            _report(f"{what}: {skipped.summary(Path(path).name)}")
        return context

    def _context_from(self, token: str, what: str) -> tuple[Any, str]:
        """A Context for ``token``: a variable (Context, list of messages, path) or a file path."""
        from .context import Context

        if token in self._ns:
            value = self._ns[token]
            if isinstance(value, Context):
                return value, token
            if isinstance(value, (list, tuple)):
                try:
                    return Context(list(value)), token
                except (TypeError, ValueError) as error:
                    raise MagicError(f"{what}: {token} is not a list of messages: {error}") from None
            if isinstance(value, (str, Path)):
                return self._load_path(value, what), Path(value).name
            raise MagicError(
                f"{what}: {token} holds a {_kind(value)}, not a Context, a list of messages or a session path"
            )
        if token.isidentifier() and not Path(token).exists():
            raise MagicError(f"{what}: no variable or file named {token!r}")
        return self._load_path(token, what), Path(token).name

    def _hooks_from(self, name: str | None) -> Any:
        """A hook set for ``--hooks NAME``: a variable holding hooks (or hook functions), else one
        defined with ``%%agentctx hooks NAME``."""
        if name is None:
            return None
        if name in self._ns:
            value = self._ns[name]
            if _is_hook_set(value):
                return value
            if name not in self.hook_sets:
                from .hooks import hooks_from_python

                try:
                    return hooks_from_python(value)
                except Exception:
                    raise MagicError(
                        f"run: {name} holds a {_kind(value)}, not a hook set "
                        f"(define one with %%agentctx hooks {name})"
                    ) from None
        if name in self.hook_sets:
            return self.hook_sets[name]
        known = ", ".join(sorted(self.hook_sets)) or "none yet; define one with %%agentctx hooks NAME"
        raise MagicError(f"run: no hook set named {name!r} (defined: {known})")

    def _assistant_from(self, value: str) -> Any:
        """``--assistant PATH`` (or a variable holding a path or a loaded assistant), loaded now so a
        malformed file is one ``agentctx:`` line naming it."""
        from .yao import AssistantLoadError, load_assistant

        held = self._ns.get(value, value)
        if not isinstance(held, (str, Path)):
            return held
        try:
            return load_assistant(held)
        except (AssistantLoadError, OSError, ValueError) as error:
            raise MagicError(f"run: --assistant {value}: {error}") from None

    def _tools_from(self, names: str | None) -> list[Any]:
        """The callables ``--tools a,b`` names (variables in the notebook)."""
        tools = []
        for name in filter(None, (part.strip() for part in (names or "").split(","))):
            value = self._ns.get(name)
            if not callable(value):
                what = "no variable" if name not in self._ns else f"a {_kind(value)}, not a function"
                raise MagicError(f"run: --tools {name}: {what}")
            tools.append(value)
        return tools

    def _model_from(self, token: str | None, text: str) -> tuple[Any, str | None]:
        """(model, model id for the gauge): a variable holding a model, a ``provider:model`` spec, or
        only a model id for the gauge (the reply is then scripted)."""
        from .models import ScriptedModel
        from .models.registry import is_model_spec, model_from_spec
        from .notebook import _model_id

        value = self._ns[token] if token is not None and token in self._ns else token
        if is_model_spec(value):
            try:
                model = model_from_spec(value)
            except (ImportError, ValueError) as error:
                raise MagicError(f"run: --model {value}: {error}") from None
            return model, model.model_id
        if token is None or isinstance(value, str):  # no model, or only its id: the scripted default
            return ScriptedModel([f"Scripted reply to: {text}"]), value
        if isinstance(value, type) and callable(getattr(value, "stream", None)):
            try:  # a model class where a model is meant (--model ScriptedModel): one built with no arguments
                value = value()
            except TypeError as error:
                raise MagicError(f"run: {token} is the class {value.__name__}, not a model; pass an instance "
                                 f"(model = {value.__name__}(...); --model model): {error}") from None
        if not callable(getattr(value, "stream", None)):
            raise MagicError(f"run: {token} holds a {_kind(value)}, not a model (an object with .stream())")
        return value, _model_id(value)

    # ---- subcommands ----------------------------------------------------------------------
    def _do_help(self, args: Any, cell: str | None) -> None:
        if args.command:
            print(command_help(args.command))
            return
        print(overview())
        print(
            "\nNotebooks as regression checks: pytest --nbval NOTEBOOK.ipynb --nbval-sanitize-with="
            f"{SANITIZER_PATH}\n(the sanitizer masks widget ids, generated ids, times and Date.now(); see its comments)"
        )

    def _do_show(self, args: Any, cell: str | None) -> Any:
        from .notebook import show

        context, title = self._context_from(args.target, "show")
        return self._where_it_stands(show(context, title=title))

    def _do_usage(self, args: Any, cell: str | None) -> UsageReport:
        from .notebook import usage

        context, _ = self._context_from(args.target, "usage")
        return self._where_it_stands(usage(context, model=args.model, exact=args.exact))

    def _do_hooks(self, args: Any, cell: str | None) -> None:
        name = _identifier(args.name, "hooks")
        current = self._ns.get(name)
        if name in self._ns and not _is_hook_set(current):
            raise MagicError(f"hooks: {name} already holds a {_kind(current)}; choose another name for the hook set")
        source = cell or ""
        if not source.strip():
            raise MagicError(f"hooks {name}: the cell is empty; write the hook functions below the magic line")
        language = args.lang or detect_language(source)
        label = "JavaScript" if language == "js" else "Python"
        try:
            hooks, defined = _js_hooks(name, source) if language == "js" else _python_hooks(name, source)
        except MagicError as error:
            if args.lang:
                raise
            raise MagicError(f"{error} (the cell was taken for {label}; write --lang js or --lang python "
                             "to choose)") from None
        self.hook_sets[name] = hooks
        self._ns[name] = hooks
        print(f"hook set {name} ({label}): {', '.join(defined) or 'no hooks'}")

    def _do_run(self, args: Any, cell: str | None) -> None:
        from .context import Context
        from .notebook import run

        if cell is not None and args.text is not None:
            raise MagicError("run: give the user text on the magic line or in the cell, not both")
        text = args.text if cell is None else cell.strip("\n")
        if text is None or not text.strip():
            raise MagicError('run: no user text; write %agentctx run CTX "your message"')
        target = args.target
        if args.result is not None:
            _identifier(args.result, "run")
        bind = target not in self._ns  # a new name: a new Context, bound once the turn succeeds
        context = Context(name=_identifier(target, "run")) if bind else self._ns[target]
        if not isinstance(context, Context):
            raise MagicError(f"run: {target} holds a {_kind(context)}, not a Context")
        hooks = self._hooks_from(args.hooks)
        model, model_id = self._model_from(args.model, text)
        tools = self._tools_from(args.tools)
        extra: dict[str, Any] = {} if args.budget is None else {"budget": args.budget}
        if args.assistant is not None:
            extra["assistant"] = self._assistant_from(args.assistant)
            if not args.stream or args.strict:
                raise MagicError("run: --no-stream and --strict are the seed lifecycle's; a Yao assistant's request "
                                 "streams as Yao does")
        else:
            extra.update(streaming=args.stream, strict=args.strict)

        started = time.perf_counter()
        try:
            result = run(context, text, hooks=hooks, model=model, tools=tools, title=target,
                         window_model=model_id, accept=args.accept,
                         chat_id=context.id or context.name or target, check=False, **extra)
        except KeyboardInterrupt:
            raise MagicError("run: interrupted; the partial reply was not committed and the context is unchanged") from None
        except Exception as error:
            raise MagicError(f"run: {_describe_error(error)}; the context is unchanged") from None
        elapsed = time.perf_counter() - started
        self.last_result = result
        self._turns_of.setdefault(id(context), []).append(_TurnOutputs(context, getattr(result, "output", None) or []))
        if args.result is not None:  # bound failed or not: a regression notebook asserts on the failure too
            self._ns[args.result] = result
        if getattr(result, "error", None):  # run() has put the context back
            for line in _console_lines(result):
                print(line)
            # stdout, not stderr: it stands where the turn's summary line would, so nbval's diff shows it
            print(f"agentctx: run: {_describe_error(result.error)}; the context is unchanged")
            return
        if bind:
            self._ns[target] = context
        print(_turn_summary(result, elapsed))
        for line in [*_next_lines(result), *_console_lines(result), *_diagnostic_lines(result)]:
            print(line)

    def _do_load(self, args: Any, cell: str | None) -> None:
        name = args.name
        if name is None:
            stem = re.sub(r"\W", "_", Path(args.path).stem) or "context"
            name = f"_{stem}" if stem[0].isdigit() or keyword.iskeyword(stem) else stem
        _identifier(name, "load")
        context = self._load_path(args.path, "load")
        self._ns[name] = context
        print(f"loaded {_plural(len(context), 'message')} from {Path(args.path).name} into {name}")

    def _do_export(self, args: Any, cell: str | None) -> None:
        from .html import to_html

        context, title = self._context_from(args.target, "export")
        target = Path(args.path).expanduser()
        if target.is_dir():
            raise MagicError(f"export: {args.path!r} is a directory; give the .html file to write")
        outputs = self._outputs_of(context)
        cost = getattr(context, "cost", None)  # the turns run on it in this kernel (its ledger), if any
        page = to_html(context, outputs or None, title=args.title or getattr(context, "name", None) or title,
                       cost=cost if getattr(cost, "calls", 0) else None)
        try:  # a mkstemp file beside it, then a rename; never through a symlink (context/safe_write.py)
            write_atomic(target, page.encode("utf-8"), "export")
        except UnsafeFileError as error:
            raise MagicError(str(error)) from None
        except OSError as error:
            raise MagicError(f"export: cannot write {args.path!r}: {error.strerror or error}") from None
        distinct = len({message.get("id") or f"#{i}" for i, message in enumerate(outputs)})  # deltas are one message
        shown = f" and {distinct:,} output message{'s' * (distinct != 1)}" if outputs else ""
        print(f"exported {_plural(len(context), 'message')}{shown} to {target} "
              f"({len(page.encode()):,} bytes)")

    def _outputs_of(self, context: Any) -> list[dict]:
        """The output messages the views of ``context`` showed: those of the turns ``%agentctx run`` ran
        on it in this kernel (the export holds what the view and the turns' documents showed)."""
        return [message for turn in self._turns_of.get(id(context), []) if turn.context is context
                for message in turn.output]

    def _do_watch(self, args: Any, cell: str | None) -> None:
        from .widget.watch import watch

        path = Path(args.path).expanduser()
        if path.is_dir():
            raise MagicError(f"watch: {args.path!r} is a directory; give the session file (.jsonl)")
        try:
            watcher = watch(path, interval=args.interval, block=True)  # displays the view, returns on Ctrl-C
        except (TypeError, ValueError, OSError) as error:
            raise MagicError(f"watch: {error}") from None
        print(f"stopped watching {path.name}: {_plural(len(watcher.context), 'message')}, "
              f"{_plural(watcher.lines_read, 'line')} read, {_plural(watcher.restarts, 'restart')}, "
              f"{_plural(watcher.bad_lines, 'bad line')}")
        if watcher.error:  # the thread stopped on its own, not on Ctrl-C or a closed view: say why
            print(f"watcher stopped: {watcher.error}")

    def _do_diff(self, args: Any, cell: str | None) -> None:
        from .suite import diff

        if args.result is not None:
            _identifier(args.result, "diff")
        old = _DiffSide.of(*self._diff_value(args.old, "A"), "A")
        new = _DiffSide.of(*self._diff_value(args.new, "B"), "B")
        if args.case is not None:
            old, new = _picked(old, new, args.case)
        if old.cases is not None and new.cases is not None:
            shown: Any = SuiteDiff.of(old, new)
        elif old.cases is not None or new.cases is not None:
            suite, other = (old, new) if old.cases is not None else (new, old)
            other.check()
            raise MagicError(f"diff: {suite.which} ({suite.label}) is a suite of {len(suite.cases or {})} cases and "
                             f"{other.which} ({other.label}) one conversation: pick a case with --case ID")
        else:
            try:
                shown = diff(old.value, new.value)
            except TypeError:
                for side in (old, new):
                    side.check()
                raise
        if args.result is not None:
            self._ns[args.result] = shown
        if args.text:
            print(shown)
        else:
            display(shown)

    def _diff_value(self, token: str, which: str) -> tuple[Any, str]:
        """What A or B names (a variable, or a step inside one, else a file) and its label."""
        reference = _reference(token)
        file_there = Path(token).expanduser().exists()
        if reference is not None and reference[0] in self._ns:
            try:
                value = _followed(self._ns[reference[0]], reference[1], token)
            except MagicError as error:
                if not file_there:  # suite.jsonl is the file when the suite variable has no attribute jsonl
                    raise MagicError(f"diff {which}: {error}") from None
            else:
                if isinstance(value, (str, Path)):
                    return self._diff_file(value, which), Path(value).name
                return value, token
        if not file_there and reference is not None and not reference[1]:
            raise MagicError(f"diff {which}: no variable or file named {token!r}")
        return self._diff_file(token, which), Path(token).name

    def _diff_file(self, path: str | Path, which: str) -> Any:
        """A suite file as a Suite, anything else as a session file (a Context)."""
        from .suite import Suite, SuiteFileError

        where = Path(path).expanduser()
        if not where.exists():
            raise MagicError(f"diff {which}: no such file: {str(path)!r}")
        if where.is_dir():
            raise MagicError(f"diff {which}: {str(path)!r} is a directory; give a session or suite file")
        if not _is_suite_file(where):
            return self._load_path(where, f"diff {which}")
        try:
            return Suite(where)
        except SuiteFileError as error:
            raise MagicError(f"diff {which}: {error}") from None

    def _do_replay(self, args: Any, cell: str | None) -> None:
        from .context import Context, is_record
        from .widget import ContextView

        source = self._load_path(args.path, "replay")
        name = Path(args.path).name
        context = Context(name=getattr(source, "name", None) or Path(args.path).stem)
        view = ContextView(context, title=f"replay: {name}")
        display(view)
        pause = REPLAY_CHUNK_SECONDS / args.speed
        streamed = chunks = 0
        for message in source.messages():
            if not is_record(message) and message.get("type") == MessageType.ASSISTANT:
                chunks += _stream_into(view, message, pause)
                streamed += 1
                context.append(message, merge=False)
                view.set_pending(None)
            else:
                context.append(message, merge=False)
        view.settle()
        print(f"replayed {_plural(len(context), 'message')} from {name} "
              f"({_plural(streamed, 'assistant message')} streamed in {_plural(chunks, 'chunk')})")


# ---- helpers that need no shell ---------------------------------------------------------------
def _stream_into(view: Any, message: dict, pause: float) -> int:
    """Grow a copy of ``message`` block by block, chunk by chunk, as the view's pending message.

    With no pause (``--speed inf``) nobody can watch the chunks go by, so each block is shown whole once:
    the replay stays linear in the session's size (growing a text chunk by chunk copies it each time).
    """
    pending = {key: value for key, value in message.items() if key != "content"}
    pending["content"] = []
    count = 0
    for block in message.get("content") or []:
        text = block.get("text") if isinstance(block, dict) else None
        chunks = stream_chunks(text) if isinstance(text, str) else [block]  # not text: one chunk
        if not isinstance(text, str) or pause <= 0:
            pending["content"].append(copy.deepcopy(block))
            view.set_pending(pending)
            count += len(chunks)
            continue
        growing = {**copy.deepcopy(block), "text": ""}
        pending["content"].append(growing)
        for chunk in chunks:
            growing["text"] += chunk
            view.set_pending(pending)
            count += 1
            time.sleep(pause)
    return count


class _TurnOutputs(NamedTuple):
    """A ``%agentctx run`` turn's output messages (the result's own list) and the Context it ran on."""

    context: Any
    output: list[dict]


def _js_hooks(name: str, source: str) -> tuple[Any, list[str]]:
    from .hooks import hooks_from_js

    try:
        hooks = hooks_from_js(source, first_line=2, origin=f"%%agentctx hooks {name}")  # the body: cell line 2
    except Exception as error:
        raise MagicError(f"hooks {name}: the JavaScript does not load: {error}") from None
    defined = [hook for hook in HOOK_NAMES if hook in hooks.names]
    if not defined:
        raise MagicError(f"hooks {name}: the cell defines none of {', '.join(HOOK_NAMES)}")
    return hooks, defined


def _python_hooks(name: str, source: str) -> tuple[Any, list[str]]:
    from .hooks import hooks_from_python

    filename = f"<%%agentctx hooks {name}>"
    namespace: dict[str, Any] = {"__name__": f"agentctx_hooks_{name}"}
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as error:
        line = f" (cell line {error.lineno + 1})" if error.lineno else ""  # the body starts on the cell's line 2
        raise MagicError(f"hooks {name}: SyntaxError: {error.msg}{line}") from None
    try:
        exec(code, namespace)  # the user's own cell, as IPython itself would run it
    except Exception as error:
        lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
        where = f" (cell line {lines[-1] + 1})" if lines else ""  # the body starts on the cell's line 2
        raise MagicError(f"hooks {name}: the cell raised {_kind(error)}: {error}{where}") from None
    found = {hook: namespace[hook] for hook in HOOK_NAMES if callable(namespace.get(hook))}
    if not found:
        raise MagicError(f"hooks {name}: the cell defines none of {', '.join(HOOK_NAMES)}")
    try:
        hooks = hooks_from_python(found)
    except Exception as error:
        raise MagicError(f"hooks {name}: {error}") from None
    return hooks, list(found)


def _is_hook_set(value: Any) -> bool:
    """Does ``value`` look like loaded hooks (the runner's Hooks protocol: ``names`` and ``call``)?"""
    return isinstance(getattr(value, "names", None), (frozenset, set)) and callable(getattr(value, "call", None))


def _turn_summary(result: Any, elapsed: float) -> str:
    usage = getattr(result, "usage", None) or {}
    source = usage.get("source", "estimate")
    tokens = (
        f"{usage.get('inputTokens', 0):,} in + {usage.get('outputTokens', 0):,} out"
        f" = {usage.get('totalTokens', 0):,} tokens ({source})"
    )
    called = list(getattr(result, "hooks_called", None) or [])
    hooks = ", ".join(called) if called else "none"
    summary = f"turn done: {tokens}, {elapsed * 1000:.0f} ms, hooks: {hooks}"
    tool_names = [message.get("name", "?") for message in getattr(result, "tool_results", None) or []]
    if tool_names:
        summary += f", tools: {', '.join(tool_names)}"
    calls = len(getattr(result, "calls", None) or [])
    if calls > 1:
        summary += f", {calls} model calls"
    return summary


def _next_lines(result: Any) -> list[str]:
    """What a Yao assistant's ``Next`` returned (``result.next``), on one line."""
    value = getattr(result, "next", None)
    if value is None:
        return []
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return [f"  next: {text if len(text) <= 200 else text[:199] + '…'}"]


def _console_lines(result: Any) -> list[str]:
    """The hooks' console output of the turn (``result.console``), one line each."""
    return [f"  console.{item.get('level', 'log')} [{item.get('hook') or 'js'}]: {item.get('text', '')}"
            for item in getattr(result, "console", None) or []]


def _diagnostic_lines(result: Any) -> list[str]:
    """One line per diagnostic of the turn, under the summary."""
    return [f"  diagnostic {item['code']}: {item['message']} ({item['where']}); hint: {item['hint']}"
            for item in getattr(result, "diagnostics", None) or []]


# ---- %agentctx diff: what A and B name, and two suites compared case by case ---------------------
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[([^\[\]]*)\]")
_ROOT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ABSENT = object()


def _reference(token: str) -> tuple[str, list[tuple[str, Any]]] | None:
    """``NAME``, ``NAME.attr``, ``NAME[0]``, ``NAME[key]`` (or ``NAME['key']``) as the root name and its steps;
    None when ``token`` is not one (a path)."""
    root = _ROOT.match(token)
    if root is None or keyword.iskeyword(root.group()):
        return None
    steps: list[tuple[str, Any]] = []
    at = root.end()
    while at < len(token):
        step = _STEP.match(token, at)
        if step is None:
            return None
        if step.group(1) is not None:
            steps.append(("attr", step.group(1)))
        else:
            key = step.group(2).strip()
            quoted = len(key) >= 2 and key[0] == key[-1] and key[0] in "'\""
            steps.append(("item", key[1:-1] if quoted else int(key) if re.fullmatch(r"-?\d+", key) else key))
        at = step.end()
    return root.group(), steps


def _followed(value: Any, steps: list[tuple[str, Any]], token: str) -> Any:
    """``value`` with the steps of ``token`` taken (public attributes and items only)."""
    for kind, key in steps:
        if kind == "attr":
            found = getattr(value, key, _ABSENT) if not key.startswith("_") else _ABSENT
            if found is _ABSENT:
                raise MagicError(f"{token}: a {_kind(value)} has no attribute {key!r}")
            value = found
            continue
        try:
            if isinstance(value, Mapping):  # report.cases[case-1], and cases[7] for an id "7"
                value = value[key] if key in value else value[str(key)]
            else:
                value = value[key]
        except (KeyError, IndexError, TypeError):
            size = f" (it has {len(value)})" if isinstance(value, (list, tuple, Mapping)) else ""
            raise MagicError(f"{token}: no item [{key}] in a {_kind(value)}{size}") from None
    return value


def _is_suite_file(path: Path) -> bool:
    """Does the file start with a suite header line (``{"type": "suite", …}``)? Reads at most 4 KiB."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            first = handle.read(4096).split(b"\n", 1)[0]
        header = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(header, dict) and header.get("type") == "suite"


class _DiffSide:
    """One side of ``%agentctx diff``: a run to compare (``value``), or a suite's runs by case id (``cases``)."""

    def __init__(self, value: Any, label: str, which: str, cases: dict[str, Any] | None = None) -> None:
        self.value, self.label, self.which, self.cases = value, label, which, cases

    @classmethod
    def of(cls, value: Any, label: str, which: str) -> _DiffSide:
        from .suite import Suite, SuiteReport

        if isinstance(value, Suite):
            return cls(value, label, which, {case.id: {"turns": case.results} for case in value.cases})
        if isinstance(value, SuiteReport):
            return cls(value, label, which, {key: _run_of(case, label, which) for key, case in value.cases.items()})
        return cls(_run_of(value, label, which), label, which)

    def check(self) -> None:
        """A clear error when ``diff`` cannot read this side."""
        from .suite import turn_records

        try:
            turn_records(self.value)
        except TypeError:
            raise MagicError(f"diff {self.which}: {self.label} holds a {_kind(self.value)}, not a run to compare (a "
                             "Context, a list of messages, a turn result or a list of them, a suite case, a Suite or "
                             "a SuiteReport, or a session or suite file)") from None


def _run_of(value: Any, label: str, which: str) -> Any:
    """A suite case (as ``Suite.cases`` holds it, as a suite file's line, or a report's case) as the turns it
    produced; anything else as it is."""
    from .suite import CaseReport

    if isinstance(value, CaseReport):
        if not value.results and value.reason:
            raise MagicError(f"diff {which}: case {value.id!r} of {label} did not run ({value.status}: "
                             f"{value.reason.splitlines()[0]})")
        return {"turns": value.results}
    if isinstance(value, Mapping) and "calls" in value and isinstance(value.get("results"), list):
        return {"turns": value["results"]}
    if all(hasattr(value, name) for name in ("id", "turns", "calls", "results")):
        return {"turns": value.results}
    return value


def _picked(old: _DiffSide, new: _DiffSide, case: str) -> tuple[_DiffSide, _DiffSide]:
    """``--case ID``: that case of each side that is a suite."""
    if old.cases is None and new.cases is None:
        raise MagicError(f"diff: --case {case} picks a case of a suite, and neither A ({old.label}) nor B "
                         f"({new.label}) is one")
    picked = []
    for side in (old, new):
        if side.cases is None:
            picked.append(side)
            continue
        if case not in side.cases:
            known = ", ".join(list(side.cases)[:10]) + (", …" if len(side.cases) > 10 else "")
            raise MagicError(f"diff {side.which}: no case {case!r} in {side.label} (its cases: {known or 'none'})")
        picked.append(_DiffSide(side.cases[case], f"{side.label}[{case}]", side.which))
    return picked[0], picked[1]


class SuiteDiff:
    """Two suites compared case by case by id (``%agentctx diff`` of two suite files, a Suite, a SuiteReport):
    ``diffs[id]`` is the case's :class:`~agentctx_widgets.suite.Diff`, ``status[id]`` ``same``, ``changed``,
    ``removed`` (only in A) or ``added`` (only in B). Text in a terminal, static HTML in a notebook."""

    def __init__(self, diffs: dict[str, Any], status: dict[str, str], labels: tuple[str, str]) -> None:
        self.diffs, self.status, self.labels = diffs, status, labels

    @classmethod
    def of(cls, old: _DiffSide, new: _DiffSide) -> SuiteDiff:
        from .suite import diff

        before, after = old.cases or {}, new.cases or {}
        diffs, status = {}, {}
        for key in dict.fromkeys([*before, *after]):
            diffs[key] = diff(before.get(key, {"turns": []}), after.get(key, {"turns": []}))
            status[key] = ("added" if key not in before else "removed" if key not in after
                           else "same" if diffs[key].same else "changed")
        return cls(diffs, status, (old.label, new.label))

    @property
    def same(self) -> bool:
        return all(status == "same" for status in self.status.values())

    @property
    def changed(self) -> list[str]:
        """The ids of the cases that differ (changed, or on one side only), in order."""
        return [key for key, status in self.status.items() if status != "same"]

    def _said(self, status: str) -> str:
        return {"added": f"only in {self.labels[1]}", "removed": f"only in {self.labels[0]}"}.get(status, status)

    def headline(self) -> str:
        counts = Counter(self.status.values())
        parts = [f"{counts[status]} {self._said(status)}" for status in ("changed", "removed", "added", "same")
                 if counts.get(status)]
        return f"{len(self.status)} case{'s' * (len(self.status) != 1)}: {', '.join(parts) or 'none on either side'}"

    def __str__(self) -> str:
        lines = [self.headline()]
        for key in self.changed:
            lines.append(f"case {key}: {self._said(self.status[key])}")
            lines.extend(f"  {line}" if line else line for line in str(self.diffs[key]).splitlines())
        same = [key for key, status in self.status.items() if status == "same"]
        if same and self.changed:
            lines.append(f"same: {', '.join(same)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<SuiteDiff: {self.headline()}>"

    def to_html(self) -> str:
        """The differing cases, each a side-by-side diff under its id (static HTML, no JavaScript)."""
        from .html.common import esc
        from .suite.diff_html import DIFF_CSS

        parts = [f'<div class="actx-diff"><style>{DIFF_CSS}</style><div class="actx-diff-head">{esc(self.headline())}'
                 "</div>"]
        for key in self.changed:
            status = self.status[key]
            parts.append(f'<details open data-case="{esc(key)}"><summary><span class="actx-diff-status '
                         f'actx-diff-{status}">{esc(self._said(status))}</span> · case {esc(key)}</summary>'
                         f"{self.diffs[key].to_html()}</details>")
        same = [key for key, status in self.status.items() if status == "same"]
        if same and self.changed:
            parts.append(f'<div class="actx-diff-head">same: {esc(", ".join(same))}</div>')
        return "".join(parts) + "</div>"

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self.to_html()}


def keep_question_marks(lines: list[str]) -> list[str]:
    """An IPython input transformer: a ``%agentctx`` line ending in ``?`` is the magic's, not a help request.

    IPython reads ``%agentctx run chat how many words?`` as ``words?`` (``Object 'words' not found.``)
    before any magic sees it; written out as the magic call it is, the question mark stays in the text.
    ``%agentctx?`` (the magic's own help) is left to IPython."""
    rewritten = []
    for line in lines:
        body = line.rstrip("\r\n")
        if body.startswith("%agentctx ") and body.rstrip().endswith("?"):
            line = f"get_ipython().run_line_magic('agentctx', {body[len('%agentctx '):]!r})" + line[len(body):]
        rewritten.append(line)
    return rewritten


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%agentctx`` / ``%%agentctx`` (called by ``%load_ext agentctx_widgets``)."""
    ipython.register_magics(AgentContextMagics)
    cleanup = getattr(ipython, "input_transformers_cleanup", None)
    if isinstance(cleanup, list) and keep_question_marks not in cleanup:
        cleanup.append(keep_question_marks)
