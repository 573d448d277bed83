"""Argument parsing for ``%agentctx``: one argparse parser per subcommand, no IPython here.

argparse prints and exits on a bad argument; a magic must do neither, so every parser here raises
:class:`MagicError` instead, with a message short enough to show on one line.
"""

from __future__ import annotations

import argparse
import shlex
import textwrap
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import NoReturn

__all__ = ["COMMANDS", "MagicError", "ParsedCommand", "command_help", "overview", "parse_magic"]


class MagicError(ValueError):
    """A bad ``%agentctx`` command: bad arguments, unknown variable, missing file, failing hook.

    Its message is shown to the user as is, after ``agentctx: ``.
    """


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises MagicError instead of printing and exiting."""

    command = ""
    """The subcommand this parser reads, for messages."""

    def error(self, message: str) -> NoReturn:
        raise MagicError(f"{self.command}: {message} (usage: {one_line_usage(self)})")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise MagicError(f"{self.command}: {message.strip() if message else 'stopped'}")


def one_line_usage(parser: argparse.ArgumentParser) -> str:
    """The parser's usage without the ``usage:`` prefix and without line wrapping."""
    return " ".join(parser.format_usage().split()[1:])


def _positive_speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"speed must be a number, got {text!r}") from None
    if not value > 0:  # also rejects nan
        raise argparse.ArgumentTypeError(f"speed must be greater than 0 (inf: no pauses), got {text!r}")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"interval must be a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"interval must be a positive number of seconds, got {text!r}")
    return value


def _budget(text: str) -> Decimal:
    """``--budget``: US dollars, ``0.25`` or ``$0.25``, greater than 0."""
    try:
        value = Decimal(text.strip().removeprefix("$"))
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"budget must be a number of US dollars (0.25), got {text!r}") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError(f"budget must be a number of US dollars greater than 0, got {text!r}")
    return value


_CTX = "a variable (Context or list of messages) or a .jsonl path"
"""The help of the CTX argument of show, usage and export."""


def _new(name: str, description: str, *, cell: bool = False, ctx: str | None = None) -> _Parser:
    """A subcommand's parser; ``ctx``: the help of its first argument, the context (``target``, CTX)."""
    prog = f"%%agentctx {name}" if cell else f"%agentctx {name}"
    parser = _Parser(prog=prog, description=description, add_help=False, allow_abbrev=False)
    parser.command = name
    if ctx is not None:
        parser.add_argument("target", metavar="CTX", help=ctx)
    return parser


def _show_parser() -> _Parser:
    return _new("show", "Display a ContextView of a Context, a list of messages, or a session file, where "
                        "the magic stands (x = %agentctx show CTX also binds it).", ctx=_CTX)


def _usage_parser() -> _Parser:
    p = _new(
        "usage",
        "Estimated tokens per message, the total, the model's context window and the share used, "
        "and the lifetime usage of the turns run in this kernel with what they cost, per model (priced by "
        "genai-prices; 'unpriced' for a model it does not know); HTML and a text table (for nbval), "
        "shown where the magic stands (x = %agentctx usage CTX also binds the report). With tiktoken and "
        "its encoding available offline, exact counts stand beside the estimates.", ctx=_CTX)
    p.add_argument("--model", metavar="NAME", help="model id for the context window (e.g. gpt-4o)")
    p.add_argument(
        "--no-exact",
        dest="exact",
        action="store_false",
        help="leave out tiktoken's exact counts even when tiktoken and its encoding are available",
    )
    return p


def _hooks_parser() -> _Parser:
    p = _new(
        "hooks",
        "Define a named hook set from the cell: JavaScript as written for the spec, or Python functions "
        "Create/Before/After/Done/Error. Without --lang, a cell with a line starting `def ` is Python.",
        cell=True,
    )
    p.add_argument("name", metavar="NAME", help="a Python identifier; the hook set is bound to it")
    p.add_argument("--lang", choices=("js", "python"), default=None, help="the cell's language")
    return p


