"""The ``ctx`` a hook receives: who is talking, to which client, and the Output to send through."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

CTX_FIELDS = ("chat_id", "assistant_id", "locale", "authorized", "metadata", "client", "accept")


@dataclass
class HookContext:
    """Seed 000's ``ctx``: fields plus ``Send / SendGroup / Flush`` (and snake_case aliases).

    ``output`` is the turn's :class:`~agentctx_widgets.output.Output`; ``run_turn`` binds a copy of
    this context to each turn's Output, so one ``HookContext`` can be reused across turns.
    """

    chat_id: str | None = None
    assistant_id: str | None = None
    locale: str = "en"
    authorized: dict | None = None
    metadata: dict = field(default_factory=dict)
    client: dict = field(default_factory=dict)
    accept: str = "cui-web"
    output: Any = field(default=None, repr=False, compare=False)

    def Send(self, message: dict | str) -> None:  # noqa: N802 - the seed's name
        """Queue one output message (string shorthand allowed); raises if it is invalid."""
        self._require_output("Send").send(message)

    def SendGroup(self, group: dict) -> None:  # noqa: N802
        """Queue a group ``{"id", "messages", "metadata"?}`` of related messages."""
        self._require_output("SendGroup").send_group(group)

    def Flush(self) -> None:  # noqa: N802
        """Deliver everything queued to every sink now (the view, the client adapter)."""
        self._require_output("Flush").flush()

    send = Send
    send_group = SendGroup
    flush = Flush

    def with_output(self, output: Any) -> HookContext:
        """A copy bound to ``output`` (the turn's Output)."""
        return dataclasses.replace(self, output=output)

    def to_json(self) -> dict:
        """The fields a JavaScript hook sees on ``ctx`` (everything but the Output)."""
        return {name: getattr(self, name) for name in CTX_FIELDS}

    def _require_output(self, method: str) -> Any:
        if self.output is None:
            raise RuntimeError(f"ctx.{method}: this HookContext has no Output; run it through run_turn")
        return self.output
