"""A turn as a diff compares it, taken from any of the things a user has at hand.

A :class:`TurnRecord` holds what a person reading two runs side by side looks at: what the user sent,
the reply's text and thinking, the tool calls (name and arguments) and their results, the output
messages the client was shown (deltas already applied, by id), the diagnostics, the usage and the cost
(a turn result's ``cost``, a suite turn's kept ``cost``; a Context's turns have none).
:func:`turn_records` builds the list of them from a ``Context`` (split at each user message), a session
file's path, a turn result (``run_turn``'s, either lifecycle), a list of results, or a plain dict
(``{"messages", "outputs", "diagnostics", "usage"}`` for one turn, ``{"turns": [...]}`` for several, as a
suite case keeps them).

Two runs of the same conversation never agree on ids, timestamps and durations, so every record goes
through a :class:`Normalizer` first: values of *id keys* all become ``#id`` (a run makes them up; output
messages are folded by their real ids before that, and compared by their place in the turn), and
*volatile keys* are left out wherever they stand. The rules are two sets of key names, written down in
``docs/api.md`` and extendable: ``Normalizer().extend(volatile={"seed"}, ids={"request"})``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ..context import Context, MessageType
from ..context.cost import Cost
from ..output.delta import DeltaError, apply_message_in_place, new_state

__all__ = ["ID", "ID_KEYS", "VOLATILE_KEYS", "Normalizer", "TurnRecord", "turn_records"]

ID_KEYS = frozenset({
    "id", "callId", "call_id", "tool_call_id", "toolCallId", "message_id", "messageId", "group_id", "block_id",
    "thread_id", "chat_id", "request_id", "trace_id", "traceId", "chatId", "requestId", "context_id", "contextId",
})
"""Keys whose values are names a run makes up: each becomes ``#id``."""

VOLATILE_KEYS = frozenset({
    "timestamp", "created", "created_at", "createdAt", "duration_ms", "durationMs", "start_time", "end_time",
    "sequence", "chunk_count", "elapsed", "timings", "rateLimits",
})
"""Keys whose values change from run to run with nothing meant by it (clocks, counters): left out."""


@dataclass(frozen=True)
class Normalizer:
    """The rules that make two runs comparable (the module docstring); callable on one turn's values."""

    ids: frozenset[str] = ID_KEYS
    volatile: frozenset[str] = VOLATILE_KEYS

    def extend(self, *, ids: Iterable[str] = (), volatile: Iterable[str] = ()) -> Normalizer:
        """These rules and more: extra id keys and volatile keys."""
        return replace(self, ids=self.ids | frozenset(ids), volatile=self.volatile | frozenset(volatile))

    def apply(self, value: Any) -> Any:
        """``value`` with id keys' values made ``#id`` and volatile keys left out (a new object)."""
        if isinstance(value, Mapping):
            out = {}
            for key, item in value.items():
                if key in self.volatile:
                    continue
                out[key] = ID if key in self.ids and isinstance(item, (str, int)) and item != "" else self.apply(item)
            return out
        if isinstance(value, (list, tuple)):
            return [self.apply(item) for item in value]
        return value


ID = "#id"
"""What every made-up id compares as."""


@dataclass
class TurnRecord:
    """One turn, normalised (the module docstring)."""

    input: str = ""
    text: str = ""
    thinking: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    """``{"id", "name", "arguments"}`` in call order (arguments parsed from JSON where they were text)."""
    tool_results: list[dict] = field(default_factory=list)
    """``{"id", "name", "text"}``."""
    outputs: list[dict] = field(default_factory=list)
    """Output messages, deltas applied, in the order they first came: ``{"type", "props"}``."""
    diagnostics: list[dict] = field(default_factory=list)
    """``{"code", "message"}``."""
    usage: dict | None = None
    cost: Cost | None = None
    """What the turn's model calls cost (``None`` when the source kept no cost)."""
    reply_outputs: frozenset[int] = frozenset()
    """The outputs the reply was read from (a turn result's text, thinking and tool calls): their content
    is compared once, as ``text`` / ``thinking`` / ``tool_calls``, not again as an output's props."""


