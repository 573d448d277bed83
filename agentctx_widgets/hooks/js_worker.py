"""The worker process a JavaScript hook set's QuickJS engine runs in (the child side of ``js_engine``).

Why a process: QuickJS checks its interrupt handler only between bytecodes, so a native built-in on a
huge array-like (``Array.prototype.join.call({length: 2**53-1}, "")``) never yields and no in-process
limit can stop it. A process can be killed: the kernel's side (``js_engine.WorkerProcess``) kills it
when a call overruns its limits by :data:`js_engine.KILL_GRACE`, or at once on ``interrupt()``, and
starts a fresh one.

Processes are forked from a *zygote* (:func:`zygote_main`): one small single-threaded Python started
once per kernel with this module imported, so a new engine costs a ``fork`` (a few ms), not an
interpreter start. Each worker gets OS limits as a backstop (``RLIMIT_AS``: the JS heap limit plus a
margin; ``RLIMIT_CPU``: raised at each call to the CPU used so far plus the call's time limit plus
:data:`CPU_MARGIN`), ignores SIGINT (the kernel handles Ctrl-C and kills us), and exits when its
channel closes. It also dies with the zygote, which exits when the kernel is gone, even in the middle of
a native hang: a parent-death signal (Linux ``PR_SET_PDEATHSIG``) and a lifeline pipe its main thread
watches (everywhere); see :func:`zygote_main`.

Inside, the engine is the same QuickJS context as before, on one thread with a large C stack, with our
interrupt handler (``JS_SetInterruptHandler`` through ``ctypes``) enforcing the time and wall limits,
and the prelude (``js_prelude.js``) as the bridge. What a hook sends is checked *here*
(``js_host_calls``), with the same functions ``Output.send`` uses, so a bad message throws at the
``ctx.Send`` call, and then buffered: sends cross to the kernel in batches, at ``ctx.Flush``, when a
batch grows past ``SHIP_CHARS`` / ``SHIP_COUNT``, before every synchronous round trip (a callable
global, ``time.Sleep``) and at the end of the call. Console lines are shipped at once (a line written just before a hang is kept).

Wire format (both ways): frames of a 4-byte little-endian length, then a one-byte tag, then the body.
Kernel → worker: ``L`` load (JSON), ``C`` call (JSON header, ``\\n``, the call's arguments as JSON),
``R`` a round trip's reply (the text the prelude reads), ``A`` abort (the round trip failed the call),
``K`` a callback (during a bound ``ctx`` call: run the waiting ``onChunk`` with these arguments; its
answer is an ``F`` frame whose header has ``callback``),
``N`` notice (a batch failed in the kernel: thrown at the hook's next ``ctx.Flush``), ``X`` exit.
Worker → kernel: ``F`` frames only: a JSON header (counters, console lines, ``flush``, an ``op`` to
answer, or the ``result``), ``\\n``, the batch (a JSON array of ``["s", message]`` / ``["g", group]``),
``\\n``, then an op's argument text or the call's envelope.
"""

from __future__ import annotations

import ctypes
import math
import os
import resource
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from importlib import resources
from typing import Any

import _quickjs
import orjson

from ..output.adapters import StandardAdapter
from .js_host_calls import HostCalls

PRELUDE = resources.files(__package__).joinpath("js_prelude.js").read_text(encoding="utf-8")
DISCOVER = resources.files(__package__).joinpath("js_discover.js").read_text(encoding="utf-8")

CPU_MARGIN = 2.0
"""Seconds of CPU above a call's time limit before ``RLIMIT_CPU`` ends the worker (a backstop: the
kernel kills an overrunning worker long before)."""
ADDRESS_MARGIN = 768 * 1024 * 1024
"""Bytes of address space a worker may map beyond its start and twice its JS heap limit (``RLIMIT_AS``)."""
THREAD_STACK = 8 * 1024 * 1024
"""The engine thread's C stack (QuickJS recursion needs room below the JS stack limit)."""

_LEN = struct.Struct("<I")
_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

