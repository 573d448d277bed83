"""``Output``: the buffer behind ``ctx.Send / SendGroup / Flush`` (seed 000).

``send`` checks a message and applies it to the *pending* state at once, so a bad message raises where
it was sent and nothing is buffered or applied. ``flush`` hands the buffered messages to every sink,
in order, and applies them to the *flushed* state (``.state``). Each send costs the size of the message:
both states are owned here (``LiveState``) and updated in place through the delta engine's plan/commit
split. The stream's own shape — a text append onto an open message's string prop — takes a fast path
(``try_text_append_parts`` + ``LiveState.append_text``): no general walk, no plan, the text kept as parts
until the state is read. Everything else, and every case that shape could get wrong (an unknown id, a done
message, another type, a target that is not a string), goes through the full path and its diagnostics.

A fast-path send is buffered as its parts (a ``TextAppend`` tuple), not as a message dict: a sink with
``append_text(msg_id, mtype, key, text)`` (``ContextView``) gets those parts as they are, so a delta
builds no dict on its way to the view; every other sink, ``messages`` and ``pending`` get the normalized
dicts, built from the parts when they are read (once per flush for all sinks that need them).
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
    TextAppend,
    clone_json,
    group_members,
    normalize_group,
    normalize_message,
    text_append_message,
    try_text_append_parts,
)

_Entry = OutputMessage | TextAppend
"""A buffered send: the normalized message, or a fast-path text append's parts (a tuple)."""

AppendText = Callable[[str, str, str, str], None]
"""A sink's ``append_text(msg_id, mtype, key, text)``: one text append onto an open message's string prop."""


@runtime_checkable
class Sink(Protocol):
    """Anything that takes a batch of normalized output messages (a widget, an adapter, a recorder).

    Optional: ``write_group(group)`` (each SendGroup whole), ``check(message)`` / ``check_group(group)``
    (refuse at send), ``append_text(msg_id, mtype, key, text)`` (fast-path text appends as parts).
    """

    def write(self, messages: list[dict[str, Any]]) -> None: ...


SinkLike = Sink | Callable[[list[dict[str, Any]]], None]

_SinkEntry = tuple[SinkLike, Callable[[list[dict[str, Any]]], None], Callable[[OutputGroup], None] | None,
                   AppendText | None]
"""``(sink, write, write_group or None, append_text or None)``, the methods looked up once in ``add_sink``."""

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


def sink_writer(sink: Any, what: str = "an output sink") -> Callable[[list], None]:
    """``sink.write``, else ``sink`` itself when it is callable (``Output``'s and ``YaoOutput``'s sinks)."""
    write = getattr(sink, "write", None)
    if callable(write):
        return write
    if callable(sink):
        return sink
    raise TypeError(f"{what} needs a write(messages) method or must be callable, got {sink!r}")


def _materialize(entries: list[_Entry]) -> list[OutputMessage]:
    """The buffered entries as normalized message dicts (a new list; a fast-path entry becomes its dict)."""
    return [text_append_message(entry) if type(entry) is tuple else entry  # type: ignore[arg-type,misc]
            for entry in entries]


def _deliver_mixed(write: Callable[[list[dict[str, Any]]], None], append_text: AppendText,
                   entries: list[_Entry]) -> None:
    """A sink with ``append_text``: each fast-path append through it, each run of other messages as one
    ``write(run)``, in send order."""
    run: list[OutputMessage] | None = None
    for entry in entries:
        if type(entry) is tuple:
            if run:
                write(run)
                run = None
            append_text(entry[0], entry[1], entry[2], entry[3])  # type: ignore[misc]
        elif run is None:
            run = [entry]  # type: ignore[list-item]
        else:
            run.append(entry)  # type: ignore[arg-type]
    if run:
        write(run)


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


