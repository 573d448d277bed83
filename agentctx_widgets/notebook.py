"""The plain-Python functions behind the magics: ``show``, ``usage``, ``run`` (and ``load_session``).

Why a module of its own: notebooks without IPython magics (marimo, VS Code's interactive window with
magics off, scripts) get the same behaviour as ``%agentctx show / usage / run``, and the magics are only
argument parsing, name binding and one-line error reports on top of these.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .context import Context
from .hooks.checkpoint import ContextCheckpoint
from .output.diagnostics import ANSWER_CODES

if TYPE_CHECKING:
    from ._usage_report import UsageReport
    from .hooks import TurnResult
    from .widget import ContextView

__all__ = ["SkippedLines", "SuiteNotSessionError", "UnreadableSessionError", "load_session", "run", "show", "usage"]


class UnreadableSessionError(ValueError):
    """A session file with no readable line (a binary file, another format)."""


class SuiteNotSessionError(UnreadableSessionError):
    """A regression suite's file given where a session file goes; the message says how to open it."""


class SkippedLines(list):
    """The reasons ``load_session`` reports for skipped lines: the first ``MAX_REPORTED_LINES`` one by one,
    then one entry counting the rest; ``total`` is how many lines were skipped in all."""

    total: int = 0

    def summary(self, of: str | None = None, shown: int = 3) -> str:
        """``skipped 5 unreadable lines[ of NAME]: first; second; third; …``: one line for the user."""
        first = "; ".join(self[:shown]) + ("; …" if self.total > shown else "")
        return f"skipped {self.total} unreadable line{'s' * (self.total != 1)}{f' of {of}' if of else ''}: {first}"


