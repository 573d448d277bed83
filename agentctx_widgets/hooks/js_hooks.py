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

**Limits, per call** (and for loading the source; one :class:`~.js_limits.Limits` value, or its fields
as keyword arguments): ``time_limit`` seconds of the call's time *outside*
``time.Sleep`` — JavaScript and every host call (``Send``, ``Flush`` reaching a slow view, a callable
global) count; ``wall_limit`` seconds overall, sleeps included (a ``time.Sleep`` that would end past it
fails at once); ``memory_limit`` bytes of JS heap; ``stack_limit`` bytes of JS stack. The deadline is
checked in every host call. **Caps, per turn** (per ``HookContext``: ``run_turn`` makes one per turn),
on what the kernel keeps of a hook's output: :data:`MAX_OUTPUT_MESSAGES` messages,
:data:`MAX_OUTPUT_BYTES` characters of their JSON, :data:`MAX_CONSOLE_BYTES` characters of console text,
and :data:`MAX_SEND_BYTES` for one message (a larger one is refused at its ``Send``, catchably, as
before). Past a cap, a limit or an interrupt the call fails — whatever the hook catches — with a
:class:`HookError` subclass naming the hook, the line and the limit or cap (``js_failures``); the
engine is rebuilt. The kernel's side of each call is ``js_bridge``; the worker's, ``js_worker`` and
``js_host_calls``.

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
import copy
import os
import re
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any, Unpack

import orjson

from ..output import Output
from ..output.adapters import StandardAdapter
from .errors import HookError, HookLoadError, HookMemoryError, HookReturnError, HookStackOverflowError, HookThrewError
from .hook_context import HookContext
from .js_bridge import Bridge, Conversation, Overrun, TurnTally, json_default
from .js_engine import EngineThread, WorkerDied, WorkerProcess, WorkerSlot
from .js_failures import Diagnosis, internal, member_at, user_line
from .js_keeper import WorkerKeeper
from .js_limits import MAX_CONSOLE_BYTES, MAX_OUTPUT_BYTES, MAX_OUTPUT_MESSAGES, MAX_SEND_BYTES, MB, LimitOptions, Limits
from .returns import check_result


