"""The messages of ContextView's stream protocol, kernel ↔ front end, as types (docs/internals.md).

Why one module: the same shapes are built by ``stream.py``, sent by ``view.py``, recorded in
tests/vectors/protocol.json and read by js/src/protocol.js (whose JSDoc ``@typedef``s mirror these,
name for name). Change a shape here, there, and in the vectors together.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, Union

from agentctx_widgets.output.messages import OutputMessage

ContextMessage = dict[str, Any]
"""A Context entry (message or record) in the seed's shape; the protocol never looks inside."""


class OutputEntry(TypedDict):
    """One output message as the delta engine holds it."""

    id: str
    type: str
    props: dict[str, Any]
    done: bool
    group_id: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]


class OutputsState(TypedDict):
    """The delta engine's state: ids in first-seen order, entries by id."""

    order: list[str]
    messages: dict[str, OutputEntry]


class CostValue(TypedDict):
    """A ``Cost`` as the front end gets it (``html.cost.cost_json``): amounts are decimal strings."""

    total: str | None
    """``"0.0035"``; None when nothing in it was priced (shown "unpriced", never $0)."""
    currency: str
    parts: dict[str, str]
    source: str
    estimated: bool
    unpriced: list[str]
    free: bool
    calls: int
    message: str | None
    """How to give a price to the unpriced models (None when every call was priced)."""


class Header(TypedDict):
    """What the view's header shows; computed from the protocol's own copy of the context."""

    name: str
    count: int
    tokens: int
    window: int | None
    model: str | None
    rateLimits: NotRequired[dict[str, str] | None]
    diagnostics: NotRequired[list[dict[str, Any]] | None]
    turnCost: NotRequired[CostValue]
    """What the last turn cost (``ContextView.set_turn_cost``); absent while unknown."""
    contextCost: NotRequired[CostValue]
    """What the context cost in its lifetime (``hooks.usage_log``), else the turns the view was shown."""


class ViewState(TypedDict):
    """The whole front-end state: what a snapshot carries and the ``_snapshot`` trait holds (as JSON)."""

    seq: int
    """Number of the last batch this state includes."""
    header: Header
    context: list[ContextMessage]
    pending: ContextMessage | None
    """The assistant message being assembled, or None."""
    outputs: OutputsState


# ----------------------------------------------------------------------------------------- ops


class CtxChangeOp(TypedDict):
    op: Literal["ctx"]
    action: Literal["added", "updated"]
    index: int
    message: ContextMessage


class CtxRemovedOp(TypedDict):
    op: Literal["ctx"]
    action: Literal["removed"]
    index: int


class CtxResetOp(TypedDict):
    """The view was pointed at another Context."""

    op: Literal["ctx"]
    action: Literal["reset"]
    messages: list[ContextMessage]


class OutOp(TypedDict):
    """One output message, applied with the delta engine (folded appends arrive as one)."""

    op: Literal["out"]
    message: OutputMessage


class PendingOp(TypedDict):
    op: Literal["pending"]
    message: ContextMessage | None


class PendingAppendOp(TypedDict):
    """Text appended to string field ``key`` of content block ``index`` of the pending message."""

    op: Literal["pending_append"]
    index: int
    key: str
    text: str


class HeaderOp(TypedDict):
    op: Literal["header"]
    header: Header


class ClearOutputOp(TypedDict):
    op: Literal["clear_output"]


Op = Union[CtxChangeOp, CtxRemovedOp, CtxResetOp, OutOp, PendingOp, PendingAppendOp, HeaderOp, ClearOutputOp]


# ------------------------------------------------------------------------------------ messages


class Batch(TypedDict):
    """Kernel → front end: the ops since batch ``seq - 1``; applied only in sequence."""

    kind: Literal["batch"]
    seq: int
    ops: list[Op]


class Snapshot(TypedDict):
    """Kernel → front end: the whole state at ``seq`` (the answer to a sync request)."""

    kind: Literal["snapshot"]
    seq: int
    state: ViewState


KernelMessage = Union[Batch, Snapshot]
"""What the kernel sends over the comm."""


class SyncRequest(TypedDict):
    """Front end → kernel: "send me a snapshot; the last batch I applied is ``seq``"."""

    kind: Literal["sync"]
    seq: int


class ContextChange(TypedDict):
    """What ``Context.subscribe`` reports (the protocol follows it op for op)."""

    action: Literal["added", "updated", "removed"]
    index: int
    message: ContextMessage
