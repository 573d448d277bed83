"""Yao's current output API: per-``ctx.Append`` cost of ``YaoOutput`` alone and into each sink (the CUI
SSE writer, the OpenAI chunk writer, the CUI client fold), for 10,000 vs 100,000 appends onto one
streaming message — flat when each append costs its own size, not the text's (the request buffer and
the fold keep the text growing in place). The baseline is the least a stream must do: a list append.

    .venv/bin/python bench/yao_output.py [--count N]
"""

from __future__ import annotations

import argparse
import time

from agentctx_widgets.yao.cui_state import CuiState
from agentctx_widgets.yao.output import YaoOutput
from agentctx_widgets.yao.writers import CuiWriter, OpenAIWriter

SINKS = {
    "YaoOutput, no sink": lambda: [],
    "+ CuiWriter (SSE text)": lambda: [CuiWriter()],
    "+ OpenAIWriter (chunks)": lambda: [OpenAIWriter(created=1)],
    "+ CuiState (client fold)": lambda: [CuiState()],
}


def per_append_us(count: int, make_sinks) -> float:
    """Best of two runs: microseconds per Append (End included)."""
    best = float("inf")
    for _ in range(2):
        out = YaoOutput(make_sinks())
        message_id = out.SendStream("start ")
        started = time.perf_counter()
        for index in range(count):
            out.Append(message_id, f"token {index} ")
        out.End(message_id)
        best = min(best, (time.perf_counter() - started) * 1e6 / count)
    return best


def baseline_us(count: int) -> float:
    best = float("inf")
    for _ in range(2):
        kept: list[str] = []
        started = time.perf_counter()
        for index in range(count):
            kept.append(f"token {index} ")
        best = min(best, (time.perf_counter() - started) * 1e6 / count)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    args = parser.parse_args()
    small = max(1, args.count // 10)
    print(f"{'':28s} {small:>9,d} {args.count:>9,d}  us per append")
    print(f"{'baseline (list.append)':28s} {baseline_us(small):9.2f} {baseline_us(args.count):9.2f}")
    for name, make in SINKS.items():
        print(f"{name:28s} {per_append_us(small, make):9.2f} {per_append_us(args.count, make):9.2f}")


if __name__ == "__main__":
    main()
