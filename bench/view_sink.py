"""The view's share of the kernel path: 100,000 append deltas into a ContextView, and into its
StreamProtocol alone, against the least any buffer must do (bench/output.py's list-append baseline).

The ContextView rows are the whole kernel path (``Output.send`` + ``flush`` every 100 sends, and after
every send as bench/stream.py's burst does; the view as the sink, no comm); the StreamProtocol rows are
what the view adds per delta: ``outputs_batch`` with the same batches of dicts (each delta after the
first of a flush is one more append to an open fold), and ``append_text`` with the parts, the path
``Output``'s fast-path appends take into a ContextView.

    .venv/bin/python bench/view_sink.py [--count N] [--flush-every K]
"""

from __future__ import annotations

import argparse
import time

from output import best, deltas, run_baseline

from agentctx_widgets import ContextView
from agentctx_widgets.output import Output
from agentctx_widgets.widget.stream import StreamProtocol

OPEN = {"type": "text", "props": {"content": ""}, "id": "m"}


def run_view(messages: list[dict], flush_every: int) -> float:
    view = ContextView()
    view.comm.send = lambda *args, **kwargs: None  # nothing leaves the process
    out = Output([view])
    out.send(OPEN)
    start = time.perf_counter()
    for i, message in enumerate(messages, 1):
        out.send(message)
        if i % flush_every == 0:
            out.flush()
    out.flush()
    elapsed = time.perf_counter() - start
    assert len(view.state()["outputs"]["messages"]["m"]["props"]["content"]) == 5 * len(messages)
    view.close()
    return elapsed


def run_protocol(messages: list[dict], flush_every: int) -> float:
    proto = StreamProtocol(lambda message: None, lambda state: None,
                           lambda context: {"name": "bench", "count": 0, "tokens": 0, "window": None, "model": None})
    proto.output(OPEN)
    batches = [messages[i:i + flush_every] for i in range(0, len(messages), flush_every)]
    start = time.perf_counter()
    for batch in batches:
        proto.outputs_batch(batch)
    proto.flush()
    elapsed = time.perf_counter() - start
    assert len(proto.outputs["messages"]["m"]["props"]["content"]) == 5 * len(messages)
    proto.close()
    return elapsed


def run_append_text(messages: list[dict], flush_every: int) -> float:
    """StreamProtocol.append_text per delta (what ContextView.append_text forwards to)."""
    proto = StreamProtocol(lambda message: None, lambda state: None,
                           lambda context: {"name": "bench", "count": 0, "tokens": 0, "window": None, "model": None})
    proto.output(OPEN)
    parts = [(m["id"], m["type"], m["delta_path"], m["props"]["content"]) for m in messages]
    start = time.perf_counter()
    for msg_id, mtype, key, text in parts:
        proto.append_text(msg_id, mtype, key, text)
    proto.flush()
    elapsed = time.perf_counter() - start
    assert len(proto.outputs["messages"]["m"]["props"]["content"]) == 5 * len(messages)
    proto.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--flush-every", type=int, default=100)
    args = parser.parse_args()
    messages = deltas(args.count)
    base = best(run_baseline, messages, args.flush_every, repeat=5)
    view = best(run_view, messages, args.flush_every, repeat=5)
    view_each = best(run_view, messages, 1, repeat=5)
    proto = best(run_protocol, messages, args.flush_every, repeat=5)
    parts = best(run_append_text, messages, args.flush_every, repeat=5)
    per = lambda seconds: seconds / args.count * 1e6  # noqa: E731
    print(f"{args.count:,} append deltas, flush every {args.flush_every} (best of 5)")
    print(f"  baseline (list append + list sink):     {per(base):6.2f} us/delta")
    print(f"  Output.send + flush into a ContextView: {per(view):6.2f} us/delta  ratio {view / base:5.1f}x")
    print(f"  ... flushed after every send (a burst): {per(view_each):6.2f} us/delta  ratio {view_each / base:5.1f}x")
    print(f"  StreamProtocol.outputs_batch alone:     {per(proto):6.2f} us/delta  ratio {proto / base:5.1f}x")
    print(f"  StreamProtocol.append_text alone:       {per(parts):6.2f} us/delta  ratio {parts / base:5.1f}x"
          "  (Output's fast path into a ContextView)")


if __name__ == "__main__":
    main()
