"""``python -m agentctx_widgets export SESSION.jsonl -o PATH.html``: a session file as a standalone page.

The page opens from disk, offline, with no JavaScript (see ``agentctx_widgets.html``). Bad input is one
``agentctx: …`` line on stderr and exit code 2; a file with some unreadable lines is exported with one
summary line naming the first few.
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
    return parser


def _load(session: str):
    from .notebook import UnreadableSessionError, load_session

    path = Path(session)
    if path.is_file() and path.stat().st_size == 0:
        raise _Fail(f"{session}: the file is empty, not a session file")
    try:
        context, skipped = load_session(path)
    except FileNotFoundError:
        raise _Fail(f"{session}: no such file") from None
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
    try:
        if args.command == "export":
            return _export(args)
    except _Fail as exc:
        print(f"agentctx: {args.command}: {exc}", file=sys.stderr)
        return 2
    return 2  # pragma: no cover - argparse refuses unknown commands


if __name__ == "__main__":
    sys.exit(main())
