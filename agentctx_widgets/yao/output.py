"""Yao's current output API for one request: ``ctx.Send`` (returns the message id), ``SendStream``,
``Append`` / ``Replace`` / ``Merge`` / ``Set``, ``End``, ``EndBlock``, ``MessageID`` / ``BlockID`` /
``ThreadID``, with the lifecycle events Yao sends around them (YaoApp/yao 5a3f9a6a:
agent/context/output.go, jsapi.go:246-746, jsapi_helpers.go).

**Which API a script runs with** (for the loader to wire; ``api_generation.detect_api`` implements it).
Upstream never runs two APIs: each Yao version has one ``ctx``. The seed's (2025-11-26) has ``Send``
(returns nothing, messages keyed by ``id``, closed by ``done``, grouped by ``group_id``), ``SendGroup``,
``Flush`` and ``new Output(ctx)``; 5a3f9a6a's ``ctx`` has none of those four (jsapi.go:34-49 sets only
the methods above, ``agent/output/jsapi/output.go`` is commented out) and its ``parseMessage`` drops
``id`` / ``done`` / ``group_id`` silently. So a script is decided by what it uses:

1. it calls a member only the current API has (``SendStream``, ``Append``, ``Replace``, ``Merge``,
   ``Set``, ``End``, ``EndBlock``, ``MessageID``, ``BlockID``, ``ThreadID`` on its ``ctx``), names a
   current message field (``message_id``, ``block_id``, ``thread_id``, ``chunk_id``), or uses ``Send``'s
   return value → **current** (under the seed API each of these is a TypeError or does nothing);
2. it calls ``SendGroup``, ``Flush`` or ``new Output(ctx)`` → **seed** (5a3f9a6a would throw "not a
   function");
3. both → refused, naming a line of each (no Yao ran it);
4. neither → where it came from: an assistant directory (``package.yao``, ``src/index.ts``: the layout of
   today's Yao) → current; ``hooks_from_js`` / ``hooks_from_python`` (the seed's hooks) → seed. An
   explicit ``api=`` wins over all of this.

**What ``YaoOutput`` does.** Ids come from per-request counters (``message.IDGenerator``, utils.go:10-50):
``M1…`` messages, ``C1…`` chunks, ``B1…`` blocks, ``T1…`` threads. A non-delta ``Send`` sends
``message_start``, the message and ``message_end`` (with ``extra.content`` when props have ``content``);
``SendStream`` only ``message_start`` and the message, ``End`` the ``message_end`` with the content the
request's buffer accumulated (buffer.go:224-266: every delta with a string ``props.content`` onto a
streaming message is appended to it, a ``Replace`` too). A message with a new ``block_id`` is preceded
by ``block_start`` (type ``"mixed"``); ``EndBlock`` sends ``block_end`` with the block's message count.
Deltas inherit the message's ``block_id`` / ``thread_id``. Every event and message reaches each sink as
the wire object Yao marshals (``wire.to_wire``); each JavaScript-level call ends with a flush, as Yao's.

The JavaScript-level methods (``Send``, ``SendStream``, … with positional ``*args`` as the hook passed
them) check their arguments as jsapi.go does and raise :class:`YaoCallError` with Yao's text
(``"Send requires a message argument"``, ``"messageId must be a string"``, ``"invalid content:
message.type is required and must be a string"``, ``"Send failed: image message missing url"``, …).
What Yao accepts silently — a delta onto a message that ended (``Send`` ends one at once: the CUI
client then shows only the delta), ``End`` of an id never started (a ``message_end`` of type ``text`` with 0
chunks is still sent), a second ``End``, ``EndBlock`` of an unknown block (nothing
is sent) — is done as Yao does and recorded on ``.diagnostics`` (codes in ``output.diagnostics.DIAGNOSTICS``).

One difference, on purpose: when the client's writer refuses a message (a standard client's image
without a url), Yao has already sent ``block_start`` / ``message_start`` (silent for that client) and
recorded the message; we ask the writer first (its ``check``) and send and record nothing — the ids the
call took are still used up, so later ids match Yao's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..output.buffer import SinkError, sink_writer
from ..output.diagnostics import diagnostic
from .clock import SYSTEM_CLOCK, Clock
from .ids import NextId, counters
from .wire import (
    BLOCK_END,
    BLOCK_START,
    EVENT,
    MESSAGE_END,
    MESSAGE_START,
    TEXT,
    MessageValueError,
    YaoMessage,
    block_end_data,
    block_start_data,
    event_message,
    message_end_data,
    message_start_data,
    parse_message,
    to_wire,
)

Wire = dict[str, Any]
SinkLike = Any  # an object with write(list[dict]) (and optionally check(dict)), or a callable


class YaoCallError(Exception):
    """What a ``ctx`` method throws into the hook: Yao's ``bridge.JsException`` text, as it is."""


