"""Diagnostics: what Yao and its chat client (CUI) accept, but a hook author almost surely did not mean.

The kit behaves like Yao at ``afab9c2`` and its client CUI at ``9c35de9`` (DESIGN.md "The reference
rule"): a delta for an id never sent creates the message, an append of a number onto a string
concatenates its text, id-less messages share one slot. Following them keeps a hook that works here
working there; saying so is what no other tool does. Each case records a diagnostic ``{code, message,
where, hint}`` on ``Output.diagnostics`` / ``TurnResult.diagnostics``, shown in the view as a badge;
``strict=True`` turns the first one into a :class:`DiagnosticError` (raised where the message was sent,
before anything of it is applied).

:data:`DIAGNOSTICS` is the one table of codes: what happened (a template filled with the case's
details) and the hint. docs/diagnostics.md lists every code with an example; tests/test_readme.py checks the two agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Report = Callable[..., None]
"""``report(code, where, **details)``: how the delta engine and the Output tell a collector."""

DIAGNOSTICS: dict[str, tuple[str, str]] = {
    # -- the delta engine: what the CUI client does (chatbox/utils/delta.ts, hooks/useChat.ts @ 9c35de9)
    "unknown_id": (
        "delta for {id!r}, which was never sent: Yao's chat client (CUI) shows it as a new message",
        "send the first message for an id without delta: true, or check the id for a typo",
    ),
    "after_done": (
        "message for {id!r} after it was marked done: Yao's chat client (CUI) starts it afresh (a delta applies "
        "to empty props)",
        "use a new id for a new message; done: true is the last message for an id",
    ),
    "shared_slot": (
        "{count} messages without an id share one slot: Yao's chat client (CUI) shows only the last of them",
        "give every message an id (ctx.Send({..., id: 'step1'})) so each keeps its own place",
    ),
    "type_changed": (
        "delta for {id!r} has type {new!r}, the message is {old!r}: Yao's chat client (CUI) switches its type",
        "send deltas with the message's own type, or a non-delta message to replace it",
    ),
    "append_coerced": (
        "append of a {kind} onto the text at {path}: Yao's chat client (CUI) concatenates its text form {text!r}",
        "append strings onto strings; use replace or set for other values",
    ),
    "append_replaced": (
        "append onto the {kind} at {path}: Yao's chat client (CUI) replaces it with the sent value",
        "append works on strings and lists; use replace, set or merge for numbers and objects",
    ),
    "missing_value": (
        "the delta's props have nothing at {path}: Yao's chat client (CUI) uses undefined ({effect})",
        "put the value at the same path inside props as delta_path names",
    ),
    "merge_ignored": (
        "merge of {value} at {path} changes nothing in Yao's chat client (CUI): it skips null and falsy values",
        "use replace or set to clear or zero a value",
    ),
    "merge_list_by_index": (
        "merge of a {source} onto a {target} at {path}: Yao's chat client (CUI) merges them index by index",
        "use replace to swap a list, or append to extend it",
    ),
    "list_padded": (
        "{path} is past the end of a list of {length}: Yao's chat client (CUI) fills the gap with null",
        "append to grow a list, or set an index that exists",
    ),
    "path_made_object": (
        "{path} creates an object with key {key!r}, not a list, in Yao's chat client (CUI) (a dotted index on a "
        "missing container)",
        "write items[0] to create a list, or send the whole list",
    ),
    "path_overwrote": (
        "{path} goes through a {kind}: Yao's chat client (CUI) replaces it with an empty object",
        "make the value an object first, or change the path",
    ),
    "dropped": (
        "Yao's chat client (CUI) drops this message: {reason}",
        "that client's delta code throws on it and ignores the message; fix the path or the props",
    ),
    "path_literal": (
        "delta_path part {part!r} is a literal key in Yao's chat client (CUI), not a list index",
        "use name[0] (one index per part, letters, digits and _) or dotted indexes: items.0.name",
    ),
    "invalid_action": (
        "unknown delta_action {action!r}: Yao's chat client (CUI) changes nothing but the type and done",
        "delta_action is append, replace, merge or set",
    ),
    "list_key_ignored": (
        "{path} names the key {key!r} on a list, which is not an index: Yao's chat client (CUI) keeps the value "
        "where it never shows",
        "index a list with a number (items.0 or items[0]); use an object for named keys",
    ),
    "bare_done_kept": (
        "done with empty props for {id!r}: this view keeps the text, but Yao's chat client (CUI) blanks the "
        "message",
        "send the final content with done: true, or a delta with done: true, so Yao's chat client keeps the text too",
    ),
    # -- hooks: what Yao's hook layer does (agent/assistant/hook/create.go @ afab9c2)
    "unknown_return_key": (
        "{hook} returned {key!r}, which Yao's {struct} has no field for: it is ignored",
        "{hook} may return {known}; check the spelling",
    ),
    "unknown_connector": (
        "{chooser} connector {connector!r}, which this turn does not know: {effect}",
        "pass run_turn(connectors={{name: model}}) (known here: {known})",
    ),
    # -- today's Yao request (YaoApp/yao 5a3f9a6a, agent/llm/jsapi.go:82-86)
    "llm_connector_unknown": (
        "ctx.llm names connector {connector!r}, which this turn does not know: Yao's connector.Select fails, so "
        "the call's result carries an error instead of an answer from the turn's model",
        "pass run_turn(connectors={{{connector!r}: model}}) (known here: {known})",
    ),
    # -- the envelope: what Yao's parseMessage / parseGroup keep (agent/context/jsapi_helpers.go:12-220)
    "field_dropped": (
        "{field} is dropped, as Yao drops it: {reason}",
        "Yao reads type, props, id, delta, done, delta_path, delta_action, type_change, group_id, "
        "group_start, group_end and metadata {{timestamp, sequence, trace_id}}, each with its JSON type; "
        "put anything else inside props",
    ),
    # -- standard clients: what Yao's OpenAI adapter writes (agent/output/adapters/openai/converter.go)
    "resend_duplicates": (
        "{how} for {id!r} sends its whole {prop} again: a standard (OpenAI-style) client "
        "appends it after the {shown} characters it already shows",
        "send only what is new, as a delta (delta: true, delta_action: 'append'); Yao's chat client (CUI) "
        "replaces the text, a standard client cannot",
    ),
    # -- Yao today (5a3f9a6a): the request (agent/assistant/agent.go, hook/script.go)
    "hook_error_hidden": (
        "{hook} failed with {error!r}; Yao turns an error containing {pattern!r} into a null return, "
        "so the request went on as if {hook} returned nothing",
        "a name misspelled inside a hook reads like a missing hook; fix the name (or catch the error "
        "in the hook) — only an absent {hook} should be silent",
    ),
    "no_tool_loop": (
        "the hook script has no Next: Yao ran the {count} tool call(s) but runs its tool loop only for an "
        "assistant without a script, so the model never answers with their results",
        "add a Next hook that reads payload.tools (or returns nothing to keep the standard response)",
    ),
    # -- Yao today: the current output API (agent/context/output.go, jsapi.go)
    "end_unknown": (
        "End({id!r}) of a message never started: Yao still sends a message_end (type 'text', 0 chunks, no content)",
        "End the id SendStream returned",
    ),
    "end_twice": (
        "End({id!r}) again: Yao sends another message_end, without the content",
        "End each streaming message once",
    ),
    "after_end": (
        "{method}({id!r}) after the message ended (Send ends it at once, SendStream at End): Yao's chat client "
        "(CUI) clears it and shows only what this call sent",
        "start a message you will add to with SendStream, and End it after the last Append",
    ),
    "block_unknown": (
        "EndBlock({id!r}) of a block no message used: Yao sends nothing",
        "pass the block id to Send/SendStream (second argument or block_id) before EndBlock",
    ),
    # -- Yao today: the assistant directory (agent/assistant/load.go)
    "yao_field_ignored": (
        "{key} is a {kind}, not {expected}: Yao ignores it",
        "write {key} as {expected}",
    ),
    "yao_unknown_field": (
        "{key} is not a field Yao reads: it is ignored",
        "did you mean {close}?",
    ),
    "yao_missing_asset": (
        "@assets/{asset} does not exist: Yao includes it as nothing",
        "create {path} or fix the name",
    ),
    "yao_trace_option_dropped": (
        "ctx.trace.Add / Parallel ignore the option's {field!r}, as Yao does",
        "Yao reads only label, icon and description there; set the type with node.Add on a parent node, "
        "or leave it out",
    ),
    "yao_two_index_scripts": (
        "src/ has both index.ts and index.js: Yao walks them in name order and keeps the last, index.ts",
        "delete the one you do not edit",
    ),
    # -- the model's answer (both lifecycles)
    "empty_reply": (
        "the reply is empty (no text, thinking or tool call: {why}): no assistant message was added",
        "look at the model's max tokens, stop sequences and content filter, or at what Before returned; "
        "result.calls[-1] holds what the model reported",
    ),
    "reply_cut_off": (
        "the reply was cut off: the model stopped at its token limit ({stop!r}), so it is incomplete",
        "raise the model's max_tokens (max_output_tokens for OpenAI Responses) or ask for a shorter answer; "
        "result.calls[i]['truncated'] is True",
    ),
    "yao_mcp_not_started": (
        "MCP server {server!r} was not started: it would run {runs}",
        "load_assistant(..., start_mcp=True) starts the configured servers (each on its first call)",
    ),
    "yao_mcp_not_run": (
        "MCP server {server!r}: {problem}",
        "only stdio and http servers run in the notebook",
    ),
    "yao_tool_call_dropped": (
        "the model's call {call_id} of {name!r} gets no result: {why}",
        "Yao runs several calls of one reply this way (agent/assistant/mcp.go:417-677); the model then sees a "
        "tool call without its result",
    ),
    "yao_tools_rerun": (
        "the calls to MCP server {server!r} in this reply ({count}) ran again one after another, because one "
        "failed with an error the model can fix",
        "Yao does this (agent/assistant/mcp.go:464-470): each of those calls ran twice; a tool with side effects "
        "had them twice",
    ),
    "yao_mcp_not_offered": (
        "MCP server {server!r}: {problem}",
        "register it with load_assistant(path, mcp={{...}}) or start_mcp=True; a server id must not contain '_'",
    ),
    "yao_env_read": (
        "this assistant reads the environment variables {listed}: {effect}",
        "load_assistant(..., env_allow=[...]) fills only the names you list (env_allow=[]: none)",
    ),
}
"""code → (message template, hint template), both filled with the reporter's details."""


