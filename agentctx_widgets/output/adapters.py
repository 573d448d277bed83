"""Client adapters: what a client that ``accept``s a given format receives, as Yao's writers send it
(``agent/output/adapters/{openai,cui}/`` at ``afab9c2``; DESIGN.md "Output messages and deltas").

Both are ``Output`` sinks: ``write(messages)`` for messages sent with ``Send``, ``write_group(group)``
for one ``SendGroup`` (a normalized group, ``{"id", "messages", "metadata"?}``; ``Output.flush`` calls it
on sinks that have it, in order with the plain writes). ``.chunks`` holds what the client received, one
entry per SSE ``data:`` payload.

- ``CuiAdapter`` (``cui-web``, ``cui-native``, ``cui-desktop``): each message as Yao's CUI writer
  marshals ``message.Message`` (``cui_message``); a group as ONE ``{id, messages, metadata}`` object.
- ``StandardAdapter`` (``standard``, and any other ``accept``, as Yao's ``NewOutput`` routes it):
  OpenAI ``chat.completion.chunk`` dicts as Yao's OpenAI writer sends them; the conversions per type
  are the table in ``message_types``.

What a writer of either API does the same lives here once, and today's Yao writers
(``yao/writers.py``) use it: the ``accept`` routing (:func:`for_accept`, :data:`CUI_ACCEPTS`), the
``[DONE]`` payload, and the chunk around a converter's delta (:class:`OpenAIChunks`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from .diagnostics import diagnostic
from .message_types import YAO_MODEL, ConvertError, Emit, StandardConfig, lookup, to_standard
from .messages import FIELDS, METADATA_FIELDS, OutputGroup, OutputMessageError

DONE = "[DONE]"
"""The payload of the last SSE event Yao's OpenAI writer sends (``data: [DONE]``, openai/writer.go:190-207)."""

CUI_ACCEPTS = frozenset({"cui-web", "cui-native", "cui-desktop"})
"""The ``accept`` values Yao gives its CUI writer (agent/output/output.go:35-37); any other is standard."""

C = TypeVar("C")
S = TypeVar("S")


def for_accept(accept: str, cui: Callable[[], C], standard: Callable[..., S], **options: Any) -> C | S:
    """Yao's ``NewOutput`` routing (agent/output/output.go:24-51, the same at afab9c2 and 5a3f9a6a): a
    ``cui-web`` / ``cui-native`` / ``cui-desktop`` client gets ``cui()``, ``standard`` and every other
    value ``standard(**options)``. The seed's :func:`adapter_for` and today's ``yao.writers.writer_for``
    pass their own pair of writers."""
    return cui() if accept in CUI_ACCEPTS else standard(**options)