class OutputWriteError(RuntimeError):
    """The client's writer refused a message (Yao's ``out.Send`` error, e.g. ``image message missing url``)."""


class IdGenerator:
    """``message.IDGenerator`` (utils.go:10-50): one counter per kind, per request. ``next_id`` is the
    request's shared counter (``yao.ids.NextId``, so hook messages continue the runner's ``M`` / ``C``
    sequence); by default a fresh one."""

    def __init__(self, next_id: NextId | None = None) -> None:
        self.next_id = next_id or counters()

    def chunk(self) -> str:
        return self.next_id("C")

    def message(self) -> str:
        return self.next_id("M")

    def block(self) -> str:
        return self.next_id("B")

    def thread(self) -> str:
        return self.next_id("T")


@dataclass(slots=True)
class _MessageMeta:
    """``MessageMetadata``: what a delta inherits and ``message_end`` reports."""

    block_id: str
    thread_id: str
    type: str
    start_ns: int
    chunk_count: int


@dataclass(slots=True)
class _BlockMeta:
    type: str
    start_ns: int
    message_count: int = 0


class _StreamingContent:
    """A streaming message's content in the request's buffer (ChatBuffer, buffer.go:198-266): a string
    grows by each delta's string ``props.content``; a non-string is replaced by the first one. Kept as
    parts, joined at ``End``, so a long stream costs each append's size, not the text's."""

    __slots__ = ("parts",)

    def __init__(self, content: Any) -> None:
        self.parts: list[str] | None = [content] if isinstance(content, str) else None

    def append(self, text: str) -> None:
        if self.parts is None:
            self.parts = [text]
        else:
            self.parts.append(text)

    def text(self) -> str:
        """CompleteStreamingMessage's result: the content when it is a string, else ``""``."""
        return "".join(self.parts) if self.parts is not None else ""