def _run_parser() -> _Parser:
    p = _new(
        "run",
        "Run one turn of the hook lifecycle live in a ContextView; when it ends, the cell keeps the turn's "
        "static document (readable with no kernel or JavaScript), then a one-line summary, the hooks' "
        "console lines and one line per diagnostic. A CTX that names no variable gets a new Context "
        "bound to it; a failed or interrupted turn leaves the context as it was. The default model is "
        "scripted ('Scripted reply to: TEXT'). TEXT may be unquoted (its words joined by one space); "
        "quote it to keep it exactly as written.", ctx="a Context variable, or a new name")
    p.add_argument("text", metavar="TEXT", nargs="*",
                   help="the user input (in %%%%agentctx run: the cell). Quote it to keep it exactly as written; "
                        "unquoted words are taken whole, joined by one space (a word starting with - needs quotes)")
    p.add_argument("--hooks", metavar="NAME", help="a hook set from %%%%agentctx hooks, or a variable")
    p.add_argument(
        "--model",
        metavar="NAME_OR_VAR",
        help="a model variable, a provider:model spec (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, "
        "openai-responses:o4-mini; openai:NAME with OPENAI_BASE_URL for a local server), or a model id for "
        "the gauge (the reply is then scripted)",
    )
    p.add_argument("--tools", metavar="NAMES", help="comma-separated functions the model may call (run_turn(tools=...))")
    p.add_argument("--assistant", metavar="PATH",
                   help="a Yao assistant directory (package.yao, prompts.yml, src/index.ts): the turn runs as "
                        "today's Yao runs a request (Create, the model, tools, Next); --result binds what Next returned as .next")
    p.add_argument("--accept", choices=("cui-web", "standard"), default="cui-web", help="the client kind")
    p.add_argument("--no-stream", dest="stream", action="store_false", help="show the reply only when complete")
    p.add_argument("--strict", action="store_true",
                   help="fail the turn on the first diagnostic (what Yao accepts but a hook author almost surely did not mean)")
    p.add_argument("--budget", metavar="USD", type=_budget,
                   help="stop the turn once its running cost would pass this many US dollars (run_turn(budget=...)): "
                        "the stream is closed and nothing committed; the model must be one the price table knows")
    p.add_argument("--result", metavar="NAME", help="bind the TurnResult to this variable (for assertions)")
    return p


def _load_parser() -> _Parser:
    p = _new("load", "Load a session file (.jsonl) into a Context variable.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--as", dest="name", metavar="NAME", help="variable name (default: the file's stem)")
    return p


def _replay_parser() -> _Parser:
    p = _new(
        "replay",
        "Replay a session file into a new ContextView, streaming each assistant message in chunks.",
    )
    p.add_argument("path", metavar="PATH")
    p.add_argument(
        "--speed",
        type=_positive_speed,
        default=1.0,
        metavar="X",
        help="playback speed, > 0: 2 is twice as fast, inf replays with no pauses (default 1: 20 ms per chunk)",
    )
    return p


def _watch_parser() -> _Parser:
    p = _new(
        "watch",
        "Follow a session file another process is writing (an agent in a server) in a live ContextView "
        "until Ctrl-C or the view is closed: new complete lines show within about 0.1 s, a half-written "
        "line waits for its newline, a rotated, truncated or re-created file starts over (the header says "
        "so), a bad line is listed once by number, a missing file is waited for.",
    )
    p.add_argument("path", metavar="PATH", help="the .jsonl session file")
    p.add_argument("--interval", type=_positive_seconds, default=0.1, metavar="S",
                   help="seconds between two looks at the file (default 0.1)")
    return p


def _export_parser() -> _Parser:
    p = _new("export", "Write a standalone HTML page of a context (no JavaScript; opens offline, from disk).",
             ctx=_CTX)
    p.add_argument("path", metavar="PATH", help="the .html file to write")
    p.add_argument("--title", metavar="TITLE", help="the page title (default: the context's name)")
    return p