def load_session(path: str | os.PathLike) -> tuple[Context, SkippedLines]:
    """``(context, skipped)``: a session file as a Context and the reasons of the lines it skipped (at most
    ``MAX_REPORTED_LINES`` + 1 of them, whatever the file holds; ``skipped.total`` counts them all).

    Raises ``FileNotFoundError`` for a missing file and ``UnreadableSessionError`` for a file with no readable line
    (a binary file, another format): an empty context would hide that; and for a regression suite's file
    (``Suite.record`` writes JSON Lines too, which the store would read as records), saying how to open it.
    """
    file = Path(path).expanduser()
    if not file.exists() and not file.is_symlink():
        raise FileNotFoundError(f"no such file: {str(path)!r}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        context = Context.load(file)
    skipped = SkippedLines(str(warning.message).removeprefix("Context.load: ") for warning in caught)
    skipped.total = sum(getattr(warning.message, "lines", 1) for warning in caught)
    if skipped and len(context) == 0:
        raise UnreadableSessionError(f"{file.name} has no readable line ({skipped.total} skipped; first: {skipped[0]})")
    _refuse_a_suite(file, context)
    return context, skipped


def _refuse_a_suite(file: Path, context: Context) -> None:
    """A suite file's header is line 1: ``{"type": "suite", "format": "agentctx-suite/N", "cases": N}``."""
    first = next(iter(context), None)
    if not (isinstance(first, dict) and first.get("type") == "suite"
            and str(first.get("format", "")).startswith("agentctx-suite/")):
        return
    cases = first.get("cases")
    counted = f", {cases} case{'s' * (cases != 1)}" if isinstance(cases, int) else ""
    raise SuiteNotSessionError(
        f"{file.name} is a regression suite ({first['format']}{counted}), not a session file: open it with "
        f"Suite({str(file)!r}) (its cases' turns are suite.cases[i].turns; suite.check(hooks=...) re-runs them), "
        f"or compare two runs with %agentctx diff")


def context_of(value: Any) -> tuple[Context, str | None]:
    """``(context, name)`` for a Context, a list of messages or a session-file path."""
    if isinstance(value, Context):
        return value, value.name
    if isinstance(value, (str, os.PathLike)):
        context, skipped = load_session(value)
        if skipped:
            warnings.warn(skipped.summary(Path(value).name), RuntimeWarning, stacklevel=3)
        return context, Path(value).name
    if isinstance(value, Iterable) and not isinstance(value, (bytes, dict)):
        return Context(list(value)), None
    raise TypeError(f"expected a Context, a list of messages or a session-file path, got {type(value).__name__}")


def show(target: Any, *, title: str | None = None, model: str | None = None) -> ContextView:
    """A ``ContextView`` of a Context, a list of messages or a session file (``%agentctx show``).

    Returned, not displayed: make it a cell's last expression (``mo.ui.anywidget(show(ctx))`` in marimo).
    """
    from .widget import ContextView

    context, name = context_of(target)
    return ContextView(context, title=title or name, model=model)


def usage(target: Any, *, model: str | None = None, exact: bool = True) -> UsageReport:
    """The usage report of ``%agentctx usage``: estimated tokens per message, the total, the model's
    window, and the lifetime usage of the turns run in this process (HTML and a text table)."""
    from ._usage_report import build_usage_report
    from .hooks.usage_log import context_usage, session_usage

    context, _ = context_of(target)
    lifetime = session_usage()
    return build_usage_report(context.messages(), model=model, lifetime=lifetime,
                              lifetime_responses=int(lifetime.get("responses") or 0),
                              context_lifetime=context_usage(context), exact=exact, context=context)


def run(context: Context, text: Any, *, hooks: Any = None, model: Any = None, tools: Iterable[Any] | None = None,
        display: bool = True, title: str | None = None, window_model: str | None = None,
        restore: bool = True, assistant: Any = None, check: bool = True, **run_turn_options: Any) -> TurnResult:
    """One turn as ``%agentctx run`` runs it: live in this cell, then settled into the turn's document.

    In a notebook kernel (``display=True``) the cell shows a ``ContextView`` while the turn streams and,
    once it ends, a static document of the turn (readable with no kernel and no JavaScript; the view's
    comm is closed, so nothing of it is stored in the notebook). A failed turn (``result.error``, an
    exception, an interrupt) leaves the context as it was (``restore=False`` keeps what it appended);
    exceptions and ``KeyboardInterrupt`` propagate after that. ``window_model`` names the model of the
    context-window gauge (default: the model's own id). ``assistant`` (a Yao assistant directory, or
    ``yao.load_assistant``'s result) runs the turn as today's Yao does (``run_turn(assistant=...)``). Other
    options go to ``run_turn``. A failed turn raises ``TurnError`` once the cell shows its document and
    the context is put back, unless ``check=False`` (then the failed result is returned).
    """
    from .hooks.runner import checked
    from .turns import run_turn
    from .widget.turn_display import TurnDisplay

    if not isinstance(context, Context):
        raise TypeError(f"run: context must be a Context, got {type(context).__name__}")
    before = ContextCheckpoint(context)
    gauge = window_model or _model_id(model)
    turn = TurnDisplay(context, titles=[title or context.name], model=gauge) if display else None
    if turn is not None:
        turn.show()
    try:
        if assistant is not None:
            run_turn_options["assistant"] = assistant
        result = run_turn(context, text, hooks=hooks, model=model, tools=tools,
                          view=turn.view if turn is not None else None, check=False, **run_turn_options)
    except BaseException:
        if turn is not None:
            turn.settle()  # the partial turn, as the view showed it, before the context is put back
        if restore:
            before.restore(context)
        raise
    if turn is not None:
        # a failed turn's document says why, with its diagnostics; any turn's says what was wrong with the answer
        failed = result.error is not None
        diagnostics = [d for d in getattr(result, "diagnostics", None) or () if failed or d.get("code") in ANSWER_CODES]
        turn.settle(usage=result.usage, error=result.error, diagnostics=diagnostics)
    if result.error and restore:
        before.restore(context)
    return checked(result, check)


def _model_id(model: Any) -> str | None:
    if isinstance(model, str):
        return model
    return next((v for v in (getattr(model, attr, None) for attr in ("model_id", "model", "name")) if isinstance(v, str)),
                None)
