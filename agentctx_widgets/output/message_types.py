"""The one table of output message types (seed 000 "Message Types", "Message Props by Type").

Per built-in type, and for custom types through :data:`GENERIC`:

- ``props``: the props Yao defines for it (``agent/output/message/types.go:107-208`` at ``afab9c2``), with
  Yao's Go types and which ones Yao calls required. **Informational**: nothing in Yao checks props (the
  Go structs are never used in Yao's code), and neither do we; ``normalize_message`` checks only the
  envelope.
- ``standard``: what a standard (OpenAI) client gets for it, as Yao's OpenAI adapter converts it
  (``agent/output/adapters/openai/converter.go``): a list of :class:`Emit` — a ``choices[0].delta`` the
  writer wraps in a ``chat.completion.chunk``, or a chunk written as it is (the ``error`` object).
  :func:`to_standard` is Yao's ``Adapter.Adapt`` dispatch (``adapter.go:79-109``) over this table;
  ``adapters.StandardAdapter`` is Yao's writer around it.
- ``transcript``: the body of the plain-text transcript line (``widget/transcript.py``'s ``output_line``).

The front end's renderer table (``js/src/render/output-types.js``, ``OUTPUT_RENDERERS``) lists the same
built-in types; ``tests/test_output_adapters.py`` checks the two agree.

Where we do not write what Yao writes, and why (docs/decisions.md's table of differences lists these too):

- ``tool_call``: Yao reads only ``props.id`` and ``props.function`` (an object) and drops ``name`` and
  ``arguments`` (converter.go:93-116), but the seed's own examples send ``{id, name, arguments}``. We take
  ``props.function`` when it is an object, as Yao does, and otherwise build ``function`` from the seed's
  ``name`` / ``arguments`` (an ``arguments`` that is not a string is sent as compact JSON text). Like Yao
  we write no ``index``.
- Custom types (and ``user_input``, which Yao does not register) become a Markdown link. Yao's fallback
  template for a type with no template of its own is ``"📎 [View %s](" + type + ")"`` (converter.go:
  308-315): the link lands in the label and the type name in the target. We write the evident intent,
  ``📎 [View <type>](<link>)``.
- A link that needs Yao's own view server (``{base}/agent/view/<type>/<id>`` for a message with no
  ``url``, ``{base}/trace/<id>/view`` for ``stream_start``) is written only when the adapter is given a
  ``base_url`` (``YAO_BASE_URL`` reproduces Yao's hard-coded one, openai/writer.go:47-49); by default
  there is no such server, so those messages send nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import orjson

from .execute_family import EXECUTE, transcript_line

USER_INPUT = "user_input"
TEXT = "text"
THINKING = "thinking"
LOADING = "loading"
TOOL_CALL = "tool_call"
ERROR = "error"
IMAGE = "image"
AUDIO = "audio"
VIDEO = "video"
ACTION = "action"
EVENT = "event"

YAO_BASE_URL = "http://localhost:8000/__yao_admin_root"
"""The base URL Yao's OpenAI writer hard-codes for view and trace links (openai/writer.go:47-49)."""

YAO_MODEL = "yao-agent"
"""The ``model`` of every chunk Yao's OpenAI writer sends (openai/types.go:59-65)."""

LINK_TEMPLATES: dict[str, str] = {
    IMAGE: "![%s](%s)",
    AUDIO: "🔊 [Play Audio](%s)",
    VIDEO: "🎬 [Watch Video](%s)",
    "file": "📎 [Download File](%s)",
    "page": "📄 [Open Page](%s)",
    "table": "📊 [View Table](%s)",
    "chart": "📈 [View Chart](%s)",
    "list": "📋 [View List](%s)",
    "form": "📝 [Fill Form](%s)",
    "button": "🔘 [%s](%s)",
}
"""Yao's ``DefaultLinkTemplates`` (openai/types.go:45-56), Go ``%s`` verbs (Python ``%`` takes them as is)."""

STREAM_START_TEXT: dict[str, tuple[str, str]] = {
    "en": ("Assistant is processing", "View process"),
    "zh-cn": ("智能体正在处理", "查看处理详情"),
    "zh": ("智能体正在处理", "查看处理详情"),
}
"""``output.stream_start`` / ``output.view_trace`` per locale (agent/i18n/builtin.go:59-60, 119-120, 179-180)."""


class ConvertError(ValueError):
    """What Yao's converter returns as an error (the writer then writes nothing for the message)."""


class Emit(NamedTuple):
    """One thing a converter writes: a ``delta`` (wrapped by the writer in a chunk) or a whole ``chunk``."""

    kind: Literal["delta", "chunk"]
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StandardConfig:
    """What Yao's OpenAI adapter is configured with (``AdapterConfig``, openai/types.go)."""

    base_url: str | None = None
    """Base of view and trace links; ``None``: there is no Yao server, messages that need one send nothing."""
    locale: str = "en"
    reasoning: bool = False
    """``Capabilities.Reasoning``: ``stream_start`` goes to ``reasoning_content`` instead of ``content``."""


