"""A real JupyterLab server plus headless Chromium, shared by the browser tests and bench/stream.py.

Why real: the failures that matter (IOPub rate limits, custom messages lost before a view renders,
widget state after a reload) only exist in the real stack. Nothing here sleeps to wait: every wait
is on a condition (an HTTP answer, a page predicate, a kernel reply).
"""

from __future__ import annotations

import contextlib

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
CHROMIUM = Path("/usr/bin/chromium")
HANG = 600.0
"""Seconds after which a wait gives up: only a hang ends there. Every wait is on a state, so a loaded
2-core machine is slow, never failing (a 60 s budget failed the tour's test under load)."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

# Settings that keep JupyterLab's own pop-ups (news, update checks) off the screenshots.
_LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, poll: float = 0.05) -> Any:
    """Return the first truthy ``predicate()``; raise TimeoutError naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)  # a polling interval for an external process, not a wait for time to pass


class JupyterServer:
    """``jupyter lab`` on a free port with a random token, in its own temporary root, stopped by PID."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="actx-lab-"))
        self.root = self.home / "root"
        self.root.mkdir()
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.home / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}

    def start(self, timeout: float = HANG) -> JupyterServer:
        settings = self.home / "settings"
        for name, value in _LAB_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.home / "config"),
            JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
            JUPYTER_DATA_DIR=str(self.home / "data"),
            IPYTHONDIR=str(self.home / "ipython"),
            JUPYTERLAB_SETTINGS_DIR=str(settings),
            JUPYTERLAB_WORKSPACES_DIR=str(self.home / "workspaces"),
            PYTHONPATH=str(REPO),
        )
        # The venv's own python3 kernelspec (argv "python" becomes this interpreter): no user kernels.
        env["JUPYTER_PATH"] = str(VENV_BIN.parent / "share" / "jupyter")
        command = [
            str(VENV_BIN / "jupyter"),
            "lab",
            "--no-browser",
            f"--port={self.port}",
            "--ip=127.0.0.1",
            f"--ServerApp.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.expose_app_in_browser=True",
            "--ServerApp.open_browser=False",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")  # CI containers run as root
        self.env = env
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root)
        wait_until(self._answers, timeout, f"JupyterLab at {self.base_url} (log: {self.log_path})", poll=0.2)
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {self.process.returncode}: {self.log_tail()}")
        try:
            with urllib.request.urlopen(f"{self.base_url}/api/status?token={self.token}", timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def log_tail(self, chars: int = 4000) -> str:
        return log_tail(self.log_path, chars)

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.home, ignore_errors=True)

    def trust(self, path: Path) -> None:
        """Sign a notebook with this server's key so its saved widget outputs render."""
        subprocess.run([str(VENV_BIN / "jupyter"), "trust", str(path)], env=self.env, check=True,
                       capture_output=True, timeout=60)

    def api(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(f"{self.base_url}{path}?token={self.token}", method=method)
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read()
            return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")

    def notebook_url(self, name: str) -> str:
        workspace = "w" + secrets.token_hex(6)
        return f"{self.base_url}/lab/workspaces/{workspace}/tree/{name}?reset&token={self.token}"


def log_tail(path: Path, chars: int = 4000) -> str:
    """The end of a server's log (for a failure message); empty when it cannot be read."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def stop_process(process: subprocess.Popen | None) -> None:
    """SIGTERM a server we started, by its PID; SIGKILL if it lingers."""
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def launch_chromium(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)


@contextlib.contextmanager
def lab_session(*, viewport: tuple[int, int] = (1200, 900), timeout: float = HANG) -> Iterator[Lab]:
    """A JupyterLab server, one Chromium and one page on it, for the benchmarks; all stopped on exit."""
    from playwright.sync_api import sync_playwright

    server = JupyterServer().start()
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                page = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}).new_page()
                page.set_default_timeout(timeout * 1000)
                yield Lab(server, page)
            finally:
                browser.close()
    finally:
        server.stop()


def write_notebook(root: Path, name: str, cells: list[str], *, metadata: dict | None = None,
                   outputs: dict[int, list] | None = None) -> Path:
    """A notebook of code cells with the venv's ``python3`` kernelspec."""
    nb_cells = []
    for index, source in enumerate(cells):
        nb_cells.append({
            "cell_type": "code",
            "execution_count": None,
            "id": f"cell{index}",
            "metadata": {},
            "outputs": (outputs or {}).get(index, []),
            "source": source,
        })
    notebook = {
        "cells": nb_cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            **(metadata or {}),
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = root / name
    path.write_text(json.dumps(notebook, indent=1))
    return path


# ---------------------------------------------------------------- page helpers (Playwright, sync API)

_NOTEBOOK_READY = """() => {
  const app = window.jupyterapp;
  const nb = app && app.shell.currentWidget;
  const kernel = nb && nb.sessionContext && nb.sessionContext.session && nb.sessionContext.session.kernel;
  return !!(nb && nb.content && kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle');
}"""

_ALL_RAN = """(count) => {
  const nb = window.jupyterapp.shell.currentWidget;
  const cells = nb.content.model.cells;
  for (let i = 0; i < Math.min(count, cells.length); i++) {
    const cell = cells.get(i);
    if (cell.type === 'code' && !cell.executionCount) return false;
  }
  return nb.sessionContext.session.kernel.status === 'idle';
}"""

_EXEC = """async (code) => {
  const nb = window.jupyterapp.shell.currentWidget;
  const future = nb.sessionContext.session.kernel.requestExecute({code, store_history: false});
  const out = [];
  future.onIOPub = (msg) => {
    const c = msg.content;
    if (msg.header.msg_type === 'stream') out.push(c.text);
    if (msg.header.msg_type === 'error') out.push('ERROR ' + c.ename + ': ' + c.evalue + '\\n' + (c.traceback || []).join('\\n'));
  };
  const reply = await future.done;
  return {status: reply.content.status, out: out.join('')};
}"""


class Lab:
    """One page on one notebook of a running server."""

    def __init__(self, server: JupyterServer, page: Any) -> None:
        self.server = server
        self.page = page
        page.set_default_timeout(HANG * 1000)  # Playwright's own 30 s default is a wall-clock budget too
        self.console: list[str] = []
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))

    def open(self, name: str, *, wait_kernel: bool = True, timeout: float = HANG) -> None:
        self.page.goto(self.server.notebook_url(name))
        if wait_kernel:
            self.page.wait_for_function(_NOTEBOOK_READY, timeout=timeout * 1000)
        else:
            self.page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                        " && window.jupyterapp.shell.currentWidget.content)", timeout=timeout * 1000)

    def wait_notebook(self, timeout: float = HANG) -> None:
        """Wait until the current notebook's kernel is connected and idle (after a reload, say)."""
        self.page.wait_for_function(_NOTEBOOK_READY, timeout=timeout * 1000)

    def command(self, name: str, args: dict | None = None) -> Any:
        return self.page.evaluate("([name, args]) => window.jupyterapp.commands.execute(name, args)", [name, args or {}])

    def run_all(self, timeout: float = HANG) -> None:
        count = self.page.evaluate("() => window.jupyterapp.shell.currentWidget.content.model.cells.length")
        self.command("notebook:run-all-cells")
        self.page.wait_for_function(_ALL_RAN, arg=count, timeout=timeout * 1000)

    def run_cell(self, index: int, timeout: float = HANG) -> None:
        """Select cell ``index`` and run it (its outputs render in the notebook)."""
        self.page.evaluate("(i) => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i; }", index)
        self.command("notebook:run-cell")
        self.page.wait_for_function(
            "(i) => { const nb = window.jupyterapp.shell.currentWidget; const c = nb.content.model.cells.get(i);"
            " return !!c.executionCount && nb.sessionContext.session.kernel.status === 'idle'; }",
            arg=index, timeout=timeout * 1000)

    def execute(self, code: str, timeout: float = HANG) -> str:
        """Run ``code`` in the notebook's kernel (not in a cell) and return its stdout; raise on error."""
        self.page.set_default_timeout(timeout * 1000)
        result = self.page.evaluate(_EXEC, code)
        if result["status"] != "ok":
            raise AssertionError(f"kernel code failed: {result['out']}")
        return result["out"]

    def kernel_json(self, expression: str) -> Any:
        """Evaluate a Python expression in the kernel and return it (through JSON)."""
        out = self.execute(f"import json as _j; print('@@' + _j.dumps({expression}))")
        line = [line for line in out.splitlines() if line.startswith("@@")][-1]
        return json.loads(line[2:])

    def wait_for(self, js_predicate: str, arg: Any = None, timeout: float = HANG) -> Any:
        return self.page.wait_for_function(js_predicate, arg=arg, timeout=timeout * 1000).json_value()

    def screenshot(self, name: str, selector: str | None = None) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        if selector:
            self.page.locator(selector).first.screenshot(path=str(path))
        else:
            self.page.screenshot(path=str(path), full_page=False)
        return path

    def set_theme(self, theme: str) -> None:
        self.command("apputils:change-theme", {"theme": theme})
        self.page.wait_for_function(
            "(t) => document.body.dataset.jpThemeName === t && !document.querySelector('#jupyterlab-splash')",
            arg=theme, timeout=HANG * 1000)
