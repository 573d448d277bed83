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

**Dying with the kernel.** The zygote exits when its control socket reaches its end of file (the kernel
is gone, SIGKILL included), and every worker dies with the zygote: Linux's parent-death signal
(``PR_SET_PDEATHSIG``, SIGKILL) and, everywhere, a lifeline pipe the worker's main thread watches
(``js_worker.worker_main``), so a worker in a native hang does not outlive its kernel.

**Forks.** After ``os.fork()`` the child has none of the parent's threads, and it shares the parent's
sockets: the worker it would talk to is the parent's. So in the child (``os.register_at_fork``) every
inherited worker and the zygote are *abandoned*: the child closes its copies of their sockets and pidfds
(never signals them: they are the parent's, which go on working) and forgets them; locks are new, and an
engine thread starts again on the first call. A hook set used in the child gets a fresh worker from a
fresh zygote of the child's own.

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
import traceback
import weakref
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
DEATH_SIGNAL = True
"""Arm the parent-death signal in new workers (Linux). ``False`` leaves only the lifeline pipe: the
portable path, which its test checks by turning this off."""

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

    def abandon(self) -> None:
        """(In a forked child.) Close our copy of the parent's control socket, so the parent's death still
        ends its zygote; the process is not ours to signal or wait for."""
        try:
            self.control.close()
        except OSError:
            pass

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
_INHERITED: list[_Zygote] = []
"""Zygotes of a parent process, kept (in a forked child) so that no ``Popen.__del__`` ever waits on
their pid, which is not the child's to reap."""
_WORKERS: weakref.WeakSet[WorkerProcess] = weakref.WeakSet()
_ENGINES: weakref.WeakSet[EngineThread] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """``os.register_at_fork(after_in_child=…)``: drop what belongs to the parent (see the module's
    docstring). Only closes descriptors and makes new locks; threads start again when first needed."""
    global _ZYGOTE, _ZYGOTE_LOCK
    _ZYGOTE_LOCK = threading.Lock()
    zygote, _ZYGOTE = _ZYGOTE, None
    if zygote is not None:
        zygote.abandon()
        _INHERITED.append(zygote)
    for worker in list(_WORKERS):
        worker.abandon()
    for engine in list(_ENGINES):
        engine.after_fork()


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
            self.pid = _fork_worker({"memory_limit": memory_limit, "stack_limit": stack_limit,
                                     "death_signal": DEATH_SIGNAL}, theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._lock = threading.Lock()
        self.owner = os.getpid()
        self.killed = False
        self.closed = False
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)  # signals then reach this process, never a reused pid
        except (AttributeError, OSError):
            pass
        self.channel = Channel(ours)
        _WORKERS.add(self)

    def abandon(self) -> None:
        """(In a forked child.) This worker is the parent's: close our copies of its descriptors, never
        signal it, and read as killed and closed (the hook set starts a fresh one)."""
        self._lock = threading.Lock()  # the parent's may have been held at the fork
        self.killed = self.closed = True
        try:
            self.channel.sock.close()
        except OSError:
            pass
        if self._pidfd is not None:
            try:
                os.close(self._pidfd)
            except OSError:
                pass
            self._pidfd = None

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
            if self.owner != os.getpid():  # a fork the at-fork hook did not see: the worker is the parent's
                return
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
        self._start_lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self._start()
        _ENGINES.add(self)

    def _start(self) -> None:
        self.thread = threading.Thread(target=self._loop, args=(self._queue,), name="agentctx-quickjs", daemon=True)
        self.thread.start()

    def after_fork(self) -> None:
        """(In a forked child.) The thread did not come along: start again, empty, on the next submit.
        What the parent had queued is the parent's."""
        self._queue = queue.SimpleQueue()
        self._start_lock = threading.Lock()
        self.thread = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        if self.closed:
            raise RuntimeError("this JavaScript engine is closed")
        if self.thread is None:
            with self._start_lock:
                if self.thread is None:
                    self._start()
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

    def _loop(self, work: queue.SimpleQueue) -> None:
        while self._run_one(work.get()):
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
                _drop_frames(error)  # this thread holds it until set_exception returns, after the caller woke
                future.set_exception(error)
            else:
                fn = args = None
                future.set_result(result)
        return True


def _drop_frames(error: BaseException | None) -> None:
    """Clear the locals of the finished frames in ``error``'s traceback and its chain: a hook's context
    (its output, the turn's messages) must not live on through an exception this thread still holds."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


class WorkerSlot:
    """The hook set's current worker, if any (held apart from ``JsHooks`` so its finalizer can close it)."""

    def __init__(self) -> None:
        self.worker: WorkerProcess | None = None

    def close(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()


os.register_at_fork(after_in_child=_after_fork_in_child)


__all__ = ["KILL_GRACE", "EngineThread", "WorkerDied", "WorkerProcess", "WorkerSlot"]
