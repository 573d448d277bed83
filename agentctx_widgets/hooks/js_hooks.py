"""Hooks written in JavaScript, run unchanged in QuickJS-NG, each hook set in its own worker process.

Inside the engine a hook sees ``ctx`` (the fields of :class:`HookContext` plus ``Send / SendGroup /
Flush`` and their lowercase aliases), ``time.Sleep(ms)``, ``console.log / info / warn / error / debug``,
``Date``, ``process.env`` (an empty object), the deprecated ``new Output(ctx)`` shim, and any extra
``globals``. There is no file system, no network and no environment. Data crosses as JSON.

**Where it runs.** The QuickJS context of a hook set lives in a worker process (``js_worker``), started
once and reused across calls, so that *anything* a hook runs can be stopped: a native built-in that
never yields (``Array.prototype.join.call({length: 2**53-1}, "")``) is ended by killing the process at
its limit plus ``js_engine.KILL_GRACE`` (0.25 s), and ``interrupt()`` (Ctrl-C) kills it at once. A
killed worker is replaced by a fresh one loaded from the source (global JS state resets, as after any
limit), and the next call works. The worker also runs under ``RLIMIT_AS`` and ``RLIMIT_CPU``, and dies
with its kernel (a SIGKILLed kernel included: see ``js_engine``).

**Forks.** A hook set used before an ``os.fork()`` works in both processes: the parent keeps its worker
and its JavaScript state; the child's first call starts a fresh worker loaded from the source (global JS
state starts again, as after a limit). Nothing the child does (a call, ``interrupt()``, ``close()``,
dropping the hook set) touches the parent's worker.

**Sends.** ``ctx.Send`` / ``SendGroup`` check the message in the worker with the same code ``Output.send``
runs (so a bad message still throws at the call, with Yao's text) and buffer it; the batch reaches the
turn's Output at ``ctx.Flush()`` (which therefore reaches the view at once, while the hook runs), before
every synchronous call into the kernel (a callable global, ``time.Sleep``), when it grows large, and at
the end of the call. A ``Flush`` is not waited for: a sink that fails during it is thrown at the first
``ctx.Flush()`` of the hook after the kernel reported it (at the latest, it fails the call). When a check
depends on the kernel's state — a ``strict`` Output, a sink with its own ``check`` other than the
``StandardAdapter``, a ``HookContext`` subclass — every Send is a synchronous round trip instead (exact,
slower: one pipe round trip each, ~100 µs on a small VM).

**Limits, per call** (and for loading the source): ``time_limit`` seconds of the call's time *outside*
``time.Sleep`` — JavaScript and every host call (``Send``, ``Flush`` reaching a slow view, a callable
global) count; ``wall_limit`` seconds overall, sleeps included (a ``time.Sleep`` that would end past it
fails at once); ``memory_limit`` bytes of JS heap; ``stack_limit`` bytes of JS stack. The deadline is
checked in every host call. **Caps, per turn** (per ``HookContext``: ``run_turn`` makes one per turn),
on what the kernel keeps of a hook's output: :data:`MAX_OUTPUT_MESSAGES` messages,
:data:`MAX_OUTPUT_BYTES` characters of their JSON, :data:`MAX_CONSOLE_BYTES` characters of console text,
and :data:`MAX_SEND_BYTES` for one message (a larger one is refused at its ``Send``, catchably, as
before). Past a cap, a limit or an interrupt the call fails — whatever the hook catches — with a
:class:`HookError` subclass naming the hook, the line and the limit or cap; the engine is rebuilt.

**Bound members.** A ``ctx`` with ``host_members()`` (today's Yao ctx, ``yao/binding.py``) sends a table of
method paths with each call; the prelude installs them on the hook's ``ctx`` and each call is one round
trip to ``ctx.host_call(path, args, on_chunk)``, whose exception text is the JavaScript ``Error``'s. An
``onChunk`` function stays in the worker: ``on_chunk`` sends each chunk back to it (a ``K`` frame) and
serves its own host calls until it answers, all under the call's limits.

**A sealed bridge.** The prelude captures what it uses before hook code runs; what a hook sends or
returns is serialized without the built-in prototypes' ``toJSON`` (see ``js_prelude.js``). Any failure
of ours is a ``HookError`` with code ``HOOK_INTERNAL`` naming the hook, and the engine is rebuilt, so
it never carries over to the next call.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import orjson

from ..output import Output
from ..output.adapters import StandardAdapter
from .errors import (
    HookError,
    HookLoadError,
    HookMemoryError,
    HookReturnError,
    HookStackOverflowError,
    HookThrewError,
    HookTimeoutError,
)
from .hook_context import HookContext
from .js_engine import KILL_GRACE, EngineThread, WorkerDied, WorkerProcess, WorkerSlot
from .js_worker import error_code, error_reply, host_error_text
from .returns import check_result

MB = 1024 * 1024
MAX_SEND_BYTES = 8 * MB
"""Default ``max_send_bytes``: the largest one message may be (characters of its JSON)."""
MAX_OUTPUT_MESSAGES = 100_000
"""Default ``max_output_messages``: messages a hook set may send in one turn (all its hook calls)."""
MAX_OUTPUT_BYTES = 64 * MB
"""Default ``max_output_bytes``: characters of JSON a hook set may send in one turn."""
MAX_CONSOLE_BYTES = 4 * MB
"""Default ``max_console_bytes``: characters of console text a hook set may write in one turn."""
INTERNAL = "HOOK_INTERNAL"
"""The ``code`` of a :class:`HookError` that is ours (the bridge or its process), not the hook's."""

