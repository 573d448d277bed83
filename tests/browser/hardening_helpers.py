"""Helpers for the hardening browser tests: the hostile corpus, a page guard, heap figures, state equality.

Kept apart from harness.py (owned by the harness maintainer) so these tests can add what they need.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness import REPO

CORPUS_PATH = REPO / "tests" / "vectors" / "xss_payloads.json"
VIEW = ".agentctx-view"


def corpus() -> dict[str, Any]:
    return json.loads(CORPUS_PATH.read_text())


def env_int(name: str, default: int) -> int:
    """An integer knob from the environment (e.g. AGENTCTX_LOAD_DELTAS), ``default`` when unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    value = int(raw.replace("_", ""))
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


# A page-global trap installed before any page script runs: every way the corpus signals execution
# (setting window.__actx_pwned or calling __actx_pwn()) is recorded with a stack, so a failure says where.
PWN_TRAP = """
(() => {
  const hits = [];
  Object.defineProperty(window, '__actx_hits', {value: hits});
  let flag;
  Object.defineProperty(window, '__actx_pwned', {
    configurable: false,
    get() { return flag; },
    set(v) { flag = v; hits.push('set __actx_pwned=' + String(v) + ' at ' + (new Error().stack || '')); },
  });
  window.__actx_pwn = () => { window.__actx_pwned = 'called'; };
})();
"""


class PageGuard:
    """Records what a page did that hostile content could cause: requests, dialogs, console errors."""

    def __init__(self, page: Any, server_base_url: str) -> None:
        self.page = page
        self.origin = urlsplit(server_base_url)
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.console_errors: list[str] = []
        page.add_init_script(PWN_TRAP)
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("dialog", self._on_dialog)
        page.on("console", lambda msg: msg.type == "error" and self.console_errors.append(msg.text))
        page.on("pageerror", lambda error: self.console_errors.append(f"pageerror: {error}"))

    def _on_dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def foreign_requests(self) -> list[str]:
        """Requests to anything but the JupyterLab server itself (data:/blob: fetch nothing remote)."""
        bad = []
        for url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob"):
                continue
            if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname == self.origin.hostname \
                    and parts.port == self.origin.port:
                continue
            bad.append(url)
        return bad

    def leak_requests(self) -> list[str]:
        """Requests (even to the server) for what only the corpus names: leak.*, a bare ``x`` or ``1``, x.htc."""
        names = ("leak", "/x", "/1", "x.htc")
        return [url for url in self.requests
                if "leak" in url or any(urlsplit(url).path.endswith(name) for name in names[1:])]

    def pwned(self) -> list[str]:
        return self.page.evaluate("() => [...window.__actx_hits]")


# ------------------------------------------------------------------------------ JS heap via CDP

def js_heap_used(page: Any) -> int:
    """Used JS heap (bytes) after a full garbage collection, through the DevTools protocol."""
    session = page.context.new_cdp_session(page)
    try:
        session.send("HeapProfiler.enable")
        session.send("HeapProfiler.collectGarbage")
        session.send("HeapProfiler.collectGarbage")
        return int(session.send("Runtime.getHeapUsage")["usedSize"])
    finally:
        session.detach()


# ------------------------------------------------------------------------------ rendered state

OUTPUT_TEXTS = """(sel) => { const el = document.querySelector(sel); if (!el) return null;
  return Object.fromEntries([...el.querySelectorAll('.actx-out')].map(o => [o.dataset.outputId, o.textContent])); }"""

SEQS = "(sel) => [...document.querySelectorAll(sel)].map(el => el.dataset.seq === undefined ? null : Number(el.dataset.seq))"

CAUGHT_UP = """([sel, seq, count]) => { const els = document.querySelectorAll(sel);
  return els.length >= count && [...els].every(el => Number(el.dataset.seq) === seq); }"""


def rendered_outputs(lab: Any, index: int = 0) -> dict[str, str] | None:
    """Output id → rendered text of the ``index``-th view on the page."""
    return lab.page.evaluate(
        """([sel, i]) => { const el = document.querySelectorAll(sel)[i]; if (!el) return null;
        return Object.fromEntries([...el.querySelectorAll('.actx-out')].map(o => [o.dataset.outputId, o.textContent])); }""",
        [VIEW, index])


def write_text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
