"""Python callables as model tools: a JSON Schema from the signature and docstring, and a checked call.

``run_turn(tools=[get_weather])`` turns each callable into a :class:`Tool`. Pydantic builds the
argument model from the signature (type hints, defaults, ``Annotated[..., Field(...)]``), so the
schema the model sees and the validation of what it sends back are one thing; docstring-parser reads
the summary and per-parameter descriptions (Google, NumPy, reST or Epydoc style).

What a call returns is what the model reads: a string as is, anything else as JSON. A tool that
raises, or arguments that fail validation, become an *error tool result* (``error: true``) that the
model sees and can react to — the turn goes on (a tool's failure is an answer, not a failed turn).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any

import docstring_parser
import orjson
import pydantic

from ..context import MessageType

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what OpenAI and Anthropic both accept


class ToolDefinitionError(TypeError):
    """A callable that cannot be offered to a model as a tool (named, with the reason)."""


class Tool:
    """One callable offered to the model. ``spec`` is the neutral ``{"name", "description", "parameters"}``."""

    def __init__(self, function: Callable[..., Any], *, name: str | None = None, description: str | None = None) -> None:
        if not callable(function):
            raise ToolDefinitionError(f"tools: expected a callable, got {type(function).__name__} {function!r:.60}")
        self.function = function
        self.name = name or getattr(function, "__name__", None) or type(function).__name__
        if not _NAME.match(self.name):
            raise ToolDefinitionError(f"tools: {self.name!r} is not a valid tool name (letters, digits, _ and -, at most 64)")
        doc = docstring_parser.parse(inspect.getdoc(function) or "")
        summary = "\n\n".join(part for part in (doc.short_description, doc.long_description) if part)
        self.description = description if description is not None else summary
        self.arguments_model = _arguments_model(self.name, function, {p.arg_name: p.description for p in doc.params})
        self.is_async = inspect.iscoroutinefunction(function)

    @property
    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": _schema(self.arguments_model)}

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def check(self, arguments: Any) -> dict[str, Any]:
        """Validated keyword arguments, or ``ValueError`` saying what the model got wrong."""
        if isinstance(arguments, str):  # arguments the assembler could not parse as JSON
            raise ValueError(f"the arguments are not valid JSON: {arguments[:200]!r}")
        if not isinstance(arguments, dict):
            raise ValueError(f"the arguments must be a JSON object, got {type(arguments).__name__}")
        try:
            model = self.arguments_model.model_validate(arguments)
        except pydantic.ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
                for item in error.errors(include_url=False)
            )
            raise ValueError(f"invalid arguments for {self.name}: {problems}") from None
        return {field: getattr(model, field) for field in type(model).model_fields}


def as_tools(tools: Iterable[Any] | None) -> list[Tool]:
    """``Tool`` objects for callables (or Tools), refusing two tools of one name. A tool source (an
    :class:`~agentctx_widgets.models.mcp.McpServer`: anything with ``__agentctx_tools__()``) gives all of its
    tools, listed here (a server starts on first use)."""
    result: list[Tool] = []
    seen: dict[str, str] = {}
    for position, item in enumerate(tools or []):
        for tool in _expanded(position, item):
            where = f"tools[{position}]" + (f" ({item!r})" if hasattr(item, "__agentctx_tools__") else "")
            if tool.name in seen:
                first = seen[tool.name]
                also = f" (the first: {first})" if "(" in first + where else ""  # a server's tool: say which
                raise ToolDefinitionError(f"{where}: a second tool named {tool.name!r}{also}")
            seen[tool.name] = where
            result.append(tool)
    return result


def _expanded(position: int, item: Any) -> list[Tool]:
    if isinstance(item, Tool):
        return [item]
    source = getattr(item, "__agentctx_tools__", None)
    if source is not None and not isinstance(item, type):
        try:
            return list(source())
        except ToolDefinitionError as error:
            raise ToolDefinitionError(f"tools[{position}]: {str(error).removeprefix('tools: ')}") from None
    return [_with_place(position, item)]


def _with_place(position: int, function: Any) -> Tool:
    try:
        return Tool(function)
    except ToolDefinitionError as error:
        raise ToolDefinitionError(f"tools[{position}]: {str(error).removeprefix('tools: ')}") from None


def result_message(call_id: str, name: str, value: Any = None, *, error: str | None = None) -> dict:
    """The tool-result Context message (type 4) the model reads for one call."""
    if error is not None:
        text, failed = error, True
    else:
        text, failed = _as_text(value), False
    message: dict[str, Any] = {"type": int(MessageType.TOOL_RESULT), "callId": call_id, "name": name,
                               "content": [{"type": "text", "text": text}]}
    if failed:
        message["error"] = True
    return message


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, default=_fallback, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)


def _fallback(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _arguments_model(name: str, function: Callable[..., Any], descriptions: dict[str, str | None]) -> type[pydantic.BaseModel]:
    try:
        signature = inspect.signature(function)
        hints = _hints(function)
    except (TypeError, ValueError, NameError) as error:
        raise ToolDefinitionError(f"tools: cannot read the signature of {name}: {error}") from None
    fields: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            stars = "*" if parameter.kind is parameter.VAR_POSITIONAL else "**"
            raise ToolDefinitionError(f"tools: {name} takes {stars}{parameter.name}; a tool's parameters must be named")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise ToolDefinitionError(f"tools: {name}'s parameter {parameter.name} is positional-only; tools are called with keywords")
        annotation = hints.get(parameter.name, Any)
        default = ... if parameter.default is parameter.empty else parameter.default
        description = descriptions.get(parameter.name)
        fields[parameter.name] = (annotation, pydantic.Field(default, description=description) if description else default)
    try:
        return pydantic.create_model(name, __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    except (TypeError, pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError) as error:
        raise ToolDefinitionError(f"tools: {name}'s parameters have no JSON Schema: {error}") from None


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    import typing

    target = function if inspect.isfunction(function) or inspect.ismethod(function) else getattr(function, "__call__", function)
    return typing.get_type_hints(target, include_extras=True)


def _schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The argument model's JSON Schema without pydantic's ``title`` noise."""
    return _untitled(model.model_json_schema())


_DATA_KEYS = frozenset({"default", "const", "enum", "examples", "example"})
"""Schema keywords whose values are data (a default dict's ``"title"`` key is not pydantic's noise)."""
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
"""Schema keywords whose values map names to schemas (a parameter may be named ``title`` or ``default``)."""


def _untitled(node: Any, *, names: bool = False) -> Any:
    if isinstance(node, dict):
        if names:
            return {key: _untitled(value) for key, value in node.items()}
        return {key: value if key in _DATA_KEYS else _untitled(value, names=key in _NAME_MAPS)
                for key, value in node.items() if not (key == "title" and isinstance(value, str))}
    if isinstance(node, list):
        return [_untitled(value) for value in node]
    return node
