"""Yao's current ctx in a TypeScript hook: what a bound call and an onChunk callback cost.

Three numbers, medians of ``--repeat`` hook calls, each per operation: a ``ctx.memory.chat.Get`` (one
round trip to the kernel and ``call_service``); a ``ctx.Append`` onto a streaming message (the round
trip, ``YaoOutput``'s delta and its flush to a list sink); and one ``onChunk`` call back into the
worker during ``ctx.llm.Stream`` (per chunk, a scripted model of ``--chunks`` one-character chunks;
the model's own chunk handling and each chunk's send to the client are included). The hook call's own
cost is spread over its ``--calls`` operations.

Run: ``.venv/bin/python bench/yao_binding.py`` (``--calls 500 --chunks 500 --repeat 7``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agentctx_widgets import ScriptedModel
from agentctx_widgets.yao import load_ts_module_set
from agentctx_widgets.yao.binding import current_context

SOURCE = """
function Create(ctx: any, messages: any[], options: any): any {
  const n: number = options.n;
  if (options.what === "get") {
    ctx.memory.chat.Set("k", 1);
    for (let i = 0; i < n; i++) ctx.memory.chat.Get("k");
  } else if (options.what === "append") {
    const id = ctx.SendStream("start");
    for (let i = 0; i < n; i++) ctx.Append(id, "x");
    ctx.End(id);
  } else {
    let seen = 0;
    ctx.llm.Stream("m", [{ role: "user", content: "x" }], { onChunk: () => { seen++; return 0; } });
    if (seen !== n) throw new Error(`saw ${seen} chunks, expected ${n}`);
  }
  return null;
}
"""


def per_op_us(hooks, what: str, n: int, repeat: int, chunks: int) -> float:
    times = []
    for _ in range(repeat):
        ctx = current_context(sinks=[[].extend], chat_id="bench",
                              services={"model": ScriptedModel(["x" * chunks], chunk_size=1)})
        started = time.perf_counter()
        asyncio.run(hooks.call("Create", ctx, [], {"what": what, "n": n}))
        times.append((time.perf_counter() - started) / n * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "index.ts").write_text(SOURCE)
        hooks = load_ts_module_set(directory, time_limit=60)
        try:
            get = per_op_us(hooks, "get", args.calls, args.repeat, args.chunks)
            append = per_op_us(hooks, "append", args.calls, args.repeat, args.chunks)
            chunk = per_op_us(hooks, "chunks", args.chunks, args.repeat, args.chunks)
        finally:
            hooks.close()
    print(f"ctx.memory.chat.Get:       {get:8.1f} µs per call (median of {args.repeat} x {args.calls})")
    print(f"ctx.Append (streaming):    {append:8.1f} µs per call (median of {args.repeat} x {args.calls})")
    print(f"onChunk during llm.Stream: {chunk:8.1f} µs per chunk (median of {args.repeat} x {args.chunks})")


if __name__ == "__main__":
    main()
