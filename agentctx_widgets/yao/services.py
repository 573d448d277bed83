"""The services a Yao hook's ``ctx`` offers, as plain Python objects: one :class:`YaoServices` per request.

Upstream (YaoApp/yao 5a3f9a6a) mounts them on the hook's ``ctx`` in ``agent/context/jsapi.go:65-171``:
``mcp``, ``search``, ``agent``, ``llm`` always; ``trace`` (a no-op object when there is none);
``memory`` when the request has one; ``computer`` / ``workspace`` only when a V2 sandbox provides
them; ``Release()`` (``:32-37``), which in a hook only drops the bridge handle. What each becomes here:

- ``memory`` — :mod:`.memory` (in this process, Yao's namespaces and TTLs, ``context`` per request);
- ``trace`` — :mod:`.trace` (Yao's node, log and update records, for the view);
- ``llm`` — :mod:`.llm` (the notebook's models, by Yao connector name);
- ``agent`` — :class:`Agent`: ``Call / All / Any / Race`` run another loaded assistant through the
  callable the runner passes;
- ``mcp`` / ``search`` — :class:`Mcp` / :class:`Search`: answered by Python callables you register,
  or a "not available here" error saying how to register one;
- ``workspace`` — :mod:`.workspace`, on a local directory you pass (absent otherwise, as in Yao);
- ``sandbox`` / ``computer`` — cannot be emulated (a container, a remote machine): :class:`Unavailable`
  keeps the assistant loadable and fails only the call that needs it, naming the member and why.

Every method takes and returns plain JSON values (trace nodes travel as ``{"id"}``), so the JavaScript
binding can pass them through the host-call bridge; a ``YaoServiceError``'s text is what Yao throws.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..models.protocol import Model
from .ids import NextId, counters
from .llm import Llm, Send, _split_on_chunk
from .memory import Memory, MemoryStore
from .trace import Trace
from .values import NotAvailableHere, YaoServiceError, js_string, json_value
from .workspace import Workspace

AgentRunner = Callable[[str, list, dict, "Callable[[dict], Any] | None"], dict]
"""``runner(agent_id, messages, options, on_message) -> Response``: runs another assistant.

