"""Output.send throughput: 100,000 tiny append deltas with a flush every 100 sends.

Compares, in one run, against a baseline that does the least any buffer must do: append each message
to a list and hand the list to a list-append sink on flush. Also checks that the per-send cost does
not grow with the stream (10,000 vs 100,000 sends), i.e. send is O(message), not O(state); measures
the kernel path into a real ContextView (its comm replaced by a no-op: no front end, no transport), also
flushed after every send as bench/stream.py's burst does (each delta then reaches the view on its own,
through ``append_text``);
and the per-delta cost onto one message already holding 10k vs 1M characters (flat: the text is kept
as parts, never copied per delta).

    .venv/bin/python bench/output.py [--count N] [--flush-every K]
"""

from __future__ import annotations

import argparse
import time

from agentctx_widgets.output import Output, StandardAdapter
from agentctx_widgets.widget import ContextView


def deltas(count: int, distinct: int = 1_000) -> list[dict]:
    """``count`` append deltas cycling through ``distinct`` dicts, so a longer run touches no more memory
    per send than a shorter one (the growth row then measures the code, not the CPU caches)."""
    pool = [{"type": "text", "props": {"content": f"{i:04d} "}, "id": "m", "delta": True,
             "delta_path": "content", "delta_action": "append"} for i in range(distinct)]
    return [pool[i % distinct] for i in range(count)]


def run_baseline(messages: list[dict], flush_every: int) -> float:
    received: list[dict] = []
    buffer: list[dict] = []
    start = time.perf_counter()
    for i, message in enumerate(messages, 1):
        buffer.append(message)
        if i % flush_every == 0:
            received.extend(buffer)
            buffer = []
    received.extend(buffer)
    elapsed = time.perf_counter() - start
    assert len(received) == len(messages)
    return elapsed


def run_output(messages: list[dict], flush_every: int, *, standard: bool = False) -> float:
    received = [0]  # a sink that counts: one that kept every message would time the GC walking them

    def count(batch: list[dict]) -> None:
        received[0] += len(batch)

    out = Output([count])
    if standard:
        out.add_sink(StandardAdapter(id="chatcmpl-bench", created=0))
    out.send({"type": "text", "props": {"content": ""}, "id": "m"})
    start = time.perf_counter()
    for i, message in enumerate(messages, 1):
        out.send(message)
        if i % flush_every == 0:
            out.flush()
    out.flush()
    elapsed = time.perf_counter() - start
    assert received[0] == len(messages) + 1
    assert len(out.state["messages"]["m"]["props"]["content"]) == 5 * len(messages)
    return elapsed


def run_view(messages: list[dict], flush_every: int, *, start: str = "") -> float:
    """Output.send + flush into a ContextView: the kernel's whole per-delta path (engine, coalescing,
    batches); the comm's send is a no-op, so nothing leaves the process."""
    view = ContextView()
    view.comm.send = lambda *args, **kwargs: None
    out = Output([view])
    out.send({"type": "text", "props": {"content": start}, "id": "m"})
    out.flush()
    begin = time.perf_counter()
    for i, message in enumerate(messages, 1):
        out.send(message)
        if i % flush_every == 0:
            out.flush()
    out.flush()
    elapsed = time.perf_counter() - begin
    expected = len(start) + 5 * len(messages)
    assert len(out.state["messages"]["m"]["props"]["content"]) == expected
    assert len(view.state()["outputs"]["messages"]["m"]["props"]["content"]) == expected
    view.close()
    return elapsed


def best(fn, *args, repeat: int = 3, **kw) -> float:
    return min(fn(*args, **kw) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--flush-every", type=int, default=100)
    args = parser.parse_args()
    messages = deltas(args.count)
    small = messages[: args.count // 10]
    base = best(run_baseline, messages, args.flush_every)
    output = best(run_output, messages, args.flush_every)
    output_small = best(run_output, small, args.flush_every)
    standard = best(run_output, messages, args.flush_every, standard=True)
    view = best(run_view, messages, args.flush_every)
    view_each = best(run_view, messages, 1)
    onto = messages[: args.count // 5]
    onto_small = best(run_view, onto, args.flush_every, start="x" * 10_000)
    onto_large = best(run_view, onto, args.flush_every, start="x" * 1_000_000)
    per = lambda seconds, n: seconds / n * 1e6  # noqa: E731
    print(f"{args.count:,} append deltas, flush every {args.flush_every} (best of 3)")
    print(f"  baseline (list append + list sink): {base * 1e3:8.1f} ms  {per(base, args.count):6.2f} us/send")
    print(f"  Output.send + flush:                {output * 1e3:8.1f} ms  {per(output, args.count):6.2f} us/send"
          f"  ratio {output / base:5.1f}x")
    print(f"  ... with a StandardAdapter sink:    {standard * 1e3:8.1f} ms  {per(standard, args.count):6.2f} us/send"
          f"  ratio {standard / base:5.1f}x")
    print(f"  Output at {len(small):,} sends:            {output_small * 1e3:8.1f} ms  "
          f"{per(output_small, len(small)):6.2f} us/send  (growth x{per(output, args.count) / per(output_small, len(small)):.2f}"
          f" per send from {len(small):,} to {args.count:,})")
    print(f"  Output.send + flush -> ContextView: {view * 1e3:8.1f} ms  {per(view, args.count):6.2f} us/send"
          f"  ratio {view / base:5.1f}x  (kernel side, comm send a no-op)")
    print(f"  ... flushed after every send:       {view_each * 1e3:8.1f} ms  {per(view_each, args.count):6.2f} us/send"
          f"  ratio {view_each / base:5.1f}x  (the burst's pattern)")
    print(f"  ... {len(onto):,} deltas onto 10k chars:  {per(onto_small, len(onto)):6.2f} us/send; onto 1M chars: "
          f"{per(onto_large, len(onto)):6.2f} us/send  (x{onto_large / onto_small:.2f})")


if __name__ == "__main__":
    main()