_FRAME = re.compile(r"^\s*at (?:(\S+) )?\(?<input>:(\d+)(?::(\d+))?\)?\s*$")


class _Turn:
    """What one turn's hooks have sent so far (the caps are per turn)."""

    __slots__ = ("ctx", "messages", "chars", "console")

    def __init__(self, ctx: Any) -> None:
        try:
            self.ctx: Any = weakref.ref(ctx)
        except TypeError:  # an object without weak references: compared by identity while it lives
            self.ctx = lambda ctx=ctx: ctx
        self.messages = self.chars = self.console = 0


class _Call:
    """One conversation with the worker (a call or a load): its clock and what it has seen."""

    def __init__(self, hooks: JsHooks, hook: str | None, ctx: HookContext | None, turn: _Turn) -> None:
        self.hook, self.ctx, self.turn = hook, ctx, turn
        self.time_limit, self.wall_limit = hooks.time_limit, hooks.wall_limit
        self.start = self.answered = time.monotonic()
        self.slept = 0.0
        self.waits: list[float] = []  # when each running outside bound call last left JavaScript
        self.late: list[str] = []
        self.base = (turn.messages, turn.chars, turn.console)
        self.real_messages = self.real_chars = self.real_console = 0
        self.worker: WorkerProcess | None = None

    def over(self) -> str | None:
        now = time.monotonic()
        if now > self.start + self.wall_limit:
            return "wall"
        if now - self.start - self.slept > self.time_limit:
            return "time"
        return None

    def kill_at(self) -> float:
        limit = min(self.start + self.time_limit + self.slept, self.start + self.wall_limit)
        return max(limit, self.answered) + KILL_GRACE

    def limit_hit(self) -> str:
        return "wall" if time.monotonic() >= self.start + self.wall_limit else "time"


class _Stopped(Exception):
    """The worker was killed or died during a conversation: ``why`` is time, wall, interrupt, died or cap."""

    def __init__(self, why: str, detail: str = "") -> None:
        super().__init__(why)
        self.why, self.detail = why, detail