@dataclass(frozen=True, slots=True)
class Prop:
    """One prop as Yao declares it (informational: never checked)."""

    name: str
    go_type: str
    required: bool = False
    note: str = ""


Converter = Callable[[dict[str, Any], StandardConfig], list[Emit]]


@dataclass(frozen=True, slots=True)
class MessageType:
    name: str
    summary: str
    props: tuple[Prop, ...]
    standard: Converter
    transcript: Callable[[dict[str, Any]], Any]
    """props → the transcript line's body (a string, or a JSON value the transcript writes as JSON)."""
    cite: str
    takes_role: bool = False
    """Yao's writer adds ``role: "assistant"`` to the first chunk of a message of this type (writer.go:78-88)."""
    resent_prop: str | None = None
    """The prop a standard client receives whole on every message (so a resend shows twice)."""
    skips_done: bool = True
    """A ``done`` message without ``delta`` sends nothing (adapter.go:96-98); events are dispatched before."""


# ---- helpers: Yao's getStringProp and friends --------------------------------------------------------

def string_prop(props: dict[str, Any], key: str, default: str) -> str:
    """Yao's ``getStringProp`` (converter.go:335-340): the prop if it is a string, else the default."""
    value = props.get(key)
    return value if isinstance(value, str) else default


def json_text(value: Any) -> str:
    """A string as it is; anything else as compact JSON with sorted keys (``repr`` if JSON cannot)."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return repr(value)


def _props(message: dict[str, Any]) -> dict[str, Any]:
    props = message.get("props")
    return props if isinstance(props, dict) else {}


def _delta(body: dict[str, Any]) -> list[Emit]:
    return [Emit("delta", body)]


# ---- converters (converter.go) ----------------------------------------------------------------------

def _text(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertText (converter.go:58-66): ``props.content`` as it is, ``""`` when it is not a string."""
    return _delta({"content": string_prop(_props(message), "content", "")})


