"""Front-end benchmark: ContextView's page side in a real JupyterLab and headless Chromium.

Prints a markdown table with the targets (issue #14) beside the figures:
- a 10,000-message context: time from the view's render() (the renderer's User Timing mark) to its
  first screen (the frame after the first messages are in the DOM), for the first view on the page
  (cold: parser and sanitizer not yet warm) and the median of later ones (target <= 100 ms);
- the longest main-thread task (PerformanceObserver "longtask", only tasks >= 50 ms are reported)
  while loading every one of those messages (the view's body scrolled to the top every frame, so pages
  load back to back) and then scrolling back down through all of them, four screens a frame; and
  whether every message entered the DOM on the way (target: no task over 50 ms);
- the same during a 100,000-delta burst (5 characters each, one text message, Output.send + flush);
- the JS heap (V8, after a forced GC, through the DevTools protocol) and DOM nodes per 1,000 messages:
  at the first screen, and after scrolling through all of them.

Run: ``.venv/bin/python bench/frontend.py`` (``--messages N``, ``--count N`` change the sizes).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "bench"))

from harness import Lab, lab_session, write_notebook  # noqa: E402
from stream import LONGTASKS, SETUP, WATCH, note, start_cell, token, wait_key  # noqa: E402

RESULTS = REPO / "bench" / "results"
RENDER_MARK = "agentctx-widgets:render"  # js/src/render/index.js RENDER_MARK

# A context like a real conversation: Markdown in every message, a code block now and then.
MAKE_CONTEXT = r'''
def _text(i):
    body = f"Message {i}: some **bold** words, `inline code` and a [link](https://example.com/{i}).\n\n"
    body += "- a point\n- another point\n\n" if i % 3 == 0 else "lorem ipsum dolor sit amet " * 3
    if i % 10 == 0:
        body += "\n\n```python\ndef f(x):\n    return x + %d\n```\n" % i
    return body
big = Context([{"type": 2 + (i % 2), "content": [{"type": "text", "text": _text(i)}]} for i in range({n})], name="big")
'''

# Page side: note when the newest view's first message is in the DOM, then the frame after (on screen).
FIRST_SCREEN = """(key) => {
  window.__bench = window.__bench || {};
  const old = new Set(document.querySelectorAll('.agentctx-view'));
  const seen = () => [...document.querySelectorAll('.agentctx-view')].some((v) => !old.has(v) && v.querySelector('.actx-msg'));
  const mo = new MutationObserver(() => {
    if (!seen()) return;
    mo.disconnect();
    const dom = performance.now();
    requestAnimationFrame(() => { window.__bench[key] = {dom, screen: performance.now(),
      mark: performance.getEntriesByName('""" + RENDER_MARK + """').at(-1)?.startTime ?? null}; });
  });
  mo.observe(document.body, {childList: true, subtree: true});
}"""

# Page side, in the newest view's body. Phase "up": jump to the top every frame, so the view loads
# page after page as fast as it can, until the oldest message is in the DOM (every message reached).
# Phase "down": then scroll back to the end, four screens per frame, through all of them. Each phase
# stops after 120 s whatever happens. Every message that entered the DOM on the way is counted.
SCROLL_ALL = """async (count) => {
  const view = [...document.querySelectorAll('.agentctx-view')].at(-1);
  const body = view.querySelector('[data-testid=actx-body]');
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const now = () => performance.now() + performance.timeOrigin;
  const oldest = () => view.querySelector('.actx-msg[data-index="0"], [data-anchor-index="0"]');
  const seen = new Set();
  const note = (el) => { if (el.dataset) seen.add(el.dataset.index ?? el.dataset.anchorIndex); };
  const list = view.querySelector('[data-testid=actx-context]');
  list.querySelectorAll('[data-index], [data-anchor-index]').forEach(note);
  const mo = new MutationObserver((records) => { for (const r of records) r.addedNodes.forEach(note); });
  mo.observe(list, {childList: true});
  const up = {start: now(), frames: 0};
  while (now() - up.start < 120000 && !(oldest() && body.scrollTop === 0)) {
    body.scrollTop = 0;
    await frame();
    up.frames += 1;
  }
  up.end = now();
  const down = {start: now(), frames: 0};
  const newest = () => view.querySelector(`.actx-msg[data-index="${count - 1}"], [data-anchor-index="${count - 1}"]`);
  while (now() - down.start < 120000 && !(newest() && body.scrollTop + body.clientHeight >= body.scrollHeight - 1)) {
    body.scrollTop += 4 * body.clientHeight;
    await frame();
    down.frames += 1;
  }
  down.end = now();
  mo.disconnect();
  seen.delete(undefined);
  const atEnd = !!newest();
  return {up, down, distinct: seen.size, atEnd, rendered: list.querySelectorAll('[data-index], [data-anchor-index]').length};
}"""


def cdp_figures(page: Any) -> dict[str, int]:
    """Used JS heap (bytes, after two full GCs) and the DOM node count, through the DevTools protocol."""
    session = page.context.new_cdp_session(page)
    try:
        session.send("HeapProfiler.enable")
        session.send("HeapProfiler.collectGarbage")
        session.send("HeapProfiler.collectGarbage")
        heap = int(session.send("Runtime.getHeapUsage")["usedSize"])
        session.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in session.send("Performance.getMetrics")["metrics"]}
        return {"heap": heap, "nodes": int(metrics.get("Nodes", 0))}
    finally:
        session.detach()


def long_tasks(lab: Lab, start: float, end: float) -> list[float]:
    """Durations (ms, longest first) of the long tasks overlapping [start, end] (epoch ms)."""
    tasks = lab.page.evaluate("() => window.__longtasks") or []
    return sorted((d for s, d in tasks if s + d >= start and s <= end), reverse=True)


def longest_between(lab: Lab, start: float, end: float) -> float:
    """Longest long task (ms) overlapping [start, end] (epoch ms); 0 when none reached 50 ms."""
    return max(long_tasks(lab, start, end), default=0.0)


def tasks_note(durations: list[float]) -> str:
    if not durations:
        return ""
    return f"{len(durations)} long task(s): {', '.join(f'{d:.0f}' for d in durations[:5])} ms; "


def show_view(lab: Lab, number: int, key: str) -> dict[str, float]:
    """Display a new ContextView of `big` (kernel name v<number>); its first-screen times (ms)."""
    lab.page.evaluate(FIRST_SCREEN, key)
    start_cell(lab, f"v{number} = ContextView(big); display(v{number})")
    if wait_key(lab, key, 120) is None:
        state = lab.page.evaluate("() => [...document.querySelectorAll('.agentctx-view')].map((v) =>"
                                  " [v.dataset.seq, v.querySelectorAll('.actx-msg').length])")
        raise RuntimeError(f"view {number} never showed a message: views (seq, messages) {state};"
                           f" console {lab.console[-5:]}; screenshot {lab.screenshot('frontend_' + key)}")
    times = lab.page.evaluate("(k) => window.__bench[k]", key)
    if times["mark"] is None:
        raise RuntimeError(f"no {RENDER_MARK} mark: is the bundle current (cd js && npm run build)?")
    return {"dom": times["dom"] - times["mark"], "screen": times["screen"] - times["mark"]}


def fmt_ms(value: float) -> str:
    return f"{value:,.0f} ms"


def check(ok: bool) -> str:
    return "✓" if ok else "✗"


def run(messages: int, count: int, warm_runs: int) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    with lab_session(timeout=180) as lab:
        write_notebook(lab.server.root, "frontend.ipynb", [SETUP, MAKE_CONTEXT.replace("{n}", str(messages))])
        lab.open("frontend.ipynb")
        lab.page.evaluate(LONGTASKS)
        lab.run_all()
        per = messages / 1000

        # 1. first screen, cold (the first view on the page), with the heap around it
        note(f"{messages:,}-message context: first view")
        before = cdp_figures(lab.page)
        cold = show_view(lab, 1, "v1")
        lab.wait_for("() => document.querySelector('.agentctx-view').dataset.seq !== undefined")
        first = cdp_figures(lab.page)
        rendered_first = lab.page.evaluate("() => document.querySelectorAll('.agentctx-view .actx-msg').length")

        # 2. scroll through every message
        note("scrolling to the oldest message")
        scroll = lab.page.evaluate(SCROLL_ALL, messages)
        up, down = scroll["up"], scroll["down"]
        up_tasks, down_tasks = long_tasks(lab, up["start"], up["end"]), long_tasks(lab, down["start"], down["end"])
        up_longest, down_longest = max(up_tasks, default=0.0), max(down_tasks, default=0.0)
        full = cdp_figures(lab.page)
        lab.execute("v1.close()")

        # 3. first screen, warm (later views on the same page)
        warm = []
        for n in range(2, 2 + warm_runs):
            note(f"first screen, warm run {n - 1}")
            warm.append(show_view(lab, n, f"v{n}"))
            lab.execute(f"v{n}.close()")
        warm_dom = statistics.median(w["dom"] for w in warm)
        warm_screen = statistics.median(w["screen"] for w in warm)

        # 4. a 100,000-delta burst into a fresh view
        note(f"burst of {count:,} deltas")
        start_cell(lab, "view = ContextView(title='burst'); display(view)")
        lab.wait_for("() => [...document.querySelectorAll('.agentctx-view')].some((v) => v.dataset.seq !== undefined"
                     " && v.querySelector('[data-testid=actx-header-name]').textContent === 'burst')")
        selector = ".agentctx-view .actx-out[data-output-id=b]"
        lab.page.evaluate(WATCH, [selector, token(count - 1), 5 * count - 1, "burst"])
        lab.execute(f"results['burst'] = burst(view, 'b', {count})")
        done = wait_key(lab, "burst", 300)
        t0, _ = lab.kernel_json("results['burst']")
        burst_longest = None if done is None else longest_between(lab, t0, done + 500)
        shown = lab.page.evaluate("(sel) => document.querySelector(sel).textContent", selector)
        exact = shown.strip() == lab.kernel_json("''.join(piece(i) for i in range(%d))" % count).strip()

    rows.append((f"{messages:,}-message context: render() → first screen, first view on the page",
                 fmt_ms(cold["screen"]), f"DOM ready at {fmt_ms(cold['dom'])}; {rendered_first} messages in the DOM;"
                 f" target ≤ 100 ms {check(cold['screen'] <= 100)}"))
    rows.append((f"… later views (median of {warm_runs})", fmt_ms(warm_screen),
                 f"DOM ready at {fmt_ms(warm_dom)}; target ≤ 100 ms {check(warm_screen <= 100)}"))
    reached = scroll["distinct"] == messages and scroll["atEnd"]
    rows.append((f"longest main-thread task loading all {messages:,} messages (scrolled to the top every frame)",
                 fmt_ms(up_longest) if up_longest else "none ≥ 50 ms",
                 f"{tasks_note(up_tasks)}{up['frames']} frames, {(up['end'] - up['start']) / 1000:.1f} s; {scroll['distinct']:,} of"
                 f" {messages:,} messages reached; target ≤ 50 ms {check(up_longest <= 50 and reached)}"))
    rows.append(("… then scrolling back down through all of them, 4 screens a frame",
                 fmt_ms(down_longest) if down_longest else "none ≥ 50 ms",
                 f"{tasks_note(down_tasks)}{down['frames']} frames, {(down['end'] - down['start']) / 1000:.1f} s;"
                 f" back at the newest: {scroll['atEnd']};"
                 f" {scroll['rendered']} messages in the DOM at the end; target ≤ 50 ms {check(down_longest <= 50)}"))
    rows.append((f"longest main-thread task during a {count:,}-delta burst",
                 "n/a (never finished)" if burst_longest is None else
                 (fmt_ms(burst_longest) if burst_longest else "none ≥ 50 ms"),
                 f"final text equals the kernel's: {exact}; target ≤ 50 ms "
                 f"{check(burst_longest is not None and burst_longest <= 50 and exact)}"))
    rows.append(("JS heap per 1,000 messages, first screen (state + one page rendered)",
                 f"{(first['heap'] - before['heap']) / per / 1e6:.2f} MB",
                 f"{(first['nodes'] - before['nodes']) / per:,.0f} DOM nodes per 1,000"))
    rows.append((f"JS heap per 1,000 messages, after scrolling through all {messages:,}",
                 f"{(full['heap'] - before['heap']) / per / 1e6:.2f} MB",
                 f"{(full['nodes'] - before['nodes']) / per:,.0f} DOM nodes per 1,000 (the view renders a window of ≤ 240;"
                 " DOM nodes live outside the JS heap)"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000, help="messages in the context")
    parser.add_argument("--count", type=int, default=100_000, help="deltas in the burst")
    parser.add_argument("--warm-runs", type=int, default=3, help="later views timed for the warm first screen")
    args = parser.parse_args()
    # a `timeout` or Ctrl-C still stops the server and the browser (the finally blocks)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.time()
    rows = run(args.messages, args.count, args.warm_runs)
    lines = ["| measurement | result | notes / target |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    print("\n".join(lines))
    print(f"\n(bench took {time.time() - started:.0f} s)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "frontend.json").write_text(json.dumps({"rows": rows, "at": time.time()}, indent=1))


if __name__ == "__main__":
    main()
