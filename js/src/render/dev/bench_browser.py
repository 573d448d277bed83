"""Run the renderer benchmark (bench-entry.js) in headless Chromium and print its numbers.

Usage: `cd js && node build.mjs --entry src/render/dev/bench-entry.js --outdir /tmp/actx-bench &&
../.venv/bin/python src/render/dev/bench_browser.py /tmp/actx-bench`. Uses Debian's Chromium.
"""
import pathlib
import sys

from playwright.sync_api import sync_playwright

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/actx-bench")
(out / "index.html").write_text(
    '<!doctype html><meta charset="utf-8"><link rel="stylesheet" href="widget.css">'
    '<div id="app"></div><script type="module" src="widget.js"></script>'
)
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--allow-file-access-from-files"])
    page = browser.new_page()
    page.on("console", lambda msg: print("console:", msg.text, file=sys.stderr))
    page.on("pageerror", lambda err: print("pageerror:", err, file=sys.stderr))
    query = sys.argv[2] if len(sys.argv) > 2 else ""
    page.goto((out / "index.html").as_uri() + query, wait_until="commit")
    page.wait_for_selector("#result", state="attached", timeout=300_000)
    print(page.inner_text("#result"))
    browser.close()