def turn_records(source: Any, normalizer: Normalizer | None = None) -> list[TurnRecord]:
    """The turns of ``source`` (the module docstring lists what it may be), normalised."""
    rules = normalizer or Normalizer()
    for kind, reader in _READERS:
        if kind(source):
            return [record for part in reader(source) for record in [_record(part, rules)]]
    raise TypeError(f"diff: cannot compare a {type(source).__name__}: give a Context, a session file's path, a "
                    "turn result, a list of them, or a suite case ({'turns': [...]})")


# ---- reading each kind of source into raw turns: {"messages", "outputs", "diagnostics", "usage"} ----


def _is_path(source: Any) -> bool:
    return isinstance(source, (str, os.PathLike))


def _is_result(source: Any) -> bool:
    return hasattr(source, "diagnostics") and hasattr(source, "usage") and (
        hasattr(source, "output") or hasattr(source, "messages"))


def _is_results(source: Any) -> bool:
    return isinstance(source, (list, tuple)) and bool(source) and all(_is_result(item) for item in source)


def _is_case(source: Any) -> bool:
    return isinstance(source, Mapping)


def _is_messages(source: Any) -> bool:
    return isinstance(source, Context) or (isinstance(source, (list, tuple))
                                           and all(isinstance(item, Mapping) for item in source))


def _from_path(source: Any) -> list[dict]:
    return _from_messages(Context.load(source))


def _from_messages(source: Any) -> list[dict]:
    """A conversation split at each user message; what stands before the first one (a system prompt) goes
    with the first turn."""
    messages = source.messages() if isinstance(source, Context) else list(source)
    turns: list[list[dict]] = []
    asked = False  # whether the turn being gathered has its user message yet
    for message in messages:
        is_user = message.get("type") == MessageType.USER
        if not turns or (is_user and asked):
            turns.append([])
            asked = False
        asked = asked or is_user
        turns[-1].append(message)
    return [{"messages": turn, "usage": _summed_usage(turn)} for turn in turns]


def _from_results(source: Any) -> list[dict]:
    """A turn result, or a list of them."""
    results = source if isinstance(source, (list, tuple)) else [source]
    return [_raw_of_result(result) for result in results]


def _from_case(case: Mapping) -> list[dict]:
    turns = case.get("turns")
    if turns is None:
        return [dict(case)]
    if not isinstance(turns, (list, tuple)):
        raise TypeError(f"diff: a case's 'turns' is a list of turns, not a {type(turns).__name__}")
    return [dict(turn) for turn in turns]


_READERS = ((_is_path, _from_path), (_is_result, _from_results), (_is_results, _from_results),
            (_is_case, _from_case), (_is_messages, _from_messages))


def outputs_of(result: Any) -> list:
    """A turn result's output messages: ``output`` (``run_turn``'s), else ``messages`` (a Yao request's)."""
    outputs = getattr(result, "output", None)
    return list(outputs if outputs is not None else getattr(result, "messages", None) or [])


def _raw_of_result(result: Any) -> dict:
    """A turn result: its output messages, diagnostics and usage; its input from the model's last user
    message where the result keeps what the model received."""
    raw: dict[str, Any] = {"outputs": outputs_of(result), "diagnostics": list(result.diagnostics or []),
                           "usage": result.usage, "cost": getattr(result, "cost", None)}
    sent = getattr(result, "model_messages", None) or []
    if sent and isinstance(sent[-1], list):  # a Yao request keeps each model call's messages
        sent = sent[-1]
    users = [message for message in sent if isinstance(message, Mapping) and message.get("type") == MessageType.USER]
    raw["messages"] = [users[-1]] if users else []
    if getattr(result, "error", None):
        raw["diagnostics"].append({"code": "turn_failed", "message": str(result.error.get("message", result.error))})
    return raw


def _summed_usage(messages: list[dict]) -> dict | None:
    usages = [message["usage"] for message in messages if isinstance(message.get("usage"), Mapping)]
    if not usages:
        return None
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total


# ---- one raw turn into a TurnRecord ----


