"""The one door the JavaScript binding uses: ``call_service(services, "memory.user.Get", ["k"])``.

The binding (another module) builds each ``ctx`` member in QuickJS as an object whose methods forward
to the host; this module says which methods each member has — the method sets of Yao's bindings at
YaoApp/yao 5a3f9a6a, cited below — and runs a call by its dotted path, with JSON in and JSON out
(a trace node goes back as ``{"id"}``; ``trace.node.<Method>`` takes the node id first). Only the
methods in :data:`METHODS` can be reached, so hook code cannot walk into Python objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .memory import JS_METHODS as MEMORY_METHODS
from .services import YaoServices
from .trace import Trace, TraceNode
from .values import NotAvailableHere

METHODS: Mapping[str, tuple[str, ...]] = {
    "memory": MEMORY_METHODS,  # agent/context/jsapi.go:790-970
    "trace": ("Add", "Parallel", "Info", "Debug", "Error", "Warn", "SetOutput", "SetMetadata", "Complete",
              "Fail", "MarkComplete", "CreateSpace", "GetSpace", "IsComplete", "Release",
              "__release"),  # trace/jsapi/trace.go:36-57: __release and Release are one function
    "trace.node": ("Info", "Debug", "Error", "Warn", "Add", "Parallel", "SetOutput", "SetMetadata", "Complete",
                   "Fail"),  # trace/jsapi/node.go:50-59
    "llm": ("Stream", "GenerateImage", "All", "Any", "Race"),  # agent/context/jsapi_llm.go:72-80
    "agent": ("Call", "All", "Any", "Race"),  # agent/context/jsapi_agent.go:70-75
    # agent/context/jsapi_mcp.go:587-607
    "mcp": ("ListResources", "ReadResource", "ListTools", "CallTool", "CallTools", "CallToolsParallel", "All",
            "Any", "Race", "ListPrompts", "GetPrompt", "ListSamples", "GetSample"),
    "search": ("Web", "KB", "DB", "All", "Any", "Race"),  # agent/context/jsapi_search.go:52-59
    "workspace": ("ReadFile", "WriteFile", "ReadDir", "MkdirAll", "Remove", "RemoveAll", "Rename", "Copy", "Stat",
                  "Exists"),  # agent/context/jsapi_workspace.go:20-29
    "sandbox": ("ReadFile", "WriteFile", "ListDir", "Exec"),  # agent/context/JSAPI.md:2225-2232
    "computer": ("Exec", "VNC", "Proxy", "Info"),  # agent/context/jsapi_computer.go:65-68
}
"""Each member's methods, as Yao's JavaScript binding defines them."""


def mounted(services: YaoServices) -> dict:
    """What the binding should put on ``ctx``: each present member and its methods (plain JSON).

    ``memory`` lists only the namespaces this request has, ``workspace`` is left out when none was
    passed (both as Yao does); ``trace`` carries its ``id`` property.
    """
    shape: dict[str, Any] = {}
    for member in services.members():
        if member == "memory":
            shape["memory"] = {space: list(METHODS["memory"]) for space in services.memory.present()}
        else:
            shape[member] = list(METHODS[member])
    shape["trace_id"] = services.trace.id
    return shape


def call_service(services: YaoServices, path: str, args: list | tuple = ()) -> Any:
    """Run ``ctx.<path>(*args)`` on ``services`` and return its result as JSON data.

    ``path`` is ``"<member>.<Method>"``, ``"memory.<space>.<Method>"`` or ``"trace.node.<Method>"``
    (then ``args[0]`` is the node id). A path outside :data:`METHODS` is a ``ValueError`` (a binding
    bug); a member the request does not have raises :class:`NotAvailableHere` naming it.
    """
    parts = path.split(".") if isinstance(path, str) else []
    args = list(args)
    if len(parts) == 3 and parts[0] == "memory":
        space, method = parts[1], parts[2]
        _check("memory", method, path)
        namespace = getattr(services.memory, space, None) if space in ("user", "team", "chat", "context") else None
        if namespace is None:
            raise NotAvailableHere("ctx.memory", f"ctx.memory.{space} is not available: this request has no "
                                   f"{space} id (Yao leaves the namespace out)")
        return _json(getattr(namespace, method)(*args))
    if len(parts) == 3 and parts[:2] == ["trace", "node"]:
        _check("trace.node", parts[2], path)
        if not args:
            raise ValueError(f"call_service({path!r}): the node id must come first")
        return _json(getattr(services.trace.node(str(args[0])), parts[2])(*args[1:]))
    if len(parts) == 2 and parts[0] in METHODS and parts[0] not in ("memory", "trace.node"):
        member, method = parts
        _check(member, method, path)
        if method == "__release":
            method = "Release"  # a Python name with two leading underscores would be mangled
        if member == "workspace" and services.workspace is None:
            raise NotAvailableHere("ctx.workspace", "ctx.workspace is not available: no workspace directory was "
                                   "passed (Yao mounts it only with a sandbox workspace)")
        return _json(getattr(getattr(services, member), method)(*args))
    raise ValueError(f"call_service: no ctx method at {path!r}")


def _check(member: str, method: str, path: str) -> None:
    if method not in METHODS[member]:
        raise ValueError(f"call_service: no ctx method at {path!r} (ctx.{member} has {', '.join(METHODS[member])})")


def _json(value: Any) -> Any:
    if isinstance(value, TraceNode):
        return value.to_json()
    if isinstance(value, list):
        return [_json(item) for item in value]
    if isinstance(value, Trace):
        return None  # a chained log call returned ctx.trace itself: the binding returns its own object
    return value