class JsHooks:
    """Hooks defined by one JavaScript source, in one QuickJS engine in its own worker process."""

    def __init__(
        self,
        source: str,
        *,
        time_limit: float = 5.0,
        wall_limit: float = 60.0,
        memory_limit: int = 64 * MB,
        stack_limit: int = 1 * MB,
        max_send_bytes: int = MAX_SEND_BYTES,
        max_output_messages: int = MAX_OUTPUT_MESSAGES,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        max_console_bytes: int = MAX_CONSOLE_BYTES,
        globals: dict[str, Any] | None = None,  # noqa: A002 - the brief's name
        sleep: Callable[[float], None] | None = None,
        echo_console: bool = False,
        result_check: Callable[..., dict | None] | None = None,
        first_line: int = 1,
        origin: str | None = None,
    ) -> None:
        if not isinstance(source, str):
            raise TypeError(f"hooks_from_js(source): expected a string, got {type(source).__name__}")
        self.source = source
        if not isinstance(first_line, int) or isinstance(first_line, bool) or first_line < 1:
            raise ValueError(f"hooks_from_js(first_line=…): expected an int ≥ 1, got {first_line!r}")
        self.first_line = first_line  # the source's line 1 is this line of its cell or file: errors count from it
        self.origin = origin  # where the source is, as its author knows it ("%%agentctx hooks greet")
        self.time_limit = float(time_limit)
        self.wall_limit = float(wall_limit)
        self.memory_limit = int(memory_limit)
        self.stack_limit = int(stack_limit)
        self.max_send_bytes = int(max_send_bytes)
        self.max_output_messages = int(max_output_messages)
        self.max_output_bytes = int(max_output_bytes)
        self.max_console_bytes = int(max_console_bytes)
        self.echo_console = echo_console
        self._result_check = result_check or check_result  # (hook, value, *, line); Yao hooks bring their own
        self._sleep = sleep or time.sleep
        self._globals = dict(globals or {})
        for name in self._globals:
            if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
                raise ValueError(f"hooks_from_js(globals=…): {name!r} is not a JavaScript identifier")
        self._global_specs = {name: None if callable(value) else orjson.dumps(value).decode()
                              for name, value in self._globals.items()}
        self._engine = EngineThread()
        self._slot = WorkerSlot()
        self._lock = threading.Lock()
        self._active_lock = threading.Lock()
        self._active: WorkerProcess | None = None  # the worker of the call running now (interrupt() kills it)
        self._interrupted = False
        self._console: list[dict] = []
        self._wake = threading.Event()  # set by interrupt(): ends a time.Sleep at once
        self._turn: _Turn | None = None
        self.names: frozenset[str] = frozenset()
        self.lines: dict[str, int] = {}  # hook name -> line of its definition
        self._sources: dict[str, str] = {}  # hook name -> its function's source text
        self.rebuilds = 0  # times the engine was rebuilt after a limit was hit
        try:
            self._engine.run(self._first_load)
        except HookError as error:
            self._slot.close()
            self._engine.close(self._slot.close)
            raise error.relocate(first_line=self.first_line, origin=self.origin)
        except BaseException:
            self._slot.close()  # a KeyboardInterrupt while loading: the worker is stopped at once
            self._engine.close(self._slot.close)
            raise
        weakref.finalize(self, _finalize, self._engine, self._slot)  # neither holds a reference back to self
        _HOOK_SETS.add(self)

    def _after_fork(self) -> None:
        """(In a forked child, from the at-fork hook.) The parent's engine thread may have held these at
        the fork; the worker and the thread are dropped by ``js_engine``'s hook."""
        self._lock = threading.Lock()
        self._active_lock = threading.Lock()
        self._active, self._interrupted = None, False
        self._wake = threading.Event()

    @property
    def worker_pid(self) -> int | None:
        """The pid of the worker process running this hook set's engine (``None`` while there is none)."""
        worker = self._slot.worker
        return None if worker is None or worker.killed else worker.pid

    # -- the Hooks protocol -------------------------------------------------------------------

    async def call(self, name: str, ctx: HookContext, *args: Any) -> dict | None:
        """Run hook ``name`` on the engine thread without blocking the event loop."""
        try:
            return await asyncio.wrap_future(self._engine.submit(self._call_locked, name, ctx, args))
        except HookError as error:
            raise error.relocate(first_line=self.first_line, origin=self.origin) from None

    def take_console(self) -> list[dict]:
        lines, self._console = self._console, []
        return lines

    def interrupt(self) -> None:
        """(Any thread; the runner calls it on Ctrl-C.) Stop the running hook at once: its worker process
        is killed (a ``time.Sleep`` in the kernel is woken) and the call fails with a
        :class:`HookTimeoutError`; a fresh engine serves the next call. Does nothing between calls."""
        self._wake.set()
        with self._active_lock:
            if self._active is not None:
                self._interrupted = True
                self._active.kill()

    def close(self) -> None:
        """Stop the engine (its thread and its process). The hooks cannot be called afterwards."""
        self._engine.close(self._slot.close)

    # -- engine thread: loading ---------------------------------------------------------------

    def _first_load(self) -> None:
        loaded = self._start_worker()
        names = loaded["names"]
        self.names = frozenset(names)
        self._sources = dict(loaded["sources"])
        self.lines = {name: _line_in(self.source, text) for name, text in self._sources.items()}
        if not loaded.get("interrupt_handler", True):
            warnings.warn("agentctx_widgets: cannot install the QuickJS interrupt handler on this quickjs build; "
                          "a JavaScript hook past its limits is stopped by killing its process",
                          RuntimeWarning, stacklevel=4)

    def _start_worker(self) -> dict:
        """A fresh worker with the source loaded (in the slot); raises HookLoadError."""
        self._slot.close()
        try:
            worker = WorkerProcess(memory_limit=self.memory_limit, stack_limit=self.stack_limit)
        except OSError as error:
            raise HookLoadError(f"could not start the JavaScript engine's process: {error}", code=INTERNAL) from None
        self._slot.worker = worker
        request = {
            "source": self.source, "globals": self._global_specs, "time_limit": self.time_limit,
            "wall_limit": self.wall_limit, "max_send_bytes": self.max_send_bytes,
            "caps": self._caps_left(_Turn(self)),
        }
        call = _Call(self, None, None, _Turn(self))
        try:
            result, _ = self._converse(worker, b"L" + orjson.dumps(request), call)
        except _Overrun:
            self._slot.close()
            raise HookLoadError("the top-level code ran past the time limit in code that does not yield (a "
                                "built-in on a huge array-like?); its engine process was stopped",
                                code="HOOK_TIMEOUT") from None
        except WorkerDied as died:
            self._slot.close()
            raise HookLoadError(f"its JavaScript engine process ended while loading the source ({died})",
                                code=INTERNAL) from None
        except Exception as error:
            self._slot.close()
            raise HookLoadError(f"internal error in the JavaScript bridge while loading: {type(error).__name__}: "
                                f"{error}", code=INTERNAL) from None
        tripped = result.get("tripped")
        if "load_error" in result or tripped is not None:
            self._slot.close()
            problem = result.get("load_error") or {}
            raise _load_error(problem.get("text", ""), tripped, problem.get("phase", "source"),
                              bool(problem.get("internal")))
        return result["loaded"]

    def _ready_worker(self) -> WorkerProcess:
        worker = self._slot.worker
        if worker is None or worker.killed:
            self._start_worker()
            worker = self._slot.worker
        assert worker is not None
        return worker

    def _replace_worker(self, worker: WorkerProcess | None) -> None:
        """After a limit, a kill or an internal failure: drop ``worker``; a fresh one is loaded right after
        this call (on the engine thread, before the next call). Once per worker."""
        if worker is None or self._slot.worker is not worker:
            if worker is not None:
                worker.close()
            return
        self.rebuilds += 1
        self._slot.close()
        try:
            self._engine.submit(self._rebuild_quietly)
        except RuntimeError:  # closed
            pass

    def _rebuild_quietly(self) -> None:
        if self._slot.worker is None:
            try:
                self._start_worker()
            except HookError:
                pass  # the next call tries again and reports it

    # -- engine thread: a call ----------------------------------------------------------------

    def _call_locked(self, name: str, ctx: HookContext, args: tuple) -> dict | None:
        with self._lock:
            return self._call(name, ctx, args)

    def _call(self, name: str, ctx: HookContext, args: tuple) -> dict | None:
        if name not in self.names:
            raise KeyError(f"the JavaScript source defines no {name} hook (it defines {sorted(self.names)})")
        payload = orjson.dumps([ctx.to_json(), *args], default=_json_default)
        try:
            worker = self._ready_worker()
        except HookLoadError as error:
            raise HookLoadError(f"its engine could not be rebuilt: {error.detail}", hook=name, line=error.line,
                                code=error.code) from None
        turn = self._turn_of(ctx)
        sync, checks = _send_mode(ctx)
        header = {"name": name, "sync": sync, "checks": checks, "caps": self._caps_left(turn)}
        members = _bound_members(ctx)
        if members is not None:
            header["members"] = orjson.dumps(members).decode()
        call = _Call(self, name, ctx, turn)
        call.worker = worker
        self._wake.clear()
        with self._active_lock:
            self._active, self._interrupted = worker, False
        try:
            result, extra = self._converse(worker, b"C" + orjson.dumps(header) + b"\n" + payload, call)
        except _Overrun as over:
            worker.kill()
            raise self._stopped(name, call, over.why, over.detail) from None
        except WorkerDied as died:
            raise self._stopped(name, call, "interrupt" if self._interrupted else "died", str(died)) from None
        except Exception as error:  # ours: a frame we could not read, a bug
            worker.kill()
            self._replace_worker(call.worker)
            raise self._internal(name, f"{type(error).__name__}: {error}") from None
        finally:
            with self._active_lock:
                self._active = None
        if worker.killed:  # an interrupt that came as the call ended: its result stands, the engine is new
            self._replace_worker(call.worker)
        return self._outcome(name, call, result, extra)

    def _stopped(self, name: str, call: _Call, why: str, detail: str) -> HookError:
        self._replace_worker(call.worker)
        line = self._running_line(name, None)
        if why == "interrupt":
            return HookTimeoutError("was interrupted (the turn was stopped)", hook=name, line=line)
        if why == "cap":
            return HookMemoryError(detail, hook=name, line=line)
        if why in ("time", "wall"):
            limit = (f"its {self.time_limit} s time limit" if why == "time"
                     else f"its {self.wall_limit} s wall-clock limit")
            if detail == "sending":
                return HookTimeoutError(f"ran longer than {limit} while the kernel applied what it sent (its engine "
                                        "process was stopped)", hook=name, line=line)
            return HookTimeoutError(f"ran longer than {limit} in code that does not yield (a built-in on a huge "
                                    "array-like?); its engine process was stopped", hook=name, line=line)
        return HookError(f"its JavaScript engine process ended unexpectedly ({detail}); a new one serves the "
                         "next call", hook=name, line=line, code=INTERNAL)

    def _outcome(self, name: str, call: _Call, result: dict, extra: bytes) -> dict | None:
        tripped = result.get("tripped")
        if tripped is not None:
            self._replace_worker(call.worker)
            raise self._tripped(name, tripped, result)
        if "engine" in result:
            self._replace_worker(call.worker)
            if result.get("stack_overflow"):
                raise _stack_overflow(self, name, self._running_line(name, _user_line(result["engine"])),
                                      stack=result["engine"])
            raise self._engine_failure(name, result["engine"], None)
        if "internal" in result:
            self._replace_worker(call.worker)
            raise self._internal(name, result["internal"])
        try:
            reply = orjson.loads(extra)
            if not isinstance(reply, dict) or "ok" not in reply and "internal" not in reply:
                raise ValueError(f"the envelope is {extra[:80]!r}")
        except ValueError as error:
            self._replace_worker(call.worker)
            raise self._internal(name, f"an unreadable result ({error})") from None
        if "internal" in reply:
            self._replace_worker(call.worker)
            raise self._internal(name, str(reply["internal"]))
        late = call.late[int(result.get("notices", 0)):]
        if reply["ok"]:
            if late:
                raise HookThrewError(f"Error: {late[0]}", hook=name, line=self.lines.get(name), name="Error")
            return self._result_check(name, reply.get("value"), line=self.lines.get(name))
        if "badReturn" in reply:
            raise HookReturnError(f"returned {reply['badReturn']}", hook=name, line=self.lines.get(name))
        failure = self._thrown(name, reply["thrown"])
        if isinstance(failure, (HookStackOverflowError, HookMemoryError)):
            self._replace_worker(call.worker)
        raise failure

    def _tripped(self, name: str, tripped: dict, result: dict) -> HookError:
        """The worker stopped the call itself: a limit, a cap, or a failure of ours in a host call."""
        kind = tripped.get("kind")
        stack = result.get("abort_stack") or ""
        engine = result.get("engine") or ""
        line = _user_line(stack) if stack else None
        if line is None:
            line = self._running_line(name, _user_line(engine))
        if kind == "cap":
            return HookMemoryError(str(tripped.get("message")), hook=name, line=line, stack=stack or engine)
        if kind == "internal":
            return self._internal(name, str(tripped.get("message")), line=line)
        if kind == "wall" and tripped.get("message"):
            return HookTimeoutError(str(tripped["message"]), hook=name, line=line, stack=stack or engine)
        return self._engine_failure(name, engine or stack, kind, line=line)

    def _internal(self, name: str | None, detail: str, line: int | None = None) -> HookError:
        return HookError(f"internal error in the JavaScript bridge (ours, not the hook's): {detail}; the engine "
                         "was restarted", hook=name, line=line, code=INTERNAL)

    # -- engine thread: talking to the worker -------------------------------------------------

    def _converse(self, worker: WorkerProcess, request: bytes, call: _Call) -> tuple[dict, bytes]:
        """Send ``request``; serve the worker's frames (sends, console, ops) until its result."""
        worker.send(request)
        head, extra = self._serve_until(worker, call, "result")
        return head["result"], extra

    def _serve_until(self, worker: WorkerProcess, call: _Call, key: str) -> tuple[dict, bytes]:
        """Serve the worker's frames (sends, console, host ops) under the call's limits until one carries
        ``key`` (``result``: the call ended; ``callback``: an ``onChunk`` returned); return that frame."""
        while True:
            body = worker.recv(max(call.kill_at() - time.monotonic(), 0.0))
            if body is None:
                raise _Overrun(call.limit_hit())
            if body[:1] != b"F":
                raise ValueError(f"an unknown frame {body[:1]!r}")
            head_bytes, items, extra = body[1:].split(b"\n", 2)
            head = orjson.loads(head_bytes)
            self._absorb(worker, call, head, items)
            op = head.get("op")
            if op is not None:
                answer = self._answer(call, op, extra)
                call.answered = time.monotonic()
                worker.send(answer)
            if key in head:
                return head, extra
            if "result" in head:
                raise ValueError("the call ended while its onChunk was running")

    def _absorb(self, worker: WorkerProcess, call: _Call, head: dict, items: bytes) -> None:
        """Apply a frame's console lines and batch of sends (and its flush) to the turn."""
        for level, text in head.get("console", ()):
            call.real_console += len(text)
            self._record_console(call.hook, level, text)
        if items != b"[]":
            batch = orjson.loads(items)
            call.real_messages += len(batch)
            call.real_chars += len(items)
            ctx = call.ctx
            if ctx is None:
                raise ValueError("sends outside a call")
            for index, (kind, message) in enumerate(batch):
                try:
                    if kind == "s":
                        ctx.Send(message)
                    else:
                        ctx.SendGroup(message)
                except Exception as error:  # noqa: BLE001 - the worker checked it: reported late, at the next Flush
                    self._late(worker, call, host_error_text("send" if kind == "s" else "send_group", error))
                if index & 255 == 255 and time.monotonic() > call.kill_at():
                    raise _Overrun(call.limit_hit(), "sending")
        if head.get("flush") and call.ctx is not None:
            try:
                call.ctx.Flush()
            except Exception as error:  # noqa: BLE001 - a sink failed: thrown at the hook's next Flush
                self._late(worker, call, host_error_text("flush", error))
        turn, (messages, chars, console) = call.turn, call.base
        turn.messages = messages + int(head.get("sent", 0))
        turn.chars = chars + int(head.get("chars", 0))
        turn.console = console + int(head.get("console_chars", 0))
        # a backstop on what really arrived (the worker stops a hook at the caps itself)
        if messages + call.real_messages > self.max_output_messages:
            raise _Overrun("cap", self._cap_texts()["messages_text"])
        if chars + call.real_chars > 2 * self.max_output_bytes + 65536:
            raise _Overrun("cap", self._cap_texts()["chars_text"])
        if console + call.real_console > self.max_console_bytes:
            raise _Overrun("cap", self._cap_texts()["console_text"])

    def _late(self, worker: WorkerProcess, call: _Call, text: str) -> None:
        call.late.append(text)
        try:
            worker.send(b"N" + text.encode())
        except WorkerDied:
            pass

    def _answer(self, call: _Call, op: dict, extra: bytes) -> bytes:
        """The reply to a synchronous host call (the deadline is checked first)."""
        over = call.over()
        if over is not None:
            return b"A" + orjson.dumps({"kind": over})
        kind = op.get("op")
        if kind == "global":
            name, args = orjson.loads(extra)
            try:
                value = self._globals[name](*args)
                return b"R" if value is None else b"R" + orjson.dumps([0, value])
            except Exception as error:  # noqa: BLE001 - thrown in JavaScript, with the Python class's name
                return b"R" + error_reply(host_error_text("global", error), type(error).__name__).encode()
        if kind == "sleep":
            seconds = float(op["seconds"])
            left = call.start + call.wall_limit - time.monotonic()
            if seconds > left:
                return b"A" + orjson.dumps({"kind": "wall", "message": (
                    f"time.Sleep({seconds * 1000:g}) would end past its {self.wall_limit} s wall-clock limit "
                    f"({max(left, 0):.2f} s left)")})
            started = time.monotonic()
            try:
                if self._sleep is time.sleep:
                    self._wake.wait(seconds)  # an interrupt ends the sleep at once
                else:
                    self._sleep(seconds)
            except Exception as error:  # noqa: BLE001 - a replacement sleep that failed: thrown in JavaScript
                return b"R" + error_reply(host_error_text("sleep", error)).encode()
            finally:
                call.slept += time.monotonic() - started
            return b"R"
        ctx = call.ctx
        if kind == "yao":
            return self._bound_call(call, extra, bool(op.get("outside")))
        if kind in ("send", "send_group", "flush"):
            try:
                if ctx is None:
                    raise RuntimeError("ctx is only usable while a hook runs")
                if kind == "flush":
                    ctx.Flush()
                else:
                    message = orjson.loads(extra)[0]
                    (ctx.Send if kind == "send" else ctx.SendGroup)(message)
                    call.real_messages += 1
                    call.real_chars += len(extra)
            except Exception as error:  # noqa: BLE001 - thrown in JavaScript at the call
                return b"R" + error_reply(host_error_text(kind, error), code=error_code(error)).encode()
            return b"R"
        return b"R" + error_reply(f"no host call {kind!r}").encode()

    def _bound_call(self, call: _Call, extra: bytes, outside: bool = False) -> bytes:
        """A method of a member ``ctx.host_members()`` bound (today's Yao ctx): ``ctx.host_call`` runs it;
        what it raises is thrown in JavaScript as a plain ``Error`` with its text (Yao's, unchanged). When
        the hook passed an ``onChunk`` function, ``host_call`` gets a Python stand-in that calls it in
        the worker while the call runs (see :meth:`_callback`). An ``outside`` call (a model, an agent)
        waits as ``time.Sleep`` does: only its callbacks' time is the hook's."""
        ctx = call.ctx
        host_call = getattr(ctx, "host_call", None)
        if not callable(host_call):
            return b"R" + error_reply("ctx: this ctx binds no members").encode()
        failure: list[BaseException] = []
        if outside:
            call.waits.append(time.monotonic())
        try:
            path, args, chunks = orjson.loads(extra)
            on_chunk = self._callback(call, failure) if chunks else None
            value = host_call(path, args, on_chunk)
            reply = b"R" + orjson.dumps([0, {"v": value}], default=_json_default)
        except Exception as error:  # noqa: BLE001 - thrown in JavaScript at the call
            reply = b"R" + error_reply(str(error)).encode()
        finally:
            if outside:
                call.slept += time.monotonic() - call.waits.pop()
        if failure:  # the worker stopped or died while onChunk ran: that ends the call, as any limit does
            raise failure[0]
        return reply

    def _callback(self, call: _Call, failure: list[BaseException]) -> Callable[..., int]:
        """``onChunk`` for Python: a ``K`` frame runs the hook's function in the worker, whose host calls
        are served here meanwhile (under the call's limits); its number comes back (a throw: 1, stop)."""

        def on_chunk(*args: Any) -> int:
            if failure:
                return 1
            worker = call.worker
            assert worker is not None
            if call.waits:
                call.slept += time.monotonic() - call.waits[-1]
            try:
                worker.send(b"K" + orjson.dumps(list(args), default=_json_default))
                head, _ = self._serve_until(worker, call, "callback")
                answer = orjson.loads(head["callback"])
            except BaseException as error:  # noqa: BLE001 - raised again once the host call returns
                failure.append(error)
                return 1
            finally:
                if call.waits:
                    call.waits[-1] = time.monotonic()
            if answer.get("ok"):
                return int(answer.get("value") or 0)
            if "error" in answer:
                self._record_console(call.hook, "warn", f"onChunk threw {answer['error']}; the stream stopped "
                                     "(Yao stops on a callback error and does not rethrow it)")
            return 1

        return on_chunk

    def _record_console(self, hook: str | None, level: str, text: str) -> None:
        line = {"level": level, "hook": hook, "text": text}
        self._console.append(line)
        if self.echo_console:
            print(f"[{hook or 'js'}] console.{level}: {text}", file=sys.stderr)

    # -- caps ----------------------------------------------------------------------------------

    def _turn_of(self, ctx: Any) -> _Turn:
        turn = self._turn
        if turn is None or turn.ctx() is not ctx:
            self._turn = turn = _Turn(ctx)
        return turn

    def _cap_texts(self) -> dict[str, str]:
        return {
            "messages_text": f"sent more than {self.max_output_messages:,} output messages in one turn "
                             "(the max_output_messages cap)",
            "chars_text": f"sent more than {self.max_output_bytes:,} bytes of output messages in one turn "
                          "(the max_output_bytes cap)",
            "console_text": f"wrote more than {self.max_console_bytes:,} bytes to the console in one turn "
                            "(the max_console_bytes cap)",
        }

    def _caps_left(self, turn: _Turn) -> dict:
        return {"messages": self.max_output_messages - turn.messages, "chars": self.max_output_bytes - turn.chars,
                "console": self.max_console_bytes - turn.console, **self._cap_texts()}

    # -- turning engine failures into HookErrors --------------------------------------------

    def _engine_failure(self, hook: str, text: str, tripped: str | None, line: int | None = None) -> HookError:
        """An exception the engine raised (a limit, out of memory, the stack): the first matching row of
        :data:`_ENGINE_FAILURES` decides the error."""
        if line is None:
            line = self._running_line(hook, _user_line(text))
        first = text.split("\n", 1)[0]
        for matches, build in _ENGINE_FAILURES:
            if matches(tripped, first):
                return build(self, hook, line, text, first)
        return HookThrewError(first, hook=hook, line=line, stack=text)

    def _thrown(self, hook: str, thrown: dict) -> HookError:
        """A value the hook threw: an Error (maybe the engine's stack or memory error), or anything else."""
        if thrown["isError"]:
            stack = thrown.get("stack") or ""
            line = _user_line(stack) or self.lines.get(hook)
            for matches, build in _THROWN_ERRORS:
                if matches(thrown["message"]):
                    return build(self, hook, line, stack, thrown["name"])
            member = _callee(self.source, stack) if thrown["message"] == "not a function" else None
            detail = f"{thrown['name']}: {thrown['message']}" + (f" ({member})" if member else "")
            return HookThrewError(detail, hook=hook, line=line, name=thrown["name"], code=thrown.get("code"),
                                  stack=stack, member=member)
        return HookThrewError(
            f"threw a non-Error value ({thrown['name']}): {thrown['message']}",
            hook=hook, line=self._throw_line(hook), name=thrown["name"], code=thrown.get("code"),
            value=thrown.get("value"),
        )

    def _span(self, hook: str) -> tuple[int, list[str]] | None:
        """(first line, source lines) of the hook's own function, from the text the engine holds."""
        start = self.lines.get(hook)
        if start is None:
            return None
        return start, self._sources.get(hook, "").split("\n")

    def _throw_line(self, hook: str) -> int | None:
        """A thrown non-Error carries no stack: name the hook's first ``throw`` statement."""
        span = self._span(hook)
        if span is None:
            return None
        start, lines = span
        return next((start + offset for offset, text in enumerate(lines) if re.search(r"\bthrow\b", text)), start)

    def _running_line(self, hook: str, line: int | None) -> int | None:
        """The line a limit stopped. QuickJS records a frame's position only at calls and some jumps, so
        a loop that calls nothing is reported at its function's first line or at an enclosing statement:
        then name the first loop of the hook from that line on."""
        span = self._span(hook)
        if span is None or line is None:
            return line or (span[0] if span else None)
        start, lines = span
        offset = line - start
        if not 0 <= offset < len(lines) or _LOOP.search(lines[offset]):
            return line
        loop = next((start + at for at in range(offset, len(lines)) if _LOOP.search(lines[at])), None)
        return loop or line


