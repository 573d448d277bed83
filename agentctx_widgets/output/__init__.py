"""Output messages, the delta engine, the ``Output`` buffer and client adapters (seed 000).

Pure Python, no Jupyter imports. See docs/internals.md "agentctx_widgets.output".
"""

from .adapters import DONE, CuiAdapter, StandardAdapter, adapter_for, cui_group, cui_message
from .diagnostics import DIAGNOSTICS, DiagnosticError
from .buffer import Output, Sink, SinkError
from .delta import (
    Change,
    DeltaError,
    apply_message,
    apply_message_in_place,
    commit_change,
    new_state,
    parse_path,
    plan_message,
)
from .messages import (
    DELTA_ACTIONS,
    MESSAGE_TYPES,
    OutputGroup,
    OutputMessage,
    OutputMessageError,
    group_members,
    normalize_group,
    normalize_message,
    without_echoes,
)

__all__ = [
    "DIAGNOSTICS",
    "DONE",
    "DiagnosticError",
    "Change",
    "CuiAdapter",
    "DELTA_ACTIONS",
    "DeltaError",
    "MESSAGE_TYPES",
    "Output",
    "OutputGroup",
    "OutputMessage",
    "OutputMessageError",
    "Sink",
    "SinkError",
    "StandardAdapter",
    "adapter_for",
    "apply_message",
    "apply_message_in_place",
    "commit_change",
    "cui_group",
    "cui_message",
    "group_members",
    "new_state",
    "normalize_group",
    "normalize_message",
    "parse_path",
    "plan_message",
    "without_echoes",
]
