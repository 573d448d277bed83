"""Benchmark: ``estimate_context_tokens`` on a long mixed context versus tiktoken ``o200k_base``.

Run: ``.venv/bin/python bench/estimate.py [--messages 100000] [--seed 7]``

Measures, in one run and on the same strings: the first (cold-cache) estimate, a repeat with nothing
changed, a re-estimate after one append, and tiktoken counting every block string once (single
thread, ``encode_ordinary`` in a loop). Prints a markdown table with time ratios and the token ratio.

tiktoken normally downloads ``o200k_base.tiktoken`` from the internet. Offline, this script takes the
file from the ``bpe-openai`` wheel on PyPI (``pip install bpe-openai``), which ships it gzipped as
``bpe_openai/data/o200k_base.tiktoken.gz``: it is unpacked into a private ``TIKTOKEN_CACHE_DIR`` under
the name tiktoken looks for, and tiktoken checks its SHA-256 as usual. If neither tiktoken nor that
file is available, the comparison is skipped and the table says why.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentctx_widgets.context import Context, estimate_context_tokens  # noqa: E402
from agentctx_widgets.context import usage as usage_module  # noqa: E402
from agentctx_widgets.context.tiktoken_offline import offline_encoding, packaged_encoding_file  # noqa: E402

WORDS = ("the model returns a streamed answer with tool calls and cached prompt tokens while the agent "
         "checks context windows, usage, latency; errors: retry after 30s. def run(x): return x * 2 "
         "Übersetzung des Textes — naïve café résumé 東京 データ 42 3.14 https://example.com/a?b=c").split()


def make_context(count: int, seed: int) -> list[dict]:
    """``count`` mixed messages: user, assistant (thinking + text or a tool call) and tool results."""
    rng = random.Random(seed)

    def words(low: int, high: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))

    context: list[dict] = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            context.append({"type": 2, "content": [{"type": "text", "text": words(5, 60)}]})
        elif kind == 1:
            context.append({"type": 3, "content": [{"type": "thinking", "text": words(10, 80)},
                                                   {"type": "text", "text": words(10, 120)}]})
        elif kind == 2:
            context.append({"type": 3, "content": [{"type": "toolCall", "callId": f"call_{i}", "name": "search",
                                                   "arguments": {"query": words(2, 8), "limit": rng.randint(1, 20)}}]})
        else:
            context.append({"type": 4, "callId": f"call_{i - 1}", "content": [{"type": "text", "text": words(20, 150)}]})
    return context


def load_o200k() -> tuple[object | None, str]:
    """The tiktoken o200k_base encoding loaded offline, or ``(None, why not)``."""
    encoding = offline_encoding("o200k_base")
    if encoding is None:
        return None, "no offline o200k_base (pip install \"agentctx-widgets[tiktoken]\": tiktoken + bpe-openai)"
    return encoding, f"o200k_base offline ({packaged_encoding_file('o200k_base') or 'tiktoken cache'})"


def block_strings(context: list[dict]) -> list[str]:
    """The strings the estimator counts, in the form it counts them."""
    return list(usage_module._strings(context))


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    context = make_context(args.messages, args.seed)
    usage_module._cache.clear()
    # the walk over a plain list of the same messages (what any iterable gets), cold and after one append
    first, t_first = timed(estimate_context_tokens, context)
    again, t_again = timed(estimate_context_tokens, context)
    context.append({"type": 2, "content": [{"type": "text", "text": "and one more question about the plan"}]})
    appended, t_append = timed(estimate_context_tokens, context)
    assert first == again

    # a Context keeps a running word count of its own entries: the estimate after one append is O(1)
    owned = Context(context[:-1])
    owned_first, t_owned_first = timed(estimate_context_tokens, owned)
    owned.append(context[-1])
    owned_appended, t_owned_append = timed(estimate_context_tokens, owned)
    assert (owned_first, owned_appended) == (first, appended)

    encoding, how = load_o200k()
    rows = [("estimate, first call (cold cache)", t_first, first),
            ("estimate, repeat (nothing changed)", t_again, again),
            ("estimate, after one append", t_append, appended),
            ("… of a `Context` (running word count), after one append", t_owned_append, owned_appended)]
    exact = None
    if encoding is not None:
        strings = block_strings(context)
        encode = encoding.encode_ordinary
        exact, t_exact = timed(lambda: sum(len(encode(s)) for s in strings))
        rows.append(("tiktoken o200k_base, every block", t_exact, exact))

    print(f"## estimate_context_tokens on {len(context):,} messages\n")
    print("| measurement | time (ms) | tokens | time vs tiktoken |")
    print("|---|---:|---:|---:|")
    for label, seconds, tokens in rows:
        ratio = f"{seconds / rows[-1][1]:.3f}x" if exact is not None else "n/a"
        print(f"| {label} | {seconds * 1000:.1f} | {tokens:,} | {ratio} |")
    print()
    if exact is None:
        print(f"tiktoken comparison skipped: {how}.")
    else:
        print(f"Estimate / tiktoken tokens: {appended / exact:.3f} (same strings; {how}).")
        print(f"tiktoken is {rows[-1][1] / t_first:.1f}x slower than a cold estimate and "
              f"{rows[-1][1] / t_append:.1f}x slower than a re-estimate after one append.")
    print(f"A Context's estimate after one append: {t_owned_append * 1000:.2f} ms = "
          f"{t_owned_append / t_first * 100:.2f}% of a cold walk (target <= 1%).")


if __name__ == "__main__":
    main()