class _Overrun(Exception):
    """A conversation went past its limits (``why``: time, wall) or a cap (``cap``) without the worker
    stopping it: the worker is killed."""

    def __init__(self, why: str, detail: str = "") -> None:
        super().__init__(why)
        self.why, self.detail = why, detail


_LOOP = re.compile(r"\b(?:while|for|do)\b")


_ENGINE_FAILURES: list[tuple[Callable[[str | None, str], bool], Callable[..., HookError]]] = [
    (lambda tripped, first: tripped == "interrupt",
     lambda self, hook, line, text, first: HookTimeoutError("was interrupted (the turn was stopped)",
                                                           hook=hook, line=line, stack=text)),
    (lambda tripped, first: tripped == "time",
     lambda self, hook, line, text, first: HookTimeoutError(
         f"ran longer than its {self.time_limit} s time limit (an endless loop?)", hook=hook, line=line, stack=text)),
    (lambda tripped, first: tripped == "wall",
     lambda self, hook, line, text, first: HookTimeoutError(
         f"ran longer than its {self.wall_limit} s wall-clock limit", hook=hook, line=line, stack=text)),
    (lambda tripped, first: "out of memory" in first,
     lambda self, hook, line, text, first: _out_of_memory(self, hook, line, stack=text)),
    (lambda tripped, first: "stack" in first.lower(),
     lambda self, hook, line, text, first: _stack_overflow(self, hook, line, stack=text)),
]
"""(matches(tripped, first line of the engine's message), build(...)) — the first row that matches wins."""

