"""Output messages (the delta engine's ``{order, messages}`` state) → HTML: one renderer per output type,
keyed by the type names of ``output/message_types.py`` (the front end's ``output-types.js``), and a
generic JSON view for every other type. Messages that share a ``group_id`` sit in one group box where
the group's first message appeared. A ``loading`` message that is done is left out, as the view hides it.

From a Yao stream (``yao/view_bridge.py``), as the live view shows it (``js/src/render/outputs.js``,
``execute.js``): a group is a Yao block titled from a member's ``metadata.block``; a message with a
``metadata.duration_ms`` carries a duration chip unless it was one chunk; the ``execute`` family
(:data:`EXECUTE_RENDERERS`) is one status line with its input and output folded, as the CUI shows it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..output import (DeltaError, OutputMessageError, apply_message_in_place, group_members, new_state,
                      normalize_group, normalize_message)
from ..output import execute_family as ef
from ..output import message_types as mt
from .common import (attr, clip, compact_json, esc, image_link, link, md_div, pretty_json, text_of, thinking_box,
                     tool_call_parts)
from .urls import host_of, is_inline_image, is_remote_url

__all__ = ["EXECUTE_RENDERERS", "OUTPUT_RENDERERS", "Options", "format_duration", "output_state", "render_outputs",
           "repeat_key", "repeat_label", "reply_keys"]


@dataclass(frozen=True, slots=True)
class Options:
    remote_media: bool = False
    """Hook-sent ``image`` messages with an http(s) URL load it (an opt-in: the live view waits for a
    click); otherwise they are links (a standalone page fetches nothing). Audio and video are links
    either way, and a video's ``thumbnail`` is never loaded (issue 21)."""
    replies: frozenset[str] = frozenset()
    """``reply_keys`` of the assistant messages shown beside: an output repeating one is one line."""


def repeat_key(message: Any) -> str | None:
    """The key of an output message that may repeat a reply's block, or None: ``text`` / ``thinking``
    with a string ``props.content``, ``tool_call`` with a string ``props.id`` (``repeatKey`` in the live
    view; docs/decisions.md)."""
    if not isinstance(message, dict):
        return None
    props = _props(message)
    kind = message.get("type")
    if kind in ("text", "thinking") and isinstance(props.get("content"), str) and props["content"]:
        return f"{kind}\0{props['content']}"
    if kind == "tool_call" and isinstance(props.get("id"), str) and props["id"]:
        return f"toolCall\0{props['id']}"
    return None


def reply_keys(entries: Iterable[Any]) -> frozenset[str]:
    """The keys of the text, thinking and toolCall blocks of the assistant messages (type 3) in
    ``entries`` (``replyKeys`` in the live view)."""
    keys = set()
    for message in entries:
        if not isinstance(message, dict) or message.get("type") != 3 or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind in ("text", "thinking") and isinstance(block.get("text"), str) and block["text"]:
                keys.add(f"{kind}\0{block['text']}")
            elif kind == "toolCall" and isinstance(block.get("callId"), str) and block["callId"]:
                keys.add(f"toolCall\0{block['callId']}")
    return frozenset(keys)


def repeat_label(message: dict) -> str:
    """``text · as in the reply above``, ``tool_call get_weather · as in the reply above``."""
    props = _props(message)
    name = f" {props['name']}" if message.get("type") == "tool_call" and isinstance(props.get("name"), str) else ""
    return f"{message.get('type')}{name} · as in the reply above"


Renderer = Callable[[dict, Options], str]


def _props(message: dict) -> dict:
    props = message.get("props")
    return props if isinstance(props, dict) else {}


