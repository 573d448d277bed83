"""The kernel's side of one conversation with a hook set's worker: sends, console lines, host calls.

A load or a call is a :class:`Conversation` (its clock, what it has seen); :class:`Bridge` serves the
worker's ``F`` frames on the engine thread until the one with the result: it applies each batch of sends
to the turn's ``ctx`` (and its flush), records console lines, answers the synchronous host calls
(``time.Sleep``, a callable global, a Send that must be checked in the kernel, a bound ``ctx`` member)
and runs an ``onChunk`` callback in the worker while a bound call streams. The wire format is
``js_worker``'s module docstring's; the per-turn caps are counted in :class:`TurnTally`. While a bound
call runs, :func:`bound_call_stopped` tells it (on the engine thread) whether the call was interrupted
or is past its limits, so a long one (``ctx.workspace.Copy``) can stop between chunks.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import orjson

from .hook_context import HookContext
from .js_engine import KILL_GRACE, WorkerDied, WorkerProcess
from .js_limits import Limits
from .js_host_calls import error_code, error_reply, host_error_text


_serving = threading.local()  # .stopped: the check of the bound call this engine thread runs now


def bound_call_stopped() -> str | None:
    """Why the bound ``ctx`` call running on this thread should stop now: ``"interrupt"`` (Ctrl-C, the
    request's stop), ``"time"`` or ``"wall"`` (the hook's limits); ``None`` when it may go on, or when no
    bound call runs here. No kill can stop a host call inside the kernel: a long one checks this."""
    check = getattr(_serving, "stopped", None)
    return check() if check is not None else None


class TurnTally:
    """What one turn's hooks have sent so far (the caps are per turn)."""

    __slots__ = ("ctx", "messages", "chars", "console")

    def __init__(self, ctx: Any) -> None:
        try:
            self.ctx: Any = weakref.ref(ctx)
        except TypeError:  # an object without weak references: compared by identity while it lives
            self.ctx = lambda ctx=ctx: ctx
        self.messages = self.chars = self.console = 0


class Conversation:
    """One conversation with the worker (a call or a load): its clock and what it has seen."""

    def __init__(self, limits: Limits, hook: str | None, ctx: HookContext | None, turn: TurnTally) -> None:
        self.hook, self.ctx, self.turn = hook, ctx, turn
        self.time_limit, self.wall_limit = limits.time_limit, limits.wall_limit
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


class Overrun(Exception):
    """A conversation went past its limits (``why``: time, wall) or a cap (``cap``) without the worker
    stopping it: the worker is killed."""

    def __init__(self, why: str, detail: str = "") -> None:
        super().__init__(why)
        self.why, self.detail = why, detail