_THROWN_ERRORS: list[tuple[Callable[[str], bool], Callable[..., HookError]]] = [
    (lambda message: "Maximum call stack size exceeded" in message,
     lambda self, hook, line, stack, name: _stack_overflow(self, hook, line, name=name, stack=stack)),
    (lambda message: "out of memory" in message,
     lambda self, hook, line, stack, name: _out_of_memory(self, hook, line, name=name, stack=stack)),
]
"""Errors a hook "threw" that are really the engine's limits (QuickJS raises them as catchable errors)."""


def _stack_overflow(hooks: JsHooks, hook: str, line: int | None, **details: Any) -> HookStackOverflowError:
    return HookStackOverflowError(
        f"exceeded the {hooks.stack_limit:,}-byte stack limit (runaway recursion?)", hook=hook, line=line, **details)


def _out_of_memory(hooks: JsHooks, hook: str, line: int | None, **details: Any) -> HookMemoryError:
    return HookMemoryError(f"ran out of its {hooks.memory_limit:,}-byte memory limit", hook=hook, line=line,
                           **details)


_HOOK_SETS: weakref.WeakSet[JsHooks] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for hooks in list(_HOOK_SETS):
        hooks._after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _finalize(engine: EngineThread, slot: WorkerSlot) -> None:
    """A dropped (or, at exit, a still living) hook set: its worker is killed now, its thread ends."""
    slot.close()
    engine.close(slot.close)


