"""Assembler benchmark: n text deltas folded into one message, against joining the same strings.

The assembler must stay linear in the text (the runner feeds it every delta of a long reply): the ratio
to a plain ``"".join`` should not grow with n. Run: ``.venv/bin/python bench/assemble.py``.
"""

from __future__ import annotations

import time

from agentctx_widgets.context import create_assembler


def assemble(deltas: list[str]) -> float:
    asm = create_assembler()
    asm.consume({"type": "text_start", "contentIndex": 0})
    start = time.perf_counter()
    for delta in deltas:
        asm.consume({"type": "text_delta", "contentIndex": 0, "delta": delta})
    elapsed = time.perf_counter() - start
    assert asm.message()["content"][0]["text"] == "".join(deltas)
    return elapsed


def baseline(deltas: list[str]) -> float:
    start = time.perf_counter()
    parts = []
    for delta in deltas:  # the same loop shape, no assembler
        parts.append(delta)
    "".join(parts)
    return time.perf_counter() - start


def main() -> None:
    print("| text deltas (5 chars) | assembler | list+join baseline | ratio |")
    print("|---:|---:|---:|---:|")
    for n in (20_000, 80_000, 320_000):
        deltas = [f"{i % 100000:05d}" for i in range(n)]
        ours = min(assemble(deltas) for _ in range(3))
        base = min(baseline(deltas) for _ in range(3))
        print(f"| {n:,} | {ours * 1000:.0f} ms | {base * 1000:.1f} ms | {ours / base:.0f}x |")


if __name__ == "__main__":
    main()