def _record(raw: Mapping, rules: Normalizer) -> TurnRecord:
    record = TurnRecord()
    for message in raw.get("messages") or []:
        _add_message(record, rules.apply(message))
    if raw.get("outputs"):
        record.outputs = _folded_outputs(raw["outputs"], rules)
        if not raw.get("messages") or all(m.get("type") == MessageType.USER for m in raw["messages"]):
            _reply_from_outputs(record)
    record.diagnostics = [{"code": str(item.get("code", "")), "message": str(item.get("message", ""))}
                          for item in raw.get("diagnostics") or [] if isinstance(item, Mapping)]
    error = raw.get("error")
    if error:  # a suite case's turn that failed: its error reads as one more diagnostic
        message = error.get("message", error) if isinstance(error, Mapping) else error
        record.diagnostics.append({"code": "turn_failed", "message": str(message)})
    usage = raw.get("usage")
    record.usage = rules.apply(dict(usage)) if isinstance(usage, Mapping) else None
    record.cost = _cost_of(raw.get("cost"))
    return record


def _cost_of(value: Any) -> Cost | None:
    if isinstance(value, Cost):
        return value
    if isinstance(value, Mapping):
        try:
            return Cost.from_dict(value)
        except ValueError as error:
            raise ValueError(f"diff: a turn's cost does not read back: {error}") from None
    return None


def _add_message(record: TurnRecord, message: Mapping) -> None:
    kind = message.get("type")
    blocks = message.get("content")
    blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks or []
    if kind == MessageType.USER:
        record.input = _joined(record.input, _texts(blocks))
    elif kind == MessageType.ASSISTANT:
        record.text = _joined(record.text, _texts(blocks))
        record.thinking = _joined(record.thinking, "\n\n".join(
            str(block.get("thinking", block.get("text", ""))) for block in blocks
            if isinstance(block, Mapping) and block.get("type") == "thinking"))
        record.tool_calls += [{"id": block.get("callId"), "name": block.get("name"),
                               "arguments": _parsed(block.get("arguments"))}
                              for block in blocks if isinstance(block, Mapping) and block.get("type") == "toolCall"]
    elif kind == MessageType.TOOL_RESULT:
        record.tool_results.append({"id": message.get("callId"), "name": message.get("name"), "text": _texts(blocks)})


def _texts(blocks: Any) -> str:
    return "\n\n".join(str(block.get("text", "")) for block in blocks
                       if isinstance(block, Mapping) and block.get("type") == "text")


def _joined(before: str, more: str) -> str:
    return more if not before else before if not more else f"{before}\n\n{more}"


def _parsed(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    return arguments


def _folded_outputs(outputs: Iterable[Any], rules: Normalizer) -> list[dict]:
    """The output messages with their deltas applied (the client's delta rules), in first-seen order; a
    message the delta engine refuses is kept as it came (type ``refused``, with the reason), so nothing is
    dropped."""
    state = new_state()
    refused = []
    for position, message in enumerate(outputs):
        try:
            apply_message_in_place(state, message)
        except DeltaError as error:
            refused.append({"type": "refused", "props": {"position": position, "message": message, "error": str(error)}})
    folded = [{"type": state["messages"][msg_id].get("type"),
               "props": rules.apply(state["messages"][msg_id].get("props") or {})} for msg_id in state["order"]]
    return folded + refused


def _reply_from_outputs(record: TurnRecord) -> None:
    """A result's reply, read from the outputs the client got: text, thinking and tool calls."""
    used = []
    for key, output in enumerate(record.outputs):
        props = output["props"]
        if output["type"] in ("text", "thinking", "tool_call"):
            used.append(key)
        if output["type"] == "text":
            record.text = _joined(record.text, str(props.get("content", "")))
        elif output["type"] == "thinking":
            record.thinking = _joined(record.thinking, str(props.get("content", "")))
        elif output["type"] == "tool_call":
            record.tool_calls.append({"id": props.get("id"), "name": props.get("name"),
                                      "arguments": _parsed(props.get("arguments"))})
    record.reply_outputs = frozenset(used)