def _bound_members(ctx: Any) -> dict | None:
    """The table of members ``ctx`` binds in the hook (``host_members()``, yao/binding.py), if it has one."""
    members = getattr(ctx, "host_members", None)
    return members() if callable(members) else None


def _send_mode(ctx: Any) -> tuple[bool, list[dict]]:
    """(sync, checks): whether every Send must be a round trip to the kernel, and the client checks the
    worker runs itself. Batched sends need checks that depend on the message alone: a plain
    ``HookContext`` on a non-strict ``Output`` whose only checking sink is a ``StandardAdapter``."""
    if type(ctx) is not HookContext:
        return True, []
    output = ctx.output
    if output is None or type(output) is not Output or output.strict:
        return True, []
    checks = []
    for sink in output.sinks:
        if callable(getattr(sink, "check", None)) or callable(getattr(sink, "check_group", None)):
            if type(sink) is not StandardAdapter:
                return True, []
            config = sink.config
            checks.append({"base_url": config.base_url, "locale": config.locale, "reasoning": config.reasoning})
    return False, checks


def hooks_from_js(
    source: str,
    *,
    time_limit: float = 5.0,
    wall_limit: float = 60.0,
    memory_limit: int = 64 * MB,
    stack_limit: int = 1 * MB,
    max_send_bytes: int = MAX_SEND_BYTES,
    max_output_messages: int = MAX_OUTPUT_MESSAGES,
    max_output_bytes: int = MAX_OUTPUT_BYTES,
    max_console_bytes: int = MAX_CONSOLE_BYTES,
    globals: dict[str, Any] | None = None,  # noqa: A002
    sleep: Callable[[float], None] | None = None,
    echo_console: bool = False,
    first_line: int = 1,
    origin: str | None = None,
) -> JsHooks:
    """Load hooks from JavaScript source (the seed's ``function Create(ctx, messages) {…}``).

    ``globals`` adds names to the engine: a Python callable becomes a JS function (arguments and result
    cross as JSON; it runs in the kernel, synchronously), any other value is set as JSON data. ``sleep``
    replaces the ``time.sleep`` behind ``time.Sleep`` (tests record instead of sleeping). Console lines
    are collected into ``TurnResult.console``; ``echo_console=True`` also prints them to stderr. Limits
    and caps: see the module docstring (``max_output_messages`` / ``max_output_bytes`` /
    ``max_console_bytes`` are per turn). Raises :class:`HookLoadError` for a syntax error, a top-level
    throw, or top-level code past the limits.

    ``first_line`` is the line of its cell or file the source starts on (a ``%%agentctx hooks`` cell's
    body starts on line 2), ``origin`` what to call that place: every error then names the line as the
    author's editor numbers it (``Create (%%agentctx hooks greet, line 3): …``).
    """
    return JsHooks(
        source,
        time_limit=time_limit,
        wall_limit=wall_limit,
        memory_limit=memory_limit,
        stack_limit=stack_limit,
        max_send_bytes=max_send_bytes,
        max_output_messages=max_output_messages,
        max_output_bytes=max_output_bytes,
        max_console_bytes=max_console_bytes,
        globals=globals,
        sleep=sleep,
        echo_console=echo_console,
        first_line=first_line,
        origin=origin,
    )


