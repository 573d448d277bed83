"""The kernel side of ContextView's stream protocol, with no Jupyter imports.

Why a class of its own: the Jupyter stack drops comm messages above ~1000/s and loses custom messages
sent before a view renders (DESIGN.md "Kernel ↔ front end"). So this class keeps the authoritative
front-end state, queues ops, coalesces string appends, sends numbered batches at most once per
``interval`` seconds, answers ``sync`` requests with snapshots, and keeps a debounced settled snapshot
for the synced trait. It is driven through plain callables, so tests record what it would send.

Per-delta cost is O(1): a string append to the output message that the last queued op already appends
to only adds the text to a list; the list is joined and applied once, at flush time.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any, Protocol

import orjson

from agentctx_widgets.output.delta import SHARED_SLOT, apply_message_in_place, new_state

Send = Callable[[dict[str, Any]], None]
"""Delivers one comm message (a batch or a snapshot) to every view."""

SetSnapshot = Callable[[dict[str, Any]], None]
"""Stores the settled state (for the synced trait)."""

HeaderSource = Callable[[list[dict[str, Any]]], dict[str, Any]]
"""Computes the header (name, count, tokens, window, model) from the protocol's own copy of the
context (so it always agrees with the state, and never touches the Context from a timer thread);
called at most once per flush."""


class Timer(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], Timer]
"""``schedule(delay_seconds, fn)`` runs ``fn`` later on another thread; returns something cancellable."""


def thread_timer(delay: float, fn: Callable[[], None]) -> Timer:
    """The default scheduler: a daemon ``threading.Timer``."""
    timer = threading.Timer(delay, fn)
    timer.daemon = True
    timer.start()
    return timer


BATCH_INTERVAL = 0.030
"""At most one comm message per this many seconds per widget (the server drops >1000 msg/s)."""

SNAPSHOT_INTERVAL = 1.0
"""The synced snapshot is written at most once per this many seconds (and once after a burst)."""

_APPEND_KEYS = frozenset({"id", "type", "props", "delta", "delta_path", "delta_action"})


def copy_json(value: Any) -> Any:
    """A deep copy that is plain JSON (messages may be mutated later by their owner)."""
    return orjson.loads(orjson.dumps(value))


_ALL = object()  # _settle_open(): every open append


def _string_append(message: dict[str, Any], key: str) -> str | None:
    """The text of ``message`` when it is a plain string append onto the top-level prop ``key`` (only
    the append fields, one prop), else None: the only kind of message an open append folds in."""
    if not message.get("delta") or message.keys() - _APPEND_KEYS or message.get("delta_action", "append") != "append":
        return None
    props = message.get("props")
    if type(props) is not dict or len(props) != 1:
        return None
    text = props.get(key)
    return text if type(text) is str else None


class _OpenAppend:
    """Consecutive string appends to one output message's top-level prop, not yet applied."""

    __slots__ = ("id", "type", "key", "parts", "index")

    def __init__(self, msg_id: str, msg_type: str, key: str, text: str, index: int) -> None:
        self.id = msg_id
        self.type = msg_type
        self.key = key
        self.parts = [text]
        """The appended strings; the first is already applied to the state (it opened the append)."""
        self.index = index
        """Where this append stands in the op queue (it folds every later append to the same target)."""

    def message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "props": {self.key: "".join(self.parts)},
            "delta": True,
            "delta_path": self.key,
            "delta_action": "append",
        }


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
        context: list[dict[str, Any]] | None = None,
        interval: float = BATCH_INTERVAL,
        snapshot_interval: float = SNAPSHOT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        schedule: Schedule = thread_timer,
    ) -> None:
        self._send = send
        self._set_snapshot = set_snapshot
        self._header_source = header
        self._interval = interval
        self._snapshot_interval = snapshot_interval
        self._clock = clock
        self._schedule = schedule
        self._lock = threading.RLock()

        self.seq = 0
        """Number of the last batch sent (or folded into a snapshot)."""
        self.context: list[dict[str, Any]] = [copy_json(m) for m in (context or [])]
        self.header: dict[str, Any] = header(self.context)
        self.pending: dict[str, Any] | None = None
        """The pending message as last sent (a private copy)."""
        self.outputs: dict[str, Any] = new_state()
        """Delta-engine state of the output messages, updated in place (never shared outside the lock)."""

        self._ops: list[Any] = []  # dict ops, and _OpenAppend placeholders
        self._open: dict[str, dict[str, _OpenAppend]] = {}
        """Open appends by output id, then prop: appends to different messages interleave (several
        streams at once), and each message's appends still fold into one op per batch."""
        self._pending_source: dict[str, Any] | None = None  # the caller's live reference
        self._pending_dirty = False
        self._header_dirty = False
        self._snapshot_wanted = False
        self._last_send = float("-inf")
        self._flush_timer: Timer | None = None
        self._snapshot_timer: Timer | None = None
        self._last_snapshot = float("-inf")
        self._snapshot_seq = -1
        self._snapshot_with_next_flush = False
        self._closed = False
        self.sends = 0
        """Comm messages sent so far (batches and snapshots)."""
        self._write_snapshot()

    # ----------------------------------------------------------------- inputs

    def output(self, message: dict[str, Any]) -> None:
        """Apply one normalized output message; a bad one warns and is skipped (never raises)."""
        with self._lock:
            if self._try_extend_append(message):
                self._after_op()
                return
            # an id-less (or id "") message goes to the engine's shared slot: settle that one's appends
            self._settle_open(message.get("id") or SHARED_SLOT)
            try:
                apply_message_in_place(self.outputs, message)
            except (TypeError, ValueError) as error:  # DeltaError is a ValueError; keep the stream alive
                warnings.warn(f"ContextView skipped output message {message.get('id')!r}: {error}", stacklevel=3)
                return
            if not self._try_open_append(message):
                self._ops.append({"op": "out", "message": message})
            self._after_op()

    def outputs_batch(self, messages: list[dict[str, Any]]) -> None:
        """Apply many output messages under one lock (the Output sink path)."""
        with self._lock:
            for message in messages:
                self.output(message)

    def context_change(self, change: dict[str, Any]) -> None:
        """Follow one ``Context.subscribe`` change: added / updated / removed at an index."""
        action, index = change["action"], change["index"]
        with self._lock:
            self._settle_open()
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
            self._ops.append(op)
            self._header_dirty = True
            self._after_op()

    def reset_context(self, messages: list[dict[str, Any]]) -> None:
        """Replace the whole context (a view pointed at another Context)."""
        with self._lock:
            self._settle_open()
            self.context = [copy_json(m) for m in messages]
            self._ops.append({"op": "ctx", "action": "reset", "messages": self.context})
            self._header_dirty = True
            self._after_op()

    def set_pending(self, message: dict[str, Any] | None) -> None:
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
            self._settle_open()
            self.outputs = new_state()
            self._ops.append({"op": "clear_output"})
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
            for timer in (self._flush_timer, self._snapshot_timer):
                if timer is not None:
                    timer.cancel()
            self._flush_timer = self._snapshot_timer = None

    def peek(self) -> dict[str, Any]:
        """The state as it will be once what is queued is sent — without sending anything (for ``repr``)."""
        with self._lock:
            self._settle_open()  # folds open appends into the state; the ops stay queued for the next batch
            pending = copy_json(self._pending_source) if self._pending_dirty and self._pending_source else (
                None if self._pending_dirty else self.pending)
            header = self._header_source(self.context) if self._header_dirty else self.header  # not sent yet
            return {**self._state(), "header": header, "pending": pending}

    def state(self) -> dict[str, Any]:
        """The authoritative front-end state; sends what is queued first so the two agree."""
        with self._lock:
            self._flush_now()
            return self._state()

    # ------------------------------------------------------------ coalescing

    def _try_extend_append(self, message: dict[str, Any]) -> bool:
        """O(1) path: one more string append to the message the open append already targets."""
        opens = self._open.get(message.get("id"))  # type: ignore[arg-type]
        key = message.get("delta_path")
        open_ = opens.get(key) if opens is not None and type(key) is str else None
        if open_ is None or message.get("type", open_.type) != open_.type:
            return False
        text = _string_append(message, open_.key)
        if text is None:
            return False
        open_.parts.append(text)
        return True

    def _try_open_append(self, message: dict[str, Any]) -> bool:
        """After applying ``message``: start coalescing if it was a plain string append onto a string."""
        key = message.get("delta_path")
        if type(key) is not str or not key or "." in key or "[" in key:
            return False
        text = _string_append(message, key)
        if text is None:
            return False
        stored = self.outputs["messages"].get(message.get("id"))
        if stored is None or type(stored["props"].get(key)) is not str or stored.get("done"):
            return False
        open_ = _OpenAppend(message["id"], stored["type"], key, text, len(self._ops))
        self._open.setdefault(message["id"], {})[key] = open_
        self._ops.append(open_)
        return True

    def _settle_open(self, msg_id: Any = _ALL) -> None:
        """Apply open appends' not-yet-applied parts to the state and freeze them into ops: those of
        one output id (before another kind of message for it), or all of them (before anything else)."""
        if msg_id is _ALL:
            groups = list(self._open.values())
            self._open = {}
        else:
            group = self._open.pop(msg_id, None) if isinstance(msg_id, str) else None
            groups = [] if group is None else [group]
        for group in groups:
            for open_ in group.values():
                message = open_.message()
                if len(open_.parts) > 1:
                    rest = {**message, "props": {open_.key: "".join(open_.parts[1:])}}
                    apply_message_in_place(self.outputs, rest)
                self._ops[open_.index] = {"op": "out", "message": message}

    # ----------------------------------------------------------------- pending

    def _refresh_pending_copy(self) -> dict[str, Any] | None:
        """Diff the live pending message against what was last sent; return an op or None."""
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
        return appends  # type: ignore[return-value]

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
        self._settle_open()
        ops: list[dict[str, Any]] = self._ops
        self._ops = []
        pending_op = self._refresh_pending_copy()
        if isinstance(pending_op, list):
            ops.extend(pending_op)
        elif pending_op is not None:
            ops.append(pending_op)
        if self._refresh_header():
            ops.append({"op": "header", "header": self.header})
        if not ops and not self._snapshot_wanted:
            if self._snapshot_with_next_flush:  # the change it waited for came to nothing
                self._snapshot_with_next_flush = False
                self._write_snapshot()
            return
        if ops:
            self.seq += 1
        if self._snapshot_wanted:
            self._snapshot_wanted = False
            message = {"kind": "snapshot", "seq": self.seq, "state": self._state()}
        else:
            message = {"kind": "batch", "seq": self.seq, "ops": ops}
        self._last_send = self._clock()
        self.sends += 1
        self._send(message)
        if self._snapshot_with_next_flush:
            self._snapshot_with_next_flush = False
            self._write_snapshot()
        self._schedule_snapshot()

    def _refresh_header(self) -> bool:
        if not self._header_dirty:
            return False
        self._header_dirty = False
        header = self._header_source(self.context)
        if header == self.header:
            return False
        self.header = header
        return True

    def _state(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "header": self.header,
            "context": self.context,
            "pending": self.pending,
            "outputs": self.outputs,
        }

    # --------------------------------------------------------- settled snapshot

    def _schedule_snapshot(self) -> None:
        if self._snapshot_timer is not None or self._closed:
            return
        now = self._clock()
        delay = max(self._interval * 4, self._last_snapshot + self._snapshot_interval - now)
        self._snapshot_timer = self._schedule(delay, self._on_snapshot_timer)

    def _on_snapshot_timer(self) -> None:
        with self._lock:
            self._snapshot_timer = None
            if self._closed:
                return
            if self._ops or self._pending_dirty or self._header_dirty:
                # The snapshot must be the state exactly at ``seq``: write it with the queued batch.
                self._snapshot_with_next_flush = True
                return
            self._write_snapshot()

    def _write_snapshot(self) -> None:
        if self._snapshot_seq == self.seq and self.seq:
            return
        self._snapshot_seq = self.seq
        self._last_snapshot = self._clock()
        self._set_snapshot(self._state())


def pending_appends(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]] | None:
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
    ops: list[dict[str, Any]] = []
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
