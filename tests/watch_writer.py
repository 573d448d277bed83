"""A session-file writer in its own process, driven one step at a time (for tests/test_watch.py).

Usage: ``python watch_writer.py PATH``. Each stdin line is a JSON command; the writer does it, flushes
what it wrote to the file and answers ``ok`` on stdout, so the test knows the bytes are in the file
before it looks for them in the watcher. Commands (``lines`` are JSON values, written one per line):

- ``{"op": "lines", "lines": [...], "pause": s}``: append each line, sleeping ``pause`` between them;
- ``{"op": "raw", "text": "..."}``: append text as it is (a cut line, a bad line, the rest of a line);
- ``{"op": "rewrite", "lines": [...]}``: cut the file to 0 bytes and write the lines (same inode);
- ``{"op": "rotate", "lines": [...]}``: rename the file to PATH.1, then write the lines to a new PATH;
- ``{"op": "delete"}`` / ``{"op": "create", "lines": [...]}``: remove the file / write a new one;
- ``{"op": "context", "id": ID}``: start a ``Context`` saving to PATH (as an agent server would);
  ``{"op": "append", "messages": [...]}``, ``{"op": "replace", "index", "message"}``,
  ``{"op": "truncate", "length": n}``: change it, then ``Context.save()``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from agentctx_widgets.context import Context


def encode(lines: list) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as stream:
        stream.write(data)


def main(path: Path) -> None:
    context: Context | None = None
    for raw in sys.stdin:
        command = json.loads(raw)
        op = command["op"]
        if op == "lines":
            for line in command["lines"]:
                append(path, encode([line]))
                time.sleep(command.get("pause", 0))
        elif op == "raw":
            append(path, command["text"].encode())
        elif op == "rewrite":
            with open(path, "r+b") as stream:
                stream.truncate(0)
                stream.write(encode(command["lines"]))
        elif op == "rotate":
            os.rename(path, f"{path}.1")
            path.write_bytes(encode(command["lines"]))
        elif op == "delete":
            path.unlink()
        elif op == "create":
            path.write_bytes(encode(command["lines"]))
        elif op == "context":
            context = Context(id=command["id"], dir=path.parent)
            assert context.path == path, (context.path, path)
        elif op in ("append", "replace", "truncate"):
            assert context is not None, "start a context first"
            if op == "append":
                for message in command["messages"]:
                    context.append(message)
            elif op == "replace":
                context.replace(command["index"], command["message"])
            else:
                context.truncate(command["length"])
            context.save()
        else:
            raise ValueError(f"watch_writer: unknown op {op!r}")
        print("ok", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
