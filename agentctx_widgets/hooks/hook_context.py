"""The ``ctx`` a hook receives: who is talking, to which client, and the Output to send through.

Its fields are those Yao builds for a hook (``agent/context/jsapi.go:15-115`` at afab9c2): strings
default to ``""``, ``retry`` to false and ``retry_times`` to 0, ``client`` is always an object of
``{type, user_agent, ip}``, and ``search`` / ``metadata`` / ``authorized`` / ``args`` are absent from
a JavaScript hook's ``ctx`` while they are ``None``. One difference, on purpose: ``accept`` defaults to
``"cui-web"`` (the notebook's view is a CUI-like client), where Yao's HTTP layer defaults to
``"standard"``. Every field is also a ``run_turn`` keyword.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

CTX_FIELDS = ("chat_id", "assistant_id", "connector", "search", "locale", "theme", "referer", "route", "accept",
              "retry", "retry_times", "client", "metadata", "authorized", "args")
"""The ``ctx`` fields, in Yao's order (``jsapi.go:31-112``)."""

_ABSENT_WHEN_NONE = frozenset({"search", "metadata", "authorized", "args"})


def _client() -> dict:
    return {"type": "", "user_agent": "", "ip": ""}


@dataclass
class HookContext:
    """Seed 000's ``ctx``: fields plus ``Send / SendGroup / Flush`` (and snake_case aliases).

    ``output`` is the turn's :class:`~agentctx_widgets.output.Output`; ``run_turn`` binds a copy of
    this context to each turn's Output, so one ``HookContext`` can be reused across turns.
    """

    chat_id: str = ""
    assistant_id: str = ""
    connector: str = ""
    search: bool | None = None
    locale: str = ""
    theme: str = ""
    referer: str = ""
    route: str = ""
    accept: str = "cui-web"
    retry: bool = False
    retry_times: int = 0
    client: dict = field(default_factory=_client)
    metadata: dict | None = None
    authorized: dict | None = None
    args: list | None = None
    output: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("chat_id", "assistant_id", "connector", "locale", "theme", "referer", "route", "accept"):
            value = getattr(self, name)
            if value is None:
                setattr(self, name, "")
            elif not isinstance(value, str):
                raise TypeError(f"ctx.{name}: expected a string, got {type(value).__name__} {value!r:.40}")
        if self.search is not None and not isinstance(self.search, bool):
            raise TypeError(f"ctx.search: expected true, false or None, got {self.search!r:.40}")
        if not isinstance(self.retry, bool):
            raise TypeError(f"ctx.retry: expected true or false, got {self.retry!r:.40}")
        if not isinstance(self.retry_times, int) or isinstance(self.retry_times, bool) or self.retry_times < 0:
            raise TypeError(f"ctx.retry_times: expected an int ≥ 0, got {self.retry_times!r:.40}")
        self.client = {**_client(), **(self.client or {})}
        for name, kind in (("metadata", dict), ("authorized", dict), ("args", list), ("client", dict)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"ctx.{name}: expected {'an object' if kind is dict else 'a list'}, got "
                                f"{type(value).__name__}")

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
        """The fields a JavaScript hook sees on ``ctx`` (everything but the Output; ``None`` objects absent)."""
        fields = {name: getattr(self, name) for name in CTX_FIELDS}
        return {name: value for name, value in fields.items() if not (value is None and name in _ABSENT_WHEN_NONE)}

    def _require_output(self, method: str) -> Any:
        if self.output is None:
            raise RuntimeError(f"ctx.{method}: this HookContext has no Output; run it through run_turn")
        return self.output
