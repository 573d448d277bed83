"""Watch benchmark: how long a line another process writes takes to reach the watcher's Context.

A writer process appends ``--lines`` messages to a session file, each carrying the time it was written
(``time.monotonic()``: CLOCK_MONOTONIC, one clock for every process on the machine), after a random
pause of 0-50 ms so the writes fall anywhere in the poll cycle. The watcher here (``watch(path,
interval=--interval)``) records when each message reaches the Context (its observer runs on the
watcher's thread, after the change) and when the view first sends a batch that holds it (a recording
comm, the kernel side of "shown in the view"). Prints the median, 95th percentile and max of both.

Run: ``.venv/bin/python bench/watch.py`` (``--lines 200 --interval 0.1`` are the defaults).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentctx_widgets.widget.watch import watch  # noqa: E402

WRITER = """
import json, random, sys, time
path, count = sys.argv[1], int(sys.argv[2])
random.seed(12)
with open(path, "ab") as stream:
    stream.write(json.dumps({"type": "context", "id": "bench", "name": "bench", "version": 1}).encode() + b"\\n")
    stream.flush()
    for index in range(count):
        time.sleep(random.uniform(0, 0.05))
        line = {"type": 2 + index % 2, "content": [{"type": "text", "text": f"line {index}"}],
                "writtenAt": time.monotonic()}
        stream.write(json.dumps(line).encode() + b"\\n")
        stream.flush()
"""


def summary(label: str, seconds: list[float]) -> str:
    ms = sorted(value * 1000 for value in seconds)
    p95 = ms[max(0, round(0.95 * len(ms)) - 1)]
    return f"| {label} | {len(ms)} | {statistics.median(ms):.1f} | {p95:.1f} | {ms[-1]:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.jsonl"
        watcher = watch(path, interval=args.interval)
        in_context: dict[int, float] = {}
        in_batch: dict[int, float] = {}
        written: dict[int, float] = {}

        def observe(change: dict) -> None:
            if change["action"] == "added":
                message = change["message"]
                index = int(message["content"][0]["text"].split()[1])
                in_context.setdefault(index, time.monotonic())
                written[index] = message["writtenAt"]

        def record(data=None, buffers=None, **_) -> None:
            now = time.monotonic()
            for op in (data or {}).get("content", {}).get("ops", []):
                if op.get("op") == "ctx" and op.get("action") == "added":
                    in_batch.setdefault(int(op["message"]["content"][0]["text"].split()[1]), now)

        watcher.context.subscribe(observe)
        watcher.view.comm.send = record
        writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(path), str(args.lines)])
        try:
            writer.wait(args.lines * 0.05 + 60)
            deadline = time.monotonic() + 30
            while len(in_batch) < args.lines and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
            watcher.close()
        if len(in_context) != args.lines or len(in_batch) != args.lines:
            raise SystemExit(f"only {len(in_context)} / {len(in_batch)} of {args.lines} lines arrived")
        print(f"watch(interval={args.interval:g}), {args.lines} lines from another process, "
              f"latency from the write (ms):\n")
        print("| reached | lines | median | p95 | max |\n|---|---|---|---|---|")
        print(summary("the Context", [in_context[i] - written[i] for i in range(args.lines)]))
        print(summary("a view batch (comm send)", [in_batch[i] - written[i] for i in range(args.lines)]))
        print(f"\nerrors: {watcher.errors}, restarts: {watcher.restarts}, lines read: {watcher.lines_read}")


if __name__ == "__main__":
    main()
