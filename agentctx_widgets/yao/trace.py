"""``ctx.trace``: Yao's trace of a request — nodes, logs and the update events its UI renders.

Upstream (YaoApp/yao 5a3f9a6a) a request owns one trace manager (``trace/manager.go``); the hook's
``ctx.trace`` is its JavaScript face (``trace/jsapi/trace.go:21-57``) and every node ``Add`` returns has
its own methods (``trace/jsapi/node.go:43-59``). What we keep, as Yao records it:

- ``Add(input, option?)`` makes the first node the root; later ones follow the *current* nodes: these
  are completed first unless ``autoCompleteParent`` is false, and become the new node's ``parent_ids``
  (``manager.go:104-217``). ``Parallel([{input, option}])`` branches from the first current node and
  makes all branches current (``manager.go:219-320``). ``node.Add`` adds a child without moving the
  current nodes and, as upstream, broadcasts nothing (``node.go:69-101``).
- ``Info / Debug / Warn / Error(message)`` log to every current node (``manager.go:322-374``);
  ``SetOutput``, ``SetMetadata``, ``Complete(output?)``, ``Fail(error)`` act on the current nodes
  (``manager.go:376-519``); a node's own methods act on that node (``node.go``). ``Fail`` logs
  ``"Node failed: <error>"`` first. ``MarkComplete`` completes the trace once (``manager.go:536-574``).
- The records are Yao's JSON: nodes (``trace/types/types.go:58-71``: ``id, parent_ids, children,
  label, type, icon, description, metadata?, status, input?, output?, created_at, start_time,
  end_time, updated_at``, times in ms), logs (``types/driver.go:6-12``) and updates (``types.go:101-131``:
  ``node_start``, ``node_complete``, ``node_failed``, ``node_updated``, ``log_added``,
  ``space_created``, ``complete``). ``listener`` receives each update as it happens (the view).

Upstream's quirk, kept with a diagnostic: ``ctx.trace.Add`` and ``ctx.trace.Parallel`` read only
``label``, ``icon`` and ``description`` from the option (``trace/jsapi/trace.go:196-209, 260-269``), so
a ``type`` given there (as JSAPI.md's own examples do) is dropped; ``node.Add`` reads ``type`` and
``autoCompleteParent`` too (``node.go:21-40``). Differences: node ids are ``N1, N2, …`` and space ids ``S1, …``
per trace (upstream random); ``children`` in a record lists child ids (:meth:`Trace.tree` nests them as
upstream's JSON does); spaces are created and read back, their key/value store is not emulated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..output.diagnostics import diagnostic
from .clock import SYSTEM_CLOCK, Clock
from .values import YaoServiceError, js_string, json_value, yao_method

Listener = Callable[[dict], None]


class TraceNode:
    """What ``Add`` / ``Parallel`` return: a node's ``id`` and the methods Yao's node object has.

    The JavaScript bridge passes ``to_json()`` (``{"id"}``) and calls back through
    :meth:`Trace.node` — a node is plain data on the wire.
    """

    def __init__(self, trace: Trace, node_id: str) -> None:
        self._trace = trace
        self.id = node_id

    def __repr__(self) -> str:
        return f"TraceNode({self.id!r})"

    def to_json(self) -> dict:
        return {"id": self.id}

    # Yao's method names: Info / Debug / Warn / Error log to this node
    Info, Debug, Warn, Error = (yao_method("_log_args", level) for level in ("info", "debug", "warn", "error"))

    def Add(self, *args: Any) -> TraceNode:  # noqa: N802
        """A child of this node (``node.go:69-101``); the current nodes stay as they are."""
        if len(args) < 2:
            raise YaoServiceError("Add requires 2 arguments: (input, option)")
        if not isinstance(args[0], (dict, list)):
            raise YaoServiceError("first argument must be an object")
        if not isinstance(args[1], (dict, list)):
            raise YaoServiceError("second argument must be an object")
        option = _node_option(args[1]) if isinstance(args[1], dict) else {}
        return self._trace._new_node(args[0], option, [self.id], broadcast=False)

    def Parallel(self, *args: Any) -> list[TraceNode]:  # noqa: N802
        if not args:
            raise YaoServiceError("Parallel requires an array argument")
        if not isinstance(args[0], list):
            raise YaoServiceError("argument must be an array")
        items = [_parallel_item(item, _node_option) for item in args[0] if isinstance(item, dict)]
        return [self._trace._new_node(data, option, [self.id], broadcast=False) for data, option in items]

    def SetOutput(self, *args: Any) -> TraceNode:  # noqa: N802
        if not args:
            raise YaoServiceError("SetOutput requires an output argument")
        self._trace._set_output([self.id], json_value(args[0], "invalid output"))
        return self

    def SetMetadata(self, *args: Any) -> TraceNode:  # noqa: N802
        if len(args) < 2:
            raise YaoServiceError("SetMetadata requires 2 arguments: (key, value)")
        self._trace._set_metadata([self.id], js_string(args[0]), json_value(args[1], "invalid value"))
        return self

    def Complete(self, *args: Any) -> TraceNode:  # noqa: N802
        self._trace._complete([self.id], args)
        return self

    def Fail(self, *args: Any) -> TraceNode:  # noqa: N802
        if not args:
            raise YaoServiceError("Fail requires an error message")
        self._trace._fail([self.id], js_string(args[0]))
        return self

    def _log_args(self, level: str, args: tuple) -> TraceNode:
        if args:
            self._trace._log([self.id], level, js_string(args[0]))
        return self


class Trace:
    """One request's trace: ``ctx.trace`` with Yao's methods, and the records it made.

    ``nodes`` (id → record), ``logs`` and ``updates`` are plain JSON; ``diagnostics`` lists what a
    hook author would not expect (an option field Yao drops). ``clock`` (:class:`~.clock.Clock`) stamps them.
    """

    def __init__(self, trace_id: str = "T1", *, clock: Clock = SYSTEM_CLOCK,
                 listener: Listener | None = None) -> None:
        self.id = trace_id
        self.clock = clock
        self.listener = listener
        self.nodes: dict[str, dict] = {}
        self.logs: list[dict] = []
        self.updates: list[dict] = []
        self.spaces: dict[str, dict] = {}
        self.diagnostics: list[dict] = []
        self.root: str | None = None
        self.current: list[str] = []
        self.status = "pending"
        self._completed = False
        self._counter = 0

    def node(self, node_id: str) -> TraceNode:
        """The node ``node_id`` (how the JavaScript bridge calls a node's methods)."""
        if node_id not in self.nodes:
            raise YaoServiceError(f"trace node not found: {node_id}")
        return TraceNode(self, node_id)

    def tree(self) -> dict | None:
        """The root with its children nested, as upstream's node JSON nests them."""
        def nest(node_id: str) -> dict:
            record = dict(self.nodes[node_id])
            record["children"] = [nest(child) for child in record["children"]]
            return record

        return nest(self.root) if self.root else None

    # -- ctx.trace methods ---------------------------------------------------------------
    def Add(self, *args: Any) -> TraceNode:  # noqa: N802 - Yao's method names
        """The next sequential node (``manager.go:104-217``)."""
        if not args:
            raise YaoServiceError("Add requires at least 1 argument: (input, option?)")
        data = json_value(args[0], "invalid input")
        option = _trace_option(args[1], self._dropped) if len(args) > 1 and isinstance(args[1], dict) else {}
        return self.add(data, option)

    def add(self, data: Any, option: dict) -> TraceNode:
        """``Add`` as Yao's Go code calls the manager: every option field kept (label, type, icon,
        description, auto_complete_parent), e.g. the ``agent_call`` node of ``ctx.agent.Call``."""
        option = {key: option[key] for key in ("label", "type", "icon", "description", "auto_complete_parent")
                  if key in option}
        if self.root is None:
            node = self._new_node(data, option, [], broadcast=True)
            self.root = node.id
            self.status = "running"
            self.current = [node.id]
            return node
        if option.get("auto_complete_parent", True):
            self._complete_open()
        node = self._new_node(data, option, list(self.current), broadcast=True)
        self.current = [node.id]
        return node

    def Parallel(self, *args: Any) -> list[TraceNode]:  # noqa: N802
        """Branches from the first current node, all made current (``manager.go:219-320``)."""
        if not args:
            raise YaoServiceError("Parallel requires an array argument")
        inputs = json_value(args[0], "invalid parallel inputs")
        if not isinstance(inputs, list):
            raise YaoServiceError("Parallel argument must be an array")
        items = [_parallel_item(item, lambda o: _trace_option(o, self._dropped)) for item in inputs
                 if isinstance(item, dict)]
        if not items:
            raise YaoServiceError("parallel inputs cannot be empty")
        if self.root is None:
            raise YaoServiceError("root node does not exist, please call Add first before using Parallel")
        self._complete_open()
        parent = self.current[0]
        nodes = [self._new_node(data, option, [parent], broadcast=False) for data, option in items]
        self.current = [node.id for node in nodes]
        self._update("node_start", None, {"nodes": [dict(self.nodes[n.id]) for n in nodes]})
        return nodes

    # Info / Debug / Warn / Error log to every current node (manager.go:322-374)
    Info, Debug, Warn, Error = (yao_method("_log_args", level) for level in ("info", "debug", "warn", "error"))

    def SetOutput(self, *args: Any) -> None:  # noqa: N802
        if not args:
            raise YaoServiceError("SetOutput requires an output argument")
        self._set_output(self.current, json_value(args[0], "invalid output"))

    def SetMetadata(self, *args: Any) -> None:  # noqa: N802
        if len(args) < 2:
            raise YaoServiceError("SetMetadata requires 2 arguments: (key, value)")
        self._set_metadata(self.current, js_string(args[0]), json_value(args[1], "invalid value"))

    def Complete(self, *args: Any) -> None:  # noqa: N802
        self._complete(list(self.current), args)

    def Fail(self, *args: Any) -> None:  # noqa: N802
        if not args:
            raise YaoServiceError("Fail requires an error message")
        self._fail(list(self.current), js_string(args[0]))

    def MarkComplete(self, *args: Any) -> None:  # noqa: N802
        """Complete the trace once; later calls do nothing (``manager.go:536-574``)."""
        if self._completed:
            return
        self._completed = True
        self.status = "completed"
        now = self._now()
        total = now - self.nodes[self.root]["created_at"] if self.root else 0
        self._update("complete", None, {"trace_id": self.id, "status": "completed", "total_duration": total})

    def IsComplete(self, *args: Any) -> bool:  # noqa: N802
        return self._completed

    def CreateSpace(self, *args: Any) -> dict:  # noqa: N802
        """A visual space (``manager.go:576-611``), returned as its record."""
        option = args[0] if args and isinstance(args[0], dict) else {}
        now = self._now()
        space = {"id": f"S{len(self.spaces) + 1}", "label": js_string(option.get("label", "")),
                 "type": js_string(option.get("type", "")), "icon": js_string(option.get("icon", "")),
                 "description": js_string(option.get("description", "")),
                 "ttl": int(option.get("ttl", 0) or 0), "created_at": now, "updated_at": now}
        if isinstance(option.get("metadata"), dict):
            space["metadata"] = json_value(option["metadata"], "invalid metadata")
        self.spaces[space["id"]] = space
        self._update("space_created", None, dict(space), space_id=space["id"])
        return dict(space)

    def GetSpace(self, *args: Any) -> dict:  # noqa: N802
        if not args:
            raise YaoServiceError("GetSpace requires a space ID")
        space = self.spaces.get(js_string(args[0]))
        if space is None:
            raise YaoServiceError(f"space not found: {js_string(args[0])}")
        return dict(space)

    def Release(self, *args: Any) -> None:  # noqa: N802
        """A no-op: the request releases its trace (``agent/context/jsapi.go:184-201``)."""

    # -- the records ----------------------------------------------------------------------
    def _now(self) -> int:
        return self.clock.wall_ms()

    def _new_node(self, data: Any, option: dict, parents: list[str], *, broadcast: bool) -> TraceNode:
        self._counter += 1
        now = self._now()
        node_id = f"N{self._counter}"
        record: dict[str, Any] = {"id": node_id, "parent_ids": parents, "children": [],
                                  "label": option.get("label", ""), "type": option.get("type", ""),
                                  "icon": option.get("icon", ""), "description": option.get("description", "")}
        if "auto_complete_parent" in option:
            record["auto_complete_parent"] = option["auto_complete_parent"]
        record["status"] = "running"
        if data is not None:
            record["input"] = json_value(data, "invalid input")
        record.update({"created_at": now, "start_time": now, "end_time": 0, "updated_at": now})
        self.nodes[node_id] = record
        for parent in parents:
            self.nodes[parent]["children"].append(node_id)
        if broadcast:
            self._update("node_start", node_id, {"node": dict(record)})
        return TraceNode(self, node_id)

    def _complete_open(self) -> None:
        self._complete([n for n in self.current if self.nodes[n]["status"] in ("running", "pending")], ())

    def _dropped(self, field: str) -> None:
        self.diagnostics.append(diagnostic("yao_trace_option_dropped", "ctx.trace", field=field))

    def _update(self, kind: str, node_id: str | None, data: Any, *, space_id: str = "") -> None:
        update = {"type": kind, "trace_id": self.id, "node_id": node_id or "", "space_id": space_id,
                  "timestamp": self._now(), "data": data}
        self.updates.append(update)
        if self.listener is not None:
            self.listener(update)

    def _log_args(self, level: str, args: tuple) -> Trace:
        if args:
            self._log(self.current, level, js_string(args[0]))
        return self

    def _log(self, node_ids: list[str], level: str, message: str) -> None:
        for node_id in node_ids:
            entry = {"timestamp": self._now(), "level": level, "message": message, "data": [], "node_id": node_id}
            self.logs.append(entry)
            self._update("log_added", node_id, dict(entry))

    def _set_output(self, node_ids: list[str], output: Any) -> None:
        for node_id in node_ids:
            record = self.nodes[node_id]
            record["output"] = output
            record["updated_at"] = self._now()
            self._update("node_updated", node_id, dict(record))

    def _set_metadata(self, node_ids: list[str], key: str, value: Any) -> None:
        for node_id in node_ids:
            record = self.nodes[node_id]
            record.setdefault("metadata", {})[key] = value
            record["updated_at"] = self._now()
            self._update("node_updated", node_id, {"node": dict(record)})

    def _complete(self, node_ids: list[str], output: tuple) -> None:
        for node_id in node_ids:
            record = self.nodes[node_id]
            if output:
                record["output"] = json_value(output[0], "invalid output")
            now = self._now()
            record.update({"status": "completed", "end_time": now, "updated_at": now})
            data = {"node_id": node_id, "status": "success", "end_time": now,
                    "duration": now - record["start_time"]}
            if record.get("output") is not None:
                data["output"] = record["output"]
            self._update("node_complete", node_id, data)

    def _fail(self, node_ids: list[str], error: str) -> None:
        self._log(node_ids, "error", f"Node failed: {error}")
        for node_id in node_ids:
            record = self.nodes[node_id]
            now = self._now()
            record.update({"status": "failed", "end_time": now, "updated_at": now})
            self._update("node_failed", node_id, {"node_id": node_id, "status": "failed", "end_time": now,
                                                  "duration": now - record["start_time"], "error": error})


def _trace_option(option: dict, dropped: Callable[[str], None]) -> dict:
    """``ctx.trace.Add``'s option: label, icon, description only (``trace/jsapi/trace.go:196-209``)."""
    result = {key: js_string(option[key]) for key in ("label", "icon", "description") if option.get(key) is not None}
    for field in ("type", "autoCompleteParent", "metadata"):
        if option.get(field) is not None:
            dropped(field)
    return result


def _node_option(option: dict) -> dict:
    """``node.Add``'s option: label, type, icon, description, autoCompleteParent (``node.go:21-40``)."""
    result = {key: js_string(option[key]) for key in ("label", "type", "icon", "description")
              if option.get(key) is not None}
    if option.get("autoCompleteParent") is not None:
        result["auto_complete_parent"] = bool(option["autoCompleteParent"])
    return result


def _parallel_item(item: dict, parse: Callable[[dict], dict]) -> tuple[Any, dict]:
    option = item.get("option")
    return item.get("input"), parse(option) if isinstance(option, dict) else {}