def _positive(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and value < 1e6:
        return str(round(value))
    return None


def _user_input(message: dict, options: Options) -> str:
    props = _props(message)
    content = next((props[k] for k in ("content", "text", "message", "value") if props.get(k) is not None), None)
    body = (f'<div class="actxd-plain">{esc(content)}</div>' if isinstance(content, str)
            else f'<pre class="actxd-json">{esc(pretty_json(props))}</pre>')
    return f'<div class="actxd-user-input"><span class="actxd-label">User input</span>{body}</div>'


def _text(message: dict, options: Options) -> str:
    return md_div(text_of(_props(message).get("content")))


def _thinking(message: dict, options: Options) -> str:
    return thinking_box(text_of(_props(message).get("content")))


def _loading(message: dict, options: Options) -> str:
    words = text_of(_props(message).get("message"))
    return f'<div class="actxd-loading" role="status">… {esc(words)}</div>' if words else ""


def _tool_call(message: dict, options: Options) -> str:
    props = _props(message)
    function = props.get("function") if isinstance(props.get("function"), dict) else {}
    name = props.get("name", function.get("name"))
    args = props.get("arguments", function.get("arguments"))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            pass  # stays the raw string (not JSON)
    call_id = props.get("id")
    call = None if call_id is None else text_of(call_id)
    data = f' data-call-id="{attr(call_id)}"' if isinstance(call_id, str) else ""
    return f'<div class="actxd-tool"{data}>{tool_call_parts(text_of(name) or "(unnamed tool)", call, args)}</div>'


def _error(message: dict, options: Options) -> str:
    props = _props(message)
    code, details = props.get("code"), props.get("details")
    code_html = "" if code is None else f'<span class="actxd-error-code">{esc(text_of(code))}</span>'
    details_html = "" if details is None or details == "" else f'<pre class="actxd-error-details">{esc(text_of(details))}</pre>'
    return (f'<div class="actxd-error" role="alert"><div>{code_html}'
            f'<span class="actxd-error-message">{esc(text_of(props.get("message")) or "Error")}</span></div>{details_html}</div>')


def _blocked(url: Any, why: str = "URL not allowed") -> str:
    return (f'<div class="actxd-blocked-url" data-testid="actx-blocked-url"><span class="actxd-label">Not loaded ({why}): </span>'
            f"<code>{esc(clip(text_of(url), 300))}</code></div>")


def _image(message: dict, options: Options) -> str:
    props = _props(message)
    url, alt = props.get("url"), text_of(props.get("alt"))
    caption = f"<figcaption>{esc(alt)}</figcaption>" if alt else ""
    if is_inline_image(url) or (options.remote_media and is_remote_url(url)):
        size = "".join(f' {key}="{value}"' for key in ("width", "height")
                       if (value := _positive(props.get(key))) is not None)
        remote = ' loading="lazy" referrerpolicy="no-referrer"' if is_remote_url(url) else ""
        body = f'<img class="actxd-img" src="{attr(url)}" alt="{attr(alt)}"{size}{remote}>'
    elif is_remote_url(url):
        body = image_link(url, alt)
        caption = ""
    else:
        body = _blocked(url)
    return f'<figure class="actxd-figure">{body}{caption}</figure>'


def _media(kind: str) -> Renderer:
    """An http(s) source is a link, loaded only on a click (no <audio>/<video>, no poster): the static
    twin of the live view's click-to-load player; anything else is shown as text."""
    verb = {"audio": "▶ Audio", "video": "▶ Video"}[kind]

    def render(message: dict, options: Options) -> str:
        props = _props(message)
        url = props.get("url")
        if is_remote_url(url):
            body = link(url, f"{verb} ↗ {host_of(url)}", "actxd-media-link")
        elif isinstance(url, str) and url.lower().startswith(f"data:{kind}/"):
            body = _blocked(f"{url[:40]}…", f"inline {kind} does not play in a static page")
        else:
            body = _blocked(url)
        duration = props.get("duration")
        facts = " · ".join(part for part in (
            text_of(props.get("format")) if props.get("format") else "",
            f"{duration:.1f} s" if isinstance(duration, (int, float)) and not isinstance(duration, bool) else "",
        ) if part)
        facts_html = f'<figcaption class="actxd-media-facts">{esc(facts)}</figcaption>' if facts else ""
        transcript = props.get("transcript")
        transcript_html = (f'<details class="actxd-transcript"><summary>Transcript</summary>'
                           f'<div class="actxd-plain">{esc(text_of(transcript))}</div></details>') if transcript else ""
        return f'<figure class="actxd-figure">{body}{facts_html}{transcript_html}</figure>'
    return render


def _chip(kind: str) -> Renderer:
    def render(message: dict, options: Options) -> str:
        props = _props(message)
        name = next((v for v in (props.get(k) for k in ("name", "action", "event", "type", "message"))
                     if isinstance(v, str) and v), None)
        text = name if name is not None else compact_json(props)
        return (f'<span class="actxd-chip actxd-chip-{kind}" title="{attr(clip(pretty_json(props), 2000))}">'
                f'<span class="actxd-chip-kind">{kind}</span><span class="actxd-chip-text">{esc(clip(text, 80))}</span></span>')
    return render


def generic_output(message: dict, options: Options) -> str:
    kind = message.get("type")
    return (f'<div class="actxd-generic"><span class="actxd-label">{esc(text_of(kind) or "message")}</span>'
            f'<pre class="actxd-json">{esc(pretty_json(message.get("props")))}</pre></div>')


OUTPUT_RENDERERS: dict[str, Renderer] = {
    mt.USER_INPUT: _user_input,
    mt.TEXT: _text,
    mt.THINKING: _thinking,
    mt.LOADING: _loading,
    mt.TOOL_CALL: _tool_call,
    mt.ERROR: _error,
    mt.IMAGE: _image,
    mt.AUDIO: _media("audio"),
    mt.VIDEO: _media("video"),
    mt.ACTION: _chip("action"),
    mt.EVENT: _chip("event"),
}
"""Keyed by the built-in types of ``output.message_types.TYPES`` (tests check they agree)."""

_STATUS_ICON = {"running": "▶", "completed": "✓", "error": "✕"}


def _execute(kind: str) -> Renderer:
    """One ``execute``-family message: status icon, the CUI's label, status and facts; the input and
    output (or the todo list, or the questions) folded in a ``<details>`` (a todo list starts open)."""
    def render(message: dict, options: Options) -> str:
        props = ef.execute_props(_props(message))
        status = ef.status_of(props)
        label = ef.label_of(kind, props)
        facts = "".join(f'<span class="actxd-exec-fact">{esc(fact)}</span>' for fact in ef.facts_of(props))
        head = (f'<span class="actxd-exec-icon actxd-exec-{status}" aria-hidden="true">{_STATUS_ICON[status]}</span>'
                f'<span class="actxd-exec-label" title="{attr(clip(label, 2000))}">{esc(clip(label, 300))}</span>'
                f'<span class="actxd-exec-status">{status}</span>{facts}')
        body = _execute_body(kind, props)
        inner = (f'<details{" open" if kind == "todo" else ""}><summary class="actxd-exec-head">{head}</summary>{body}</details>'
                 if body else f'<div class="actxd-exec-head">{head}</div>')
        return f'<div class="actxd-exec" data-exec-type="{kind}" data-status="{status}">{inner}</div>'
    return render


_BADGE = '<span class="actxd-exec-badge">in progress</span>'


def _execute_body(kind: str, props: dict) -> str:
    if kind == "todo":
        items = "".join(
            f'<li class="actxd-exec-todo" data-status="{attr(status)}"><span class="actxd-exec-check" aria-hidden="true">'
            f'{"☑" if status == "completed" else "☐"}</span><span>{esc(clip(text, 500))}</span>'
            f'{_BADGE if status == "in_progress" else ""}</li>'
            for text, status in ef.todos_of(props))
        return f'<ul class="actxd-exec-todos">{items}</ul>' if items else ""
    if kind == "question":
        cards = "".join(
            f'<div class="actxd-exec-question"><div>{esc(question)}</div><div class="actxd-exec-options">'
            + "".join(f'<span class="actxd-exec-option">{esc(option)}</span>' for option in options) + "</div></div>"
            for question, options in ef.questions_of(props))
        return f'<div class="actxd-exec-questions">{cards}</div>' if cards else ""
    detail = ef.detail_of(props)
    return f'<pre class="actxd-exec-detail">{esc(clip(detail, 20000))}</pre>' if detail else ""


EXECUTE_RENDERERS: dict[str, Renderer] = {kind: _execute(kind) for kind in ef.EXECUTE_FAMILY}
"""Keyed by ``output.message_types.YAO_TYPES`` (today's Yao; tests check they agree)."""


def format_duration(ms: float) -> str:
    """``<1 ms``, ``850 ms``, ``1.5 s``, ``2m 05s``, never ``0 ms`` (the live view's ``formatDuration``)."""
    if ms < 0.5:
        return "<1 ms"
    if ms < 1000:
        return f"{round(ms)} ms"
    if ms < 60000:
        return f"{ms / 1000:.1f} s"
    seconds = round(ms / 1000)
    return f"{seconds // 60}m {seconds % 60:02d}s"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and value >= 0


def _measured(value: Any) -> bool:
    """A measured duration: a number above 0 (0 is "no time measured": a replay, a ``Send``)."""
    return _number(value) and value > 0 and value != float("inf")


def message_duration(metadata: Any) -> float | None:
    """``duration_ms`` when it is a measured time (above 0) and the message was more than one chunk (or the
    count is unknown): a ``Send`` ends as it starts (``messageDuration`` in the live view); else None."""
    if not isinstance(metadata, dict) or not _measured(metadata.get("duration_ms")):
        return None
    chunks = metadata.get("chunk_count")
    if _number(chunks) and chunks <= 1:
        return None
    return metadata["duration_ms"]


def _duration_chip(metadata: Any) -> str:
    ms = message_duration(metadata)
    if ms is None:
        return ""
    return (f'<span class="actxd-duration" data-testid="actx-duration" title="{round(ms)} ms (message_end duration_ms)">'
            f"{esc(format_duration(ms))}</span>")


def _group_title(group_id: str, block: Any) -> str:
    """A Yao block's title (label or ``Block <id>``, type, a status other than completed, duration), or the
    seed's ``group <id>``."""
    if not isinstance(block, dict):
        return f'<div class="actxd-group-title">group {esc(group_id)}</div>'
    def text(key: str) -> str | None:
        value = block.get(key)
        return value if isinstance(value, str) and value else None
    name = text("label") or f"Block {text('id') or ''}".strip()
    parts = [f'<span class="actxd-block-name">{esc(name)}</span>']
    if text("type"):
        parts.append(f'<span class="actxd-block-type">{esc(text("type"))}</span>')
    if text("status") and block["status"] != "completed":
        parts.append(f'<span class="actxd-block-status">{esc(block["status"])}</span>')
    ms = block.get("duration_ms")
    if _measured(ms):
        parts.append(f'<span class="actxd-duration" data-testid="actx-block-duration">{esc(format_duration(ms))}</span>')
    return f'<div class="actxd-group-title actxd-block-title">{"".join(parts)}</div>'


# ---- the state -------------------------------------------------------------------------------------

def output_state(output: Any) -> tuple[dict | None, list[str]]:
    """``(state, problems)`` for what ``to_html(output=...)`` takes: an ``Output`` (its flushed state),
    a delta-engine state ``{order, messages}``, or a list of output messages and groups (folded by the
    delta engine, as the view does; a message it refuses is named in ``problems``)."""
    if output is None:
        return None, []
    if isinstance(output, dict) and isinstance(output.get("order"), list) and isinstance(output.get("messages"), dict):
        return output, []
    state = getattr(output, "state", None)
    if not isinstance(output, (dict, list, tuple)) and isinstance(state, dict):
        return state, []
    if isinstance(output, dict):
        output = [output]
    if not isinstance(output, Iterable) or isinstance(output, (str, bytes)):
        raise TypeError(f"to_html: output must be an Output, a state {{order, messages}} or a list of messages, "
                        f"got {type(output).__name__}")
    state = new_state()
    problems = []
    for i, item in enumerate(output):
        try:
            if isinstance(item, dict) and "type" not in item and isinstance(item.get("messages"), list):
                members = group_members(normalize_group(item, where=f"output[{i}]"))  # type: ignore[arg-type]
            else:
                members = [normalize_message(item, where=f"output[{i}]")]
            for member in members:
                apply_message_in_place(state, member)
        except (OutputMessageError, DeltaError) as exc:
            problems.append(f"output[{i}]: {exc}")
    return state, problems


def _render_one(message: dict, msg_id: str, options: Options) -> str:
    kind = message.get("type")
    render = (OUTPUT_RENDERERS.get(kind) or EXECUTE_RENDERERS.get(kind) or generic_output) if isinstance(kind, str) \
        else generic_output
    try:
        body = render(message, options)
    except Exception as exc:  # noqa: BLE001 - one bad message never blanks the rest
        body = (f'<div class="actxd-error" data-kind="render-error">Could not render output {esc(msg_id)}: {esc(exc)}'
                f'<pre class="actxd-json">{esc(pretty_json(message))}</pre></div>')
    if not body:
        return ""
    safe = kind if isinstance(kind, str) and kind.replace("_", "").replace("-", "").isalnum() and kind.isascii() else "unknown"
    done = ' data-done="true"' if message.get("done") else ""
    key = repeat_key(message)
    repeats = ""
    if key is not None and key in options.replies:
        body = (f'<details class="actxd-repeat" data-testid="actx-repeat"><summary class="actxd-repeat-line">'
                f"{esc(repeat_label(message))}</summary>{body}</details>")
        repeats = ' data-repeats="reply"'
    return (f'<div class="actxd-out actxd-out-{safe}" data-output-id="{attr(msg_id)}" data-kind="{attr(text_of(kind))}"'
            f"{done}{repeats}>{body}{_duration_chip(message.get('metadata'))}</div>")


def render_outputs(state: dict, options: Options, problems: list[str] | None = None) -> str:
    """The output section, or "" when there is nothing to show."""
    messages = state.get("messages") if isinstance(state.get("messages"), dict) else {}
    groups: dict[str, list[str]] = {}
    blocks: dict[str, Any] = {}  # group id -> the metadata.block of a member (a Yao block)
    top: list[tuple[str, Any]] = []  # ("one", html) or ("group", group id)
    for msg_id in state.get("order") or []:
        message = messages.get(msg_id)
        if not isinstance(message, dict) or (message.get("type") == mt.LOADING and message.get("done")):
            continue
        item = _render_one(message, str(msg_id), options)
        if not item:
            continue
        group_id = message.get("group_id")
        if isinstance(group_id, str) and group_id:
            block = (message.get("metadata") or {}).get("block") if isinstance(message.get("metadata"), dict) else None
            if isinstance(block, dict) and group_id not in blocks:
                blocks[group_id] = block
            if group_id not in groups:
                groups[group_id] = []
                top.append(("group", group_id))
            groups[group_id].append(item)
        else:
            top.append(("one", item))
    parts = []
    for kind, value in top:
        if kind == "one":
            parts.append(value)
        else:
            block = blocks.get(value)
            block_id = (f' data-block-id="{attr(block.get("id") if isinstance(block.get("id"), str) else "")}"'
                        if isinstance(block, dict) else "")
            parts.append(f'<div class="actxd-group" data-group-id="{attr(value)}"{block_id}>{_group_title(value, block)}'
                         f'{"".join(groups[value])}</div>')
    for problem in problems or []:
        parts.append(f'<div class="actxd-error" data-kind="output-refused">Output message not shown: {esc(problem)}</div>')
    if not parts:
        return ""
    return (f'<section class="actxd-outputs" data-testid="actx-outputs"><div class="actxd-section-title"><b>Output</b></div>'
            f'{"".join(parts)}</section>')
