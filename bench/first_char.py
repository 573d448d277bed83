"""Cell start → the reply's first character on screen, in a kernel whose first view it is.

A real JupyterLab (default settings, the prebuilt extension installed as ``make js`` links it) and
Debian's headless Chromium. Each sample is a fresh page and a fresh kernel: a notebook whose first
cell imports and builds a ``ScriptedModel`` (its reply streams in ``CHUNK``-character deltas, ``DELAY``
s apart, the first one ``DELAY`` s after the stream starts), then the measured cell

    t0 = time.time(); v = ContextView(ctx); display(v); run_turn(ctx, "hi", model=model, view=v)

The figure is the time of the animation frame that paints the reply's first delta, minus the kernel's
``t0`` (same machine, same clock). A MutationObserver sees the delta reach the text of the cell's output.
A change made inside a frame (a ``requestAnimationFrame`` callback, as ContextView draws) is painted at
the end of that frame, so it counts at the change; a change made outside one (a plain task, as the bare
baseline draws) waits for the next frame, so it counts at that frame's start. A frame loop tells the two
apart: a flag set at each frame's ``requestAnimationFrame`` and cleared by a ``MessageChannel`` task,
which runs after the frame has painted. (The rule before counted the next frame for both, one frame
too many for a view that draws inside one.) Then, in the same kernel, the warm figure: a second turn into the view
already drawn (``t0 = time.time(); run_turn(ctx, "again", model=model, view=v)``).

The baseline, measured the same way and interleaved with it (order alternating): a bare anywidget of a
few lines (it listens from ``initialize``, so it loses nothing sent before it rendered, and appends each
message's text to ``textContent``), displayed in the same place and fed the same deltas on the same clock
by a plain loop (no code of ours runs in its cell), one ``send`` per delta, no batching: the least
the job can cost. ``--no-prebuilt`` adds a ContextView row
with the prebuilt extension's copy of the front end removed from the page (the loader then decodes and
imports the bundle from the kernel's FrontEndBundle model, as in a JupyterLab without the extension).

Run: ``.venv/bin/python bench/first_char.py`` (``--samples N``, default 10; ``--no-prebuilt``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
sys.path.insert(0, str(REPO / "tests" / "browser"))

from harness import JupyterServer, Lab, launch_chromium, write_notebook  # noqa: E402

from agentctx_widgets.widget.bundle import bundle_files  # noqa: E402

KERNEL_DIGEST = bundle_files().digest

CHUNK = 4
DELAY = 0.03
# Written in pieces so the words never stand in a cell's source (the page watches for them).
COLD = ("Zep", "hyr")
WARM = ("Quo", "kka")

SETUP = f"""
import time, anywidget
from IPython.display import display
from agentctx_widgets import Context, ContextView, run_turn
from agentctx_widgets.models import ScriptedModel
COLD = {"+".join(repr(p) for p in COLD)}
WARM = {"+".join(repr(p) for p in WARM)}
REPLIES = [COLD + " quartz jumps over the lazy fox " * 3, WARM + " again: the lazy fox jumps " * 3]
model = ScriptedModel(REPLIES, chunk_size={CHUNK}, delay={DELAY})
ctx = Context()

class Bare(anywidget.AnyWidget):
    '''The least a widget can do: keep each message's text from initialize on, show it in textContent.'''
    _esm = '''
    const texts = new WeakMap();
    export default {{
      initialize({{ model }}) {{
        const state = {{ text: "", boxes: new Set() }};
        texts.set(model.widget_manager, state);
        model.on("msg:custom", (msg) => {{
          state.text += msg.text;
          for (const box of state.boxes) box.textContent = state.text;
        }});
      }},
      render({{ model, el }}) {{
        const state = texts.get(model.widget_manager);
        const box = document.createElement("div");
        box.className = "bare-first-char";
        box.textContent = state.text;
        el.append(box);
        state.boxes.add(box);
        return () => state.boxes.delete(box);
      }},
    }};
    '''

def feed(widget, text):
    '''The same deltas on the same clock as the ScriptedModel, with none of our code: a plain loop.'''
    for start in range(0, len(text), {CHUNK}):
        time.sleep({DELAY})
        widget.send({{"text": text[start:start + {CHUNK}]}})