def _deliver_parts(write: Callable[[list[dict[str, Any]]], None], write_group: Callable[[OutputGroup], None] | None,
                   append_text: AppendText, batch: list[_Entry], groups: list[tuple[int, int, OutputGroup]]) -> None:
    """A sink with ``append_text``: the fast-path appends as parts, the other messages as dicts, the
    groups through ``write_group`` when it has one."""
    if groups and write_group is not None:  # [groups to sinks]
        _deliver_with_groups(lambda run: _deliver_mixed(write, append_text, run),
                             write_group, batch, groups)  # type: ignore[arg-type]
    elif len(batch) == 1 and type(batch[0]) is tuple:  # a delta flushed on its own (a burst)
        entry = batch[0]
        append_text(entry[0], entry[1], entry[2], entry[3])  # type: ignore[misc]
    else:
        _deliver_mixed(write, append_text, batch)


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
        self._sinks: list[_SinkEntry] = []
        """Replaced, never changed in place, so ``flush`` walks it without a copy while a sink adds or removes one."""
        self._dict_sinks = 0
        """How many sinks take message dicts only (no ``append_text``): the last one gets the batch uncopied."""
        self._message_checks: list[Callable[[OutputMessage], None]] = []
        """Each sink's ``check(message)`` (a client that refuses some messages at send), in sink order."""
        for sink in sinks or ():
            self.add_sink(sink)
        self._pending_state = LiveState()
        self._flushed_state = LiveState()
        self._buffer: list[_Entry] = []
        self._changes: list[Change] = []
        """The planned change of each buffered dict (fast-path entries carry their own parts), in order."""
        # [groups to sinks] each SendGroup still buffered: (start, end) in _buffer, the normalized group
        self._groups: list[tuple[int, int, OutputGroup]] = []
        # The last `history` flushed messages (None keeps all): a long stream of deltas must not keep
        # every delta alive; the delta state already holds what they add up to.
        self._flushed: deque[_Entry] = deque(maxlen=history)
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
        write = sink_writer(sink)
        write_group = getattr(sink, "write_group", None)  # [groups to sinks]
        append_text = getattr(sink, "append_text", None)
        entry = (sink, write, write_group if callable(write_group) else None,
                 append_text if callable(append_text) else None)
        self._sinks = [*self._sinks, entry]
        self._find_checks()
        return sink

    def remove_sink(self, sink: SinkLike) -> None:
        """Stop delivering to ``sink``; ``ValueError`` if it was never added."""
        for index, (known, *_) in enumerate(self._sinks):
            if known is sink:
                self._sinks = self._sinks[:index] + self._sinks[index + 1:]
                self._find_checks()
                return
        raise ValueError(f"output sink {sink!r} is not attached to this Output")

    def _find_checks(self) -> None:
        checks = (getattr(sink, "check", None) for sink, *_ in self._sinks)
        self._message_checks = [check for check in checks if callable(check)]
        self._dict_sinks = sum(1 for *_, append_text in self._sinks if append_text is None)

    @property
    def sinks(self) -> list[SinkLike]:
        return [sink for sink, *_ in self._sinks]

    # ---- sending ---------------------------------------------------------------------------------

    def send(self, message: OutputMessage | str) -> str:
        """Check and buffer one message; returns its id (``"#<n>"`` when it had none).

        Raises ``OutputMessageError`` (bad shape) or ``DeltaError`` (cannot apply) and then changes
        nothing.
        """
        parts = try_text_append_parts(message)
        if parts is not None:  # the stream's own shape: nothing to drop, nothing to report so far
            normalized = None
            if self._message_checks:
                normalized = text_append_message(parts)
                for check in self._message_checks:
                    check(normalized)
            msg_id, mtype, key, text, _ = parts
            if self._pending_state.append_text(msg_id, mtype, key, text):
                self._buffer.append(parts)
                return msg_id
            if normalized is None:
                normalized = text_append_message(parts)
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
        for sink, *_ in self._sinks:
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
        batch, groups = self._buffer, self._groups
        if not batch and not groups:  # [groups to sinks] an empty group is still sent
            return
        self._buffer = []
        changes = self._changes
        if changes:  # a stream of fast-path appends has none (and no groups): no new lists for them
            self._changes = []
        if groups:
            self._groups = []
        self._record_flushed(batch, changes)
        errors = self._deliver(batch, groups)
        if errors:
            raise SinkError(errors) from errors[0][1]

    def _record_flushed(self, batch: list[_Entry], changes: list[Change]) -> None:
        """Apply a flushed batch to the flushed state (the changes planned at send, the fast-path parts
        again) and keep it in the history."""
        flushed = self._flushed_state
        planned = iter(changes) if changes else None
        for entry in batch:
            if type(entry) is tuple:
                if not flushed.append_text(entry[0], entry[1], entry[2], entry[3]):  # type: ignore[misc]
                    flushed.commit(flushed.plan(text_append_message(entry)))  # cannot happen: the states agree
            else:
                flushed.commit(next(planned))  # type: ignore[arg-type]
        self._flushed.extend(batch)
        self._flushed_count += len(batch)

    def _deliver(self, batch: list[_Entry], groups: list[tuple[int, int, OutputGroup]]
                 ) -> list[tuple[SinkLike, BaseException]] | None:
        """Hand a flushed batch to every sink, in sink order; the ``(sink, error)`` of each sink that
        raised (the others still got the batch), or ``None``."""
        errors: list[tuple[SinkLike, BaseException]] | None = None
        sinks = self._sinks  # replaced, never mutated (add_sink): no copy needed while sinks run
        dicts: list[OutputMessage] | None = None
        dict_sinks = self._dict_sinks
        for sink, write, write_group, append_text in sinks:
            try:
                if append_text is not None:
                    _deliver_parts(write, write_group, append_text, batch, groups)
                    continue
                if dicts is None:
                    dicts = _materialize(batch)
                dict_sinks -= 1
                if groups and write_group is not None:  # [groups to sinks]
                    _deliver_with_groups(write, write_group, dicts, groups)
                elif dicts:
                    write(dicts if dict_sinks == 0 else list(dicts))  # the last one takes the list itself
            except Exception as error:  # noqa: BLE001 - reported by flush, after every sink had its turn
                errors = errors or []
                errors.append((sink, error))
        return errors

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
        return _materialize(self._flushed)  # type: ignore[arg-type]

    @property
    def flushed_count(self) -> int:
        """How many messages were flushed in all (``messages`` keeps only the last ``history``)."""
        return self._flushed_count

    @property
    def pending(self) -> list[OutputMessage]:
        """Messages sent but not yet flushed."""
        return _materialize(self._buffer)

    def __repr__(self) -> str:
        return (f"Output(accept={self.accept!r}, sinks={len(self._sinks)}, flushed={self._flushed_count}, "
                f"pending={len(self._buffer)})")
