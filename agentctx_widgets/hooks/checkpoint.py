"""Taking back what a turn appended to a Context, exactly.

A turn only appends (the user input, responses, tool results), but an append may merge into the last
entry instead of adding one (seed 001's merging). So a checkpoint keeps the length and a copy of the
last entry: restoring truncates to the length and puts that entry back if it changed. The runner uses
it to undo a retried or interrupted turn; ``%agentctx run`` to leave the context as it was after a
failed turn.
"""

from __future__ import annotations

from typing import Any

import orjson


class ContextCheckpoint:
    """The state of ``context`` now, to :meth:`restore` later."""

    def __init__(self, context: Any) -> None:
        self.length = len(context)
        self.last = orjson.loads(orjson.dumps(context.at(-1))) if self.length else None

    def restore(self, context: Any) -> None:
        """Put ``context`` back to this checkpoint (entries after it removed, a merged last entry unmerged)."""
        if len(context) > self.length:
            context.truncate(self.length)
        if self.length and len(context) == self.length and context.at(self.length - 1) != self.last:
            context.replace(self.length - 1, self.last)
