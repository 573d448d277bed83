"""The kernel's side of a JavaScript engine: one worker process per hook set, and the thread that talks to it.

QuickJS checks its interrupt handler only between bytecodes, so a native built-in on a huge array-like
(``Array.prototype.join.call({length: 2**53-1}, "")``, ``String(a)`` of an array with ``length`` 2**32-1)
never yields: no limit inside the process that runs it can stop it. So each ``JsHooks`` runs its QuickJS
context in a worker process (``js_worker``), started once per hook set and reused across calls. The
worker enforces the limits itself wherever JavaScript runs; when it does not answer by a limit plus
:data:`KILL_GRACE` (a native loop), or on ``interrupt()`` (Ctrl-C), this side kills it (SIGKILL through a
pidfd) and the hook set gets a fresh one. Workers are forked from one zygote process per kernel
(``js_worker.zygote_main``), started on first use, so a worker costs a ``fork``, not an interpreter start.
The zygote and the workers get a scrubbed environment (no API keys) and ignore SIGINT.

Every ``JsHooks`` also keeps one thread here ("agentctx-quickjs"): calls into its worker run there one at
a time, so an async ``call`` never blocks the event loop, and the thread runs the host side of the call
(applying sends to the Output, console lines, callable globals, ``time.Sleep``).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import orjson

from .js_worker import Channel

KILL_GRACE = 0.25
"""Seconds past a call's time or wall limit before its worker is killed (a built-in that never yields).
The worker stops JavaScript at the limit itself; this is the backstop, well inside the promised
"limit + 0.5 s"."""
SPAWN_TIMEOUT = 30.0
"""Seconds to wait for the zygote to fork a worker before giving up (a wedged zygote is replaced)."""

_LEN = struct.Struct("<I")
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "PYTHONHOME", "SYSTEMROOT")


class WorkerDied(Exception):
    """The worker process is gone (killed by us, or ended on its own)."""


class _Zygote:
    """The process that forks workers (started lazily, once per kernel process)."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        code = (f"import sys; sys.path[:] = {sys.path!r}; "
                f"from agentctx_widgets.hooks.js_worker import zygote_main; zygote_main({theirs.fileno()})")
        env = {key: os.environ[key] for key in _ENV_KEEP if key in os.environ}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", code], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, env=env, start_new_session=True, close_fds=True)
        finally:
            theirs.close()
        self.control = ours
        self.owner = os.getpid()

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def fork(self, config: dict, channel_fd: int) -> int:
        body = orjson.dumps(config)
        self.control.settimeout(SPAWN_TIMEOUT)
        socket.send_fds(self.control, [_LEN.pack(len(body)) + body], [channel_fd])
        reply = b""
        while len(reply) < 8:
            chunk = self.control.recv(8 - len(reply))
            if not chunk:
                raise OSError("the agentctx JavaScript zygote ended")
            reply += chunk
        return struct.unpack("<q", reply)[0]

    def close(self) -> None:
        try:
            self.control.close()
        finally:
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()


_ZYGOTE: _Zygote | None = None
_ZYGOTE_LOCK = threading.Lock()


@atexit.register
def _stop_zygote() -> None:
    """At exit: close the zygote's socket (it exits on EOF) and reap it."""
    zygote = _ZYGOTE
    if zygote is not None and zygote.owner == os.getpid():
        try:
            zygote.close()
        except Exception:  # noqa: BLE001 - exiting anyway
            pass


def _fork_worker(config: dict, channel_fd: int) -> int:
    """A new worker's pid; the zygote is (re)started when needed (first use, it died, or we were forked)."""
    global _ZYGOTE
    with _ZYGOTE_LOCK:
        for attempt in (1, 2):
            if _ZYGOTE is None or not _ZYGOTE.alive():
                if _ZYGOTE is not None and _ZYGOTE.owner == os.getpid():
                    _ZYGOTE.close()
                _ZYGOTE = _Zygote()
            try:
                return _ZYGOTE.fork(config, channel_fd)
            except OSError:
                if attempt == 2:
                    raise
                try:
                    _ZYGOTE.process.kill()
                except OSError:
                    pass
                _ZYGOTE = None
    raise AssertionError("unreachable")


class WorkerProcess:
    """One worker: its channel, and a kill that works from any thread, at most once per process."""

    def __init__(self, *, memory_limit: int, stack_limit: int) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.pid = _fork_worker({"memory_limit": memory_limit, "stack_limit": stack_limit}, theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._lock = threading.Lock()
        self.killed = False
        self.closed = False
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)  # signals then reach this process, never a reused pid
        except (AttributeError, OSError):
            pass
        self.channel = Channel(ours)

    def send(self, body: bytes) -> None:
        try:
            self.channel.send(body)
        except OSError as error:
            raise WorkerDied(str(error)) from None

    def recv(self, timeout: float | None) -> bytes | None:
        """The worker's next frame, ``None`` past ``timeout``; ``WorkerDied`` when it is gone."""
        try:
            return self.channel.recv(timeout)
        except (EOFError, OSError) as error:
            raise WorkerDied(str(error)) from None

    def kill(self) -> None:
        """(Any thread.) SIGKILL the worker, once; its channel then reads as closed."""
        with self._lock:
            if self.killed or self.closed:
                return
            self.killed = True
            try:
                if self._pidfd is not None:
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                else:
                    os.kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, OSError):
                pass

    def close(self) -> None:
        """End the worker and free its descriptors (safe more than once)."""
        self.kill()
        with self._lock:
            if self.closed:
                return
            self.closed = True
            try:
                self.channel.sock.close()
            finally:
                if self._pidfd is not None:
                    os.close(self._pidfd)
                    self._pidfd = None


class EngineThread:
    """A single worker thread fed by a ``SimpleQueue``.

    Not a ``ThreadPoolExecutor``: its ``submit`` takes a process-wide lock, and an engine closed
    by a garbage-collection finalizer that runs *inside* another ``submit`` would deadlock on it.
    ``SimpleQueue.put`` is safe to call from finalizers. The thread is a daemon, so it never blocks exit.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self.closed = False
        self.thread = threading.Thread(target=self._loop, name="agentctx-quickjs", daemon=True)
        self.thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        if self.closed:
            raise RuntimeError("this JavaScript engine is closed")
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put([future, fn, args])  # a list: the thread empties it before answering (see _run_one)
        return future

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.submit(fn, *args).result()

    def close(self, last: Callable[[], None]) -> None:
        """Run ``last`` on the thread after the queued work, then end the thread."""
        if not self.closed:
            self.closed = True
            self._queue.put([None, last, ()])

    def _loop(self) -> None:
        while self._run_one(self._queue.get()):
            pass  # each item is handled in its own frame so nothing of it outlives its turn

    @staticmethod
    def _run_one(item: list) -> bool:
        future, fn, args = item
        item.clear()  # drop the work's references before the caller wakes: a dropped JsHooks is freed at once
        if future is None:
            fn()
            return False
        if future.set_running_or_notify_cancel():
            try:
                result = fn(*args)
            except BaseException as error:  # noqa: BLE001 - handed to the waiting caller
                fn = args = None
                future.set_exception(error)
            else:
                fn = args = None
                future.set_result(result)
        return True


class WorkerSlot:
    """The hook set's current worker, if any (held apart from ``JsHooks`` so its finalizer can close it)."""

    def __init__(self) -> None:
        self.worker: WorkerProcess | None = None

    def close(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()


__all__ = ["KILL_GRACE", "EngineThread", "WorkerDied", "WorkerProcess", "WorkerSlot"]