class OpenAIChunks:
    """What Yao's OpenAI writer puts around a converter's output, for both APIs' standard writers: a
    ``delta`` emit becomes ``{"id", "object": "chat.completion.chunk", "created", "model", "choices":
    [{"index": 0, "delta", "finish_reason": None}]}`` (createOpenAIChunk, openai/converter.go:317-332),
    with ``role: "assistant"`` on the first chunk of the stream's first text or thinking message
    (writer.go:78-88); a ``chunk`` emit (the ``error`` object) goes out as it is and takes no role.
    ``created`` is each chunk's time unless fixed (Yao: ``time.Now().Unix()``)."""

    model: str
    created: int | None
    _first_chunk: bool

    def _payload(self, chunk_id: str, takes_role: bool, emit: Emit) -> Any:
        if emit.kind == "chunk":
            return emit.body
        delta = emit.body
        if self._first_chunk and takes_role:
            delta = {**delta, "role": "assistant"}
            self._first_chunk = False
        return {
            "id": chunk_id, "object": "chat.completion.chunk",
            "created": self.created if self.created is not None else int(time.time()), "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }


# ---- CUI ----------------------------------------------------------------------------------------

def cui_message(message: dict[str, Any]) -> dict[str, Any]:
    """A normalized message as Yao's CUI writer puts it on the wire (cui/writer.go:90-123 marshals the
    ``message.Message`` struct, types.go:34-65): Yao's fields only, in struct order, ``omitempty`` —
    ``""``, ``false`` and empty props left out; ``metadata`` (when present, even ``{}``) keeps its non-zero
    ``timestamp`` / ``sequence`` / ``trace_id``. ``type`` is always there."""
    out: dict[str, Any] = {"type": message.get("type", "")}
    props = message.get("props")
    if props:
        out["props"] = props
    for key in FIELDS:
        value = message.get(key)
        if value:
            out[key] = value
    metadata = message.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = {key: metadata[key] for key in METADATA_FIELDS if metadata.get(key)}
    return out


def cui_group(group: OutputGroup) -> dict[str, Any]:
    """A normalized group as Yao's CUI writer sends it: ONE object ``{"id", "messages", "metadata"?}``
    (cui/writer.go:58-74, ``message.Group`` types.go:68-72); ``id`` and ``messages`` always there."""
    out: dict[str, Any] = {"id": group["id"], "messages": [cui_message(m) for m in group["messages"]]}
    metadata = group.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = {key: metadata[key] for key in METADATA_FIELDS if metadata.get(key)}
    return out


class CuiAdapter:
    """A CUI client: records (and optionally forwards) what Yao's CUI writer would send.

    ``.messages`` are the normalized messages received (a group's members included); ``.chunks`` the wire
    objects. A group that reaches ``write`` instead of ``write_group`` (a sink list without group support)
    goes out as its members, each with its ``group_id``. The CUI writer never fails and sends nothing on
    close (cui/writer.go:84-87).
    """

    def __init__(self, sink: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self.chunks: list[dict[str, Any]] = []
        self._forward = sink

    def write(self, messages: list[dict[str, Any]]) -> None:
        self.messages.extend(messages)
        self._send([cui_message(message) for message in messages])

    def write_group(self, group: OutputGroup) -> None:
        self.messages.extend(group["messages"])
        self._send([cui_group(group)])

    def _send(self, wire: list[dict[str, Any]]) -> None:
        self.chunks.extend(wire)
        if wire and self._forward is not None:
            self._forward(wire)


# ---- standard (OpenAI) --------------------------------------------------------------------------

class StandardAdapter(OpenAIChunks):
    """An OpenAI-compatible client, as Yao's OpenAI writer (openai/writer.go) serves it.

    Each message becomes what its type's entry in ``message_types`` says (Yao's converters), wrapped in
    ``{"id", "object": "chat.completion.chunk", "created", "model", "choices": [{"index": 0, "delta",
    "finish_reason": None}]}`` (converter.go:318-332); the ``error`` object goes out as it is. As in Yao:

    - ``id`` is the message's own id (``""`` for a message without one); ``model`` is ``"yao-agent"``;
      ``created`` is the time each chunk is made. ``finish_reason`` is always ``None``: Yao never sends a
      finish chunk, and ``finish()`` ends the stream with the ``"[DONE]"`` payload (Yao's ``Close``).
    - No state and no diffing: text, thinking and loading send their prop as it is, so a non-delta
      resend (or a ``replace`` delta) of a text the client already has makes it show twice — we follow
      Yao and record a ``resend_duplicates`` diagnostic (on ``.diagnostics``, and to ``report``).
    - A ``done`` message without ``delta`` sends nothing; ``role: "assistant"`` goes on the first chunk
      of the first text or thinking message only; an ``error`` does not end the stream.
    - An image without a url is Yao's error ``image message missing url``: ``check`` raises it as
      ``OutputMessageError("Send failed: image message missing url")`` for ``Output.send`` to call before
      it buffers anything; ``write`` writes nothing for such a message and raises the same error after
      the rest of the batch (``write_group`` stops at it, as Yao's ``WriteGroup`` does).

    Where we follow the seed (or sense) over Yao — listed in ``message_types``' docstring too: a
    ``tool_call`` carries the seed's ``name`` / ``arguments`` (Yao reads only ``props.function``, which we
    also take); a custom type's fallback link is ``📎 [View <type>](<link>)`` (Yao swaps label and
    target); links to Yao's own view / trace pages are written only when ``base_url`` is given
    (``message_types.YAO_BASE_URL`` is Yao's). Options: ``id`` (one id for every chunk, as an OpenAI
    completion has) and ``created`` (a fixed time, for reproducible chunks) override Yao's values;
    ``locale`` / ``reasoning`` are Yao's ``AdapterConfig.Locale`` / ``Capabilities.Reasoning`` (they
    shape ``stream_start``). ``sink``, if given, receives each batch of new chunks.
    """

    def __init__(self, *, id: str | None = None, created: int | None = None, model: str = YAO_MODEL,
                 base_url: str | None = None, locale: str = "en", reasoning: bool = False,
                 sink: Callable[[list[Any]], None] | None = None,
                 report: Callable[..., None] | None = None) -> None:
        self.id = id
        self.created = created
        self.model = model
        self.config = StandardConfig(base_url=base_url, locale=locale, reasoning=reasoning)
        self.chunks: list[Any] = []
        """The SSE payloads sent: chunk dicts, the ``error`` objects, and ``"[DONE]"`` after ``finish()``."""
        self.messages: list[dict[str, Any]] = []
        self.diagnostics: list[dict] = []
        self.ended = False
        self._forward = sink
        self._report = report
        self._first_chunk = True
        self._shown: dict[str, int] = {}  # message id -> characters of its resent prop a client shows

    # ---- sink ------------------------------------------------------------------------------------

    def check(self, message: dict[str, Any]) -> None:
        """Raise ``OutputMessageError("Send failed: …")`` if Yao's writer would refuse ``message`` (an
        image without a url, converter.go:224-227); changes nothing."""
        try:
            to_standard(message, self.config)
        except ConvertError as error:
            raise OutputMessageError(f"Send failed: {error}") from None

    def check_group(self, group: OutputGroup) -> None:
        """``check`` for every member of a normalized group, with Yao's ``SendGroup failed: …`` text."""
        for message in group["messages"]:
            try:
                to_standard(message, self.config)
            except ConvertError as error:
                raise OutputMessageError(f"SendGroup failed: {error}") from None

    def write(self, messages: list[dict[str, Any]]) -> None:
        """Convert a batch of messages; chunks go to ``.chunks`` (and the forwarding sink)."""
        new: list[Any] = []
        failed: OutputMessageError | None = None
        for message in messages:
            try:
                new.extend(self.convert(message))
            except OutputMessageError as error:
                failed = failed or error
        self._send(new)
        if failed is not None:
            raise failed

    def write_group(self, group: OutputGroup) -> None:
        """Yao's ``WriteGroup`` (openai/writer.go:102-119): each member in turn, no group marker; the first
        member that fails stops the rest (what was converted before it is sent)."""
        new: list[Any] = []
        try:
            for message in group["messages"]:
                new.extend(self.convert(message, failure="SendGroup failed"))
        finally:
            self._send(new)

    def finish(self) -> str | None:
        """End the stream as Yao's ``Close`` does: the ``"[DONE]"`` payload (returned; ``None`` if the
        stream was already finished)."""
        if self.ended:
            return None
        self.ended = True
        self._send([DONE])
        return DONE

    def _send(self, new: list[Any]) -> None:
        self.chunks.extend(new)
        if new and self._forward is not None:
            self._forward(new)

    # ---- conversion ------------------------------------------------------------------------------

    def convert(self, message: dict[str, Any], *, failure: str = "Send failed") -> list[Any]:
        """The payloads one message becomes (Yao's ``Writer.Write``, openai/writer.go:63-99)."""
        self.messages.append(message)
        try:
            emits = to_standard(message, self.config)
        except ConvertError as error:
            raise OutputMessageError(f"{failure}: {error}") from None
        spec = lookup(message.get("type"))
        if spec.resent_prop is not None and emits:
            self._track_resend(message, spec.resent_prop, emits[0].body)
        chunk_id = self.id if self.id is not None else message.get("id", "")
        return [self._payload(chunk_id, spec.takes_role, emit) for emit in emits]

    def _track_resend(self, message: dict[str, Any], prop: str, delta: dict[str, Any]) -> None:
        msg_id = message.get("id")
        if not msg_id:
            return
        sent = next((value for value in delta.values() if isinstance(value, str)), "")
        shown = self._shown.get(msg_id, 0)
        action = message.get("delta_action")
        if message.get("delta"):
            how = f"a {action!r} delta" if action in ("replace", "set", "merge") else None
        else:
            how = "a message without delta"
        if how is not None and shown and sent:
            self._diagnose("resend_duplicates", f"message {msg_id!r}", how=how, id=msg_id, prop=prop,
                           shown=shown)
        self._shown[msg_id] = shown + len(sent)

    def _diagnose(self, code: str, where: str, **details: Any) -> None:
        self.diagnostics.append(diagnostic(code, where, **details))
        if self._report is not None:
            self._report(code, where, **details)


def adapter_for(accept: str, **options: Any) -> StandardAdapter | CuiAdapter:
    """The seed's writers by :func:`for_accept`: a ``CuiAdapter``, or a ``StandardAdapter`` (which alone
    takes ``options``: ``locale``, ``report``, ``created``…)."""
    return for_accept(accept, CuiAdapter, StandardAdapter, **options)
