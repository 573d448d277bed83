"""``watch(path)``: a ContextView that follows a session file another process is writing.

A daemon thread polls the file every ``interval`` seconds (``stat`` and a read of the new bytes, through
``context.follow.SessionFollower``) and applies each new complete line to the watcher's own Context,
which the view follows like any other. Restarts (the file rotated, removed and created again, cut
short) and unusable lines are shown as diagnostics in the view's header and kept on the watcher.

Why the Context is changed on the watcher's thread (and not handed to the kernel's main thread):

- every ``Context`` method takes the Context's own lock for the whole change and calls its observers
  under it, so a change and its notification are one step; the view's observer,
  ``StreamProtocol.context_change``, takes the protocol's lock and is built to be called from any
  thread (its own trailing timer already sends from one), and it keeps a private copy of the messages,
  so the header and snapshots never read the Context from another thread;
- the locks are always taken in one order, Context then protocol (the protocol never calls into the
  Context), so the two threads cannot deadlock;
- the main thread is not free to take the work: the blocking form (``%agentctx watch``) keeps it
  waiting for Ctrl-C, and outside a kernel there is no event loop to queue onto.

What another thread may see is the Context between two lines of one poll — at a restart, cleared and
not yet refilled; the view batches changes every 30 ms, so it rarely shows that. The watcher's Context
is a mirror of the file: edit the file's writer, not the mirror (a restart overwrites it, and the
file's control lines address entries by index).
"""

from __future__ import annotations

import collections
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from agentctx_widgets.context import Context
from agentctx_widgets.context.follow import SessionFollower, check_followable, diagnostic

from .view import MAX_DIAGNOSTICS, ContextView

__all__ = ["DEFAULT_INTERVAL", "MAX_ERRORS", "Watcher", "watch"]

DEFAULT_INTERVAL = 0.1
"""Seconds between two polls of the file: a new line shows within this plus one 30 ms view batch."""

MAX_ERRORS = 10_000
"""Bad-line diagnostics kept on ``Watcher.errors`` (``Watcher.bad_lines`` counts every one)."""

_CLOSE_TIMEOUT = 5.0


