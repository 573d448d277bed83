"""JavaScript hooks in their worker process: what a Send + Flush costs, against the in-process engine.

Measured in one run, on this machine:

1. ``ctx.Send`` + ``ctx.Flush`` pairs: one hook call sending ``--pairs`` small append deltas, each followed
   by a flush, into an ``Output`` with a list sink (``bench/output.py``'s message); µs per pair, the wall
   time of the whole ``hooks.call`` (the kernel applying every batch included) / pairs; best of
   ``--repeats``. The same for Sends alone (one flush at the end), and with a ``StandardAdapter`` sink
   (its check runs in the worker). Baseline: the in-process engine this replaced (``js_hooks.py`` /
   ``js_engine.py`` / ``js_prelude.js`` / ``js_discover.js`` as of ``--baseline`` in git, loaded as a
   private module), same hook, same Output. Target: ours <= 2x the baseline per pair.
2. Stopping what QuickJS cannot interrupt: a call running ``Array.prototype.join.call({length:
   2**53-1}, "")`` with ``time_limit=1``: seconds until ``HookTimeoutError`` (target <= limit + 0.5 s),
   and the next call's latency (the replacement engine). The same statement at load time.
3. Fixed costs: ``hooks_from_js`` of a small source (a fork from the zygote, the prelude, the source)
   and one empty call.

    .venv/bin/python bench/js_hooks.py [--pairs N] [--repeats N] [--baseline COMMIT]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
import types
from pathlib import Path

from agentctx_widgets import Output, hooks_from_js
from agentctx_widgets.output import StandardAdapter
from agentctx_widgets.hooks import HookContext, HookLoadError, HookTimeoutError

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "f38c27d"  # the last commit with the in-process engine
README_PAIR_US = 28.0  # README's figure for the in-process engine, if git cannot give us its code

PAIRS = """function Create(ctx, messages) {
  const n = messages.length;
  for (let i = 0; i < n; i++) {
    ctx.Send({type: "text", props: {content: "x" + i}, id: "m", delta: true, delta_path: "content", delta_action: "append"});
    ctx.Flush();
  }
}"""
SENDS = PAIRS.replace("ctx.Flush();\n  }", "}\n  ctx.Flush();")


def load_baseline(commit: str):
    """``hooks_from_js`` of the in-process engine at ``commit`` (None when git cannot show it)."""
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], capture_output=True, text=True,
                              check=True).stdout

    try:
        engine_src = show("agentctx_widgets/hooks/js_engine.py")
        hooks_src = show("agentctx_widgets/hooks/js_hooks.py")
        prelude, discover = show("agentctx_widgets/hooks/js_prelude.js"), show("agentctx_widgets/hooks/js_discover.js")
    except (OSError, subprocess.CalledProcessError):
        return None
    package = "agentctx_widgets.hooks"
    engine = types.ModuleType(f"{package}._baseline_js_engine")
    engine.__package__ = package
    sys.modules[engine.__name__] = engine
    try:
        exec(compile(engine_src, "baseline/js_engine.py", "exec"), engine.__dict__)
    except Exception:  # noqa: BLE001
        return None
    hooks_src = hooks_src.replace("from .js_engine import JsEngine", "from ._baseline_js_engine import JsEngine")
    hooks_src = hooks_src.replace(
        '_PRELUDE = resources.files(__package__).joinpath("js_prelude.js").read_text(encoding="utf-8")',
        "_PRELUDE = __baseline_prelude__")
    hooks_src = hooks_src.replace(
        '_DISCOVER = resources.files(__package__).joinpath("js_discover.js").read_text(encoding="utf-8")',
        "_DISCOVER = __baseline_discover__")
    module = types.ModuleType(f"{package}._baseline_js_hooks")
    module.__package__ = package
    module.__dict__.update(__baseline_prelude__=prelude, __baseline_discover__=discover)
    sys.modules[module.__name__] = module
    try:
        exec(compile(hooks_src, "baseline/js_hooks.py", "exec"), module.__dict__)
        return module.hooks_from_js
    except Exception as error:  # noqa: BLE001 - the old code no longer fits today's package
        print(f"(the baseline at {commit} does not load: {error!r})", file=sys.stderr)
        return None


def per_pair(make_hooks, source: str, pairs: int, repeats: int, *, standard: bool = False) -> float:
    hooks = make_hooks(source, time_limit=120, wall_limit=300)
    best = float("inf")
    try:
        for _ in range(repeats):
            received: list[dict] = []
            output = Output([received.extend])
            if standard:
                output.add_sink(StandardAdapter(id="chatcmpl-bench", created=0))
            output.send({"type": "text", "props": {"content": ""}, "id": "m"})
            started = time.perf_counter()
            asyncio.run(hooks.call("Create", HookContext(output=output), [0] * pairs))
            best = min(best, time.perf_counter() - started)
            assert len(output.state["messages"]["m"]["props"]["content"]) > pairs
    finally:
        hooks.close()
    return best / pairs * 1e6


def stop_native_hang() -> tuple[float, float, float]:
    hooks = hooks_from_js('function Create(ctx, m) { if (m.length) Array.prototype.join.call({length: 2**53-1}, ""); '
                          'ctx.Send("ok"); }', time_limit=1.0, wall_limit=5.0)
    started = time.perf_counter()
    try:
        asyncio.run(hooks.call("Create", HookContext(output=Output()), [1]))
        raise AssertionError("the native hang returned")
    except HookTimeoutError:
        stopped = time.perf_counter() - started
    started = time.perf_counter()
    asyncio.run(hooks.call("Create", HookContext(output=Output()), []))
    next_call = time.perf_counter() - started
    hooks.close()
    started = time.perf_counter()
    try:
        hooks_from_js('Array.prototype.join.call({length: 2**53-1}, "");', time_limit=1.0, wall_limit=5.0)
        raise AssertionError("the native hang at load returned")
    except HookLoadError:
        at_load = time.perf_counter() - started
    return stopped, next_call, at_load


def fixed_costs(repeats: int) -> tuple[float, float]:
    loads, calls = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        hooks = hooks_from_js("function Create(ctx, m) { return {}; }")
        loads.append(time.perf_counter() - started)
        started = time.perf_counter()
        asyncio.run(hooks.call("Create", HookContext(output=Output()), []))
        calls.append(time.perf_counter() - started)
        hooks.close()
    return sorted(loads)[len(loads) // 2], sorted(calls)[len(calls) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", default=BASELINE, help="git commit of the in-process engine")
    args = parser.parse_args()
    hooks_from_js("function Create(ctx, m) {}").close()  # start the zygote outside the timings
    baseline = load_baseline(args.baseline)

    ours = per_pair(hooks_from_js, PAIRS, args.pairs, args.repeats)
    ours_sends = per_pair(hooks_from_js, SENDS, args.pairs, args.repeats)
    ours_standard = per_pair(hooks_from_js, PAIRS, args.pairs, args.repeats, standard=True)
    if baseline is not None:
        base = per_pair(baseline, PAIRS, args.pairs, args.repeats)
        base_sends = per_pair(baseline, SENDS, args.pairs, args.repeats)
        base_standard = per_pair(baseline, PAIRS, args.pairs, args.repeats, standard=True)
        source = f"in-process engine of {args.baseline}, same run"
    else:
        base, base_sends, base_standard = README_PAIR_US, float("nan"), float("nan")
        source = "README's figure (git could not show the old engine)"
    stopped, next_call, at_load = stop_native_hang()
    load, empty_call = fixed_costs(max(args.repeats, 5))

    print(f"JavaScript hooks, {args.pairs:,} sends per call, best of {args.repeats} (baseline: {source})")
    print("| measurement | worker process | in-process baseline | ratio |")
    print("|---|---|---|---|")
    print(f"| ctx.Send + ctx.Flush pair | {ours:.1f} µs | {base:.1f} µs | {ours / base:.2f}x |")
    print(f"| ctx.Send alone (one Flush at the end) | {ours_sends:.1f} µs | {base_sends:.1f} µs | "
          f"{ours_sends / base_sends:.2f}x |")
    print(f"| pair with a StandardAdapter sink | {ours_standard:.1f} µs | {base_standard:.1f} µs | "
          f"{ours_standard / base_standard:.2f}x |")
    print(f"| native hang in a call (time_limit 1 s) stopped after | {stopped:.2f} s | never | |")
    print(f"| ... the next call (a fresh engine) | {next_call * 1e3:.1f} ms | | |")
    print(f"| native hang at load (time_limit 1 s) stopped after | {at_load:.2f} s | never | |")
    print(f"| hooks_from_js of a small source (median) | {load * 1e3:.1f} ms | | |")
    print(f"| one empty call (median) | {empty_call * 1e3:.2f} ms | | |")
    target = "met" if ours <= 2 * base else "MISSED"
    print(f"\ntarget Send + Flush <= 2x the in-process engine: {target} ({ours / base:.2f}x)")


if __name__ == "__main__":
    main()