``options`` are Yao's call options (``connector``, ``mode``, ``metadata``, ``skip``); ``on_message``,
when given, is called with each message the sub-agent writes. An unknown id raises ``LookupError``."""

MEMBERS = ("memory", "trace", "mcp", "search", "agent", "llm", "workspace", "sandbox", "computer")
"""The ``ctx`` members this module provides (the binding mounts those :meth:`YaoServices.members` lists)."""


class Agent:
    """``ctx.agent``: agent-to-agent calls (``agent/context/jsapi_agent.go``, ``agent/caller/``).

    ``Call(agent_id, messages, options?)`` returns ``{agent_id, response?, content?, error?}``
    (``agent/caller/types.go:28-34``); ``skip.history`` is always set for a sub-agent
    (``agent/caller/jsapi.go:112-134``); a trace node ``"Agent: <id>"`` (type ``agent_call``) records it
    (``agent/caller/orchestrator.go:261-295``). Failures are the result's ``error``: ``"failed to get
    agent: …"`` for an unknown id, ``"agent call failed: …"`` when it fails (``orchestrator.go:235-286``).
    The batch methods run the requests one after another (Yao: concurrently).
    """

    def __init__(self, runner: AgentRunner | None, trace: Trace | None) -> None:
        self.runner = runner
        self.trace = trace

    def Call(self, *args: Any) -> dict:  # noqa: N802 - Yao's method names
        if len(args) < 2:
            raise YaoServiceError("Call requires agentID and messages parameters")
        if not isinstance(args[0], str):
            raise YaoServiceError("agentID must be a string")
        if not isinstance(args[1], list):
            raise YaoServiceError("messages must be an array")
        options, on_chunk = _split_on_chunk(args[2] if len(args) >= 3 else None)
        return self._call(args[0], args[1], options, on_chunk)

    def All(self, *args: Any) -> list[dict]:  # noqa: N802
        return self._batch(args, "all")

    def Any(self, *args: Any) -> list[dict]:  # noqa: N802
        return self._batch(args, "any")

    def Race(self, *args: Any) -> list[dict]:  # noqa: N802
        return self._batch(args, "race")

    def _call(self, agent_id: str, messages: list, options: dict, on_chunk: Callable[[dict], Any] | None,
              *, batch: bool = False) -> dict:
        result: dict[str, Any] = {"agent_id": agent_id}
        call_options = _call_options(options, batch=batch)
        parsed = [json_value(message, "invalid messages") for message in messages if isinstance(message, dict)]
        if self.runner is None:
            result["error"] = (f"failed to get agent: {agent_id}: no assistants are loaded here: pass "
                               "assistants={id: assistant} when loading the calling assistant")
            return result
        node = None
        if self.trace is not None:
            node = self.trace.add({"agent_id": agent_id, "referer": "agent_fork"},
                                  {"label": f"Agent: {agent_id}", "type": "agent_call", "icon": "smart_toy",
                                   "description": f"A2A call to '{agent_id}'"})
        try:
            response = self.runner(agent_id, parsed, call_options, on_chunk)
        except LookupError as error:  # upstream looks the id up before adding the node; our runner looks
            if node is not None:      # it up when it runs, so the node is there, and fails
                node.Fail(str(error))
            result["error"] = f"failed to get agent: {_reason(error)}"
            return result
        except Exception as error:  # noqa: BLE001 - a failed sub-agent is the result's error, as in Yao
            if node is not None:
                node.Fail(str(error))
            result["error"] = f"agent call failed: {_reason(error)}"
            return result
        if node is not None:
            node.Complete({"agent_id": agent_id, "status": "completed"})
        result["response"] = json_value(response, "agent response")
        content = _completion_text(response)
        if content:
            result["content"] = content
        return result

    def _batch(self, args: tuple, mode: str) -> list[dict]:
        if not args:
            raise YaoServiceError("requires requests array parameter")
        if not isinstance(args[0], list):
            raise YaoServiceError("requests must be an array")
        _, callback = _split_on_chunk(args[1] if len(args) >= 2 else None)
        results: list[dict] = []
        for index, request in enumerate(args[0]):
            if not (isinstance(request, dict) and isinstance(request.get("agent"), str)):
                continue
            messages = request.get("messages") if isinstance(request.get("messages"), list) else []
            options = request.get("options") if isinstance(request.get("options"), dict) else {}
            handler = None
            if callback is not None:
                handler = (lambda name, at: lambda msg: callback(name, at, msg))(request["agent"], index)
            result = self._call(request["agent"], messages, options, handler, batch=True)
            results.append(result)
            if mode == "race" or (mode == "any" and "error" not in result):
                return [result]
        return results


class Mcp:
    """``ctx.mcp`` answered by Python callables: ``register(server, {tool: fn})``.

    ``fn(arguments)`` gets the arguments object and returns the parsed result a hook sees (Yao parses
    the MCP content for it: ``agent/context/JSAPI.md`` "MCPToolResult"). Method names and argument errors
    are Yao's (``agent/context/jsapi_mcp.go``); resources, prompts and samples have no Python stand-in
    and say so. An unregistered server fails only the call that names it.
    """

    def __init__(self) -> None:
        self.servers: dict[str, dict[str, Callable[[dict], Any]]] = {}
        self.descriptions: dict[str, dict[str, dict]] = {}

    def register(self, server: str, tools: Mapping[str, Callable[[dict], Any]], *,
                 schemas: Mapping[str, dict] | None = None) -> None:
        """Answer ``server``'s tools with ``tools[name](arguments)``; ``schemas`` describe them for ListTools."""
        if not isinstance(server, str) or not server:
            raise ValueError(f"Mcp.register(server): expected a non-empty string, got {server!r}")
        for name, fn in tools.items():
            if not callable(fn):
                raise TypeError(f"Mcp.register({server!r}): tool {name!r} is not callable")
        self.servers[server] = dict(tools)
        self.descriptions[server] = {name: dict(schema) for name, schema in (schemas or {}).items()}

    def ListTools(self, *args: Any) -> dict:  # noqa: N802 - Yao's method names
        if not args:
            raise YaoServiceError("ListTools requires mcp parameter")
        server = self._server(js_string(args[0]))
        described = self.descriptions[js_string(args[0])]
        return {"tools": [{"name": name, "description": described.get(name, {}).get("description", ""),
                           "inputSchema": described.get(name, {}).get("inputSchema",
                                                                      {"type": "object", "properties": {}})}
                          for name in server]}

    def CallTool(self, *args: Any) -> Any:  # noqa: N802
        if len(args) < 2:
            raise YaoServiceError("CallTool requires mcp and name parameters")
        arguments = args[2] if len(args) >= 3 and isinstance(args[2], dict) else {}
        return self._call(js_string(args[0]), js_string(args[1]), arguments)

    def CallTools(self, *args: Any) -> list:  # noqa: N802
        return self._call_many("CallTools", args)

    def CallToolsParallel(self, *args: Any) -> list:  # noqa: N802
        return self._call_many("CallToolsParallel", args)

    def All(self, *args: Any) -> list[dict]:  # noqa: N802
        return self._across("All", args, "all")

    def Any(self, *args: Any) -> list[dict]:  # noqa: N802
        return self._across("Any", args, "any")

    def Race(self, *args: Any) -> list[dict]:  # noqa: N802
        return self._across("Race", args, "race")

    def ListResources(self, *args: Any) -> Any:  # noqa: N802
        return self._not_here("ListResources", args, 1, "ListResources requires mcp parameter")

    def ReadResource(self, *args: Any) -> Any:  # noqa: N802
        return self._not_here("ReadResource", args, 2, "ReadResource requires mcp and uri parameters")

    def ListPrompts(self, *args: Any) -> Any:  # noqa: N802
        return self._not_here("ListPrompts", args, 1, "ListPrompts requires mcp parameter")

    def GetPrompt(self, *args: Any) -> Any:  # noqa: N802
        return self._not_here("GetPrompt", args, 2, "GetPrompt requires mcp and name parameters")

    def ListSamples(self, *args: Any) -> Any:  # noqa: N802
        return self._not_here("ListSamples", args, 3, "ListSamples requires mcp, type, and name parameters")

    def GetSample(self, *args: Any) -> Any:  # noqa: N802
        return self._not_here("GetSample", args, 4, "GetSample requires mcp, type, name, and index parameters")

    def _server(self, server: str) -> dict[str, Callable[[dict], Any]]:
        tools = self.servers.get(server)
        if tools is None:
            raise NotAvailableHere("ctx.mcp", f"MCP server {server!r} is not available here: register one with "
                                   f"services.mcp.register({server!r}, {{'tool_name': function}})")
        return tools

    def _call(self, server: str, tool: str, arguments: dict) -> Any:
        tools = self._server(server)
        if tool not in tools:
            raise YaoServiceError(f"tool {tool!r} not found on MCP server {server!r} (registered: "
                                  f"{', '.join(sorted(tools)) or 'none'})")
        return json_value(tools[tool](json_value(arguments, "invalid tool arguments")), f"{server}.{tool} result")

    def _call_many(self, method: str, args: tuple) -> list:
        if len(args) < 2:
            raise YaoServiceError(f"{method} requires mcp and tools parameters")
        if not isinstance(args[1], list):
            raise YaoServiceError("tools parameter must be an array")
        calls = []
        for item in args[1]:  # every item is checked before any tool runs: nothing half-applied
            if not isinstance(item, dict):
                raise YaoServiceError("each tool must be an object")
            if not isinstance(item.get("name"), str) or not item["name"]:
                raise YaoServiceError("tool name is required")
            calls.append((item["name"], item.get("arguments") if isinstance(item.get("arguments"), dict) else {}))
        server = js_string(args[0])
        return [self._call(server, name, arguments) for name, arguments in calls]

    def _across(self, method: str, args: tuple, mode: str) -> list[dict]:
        if not args:
            raise YaoServiceError(f"{method} requires requests parameter")
        if not isinstance(args[0], list):
            raise YaoServiceError("requests must be an array")
        results: list[dict] = []
        for request in args[0]:
            if not isinstance(request, dict):
                continue
            entry: dict[str, Any] = {"mcp": js_string(request.get("mcp", "")), "tool": js_string(request.get("tool", ""))}
            arguments = request.get("arguments") if isinstance(request.get("arguments"), dict) else {}
            try:
                entry["result"] = self._call(entry["mcp"], entry["tool"], arguments)
            except YaoServiceError as error:
                entry["error"] = str(error)
            results.append(entry)
            if mode == "race" or (mode == "any" and "error" not in entry):
                return [entry]
        return results

    @staticmethod
    def _not_here(method: str, args: tuple, needed: int, usage: str) -> Any:
        if len(args) < needed:
            raise YaoServiceError(usage)
        raise NotAvailableHere("ctx.mcp", f"ctx.mcp.{method} is not available here: only tools can be "
                               "answered by Python callables (services.mcp.register); MCP servers do not run in "
                               "the notebook")


