"""The kernel side of ContextView's stream protocol, with no Jupyter imports.

Why a class of its own: the Jupyter stack drops comm messages above ~1000/s and loses custom messages
sent before a view renders (DESIGN.md "Kernel ↔ front end"). So this class keeps the authoritative
front-end state, queues ops (folding string appends: ``folding.FoldingQueue``), sends numbered
batches at most once per ``interval`` seconds, answers ``sync`` requests with snapshots, and writes
the settled snapshot for the synced trait once the stream has been quiet for ``SETTLE_DELAY``
seconds (and on ``settle()`` / ``close()``). While a stream runs the trait is written only to catch up
a view that lost batches while the kernel is too busy to answer its ``sync`` (a view displayed in
the cell that streams renders after the first batches; a page reloaded mid-turn): at most once per
``CATCH_UP_INTERVAL`` and only once the stream has doubled since the last write, so the whole-state
writes add up to about the final state — marimo syncs the trait to the page on every write, and a
periodic write would make traffic grow with the square of the stream. It is driven through plain
callables, so tests record what it would send. The message shapes are in ``protocol_types``.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any, Protocol

import orjson

from agentctx_widgets.output.delta import SHARED_SLOT, apply_message_in_place, new_state

from .folding import FoldingQueue
from .timers import SHARED as SHARED_TIMERS
from .protocol_types import (
    ContextChange,
    ContextMessage,
    Header,
    KernelMessage,
    Op,
    OutputsState,
    PendingAppendOp,
    PendingOp,
    ViewState,
)

Send = Callable[[KernelMessage], None]
"""Delivers one comm message (a batch or a snapshot) to every view."""

SetSnapshot = Callable[[ViewState], None]
"""Stores the settled state (for the synced trait)."""

HeaderSource = Callable[[list[ContextMessage]], Header]
"""Computes the header (name, count, tokens, window, model) from the protocol's own copy of the
context (so it always agrees with the state, and never touches the Context from a timer thread);
called at most once per flush."""


class Timer(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], Timer]
"""``schedule(delay_seconds, fn)`` runs ``fn`` later on another thread; returns something cancellable."""


def thread_timer(delay: float, fn: Callable[[], None]) -> Timer:
    """The default scheduler: ``fn`` on the process's one timer thread (``timers.py``: no thread start
    per batch window on the streaming thread)."""
    return SHARED_TIMERS.schedule(delay, fn)


BATCH_INTERVAL = 0.030
"""At most one comm message per this many seconds per widget (the server drops >1000 msg/s)."""

SETTLE_DELAY = 0.5
"""The synced snapshot is written once nothing has been sent for this many seconds (a stream settled)."""

CATCH_UP_INTERVAL = 1.0
"""While a stream runs, the synced snapshot is written at most once per this many seconds, and only
when the stream has sent at least as many batches since the last write as before it (doubling)."""


def copy_json(value: Any) -> Any:
    """A deep copy that is plain JSON (messages may be mutated later by their owner)."""
    return orjson.loads(orjson.dumps(value))


class StreamProtocol:
    """Owns the front-end state of one ContextView and decides what goes over the comm, and when.

    Thread-safe: every public method takes the lock. ``send`` / ``set_snapshot`` are called with
    the lock held so batches leave in sequence order.
    """

    def __init__(
        self,
        send: Send,
        set_snapshot: SetSnapshot,
        header: HeaderSource,
        *,
        context: list[ContextMessage] | None = None,
        interval: float = BATCH_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        schedule: Schedule = thread_timer,
    ) -> None:
        self._send = send
        self._set_snapshot = set_snapshot
        self._header_source = header
        self._interval = interval
        self._clock = clock
        self._schedule = schedule
        self._lock = threading.RLock()

        self.seq = 0
        """Number of the last batch sent (or folded into a snapshot)."""
        self.context: list[ContextMessage] = [copy_json(m) for m in (context or [])]
        self.header: Header = header(self.context)
        self.pending: ContextMessage | None = None
        """The pending message as last sent (a private copy)."""
        self.outputs: OutputsState = new_state()  # type: ignore[assignment]
        """Delta-engine state of the output messages, updated in place (never shared outside the lock)."""

        self._queue = FoldingQueue(self._apply_folded)
        self._pending_source: ContextMessage | None = None  # the caller's live reference
        self._pending_dirty = False
        self._header_dirty = False
        self._snapshot_wanted = False
        self._last_send = float("-inf")
        self._flush_timer: Timer | None = None
        self._settle_timer: Timer | None = None
        self._snapshot_seq = -1
        self._snapshot_time = float("-inf")
        self._closed = False
        self.sends = 0
        """Comm messages sent so far (batches and snapshots)."""
        self._write_snapshot()

    # ----------------------------------------------------------------- inputs

    def output(self, message: dict[str, Any]) -> None:
        """Apply one normalized output message; a bad one warns and is skipped (never raises)."""
        with self._lock:
            if not self._queue.try_fold(message):
                self._apply_output(message)
            self._after_op()

    def outputs_batch(self, messages: list[dict[str, Any]]) -> None:
        """Apply many output messages under one lock, then flush or arm the timer once (the Output
        sink path: most messages are one more append to an open fold, an O(1) list append)."""
        with self._lock:
            try_fold = self._queue.try_fold
            for message in messages:
                if not try_fold(message):
                    self._apply_output(message)
            self._after_op()

    def append_text(self, msg_id: str, mtype: str, key: str, text: str) -> None:
        """One text append in the stream's own shape, as its parts (``Output``'s fast path, already
        checked there): one more piece of an open fold, or, when none is open for it, the message
        applied the normal way (which may open one)."""
        lock = self._lock
        lock.acquire()  # not `with`: this runs once per streamed delta, and acquire/release costs half
        try:
            if not self._queue.try_append(msg_id, mtype, key, text):
                self._apply_output({"type": mtype, "props": {key: text}, "id": msg_id, "delta": True,
                                    "delta_path": key, "delta_action": "append"})
            self._after_op()
        finally:
            lock.release()

    def context_change(self, change: ContextChange) -> None:
        """Follow one ``Context.subscribe`` change: added / updated / removed at an index."""
        action, index = change["action"], change["index"]
        with self._lock:
            size = len(self.context)
            if type(index) is not int or not 0 <= index <= size - (action != "added"):
                raise IndexError(f"context change {action!r}: index {index!r} is outside a context of {size}")
            op: Op
            if action == "removed":
                del self.context[index]
                op = {"op": "ctx", "action": "removed", "index": index}
            else:
                message = copy_json(change["message"])
                if action == "added":
                    self.context.insert(index, message)
                elif action == "updated":
                    self.context[index] = message
                else:
                    raise ValueError(f"context change action {action!r} is not added/updated/removed")
                op = {"op": "ctx", "action": action, "index": index, "message": message}
            self._queue.end_folds()
            self._queue.push(op)
            self._header_dirty = True
            self._after_op()

    def reset_context(self, messages: list[ContextMessage]) -> None:
        """Replace the whole context (a view pointed at another Context)."""
        with self._lock:
            self._queue.end_folds()
            self.context = [copy_json(m) for m in messages]
            self._queue.push({"op": "ctx", "action": "reset", "messages": self.context})
            self._header_dirty = True
            self._after_op()

    def set_pending(self, message: ContextMessage | None) -> None:
        """Remember the live pending message by reference; it is diffed at flush time."""
        with self._lock:
            self._pending_source = message
            self._pending_dirty = True
            self._after_op()

    def header_changed(self) -> None:
        """The header's inputs changed (e.g. the model id); recomputed at flush time."""
        with self._lock:
            self._header_dirty = True
            self._after_op()

    def clear_output(self) -> None:
        """Forget output messages (not the context)."""
        with self._lock:
            self._queue.end_folds()
            self.outputs = new_state()  # type: ignore[assignment]
            self._queue.push({"op": "clear_output"})
            self._after_op()

    def request_sync(self) -> None:
        """A view asked for a snapshot (it rendered late, reloaded, or saw a gap)."""
        with self._lock:
            self._snapshot_wanted = True
            self._after_op()

    def flush(self) -> None:
        """Send whatever is queued now, ignoring the rate limit (used by tests and on close)."""
        with self._lock:
            self._flush_now()

    def settle(self) -> None:
        """Send what is queued and write the settled snapshot now (before saving a notebook, in tests)."""
        with self._lock:
            self._flush_now()
            self._write_snapshot()

    def close(self) -> None:
        """Send what is left, write the settled snapshot, and stop every timer."""
        with self._lock:
            self._flush_now()
            self._write_snapshot()
            self._closed = True
            for timer in (self._flush_timer, self._settle_timer):
                if timer is not None:
                    timer.cancel()
            self._flush_timer = self._settle_timer = None

    def peek(self) -> ViewState:
        """The state as it will be once what is queued is sent — without sending anything (for ``repr``)."""
        with self._lock:
            self._queue.end_folds()  # folds open appends into the state; the ops stay queued for the next batch
            pending = copy_json(self._pending_source) if self._pending_dirty and self._pending_source else (
                None if self._pending_dirty else self.pending)
            header = self._header_source(self.context) if self._header_dirty else self.header  # not sent yet
            return {**self._state(), "header": header, "pending": pending}

    def state(self) -> ViewState:
        """The authoritative front-end state; sends what is queued first so the two agree."""
        with self._lock:
            self._flush_now()
            return self._state()

    # ----------------------------------------------------------------- outputs

    def _apply_output(self, message: dict[str, Any]) -> None:
        """A message no fold took in: end its id's folds (its ops keep their order), apply, queue."""
        # an id-less (or id "") message goes to the engine's shared slot: end that one's folds
        msg_id = message.get("id") or SHARED_SLOT
        self._queue.end_folds(msg_id)
        try:
            applied = apply_message_in_place(self.outputs, message)
        except (TypeError, ValueError) as error:  # DeltaError is a ValueError; keep the stream alive
            warnings.warn(f"ContextView skipped output message {message.get('id')!r}: {error}", stacklevel=4)
            return
        # an id-less message never folds (another id-less one may land in the same slot as a new message)
        stored = self.outputs["messages"].get(applied) if applied == message.get("id") else None
        self._queue.push_output(message, stored)

    def _apply_folded(self, message: dict[str, Any]) -> None:
        apply_message_in_place(self.outputs, message)

    # ----------------------------------------------------------------- pending

    def _refresh_pending_copy(self) -> list[PendingAppendOp] | PendingOp | None:
        """Diff the live pending message against what was last sent; return op(s) or None."""
        if not self._pending_dirty:
            return None
        self._pending_dirty = False
        source = self._pending_source
        if source is None:
            if self.pending is None:
                return None
            self.pending = None
            return {"op": "pending", "message": None}
        current = copy_json(source)
        old = self.pending
        self.pending = current
        appends = pending_appends(old, current) if old is not None else None
        if appends is None:
            return {"op": "pending", "message": current}
        return appends

    # ------------------------------------------------------------------ flush

    def _after_op(self) -> None:
        if self._closed:
            return
        now = self._clock()
        if now - self._last_send >= self._interval:
            self._flush_now()
        elif self._flush_timer is None:
            delay = self._interval - (now - self._last_send)
            self._flush_timer = self._schedule(delay, self._on_flush_timer)

    def _on_flush_timer(self) -> None:
        with self._lock:
            self._flush_timer = None
            if not self._closed:
                self._flush_now()

    def _flush_now(self) -> None:
        ops = self._queue.take()
        pending_op = self._refresh_pending_copy()
        if isinstance(pending_op, list):
            ops.extend(pending_op)
        elif pending_op is not None:
            ops.append(pending_op)
        if self._refresh_header():
            ops.append({"op": "header", "header": self.header})
        if not ops and not self._snapshot_wanted:
            return
        if ops:
            self.seq += 1
        message: KernelMessage
        if self._snapshot_wanted:
            self._snapshot_wanted = False
            message = {"kind": "snapshot", "seq": self.seq, "state": self._state()}
        else:
            message = {"kind": "batch", "seq": self.seq, "ops": ops}
        self._last_send = self._clock()
        self.sends += 1
        self._send(message)
        if self._last_send - self._snapshot_time >= CATCH_UP_INTERVAL and self.seq >= 2 * max(self._snapshot_seq, 1):
            self._write_snapshot()  # mid-stream catch-up (module docstring); nothing is queued right now
        self._arm_settle_timer()

    def _refresh_header(self) -> bool:
        if not self._header_dirty:
            return False
        self._header_dirty = False
        header = self._header_source(self.context)
        if header == self.header:
            return False
        self.header = header
        return True

    def _state(self) -> ViewState:
        return {
            "seq": self.seq,
            "header": self.header,
            "context": self.context,
            "pending": self.pending,
            "outputs": self.outputs,
        }

    # --------------------------------------------------------- settled snapshot

    def _arm_settle_timer(self) -> None:
        """After a send: write the snapshot once the stream is quiet (one timer, re-armed while busy)."""
        if self._settle_timer is None and not self._closed and self.seq != self._snapshot_seq:
            self._settle_timer = self._schedule(SETTLE_DELAY, self._on_settle_timer)

    def _on_settle_timer(self) -> None:
        with self._lock:
            self._settle_timer = None
            if self._closed:
                return
            quiet = self._clock() - self._last_send
            if quiet < SETTLE_DELAY or self._queue or self._pending_dirty or self._header_dirty:
                # still streaming (or a flush is due within `interval`): look again when it could be quiet
                delay = max(SETTLE_DELAY - quiet, self._interval)
                self._settle_timer = self._schedule(delay, self._on_settle_timer)
                return
            self._write_snapshot()

    def _write_snapshot(self) -> None:
        """Store the state exactly at ``seq`` (nothing is queued when this runs, so none is missing)."""
        if self._snapshot_seq == self.seq and self.seq:
            return
        self._snapshot_seq = self.seq
        self._snapshot_time = self._clock()
        self._set_snapshot(self._state())


