"""Helpers for the hardening browser tests: the hostile corpus, a page guard, heap figures, state equality.

Kept apart from harness.py (owned by the harness maintainer) so these tests can add what they need.
"""

from __future__ import annotations

import json
import os
import time
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


# ------------------------------------------------------------------------------ load (kernel side)

# Kernel source of ``piece(i)``, the 5-character delta text the load tests and bench/stream.py send.
PIECE_SOURCE = r'''
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
def piece(i):
    """5 characters: 4 base-36 digits of i and a space (unique for i < 36**4 = 1,679,616)."""
    s = ""
    for _ in range(4):
        i, r = divmod(i, 36)
        s = _DIGITS[r] + s
    return s + " "
'''

LOAD_SETUP = r'''
import gc, resource, threading, time
import psutil
from agentctx_widgets import ContextView, Output
''' + PIECE_SOURCE + r'''

def delta(k, text):
    return {"id": f"m{k}", "type": "text", "props": {"content": text}, "delta": True,
            "delta_path": "content", "delta_action": "append"}

class PeakRss:
    """Samples this process's RSS every 5 ms in a thread: peak growth over the start, in bytes."""
    def __init__(self):
        self.proc = psutil.Process()
        gc.collect()
        self.start = self.proc.memory_info().rss
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
    def _run(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self.proc.memory_info().rss)
    def stop(self):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)
        return self.peak - self.start

view = ContextView(title="load")
'''

LOAD_RUN = r'''
def run_load(n, m, via_output=False):
    """n append deltas spread round-robin over m text messages (the hardest case for coalescing)."""
    sink = Output(sinks=[view]) if via_output else None
    def send(msgs):
        if sink is None:
            view.write(msgs)
        else:
            for msg in msgs:
                sink.send(msg)
            sink.flush()
    meter = PeakRss()
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    send([{"id": f"m{k}", "type": "text", "props": {"content": ""}} for k in range(m)])
    started = time.perf_counter()
    for i in range(n):
        send([delta(i % m, piece(i))])
    seconds = time.perf_counter() - started
    view.settle()
    growth = meter.stop()
    messages = view.state()["outputs"]["messages"]
    lost = [k for k in range(m) if messages[f"m{k}"]["props"]["content"] != "".join(piece(i) for i in range(k, n, m))]
    return {"deltas": n, "messages": m, "seconds": seconds, "rss_growth": growth,
            "maxrss_growth": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - maxrss_before) * 1024,
            "text_bytes": 5 * n, "lost": lost[:5], "seq": view.state()["seq"]}
'''

RENDERED_TEXTS = """(sel) => { const el = document.querySelector(sel); if (!el) return null;
  const out = {}; for (const o of el.querySelectorAll('.actx-out')) out[o.dataset.outputId] = o.textContent.trim();
  return out; }"""

# SHA-256 of every output's text (megabytes of text would not fit through IOPub's 1 MB/s stream limit).
RENDERED_DIGESTS = """async (sel) => { const el = document.querySelector(sel); if (!el) return null;
  const out = {};
  for (const o of el.querySelectorAll('.actx-out')) {
    const bytes = new TextEncoder().encode(o.textContent.trim());
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    out[o.dataset.outputId] = [...digest].map(b => b.toString(16).padStart(2, '0')).join('');
  }
  return out; }"""

KERNEL_DIGESTS = ("{k: __import__('hashlib').sha256(v['props']['content'].strip().encode()).hexdigest()"
                  " for k, v in view.state()['outputs']['messages'].items()}")

CAUGHT_UP_AT_LEAST = """([sel, seq]) => { const el = document.querySelector(sel);
  return !!el && Number(el.dataset.seq) >= seq; }"""


def kernel_value(lab: Any, expression: str, *, timeout: float) -> Any:
    """``lab.kernel_json`` with a timeout of our own (a long stream outlasts the default)."""
    out = lab.execute(f"import json as _j; print('@@' + _j.dumps({expression}))", timeout=timeout)
    line = [line for line in out.splitlines() if line.startswith("@@")][-1]
    return json.loads(line[2:])


def kernel_texts(lab: Any) -> dict[str, str]:
    """Output id → text content as the kernel's view state holds it (stripped, as the page shows it)."""
    return kernel_poll(lab, "{k: v['props']['content'].strip() for k, v in view.state()['outputs']['messages'].items()}")