class JsHooks:
    """Hooks defined by one JavaScript source, in one QuickJS engine in its own worker process.

    ``limits`` (a :class:`Limits`) and the keyword arguments named as its fields (``time_limit=…``)
    bound each call and each turn; the rest are ``hooks_from_js``'s."""

    def __init__(
        self,
        source: str,
        *,
        limits: Limits | None = None,
        globals: dict[str, Any] | None = None,  # noqa: A002 - the brief's name
        sleep: Callable[[float], None] | None = None,
        echo_console: bool = False,
        result_check: Callable[..., dict | None] | None = None,
        first_line: int = 1,
        origin: str | None = None,
        **limit_options: Unpack[LimitOptions],
    ) -> None:
        if not isinstance(source, str):
            raise TypeError(f"hooks_from_js(source): expected a string, got {type(source).__name__}")
        self.source = source
        if not isinstance(first_line, int) or isinstance(first_line, bool) or first_line < 1:
            raise ValueError(f"hooks_from_js(first_line=…): expected an int ≥ 1, got {first_line!r}")
        self.first_line = first_line  # the source's line 1 is this line of its cell or file: errors count from it
        self.origin = origin  # where the source is, as its author knows it ("%%agentctx hooks greet")
        self.limits = Limits.of(limits, **limit_options)
        self._result_check = result_check or check_result  # (hook, value, *, line); Yao hooks bring their own
        self._bridge = Bridge(self.limits, _callables(globals), sleep, echo_console)
        global_specs = {name: None if callable(value) else orjson.dumps(value).decode()
                        for name, value in self._bridge.globals.items()}
        self._diagnosis = Diagnosis(source, self.limits)
        self._keeper = WorkerKeeper(source, global_specs, self.limits, self._bridge)
        self._engine, self._slot = self._keeper.engine, self._keeper.slot
        self._lock = threading.Lock()
        self._active_lock = threading.Lock()
        self._active: WorkerProcess | None = None  # the worker of the call running now (interrupt() kills it)
        self._interrupted = False
        self._turn: TurnTally | None = None
        self.names: frozenset[str] = frozenset()
        self._load_or_close()
        weakref.finalize(self, _finalize, self._engine, self._slot)  # neither holds a reference back to self
        _HOOK_SETS.add(self)

    def _load_or_close(self) -> None:
        try:
            self._engine.run(self._first_load)
        except HookError as error:
            self._keeper.close_now()
            raise error.relocate(first_line=self.first_line, origin=self.origin)
        except BaseException:
            self._keeper.close_now()  # a KeyboardInterrupt while loading: the worker is stopped at once
            raise

    def _after_fork(self) -> None:
        """(In a forked child, from the at-fork hook.) The parent's engine thread may have held these at
        the fork; the worker and the thread are dropped by ``js_engine``'s hook."""
        self._lock = threading.Lock()
        self._active_lock = threading.Lock()
        self._active, self._interrupted = None, False
        self._bridge.wake = threading.Event()

    @property
    def lines(self) -> dict[str, int]:
        """Hook name -> the line of the source its function starts on."""
        return self._diagnosis.lines

    @lines.setter
    def lines(self, lines: dict[str, int]) -> None:
        self._diagnosis.lines = lines

    @property
    def echo_console(self) -> bool:
        """Print each console line to stderr as well."""
        return self._bridge.echo_console

    @echo_console.setter
    def echo_console(self, echo: bool) -> None:
        self._bridge.echo_console = echo

    @property
    def rebuilds(self) -> int:
        """Times the engine was rebuilt after a limit was hit."""
        return self._keeper.rebuilds

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
        except HookError as shared:
            # The engine thread's future still holds ``shared`` until its hand-off returns, which may be after
            # the turn ended: raise a copy, so the frames of the turn it passes through are not reachable there.
            error = copy.copy(shared)
            error.args = shared.args  # copy rebuilds from args; the attributes come back with __dict__
            shared.__traceback__ = None
            raise error.relocate(first_line=self.first_line, origin=self.origin).with_traceback(None) from None

    def take_console(self) -> list[dict]:
        return self._bridge.take_console()

    def interrupt(self) -> None:
        """(Any thread; the runner calls it on Ctrl-C.) Stop the running hook at once: its worker process
        is killed (a ``time.Sleep`` in the kernel is woken) and the call fails with a
        :class:`HookTimeoutError`; a fresh engine serves the next call. Does nothing between calls."""
        self._bridge.wake.set()
        with self._active_lock:
            if self._active is not None:
                self._interrupted = True
                self._active.kill()

    def close(self) -> None:
        """Stop the engine (its thread and its process). The hooks cannot be called afterwards."""
        self._keeper.close()

    # -- engine thread: loading ------------------------------------------------------------

    def _first_load(self) -> None:
        loaded = self._keeper.start()
        self.names = frozenset(loaded["names"])
        self._diagnosis.learn(loaded["sources"])
        if not loaded.get("interrupt_handler", True):
            warnings.warn("agentctx_widgets: cannot install the QuickJS interrupt handler on this quickjs build; "
                          "a JavaScript hook past its limits is stopped by killing its process",
                          RuntimeWarning, stacklevel=4)

    # -- engine thread: a call ----------------------------------------------------------------

    def _call_locked(self, name: str, ctx: HookContext, args: tuple) -> dict | None:
        with self._lock:
            return self._call(name, ctx, args)

    def _call(self, name: str, ctx: HookContext, args: tuple) -> dict | None:
        if name not in self.names:
            raise KeyError(f"the JavaScript source defines no {name} hook (it defines {sorted(self.names)})")
        payload = orjson.dumps([ctx.to_json(), *args], default=json_default)
        try:
            worker = self._keeper.ready()
        except HookLoadError as error:
            raise HookLoadError(f"its engine could not be rebuilt: {error.detail}", hook=name, line=error.line,
                                code=error.code) from None
        turn = self._turn_of(ctx)
        call = Conversation(self.limits, name, ctx, turn)
        call.worker = worker
        self._bridge.wake.clear()
        with self._active_lock:
            self._active, self._interrupted = worker, False
        try:
            result, extra = self._bridge.converse(worker, b"C" + _call_header(name, ctx, self.limits, turn) + b"\n"
                                                  + payload, call)
        except Overrun as over:
            worker.kill()
            self._keeper.replace(call.worker)
            raise self._diagnosis.stopped(name, over.why, over.detail) from None
        except WorkerDied as died:
            self._keeper.replace(call.worker)
            raise self._diagnosis.stopped(name, "interrupt" if self._interrupted else "died", str(died)) from None
        except Exception as error:  # ours: a frame we could not read, a bug
            worker.kill()
            self._keeper.replace(call.worker)
            raise internal(name, f"{type(error).__name__}: {error}") from None
        finally:
            with self._active_lock:
                self._active = None
        if worker.killed:  # an interrupt that came as the call ended: its result stands, the engine is new
            self._keeper.replace(call.worker)
        return self._outcome(name, call, result, extra)

    def _outcome(self, name: str, call: Conversation, result: dict, extra: bytes) -> dict | None:
        """The call's value (checked), or the error its result reports (the engine replaced when needed)."""
        failure = self._failure(name, result)
        if failure is not None:
            self._keeper.replace(call.worker)
            raise failure
        try:
            reply = orjson.loads(extra)
            if not isinstance(reply, dict) or "ok" not in reply and "internal" not in reply:
                raise ValueError(f"the envelope is {extra[:80]!r}")
        except ValueError as error:
            self._keeper.replace(call.worker)
            raise internal(name, f"an unreadable result ({error})") from None
        if "internal" in reply:
            self._keeper.replace(call.worker)
            raise internal(name, str(reply["internal"]))
        line = self.lines.get(name)
        late = call.late[int(result.get("notices", 0)):]
        if reply["ok"]:
            if late:
                raise HookThrewError(f"Error: {late[0]}", hook=name, line=line, name="Error")
            return self._result_check(name, reply.get("value"), line=line)
        if "badReturn" in reply:
            raise HookReturnError(f"returned {reply['badReturn']}", hook=name, line=line)
        thrown = self._diagnosis.thrown(name, reply["thrown"])
        if isinstance(thrown, (HookStackOverflowError, HookMemoryError)):
            self._keeper.replace(call.worker)
        raise thrown

    def _failure(self, name: str, result: dict) -> HookError | None:
        """What stopped the call in the worker, if anything did (a limit, the engine, ours)."""
        tripped = result.get("tripped")
        if tripped is not None:
            return self._diagnosis.tripped(name, tripped, result)
        if "engine" in result:
            engine = result["engine"]
            if result.get("stack_overflow"):
                return self._diagnosis.stack_overflow(
                    name, self._diagnosis.running_line(name, user_line(engine)), stack=engine)
            return self._diagnosis.engine_failure(name, engine, None)
        if "internal" in result:
            return internal(name, result["internal"])
        return None

    def _turn_of(self, ctx: Any) -> TurnTally:
        turn = self._turn
        if turn is None or turn.ctx() is not ctx:
            self._turn = turn = TurnTally(ctx)
        return turn