class Channel:
    """Length-prefixed frames over a stream socket, with a timeout on receive."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = bytearray()
        self._poll = select.poll()
        self._poll.register(sock.fileno(), select.POLLIN)

    def send(self, body: bytes) -> None:
        if len(body) < 65536:
            self.sock.sendall(_LEN.pack(len(body)) + body)
        else:
            self.sock.sendall(_LEN.pack(len(body)))
            self.sock.sendall(body)

    def _frame(self) -> bytes | None:
        buffer = self._buffer
        if len(buffer) >= 4:
            size = _LEN.unpack_from(buffer)[0]
            if len(buffer) >= 4 + size:
                body = bytes(buffer[4:4 + size])
                if len(buffer) == 4 + size:
                    self._buffer = bytearray()  # not ``del``: a bytearray keeps its largest capacity
                else:
                    del buffer[:4 + size]
                return body
        return None

    def _wanted(self) -> int:
        buffer = self._buffer
        if len(buffer) >= 4:
            return max(65536, min(4 + _LEN.unpack_from(buffer)[0] - len(buffer), 16 << 20))
        return 65536

    def recv(self, timeout: float | None = None) -> bytes | None:
        """The next frame; ``None`` if none came within ``timeout`` seconds (``None``: wait for one).
        Raises ``EOFError`` when the other side is gone."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            body = self._frame()
            if body is not None:
                return body
            if deadline is not None:
                left = deadline - time.monotonic()
                if not self._poll.poll(max(0, math.ceil(left * 1000))):
                    if time.monotonic() >= deadline:
                        return None
                    continue
            try:
                chunk = self.sock.recv(self._wanted())
            except (ConnectionResetError, BrokenPipeError):
                chunk = b""
            if not chunk:
                raise EOFError("the other side of the channel is gone")
            self._buffer += chunk


# -- the zygote -------------------------------------------------------------------------------------


