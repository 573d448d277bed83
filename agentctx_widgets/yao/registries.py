"""``ctx.mcp`` answered by real MCP servers or Python callables, ``ctx.search`` by Python callables.

A hook's ``ctx.mcp`` calls go to the server registered under that id: a real one
(:class:`~agentctx_widgets.models.mcp.McpServer`, stdio or streamable HTTP: tools, resources, prompts)
or a mapping of Python functions (tools only). Method names, argument errors and result shapes are
Yao's (``agent/context/jsapi_mcp.go``, ``agent/context/mcp.go``); an unregistered id fails only that
call, saying how to register one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from ..models.mcp import McpError, McpServer, stopping
from .fanout import fan_out
from .values import SKIP, BatchMethods, NotAvailableHere, YaoServiceError, js_int, js_string, json_value


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
        return [self._call(server, name, arguments) for name, arguments in calls]

    def CallToolsParallel(self, *args: Any) -> list:  # noqa: N802
        server, calls = self._tool_list("CallToolsParallel", args)
        batch = fan_out([lambda slot, n=name, a=arguments: self._call(server, n, a) for name, arguments in calls],
                        "all", on_error=_raised)
        failed = next((slot for slot in batch.slots if isinstance(slot, _Failed)), None)
        if failed is not None:  # Yao's client.CallToolsParallel returns its error: the call throws
            raise failed.error
        return batch.slots

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
        if tool not in server:
            raise YaoServiceError(f"tool {tool!r} not found on MCP server {server_id!r} (registered: "
                                  f"{', '.join(sorted(server)) or 'none'})")
        return json_value(server[tool](json_value(arguments, "invalid tool arguments")), f"{server_id}.{tool} result")

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
            calls.append((item["name"], item.get("arguments") if isinstance(item.get("arguments"), dict) else {}))
        return js_string(args[0]), calls

    def _batch(self, method: str, args: tuple, mode: Any) -> list:
        if args and isinstance(args[0], list):
            for request in args[0]:  # parseMCPToolRequests (jsapi_mcp.go:536-580): a bad request fails the call
                _checked_request(request)
        return super()._batch(method, args, mode)

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
