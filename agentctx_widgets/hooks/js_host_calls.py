"""Inside a worker process: the host calls a hook's JavaScript makes, and the frames they send the kernel.

The prelude's ``__agentctx_host(name, args)`` lands in :meth:`HostCalls.host`. A Send is checked here
with the functions ``Output.send`` uses (so a bad message throws at the call, with Yao's text), charged
to the turn's caps and buffered; the batch crosses to the kernel (:meth:`HostCalls.ship`) at
``ctx.Flush``, when it grows past :data:`SHIP_CHARS` / :data:`SHIP_COUNT`, before every synchronous round
trip (:meth:`HostCalls.round_trip`: a callable global, ``time.Sleep``, a bound ``ctx`` member, a Send
the kernel must check) and at the end of the call. :class:`Budget` is the call's clock, which the
worker's interrupt handler reads too. The frames are ``js_worker``'s module docstring's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson

from ..output import DeltaError, OutputMessageError
from ..output.adapters import StandardAdapter
from ..output.delta import _envelope as _delta_envelope
from ..output.messages import group_members, normalize_group, normalize_message

SHIP_CHARS = 1 << 20
"""A batch of sends is shipped to the kernel once it holds this many characters of JSON ..."""
SHIP_COUNT = 4096
"""... or this many messages, so neither side holds much and the kernel applies a flood as it comes."""

HOST_LABELS = {"send": "ctx.Send", "send_group": "ctx.SendGroup", "flush": "ctx.Flush", "sleep": "time.Sleep",
               "console": "console", "global": "host function", "yao": "ctx", "yao_outside": "ctx"}
_YAO_PREFIXES = {"send": ("invalid message: ", "Send failed: "), "send_group": ("invalid group: ", "SendGroup failed: ")}
"""Yao's wording (agent/context/jsapi.go:177-211): a message Yao cannot parse is ``invalid message: …``;
one that its writer refuses (a standard client's image without a url) is ``Send failed: …``."""
_OUTSIDE_A_CALL = "ctx is only usable while a hook runs"


def host_error_text(name: str, error: BaseException) -> str:
    """The JavaScript error message for a failed host call: Yao's text first, then our detail."""
    text = str(error)
    prefixes = _YAO_PREFIXES.get(name)
    if prefixes is None:
        return f"{HOST_LABELS.get(name, name)}: {text}"
    invalid, failed = prefixes
    if text.startswith(("invalid message: ", "invalid group: ", "Send failed: ", "SendGroup failed: ")):
        if name == "send_group":
            text = text.replace("invalid message: ", invalid, 1).replace("Send failed: ", failed, 1)
        return text
    if isinstance(error, OutputMessageError):
        return invalid + text
    return failed + text


def error_reply(message: str, name: str | None = None, code: str | None = None) -> str:
    """A round trip's reply that the prelude throws as an ``Error`` (named ``name``, with ``code``, when given)."""
    return orjson.dumps([1, message, name, code]).decode()


def error_code(error: BaseException) -> str | None:
    """The code a JavaScript Error thrown for ``error`` carries: a ``DiagnosticError``'s (strict mode)."""
    from ..output import DiagnosticError

    return error.code if isinstance(error, DiagnosticError) else None


class Budget:
    """Time left for one call or load: time outside ``time.Sleep`` and wall time."""

    def __init__(self) -> None:
        self.armed = False
        self.tripped: dict | None = None  # {"kind": "time" | "wall" | "cap" | "internal", "message"?}
        self.start = 0.0
        self.time_limit = 0.0
        self.wall_deadline = 0.0
        self.slept = 0.0

    def arm(self, time_limit: float, wall_limit: float) -> None:
        now = time.monotonic()
        self.start, self.time_limit, self.wall_deadline = now, time_limit, now + wall_limit
        self.slept, self.tripped, self.armed = 0.0, None, True

    def disarm(self) -> None:
        self.armed = False

    def over(self) -> dict | None:
        """The limit this call has hit, if any (the deadline check of every host call and of the handler)."""
        if self.tripped is None and self.armed:
            now = time.monotonic()
            if now > self.wall_deadline:
                self.tripped = {"kind": "wall"}
            elif now - self.start - self.slept > self.time_limit:
                self.tripped = {"kind": "time"}
        return self.tripped

    def abort(self, kind: str, message: str | None = None) -> None:
        if self.tripped is None:
            self.tripped = {"kind": kind, "message": message}


class HostCalls:
    """The host calls of one worker, and what the current call has sent, buffered and been told.

    ``run_chunk(args_json) -> envelope`` runs the hook's waiting ``onChunk`` in JavaScript (the worker's)."""

    def __init__(self, channel: Any, run_chunk: Callable[[str], str]) -> None:
        self.channel = channel
        self.run_chunk = run_chunk
        self.budget = Budget()
        self.limits: dict = {}
        self.waits: list[float] = []  # when each running outside call last left JavaScript (innermost last)
        self.in_call = False
        self.sync = True
        self.checkers: list[StandardAdapter] = []
        self.caps = {"messages": 0, "chars": 0, "console": 0}
        self.items: list[str] = []
        self.items_chars = 0
        self.console: list[list[str]] = []
        self.sent = self.chars = self.console_chars = 0
        self.notices: list[str] = []
        self.delivered = 0
        self.internal: str | None = None
        self.handlers = {"send": self._send, "send_group": self._send_group, "flush": self._flush,
                         "console": self._console, "sleep": self._sleep, "global": self._global,
                         "yao": self._bound, "yao_outside": self._bound_outside}

    def begin(self, *, sync: bool, checkers: list, caps: dict) -> None:
        """A load or call starts: nothing sent, buffered or noticed yet."""
        self.sync, self.checkers, self.caps = sync, checkers, caps
        self.items, self.items_chars, self.console = [], 0, []
        self.sent = self.chars = self.console_chars = 0
        self.notices, self.delivered = [], 0
        self.internal = None
        self.waits = []

    def host(self, name: str, args_json: str) -> str:
        """Every call from JavaScript into Python. It must never raise (the binding would be left with
        a pending Python exception): failures go back as replies the prelude throws."""
        try:
            if self.budget.over() is not None:
                return self.abort_reply()
            handler = self.handlers.get(name)
            if handler is None:
                return error_reply(f"no host call {name!r}")
            return handler(args_json)
        except BaseException as error:  # noqa: BLE001 - ours: the call fails, named as ours
            self.internal = f"{HOST_LABELS.get(name, name)}: {type(error).__name__}: {error}"
            self.budget.abort("internal", self.internal)
            return self.abort_reply()

    def abort_reply(self) -> str:
        tripped = self.budget.tripped or {}
        reason = tripped.get("message") or {"time": "its time limit", "wall": "its wall-clock limit"}.get(
            tripped.get("kind"), "a limit")
        return orjson.dumps([2, f"the hook was stopped: {reason}"]).decode()

    # -- sends and console lines ----------------------------------------------------------------

    def _cap(self, cap: str, message: str) -> str:
        self.budget.abort("cap", message)
        self.budget.tripped["cap"] = cap  # type: ignore[index]
        return self.abort_reply()

    def _take(self, name: str, args_json: str) -> tuple[Any, str | None]:
        """Check one message as ``Output.send`` would (size, shape, the client's checks); (message, error)."""
        size = len(args_json)
        limit = int(self.limits["max_send_bytes"])
        if size > limit:
            return None, host_error_text(name, ValueError(
                f"the message is {size:,} bytes of JSON, over the {limit:,}-byte limit (max_send_bytes)"))
        if not self.in_call:
            return None, host_error_text(name, RuntimeError(_OUTSIDE_A_CALL))
        try:
            value = orjson.loads(args_json)[0]
            if not self.sync:
                if name == "send":  # inline: the hot path of a batched Send (see _check_group)
                    normalized = normalize_message(value)
                    for checker in self.checkers:
                        checker.check(normalized)
                    _delta_envelope(normalized)
                else:
                    self._check_group(value)
        except Exception as error:  # noqa: BLE001 - thrown in JavaScript at the Send call
            return None, host_error_text(name, error)
        return value, None

    def _check_group(self, value: Any) -> None:
        """The checks the kernel would run on a batched group: its shape, the clients', each member's delta."""
        record = normalize_group(value)
        for checker in self.checkers:
            checker.check_group(record)
        for index, member in enumerate(group_members(record)):
            try:
                _delta_envelope(member)
            except DeltaError as error:
                raise DeltaError(error.code, f"group.messages[{index}]: {error}") from error

    def _count(self, size: int) -> str | None:
        """Charge one kept message of ``size`` characters to the turn's caps; an abort reply past one."""
        caps = self.caps
        if self.sent + 1 > caps["messages"]:
            return self._cap("max_output_messages", caps["messages_text"])
        if self.chars + size > caps["chars"]:
            return self._cap("max_output_bytes", caps["chars_text"])
        self.sent += 1
        self.chars += size
        return None

    def _send(self, args_json: str, name: str = "send") -> str:
        value, error = self._take(name, args_json)
        if error is not None:
            return error_reply(error)
        size = len(args_json) - 2
        over = self._count(size)
        if over is not None:
            return over
        if self.sync:
            reply = self.round_trip({"op": name}, args_json)
            if reply.startswith("[1"):  # the kernel refused it: nothing was kept
                self.sent -= 1
                self.chars -= size
            return reply
        self.items.append(('["s",' if name == "send" else '["g",') + args_json[1:])
        self.items_chars += size
        if self.items_chars >= SHIP_CHARS or len(self.items) >= SHIP_COUNT:
            self.ship()
        return ""

    def _send_group(self, args_json: str) -> str:
        return self._send(args_json, "send_group")

    def _flush(self, _args_json: str) -> str:
        if not self.in_call:
            return error_reply(host_error_text("flush", RuntimeError(_OUTSIDE_A_CALL)))
        self.ship(flush=True)  # never waited for: a sink that fails is reported at the next Flush
        self._poll_notices()
        if self.notices:
            self.delivered += 1
            return error_reply(self.notices.pop(0))
        return ""

    def _console(self, args_json: str) -> str:
        level, text = orjson.loads(args_json)
        if self.console_chars + len(text) > self.caps["console"]:
            return self._cap("max_console_bytes", self.caps["console_text"])
        self.console_chars += len(text)
        self.console.append([level, text])
        self.ship()
        return ""

    # -- round trips ----------------------------------------------------------------------------

    def _sleep(self, args_json: str) -> str:
        ms = orjson.loads(args_json)[0]
        if not isinstance(ms, (int, float)) or ms != ms or ms < 0:
            return error_reply(host_error_text("sleep", ValueError(f"expected a number of milliseconds ≥ 0, got {ms!r}")))
        seconds = ms / 1000
        left = self.budget.wall_deadline - time.monotonic()
        if seconds > left:
            self.budget.abort("wall", f"time.Sleep({ms:g}) would end past its {self.limits['wall_limit']} s "
                                      f"wall-clock limit ({max(left, 0):.2f} s left)")
            return self.abort_reply()
        started = time.monotonic()
        try:
            return self.round_trip({"op": "sleep", "seconds": seconds})
        finally:
            self.budget.slept += time.monotonic() - started

    def _global(self, args_json: str) -> str:
        return self.round_trip({"op": "global"}, args_json)

    def _bound(self, args_json: str) -> str:
        """A method of a member the host bound on ``ctx`` (``[path, args, wants chunks]``): a round trip."""
        if not self.in_call:
            return error_reply(host_error_text("yao", RuntimeError(_OUTSIDE_A_CALL)))
        return self.round_trip({"op": "yao"}, args_json)

    def _bound_outside(self, args_json: str) -> str:
        """A bound call that waits on the outside world (a model, an agent): its wait counts as a sleep;
        the time its ``onChunk`` callbacks run JavaScript counts (see :meth:`_callback`)."""
        if not self.in_call:
            return error_reply(host_error_text("yao", RuntimeError(_OUTSIDE_A_CALL)))
        self.waits.append(time.monotonic())
        try:
            return self.round_trip({"op": "yao", "outside": True}, args_json)
        finally:
            self.budget.slept += time.monotonic() - self.waits.pop()

    # -- talking to the kernel ------------------------------------------------------------------

    def ship(self, *, flush: bool = False, op: dict | None = None, result: dict | None = None,
             extra: bytes = b"", callback: str | None = None) -> None:
        """Send the buffered batch and console lines (with a flush, an op or the result) to the kernel."""
        header: dict[str, Any] = {"sent": self.sent, "chars": self.chars, "console_chars": self.console_chars}
        if self.console:
            header["console"] = self.console
            self.console = []
        if flush:
            header["flush"] = True
        if op is not None:
            header["op"] = op
        if result is not None:
            header["result"] = result
        if callback is not None:
            header["callback"] = callback
        items = ("[" + ",".join(self.items) + "]").encode() if self.items else b"[]"
        self.items, self.items_chars = [], 0
        self.channel.send(b"F" + orjson.dumps(header) + b"\n" + items + b"\n" + extra)

    def round_trip(self, op: dict, argument: str = "") -> str:
        """Ship the batch and ``op``; wait for the kernel's answer (the kernel bounds the wait)."""
        self.ship(op=op, extra=argument.encode())
        while True:
            body = self.channel.recv()
            tag = body[:1]
            if tag == b"R":
                return body[1:].decode()
            if tag == b"A":
                self._aborted(body[1:])
                return self.abort_reply()
            if tag == b"N":
                self.notices.append(body[1:].decode())
            if tag == b"K":
                self._callback(body[1:])

    def _aborted(self, body: bytes) -> None:
        """The kernel failed the call (an ``A`` frame): a limit it saw first, or a cap."""
        abort = orjson.loads(body)
        self.budget.abort(abort["kind"], abort.get("message"))
        if abort.get("cap"):
            self.budget.tripped["cap"] = abort["cap"]  # type: ignore[index]

    def _callback(self, args_json: bytes) -> None:
        """The kernel calls back the waiting ``onChunk`` (during a bound call): run it, ship its answer.
        The time it runs JavaScript is the hook's; the wait around it is not."""
        if self.waits:
            self.budget.slept += time.monotonic() - self.waits[-1]
        envelope = self.run_chunk(args_json.decode())
        if self.waits:
            self.waits[-1] = time.monotonic()
        self.ship(callback=envelope)

    def _poll_notices(self) -> None:
        while True:
            body = self.channel.recv(timeout=0)
            if body is None:
                return
            tag = body[:1]
            if tag == b"N":
                self.notices.append(body[1:].decode())
            elif tag == b"A":
                abort = orjson.loads(body[1:])
                self.budget.abort(abort["kind"], abort.get("message"))


__all__ = ["SHIP_CHARS", "SHIP_COUNT", "Budget", "HostCalls", "error_code", "error_reply", "host_error_text"]