"""

CELLS = {
    "view": ("t0 = time.time(); v = ContextView(ctx); display(v); run_turn(ctx, 'hi', model=model, view=v)",
             "t0 = time.time(); run_turn(ctx, 'again', model=model, view=v)"),
    "bare": ("t0 = time.time(); b = Bare(); display(b); feed(b, REPLIES[0])",
             "t0 = time.time(); feed(b, REPLIES[1])"),
}

# Armed before a measured cell runs: the time of the frame that paints `word` in the text of one of the
# notebook's output areas (see the module docstring for the rule).
ARM = """(word) => {
  window.__firstChar = null;
  const notebook = window.jupyterapp.shell.currentWidget.content.node;
  const shown = () => [...notebook.querySelectorAll('.jp-OutputArea')].some((o) => o.textContent.includes(word));
  if (shown()) { window.__firstChar = -1; return; }
  let inFrame = false, done = false;
  const after = new MessageChannel();
  after.port1.onmessage = () => { inFrame = false; };
  const frame = () => {
    if (done) return;
    inFrame = true;
    after.port2.postMessage(0);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  const mo = new MutationObserver(() => {
    if (!shown()) return;
    mo.disconnect();
    done = true;
    if (inFrame) { window.__firstChar = Date.now(); return; }
    requestAnimationFrame(() => { window.__firstChar = Date.now(); });
  });
  mo.observe(notebook, { subtree: true, childList: true, characterData: true });
}"""

PREBUILT = "() => { const p = globalThis[Symbol.for('agentctx-widgets.prebuilt')]; return p ? p.digest : null; }"


def first_delta(parts: tuple[str, str]) -> str:
    """The reply's first delta (CHUNK characters): what must be on screen."""
    return "".join(parts)[:CHUNK]


def timed_cell(lab: Lab, index: int, target: str) -> float:
    """Run cell ``index`` with the observer armed for ``target``; ms from the kernel's t0 to the frame."""
    lab.page.evaluate(ARM, target)
    lab.run_cell(index)
    shown = lab.wait_for("() => window.__firstChar", timeout=120)
    if shown < 0:
        raise RuntimeError(f"{target!r} was on the page before cell {index} ran")
    t0 = lab.kernel_json("t0")
    return shown - t0 * 1000


def sample(server: JupyterServer, browser: Any, kind: str, n: int, *, prebuilt: bool) -> dict[str, Any]:
    """One fresh page and fresh kernel: the cold cell, then the warm one."""
    name = f"first_{kind}_{n}_{'p' if prebuilt else 'd'}.ipynb"
    cold, warm = CELLS[kind]
    write_notebook(server.root, name, [SETUP, cold, warm])
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        lab = Lab(server, context.new_page())
        lab.open(name)
        digest = lab.page.evaluate(PREBUILT)
        if prebuilt and kind == "view" and digest != KERNEL_DIGEST:
            raise SystemExit(f"the page's prebuilt front end ({digest}) is not the kernel's bundle ({KERNEL_DIGEST}): "
                             "the figure would be the decoded path's; run `make js` first")
        if not prebuilt:
            lab.page.evaluate("() => { delete globalThis[Symbol.for('agentctx-widgets.prebuilt')]; }")
        lab.run_cell(0)
        result = {"cold": timed_cell(lab, 1, first_delta(COLD)), "warm": timed_cell(lab, 2, first_delta(WARM)),
                  "prebuilt_digest": digest}
        errors = [line for line in lab.console if "error" in line.lower() and "agentctx" in line.lower()]
        if errors:
            result["console"] = errors[:5]
        return result
    finally:
        context.close()
        server.shutdown_kernels()


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1],
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]}


def cell(st: dict[str, float]) -> str:
    return f"**{st['median']:.0f} ms** (min {st['min']:.0f}, p90 {st['p90']:.0f}, max {st['max']:.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10, help="fresh kernels per side")
    parser.add_argument("--no-prebuilt", action="store_true",
                        help="also measure ContextView with the prebuilt extension's front end removed from the page")
    args = parser.parse_args()
    started = time.time()
    load_before = os.getloadavg()
    modes = [("view", True), ("bare", True)] + ([("view", False)] if args.no_prebuilt else [])
    samples: dict[str, list[dict]] = {f"{k}{'' if p else '-decoded'}": [] for k, p in modes}
    from playwright.sync_api import sync_playwright

    server = JupyterServer().start()
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                # one untimed round: the server's and the browser's caches, as after a first use
                sample(server, browser, "view", 0, prebuilt=True)
                sample(server, browser, "bare", 0, prebuilt=True)
                for n in range(1, args.samples + 1):
                    order = modes if n % 2 else modes[::-1]
                    for kind, prebuilt in order:
                        key = f"{kind}{'' if prebuilt else '-decoded'}"
                        got = sample(server, browser, kind, n, prebuilt=prebuilt)
                        samples[key].append(got)
                        print(f"[first_char] {key} #{n}: cold {got['cold']:.0f} ms, warm {got['warm']:.0f} ms"
                              + (f"  console: {got['console']}" if "console" in got else ""),
                              file=sys.stderr, flush=True)
            finally:
                browser.close()
    finally:
        server.stop()
    load_after = os.getloadavg()
    labels = {
        "view": "ContextView (`v = ContextView(ctx); display(v); run_turn(..., view=v)`)",
        "bare": "baseline: a bare anywidget, `display(b)`, one `send` per delta",
        "view-decoded": "ContextView without the prebuilt extension's code (bundle decoded from the kernel)",
    }
    table = {key: {"cold": stats([s["cold"] for s in got]), "warm": stats([s["warm"] for s in got])}
             for key, got in samples.items()}
    lines = [f"| cell start → first reply character on screen ({args.samples} fresh kernels each) "
             "| first view in the kernel | view already drawn (warm) |", "|---|---|---|"]
    lines += [f"| {labels[key]} | {cell(t['cold'])} | {cell(t['warm'])} |" for key, t in table.items()]
    print("\n".join(lines))
    if "view" in table and "bare" in table:
        print(f"\nContextView − baseline at the median: cold {table['view']['cold']['median'] - table['bare']['cold']['median']:+.0f} ms, "
              f"warm {table['view']['warm']['median'] - table['bare']['warm']['median']:+.0f} ms; target cold median ≤ 150 ms "
              + ("✓" if table["view"]["cold"]["median"] <= 150 else "✗"))
    print(f"(ScriptedModel: {CHUNK}-character deltas {DELAY * 1000:.0f} ms apart, the first after {DELAY * 1000:.0f} ms; "
          f"bench took {time.time() - started:.0f} s; {os.cpu_count()} CPUs; load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "first_char.json").write_text(json.dumps(
        {"table": table, "samples": samples, "chunk": CHUNK, "delay": DELAY, "load": [load_before, load_after],
         "at": time.time()}, indent=1))


if __name__ == "__main__":
    main()
