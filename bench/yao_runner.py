"""Yao request benchmark: what ``run_assistant`` costs over the seed's ``run_turn`` for the same turn.

Prints a markdown table of medians (``--repeat`` runs each):
- one short request (a Python Create and Next, a scripted 3-chunk reply) through ``yao.runner.run_assistant``
  against ``hooks.runner.run_turn`` with a Python Create on the same model: the baseline is the kit's own
  runner, so the ratio is the price of Yao's order (events, Go-shaped payloads, decoding);
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

    def seed(text: str, chunk: int) -> None:
        result = run_turn(Context(name="b"), "hi", model=ScriptedModel([text], chunk_size=chunk),
                          hooks={"Create": lambda ctx, messages: {"messages": messages}})
        assert result.ok, result.error

    rows = []
    a = _median_ms(lambda: yao(short, 8), args.repeat)
    b = _median_ms(lambda: seed(short, 8), args.repeat)
    rows.append(("one short request (3 chunks)", a, b))
    repeat = max(3, args.repeat // 10)
    a = _median_ms(lambda: yao(long_text, 4), repeat)
    b = _median_ms(lambda: seed(long_text, 4), repeat)
    rows.append((f"{args.deltas:,}-delta reply", a, b))

    print("| case | run_assistant (ms) | run_turn (ms) | ratio | run_assistant per delta (µs) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, yao_ms, seed_ms in rows:
        per_delta = f"{yao_ms * 1000 / args.deltas:.1f}" if "delta reply" in name else "—"
        print(f"| {name} | {yao_ms:.2f} | {seed_ms:.2f} | {yao_ms / seed_ms:.2f}x | {per_delta} |")


if __name__ == "__main__":
    main()
