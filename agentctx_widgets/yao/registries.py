"""``ctx.mcp`` answered by real MCP servers or Python callables, ``ctx.search`` by Python callables.

A hook's ``ctx.mcp`` calls go to the server registered under that id: a real one
(:class:`~agentctx_widgets.models.mcp.McpServer`, stdio or streamable HTTP: tools, resources, prompts)
or a mapping of Python functions (tools only). Method names, argument errors and result shapes are
Yao's (``agent/context/jsapi_mcp.go``, ``agent/context/mcp.go``); an unregistered id fails only that
call, saying how to register one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..hooks.caller import call_user_code
from ..models.mcp import McpError, McpServer, stopping
from ..output.diagnostics import diagnostic
from .fanout import fan_out
from .values import (SKIP, BatchMethods, NotAvailableHere, YaoServiceError, check_batch_size, js_int, js_string,
                     json_value, yao_method)


class Mcp(BatchMethods):
    """``ctx.mcp``: ``register(server_id, McpServer.stdio(…) | McpServer.http(…))`` for a real server, or
    ``register(server_id, {tool: fn})`` for Python functions (``fn(arguments)`` returns the parsed result a
    hook sees: ``agent/context/JSAPI.md`` "MCPToolResult").

    A real server answers every method: ``CallTool`` returns the content parsed as Yao parses it
    (``mcp.go:788-834``: a text block as JSON when it parses, an image as ``{type, data, mimeType}``, one
    block alone, not in a list); ``ListSamples`` / ``GetSample`` answer as Yao's client does for a server
    that is not a Yao process (``gou mcp/client/samples.go``: no samples; ``sample not found``). A server
    that crashes, hangs past its timeout or sends too much fails that call with its :class:`McpError`
    text. Python functions answer tools only; resources, prompts and samples say so.
    """

    def __init__(self) -> None:
        self.servers: dict[str, dict[str, Callable[[dict], Any]] | McpServer] = {}
        self.descriptions: dict[str, dict[str, dict]] = {}

    def _answer(self, method: Callable[..., dict], *args: Any) -> Any:
        """A real server's answer; its failure (crash, timeout, cap, protocol error) is the error the hook
        sees. The call also ends when the request stops (``BatchMethods._stopped``): a hook's bridge thread
        is not where Ctrl-C lands, so without this it would wait for the server's timeout."""
        try:
            with stopping(self._stopped):
                return method(*args)
        except McpError as error:
            raise YaoServiceError(str(error)) from None

    def register(self, server: str, tools: Mapping[str, Callable[[dict], Any]] | McpServer, *,
                 schemas: Mapping[str, dict] | None = None) -> None:
        """Answer ``server`` from a real MCP server, or its tools with ``tools[name](arguments)``
        (``schemas`` describe them for ListTools)."""
        if not isinstance(server, str) or not server:
            raise ValueError(f"Mcp.register(server): expected a non-empty string, got {server!r}")
        if isinstance(tools, McpServer):
            self.servers[server] = tools
            return
        if not isinstance(tools, Mapping):
            raise TypeError(f"Mcp.register({server!r}): expected an McpServer or a mapping of tool names to "
                            f"functions, got {type(tools).__name__}")
        for name, fn in tools.items():
            if not callable(fn):
                raise TypeError(f"Mcp.register({server!r}): tool {name!r} is not callable")
        self.servers[server] = dict(tools)
        self.descriptions[server] = {name: dict(schema) for name, schema in (schemas or {}).items()}

    def close(self) -> None:
        """Stop every real server registered here."""
        for server in self.servers.values():
            if isinstance(server, McpServer):
                server.close()

    def ListTools(self, *args: Any) -> dict:  # noqa: N802 - Yao's method names
        if not args:
            raise YaoServiceError("ListTools requires mcp parameter")
        server_id = js_string(args[0])
        server = self._server(server_id)
        if isinstance(server, McpServer):
            return self._answer(server.list_tools)
        described = self.descriptions[server_id]
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
        server, calls = self._tool_list("CallTools", args)
        self._server(server)  # an unknown server fails the whole call (mcp.Select, agent/context/mcp.go:243-247)
        return [self._slot(server, name, arguments, None) for name, arguments in calls]

    def CallToolsParallel(self, *args: Any) -> list:  # noqa: N802
        server, calls = self._tool_list("CallToolsParallel", args)
        self._server(server)
        check_batch_size("CallToolsParallel", len(calls))
        batch = fan_out([lambda slot, n=name, a=arguments: self._slot(server, n, a, slot.cancel)
                         for name, arguments in calls], "all", on_error=_raised, stopped=self._stopped)
        failed = next((slot for slot in batch.slots if isinstance(slot, _Failed)), None)
        if failed is not None:  # the request's stop: the hook ends rather than reading a slot of errors
            raise failed.error
        return batch.slots

    def _slot(self, server_id: str, tool: str, arguments: dict, cancel: Any) -> Any:
        """One call of ``CallTools`` / ``CallToolsParallel``: its failure is its slot's answer, as Yao's MCP
        client gives it (gou 41aeff7 ``mcp/client/tools.go:105, 165-176, 222-233``: an ``isError`` result
        "Error calling tool NAME: failed to call tool: …", parsed as any result), not the whole call's, as
        ``CallTool``'s is. A stop of the request, or of the batch (``cancel``: the hook's limit), still ends
        the call."""
        cancelled = (lambda: "the batch was stopped" if cancel is not None and cancel.is_set() else None)
        try:
            with stopping(cancelled):
                return self._call(server_id, tool, arguments)
        except Exception as error:  # noqa: BLE001 - a failed call is a result here, as in Yao
            if self._stopped() or cancelled():
                raise
            return parse_tool_content(_gou_error(tool, error))

    def ListResources(self, *args: Any) -> Any:  # noqa: N802
        server = self._real("ListResources", args, 1, "ListResources requires mcp parameter")
        return self._answer(server.list_resources, _cursor(args))

    def ReadResource(self, *args: Any) -> Any:  # noqa: N802
        server = self._real("ReadResource", args, 2, "ReadResource requires mcp and uri parameters")
        return self._answer(server.read_resource, js_string(args[1]))

    def ListPrompts(self, *args: Any) -> Any:  # noqa: N802
        server = self._real("ListPrompts", args, 1, "ListPrompts requires mcp parameter")
        return self._answer(server.list_prompts, _cursor(args))

    def GetPrompt(self, *args: Any) -> Any:  # noqa: N802
        server = self._real("GetPrompt", args, 2, "GetPrompt requires mcp and name parameters")
        arguments = args[2] if len(args) >= 3 and isinstance(args[2], dict) else {}
        return self._answer(server.get_prompt, js_string(args[1]), json_value(arguments, "invalid prompt arguments"))

    def ListSamples(self, *args: Any) -> Any:  # noqa: N802
        self._real("ListSamples", args, 3, "ListSamples requires mcp, type, and name parameters")
        return {"samples": [], "total": 0}

    def GetSample(self, *args: Any) -> Any:  # noqa: N802
        self._real("GetSample", args, 4, "GetSample requires mcp, type, name, and index parameters")
        if isinstance(args[3], bool) or not isinstance(args[3], (int, float)):
            raise YaoServiceError("index must be a number")
        js_int(args[3])
        raise YaoServiceError("sample not found")

    def _server(self, server: str) -> dict[str, Callable[[dict], Any]] | McpServer:
        tools = self.servers.get(server)
        if tools is None:
            raise NotAvailableHere("ctx.mcp", f"MCP server {server!r} is not available here: register one with "
                                   f"services.mcp.register({server!r}, McpServer.stdio(command, args)) or "
                                   f"load_assistant(path, mcp={{{server!r}: McpServer…}}), or with Python "
                                   f"functions: services.mcp.register({server!r}, {{'tool_name': function}})")
        return tools

    def _real(self, method: str, args: tuple, needed: int, usage: str) -> McpServer:
        if len(args) < needed:
            raise YaoServiceError(usage)
        server = self._server(js_string(args[0]))
        if not isinstance(server, McpServer):
            raise NotAvailableHere("ctx.mcp", f"ctx.mcp.{method} is not available here: MCP server "
                                   f"{js_string(args[0])!r} is Python functions, which answer tools only; "
                                   "register a real server (McpServer.stdio / McpServer.http) for resources, "
                                   "prompts and samples")
        return server

    def _call(self, server_id: str, tool: str, arguments: dict) -> Any:
        server = self._server(server_id)
        if isinstance(server, McpServer):
            return parse_tool_content(self._answer(server.call_tool, tool, json_value(arguments, "invalid tool arguments")))
        function = _python_tool(server, server_id, tool)
        return json_value(function(json_value(arguments, "invalid tool arguments")), f"{server_id}.{tool} result")

    @staticmethod
    def _tool_list(method: str, args: tuple) -> tuple[str, list[tuple[str, dict]]]:
        if len(args) < 2:
            raise YaoServiceError(f"{method} requires mcp and tools parameters")
        if not isinstance(args[1], list):
            raise YaoServiceError("tools parameter must be an array")
        calls = []
        for item in args[1]:  # every item is checked before any tool runs: nothing half-applied
            if not isinstance(item, dict):
                raise YaoServiceError("each tool must be an object")
            if not isinstance(item.get("name"), str):
                raise YaoServiceError("tool name is required")
            arguments = item.get("arguments") if isinstance(item.get("arguments"), dict) else {}
            calls.append((item["name"], json_value(arguments, "invalid tools parameter")))  # jsapi_mcp.go:166-169
        return js_string(args[0]), calls

    def _batch(self, method: str, mode: Any, args: tuple) -> list:
        if args and isinstance(args[0], list):
            for request in args[0]:  # parseMCPToolRequests (jsapi_mcp.go:536-580): a bad request fails the call
                _checked_request(request)
        return super()._batch(method, mode, args)

    def _request(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        if not isinstance(request, dict):
            return SKIP
        entry: dict[str, Any] = {"mcp": request["mcp"], "tool": request["tool"]}
        arguments = request.get("arguments") if isinstance(request.get("arguments"), dict) else {}
        try:
            result = self._call(entry["mcp"], entry["tool"], arguments)
        except YaoServiceError as error:
            entry["error"] = str(error)
        else:
            if result is not None:  # MCPToolResult's result is omitempty (mcp.go:613)
                entry["result"] = result
        return entry


def _checked_request(request: Any) -> None:
    if not isinstance(request, dict):
        raise YaoServiceError("each request must be an object")
    if not isinstance(request.get("mcp"), str) or not request["mcp"]:
        raise YaoServiceError("request.mcp is required and must be a string")
    if not isinstance(request.get("tool"), str) or not request["tool"]:
        raise YaoServiceError("request.tool is required and must be a string")


def _cursor(args: tuple) -> str | None:
    return js_string(args[1]) if len(args) >= 2 and args[1] is not None else None


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def _raised(index: int, error: BaseException) -> Any:
    return _Failed(error)


def parse_tool_content(result: dict) -> Any:
    """A ``CallToolResult`` as a hook sees it (``mcp.go:788-834``, ``parseToolResponseContent``)."""
    parsed: list = []
    for block in result.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            if block.get("text"):
                parsed.append(_json_or_text(block["text"]))
        elif kind == "image":
            parsed.append({"type": "image", "data": block.get("data", ""), "mimeType": block.get("mimeType", "")})
        elif kind == "resource":
            if block.get("resource") is not None:
                parsed.append(block["resource"])
        else:
            parsed.append({"type": kind, "text": block.get("text", "")})
    if not parsed:
        return None
    return parsed[0] if len(parsed) == 1 else parsed


def _json_or_text(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


class Search(BatchMethods):
    """``ctx.search`` answered by Python callables: ``register("web" | "kb" | "db", fn)``.

    ``fn(query, options)`` returns the result a hook sees (Yao's ``types.Result``). Argument errors are
    Yao's (``agent/context/jsapi_search.go:70-357``); ``All / Any / Race`` take ``[{type, query, …}]``
    (``:225-231``) and run one after another; ``Any`` returns the first result without ``error``.
    """

    KINDS = ("web", "kb", "db")
    _batch_wait_rest = True  # search.go:154-262 waits for every goroutine (wg.Wait)

    def _batch_succeeded(self, result: Any) -> bool:
        """``Any``'s success for search: no error and some items (``search.go:200-215``)."""
        return isinstance(result, dict) and not result.get("error") and bool(result.get("items"))

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[str, dict], Any]] = {}

    def register(self, kind: str, handler: Callable[[str, dict], Any]) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"Search.register(kind): expected one of {', '.join(self.KINDS)}, got {kind!r}")
        if not callable(handler):
            raise TypeError(f"Search.register({kind!r}): the handler is not callable")
        self.handlers[kind] = handler

    # Yao's method names
    Web, KB, DB = (yao_method("_one", method) for method in ("Web", "KB", "DB"))

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

    def _request(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        if not isinstance(request, dict):
            return SKIP
        kind, query = request.get("type"), request.get("query")
        options = {key: value for key, value in request.items() if key not in ("type", "query")}
        try:
            if kind not in self.KINDS or not isinstance(query, str):
                raise YaoServiceError("invalid search request: type must be web, kb or db and query a string")
            return self._run(kind, query, options)
        except YaoServiceError as error:
            return {"type": kind, "query": query, "error": str(error)}


# -- the assistant's MCP tools, offered to the model (agent/assistant/mcp.go) -------------------------

MAX_MCP_TOOLS = 20
"""Yao offers at most 20 MCP tools to the model, the servers' in order (``MaxMCPTools``, ``mcp.go:17-20``)."""

_NON_RETRYABLE = ("network", "timeout", "connection", "unauthorized", "forbidden", "unavailable",
                  "failed to select", "context canceled", "context deadline", "server error", "internal error")
"""``isRetryableToolError``'s patterns (``mcp.go:484-509``): any other failure is retryable by the model."""


def retryable(error: str) -> bool:
    """``isRetryableToolError`` (``mcp.go:484-535``): not an MCP internal issue, so the model may fix it."""
    text = error.lower()
    return not any(pattern in text for pattern in _NON_RETRYABLE)


def mcp_tool_name(server_id: str, tool: str) -> str:
    """``MCPToolName`` (``mcp.go:31-39``): ``server_id__tool``, the id's dots as underscores."""
    return f"{server_id.replace('.', '_')}__{tool}" if server_id and tool else ""


def parse_mcp_tool_name(name: str) -> tuple[str, str] | None:
    """``ParseMCPToolName`` (``mcp.go:48-71``): exactly one ``__``, the id's underscores back to dots."""
    parts = name.split("__") if isinstance(name, str) else []
    if len(parts) != 2 or not all(parts):
        return None
    return parts[0].replace("_", "."), parts[1]


def mcp_server_configs(block: Any) -> list[dict]:
    """``mcp.servers`` of package.yao as Yao reads it (``MCPServerConfig.UnmarshalJSON``,
    ``agent/store/types/types.go:298-357``): ``"id"``, ``{"server_id": "id", "tools": [...]}``,
    ``{"id": ["tool", ...]}`` or ``{"id": {"tools": [...]}}``. A bad entry raises ValueError in Yao's words
    (``mcp format error``, ``convert.go:105-131``), naming the entry."""
    servers = block.get("servers") if isinstance(block, dict) else None
    if servers is None:
        return []
    if not isinstance(servers, list):
        raise ValueError(f"mcp format error: servers must be an array, got {type(servers).__name__}")
    return [_server_config(entry, index) for index, entry in enumerate(servers)]


def _server_config(entry: Any, index: int) -> dict:
    where = f"mcp format error: servers[{index}]"
    if isinstance(entry, str):
        return {"server_id": entry, "tools": []}
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be a string or an object, got {type(entry).__name__}")
    if isinstance(entry.get("server_id"), str) and entry["server_id"]:
        return {"server_id": entry["server_id"], "tools": _names(entry.get("tools"), where)}
    if len(entry) != 1:
        raise ValueError(f"{where}: MCPServerConfig object must have exactly one key or server_id field")
    (server_id, value), = entry.items()
    tools = value if isinstance(value, list) else value.get("tools") if isinstance(value, dict) else None
    if not isinstance(value, (list, dict)):
        raise ValueError(f"{where}: invalid format for server '{server_id}'")
    return {"server_id": server_id, "tools": _names(tools, f"{where} ({server_id!r})")}


def _names(tools: Any, where: str) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
        raise ValueError(f"{where}: tools must be an array of strings")
    return list(tools)


@dataclass(frozen=True)
class OfferedTool:
    """One MCP tool as the model is offered it (``MCPTool``, ``agent/assistant/types.go:42-46``)."""

    name: str
    """``server_id__tool`` (:func:`mcp_tool_name`)."""
    server_id: str
    tool: str
    description: str
    schema: Any
    """The server's ``inputSchema``, as Yao passes it (``mcp.go:153-157``)."""

    @property
    def spec(self) -> dict:
        return {"name": self.name, "description": self.description, "parameters": self.schema}


def _where_registered(server_id: str) -> str:
    return (f"it is not registered here, so the model is not offered its tools (Yao skips a server it cannot "
            f"select, agent/assistant/mcp.go:116-120); register it: load_assistant(path, mcp={{{server_id!r}: "
            f"McpServer.stdio(command, args)}}), or describe it in mcps/ and load with start_mcp=True")


async def offered_tools(registry: Mcp | None, servers: list[dict],
                        stop: Any = None) -> tuple[list[OfferedTool], list[dict]]:
    """The tools ``buildMCPTools`` offers (``mcp.go:75-216``): each server's ``tools/list`` in order, filtered
    by its ``tools`` list, at most :data:`MAX_MCP_TOOLS`; and the diagnostics (``yao_mcp_not_offered``) for what
    Yao only logs: a server not registered here or whose list fails (skipped), a listed tool the server does
    not have, a name Yao cannot route back, the limit."""
    offered: list[OfferedTool] = []
    problems: list[dict] = []
    for config in servers:
        server_id, wanted = config.get("server_id") or "", list(config.get("tools") or [])
        if len(offered) >= MAX_MCP_TOOLS:
            problems.append(diagnostic("yao_mcp_not_offered", "mcp.servers", server=server_id, problem=(
                f"skipped: the model is offered at most {MAX_MCP_TOOLS} MCP tools (mcp.go:17-20, 110-113)")))
            break
        listed, problem = await _listed(registry, server_id, stop)
        if problem:
            problems.append(diagnostic("yao_mcp_not_offered", "mcp.servers", server=server_id, problem=problem))
            continue
        offered.extend(_filtered(server_id, listed, wanted, MAX_MCP_TOOLS - len(offered), problems))
    return offered, problems


async def _listed(registry: Mcp | None, server_id: str, stop: Any) -> tuple[list[dict], str]:
    """A server's tools (``tools/list`` of a real one, on a thread that stops with the request)."""
    if registry is None or server_id not in registry.servers:
        return [], _where_registered(server_id)

    def listing() -> dict:
        with stopping(lambda: "interrupt" if stop is not None and stop.is_set() else None):
            return registry.ListTools(server_id)

    try:
        answer = await asyncio.to_thread(listing)
    except YaoServiceError as error:
        return [], f"tools/list failed, so the model is not offered its tools (mcp.go:123-127): {error}"
    return [tool for tool in answer.get("tools") or [] if isinstance(tool, dict)], ""


def _filtered(server_id: str, listed: list[dict], wanted: list[str], room: int,
              problems: list[dict]) -> list[OfferedTool]:
    tools = [tool for tool in listed if not wanted or tool.get("name") in wanted][:room]
    missing = [name for name in wanted if name not in {tool.get("name") for tool in listed}]
    if missing:
        problems.append(diagnostic("yao_mcp_not_offered", "mcp.servers", server=server_id, problem=(
            f"it has no tool {', '.join(map(repr, missing))} (its tools: "
            f"{', '.join(str(t.get('name')) for t in listed) or 'none'}): Yao offers the model only the ones it has")))
    if parse_mcp_tool_name(mcp_tool_name(server_id, "x")) != (server_id, "x"):
        problems.append(diagnostic("yao_mcp_not_offered", "mcp.servers", server=server_id, problem=(
            f"its id has '_' (or '__'): Yao names its tools {mcp_tool_name(server_id, 'tool')!r} and routes a call "
            "back to another id, so every call fails (a server id must not contain '_', mcp.go:29-30)")))
    return [OfferedTool(mcp_tool_name(server_id, str(tool["name"])), server_id, str(tool["name"]),
                        str(tool.get("description") or ""), tool.get("inputSchema")) for tool in tools]


async def call_offered(registry: Mcp | None, name: str,
                       raw_arguments: Any) -> tuple[str, str, Any, str, bool, str]:
    """A model's call of ``server__tool`` as ``executeSingleToolCall`` runs it (``mcp.go:240-415``): returns
    ``(server_id, tool, result, error, retryable, content)``; the result is the content parsed as
    ``ParsedContent`` (``agent/assistant/types.go:97-149``) — of a failed call too (``agent.go:390-400``): the
    error text, or an ``isError`` result's content; ``content`` is ``ToolCallResult.Content``, what a retry
    request shows the model (``agent.go:824-829``): the result's content as JSON, or the error text.
    Cancelling the awaiting task cancels the call on the server."""
    server_id, tool = parse_mcp_tool_name(name) or ("", "")
    server = registry.servers.get(server_id) if registry is not None else None
    if server is None:  # not retryable (mcp.go:266-275)
        text = f"failed to select MCP client '{server_id}': {_where_registered(server_id)}"
        return server_id, tool, text, text, False, text
    arguments, invalid = _arguments(raw_arguments)
    if not invalid and raw_arguments not in (None, "") and isinstance(server, McpServer):  # the listed schema
        # checks given arguments only (mcp.go:313-357: inside `if Arguments != ""`)
        problem = server.arguments_problem(tool, arguments)
        invalid = f"argument validation failed: {problem}" if problem else ""
    if invalid:  # bad arguments are the model's to fix (mcp.go:313-356)
        return server_id, tool, invalid, invalid, True, invalid
    try:
        answer = await _call_result(server, server_id, tool, arguments)
    except Exception as error:  # noqa: BLE001 - a failed call is an answer (mcp.go:364-376)
        text = f"tool call failed: {error}"
        return server_id, tool, text, text, retryable(text), text
    content = answer.get("content") or []
    raw = orjson.dumps(content).decode()
    if answer.get("isError"):  # the content is the error the model reads (mcp.go:394-404)
        text = f"tool call error: {raw}"
        return server_id, tool, parsed_content(content), text, retryable(text), raw
    return server_id, tool, parsed_content(content), "", False, raw


def _python_tool(server: Mapping[str, Callable[[dict], Any]], server_id: str, tool: str) -> Callable[[dict], Any]:
    """A Python-function server's tool; an unknown one is the call's error (a real server's "unknown tool")."""
    if tool not in server:
        raise YaoServiceError(f"tool {tool!r} not found on MCP server {server_id!r} "
                              f"(registered: {', '.join(sorted(server)) or 'none'})")
    return server[tool]


async def _call_result(server: dict[str, Callable[[dict], Any]] | McpServer, server_id: str, tool: str,
                       arguments: dict) -> dict:
    """One call as a ``CallToolResult`` (``{content, isError}``): a Python function's answer as the one
    text block a server would send."""
    if isinstance(server, McpServer):
        return await server.acall_tool(tool, arguments)
    value = json_value(await call_user_code(_python_tool(server, server_id, tool), arguments), f"{server_id}.{tool}")
    return {"content": text_content(value), "isError": False}


def text_content(value: Any) -> list[dict]:
    """``value`` as one text block of its JSON (what a tool result's content is)."""
    return [{"type": "text", "text": orjson.dumps(value).decode()}]


def _gou_error(tool: str, error: BaseException) -> dict:
    """A call that failed, as gou's MCP client makes it in ``CallTools`` / ``CallToolsParallel``
    (``mcp/client/tools.go:105, 165-176, 222-233``): an ``isError`` result with the text."""
    return {"content": [{"type": "text", "text": f"Error calling tool {tool}: failed to call tool: {error}"}],
            "isError": True}


@dataclass
class ParallelAnswer:
    """One call of :func:`call_parallel`: its ToolCallResponse parts, or ``dropped`` (why it got none)."""

    call: dict
    tool: str = ""
    result: Any = None
    error: str = ""
    retryable: bool = False
    dropped: str = ""
    content: str = ""
    """``ToolCallResult.Content``: the result's content as JSON (``mcp.go:638-650``)."""


async def call_parallel(server: dict[str, Callable[[dict], Any]] | McpServer, server_id: str,
                        calls: list[dict]) -> list[ParallelAnswer]:
    """The calls of one reply to one server, as ``executeServerToolsParallelWithTrace`` runs them
    (``agent/assistant/mcp.go:551-677`` at 5a3f9a6a): arguments read as strict JSON into an object, else
    the call is dropped (``:560-566``, no result); no schema check; all at once (``CallToolsParallel``,
    gou ``mcp/client/tools.go:190-236``: a failed call is an ``isError`` result "Error calling tool …");
    an ``isError`` result is the error "tool call error: <its content as JSON>" (``:651-661``)."""
    answers, ready = [], []
    for call in calls:
        tool = (parse_mcp_tool_name(call["function"]["name"]) or ("", ""))[1]
        raw = call["function"].get("arguments")
        try:
            arguments = {} if raw in (None, "") else orjson.loads(raw) if isinstance(raw, (str, bytes)) else raw
        except orjson.JSONDecodeError as error:
            answers.append(ParallelAnswer(call, tool, dropped=f"its arguments are not JSON ({error})"))
            continue
        if arguments is not None and not isinstance(arguments, dict):
            answers.append(ParallelAnswer(call, tool, dropped=f"its arguments are not an object "
                                                               f"({type(arguments).__name__})"))
            continue
        answer = ParallelAnswer(call, tool)
        answers.append(answer)
        ready.append((answer, arguments or {}))
    results = await asyncio.gather(*(_parallel_result(server, server_id, answer.tool, arguments)
                                     for answer, arguments in ready))
    for (answer, _), result in zip(ready, results):
        content = result.get("content") or []
        answer.result = parsed_content(content)  # ParsedContent, failed or not (agent.go:390-400)
        answer.content = orjson.dumps(content).decode()
        if result.get("isError"):
            answer.error = f"tool call error: {answer.content}"
            answer.retryable = retryable(answer.error)
    return answers


async def _parallel_result(server: dict[str, Callable[[dict], Any]] | McpServer, server_id: str, tool: str,
                           arguments: dict) -> dict:
    """One call of ``CallToolsParallel``: its ``CallToolResult``, a failure as gou's error result."""
    try:
        return await _call_result(server, server_id, tool, arguments)
    except Exception as error:  # noqa: BLE001 - a failed call is an isError result (gou tools.go:222-233)
        return _gou_error(tool, error)


def _arguments(raw: Any) -> tuple[dict, str]:
    """The call's arguments as an object, or the retryable error Yao gives (``mcp.go:313-342``); the schema
    check that follows (``:344-356``) is ``McpServer.arguments_problem``."""
    if raw in (None, ""):
        return {}, ""
    try:
        parsed = orjson.loads(raw) if isinstance(raw, (str, bytes)) else raw
    except orjson.JSONDecodeError as error:
        return {}, f"failed to parse arguments: {error}"
    if not isinstance(parsed, dict):
        return {}, f"arguments must be an object, got {type(parsed).__name__}"
    return parsed, ""


def parsed_content(content: list) -> Any:
    """``ToolCallResult.ParsedContent`` (``agent/assistant/types.go:97-149``): text as JSON when it parses,
    an image as ``{type, data, mimeType}``, a resource's object, other blocks as they are; one alone."""
    results: list = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            if isinstance(block.get("text"), str):
                results.append(_json_or_text(block["text"]))
        elif kind == "image":
            results.append({"type": "image", "data": block.get("data"), "mimeType": block.get("mimeType")})
        elif kind == "resource":
            results.append(block.get("resource"))
        else:
            results.append(block)
    if not results:
        return None
    return results[0] if len(results) == 1 else results
