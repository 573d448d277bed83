"""marimo stream benchmark: what a ContextView stream costs on marimo's websocket, by stream size.

A real ``marimo edit`` server runs tests/fixtures/marimo_stream.py; for each size a fresh server and page
streams that many 6-character deltas, paced (a 1 ms pause every ``--pace`` deltas, so a
stream's duration grows with its size, as a model's does), and waits until the view shows the whole text
and the settled ``_snapshot`` trait arrived. Every frame the page receives is counted and attributed
(tests/browser/marimo_harness.py ``WidgetTraffic.account``). The figure that matters is the view's bytes
per delta: flat when traffic is linear, growing with the stream when the whole transcript is re-sent
periodically (issue #14). ``--pythonpath`` points the app at another checkout of agentctx_widgets, so the
same page and counting measure a baseline (e.g. ``git archive <commit>`` of the code before a change).

Run: ``.venv/bin/python bench/marimo_stream.py`` (``--counts 1000 10000 --pace 2``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

from harness import launch_chromium  # noqa: E402
from marimo_harness import MarimoServer, stream_and_settle  # noqa: E402

APP = REPO / "tests" / "fixtures" / "marimo_stream.py"
PIECE = 6
"""Characters per delta in the app (5 base-36 digits and a space)."""


def measure(browser, server: MarimoServer, deltas: int, pace: int) -> dict[str, int]:
    run = stream_and_settle(browser, server, deltas=deltas, pace=pace, length=deltas * PIECE - 1)
    try:
        text = run.snapshot["outputs"]["messages"]["m"]["props"]["content"]
        if len(text) != deltas * PIECE:
            raise AssertionError(f"the settled snapshot holds {len(text)} characters, not {deltas * PIECE}")
        account = run.traffic.account()
    finally:
        run.context.close()
    view = sum(account[f"{key}_bytes"] for key in ("batch", "snapshot_reply", "snapshot_trait", "other_view"))
    return {"deltas": deltas, "chars": len(text), "view_bytes": view, **account}


def table(rows: list[dict[str, int]]) -> str:
    lines = [
        "| deltas | text chars | batch frames | batch KB | `_snapshot` updates | `_snapshot` KB | view KB "
        "| view bytes/delta | page websocket KB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['deltas']:,} | {row['chars']:,} | {row['batch_frames']:,} | {row['batch_bytes'] / 1e3:,.1f} "
            f"| {row['snapshot_trait_frames']} | {row['snapshot_trait_bytes'] / 1e3:,.1f} "
            f"| {row['view_bytes'] / 1e3:,.1f} | {row['view_bytes'] / row['deltas']:,.1f} "
            f"| {row['total_bytes'] / 1e3:,.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--pace", type=int, default=2, help="a 1 ms pause after every PACE deltas (0: none)")
    parser.add_argument("--pythonpath", type=Path, default=REPO,
                        help="the checkout whose agentctx_widgets the app imports (default: this one)")
    args = parser.parse_args(argv)
    if not (args.pythonpath / "agentctx_widgets" / "static" / "widget.js").exists():
        parser.error(f"{args.pythonpath}/agentctx_widgets/static/widget.js is missing (build it, or copy static/)")

    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for count in args.counts:
                # one server per size: a second page on a `marimo edit` notebook joins its session
                # (no rerun with the new query parameters)
                server = MarimoServer(APP, pythonpath=args.pythonpath).start()
                try:
                    rows.append(measure(browser, server, count, args.pace))
                finally:
                    server.stop()
        finally:
            browser.close()
    print(f"marimo edit, agentctx_widgets from {args.pythonpath}, a 1 ms pause every {args.pace} deltas\n")
    print(table(rows))
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        growth = (last["view_bytes"] / last["deltas"]) / (first["view_bytes"] / first["deltas"])
        print(f"\nview bytes per delta, {last['deltas']:,} vs {first['deltas']:,} deltas: {growth:.2f}x "
              "(about 1 when traffic is linear in the stream)")


if __name__ == "__main__":
    main()
