"""The services a Yao hook's ``ctx`` offers, as plain Python objects: one :class:`YaoServices` per request.

Upstream (YaoApp/yao 5a3f9a6a) mounts them on the hook's ``ctx`` in ``agent/context/jsapi.go:65-171``:
``mcp``, ``search``, ``agent``, ``llm`` always; ``trace`` (a no-op object when there is none);
``memory`` when the request has one; ``computer`` / ``workspace`` only when a V2 sandbox provides
them; ``Release()`` (``:32-37``), which in a hook only drops the bridge handle. What each becomes here:

- ``memory`` — :mod:`.memory` (in this process, Yao's namespaces and TTLs, ``context`` per request);
- ``trace`` — :mod:`.trace` (Yao's node, log and update records, for the view);
- ``llm`` — :mod:`.llm` (the notebook's models, by Yao connector name);
- ``agent`` — :mod:`.agent_calls`: ``Call / All / Any / Race`` run another loaded assistant through the
  callable the runner passes;
- ``mcp`` / ``search`` — :mod:`.registries`: answered by Python callables you register,
  or a "not available here" error saying how to register one;
- ``workspace`` — :mod:`.workspace`, on a local directory you pass (absent otherwise, as in Yao);
- ``sandbox`` / ``computer`` — cannot be emulated (a container, a remote machine): :class:`Unavailable`
  keeps the assistant loadable and fails only the call that needs it, naming the member and why.

Every method takes and returns plain JSON values (trace nodes travel as ``{"id"}``), so the JavaScript
binding can pass them through the host-call bridge; a ``YaoServiceError``'s text is what Yao throws.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ..models.protocol import Model
from .agent_calls import Agent, AgentRunner
from .clock import SYSTEM_CLOCK, Clock
from .ids import NextId, counters
from .llm import Llm, Send
from .memory import Memory, MemoryStore
from .registries import Mcp, Search
from .trace import Trace
from .values import NotAvailableHere
from .workspace import Workspace

__all__ = ["Agent", "Mcp", "MemoryStore", "Search", "Trace", "Unavailable", "Workspace", "YaoServices"]

MEMBERS = ("memory", "trace", "mcp", "search", "agent", "llm", "workspace", "sandbox", "computer")
"""The ``ctx`` members this module provides (the binding mounts those :meth:`YaoServices.members` lists)."""


class Unavailable:
    """A member that cannot be emulated: any method call raises :class:`NotAvailableHere` saying why.

    The assistant still loads and runs; only the call that needs the member fails. Yao gives a hook
    ``ctx.sandbox`` / ``ctx.computer`` only when a sandbox is configured (``agent/context/jsapi.go:155-162``);
    the binding may mount this object so the hook's error names the member instead of "undefined".
    """

    def __init__(self, member: str, why: str) -> None:
        self.member = member
        self.why = why

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any) -> Any:
            raise NotAvailableHere(self.member, f"{self.member}.{name} is not available here: {self.why}")

        return call


SANDBOX_WHY = ("the assistant's sandbox (a container Yao starts from package.yao's \"sandbox\") cannot run in "
               "the notebook")
COMPUTER_WHY = "a V2 computer (a remote machine with Exec, VNC and Proxy) cannot be emulated in the notebook"


class YaoServices:
    """The ``ctx`` services of one request, ready for a hook (Python) or the JavaScript binding.

    ``store`` keeps memory across requests (one per session); ``user_id`` / ``team_id`` / ``chat_id``
    key its namespaces and ``context_id`` names this request's ``context`` namespace. ``connectors`` and
    ``model`` answer ``ctx.llm``; ``agents`` runs ``ctx.agent``; ``mcp`` / ``search`` are registries
    (pass shared ones to keep registrations across requests; each request gets a view of them with a
    stop of its own); ``workspace`` a local directory;
    ``next_id`` the request's id counter and ``send`` the client's output, for ``ctx.llm``'s chunks;
    ``client`` takes a sub-agent's messages as they are (``thread_id`` set), for ``ctx.agent``.
    """

    def __init__(self, *, store: MemoryStore | None = None, user_id: str = "", team_id: str = "",
                 chat_id: str = "", context_id: str = "ctx-1", connectors: Mapping[str, Model] | None = None,
                 model: Model | None = None, agents: AgentRunner | None = None, mcp: Mcp | None = None,
                 search: Search | None = None, workspace: str | os.PathLike | Workspace | None = None,
                 trace_id: str = "T1", next_id: NextId | None = None, send: Send | None = None,
                 clock: Clock = SYSTEM_CLOCK, trace_listener: Callable[[dict], None] | None = None,
                 client: Send | None = None) -> None:
        self.store = store or MemoryStore(clock=clock)
        self.memory: Memory = self.store.memory(user_id=user_id, team_id=team_id, chat_id=chat_id,
                                                context_id=context_id)
        self.trace = Trace(trace_id, clock=clock, listener=trace_listener)
        self.llm = Llm(connectors=connectors, default=model, next_id=next_id or counters(), send=send, clock=clock)
        self.agent = Agent(agents, self.trace, client=client)  # a sub-agent writes to the client too
        self.mcp = mcp.for_request() if mcp is not None else Mcp()  # a shared registry, a stop of this request's
        self.search = search.for_request() if search is not None else Search()
        self.workspace = workspace if isinstance(workspace, Workspace) or workspace is None else Workspace(workspace)
        self.sandbox = Unavailable("ctx.sandbox", SANDBOX_WHY)
        self.computer = Unavailable("ctx.computer", COMPUTER_WHY)

    @classmethod
    def for_request(cls, ctx: Any, *, context_id: str, **kwargs: Any) -> YaoServices:
        """The services of the request ``ctx`` (a :class:`~agentctx_widgets.hooks.HookContext`) makes.

        As ``agent/context/context.go:23-48``: the user and team ids come from ``ctx.authorized``
        (``user_id`` / ``team_id``, ``openapi/oauth/types/types.go:620-629``), the chat id from
        ``ctx.chat_id``; with no ``authorized`` the ``user`` and ``team`` namespaces are absent.
        """
        authorized = getattr(ctx, "authorized", None) or {}
        user_id, team_id = authorized.get("user_id", ""), authorized.get("team_id", "")
        for name, value in (("user_id", user_id), ("team_id", team_id)):
            if not isinstance(value, str):
                raise TypeError(f"ctx.authorized.{name}: expected a string, got {type(value).__name__}")
        return cls(user_id=user_id, team_id=team_id, chat_id=getattr(ctx, "chat_id", "") or "",
                   context_id=context_id, **kwargs)

    def members(self) -> tuple[str, ...]:
        """The members a hook's ``ctx`` has: all but ``workspace`` when none was passed (as in Yao)."""
        return tuple(name for name in MEMBERS if name != "workspace" or self.workspace is not None)

    def Release(self, *args: Any) -> None:  # noqa: N802 - Yao's name
        """``ctx.Release()`` in a hook: a no-op; the request releases itself (``jsapi.go:176-216``)."""

    def release(self) -> None:
        """End of the request (the runner calls it): clear ``ctx.memory.context`` (``context.go:93-99``)."""
        self.memory.release()
