"""Yao request benchmark: what ``run_assistant`` costs over the least a request can cost.

Prints a markdown table of medians (``--repeat`` runs each). The baseline is the least the job costs:
the same scripted model's stream iterated bare, each event appended to a list (no hooks, no events, no
context). The seed's ``run_turn`` on the same model is a second column, for contrast only (our code):
- one short request (a Python Create and Next, a scripted 3-chunk reply) through ``yao.runner.run_assistant``;
- a 10,000-delta reply through each: per-delta cost (Yao's handler writes one chunk message per delta,
  with ids; the seed's runner folds deltas into the assembled message and sends the text once).

Run: ``.venv/bin/python bench/yao_runner.py`` (``--repeat N``, ``--deltas N``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentctx_widgets import Context, ScriptedModel, run_turn  # noqa: E402
from agentctx_widgets.yao.runner import run_assistant  # noqa: E402

ASSISTANT = SimpleNamespace(id="bench.echo", prompts=[{"role": "system", "content": "Be brief."}], connector="",
                            options={}, mcp=None)


def _create(ctx, messages, options=None):  # noqa: ANN001, ANN202 - hook signatures
    return {"temperature": 0.1}


def _next(ctx, payload, options):  # noqa: ANN001, ANN202
    return {"data": {"length": len(payload["completion"]["content"])}}


def _median_ms(run, repeat: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--deltas", type=int, default=10_000)
    args = parser.parse_args()

    short = "Hello there, friend."
    long_text = "abcd" * args.deltas

    def yao(text: str, chunk: int) -> None:
        result = run_assistant(Context(name="b"), "hi", assistant=ASSISTANT,
                               model=ScriptedModel([text], chunk_size=chunk), hooks={"Create": _create, "Next": _next})
        assert result.ok, result.error

    def bare(text: str, chunk: int) -> None:
        received: list = []
        for event in ScriptedModel([text], chunk_size=chunk).stream([{"type": 2, "content": [{"type": "text", "text": "hi"}]}]):
            received.append(event)
        assert received

    def seed(text: str, chunk: int) -> None:
        result = run_turn(Context(name="b"), "hi", model=ScriptedModel([text], chunk_size=chunk),
                          hooks={"Create": lambda ctx, messages: {"messages": messages}})
        assert result.ok, result.error

    rows = []
    for name, text, chunk, repeat in (("one short request (3 chunks)", short, 8, args.repeat),
                                      (f"{args.deltas:,}-delta reply", long_text, 4, max(3, args.repeat // 10))):
        rows.append((name, _median_ms(lambda: yao(text, chunk), repeat), _median_ms(lambda: bare(text, chunk), repeat),
                     _median_ms(lambda: seed(text, chunk), repeat)))

    print("| case | run_assistant (ms) | baseline: the model's stream into a list (ms) | ratio | "
          "seed run_turn, for contrast (ms) | run_assistant per delta (µs) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, yao_ms, bare_ms, seed_ms in rows:
        per_delta = f"{yao_ms * 1000 / args.deltas:.1f}" if "delta reply" in name else "—"
        print(f"| {name} | {yao_ms:.2f} | {bare_ms:.2f} | {yao_ms / bare_ms:.1f}x | {seed_ms:.2f} | {per_delta} |")


if __name__ == "__main__":
    main()
