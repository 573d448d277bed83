"""A real ``marimo edit`` server and an account of what its websocket carries, for test_marimo.py and
bench/marimo_stream.py.

Why real: marimo hosts an anywidget through its own comm and websocket (``model-lifecycle`` notifications
carrying trait updates and custom messages, the ESM served as a virtual file), so only the real server
shows whether the view works there and what a stream costs on the wire. The server runs a copy of the
app in its own temporary directory (marimo writes session files beside the notebook) with its own
config and is stopped by PID. Nothing here sleeps to wait: waits are on an HTTP answer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import REPO, VENV_BIN, free_port, log_tail, stop_process, wait_until

VIEW_WIDGET_ID = "agentctx_widgets.widget.view.ContextView"
"""The ``_anywidget_id`` marimo's ``open`` message carries for a ContextView."""

_CONFIG = """\
[runtime]
auto_instantiate = true
"""
"""marimo's user config for the server: cells run as soon as a page opens the notebook."""


class MarimoServer:
    """``marimo edit`` (or ``run``) headless on a free port with no token, on a copy of one app file."""

    def __init__(self, app: Path, *, mode: str = "edit", pythonpath: Path = REPO) -> None:
        if mode not in ("edit", "run"):
            raise ValueError(f"marimo mode {mode!r} is not 'edit' or 'run'")
        self.mode = mode
        self.pythonpath = pythonpath
        """Where the app imports agentctx_widgets from (another checkout for a before/after bench)."""
        self.home = Path(tempfile.mkdtemp(prefix="actx-marimo-"))
        self.app = self.home / "root" / app.name
        self.app.parent.mkdir()
        shutil.copyfile(app, self.app)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.home / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 90.0) -> MarimoServer:
        config = self.home / "config" / "marimo" / "marimo.toml"
        config.parent.mkdir(parents=True)
        config.write_text(_CONFIG)
        env = dict(os.environ)
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / "config"),
            XDG_CACHE_HOME=str(self.home / "cache"),
            XDG_STATE_HOME=str(self.home / "state"),
            MARIMO_SKIP_UPDATE_CHECK="1",
            PYTHONPATH=str(self.pythonpath),
        )
        command = [str(VENV_BIN / "marimo"), self.mode, "--headless", "--no-token",
                   "--host", "127.0.0.1", "--port", str(self.port)]
        if self.mode == "edit":
            command.append("--skip-update-check")
        command.append(str(self.app))
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                        cwd=self.app.parent)
        wait_until(self._answers, timeout, f"marimo at {self.base_url} (log: {self.log_path})", poll=0.2)
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"marimo exited with {self.process.returncode}: {self.log_tail()}")
        try:
            with urllib.request.urlopen(f"{self.base_url}/health", timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def url(self, **params: Any) -> str:
        """The app's page; ``params`` become ``mo.query_params()`` in the notebook."""
        return f"{self.base_url}/?{urllib.parse.urlencode(params)}" if params else f"{self.base_url}/"

    def log_tail(self, chars: int = 4000) -> str:
        return log_tail(self.log_path, chars)

    def stop(self) -> None:
        """SIGTERM by PID (marimo stops its kernels), SIGKILL if it lingers; remove the directory."""
        stop_process(self.process)
        shutil.rmtree(self.home, ignore_errors=True)


@dataclass
class Frame:
    """One websocket frame the page received: its size on the wire and what it says."""

    size: int
    op: str
    model_id: str | None = None
    method: str | None = None
    """``open`` / ``update`` / ``custom`` for a ``model-lifecycle`` frame."""
    body: dict[str, Any] = field(default_factory=dict)
    """The ``model-lifecycle`` message (state or content), else empty."""


def parse_frame(payload: str | bytes) -> Frame:
    """Read one marimo websocket frame (JSON ``{"op", "data"}``); a non-JSON frame keeps only its size."""
    raw = payload.encode() if isinstance(payload, str) else bytes(payload)
    try:
        decoded = json.loads(raw)
    except ValueError:
        return Frame(len(raw), "?")
    data = decoded.get("data") if isinstance(decoded, dict) else None
    if not isinstance(data, dict):
        return Frame(len(raw), str(decoded.get("op")) if isinstance(decoded, dict) else "?")
    op = str(decoded.get("op"))
    message = data.get("message")
    if op == "model-lifecycle" and isinstance(message, dict):
        return Frame(len(raw), op, data.get("model_id"), message.get("method"), message)
    return Frame(len(raw), op)


class WidgetTraffic:
    """Every frame a page receives over marimo's websockets, attributable to the ContextView's model."""

    def __init__(self, page: Any) -> None:
        self.frames: list[Frame] = []
        page.on("websocket", self._watch)

    def _watch(self, socket: Any) -> None:
        socket.on("framereceived", lambda payload: self.frames.append(parse_frame(payload)))

    def view_model_id(self) -> str | None:
        """The model id marimo gave the (first) ContextView, once its ``open`` frame arrived."""
        for frame in self.frames:
            if frame.method == "open" and frame.body.get("state", {}).get("_anywidget_id") == VIEW_WIDGET_ID:
                return frame.model_id
        return None

    def view_frames(self) -> list[Frame]:
        model_id = self.view_model_id()
        return [frame for frame in self.frames if model_id is not None and frame.model_id == model_id]

    def snapshots(self) -> list[dict[str, Any]]:
        """The states of the ``_snapshot`` trait updates the view's model received, in order."""
        states = []
        for frame in self.view_frames():
            text = frame.body.get("state", {}).get("_snapshot") if frame.method == "update" else None
            if isinstance(text, str) and text:
                states.append(json.loads(text))
        return states

    def account(self) -> dict[str, int]:
        """Bytes (and frames) by what they carry: the view's open, batches, snapshot replies, the
        ``_snapshot`` trait, and everything else marimo sent on the page's websockets."""
        view = set(map(id, self.view_frames()))
        totals = {key: 0 for key in ("open", "batch", "snapshot_reply", "snapshot_trait", "other_view", "rest")}
        counts = dict.fromkeys(totals, 0)
        for frame in self.frames:
            key = "rest"
            if id(frame) in view:
                content = frame.body.get("content") if frame.method == "custom" else None
                kind = content.get("kind") if isinstance(content, dict) else None
                if frame.method == "open":
                    key = "open"
                elif kind == "batch":
                    key = "batch"
                elif kind == "snapshot":
                    key = "snapshot_reply"
                elif frame.method == "update" and "_snapshot" in frame.body.get("state", {}):
                    key = "snapshot_trait"
                else:
                    key = "other_view"
            totals[key] += frame.size
            counts[key] += 1
        result = {f"{key}_bytes": value for key, value in totals.items()}
        result.update({f"{key}_frames": value for key, value in counts.items()})
        result["total_bytes"] = sum(totals.values())
        return result


VIEW_OUTPUT_TEXT_JS = """
([id]) => {
  // marimo renders each anywidget inside the shadow root of its <marimo-anywidget> element
  const find = (node) => {
    const hit = node.querySelector('.agentctx-view');
    if (hit) return hit;
    for (const el of node.querySelectorAll('*')) {
      const inner = el.shadowRoot && find(el.shadowRoot);
      if (inner) return inner;
    }
    return null;
  };
  const view = find(document);
  const out = view && view.querySelector(`.actx-out[data-output-id="${id}"]`);
  return out ? out.textContent : null;
}
"""
"""``([output_id]) -> text | null``: the rendered text of one output message of the page's ContextView,
looked up through shadow roots."""


@dataclass
class StreamRun:
    """One page of the stream app, left once its stream has settled."""

    context: Any
    page: Any
    traffic: WidgetTraffic
    snapshot: dict[str, Any]
    """The last ``_snapshot`` trait state the page received (the settled one, at the view's seq)."""
    console: list[str]


def stream_and_settle(browser: Any, server: MarimoServer, *, deltas: int, pace: int, length: int,
                      timeout: float = 180.0) -> StreamRun:
    """Open the app streaming ``deltas`` deltas and wait until output ``m`` shows ``length`` characters
    (stripped) and the settled ``_snapshot`` trait for the view's last seq arrived. Close ``.context``."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(timeout * 1000)
    console: list[str] = []
    page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    traffic = WidgetTraffic(page)
    page.goto(server.url(deltas=deltas, pace=pace))
    page.wait_for_function(
        f"([id, length]) => {{ const text = ({VIEW_OUTPUT_TEXT_JS})([id]); "
        "return text !== null && text.trim().length >= length; }",
        arg=["m", length], polling=100, timeout=timeout * 1000)
    view = page.locator(".agentctx-view").first  # Playwright's CSS locators pierce shadow roots

    def settled() -> dict[str, Any] | None:
        seq = view.get_attribute("data-seq")  # also lets Playwright deliver the frames seen so far
        snapshots = traffic.snapshots()
        return snapshots[-1] if snapshots and str(snapshots[-1]["seq"]) == seq else None

    snapshot = wait_until(settled, 60, "the settled _snapshot trait update on marimo's websocket")
    return StreamRun(context, page, traffic, snapshot, console)