def _callables(globals: dict[str, Any] | None) -> dict[str, Any]:  # noqa: A002
    """``globals``, checked: each name must be a JavaScript identifier."""
    names = dict(globals or {})
    for name in names:
        if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            raise ValueError(f"hooks_from_js(globals=…): {name!r} is not a JavaScript identifier")
    return names


def _call_header(name: str, ctx: Any, limits: Limits, turn: TurnTally) -> bytes:
    """The ``C`` frame's header: the hook, how its sends are checked, the caps left, the bound members."""
    sync, checks = _send_mode(ctx)
    header = {"name": name, "sync": sync, "checks": checks,
              "caps": limits.caps_left(turn.messages, turn.chars, turn.console)}
    members = _bound_members(ctx)
    if members is not None:
        header["members"] = orjson.dumps(members).decode()
    return orjson.dumps(header)


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
    limits: Limits | None = None,
    globals: dict[str, Any] | None = None,  # noqa: A002
    sleep: Callable[[float], None] | None = None,
    echo_console: bool = False,
    first_line: int = 1,
    origin: str | None = None,
    **limit_options: Unpack[LimitOptions],
) -> JsHooks:
    """Load hooks from JavaScript source (the seed's ``function Create(ctx, messages) {…}``).

    Limits and caps: a :class:`Limits` as ``limits``, or its fields as keyword arguments (they replace
    the ``limits``' own): ``time_limit`` (5 s), ``wall_limit`` (60 s), ``memory_limit`` (64 MiB),
    ``stack_limit`` (1 MiB), ``max_send_bytes`` (8 MiB) and, per turn, ``max_output_messages`` (100,000),
    ``max_output_bytes`` (64 MiB) and ``max_console_bytes`` (4 MiB); see the module docstring. A bad
    value raises naming it.

    ``globals`` adds names to the engine: a Python callable becomes a JS function (arguments and result
    cross as JSON; it runs in the kernel, synchronously), any other value is set as JSON data. ``sleep``
    replaces the ``time.sleep`` behind ``time.Sleep`` (tests record instead of sleeping). Console lines
    are collected into ``TurnResult.console``; ``echo_console=True`` also prints them to stderr. Raises
    :class:`HookLoadError` for a syntax error, a top-level throw, or top-level code past the limits.

    ``first_line`` is the line of its cell or file the source starts on (a ``%%agentctx hooks`` cell's
    body starts on line 2), ``origin`` what to call that place: every error then names the line as the
    author's editor numbers it (``Create (%%agentctx hooks greet, line 3): …``).
    """
    return JsHooks(source, limits=limits, globals=globals, sleep=sleep, echo_console=echo_console,
                   first_line=first_line, origin=origin, **limit_options)


__all__ = ["MAX_CONSOLE_BYTES", "MAX_OUTPUT_BYTES", "MAX_OUTPUT_MESSAGES", "MAX_SEND_BYTES", "MB", "JsHooks",
           "Limits", "hooks_from_js", "member_at"]
