"""``python -m agentctx_widgets export SESSION.jsonl -o PATH.html``: a session file as a standalone page.

The page opens from disk, offline, with no JavaScript (see ``agentctx_widgets.html``). Bad input is one
``agentctx: …`` line on stderr and exit code 2; a file with some unreadable lines is exported with one
summary line naming the first few.

``python -m agentctx_widgets suite check SUITE.jsonl --hooks FILE | --assistant DIR``: a regression suite
checked offline; exit code 0 every case passed, 1 something differs, 2 bad input (``suite/cli.py``).
Only the arguments are here: the suite package is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from .context.safe_write import UnsafeFileError, read_regular, write_atomic

#: The largest ``--outputs`` file read (bytes), refused by its size before reading.
MAX_OUTPUTS_BYTES = 64 * 1024 * 1024


class _Fail(Exception):
    """One line for stderr, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agentctx_widgets",
                                     description="agentctx-widgets command line tools.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    export = commands.add_parser(
        "export", help="write a session file (.jsonl) as a standalone HTML page (no JavaScript, fetches nothing)",
        description="Write a session file (.jsonl, as Context.save writes it) as a standalone HTML page that "
                    "opens from disk, offline, with no JavaScript.")
    export.add_argument("session", metavar="SESSION.jsonl", help="the session file to export")
    export.add_argument("-o", "--output", metavar="PATH.html",
                        help="where to write the page (default: SESSION with .html instead of .jsonl; - for stdout)")
    export.add_argument("--title", help="the page's heading (default: the context's name)")
    export.add_argument("--outputs", metavar="OUTPUTS.json",
                        help="output messages to show under the context: a JSON list of messages, or a state "
                             "{order, messages}")
    export.add_argument("--model", help="a model name, for the usage line's share of its context window")
    _suite_parser(commands)
    return parser


def _suite_parser(commands: argparse._SubParsersAction) -> None:
    suite = commands.add_parser("suite", help="check a regression suite (Suite.record wrote it) against hooks",
                                description="Regression suites (agentctx_widgets.suite).")
    actions = suite.add_subparsers(dest="suite_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", help="re-run every case with these hooks against its recorded answers, offline",
        description="Re-run every case of the suite with these hooks against its recorded model answers, "
                    "offline, and print the text diff of each case that differs. Exit code 0: every case "
                    "passed; 1: a case changed, failed or changed the model request; 2: bad input.")
    check.add_argument("suite", metavar="SUITE.jsonl", help="the suite file (Suite.record wrote it)")
    given = check.add_mutually_exclusive_group(required=True)
    given.add_argument("--hooks", metavar="FILE",
                       help="the hooks to check with: a .js or .ts file (seed-API JavaScript hooks) or a .py "
                            "module (its `hooks`, else its Create/Before/After/Done/Error functions)")
    given.add_argument("--assistant", metavar="DIR", help="a Yao assistant directory to check with")
    check.add_argument("--concurrency", metavar="N", type=_at_least_one, default=8,
                       help="cases checked side by side (default 8; a JavaScript hook set runs one worker each)")
    check.add_argument("--html", metavar="OUT.html", help="also write the report as a static HTML page")


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def _load(session: str):
    from .notebook import SuiteNotSessionError, UnreadableSessionError, load_session

    path = Path(session)
    if path.is_file() and path.stat().st_size == 0:
        raise _Fail(f"{session}: the file is empty, not a session file")
    try:
        context, skipped = load_session(path)
    except FileNotFoundError:
        raise _Fail(f"{session}: no such file") from None
    except SuiteNotSessionError as exc:
        raise _Fail(str(exc)) from None
    except UnreadableSessionError as exc:
        raise _Fail(f"{session}: no valid line in the file, not a session file ({exc})") from None
    except (OSError, ValueError) as exc:  # SessionFileError is a ValueError
        raise _Fail(str(exc).replace("Context.load: ", "")) from None
    if skipped:
        print(f"agentctx: export: {skipped.summary()}", file=sys.stderr)
    return context


def _outputs(path: str | None):
    """The ``--outputs`` file's JSON: a regular file only (a FIFO or a device is refused, never waited on),
    at most ``MAX_OUTPUTS_BYTES``, nested at most the store's ``MAX_DEPTH`` deep; each refusal names the file."""
    if path is None:
        return None
    from .context.store import RefusedJSON, decode_json

    try:
        raw = read_regular(path, "--outputs", MAX_OUTPUTS_BYTES)
    except UnsafeFileError as exc:
        raise _Fail(str(exc)) from None
    except OSError as exc:
        raise _Fail(f"--outputs: {path}: {exc.strerror or exc}") from None
    try:
        return decode_json(raw)  # the session store's checks: depth, a key twice
    except RefusedJSON as exc:
        raise _Fail(f"--outputs: {path} {exc}; refusing it") from None
    except orjson.JSONDecodeError as exc:
        raise _Fail(f"--outputs: {path} is not JSON ({exc})") from None


def _export(args: argparse.Namespace) -> int:
    from .html import to_html

    context = _load(args.session)
    outputs = _outputs(args.outputs)
    try:
        page = to_html(context, outputs, title=args.title, model=args.model)
    except TypeError as exc:
        raise _Fail(str(exc)) from None
    if args.output == "-":
        sys.stdout.write(page)
        return 0
    target = Path(args.output) if args.output else Path(args.session).with_suffix(".html")
    if target.is_dir():
        raise _Fail(f"{target}: is a directory; give a file name with -o")
    data = page.encode("utf-8")
    try:  # a mkstemp file beside it, then a rename; never through a symlink (context/safe_write.py)
        write_atomic(target, data, "export")
    except UnsafeFileError as exc:
        raise _Fail(str(exc).removeprefix("export: ")) from None
    except OSError as exc:
        raise _Fail(f"{target}: cannot write ({exc.strerror or exc})") from None
    print(f"wrote {target} ({len(context):,} entries, {len(data) / 1024:,.0f} KB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = args.command if args.command != "suite" else f"suite {args.suite_command}"
    from .suite.cli import SuiteCliError, main as suite_main  # once parsed: `--help` imports nothing more

    try:
        if args.command == "export":
            return _export(args)
        if args.command == "suite":
            return suite_main(args)
    except (_Fail, SuiteCliError) as exc:  # suite/cli.py's bad input, said as export's is
        print(f"agentctx: {command}: {exc}", file=sys.stderr)
        return 2
    return 2  # pragma: no cover - argparse refuses unknown commands


if __name__ == "__main__":
    sys.exit(main())