def run_load_in_browser(lab: Any, deltas: int, messages: int, *, timeout: float = 900.0) -> dict[str, Any]:
    """Stream ``deltas`` over ``messages`` into a displayed view; return the kernel's and page's figures.

    Also clears the view and closes it, recording the page's JS heap (after a forced GC) at each stage.
    """
    from harness import write_notebook

    kernel_sockets: list[str] = []
    lab.page.on("websocket", lambda ws: "/api/kernels/" in ws.url and kernel_sockets.append(ws.url))
    write_notebook(lab.server.root, "load.ipynb", [LOAD_SETUP + "\nview", LOAD_RUN])
    lab.open("load.ipynb")
    lab.run_all()
    lab.wait_for("(sel) => { const el = document.querySelector(sel); return !!el && el.dataset.seq !== undefined; }", VIEW)
    figures: dict[str, Any] = {"heap_start": js_heap_used(lab.page)}
    # In a kernel thread, polled: a page busy for long loses its kernel websocket for a moment, and a
    # request waiting on its reply then would never return (see kernel_poll).
    lab.execute(f"_load = {{}}\n_t = threading.Thread(target=lambda: _load.update(run_load({deltas}, {messages})),"
                " daemon=True)\n_t.start()")
    deadline = time.monotonic() + timeout
    while not kernel_poll(lab, "_t.join(15) or not _t.is_alive()"):  # the kernel waits, not this loop
        if time.monotonic() > deadline:
            raise TimeoutError(f"the kernel did not finish {deltas} deltas in {timeout:.0f} s")
    kernel = kernel_poll(lab, "_load")
    figures.update(kernel)
    figures["kernel_websockets_opened"] = len(kernel_sockets)
    lab.wait_for(CAUGHT_UP_AT_LEAST, [VIEW, kernel["seq"]], timeout=timeout)
    figures["rendered"] = lab.page.evaluate(RENDERED_DIGESTS, VIEW)
    figures["expected"] = kernel_poll(lab, KERNEL_DIGESTS)
    figures["page_seq"] = lab.page.evaluate("(sel) => Number(document.querySelector(sel).dataset.seq)", VIEW)
    figures["heap_full"] = js_heap_used(lab.page)
    lab.execute("view.clear_output(); view.settle()")
    seq = lab.kernel_json("view.state()['seq']")
    lab.wait_for(CAUGHT_UP, [VIEW, seq, 1], timeout=600)
    lab.wait_for("(sel) => document.querySelector(sel).querySelectorAll('.actx-out').length === 0", VIEW)
    figures["heap_cleared"] = js_heap_used(lab.page)
    # One more small change: the widget model (Backbone) keeps the previous value of a changed trait,
    # so the big pre-clear `_snapshot` text lives on until the trait changes again.
    lab.execute("view.write([{'id': 'after', 'type': 'text', 'props': {'content': 'after clear'}}]); view.settle()")
    seq = lab.kernel_json("view.state()['seq']")
    lab.wait_for(CAUGHT_UP, [VIEW, seq, 1], timeout=600)
    lab.wait_for("(sel) => document.querySelector(sel).textContent.includes('after clear')", VIEW)
    figures["heap_after_next_change"] = js_heap_used(lab.page)
    lab.execute("view.close()")
    lab.wait_for("(sel) => !document.querySelector(sel + ' .actx-root')", VIEW, timeout=600)
    figures["heap_closed"] = js_heap_used(lab.page)
    return figures


# ------------------------------------------------------------------------------ reloads during a stream

RELOAD_STREAM = r'''
ROUNDS, PER_ROUND, IDS = {rounds}, {per_round}, 10
go = [threading.Event() for _ in range(ROUNDS)]
done = [threading.Event() for _ in range(ROUNDS)]
view.write([{{"id": f"m{{k}}", "type": "text", "props": {{"content": ""}}}} for k in range(IDS)])

def produce():
    """A paced producer (a model streaming): each round waits for the test's go, so a reload lands mid-round."""
    for r in range(ROUNDS):
        go[r].wait()
        for j in range(PER_ROUND):
            i = r * PER_ROUND + j
            view.write([delta(i % IDS, piece(i))])
            if j % 5 == 4:
                time.sleep(0.001)
        done[r].set()

producer = threading.Thread(target=produce, daemon=True)
producer.start()
'''


