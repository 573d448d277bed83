"""Load benchmark: one million deltas over 1,000 output messages through one ContextView, and reloads.

Runs in a real JupyterLab with headless Chromium (the harness of tests/browser) and prints figures:
kernel time and peak RSS growth (a thread sampling psutil every 5 ms), whether anything was lost
(the page's final text of every message against the kernel's), and the page's JS heap after a forced
GC at the start, with everything rendered, after ``view.clear_output()`` and after ``view.close()``.
Then ``--reloads`` page reloads during one paced stream, each checked against the kernel's state.

Run: ``.venv/bin/python bench/load.py`` (``--deltas``, ``--messages``, ``--reloads`` change the sizes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

from hardening_helpers import run_load_in_browser, run_reloads  # noqa: E402
from harness import JupyterServer, Lab, launch_chromium  # noqa: E402

MB = 1024 * 1024


def new_lab(server: JupyterServer, browser) -> tuple[Lab, object]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(900_000)
    return Lab(server, page), context


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=1_000_000)
    parser.add_argument("--messages", type=int, default=1_000)
    parser.add_argument("--reloads", type=int, default=10)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    server = JupyterServer().start()
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            lab, context = new_lab(server, browser)
            started = time.perf_counter()
            figures = run_load_in_browser(lab, args.deltas, args.messages, timeout=1800)
            wall = time.perf_counter() - started
            lost = [k for k, v in figures["expected"].items() if figures["rendered"].get(k) != v]
            context.close()
            server.shutdown_kernels()
            print(f"## load: {args.deltas:,} deltas over {args.messages:,} output messages, one view")
            print("| figure | value |\n|---|---|")
            print(f"| kernel send loop | {figures['seconds']:.1f} s ({args.deltas / figures['seconds']:,.0f} deltas/s) |")
            print(f"| end to end (open notebook → all rendered → cleared → closed) | {wall:.1f} s |")
            print(f"| comm batches (seq) | {figures['seq']:,} |")
            print(f"| kernel peak RSS growth | {figures['rss_growth'] / MB:.1f} MB (text itself: {figures['text_bytes'] / MB:.1f} MB) |")
            print(f"| messages whose page text differs from the kernel's | {len(lost)} of {len(figures['expected'])} |")
            print("| JS heap after GC: start / all rendered / cleared / after one more change / closed | "
                  + " / ".join(f"{figures[k] / MB:.1f}" for k in
                               ("heap_start", "heap_full", "heap_cleared", "heap_after_next_change", "heap_closed"))
                  + " MB |")
            print(f"| kernel websockets opened (1 = no reconnect) | {figures['kernel_websockets_opened']} |")

            lab, context = new_lab(server, browser)
            results = run_reloads(lab, args.reloads)
            context.close()
            server.shutdown_kernels()
            same = sum(1 for r in results if r["equal"])
            print(f"\n## {args.reloads} page reloads during one stream")
            print(f"{same} of {len(results)} reloads: the page's final view equals the kernel's state")
            for r in results:
                print(f"- reload {r['round'] + 1}: mid-stream={r['mid_stream']}, chars={r['chars']:,}, equal={r['equal']}")
            browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