def _thinking(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertThinking (converter.go:69-77)."""
    return _delta({"reasoning_content": string_prop(_props(message), "content", "")})


def _loading(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertLoading (converter.go:81-90): the loading text as reasoning, default ``Processing...``."""
    return _delta({"reasoning_content": string_prop(_props(message), "message", "Processing...")})


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _tool_call(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertToolCall (converter.go:93-116), plus the seed's ``name`` / ``arguments`` (see module doc)."""
    props = _props(message)
    calls: list[dict[str, Any]] = []
    call_id = props.get("id")
    if isinstance(call_id, str):
        call: dict[str, Any] = {"id": call_id, "type": "function"}
        function = props.get("function")
        if isinstance(function, dict):
            call["function"] = function
        else:  # the seed's shape (seed 000 "Tool Call Message"); Yao drops these
            built: dict[str, Any] = {}
            if isinstance(props.get("name"), str):
                built["name"] = props["name"]
            if props.get("arguments") is not None:
                built["arguments"] = _arguments(props["arguments"])
            if built:
                call["function"] = built
        calls.append(call)
    return _delta({"tool_calls": calls})


def _error(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertError (converter.go:119-132): not a chunk but ``{"error": {message, type: code, code}}``."""
    props = _props(message)
    code = string_prop(props, "code", "server_error")
    return [Emit("chunk", {"error": {"message": string_prop(props, "message", "An error occurred"),
                                     "type": code, "code": code}})]


def _image(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertImage (converter.go:222-250): ``![alt](url)``, alt default ``Image``; no url is an error."""
    props = _props(message)
    url = props.get("url")
    if not isinstance(url, str) or url == "":
        raise ConvertError("image message missing url")
    return _delta({"content": LINK_TEMPLATES[IMAGE] % (string_prop(props, "alt", "Image"), url)})


def _view_link(message: dict[str, Any], config: StandardConfig) -> str | None:
    """generateViewLink (converter.go:281-305): ``props.url`` if a string, else Yao's view page."""
    url = _props(message).get("url")
    if isinstance(url, str):
        return url
    if config.base_url is None:
        return None
    return f"{config.base_url}/agent/view/{message.get('type', '')}/{message.get('id', '')}"


def _link(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertToLink (converter.go:253-278): audio, video, user_input and every custom type."""
    link = _view_link(message, config)
    if link is None:
        return []
    kind = message.get("type", "")
    template = LINK_TEMPLATES.get(kind)
    if kind == "button":
        text = template % (string_prop(_props(message), "text", "Button"), link)  # type: ignore[operator]
    elif template is not None:
        text = template % link
    else:  # Yao: "📎 [View %s](" + type + ")" puts the link in the label (see the module docstring)
        text = f"📎 [View {kind}]({link})"
    return _delta({"content": text})


def _nothing(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertAction (converter.go:137-140): silent in OpenAI clients."""
    return []


def _locale_text(locale: str) -> tuple[str, str]:
    """i18n.T's lookup (agent/i18n/i18n.go:327-375): exact, then language, then region, else the keys."""
    locale = locale.strip().lower()
    parts = locale.split("-")
    for candidate in (locale, *(parts[:2] if len(parts) > 1 else ())):
        if candidate in STREAM_START_TEXT:
            return STREAM_START_TEXT[candidate]
    return ("output.stream_start", "output.view_trace")


def _event(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """Adapt's event branch (adapter.go:81-91) and convertStreamStart (converter.go:145-207): only a
    ``stream_start`` with a ``data.trace_id`` sends anything, a link to its trace."""
    props = _props(message)
    data = props.get("data")
    if props.get("event") != "stream_start" or not isinstance(data, dict) or config.base_url is None:
        return []
    trace_id = data.get("trace_id")
    if not isinstance(trace_id, str) or trace_id == "":
        return []
    started, view = _locale_text(config.locale)
    link = f"{config.base_url}/trace/{trace_id}/view"
    if config.reasoning:
        return _delta({"reasoning_content": f"🔍 {started} - [{view}]({link})\n"})
    return _delta({"content": f"🚀 {started} - [{view}]({link})\n"})


# ---- transcript bodies -----------------------------------------------------------------------------

def _body_of(prop: str) -> Callable[[dict[str, Any]], Any]:
    return lambda props: props.get(prop, "")


def _error_body(props: dict[str, Any]) -> str:
    return " ".join(str(props[key]) for key in ("code", "message") if props.get(key))


def _tool_call_body(props: dict[str, Any]) -> str:
    function = props.get("function") if isinstance(props.get("function"), dict) else {}
    name = props.get("name", function.get("name", "?"))
    return f"{json_text(name)} {json_text(props.get('arguments', function.get('arguments')))}"


def _props_body(props: dict[str, Any]) -> Any:
    return props


# ---- the table ------------------------------------------------------------------------------------

_S = "string"
TYPES: dict[str, MessageType] = {
    t.name: t
    for t in (
        MessageType(USER_INPUT, "user input (display only)",
                    (Prop("content", "string | ContentPart[]", True),
                     Prop("role", _S, note='"user", "system" or "developer"; default "user"'), Prop("name", _S)),
                    _link, _body_of("content"), "types.go:110-114; not in converter.go:17-32's registry"),
        MessageType(TEXT, "text (Markdown)", (Prop("content", _S, True),), _text, _body_of("content"),
                    "types.go:119-121; converter.go:58-66", takes_role=True, resent_prop="content"),
        MessageType(THINKING, "reasoning", (Prop("content", _S, True),), _thinking, _body_of("content"),
                    "types.go:126-128; converter.go:69-77", takes_role=True, resent_prop="content"),
        MessageType(LOADING, "loading indicator", (Prop("message", _S, True),), _loading, _body_of("message"),
                    "types.go:133-135; converter.go:81-90", resent_prop="message"),
        MessageType(TOOL_CALL, "tool / function call",
                    (Prop("id", _S, True), Prop("name", _S, True), Prop("arguments", _S, note="JSON text"),
                     Prop("function", "map[string]interface{}",
                          note="not in ToolCallProps, but what Yao's converter reads (converter.go:104-106)")),
                    _tool_call, _tool_call_body, "types.go:140-144; converter.go:93-116"),
        MessageType(ERROR, "error", (Prop("message", _S, True), Prop("code", _S), Prop("details", _S)),
                    _error, _error_body, "types.go:149-153; converter.go:119-132"),
        MessageType(IMAGE, "image",
                    (Prop("url", _S, True, "URL or base64"), Prop("alt", _S), Prop("width", "int"),
                     Prop("height", "int"), Prop("detail", _S, note='"auto", "low" or "high"')),
                    _image, _body_of("url"), "types.go:175-181; converter.go:222-250"),
        MessageType(AUDIO, "audio",
                    (Prop("url", _S, True), Prop("format", _S), Prop("duration", "float64"),
                     Prop("transcript", _S), Prop("autoplay", "bool"), Prop("controls", "bool")),
                    _link, _body_of("url"), "types.go:186-193; converter.go:26, 253-278"),
        MessageType(VIDEO, "video",
                    (Prop("url", _S, True), Prop("format", _S), Prop("duration", "float64"),
                     Prop("thumbnail", _S), Prop("width", "int"), Prop("height", "int"),
                     Prop("autoplay", "bool"), Prop("controls", "bool"), Prop("loop", "bool")),
                    _link, _body_of("url"), "types.go:198-208; converter.go:27, 253-278"),
        MessageType(ACTION, "system action (silent in OpenAI clients)",
                    (Prop("name", _S, True), Prop("payload", "map[string]interface{}")),
                    _nothing, _props_body, "types.go:158-161; converter.go:137-140"),
        MessageType(EVENT, "lifecycle event (CUI only)",
                    (Prop("event", _S, True, "stream_start, stream_end, group_start, group_end, …"),
                     Prop("message", _S), Prop("data", "map[string]interface{}")),
                    _event, _props_body, "types.go:166-170; adapter.go:81-91; converter.go:145-207",
                    skips_done=False),
    )
}
"""The built-in types, in the seed's order (message/types.go:76-95)."""

GENERIC = MessageType(
    "*", "custom type (rendered generically; a link for standard clients)",
    (Prop("url", _S, note="the link target for standard clients"),
     Prop("text", _S, note='"button" only: the link text, default "Button"')),
    _link, _props_body, "converter.go:253-315 (convertToLink, the fallback for unregistered types)",
)

MESSAGE_TYPES: tuple[str, ...] = tuple(TYPES)


# ---- today's Yao (5a3f9a6a): the execute family --------------------------------------------------

def _execute_link(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """convertToLink for a type with no converter and no template (converter.go:253-315 at 5a3f9a6a),
    written exactly as Yao writes it: the fallback ``"📎 [View %s](" + type + ")"`` puts the view link in
    the label and the type name in the target (``yao/writers.py`` does the same for every unregistered
    type). No ``base_url``: there is no view page to link to, nothing is sent."""
    link = _view_link(message, config)
    if link is None:
        return []
    return _delta({"content": f"📎 [View {link}]({message.get('type', '')})"})


def _execute_entry(name: str, summary: str, cite: str) -> MessageType:
    return MessageType(name, summary, EXECUTE_PROPS, _execute_link,
                       lambda props, kind=name: transcript_line(kind, props), cite)


EXECUTE_PROPS = (
    Prop("tool", _S, True, 'the runner\'s tool, e.g. "Bash", "Read", "mcp__github__search"'),
    Prop("tool_id", _S, True, 'the runner-side call id, e.g. "toolu_abc123"'),
    Prop("input", "interface{}", note='structured, e.g. {"command": "ls -la"}'),
    Prop("output", "interface{}", note="merged in when the action completes"),
    Prop("status", _S, True, '"running", "completed" or "error"'),
    Prop("is_error", "bool"), Prop("exit_code", "*int", note="Bash-type tools"),
    Prop("runner", _S, note='"claude-cli", "codex-cli", …'), Prop("metadata", "map[string]interface{}"),
)
"""``ExecuteProps`` (message/types.go:218-244 at 5a3f9a6a); the sub-types carry the same props, plus
``action`` (plan, job, todo) or ``subagent_type`` as the runner annotates them (claude/parse.go:755-781)."""

YAO_TYPES: dict[str, MessageType] = {
    t.name: t
    for t in (
        _execute_entry(EXECUTE, "an action an external agent already took (observation, not a request)",
                       "types.go:79, 218-244; converter.go:253-315; CUI Execute/index.tsx"),
        _execute_entry("agent", "sub-agent dispatch (execute family)", "types.go:82; CUI AgentView"),
        _execute_entry("todo", "task checklist (execute family)", "types.go:83; CUI TodoView"),
        _execute_entry("plan", "plan mode enter / exit (execute family)", "types.go:84; CUI PlanView"),
        _execute_entry("job", "background job (execute family)", "types.go:85; CUI JobView"),
        _execute_entry("question", "questions for the user (execute family)", "types.go:86; CUI QuestionView"),
    )
}
"""The types today's Yao adds to the seed's (message/types.go:78-86 at 5a3f9a6a): ``execute`` and its
semantic sub-types (``isExecuteFamily``, handlers/stream.go:334-344). Kept apart from :data:`TYPES`, which
is the seed's eleven; :func:`lookup` answers both."""


def lookup(kind: Any) -> MessageType:
    """The table entry for a message type (the seed's, then today's execute family); :data:`GENERIC` for a
    custom (or malformed) type."""
    if not isinstance(kind, str):
        return GENERIC
    return TYPES.get(kind) or YAO_TYPES.get(kind) or GENERIC


def to_standard(message: dict[str, Any], config: StandardConfig) -> list[Emit]:
    """What Yao's OpenAI ``Adapter.Adapt`` makes of one message (adapter.go:79-109); raises
    :class:`ConvertError` where Yao's converter returns an error (an image without a url)."""
    spec = lookup(message.get("type"))
    if spec.skips_done and message.get("done") and not message.get("delta"):
        return []
    return spec.standard(message, config)