def _callee(source: str, stack: str) -> str | None:
    """What a call that is "not a function" called (``ctx.Sendd``): QuickJS names no callee, but its first
    user frame's line and column point at it, so it is read back from the hook's source (:func:`member_at`)."""
    position = _user_position(stack)
    return member_at(source, *position) if position and position[1] else None


def _user_line(stack: str) -> int | None:
    """The line of the first stack frame that is not ours (``__agentctx_*``)."""
    position = _user_position(stack)
    return position[0] if position else None


def _user_position(stack: str) -> tuple[int, int] | None:
    """(line, column) of the first stack frame that is not ours; column 0 when the frame has none."""
    for text in stack.split("\n"):
        match = _FRAME.match(text)
        if match and not (match.group(1) or "").startswith("__agentctx"):
            return int(match.group(2)), int(match.group(3) or 0)
    return None


_CALLEE = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\??\.\s*[A-Za-z_$][\w$]*)*(?=\s*\()")
_CHAIN_END = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\??\.\s*[A-Za-z_$][\w$]*)*\s*$")


def member_at(source: str, line: int, column: int) -> str | None:
    """What a call at ``line``:``column`` of ``source`` called (``ctx.Sendd``), or None.

    QuickJS puts a failed call's position on the called member (``ctx.|Sendd(``), at the callee, or just
    inside its parentheses, so the callee is the last ``name.name(`` on the line starting at or before the
    column. A chain continued from the line above (``ctx\n  .Sendd(``) takes that line's end with it."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    found = [match for match in _CALLEE.finditer(text) if match.start() < max(column, 1)]
    if not found:
        return None
    match = found[-1]
    callee = re.sub(r"\s+", "", match.group())
    before = text[:match.start()].rstrip()
    if before.endswith(".") and not before[:-1].strip() and line > 1:  # ".Sendd(" starts this line
        above = _CHAIN_END.search(lines[line - 2])
        if above:
            callee = re.sub(r"\s+", "", above.group()) + "." + callee
    return callee


def _line_in(source: str, function_text: str) -> int | None:
    at = source.find(function_text)
    return source.count("\n", 0, at) + 1 if at >= 0 else None


def _load_error(text: str, tripped: dict | None, phase: str, internal: bool = False) -> HookLoadError:
    first = text.split("\n", 1)[0]
    if internal:
        return HookLoadError(f"internal error in the JavaScript bridge while loading ({phase}): {first}", code=INTERNAL)
    kind = (tripped or {}).get("kind")
    if kind == "internal":
        return HookLoadError(f"internal error in the JavaScript bridge while loading: {tripped.get('message')}",
                             code=INTERNAL)
    if phase in ("prelude", "discover") and kind is None:
        return HookLoadError(f"the {phase} failed: {first}")
    line = _user_line(text)
    if kind == "cap":
        return HookLoadError(f"the top-level code {tripped['message']}", line=line, code="HOOK_MEMORY")
    if kind == "wall" and tripped.get("message"):
        return HookLoadError(f"the top-level code ran past the wall-clock limit: {tripped['message']}", line=line,
                             code="HOOK_TIMEOUT")
    if kind is not None:
        return HookLoadError("the top-level code ran past the time limit", line=line, code="HOOK_TIMEOUT")
    return HookLoadError(f"could not load the source: {first}", line=line)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot pass {type(value).__name__} to a JavaScript hook as JSON: {value!r:.80}")


__all__ = ["MAX_CONSOLE_BYTES", "MAX_OUTPUT_BYTES", "MAX_OUTPUT_MESSAGES", "MAX_SEND_BYTES", "JsHooks",
           "hooks_from_js"]