ANSWER_CODES = frozenset({"empty_reply", "reply_cut_off"})
"""Diagnostics about the model's answer itself: a turn's settled document shows them even when the turn
succeeded (the others only when it failed)."""


class DiagnosticError(ValueError):
    """``strict=True``: a message that Yao would accept but that would surprise a hook author."""

    def __init__(self, diagnostic: dict) -> None:
        super().__init__(f"[{diagnostic['code']}] {diagnostic['where']}: {diagnostic['message']} "
                         f"(hint: {diagnostic['hint']})")
        self.diagnostic = diagnostic
        self.code = diagnostic["code"]


def diagnostic(code: str, where: str, **details: Any) -> dict:
    """The diagnostic dict for ``code`` at ``where``, its message filled from ``details``."""
    template, hint = DIAGNOSTICS[code]
    return {"code": code, "message": _fill(template, details), "where": where, "hint": _fill(hint, details)}


def _fill(template: str, details: dict) -> str:
    try:
        return template.format(**details)
    except (KeyError, IndexError, ValueError):
        return template


class Collector:
    """Diagnostics gathered while one message is planned; released only when it is applied."""

    def __init__(self) -> None:
        self.items: list[dict] = []

    def __call__(self, code: str, where: str, **details: Any) -> None:
        self.items.append(diagnostic(code, where, **details))