def pending_appends(old: ContextMessage, new: ContextMessage) -> list[PendingAppendOp] | None:
    """``pending_append`` ops turning ``old`` into ``new``, or None when more than text grew.

    Only string fields of content blocks may grow (by appending); every other field must be equal.
    Returns ``[]`` when nothing changed.
    """
    if old.keys() != new.keys():
        return None
    for key, value in new.items():
        if key != "content" and old[key] != value:
            return None
    old_blocks, new_blocks = old.get("content"), new.get("content")
    if not isinstance(old_blocks, list) or not isinstance(new_blocks, list):
        return None if old_blocks != new_blocks else []
    if len(old_blocks) > len(new_blocks):
        return None
    ops: list[PendingAppendOp] = []
    for index, block in enumerate(new_blocks):
        if index >= len(old_blocks):
            return None  # a new block: send the whole message (rare: once per block)
        before = old_blocks[index]
        if before == block:
            continue
        if not isinstance(block, dict) or not isinstance(before, dict) or before.keys() != block.keys():
            return None
        for key, value in block.items():
            was = before[key]
            if was == value:
                continue
            if type(value) is str and type(was) is str and value.startswith(was):
                ops.append({"op": "pending_append", "index": index, "key": key, "text": value[len(was):]})
            else:
                return None
    return ops
