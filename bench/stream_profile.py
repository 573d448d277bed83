"""Where the page's CPU goes during the ContextView burst (bench/stream.py's first row), per source file.

Why: with a page attached the kernel's send loop runs ~1.5x slower (the 2 cores are shared), so the
page's own work per batch is part of the whole path. This runs the same 100,000-delta burst into a
ContextView in real JupyterLab + Chromium with an unminified build of the front end, and reports:
- Chromium's own counters over the burst (CDP ``Performance.getMetrics``: script, layout, style
  recalculation, all tasks), and
- a V8 CPU profile (CDP ``Profiler``) of the same burst, each sample charged to the source file of the
  innermost bundle frame on its stack (esbuild's ``// src/...`` headers map bundle lines to files).

Run: ``.venv/bin/python bench/stream_profile.py [--count N]`` (builds to a temporary directory; the
shared static/ bundle is not touched).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

from harness import lab_session, write_notebook  # noqa: E402
from hardening_helpers import PIECE_SOURCE  # noqa: E402

METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")

SETUP = r'''
import pathlib, time
import agentctx_widgets.widget.bundle as _bundle
_bundle.STATIC = pathlib.Path({static!r})   # the unminified build, read once by this kernel
from agentctx_widgets import ContextView, Output
''' + PIECE_SOURCE + r'''
def burst(sink, msg_id, count):
    out = Output(sinks=[sink])
    out.send({{"id": msg_id, "type": "text", "props": {{"content": ""}}}})
    out.flush()
    t0 = time.time() * 1000
    for i in range(count):
        out.send({{"id": msg_id, "type": "text", "props": {{"content": piece(i)}}, "delta": True,
                  "delta_path": "content", "delta_action": "append"}})
        out.flush()
    out.send({{"id": msg_id, "type": "text", "props": {{}}, "done": True}})
    out.flush()
    return time.time() * 1000 - t0
'''

WAIT_END = """([token, length]) => {
  const el = document.querySelector('.agentctx-view .actx-out[data-output-id=b]');
  const text = el ? el.textContent.trimEnd() : '';
  return text.length >= length && text.endsWith(token);
}"""


def token(i: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    s = ""
    for _ in range(4):
        i, r = divmod(i, 36)
        s = digits[r] + s
    return s


def build_unminified(outdir: Path) -> str:
    """Build the front end unminified into ``outdir``; return widget.js's text."""
    subprocess.run(["node", "build.mjs", "--no-minify", "--outdir", str(outdir)], cwd=REPO / "js", check=True,
                   capture_output=True)
    return (outdir / "widget.js").read_text()


def line_files(bundle: str) -> list[tuple[int, str]]:
    """(first line, source file) for each esbuild ``// path`` section header of the bundle (0-based lines)."""
    sections = []
    for number, line in enumerate(bundle.splitlines()):
        match = re.match(r"^// ((?:src|node_modules)/\S+)$", line)
        if match:
            sections.append((number, match.group(1)))
    return sections


def file_of(sections: list[tuple[int, str]], line: int) -> str:
    found = "bundle"
    for start, name in sections:
        if start > line:
            break
        found = name
    if found.startswith("node_modules/"):
        return found.split("/")[1]  # the package
    return found


def charge(profile: dict, sections: list[tuple[int, str]], bundle_lines: int) -> dict[str, float]:
    """Milliseconds per bucket: the innermost bundle frame's file, else the profiler's own node names."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}

    def in_bundle(frame: dict) -> bool:
        # the loader imports the bundle from a blob: URL; its line count tells it from JupyterLab's scripts
        return frame["url"].startswith("blob:") and frame["lineNumber"] < bundle_lines

    cache: dict[int, str] = {}

    def bucket(node_id: int) -> str:
        if node_id in cache:
            return cache[node_id]
        frame = nodes[node_id]["callFrame"]
        name = frame["functionName"]
        if name in ("(idle)", "(program)", "(garbage collector)", "(root)"):
            result = name
        else:
            result = ""
            walk: int | None = node_id
            while walk is not None:
                f = nodes[walk]["callFrame"]
                if in_bundle(f):
                    result = file_of(sections, f["lineNumber"])
                    if walk != node_id:
                        result += " (native calls)"
                    break
                walk = parent.get(walk)
            if not result:
                result = "JupyterLab and other page code"
        cache[node_id] = result
        return result

    totals: dict[str, float] = defaultdict(float)
    samples, deltas = profile["samples"], profile["timeDeltas"]
    for i, node_id in enumerate(samples):
        dt = deltas[i + 1] if i + 1 < len(deltas) else 0
        totals[bucket(node_id)] += dt / 1000.0
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    args = parser.parse_args()
    static = Path(tempfile.mkdtemp(prefix="actx-prof-static-"))
    bundle = build_unminified(static)
    sections = line_files(bundle)
    with lab_session() as lab:
        write_notebook(lab.server.root, "prof.ipynb", [SETUP.format(static=str(static)), "view = ContextView(title='burst'); view"])
        lab.open("prof.ipynb")
        lab.run_all()
        lab.wait_for("() => document.querySelectorAll('.agentctx-view').length === 1")
        cdp = lab.page.context.new_cdp_session(lab.page)
        cdp.send("Performance.enable")
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        before = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        cdp.send("Profiler.start")
        loop_ms = float(lab.execute(f"print(burst(view, 'b', {args.count}))").strip().splitlines()[-1])
        lab.wait_for(WAIT_END, [token(args.count - 1), 5 * args.count - 1], timeout=120)
        profile = cdp.send("Profiler.stop")["profile"]
        after = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    wall = (profile["endTime"] - profile["startTime"]) / 1000.0
    print(f"kernel send loop {loop_ms:.0f} ms; profile spans {wall:.0f} ms (burst + the page's catch-up + the wait)")
    print("\n| Chromium counter over the burst | ms |\n|---|---|")
    for name in METRICS:
        print(f"| {name} | {1000 * (after[name] - before[name]):.0f} |")
    totals = charge(profile, sections, bundle.count("\n") + 1)
    print("\n| CPU profile bucket (innermost bundle file on the stack) | ms |\n|---|---|")
    for name, ms in sorted(totals.items(), key=lambda kv: -kv[1]):
        if ms >= 0.5 and name != "(idle)":
            print(f"| {name} | {ms:.1f} |")
    print(f"| (idle) | {totals.get('(idle)', 0.0):.0f} |")


if __name__ == "__main__":
    main()