def _diff_parser() -> _Parser:
    p = _new(
        "diff",
        "Compare two runs of a conversation turn by turn and display the diff where the magic stands: side by "
        "side as static HTML in a notebook, a unified text diff (old and new text both in it) in a terminal. "
        "A and B are variables (Contexts, lists of messages, turn results or lists of them, suite cases, a "
        "Suite or a SuiteReport; NAME.attr, NAME[0] and NAME[key] reach inside one) or paths to session or "
        "suite files. Two suites (files, Suite or SuiteReport) are compared case by case by id.",
    )
    p.add_argument("old", metavar="A", help="the old run: a variable or a session / suite file")
    p.add_argument("new", metavar="B", help="the new run: a variable or a session / suite file")
    p.add_argument("--case", metavar="ID", help="compare only this case of each suite (a side that is not a suite "
                                                 "is compared as it is)")
    p.add_argument("--text", action="store_true", help="print the text diff, in a notebook too")
    p.add_argument("--result", metavar="NAME", help="bind the diff to this variable (for assertions: .same, .changed)")
    return p


def _help_parser() -> _Parser:
    p = _new("help", "Show help for every subcommand, or for one.")
    p.add_argument("command", metavar="COMMAND", nargs="?")
    return p

_BUILDERS = (_show_parser, _usage_parser, _hooks_parser, _run_parser, _load_parser, _replay_parser, _watch_parser,
             _export_parser, _diff_parser, _help_parser)
"""One builder per subcommand, in the order ``%agentctx help`` lists them."""


def _build() -> dict[str, _Parser]:
    return {parser.command: parser for parser in (build() for build in _BUILDERS)}


_PARSERS = _build()
COMMANDS: tuple[str, ...] = tuple(_PARSERS)
CELL_COMMANDS = frozenset({"hooks", "run"})
WORDS_COMMANDS = frozenset({"run"})
"""Subcommands whose TEXT may be written unquoted: its words are joined with one space."""
LINE_COMMANDS = frozenset(COMMANDS) - {"hooks"}


@dataclass(frozen=True)
class ParsedCommand:
    """One parsed ``%agentctx`` invocation."""

    name: str
    """The subcommand (a key of COMMANDS)."""
    args: argparse.Namespace
    """Its parsed arguments."""
    cell: str | None
    """The cell body for ``%%agentctx``, None for a line magic."""


def parse_magic(line: str, cell: str | None = None) -> ParsedCommand:
    """Split ``line`` like a shell and parse it; raise MagicError naming what is wrong."""
    try:
        words = shlex.split(line, comments=False, posix=True)
    except ValueError as error:  # "No closing quotation", "No escaped character"
        raise MagicError(f"cannot split {line.strip()!r}: {str(error).lower()}") from None
    if not words:
        words = ["help"]
    name, rest = words[0], words[1:]
    if name in ("-h", "--help"):
        name = "help"
    parser = _PARSERS.get(name)
    if parser is None:
        raise MagicError(f"unknown command {name!r}; commands: {', '.join(COMMANDS)} (see %agentctx help)")
    if any(word in ("-h", "--help") for word in rest):
        return ParsedCommand("help", argparse.Namespace(command=name), None)
    if cell is not None and name not in CELL_COMMANDS:
        raise MagicError(f"{name} is a line magic: write %agentctx {name} ... without a cell")
    if cell is None and name not in LINE_COMMANDS:
        raise MagicError(f"{name} needs a cell: write %%agentctx {name} {' '.join(rest) or 'NAME'} on its first line")
    args = parser.parse_intermixed_args(rest) if name in WORDS_COMMANDS else parser.parse_args(rest)
    if name in WORDS_COMMANDS:
        args.text = " ".join(args.text) if args.text else None
    return ParsedCommand(name, args, cell)


def command_help(name: str) -> str:
    """The full help of one subcommand."""
    parser = _PARSERS.get(name)
    if parser is None:
        raise MagicError(f"unknown command {name!r}; commands: {', '.join(COMMANDS)}")
    return parser.format_help().rstrip()


def overview() -> str:
    """One usage line per subcommand, as ``%agentctx help`` prints it."""
    lines = ["%agentctx: show, measure and run agent contexts (%load_ext agentctx_widgets)", ""]
    for parser in _PARSERS.values():
        lines.append(f"  {one_line_usage(parser)}")
        lines.extend(textwrap.wrap(parser.description or "", 100, initial_indent=" " * 6, subsequent_indent=" " * 6))
    lines.append("")
    lines.append("%agentctx help COMMAND (or COMMAND --help) shows one command's options.")
    lines.append("Errors print one line starting 'agentctx: ' and change nothing (a failed turn's on stdout, the rest on stderr).")
    return "\n".join(lines)