class YaoOutput:
    """The output side of one Yao request (a ``ctx``'s ``Send`` and friends). See the module docstring.

    ``sinks`` get lists of wire objects (``write(messages)``); a sink's ``check(message)`` may refuse a
    message before anything is sent. ``next_id`` is the request's id counter (``yao.ids``). ``thread_id`` is the stack's id for a nested agent call (Yao sets it
    on every new message of a non-root stack); ``history=False`` is Yao's ``Skip.History`` (no buffer, so
    ``End`` sends no content); ``on_message(msg) -> int`` is ``Options.OnMessage`` (non-zero skips the
    message, as ``ctx.agent.Call``'s ``onChunk`` may).
    """

    def __init__(self, sinks: Iterable[SinkLike] | None = None, *, thread_id: str = "", history: bool = True,
                 clock: Clock | None = None, next_id: NextId | None = None,
                 on_message: Callable[[YaoMessage], int] | None = None) -> None:
        self.ids = IdGenerator(next_id)
        self.clock = clock or SYSTEM_CLOCK
        self.thread_id = thread_id
        self.history = history
        self.diagnostics: list[dict[str, str]] = []
        self._on_message = on_message
        self._sinks: list[tuple[SinkLike, Callable[[list[Wire]], None]]] = []
        for sink in sinks or ():
            self.add_sink(sink)
        self._messages: dict[str, _MessageMeta] = {}
        self._blocks: dict[str, _BlockMeta] = {}
        self._streaming: dict[str, _StreamingContent] = {}  # ChatBuffer's streaming messages
        self._ended: set[str] = set()  # ended and not yet written to again (for after_end)
        self._end_calls: set[str] = set()  # ids End was called for (for end_twice)
        self._pending: list[Wire] = []

    # ---- sinks -----------------------------------------------------------------------------------

    def add_sink(self, sink: SinkLike) -> SinkLike:
        self._sinks.append((sink, sink_writer(sink, "a Yao output sink")))
        return sink

    def flush(self) -> None:
        """Deliver what was sent since the last flush to every sink (``SinkError`` if any raised)."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        errors = []
        for sink, write in self._sinks:
            try:
                write(list(batch))
            except Exception as error:  # every sink gets the batch; the failures are raised together
                errors.append((sink, error))
        if errors:
            raise SinkError(errors) from errors[0][1]

    def forward(self, wire: dict) -> None:
        """A message another stack already wrote (a sub-agent's, with its ``thread_id`` and its own
        ``message_start`` / ``message_end``), passed to the sinks as it is at the next :meth:`flush`
        (Yao's forked context writes to the same writer, ``agent/context/context.go:182``)."""
        self._pending.append(dict(wire))

    def _emit(self, msg: YaoMessage) -> None:
        self._pending.append(to_wire(msg))

    def _event(self, event: str, data: Any) -> None:
        self._emit(event_message(event, data))

    def _check(self, msg: YaoMessage) -> None:
        wire = to_wire(msg)
        for sink, _ in self._sinks:
            check = getattr(sink, "check", None)
            if callable(check):
                try:
                    check(wire)
                except ValueError as error:
                    raise OutputWriteError(str(error)) from error

    def _note(self, code: str, where: str, **details: Any) -> None:
        self.diagnostics.append(diagnostic(code, where, **details))

    def _since_ms(self, start_ns: int) -> int:
        return (self.clock.mono_ns() - start_ns) // 1_000_000  # Go's Duration.Milliseconds()

    def _start_block(self, block_id: str) -> None:
        """block_start for a block id seen for the first time; every message counts (output.go:95-122)."""
        if block_id not in self._blocks:
            self._event(BLOCK_START, block_start_data(block_id, "mixed", self.clock.wall_ms()))
            self._blocks[block_id] = _BlockMeta("mixed", self.clock.mono_ns())
        self._blocks[block_id].message_count += 1

    def _start_message(self, msg: YaoMessage) -> None:
        self._event(MESSAGE_START, message_start_data(msg.message_id, msg.type, self.clock.wall_ms(),
                                                      msg.thread_id))
        self._messages[msg.message_id] = _MessageMeta(msg.block_id, msg.thread_id, msg.type,
                                                      self.clock.mono_ns(), 1)

    # ---- Go level: context/output.go --------------------------------------------------------------

    def send(self, msg: YaoMessage, *, via: str = "Send") -> None:
        """``ctx.Send`` (output.go:17-223). ``msg`` gets its ids filled in; raises ``OutputWriteError``.
        ``via`` names the hook's call in diagnostics."""
        if self._on_message is not None and self._on_message(msg) != 0:
            return
        if msg.type == EVENT:
            self._record_event(msg)
            if msg.delta:
                self._send_delta(msg, via, event=True)
            else:
                self._emit(msg)
        elif msg.delta:
            self._send_delta(msg, via)
        else:
            self._open(msg)
            self._end_message(msg.message_id, self._messages[msg.message_id], (msg.props or {}).get("content"))
            self._ended.add(msg.message_id)

    def _end_message(self, message_id: str, meta: _MessageMeta | None, content: Any) -> None:
        """``message_end``, with ``extra.content`` unless ``content`` is None; for a message never
        started (no ``meta``) of type ``text``, no thread, 0 ms and 0 chunks."""
        extra = None if content is None else {"content": content}
        if meta is None:
            data = message_end_data(message_id, TEXT, self.clock.wall_ms(), "", 0, 0, extra=extra)
        else:
            data = message_end_data(message_id, meta.type, self.clock.wall_ms(), meta.thread_id,
                                    self._since_ms(meta.start_ns), meta.chunk_count, extra=extra)
        self._event(MESSAGE_END, data)

    def _open(self, msg: YaoMessage) -> None:
        """A new message (``Send`` and ``SendStream``): its ids filled in, the writers asked, then
        ``block_start`` for a new block, ``message_start`` and the message."""
        if not msg.chunk_id:
            msg.chunk_id = self.ids.chunk()
        if not msg.thread_id and self.thread_id:
            msg.thread_id = self.thread_id
        if not msg.message_id:
            msg.message_id = self.ids.message()
        self._check(msg)
        if msg.block_id:
            self._start_block(msg.block_id)
        self._start_message(msg)
        self._emit(msg)

    def _send_delta(self, msg: YaoMessage, via: str, *, event: bool = False) -> None:
        """A delta: it inherits its message's block and thread, counts as one of its chunks and grows the
        streaming content; onto a message that ended, ``after_end``. An event sent as a delta takes no
        chunk id and no writer's check."""
        meta = self._messages.get(msg.message_id) if msg.message_id else None
        if meta is not None:
            msg.block_id = msg.block_id or meta.block_id
            msg.thread_id = msg.thread_id or meta.thread_id
        if not event:
            if not msg.chunk_id:
                msg.chunk_id = self.ids.chunk()
            self._check(msg)
        if msg.message_id in self._ended:
            self._ended.discard(msg.message_id)  # the client's cache is open again after this delta
            if msg.delta_action != "replace" or msg.delta_path:  # a whole replace leaves the same props
                self._note("after_end", f"ctx.{via}({msg.message_id!r})", method=via, id=msg.message_id)
        if meta is not None:
            meta.chunk_count += 1
            content = (msg.props or {}).get("content")
            if isinstance(content, str) and msg.message_id in self._streaming:
                self._streaming[msg.message_id].append(content)
        self._emit(msg)

    def _record_event(self, msg: YaoMessage) -> None:
        """A ``message_start`` event sent through ``Send`` (the LLM stream handler's) records the message
        for the deltas that follow (output.go:33-49)."""
        props = msg.props or {}
        data = props.get("data")
        if props.get("event") == MESSAGE_START and isinstance(data, dict) and data.get("message_id"):
            self._messages[data["message_id"]] = _MessageMeta("", data.get("thread_id", ""), data.get("type", ""),
                                                              self.clock.mono_ns(), 0)

    def send_stream(self, msg: YaoMessage) -> str:
        """``ctx.SendStream`` (output.go:229-337): like ``send`` without ``message_end``; returns the id
        (``""`` for an event, which goes through ``send``)."""
        if msg.type == EVENT:
            self.send(msg)
            return ""
        self._open(msg)
        if self.history:
            self._streaming[msg.message_id] = _StreamingContent((msg.props or {}).get("content"))
        return msg.message_id

    def end(self, message_id: str, final_content: str = "") -> None:
        """``ctx.End`` (output.go:342-406): append ``final_content`` (a ``text`` delta), then ``message_end``
        with the content the buffer holds; an unknown id still gets one (type ``text``, 0 chunks)."""
        if not message_id:
            return
        if final_content:
            self.send(YaoMessage(type=TEXT, message_id=message_id, delta=True, delta_action="append",
                                 props={"content": final_content}), via="End")
        where = f"ctx.End({message_id!r})"
        buffered = self._streaming.pop(message_id, None)
        content = buffered.text() if buffered is not None else ""
        meta = self._messages.get(message_id)
        if meta is None:
            self._note("end_unknown", where, id=message_id)
        elif message_id in self._end_calls:
            self._note("end_twice", where, id=message_id)
        self._ended.add(message_id)
        self._end_calls.add(message_id)
        self._end_message(message_id, meta, content or None)

    def end_block(self, block_id: str) -> None:
        """``ctx.EndBlock`` (output.go:451-477): ``block_end`` for a block a message used, else nothing."""
        if not block_id:
            return
        block = self._blocks.get(block_id)
        if block is None:
            self._note("block_unknown", f"ctx.EndBlock({block_id!r})", id=block_id)
            return
        self._event(BLOCK_END, block_end_data(block_id, block.type, self.clock.wall_ms(),
                                              self._since_ms(block.start_ns), block.message_count))

    # ---- JavaScript level: jsapi.go (each call flushes, as Yao's do) -------------------------------

    def _parse(self, value: Any, prefix: str) -> YaoMessage:
        try:
            return parse_message(value)
        except MessageValueError as error:
            raise YaoCallError(f"{prefix}: {error}") from error

    def _run(self, failure: str, action: Callable[[], Any]) -> Any:
        try:
            result = action()
        except OutputWriteError as error:
            self.flush()
            raise YaoCallError(f"{failure}: {error}") from error
        self.flush()
        return result

    @staticmethod
    def _message_id(args: tuple, usage: str, count: int) -> str:
        if len(args) < count:
            raise YaoCallError(usage)
        if not isinstance(args[0], str):
            raise YaoCallError("messageId must be a string")
        return args[0]

    def _new_message(self, args: tuple, method: str) -> YaoMessage:
        """``Send`` / ``SendStream``'s ``(message, blockId?)``: the message, the block id filled in."""
        if len(args) < 1:
            raise YaoCallError(f"{method} requires a message argument")
        msg = self._parse(args[0], "invalid message")
        if len(args) >= 2 and isinstance(args[1], str) and not msg.block_id:
            msg.block_id = args[1]
        return msg

    def Send(self, *args: Any) -> str:
        """``ctx.Send(message, blockId?)`` (jsapi.go:252-299): returns the message id."""
        msg = self._new_message(args, "Send")
        if not msg.message_id:
            msg.message_id = self.ids.message()
        self._run("Send failed", lambda: self.send(msg))
        return msg.message_id

    def SendStream(self, *args: Any) -> str:
        """``ctx.SendStream(message, blockId?)`` (jsapi.go:307-345)."""
        msg = self._new_message(args, "SendStream")
        return self._run("SendStream failed", lambda: self.send_stream(msg))

    def End(self, *args: Any) -> str:
        """``ctx.End(messageId, finalContent?)`` (jsapi.go:352-396)."""
        message_id = self._message_id(args, "End requires a messageId argument", 1)
        final = args[1] if len(args) >= 2 and isinstance(args[1], str) else ""
        self._run("End failed", lambda: self.end(message_id, final))
        return message_id

    def _delta(self, message_id: str, msg: YaoMessage, method: str, action: str, path: str) -> str:
        msg.message_id, msg.delta, msg.delta_action, msg.delta_path = message_id, True, action, path
        self._run(f"{method} failed", lambda: self.send(msg, via=method))
        return message_id

    def _path_delta(self, args: tuple, method: str, what: str) -> str:
        """``Append`` / ``Merge``'s ``(messageId, content|data, path?)``: a delta of the method's action."""
        message_id = self._message_id(args, f"{method} requires messageId and {what} arguments", 2)
        msg = self._parse(args[1], f"invalid {what}")
        path = args[2] if len(args) >= 3 and isinstance(args[2], str) else ""
        return self._delta(message_id, msg, method, method.lower(), path)

    def Replace(self, *args: Any) -> str:
        """``ctx.Replace(messageId, message)`` (jsapi.go:403-450): a ``replace`` delta of the whole props."""
        message_id = self._message_id(args, "Replace requires messageId and message arguments", 2)
        return self._delta(message_id, self._parse(args[1], "invalid message"), "Replace", "replace", "")

    def Append(self, *args: Any) -> str:
        """``ctx.Append(messageId, content, path?)`` (jsapi.go:460-513): a string is a ``text`` delta."""
        return self._path_delta(args, "Append", "content")

    def Merge(self, *args: Any) -> str:
        """``ctx.Merge(messageId, data, path?)`` (jsapi.go:522-575)."""
        return self._path_delta(args, "Merge", "data")

    def Set(self, *args: Any) -> str:
        """``ctx.Set(messageId, data, path)`` (jsapi.go:583-640): the path is required."""
        message_id = self._message_id(args, "Set requires messageId, data, and path arguments", 3)
        msg = self._parse(args[1], "invalid data")  # Yao parses the data before it looks at the path
        if not isinstance(args[2], str):
            raise YaoCallError("path must be a string")
        if args[2] == "":
            raise YaoCallError("path cannot be empty for Set operation")
        return self._delta(message_id, msg, "Set", "set", args[2])

    def MessageID(self, *args: Any) -> str:
        """``ctx.MessageID()`` (jsapi.go:646-664): the next ``M<n>``."""
        return self.ids.message()

    def BlockID(self, *args: Any) -> str:
        """``ctx.BlockID()`` (jsapi.go:670-688): the next ``B<n>``."""
        return self.ids.block()

    def ThreadID(self, *args: Any) -> str:
        """``ctx.ThreadID()`` (jsapi.go:694-712): the next ``T<n>``."""
        return self.ids.thread()

    def EndBlock(self, *args: Any) -> None:
        """``ctx.EndBlock(blockId)`` (jsapi.go:718-746): returns ``undefined``."""
        if len(args) < 1:
            raise YaoCallError("EndBlock requires block_id argument")
        if not isinstance(args[0], str):
            raise YaoCallError("block_id must be a string")
        self._run("EndBlock failed", lambda: self.end_block(args[0]))
        return None
