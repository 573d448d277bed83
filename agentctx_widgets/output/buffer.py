"""``Output``: the buffer behind ``ctx.Send / SendGroup / Flush`` (seed 000).

``send`` checks a message and applies it to the *pending* state at once, so a bad message raises where
it was sent and nothing is buffered or applied. ``flush`` hands the buffered messages to every sink,
in order, and applies them to the *flushed* state (``.state``). Each send costs the size of the message:
both states are owned here (``LiveState``) and updated in place through the delta engine's plan/commit
split. The stream's own shape — a text append onto an open message's string prop — takes a fast path
(``try_text_append`` + ``LiveState.append_text``): no general walk, no plan, the text kept as parts until
the state is read. Everything else, and every case that shape could get wrong (an unknown id, a done
message, another type, a target that is not a string), goes through the full path and its diagnostics.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from .delta import Change, DeltaError, State
from .diagnostics import Collector, DiagnosticError, diagnostic
from .live_state import LiveState
from .messages import (
    OutputGroup,
    OutputMessage,
    clone_json,
    group_members,
    normalize_group,
    normalize_message,
    try_text_append,
)

_TextAppend = tuple  # (id, type, key, text, normalized message): a send that took the fast path


@runtime_checkable
class Sink(Protocol):
    """Anything that takes a batch of normalized output messages (a widget, an adapter, a recorder)."""

    def write(self, messages: list[dict[str, Any]]) -> None: ...


SinkLike = Sink | Callable[[list[dict[str, Any]]], None]

DEFAULT_HISTORY = 1_000
"""How many flushed messages ``Output.messages`` keeps by default (about 0.5 MB of small deltas)."""


class SinkError(RuntimeError):
    """One or more sinks raised during ``flush``; the other sinks still got the batch.

    ``errors`` holds ``(sink, exception)`` pairs in sink order; the first is also the ``__cause__``.
    """

    def __init__(self, errors: list[tuple[SinkLike, BaseException]]) -> None:
        names = ", ".join(f"{_sink_name(sink)}: {error!r}" for sink, error in errors)
        super().__init__(f"{len(errors)} output sink(s) failed during flush ({names})")
        self.errors = errors


def _sink_name(sink: SinkLike) -> str:
    return getattr(sink, "__name__", None) or type(sink).__name__


def _writer(sink: SinkLike) -> Callable[[list[dict[str, Any]]], None]:
    write = getattr(sink, "write", None)
    if callable(write):
        return write
    if callable(sink):
        return sink
    raise TypeError(f"an output sink needs a write(messages) method or must be callable, got {sink!r}")


def _deliver_with_groups(write: Callable[[list[dict[str, Any]]], None], write_group: Callable[[OutputGroup], None],
                         batch: list[OutputMessage], groups: list[tuple[int, int, OutputGroup]]) -> None:
    """[groups to sinks] A sink with ``write_group``: plain runs go to ``write``, each SendGroup to
    ``write_group`` (the group as ``normalize_group`` returns it, members untagged), in send order."""
    at = 0
    for start, end, group in groups:
        if start > at:
            write(batch[at:start])
        write_group(group)
        at = end
    if at < len(batch):
        write(batch[at:])


class Output:
    """Buffers output messages and delivers them to sinks on ``flush``.

    ``accept`` names the client kind (``"standard"``, ``"cui-web"``, …) for code that adapts to it
    (see ``adapter_for``); the buffer itself delivers the same normalized messages to every sink.
    """

    def __init__(self, sinks: Iterable[SinkLike] | None = None, *, accept: str = "cui-web",
                 history: int | None = DEFAULT_HISTORY, strict: bool = False) -> None:
        if not isinstance(accept, str) or not accept:
            raise TypeError(f"Output(accept=...) must be a non-empty string, got {accept!r}")
        if history is not None and (isinstance(history, bool) or not isinstance(history, int) or history < 0):
            raise TypeError(f"Output(history=...) must be a count >= 0 or None, got {history!r}")
        self.accept = accept
        self.strict = bool(strict)
        """Turn the first diagnostic into a :class:`DiagnosticError` (raised by the call that caused it)."""
        self.diagnostics: list[dict] = []
        """What Yao accepts but a hook author almost surely did not mean (see ``output/diagnostics.py``)."""
        self._sinks: list[tuple[SinkLike, Callable[[list[dict[str, Any]]], None]]] = []
        self._message_checks: list[Callable[[OutputMessage], None]] = []
        """Each sink's ``check(message)`` (a client that refuses some messages at send), in sink order."""
        for sink in sinks or ():
            self.add_sink(sink)
        self._pending_state = LiveState()
        self._flushed_state = LiveState()
        self._buffer: list[OutputMessage] = []
        self._changes: list[Change | _TextAppend] = []
        # [groups to sinks] each SendGroup still buffered: (start, end) in _buffer, the normalized group
        self._groups: list[tuple[int, int, OutputGroup]] = []
        # The last `history` flushed messages (None keeps all): a long stream of deltas must not keep
        # every delta alive; the delta state already holds what they add up to.
        self._flushed: deque[OutputMessage] = deque(maxlen=history)
        self._flushed_count = 0

    # ---- diagnostics -----------------------------------------------------------------------------

    def report(self, code: str, where: str, **details: Any) -> None:
        """Record one diagnostic (``strict``: raise it instead). Hooks and the runner report here too."""
        self._release([diagnostic(code, where, **details)])

    def _release(self, found: list[dict]) -> None:
        if found and self.strict:
            raise DiagnosticError(found[0])
        self.diagnostics.extend(found)

    # ---- sinks -----------------------------------------------------------------------------------

    def add_sink(self, sink: SinkLike) -> SinkLike:
        """Deliver future flushes to ``sink`` too; returns it (handy for recorders)."""
        self._sinks.append((sink, _writer(sink)))
        self._find_checks()
        return sink

    def remove_sink(self, sink: SinkLike) -> None:
        """Stop delivering to ``sink``; ``ValueError`` if it was never added."""
        for index, (known, _) in enumerate(self._sinks):
            if known is sink:
                del self._sinks[index]
                self._find_checks()
                return
        raise ValueError(f"output sink {sink!r} is not attached to this Output")

    def _find_checks(self) -> None:
        checks = (getattr(sink, "check", None) for sink, _ in self._sinks)
        self._message_checks = [check for check in checks if callable(check)]

    @property
    def sinks(self) -> list[SinkLike]:
        return [sink for sink, _ in self._sinks]

    # ---- sending ---------------------------------------------------------------------------------

    def send(self, message: OutputMessage | str) -> str:
        """Check and buffer one message; returns its id (``"#<n>"`` when it had none).

        Raises ``OutputMessageError`` (bad shape) or ``DeltaError`` (cannot apply) and then changes
        nothing.
        """
        normalized = try_text_append(message)
        if normalized is not None:  # the stream's own shape: nothing to drop, nothing to report so far
            for check in self._message_checks:
                check(normalized)
            msg_id, mtype, key = normalized["id"], normalized["type"], normalized["delta_path"]  # type: ignore[typeddict-item]
            text = normalized["props"][key]
            if self._pending_state.append_text(msg_id, mtype, key, text):
                self._buffer.append(normalized)
                self._changes.append((msg_id, mtype, key, text, normalized))
                return msg_id
            found = Collector()  # not an open string here: the full plan decides (and reports)
        else:
            found = Collector()
            normalized = normalize_message(message, report=found)
            for check in self._message_checks:
                check(normalized)
        change = self._pending_state.plan(normalized, report=found)
        self._release(found.items)  # strict: raised here, before anything of the message is applied
        self._pending_state.commit(change)
        self._buffer.append(normalized)
        self._changes.append(change)
        return change.id

    def _check_with_sinks(self, method: str, value: Any) -> None:
        """Let a sink refuse what its client would (a standard client's image without a url), at send."""
        for sink, _ in self._sinks:
            check = getattr(sink, method, None)
            if callable(check):
                check(value)

    def send_group(self, group: OutputGroup) -> list[str]:
        """Check and buffer a group of messages, each tagged with the group's id; all or nothing."""
        found = Collector()
        record = normalize_group(group, report=found)  # [groups to sinks] the group as Yao keeps it, for write_group
        self._check_with_sinks("check_group", record)
        messages = group_members(record)
        state = self._pending_state
        order_length = len(state.read()["order"])
        saved: dict[str, dict[str, Any] | None] = {}
        changes: list[Change] = []
        try:
            for index, message in enumerate(messages):
                try:
                    change = state.plan(message, report=found)
                except DeltaError as error:
                    raise DeltaError(error.code, f"group.messages[{index}]: {error}") from error
                if change.id not in saved:
                    saved[change.id] = state.entry_copy(change.id)
                state.commit(change)
                changes.append(change)
            self._release(found.items)  # strict: the group is taken back below, whole
        except (DeltaError, DiagnosticError):
            state.restore(order_length, saved)
            raise
        self._groups.append((len(self._buffer), len(self._buffer) + len(messages), record))  # [groups to sinks]
        self._buffer.extend(messages)
        self._changes.extend(changes)
        return [change.id for change in changes]

    def flush(self) -> None:
        """Deliver the buffered messages to every sink (one ``write`` each, in order).

        Does nothing when the buffer is empty. A sink that raises does not stop the others: the batch
        counts as delivered, and a ``SinkError`` listing every failure is raised at the end.
        """
        if not self._buffer and not self._groups:  # [groups to sinks] an empty group is still sent
            return
        batch, changes, groups = self._buffer, self._changes, self._groups
        self._buffer, self._changes, self._groups = [], [], []
        flushed = self._flushed_state
        for change in changes:
            if type(change) is tuple:
                msg_id, mtype, key, text, message = change
                if not flushed.append_text(msg_id, mtype, key, text):  # cannot happen: the states agree
                    flushed.commit(flushed.plan(message))
            else:
                flushed.commit(change)
        self._flushed.extend(batch)
        self._flushed_count += len(batch)
        errors: list[tuple[SinkLike, BaseException]] = []
        for sink, write in list(self._sinks):
            try:
                write_group = getattr(sink, "write_group", None)  # [groups to sinks]
                if groups and callable(write_group):
                    _deliver_with_groups(write, write_group, batch, groups)
                elif batch:
                    write(list(batch))
            except Exception as error:  # noqa: BLE001 - reported below, after every sink had its turn
                errors.append((sink, error))
        if errors:
            raise SinkError(errors) from errors[0][1]

    # the seed's spelling
    Send = send
    SendGroup = send_group
    Flush = flush

    # ---- what was sent ---------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """A copy of the delta state of everything flushed (streamed text joined: costs the state's size)."""
        return clone_json(self._flushed_state.read())

    @property
    def pending_state(self) -> State:
        """A copy of the delta state including messages not yet flushed."""
        return clone_json(self._pending_state.read())

    @property
    def messages(self) -> list[OutputMessage]:
        """The normalized messages flushed so far, in order — the last ``history`` of them (a new list;
        the dicts are shared). ``flushed_count`` says how many were flushed in all."""
        return list(self._flushed)

    @property
    def flushed_count(self) -> int:
        """How many messages were flushed in all (``messages`` keeps only the last ``history``)."""
        return self._flushed_count

    @property
    def pending(self) -> list[OutputMessage]:
        """Messages sent but not yet flushed."""
        return list(self._buffer)

    def __repr__(self) -> str:
        return (f"Output(accept={self.accept!r}, sinks={len(self._sinks)}, flushed={self._flushed_count}, "
                f"pending={len(self._buffer)})")