class Search:
    """``ctx.search`` answered by Python callables: ``register("web" | "kb" | "db", fn)``.

    ``fn(query, options)`` returns the result a hook sees (Yao's ``types.Result``). Argument errors are
    Yao's (``agent/context/jsapi_search.go:70-357``); ``All / Any / Race`` take ``[{type, query, …}]``
    (``:225-231``) and run one after another; ``Any`` returns the first result without ``error``.
    """

    KINDS = ("web", "kb", "db")

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[str, dict], Any]] = {}

    def register(self, kind: str, handler: Callable[[str, dict], Any]) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"Search.register(kind): expected one of {', '.join(self.KINDS)}, got {kind!r}")
        if not callable(handler):
            raise TypeError(f"Search.register({kind!r}): the handler is not callable")
        self.handlers[kind] = handler

    def Web(self, *args: Any) -> Any:  # noqa: N802 - Yao's method names
        return self._one("Web", args)

    def KB(self, *args: Any) -> Any:  # noqa: N802
        return self._one("KB", args)

    def DB(self, *args: Any) -> Any:  # noqa: N802
        return self._one("DB", args)

    def All(self, *args: Any) -> list:  # noqa: N802
        return self._many("All", args, "all")

    def Any(self, *args: Any) -> list:  # noqa: N802
        return self._many("Any", args, "any")

    def Race(self, *args: Any) -> list:  # noqa: N802
        return self._many("Race", args, "race")

    def _one(self, method: str, args: tuple) -> Any:
        if not args:
            raise YaoServiceError(f"{method} requires query parameter")
        if not isinstance(args[0], str):
            raise YaoServiceError("query must be a string")
        options = args[1] if len(args) >= 2 and isinstance(args[1], dict) else {}
        return self._run(method.lower(), args[0], options)

    def _run(self, kind: str, query: str, options: dict) -> Any:
        handler = self.handlers.get(kind)
        if handler is None:
            raise NotAvailableHere("ctx.search", f"ctx.search.{kind.upper() if kind != 'web' else 'Web'} is not "
                                   f"available here: register one with services.search.register({kind!r}, "
                                   "function(query, options))")
        return json_value(handler(query, json_value(options, "invalid options")), f"search {kind} result")

    def _many(self, method: str, args: tuple, mode: str) -> list:
        if not args:
            raise YaoServiceError(f"{method} requires requests parameter")
        if not isinstance(args[0], list):
            raise YaoServiceError("requests must be an array")
        results: list = []
        for request in args[0]:
            if not isinstance(request, dict):
                continue
            kind, query = request.get("type"), request.get("query")
            options = {key: value for key, value in request.items() if key not in ("type", "query")}
            try:
                if kind not in self.KINDS or not isinstance(query, str):
                    raise YaoServiceError("invalid search request: type must be web, kb or db and query a string")
                result = self._run(kind, query, options)
            except YaoServiceError as error:
                result = {"type": kind, "query": query, "error": str(error)}
            results.append(result)
            failed = isinstance(result, dict) and "error" in result
            if mode == "race" or (mode == "any" and not failed):
                return [result]
        return results


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
    (pass shared ones to keep registrations across requests); ``workspace`` a local directory;
    ``next_id`` the request's id counter and ``send`` the client's output, for ``ctx.llm``'s chunks.
    """

    def __init__(self, *, store: MemoryStore | None = None, user_id: str = "", team_id: str = "",
                 chat_id: str = "", context_id: str = "ctx-1", connectors: Mapping[str, Model] | None = None,
                 model: Model | None = None, agents: AgentRunner | None = None, mcp: Mcp | None = None,
                 search: Search | None = None, workspace: str | os.PathLike | Workspace | None = None,
                 trace_id: str = "T1", next_id: NextId | None = None, send: Send | None = None,
                 clock: Callable[[], float] = time.time, trace_listener: Callable[[dict], None] | None = None) -> None:
        self.store = store or MemoryStore(clock=clock)
        self.memory: Memory = self.store.memory(user_id=user_id, team_id=team_id, chat_id=chat_id,
                                                context_id=context_id)
        self.trace = Trace(trace_id, clock=clock, listener=trace_listener)
        self.llm = Llm(connectors=connectors, default=model, next_id=next_id or counters(), send=send, clock=clock)
        self.agent = Agent(agents, self.trace)
        self.mcp = mcp if mcp is not None else Mcp()
        self.search = search if search is not None else Search()
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


def _call_options(options: dict, *, batch: bool) -> dict:
    """Yao's ``CallOptions`` for a sub-agent (``agent/caller/jsapi.go:112-134, 280-320``)."""
    result: dict[str, Any] = {}
    for key in ("connector", "mode"):
        if isinstance(options.get(key), str):
            result[key] = options[key]
    if isinstance(options.get("metadata"), dict):
        result["metadata"] = json_value(options["metadata"], "invalid metadata")
    skip: dict[str, bool] = {}
    if isinstance(options.get("skip"), dict):
        for key in ("history", "trace", "output", "keyword", "search", "content_parsing"):
            if isinstance(options["skip"].get(key), bool):
                skip[key] = options["skip"][key]
    skip["history"] = True
    if batch:
        skip["output"] = True  # batch calls never write to the client (JSAPI.md "Parallel Agent Calls")
    result["skip"] = skip
    return result


def _completion_text(response: Any) -> str:
    """``extractContentFromCompletion`` (``agent/caller/orchestrator.go:298-326``): a string, or the first text part."""
    completion = response.get("completion") if isinstance(response, dict) else None
    content = completion.get("content") if isinstance(completion, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                return part["text"]
    return ""


def _reason(error: BaseException) -> str:
    text = str(error)
    if isinstance(error, KeyError) and error.args:
        text = str(error.args[0])
    return text or type(error).__name__