def run_reloads(lab: Any, rounds: int, per_round: int = 10_000) -> list[dict[str, Any]]:
    """Reload the page ``rounds`` times, each during a round of the stream; compare page and kernel after each."""
    from harness import write_notebook

    write_notebook(lab.server.root, "reloads.ipynb",
                   [LOAD_SETUP + RELOAD_STREAM.format(rounds=rounds, per_round=per_round) + "\nview"])
    lab.open("reloads.ipynb")
    lab.run_all()
    lab.wait_for("(sel) => { const el = document.querySelector(sel); return !!el && el.dataset.seq !== undefined; }", VIEW)
    lab.command("docmanager:save")  # the reloaded page re-opens the saved notebook, with the view's output
    lab.wait_for("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    results = []
    for r in range(rounds):
        lab.execute(f"go[{r}].set()")
        mid_stream = lab.kernel_json(f"not done[{r}].is_set()")
        lab.page.reload()
        lab.wait_notebook()
        lab.execute(f"done[{r}].wait(); view.settle()")
        seq = lab.kernel_json("view.state()['seq']")
        lab.wait_for(CAUGHT_UP, [VIEW, seq, 1], timeout=600)
        rendered = lab.page.evaluate(RENDERED_TEXTS, VIEW)
        expected = kernel_texts(lab)
        results.append({"round": r, "mid_stream": mid_stream, "equal": rendered == expected,
                        "chars": sum(len(v) for v in expected.values()), "rendered": rendered, "expected": expected})
    return results


# ------------------------------------------------------------------------------ widget state in saved notebooks

WIDGET_MANAGER_SETTINGS = "@jupyter-widgets/jupyterlab-manager:plugin"


def set_save_widget_state(server: Any, on: bool) -> None:
    """Turn JupyterLab's "save widget state" setting on or off through the settings REST API."""
    import urllib.request

    body = json.dumps({"raw": json.dumps({"saveState": on})}).encode()
    request = urllib.request.Request(
        f"{server.base_url}/lab/api/settings/{WIDGET_MANAGER_SETTINGS}?token={server.token}",
        data=body, method="PUT", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as reply:
        if reply.status not in (200, 204):
            raise RuntimeError(f"PUT settings {WIDGET_MANAGER_SETTINGS} answered {reply.status}")


def saved_snapshots(path: Path) -> list[dict[str, Any]]:
    """The ``_snapshot`` states of every ContextView saved in a notebook's widget-state metadata."""
    notebook = json.loads(path.read_text())
    state = notebook.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    found = []
    for model in state.get("state", {}).values():
        snapshot = model.get("state", {}).get("_snapshot")
        if isinstance(snapshot, str) and snapshot:
            found.append(json.loads(snapshot))
    return found


# ------------------------------------------------------------------------------ kernel calls that survive reconnects

_EXEC_WITH_TIMEOUT = """async ([code, ms]) => {
  const nb = window.jupyterapp.shell.currentWidget;
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  if (!kernel || kernel.connectionStatus !== 'connected') return {status: 'disconnected', out: ''};
  const future = kernel.requestExecute({code, store_history: false});
  const out = [];
  future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out.push(msg.content.text); };
  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), ms));
  const reply = await Promise.race([future.done, timeout]);
  if (reply === null) { try { future.dispose(); } catch (e) {} return {status: 'timeout', out: ''}; }
  return {status: reply.content.status, out: out.join('')};
}"""


_KERNEL_CONNECTED = """() => { const nb = window.jupyterapp.shell.currentWidget;
  const k = nb.sessionContext.session && nb.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected'; }"""


def kernel_poll(lab: Any, expression: str, *, attempts: int = 30, each: float = 20.0) -> Any:
    """Evaluate ``expression`` in the kernel, retrying when the reply is lost.

    A page whose main thread is busy for long stops reading its kernel websocket; the server's ping
    then times out and closes it, JupyterLab reconnects, and a request in flight never gets its reply.
    The stream protocol recovers from that by itself (a snapshot on the next gap); test code must too.
    """
    code = f"import json as _j; print('@@' + _j.dumps({expression}))"
    for _ in range(attempts):
        result = lab.page.evaluate(_EXEC_WITH_TIMEOUT, [code, int(each * 1000)])
        lines = [line for line in result["out"].splitlines() if line.startswith("@@")]
        if result["status"] == "ok" and lines:
            return json.loads(lines[-1][2:])
        if result["status"] == "error":
            raise AssertionError(f"kernel code failed: {expression}")
        if result["status"] == "disconnected":
            lab.page.wait_for_function(_KERNEL_CONNECTED, timeout=600_000)
    raise TimeoutError(f"no reply from the kernel for {expression!r} after {attempts} attempts")
