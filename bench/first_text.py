"""Request -> first text: ``run_turn`` with ``OpenAIChatModel`` against the raw ``openai`` SDK, one run.

A loopback Chat Completions server (127.0.0.1, its own process so it never shares our GIL;
``bench/models.py``'s ``SlowChatServer``) sends the role chunk at once, the first content chunk after
``--first-delay`` seconds (default 0.02: what llama-server took for its first token with
SmolLM2-135M in issue 20's measurement; ``--first-delay 0`` shows the bare overhead), then a few more.
Three sides, interleaved (order rotating), ``--turns`` each after one untimed warm-up:

- **baseline**, the least the job can cost: the raw sync SDK with one ``OpenAI`` client built once
  and kept (its connection reused), ``create(stream=True)`` -> the first chunk with content;
- **raw SDK, new client per call**: a fresh ``AsyncOpenAI`` in a fresh ``asyncio.run`` per request
  (what a connector that builds a client per call pays, for reference);
- **ours**: ``run_turn(Context(), "hi", model=OpenAIChatModel(...), view=first)`` -> the streamed
  reply's first text reaches the view as its pending message (``TurnView.set_pending``, what
  ``ContextView`` gets; worker thread, event loop, hooks, the turn's client from its pool and the
  translator included; the page's side is ``bench/first_char.py``'s).

Figures: median and p95 ms from the call to the first text, and ours / baseline (target <= 1.2x at the
default first delay). Run: ``.venv/bin/python bench/first_text.py [--turns N] [--first-delay S]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVER = """
import sys, time
sys.path.insert(0, {bench!r})
from models import SlowChatServer
server = SlowChatServer(first_delay={first_delay!r}, delay=0.001, rest=3)
print(server.url, flush=True)
sys.stdin.read()
server.close()
"""


def start_server(first_delay: float) -> tuple[subprocess.Popen, str]:
    code = SERVER.format(bench=str(REPO / "bench"), first_delay=first_delay)
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = child.stdout.readline().strip()  # type: ignore[union-attr]
    if not url.startswith("http://127.0.0.1:"):
        child.kill()
        raise SystemExit(f"the loopback server did not start (printed {url!r})")
    return child, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--first-delay", type=float, default=0.02)
    args = parser.parse_args()

    import openai

    from agentctx_widgets import Context, OpenAIChatModel, run_turn

    child, url = start_server(args.first_delay)
    messages = [{"role": "user", "content": "hi"}]
    kept = openai.OpenAI(base_url=url, api_key="x", max_retries=0)

    def baseline() -> float:
        started = time.perf_counter()
        stream = kept.chat.completions.create(model="m", messages=messages, stream=True)
        try:
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    return time.perf_counter() - started
        finally:
            stream.close()
        raise RuntimeError("no content chunk")

    def fresh_client() -> float:
        async def once() -> float:
            started = time.perf_counter()
            client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
            try:
                stream = await client.chat.completions.create(model="m", messages=messages, stream=True)
                async for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        elapsed = time.perf_counter() - started
                        await stream.close()
                        return elapsed
            finally:
                await client.close()
            raise RuntimeError("no content chunk")

        return asyncio.run(once())

    model = OpenAIChatModel("m", base_url=url, api_key="x")

    def ours() -> float:
        seen: list[float] = []

        class First:
            """A view (``TurnView``): the streamed reply reaches it as the pending message."""

            def write(self, batch: list[dict]) -> None:
                pass

            def set_pending(self, message: dict | None) -> None:
                if not seen and message and any(block.get("text") for block in message.get("content") or []):
                    seen.append(time.perf_counter())

        started = time.perf_counter()
        run_turn(Context(), "hi", model=model, view=First())
        if not seen:
            raise RuntimeError("no text reached the sink")
        return seen[0] - started

    sides = {"baseline: raw sync SDK, one kept client": baseline,
             "raw async SDK, new client per call": fresh_client,
             "ours: run_turn + OpenAIChatModel": ours}
    try:
        for side in sides.values():
            side()  # warm-up: imports, the kept client's connection, the TLS context
        samples: dict[str, list[float]] = {name: [] for name in sides}
        order = list(sides)
        for turn in range(args.turns):
            for name in itertools.islice(itertools.cycle(order), turn % len(order), turn % len(order) + len(order)):
                samples[name].append(sides[name]() * 1000)
    finally:
        child.stdin.close()  # type: ignore[union-attr]
        child.wait(timeout=30)

    base = statistics.median(samples[order[0]])
    load = os.getloadavg()[0]
    print(f"request -> first text, {args.turns} turns each, server first-token delay {args.first_delay * 1000:.0f} ms, "
          f"load {load:.1f}\n")
    print("| side | median ms | p95 ms | / baseline |\n|---|---|---|---|")
    for name, values in samples.items():
        values.sort()
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        median = statistics.median(values)
        print(f"| {name} | {median:.1f} | {p95:.1f} | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
