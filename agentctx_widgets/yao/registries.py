"""``ctx.mcp`` and ``ctx.search`` answered by Python callables you register, or a clear "not here".

The notebook runs no MCP servers and no search engines; a hook that calls one gets the result of the
Python function registered under that name, with Yao's method names, argument errors and result
shapes, and an unregistered name fails only that call, saying how to register one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .values import SKIP, BatchMethods, NotAvailableHere, YaoServiceError, js_string, json_value


class Mcp(BatchMethods):
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

    def _request(self, request: Any, index: int, on_chunk: Callable[..., Any] | None) -> Any:
        if not isinstance(request, dict):
            return SKIP
        entry: dict[str, Any] = {"mcp": js_string(request.get("mcp", "")), "tool": js_string(request.get("tool", ""))}
        arguments = request.get("arguments") if isinstance(request.get("arguments"), dict) else {}
        try:
            entry["result"] = self._call(entry["mcp"], entry["tool"], arguments)
        except YaoServiceError as error:
            entry["error"] = str(error)
        return entry

    @staticmethod
    def _not_here(method: str, args: tuple, needed: int, usage: str) -> Any:
        if len(args) < needed:
            raise YaoServiceError(usage)
        raise NotAvailableHere("ctx.mcp", f"ctx.mcp.{method} is not available here: only tools can be "
                               "answered by Python callables (services.mcp.register); MCP servers do not run in "
                               "the notebook")


class Search(BatchMethods):
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