class Watcher:
    """A Context kept equal to a session file by a polling thread, and the view that shows it.

    ``context`` is the mirror, ``view`` the ContextView, ``lines_read`` the complete lines read from the
    file now followed, ``errors`` the bad lines reported (each once, naming its line). ``close()`` (or
    closing the view) stops the thread; the view keeps showing what was read.
    """

    def __init__(self, path: str | os.PathLike, *, view: ContextView | None = None,
                 interval: float = DEFAULT_INTERVAL) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"watch: path must be a str or os.PathLike, got {type(path).__name__}")
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not (
                math.isfinite(interval) and interval > 0):
            raise ValueError(f"watch: interval must be a positive number of seconds, got {interval!r}")
        if view is not None and not isinstance(view, ContextView):
            raise TypeError(f"watch: view must be a ContextView, got {type(view).__name__}")
        self.path = Path(path)
        check_followable(self.path)
        self.interval = float(interval)
        self.context = Context(name=self.path.name)
        self._follower = SessionFollower(self.path, self.context)
        if view is None:
            view = ContextView(self.context)
        else:
            view.context = self.context
        self.view = view
        self.polls = 0
        """Polls completed (tests wait on it: "the watcher has looked at the file since")."""
        self.error: str | None = None
        """Why the polling thread stopped on its own (``alive`` is then False; the view says it too)."""
        self._errors: list[dict[str, str]] = []
        self._shown: collections.deque = collections.deque(maxlen=MAX_DIAGNOSTICS - 1)
        self._shown_total = 0
        self._failure: str | None = None  # the last poll failure reported, until a poll succeeds
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._finished = threading.Event()
        """Set by the thread as it ends. Waiting is done on this, not on ``Thread.join``: a join that
        Ctrl-C interrupts can leave the thread marked stopped while it still runs (CPython gh-90882)."""
        self._had_comm = view.comm is not None
        view.observe(self._on_comm, names="comm")
        self._thread = threading.Thread(target=self._run, name=f"agentctx watch {self.path.name}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ state

    @property
    def lines_read(self) -> int:
        """Complete lines read from the file now followed (a restart starts the count again)."""
        return self._follower.lines_read

    @property
    def restarts(self) -> int:
        """Times the file was replaced or cut short and read again from its first line."""
        return self._follower.restarts

    @property
    def partial_bytes(self) -> int:
        """Bytes of a last line held until its newline arrives."""
        return self._follower.partial_bytes

    @property
    def header(self) -> dict[str, Any] | None:
        """The followed file's header line (``{"type": "context", "id", "name", "version"}``), if any."""
        return self._follower.header

    @property
    def bad_lines(self) -> int:
        """Every bad line met so far, listed or only counted (``errors`` keeps the first ``MAX_ERRORS``)."""
        return self._follower.bad_lines

    @property
    def errors(self) -> list[dict[str, str]]:
        """The bad lines reported, oldest first: ``{code, message, where: "PATH:LINE", hint}``."""
        with self._lock:
            return list(self._errors)

    @property
    def alive(self) -> bool:
        """Whether the polling thread is still running."""
        return not self._finished.is_set() and self._thread.is_alive()

    # ----------------------------------------------------------------- control

    def close(self) -> None:
        """Stop following the file; the view stays, showing what was read."""
        self._stop.set()
        if threading.current_thread() is not self._thread and self._finished.wait(_CLOSE_TIMEOUT):
            self._thread.join(_CLOSE_TIMEOUT)  # it has finished its work: this only waits for its exit
        try:
            self.view.unobserve(self._on_comm, names="comm")
        except ValueError:
            pass  # already unobserved (closed twice)
        if self.view.comm is not None:
            self.view.settle()

    def wait(self) -> Watcher:
        """Block until the thread stops (the view closed) or Ctrl-C, which stops it; returns the watcher."""
        try:
            while not self._finished.wait(0.25):  # a timed wait lets SIGINT's KeyboardInterrupt through
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.close()
        return self

    def __repr__(self) -> str:
        state = "following" if self.alive else f"stopped ({self.error})" if self.error else "stopped"
        return f"Watcher({str(self.path)!r}, {state}, lines_read={self.lines_read}, errors={self.bad_lines})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.view._repr_mimebundle_(**kwargs)  # a watcher as a cell's value shows its view

    # ---------------------------------------------------------------- the thread

    def _on_comm(self, change: dict[str, Any]) -> None:
        if change.get("new") is None:  # view.close()
            self._stop.set()

    def _run(self) -> None:
        due = time.monotonic()
        try:
            while not self._stop.is_set():
                if self._had_comm and self.view.comm is None:
                    break  # the view was closed before the observer was in place
                self._poll()
                self.polls += 1
                if self._follower.behind:
                    continue  # a big append: read on at once, reporting as it goes
                due = max(due + self.interval, time.monotonic())  # a steady cadence; a slow poll is not made up
                self._stop.wait(due - time.monotonic())
        except BaseException as error:  # noqa: BLE001 - a watcher that dies says so, on the object and in the view
            self.error = f"{type(error).__name__}: {error}"
            try:
                self._report([diagnostic("watch_died", f"the watcher of {self.path} stopped: {self.error}",
                                         str(self.path), "watch(path) again to follow the file from its start")])
            except BaseException:  # noqa: BLE001 - nothing more can be said; .error and .alive still tell
                pass
        finally:
            self._follower.close()
            self._finished.set()

    def _poll(self) -> None:
        try:
            found = self._follower.poll()
        except Exception as error:  # noqa: BLE001 - the thread must outlive a bad poll and say why
            text = f"{type(error).__name__}: {error}"
            if text != self._failure:
                self._failure = text
                self._report([diagnostic("watch_failed", f"reading {self.path} failed: {text}", str(self.path),
                                         "the watcher keeps polling; it goes on once the file can be read")])
            return
        self._failure = None
        if found:
            self._report(found)

    def _report(self, found: list[dict[str, str]]) -> None:
        with self._lock:
            for item in found:
                if item["code"] in ("watch_bad_line", "watch_bad_lines") and len(self._errors) < MAX_ERRORS:
                    self._errors.append(item)
                self._shown.append(item)
                self._shown_total += 1
            shown = list(self._shown)
            hidden = self._shown_total - len(shown)
        if hidden:
            shown.insert(0, diagnostic("watch_more", f"{hidden} earlier diagnostics are not listed here",
                                       str(self.path), "watcher.errors keeps the bad lines"))
        self.view.set_diagnostics(shown)


def watch(path: str | os.PathLike, *, view: ContextView | None = None, interval: float = DEFAULT_INTERVAL,
          block: bool = False) -> Watcher:
    """Follow the session file at ``path`` (written by another process) in a ContextView.

    Returns a running :class:`Watcher`; as a cell's last value it shows its view. ``view=`` re-points an
    existing view at the watcher's Context. ``block=True`` displays the view (in IPython), waits until
    Ctrl-C or ``view.close()``, stops the thread and returns the watcher.
    """
    watcher = Watcher(path, view=view, interval=interval)
    if block:
        _display(watcher.view)
        watcher.wait()
    return watcher


def _display(view: ContextView) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is not None:
        display(view)