class Bridge:
    """Serves a hook set's worker during its conversations (on the engine thread, one at a time)."""

    def __init__(self, limits: Limits, globals: dict[str, Any],  # noqa: A002 - hooks_from_js's name
                 sleep: Callable[[float], None] | None, echo_console: bool) -> None:
        self.limits = limits
        self.globals = globals
        self.sleep = sleep or time.sleep
        self.echo_console = echo_console
        self.console: list[dict] = []
        self.wake = threading.Event()  # set by interrupt(): ends a time.Sleep at once

    def converse(self, worker: WorkerProcess, request: bytes, call: Conversation) -> tuple[dict, bytes]:
        """Send ``request``; serve the worker's frames (sends, console, ops) until its result."""
        worker.send(request)
        head, extra = self.serve_until(worker, call, "result")
        return head["result"], extra

    def serve_until(self, worker: WorkerProcess, call: Conversation, key: str) -> tuple[dict, bytes]:
        """Serve the worker's frames (sends, console, host ops) under the call's limits until one carries
        ``key`` (``result``: the call ended; ``callback``: an ``onChunk`` returned); return that frame."""
        while True:
            body = worker.recv(max(call.kill_at() - time.monotonic(), 0.0))
            if body is None:
                raise Overrun(call.limit_hit())
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

    def record_console(self, hook: str | None, level: str, text: str) -> None:
        self.console.append({"level": level, "hook": hook, "text": text})
        if self.echo_console:
            print(f"[{hook or 'js'}] console.{level}: {text}", file=sys.stderr)

    def take_console(self) -> list[dict]:
        lines, self.console = self.console, []
        return lines

    # -- a frame's sends and console lines ------------------------------------------------------

    def _absorb(self, worker: WorkerProcess, call: Conversation, head: dict, items: bytes) -> None:
        """Apply a frame's console lines and batch of sends (and its flush) to the turn."""
        for level, text in head.get("console", ()):
            call.real_console += len(text)
            self.record_console(call.hook, level, text)
        if items != b"[]":
            self._apply_batch(worker, call, items)
        if head.get("flush") and call.ctx is not None:
            try:
                call.ctx.Flush()
            except Exception as error:  # noqa: BLE001 - a sink failed: thrown at the hook's next Flush
                self._late(worker, call, host_error_text("flush", error))
        self._tally(call, head)

    def _apply_batch(self, worker: WorkerProcess, call: Conversation, items: bytes) -> None:
        """The sends the worker checked and buffered, applied to the ``ctx`` in order."""
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
                raise Overrun(call.limit_hit(), "sending")

    def _tally(self, call: Conversation, head: dict) -> None:
        """The worker's counters into the turn; a backstop on what really arrived (the worker stops a hook
        at the caps itself)."""
        turn, (messages, chars, console) = call.turn, call.base
        turn.messages = messages + int(head.get("sent", 0))
        turn.chars = chars + int(head.get("chars", 0))
        turn.console = console + int(head.get("console_chars", 0))
        limits = self.limits
        if messages + call.real_messages > limits.max_output_messages:
            raise Overrun("cap", limits.cap_texts()["messages_text"])
        if chars + call.real_chars > 2 * limits.max_output_bytes + 65536:
            raise Overrun("cap", limits.cap_texts()["chars_text"])
        if console + call.real_console > limits.max_console_bytes:
            raise Overrun("cap", limits.cap_texts()["console_text"])

    def _late(self, worker: WorkerProcess, call: Conversation, text: str) -> None:
        call.late.append(text)
        try:
            worker.send(b"N" + text.encode())
        except WorkerDied:
            pass

    # -- synchronous host calls -----------------------------------------------------------------

    def _answer(self, call: Conversation, op: dict, extra: bytes) -> bytes:
        """The reply to a synchronous host call (the deadline is checked first)."""
        over = call.over()
        if over is not None:
            return b"A" + orjson.dumps({"kind": over})
        kind = op.get("op")
        if kind == "global":
            return self._global(extra)
        if kind == "sleep":
            return self._sleep(call, float(op["seconds"]))
        if kind == "yao":
            return self._bound_call(call, extra, bool(op.get("outside")))
        if kind in ("send", "send_group", "flush"):
            return self._send(call, kind, extra)
        return b"R" + error_reply(f"no host call {kind!r}").encode()

    def _global(self, extra: bytes) -> bytes:
        name, args = orjson.loads(extra)
        try:
            value = self.globals[name](*args)
            return b"R" if value is None else b"R" + orjson.dumps([0, value])
        except Exception as error:  # noqa: BLE001 - thrown in JavaScript, with the Python class's name
            return b"R" + error_reply(host_error_text("global", error), type(error).__name__).encode()

    def _sleep(self, call: Conversation, seconds: float) -> bytes:
        left = call.start + call.wall_limit - time.monotonic()
        if seconds > left:
            return b"A" + orjson.dumps({"kind": "wall", "message": (
                f"time.Sleep({seconds * 1000:g}) would end past its {self.limits.wall_limit} s wall-clock limit "
                f"({max(left, 0):.2f} s left)")})
        started = time.monotonic()
        try:
            if self.sleep is time.sleep:
                self.wake.wait(seconds)  # an interrupt ends the sleep at once
            else:
                self.sleep(seconds)
        except Exception as error:  # noqa: BLE001 - a replacement sleep that failed: thrown in JavaScript
            return b"R" + error_reply(host_error_text("sleep", error)).encode()
        finally:
            call.slept += time.monotonic() - started
        return b"R"

    def _send(self, call: Conversation, kind: str, extra: bytes) -> bytes:
        """A Send, SendGroup or Flush the kernel checks itself (a ``ctx`` whose checks need its state)."""
        ctx = call.ctx
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

    def _bound_call(self, call: Conversation, extra: bytes, outside: bool = False) -> bytes:
        """A method of a member ``ctx.host_members()`` bound (today's Yao ctx): ``ctx.host_call`` runs it;
        what it raises is thrown in JavaScript as a plain ``Error`` with its text (Yao's, unchanged). When
        the hook passed an ``onChunk`` function, ``host_call`` gets a Python stand-in that calls it in
        the worker while the call runs (see :meth:`_on_chunk`). An ``outside`` call (a model, an agent)
        waits as ``time.Sleep`` does: only its callbacks' time is the hook's."""
        host_call = getattr(call.ctx, "host_call", None)
        if not callable(host_call):
            return b"R" + error_reply("ctx: this ctx binds no members").encode()
        failure: list[BaseException] = []
        if outside:
            call.waits.append(time.monotonic())
        outer = getattr(_serving, "stopped", None)  # an onChunk's own bound calls nest inside
        _serving.stopped = lambda: self._stopped(call, outside)
        try:
            path, args, chunks = orjson.loads(extra)
            on_chunk = self._on_chunk(call, failure) if chunks else None
            value = host_call(path, args, on_chunk)
            reply = b"R" + orjson.dumps([0, {"v": value}], default=json_default)
        except Exception as error:  # noqa: BLE001 - thrown in JavaScript at the call
            reply = b"R" + error_reply(str(error)).encode()
        finally:
            _serving.stopped = outer
            if outside:
                call.slept += time.monotonic() - call.waits.pop()
        if failure:  # the worker stopped or died while onChunk ran: that ends the call, as any limit does
            raise failure[0]
        return reply

    def _stopped(self, call: Conversation, outside: bool) -> str | None:
        """:func:`bound_call_stopped` for ``call`` (an ``outside`` call's wait is not the hook's time)."""
        if self.wake.is_set():
            return "interrupt"
        over = call.over()
        return over if over == "wall" or not outside else None

    def _on_chunk(self, call: Conversation, failure: list[BaseException]) -> Callable[..., int]:
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
                worker.send(b"K" + orjson.dumps(list(args), default=json_default))
                head, _ = self.serve_until(worker, call, "callback")
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
                self.record_console(call.hook, "warn", f"onChunk threw {answer['error']}; the stream stopped "
                                    "(Yao stops on a callback error and does not rethrow it)")
            return 1

        return on_chunk


def json_default(value: Any) -> Any:
    """What ``orjson`` cannot pass to JavaScript by itself: sets and tuples become lists."""
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot pass {type(value).__name__} to a JavaScript hook as JSON: {value!r:.80}")


__all__ = ["Bridge", "Conversation", "Overrun", "TurnTally", "bound_call_stopped", "json_default"]