def zygote_main(fd: int) -> None:
    """Fork a worker for each request on the control socket ``fd``; exit when the kernel is gone.

    A request is a 4-byte length and a JSON config, with the worker's channel attached (SCM_RIGHTS);
    the reply is the worker's pid (8 bytes). Children are reaped by the system (SIGCHLD ignored).

    The kernel's death is this socket's end of file (the kernel holds the only other end: its forks
    close their copy, ``js_engine._after_fork_in_child``); the zygote then returns, and its workers die
    with it (:func:`_die_with_parent`: a parent-death signal, and the lifeline pipe whose only writer
    is this process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    control = socket.socket(fileno=fd)
    lifeline, keep = os.pipe()  # a worker reads ``lifeline`` to its end of file: when this process is gone
    me = os.getpid()
    try:
        while True:
            try:
                head, fds, _flags, _addr = socket.recv_fds(control, 4, 1)
                if len(head) < 4 or not fds:
                    return
                size = _LEN.unpack(head)[0]
                body = b""
                while len(body) < size:
                    chunk = control.recv(size - len(body))
                    if not chunk:
                        return
                    body += chunk
            except OSError:
                return
            pid = os.fork()
            if pid == 0:
                status = 0
                try:
                    os.close(keep)
                    control.close()
                    config = orjson.loads(body)
                    _die_with_parent(me, bool(config.get("death_signal", True)))
                    worker_main(fds[0], config, lifeline)
                except BaseException:  # noqa: BLE001 - the last words of a worker go to stderr
                    traceback.print_exc()
                    status = 1
                finally:
                    os._exit(status)
            os.close(fds[0])
            try:
                control.sendall(struct.pack("<q", pid))
            except OSError:
                return
    finally:
        os.close(keep)  # now, not at interpreter exit: every worker's lifeline ends here


PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int, death_signal: bool = True) -> None:
    """Make this fresh worker die with ``parent`` (the zygote, single-threaded, so its only thread is
    the one the kernel's ``PR_SET_PDEATHSIG`` watches). Linux: SIGKILL on the parent's death, checked
    against ``getppid()`` afterwards (the parent may have died before the signal was armed). Everywhere:
    the lifeline (:func:`worker_main`). ``death_signal=False`` leaves only the lifeline (its test)."""
    if death_signal and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0))
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl: the lifeline remains
            pass
    if os.getppid() != parent:
        os._exit(1)


# -- the worker -------------------------------------------------------------------------------------


def worker_main(fd: int, config: dict, lifeline: int | None = None) -> None:
    """Serve one hook set on channel ``fd`` until it closes, or until ``lifeline`` ends.

    The engine runs on its own thread; this (main) thread waits for it to end or for ``lifeline`` (a
    pipe only the zygote writes) to reach its end of file, and then ends the process at once, whatever
    the engine is doing: the portable way a worker dies with its zygote, and so with its kernel. It can,
    because the QuickJS binding lets go of the GIL while JavaScript runs (a native built-in that never
    yields included)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    channel = Channel(socket.socket(fileno=fd))
    worker = Worker(channel, config)
    stack = max(THREAD_STACK, int(config.get("stack_limit", 0)) + 4 * 1024 * 1024)
    _limit_address_space(int(config.get("memory_limit", 0)) + stack)
    done, finished = os.pipe()

    def serve() -> None:
        try:
            worker.serve()
        finally:
            os.close(finished)

    previous = threading.stack_size()
    try:
        threading.stack_size(stack)
        thread = threading.Thread(target=serve, name="agentctx-quickjs-worker", daemon=True)
        thread.start()
    finally:
        threading.stack_size(previous)
    waiting = select.poll()
    waiting.register(done, select.POLLIN)
    if lifeline is not None:
        waiting.register(lifeline, select.POLLIN)
    while True:
        events = dict(waiting.poll())
        if done in events:
            thread.join()
            return
        if lifeline in events:
            os._exit(1)  # the zygote is gone, so is the kernel: nobody is waiting for this engine


def _limit_address_space(memory_limit: int) -> None:
    """``RLIMIT_AS``: what is mapped now, twice the JS heap limit, and :data:`ADDRESS_MARGIN`."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        mapped = 512 * 1024 * 1024
    limit = mapped + 2 * memory_limit + ADDRESS_MARGIN
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - a platform without RLIMIT_AS
        pass


def _limit_cpu(seconds: float) -> None:
    """Let this process use ``seconds`` more CPU (plus :data:`CPU_MARGIN`) before SIGXCPU ends it."""
    try:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = math.ceil(usage.ru_utime + usage.ru_stime + seconds + CPU_MARGIN)
        _old, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError):  # pragma: no cover
        pass


class Worker:
    """One QuickJS context: loads the source, runs each call, and stops JavaScript at the limits (its
    interrupt handler); the host calls it makes are :class:`~.js_host_calls.HostCalls`'."""

    def __init__(self, channel: Channel, config: dict) -> None:
        self.memory_limit = int(config["memory_limit"])
        self.stack_limit = int(config["stack_limit"])
        self.calls = HostCalls(channel, self._run_chunk)
        self.budget = self.calls.budget
        self.handler = _HANDLER(self._interrupt_handler)
        self.context: Any = None
        self.call_fn: Any = None
        self.take_abort: Any = None
        self.callback_fn: Any = None
        self.callback_stack = ""
        self.interruptible = False  # our interrupt handler is installed (else only a kill stops a call)

    # -- the loop -----------------------------------------------------------------------------

    def serve(self) -> None:
        channel = self.calls.channel
        while True:
            try:
                body = channel.recv()
            except (EOFError, OSError):
                return
            tag = body[:1]
            try:
                if tag == b"L":
                    self._load(orjson.loads(body[1:]))
                elif tag == b"C":
                    self._call(body[1:])
                elif tag == b"X":
                    return
                # N, R, A outside a call: stale (the call they were for already ended); ignored
            except (EOFError, OSError):
                return

    def _begin(self, limits: dict, *, sync: bool, checkers: list, caps: dict) -> None:
        self.calls.begin(sync=sync, checkers=checkers, caps=caps)
        self.callback_stack = ""
        _limit_cpu(float(limits["time_limit"]))
        self.budget.arm(float(limits["time_limit"]), float(limits["wall_limit"]))

    def _finish(self, outcome: dict, extra: str = "") -> None:
        calls = self.calls
        self.budget.disarm()
        if self.budget.tripped is not None:
            outcome["tripped"] = self.budget.tripped
            stack = self._abort_stack() or self.callback_stack
            if stack:
                outcome["abort_stack"] = stack
        if calls.internal is not None:
            outcome["internal"] = calls.internal
        outcome["notices"] = calls.delivered
        calls.in_call = False
        calls.ship(result=outcome, extra=extra.encode())

    def _abort_stack(self) -> str:
        if self.take_abort is None:
            return ""
        try:
            stack = self.take_abort()
        except Exception:  # noqa: BLE001 - only a better line number is lost
            return ""
        return stack if isinstance(stack, str) else ""

    # -- load and call ------------------------------------------------------------------------

    def _load(self, request: dict) -> None:
        self.calls.limits = request
        self._begin(request, sync=True, checkers=[], caps=request["caps"])
        phase = "prelude"
        outcome: dict
        try:
            context = self._new_context()
            api = context.eval(PRELUDE)
            self.call_fn, self.take_abort = api("call"), api("takeAbort")
            self.callback_fn = api("callback")
            register, source_of, define_global, builtin_error = (api("register"), api("sourceOf"),
                                                                  api("defineGlobal"), api("builtinError"))
            for name, value in request["globals"].items():
                if value is None:
                    define_global(name)
                else:
                    context.set(name, context.parse_json(value))
            phase = "source"
            context.eval(request["source"])
            phase = "discover"
            names = orjson.loads(context.eval(DISCOVER)(register, builtin_error))
            sources = {name: source_of(name) for name in names}
            outcome = {"loaded": {"names": names, "sources": sources, "interrupt_handler": self.interruptible}}
        except (_quickjs.JSException, _quickjs.StackOverflow) as error:
            outcome = {"load_error": {"text": str(error), "phase": phase}}
        except Exception as error:  # noqa: BLE001 - reported to the kernel as ours
            outcome = {"load_error": {"text": f"{type(error).__name__}: {error}", "phase": phase, "internal": True}}
        self._finish(outcome)

    def _new_context(self) -> Any:
        """A QuickJS context with the limits, our interrupt handler and the host call installed."""
        context = _quickjs.Context()
        context.set_memory_limit(self.memory_limit)
        context.set_max_stack_size(self.stack_limit)
        self.interruptible = self._install_interrupt(context)
        context.add_callable("__agentctx_host", self.calls.host)
        self.context = context
        return context

    def _call(self, body: bytes) -> None:
        head, payload = body.split(b"\n", 1)
        request = orjson.loads(head)
        checkers = [StandardAdapter(**options) for options in request["checks"]]
        self._begin(self.calls.limits | request, sync=request["sync"], checkers=checkers, caps=request["caps"])
        self.calls.in_call = True
        envelope = ""
        outcome: dict = {}
        try:
            members = request.get("members")  # the ctx members the host binds (yao/binding.py); seed: none
            if members is None:
                envelope = self.call_fn(request["name"], payload.decode())
            else:
                envelope = self.call_fn(request["name"], payload.decode(), members)
            if not isinstance(envelope, str):
                outcome["internal"] = f"the prelude returned {type(envelope).__name__}, not a string"
                envelope = ""
        except _quickjs.StackOverflow as error:
            outcome = {"engine": str(error), "stack_overflow": True}
        except _quickjs.JSException as error:
            outcome = {"engine": str(error)}
        except Exception as error:  # noqa: BLE001 - reported to the kernel as ours
            outcome = {"internal": f"{type(error).__name__}: {error}"}
        self._finish(outcome, envelope)

    def _run_chunk(self, args_json: str) -> str:
        """Run the waiting ``onChunk`` (during a bound call) with ``args_json``; its envelope."""
        try:
            envelope = self.callback_fn(args_json)
            if not isinstance(envelope, str):
                envelope = orjson.dumps({"ok": False, "error": "the prelude returned no answer"}).decode()
        except (_quickjs.JSException, _quickjs.StackOverflow) as error:  # stopped by a limit inside it
            if not self.callback_stack:
                self.callback_stack = str(error)  # where it stopped, for the call's error (see _finish)
            envelope = orjson.dumps({"ok": False, "stopped": str(error)}).decode()
        return envelope

    # -- the interrupt handler ----------------------------------------------------------------

    def _interrupt_handler(self, _runtime: Any, _opaque: Any) -> int:
        return 1 if self.budget.armed and self.budget.over() is not None else 0

    def _install_interrupt(self, context: Any) -> bool:
        lib = ctypes.CDLL(_quickjs.__file__)
        lib.JS_GetRuntimeOpaque.restype = ctypes.c_void_p
        lib.JS_GetRuntimeOpaque.argtypes = [ctypes.c_void_p]
        lib.JS_SetInterruptHandler.restype = None
        lib.JS_SetInterruptHandler.argtypes = [ctypes.c_void_p, _HANDLER, ctypes.c_void_p]
        # PyJsContextObject starts with PyObject_HEAD, then ``JSRuntime *runtime``; the binding stores
        # the context object as the runtime's opaque, which lets us verify the guess.
        runtime = ctypes.c_void_p.from_address(id(context) + 2 * ctypes.sizeof(ctypes.c_void_p)).value
        if not runtime or lib.JS_GetRuntimeOpaque(runtime) != id(context):
            return False  # the kernel warns; the process can still be killed at the limits
        lib.JS_SetInterruptHandler(runtime, self.handler, None)
        return True


if __name__ == "__main__":  # pragma: no cover - started by js_engine with the control socket's fd
    zygote_main(int(sys.argv[1]))
