"""Every hook example of seed 000, run VERBATIM as JavaScript, and again as the same hooks written
in Python: each must produce the output stream written out by hand below from the seed's text.

JS sources: tests/fixtures/seed_hooks/*.js (copied from the seed; the migration example's ``[...]``
is replaced by a concrete list, as its fixture note says). Python: tests/fixtures/seed_hooks_py/.
"""

from __future__ import annotations

import functools
import copy
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest

from agentctx_widgets import Context, Output, ScriptedModel, hooks_from_js, hooks_from_python, run_turn

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises

FIXTURES = Path(__file__).parent / "fixtures"
# The seed lives in shared/ beside the repository (CI lays a copy there too).
SEED = next((p for p in (Path(__file__).resolve().parents[2] / "shared", Path("/work/shared"))
             if (p / "seeds/000_b2cf72c43e2722cc.txt").exists()), Path("/work/shared")) / "seeds/000_b2cf72c43e2722cc.txt"
USER = "What is the weather in Paris?"
ANSWER = "It is sunny in Paris."


class Matches:
    """Equal to any string matching ``pattern``; with ``same=True`` every match must be equal."""

    def __init__(self, pattern: str, *, same: bool = False) -> None:
        self.pattern, self.same, self.seen = pattern, same, None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str) or not re.fullmatch(self.pattern, other):
            return False
        if self.same:
            self.seen = self.seen or other
            return other == self.seen
        return True

    def __repr__(self) -> str:
        return f"Matches({self.pattern!r})"


class MillisNow:
    """Equal to an integer that looks like ``Date.now()`` (milliseconds since 1970, 13 digits)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, int) and len(str(other)) == 13

    def __repr__(self) -> str:
        return "MillisNow()"


def resp_id() -> Matches:
    return Matches(r"resp_[0-9a-f]{8}_\d+")


def text(content: str, **extra: Any) -> dict:
    return {"type": "text", "props": {"content": content}, **extra}


def answer(content: str = ANSWER, index: int = 0) -> list[dict]:
    """The response's text as step 5 sends it: the content, then done with the same content (as Yao's
    stream handler ends a message: a standard client skips the done, a CUI client keeps the content)."""
    first = {"type": "text", "props": {"content": content}, "id": resp_id()}
    return [first, {**first, "id": resp_id(), "done": True}]


def loading(message: str, **extra: Any) -> dict:
    return {"type": "loading", "props": {"message": message}, **extra}


APPEND = {"delta": True, "delta_path": "content", "delta_action": "append"}


@dataclass
class Env:
    """The seed's helper functions, recording how they were called."""

    output: Output = field(default_factory=Output)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)

    def helpers(self) -> dict[str, Callable]:
        def analyze_intent(messages):
            self.calls.append(("analyzeIntent", copy.deepcopy(messages)))
            return "weather"

        def search_knowledge_base(intent):
            self.calls.append(("searchKnowledgeBase", intent))
            return "Paris: sunny, 21°C"

        def execute_tool(tool_call):
            self.calls.append(("executeTool", tool_call))
            return "sunny, 21°C"

        def perform_stage(stage):
            # what the client had received when the stage ran: proves each Flush came first
            self.calls.append(("performStage", stage, len(self.output.messages)))

        return {"analyzeIntent": analyze_intent, "searchKnowledgeBase": search_knowledge_base,
                "executeTool": execute_tool, "performStage": perform_stage}

    def sleep_seconds(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def py_globals(self) -> dict[str, Any]:
        def log(level, *args):
            parts = [a if isinstance(a, str) else orjson.dumps(a).decode() for a in args]
            self.console.append((level, " ".join(parts)))

        return {**self.helpers(), "sleep": lambda ms: self.sleeps.append(ms / 1000), "log": log}


@dataclass
class Case:
    name: str
    expected: list[dict]
    replies: list[Any] = field(default_factory=lambda: [ANSWER])
    user: str = USER
    fields: dict = field(default_factory=lambda: {"chat_id": "chat-42", "locale": "fr"})
    sleeps: list[float] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    check: Callable[[Any, Env, Context, ScriptedModel], None] | None = None


def _check_example_2(result, env, context, model):
    assert env.calls[0] == ("analyzeIntent", [{"role": "user", "content": USER}])
    assert env.calls[1] == ("searchKnowledgeBase", "weather")
    assert model.calls[0] == [
        {"type": 1, "content": [{"type": "text", "text": "Context: Paris: sunny, 21°C"}]},
        {"type": 2, "content": [{"type": "text", "text": USER}]},
    ]


def _check_example_4(result, env, context, model):
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    assert env.calls == [("executeTool", call)]
    assert result.response["tool_calls"] == [call]


def _check_no_commit(result, env, context, model):
    assert [m["type"] for m in context.messages()] == [2]
    assert result.error["code"] == "UPSTREAM_TIMEOUT"
    assert result.error["message"] == "upstream timeout"  # the raw error stays on the result


def _check_final_state(message_id_prefix: str, content: str):
    def check(result, env, context, model):
        state = env.output.state
        (key,) = [k for k in state["order"] if k.startswith(message_id_prefix)]
        assert state["messages"][key]["props"]["content"] == content
    return check


def _check_progress_closed(result, env, context, model):
    state = env.output.state
    (key,) = [k for k in state["order"] if k.startswith("progress_")]
    assert state["messages"][key]["done"] is True
    assert state["messages"][key]["props"] == {"message": ""}


def _check_retry(result, env, context, model):
    assert result.retries == 1
    assert result.hooks_called == ["Error"]
    assert [m["type"] for m in context.messages()] == [2, 3]
    assert context.at(-1)["content"] == [{"type": "text", "text": "Recovered answer"}]


def _check_stages(result, env, context, model):
    # stage n ran after n loading messages had reached the client
    assert env.calls == [("performStage", "validate", 1), ("performStage", "analyze", 2), ("performStage", "prepare", 3)]


PROGRESS = Matches(r"progress_\d{13}", same=True)
STREAM = Matches(r"stream_\d{13}", same=True)
LONG = "Please compare the weather in Paris, Lyon and Marseille over the last ten years and explain every trend."
TOOL_REPLY = {"text": "Let me check.", "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]}
TOOL_CALL_PROPS = {"id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}
GROUP_META = {"timestamp": MillisNow()}  # Yao keeps only timestamp, sequence and trace_id: "type" is dropped

CASES = [
    Case("quickstart_1_basic_create", [
        text("Welcome! Let me help you with that..."),
        loading("Analyzing your request..."),
        *answer(),
    ]),
    Case("quickstart_2_streaming_updates", [
        text("Processing", id="status_msg"),
        text("...", id="status_msg", **APPEND),
        text(" Done!", id="status_msg", **APPEND),
        *answer(),
    ], sleeps=[0.5, 0.5], check=_check_final_state("status_msg", "Processing... Done!")),
    Case("example_1_welcome", [text("Welcome to AI Assistant! How can I help you today?"), *answer()]),
    Case("example_2_progress_updates", [
        loading("Analyzing your request..."),
        loading("Searching knowledge base..."),
        *answer(),
    ], check=_check_example_2),
    # Before showed the reasoning (seed: "Display model's reasoning before sending response"), so the
    # runner does not send it again: each thing once
    Case("example_3_show_thinking", [
        {"type": "thinking", "props": {"content": "The user asks about weather."}},
        *answer(),
    ], replies=[{"thinking": "The user asks about weather.", "text": ANSWER}]),
    # After showed the tool call (seed: "Handle tool calls and send results"): the runner sends it no more
    Case("example_4_tool_calls", [
        *answer("Let me check."),
        {"type": "tool_call", "props": TOOL_CALL_PROPS},
        text("Tool result: sunny, 21°C"),
    ], replies=[TOOL_REPLY], check=_check_example_4),
    Case("example_5_done", [*answer(), text("\n✅ Task completed successfully!")],
         replies=[{"text": ANSWER, "usage": {"prompt_tokens": 12, "completion_tokens": 5}}],
         console=[("log", 'Conversation completed: {"chat_id":"chat-42","message_count":1,"tokens_used":17}')]),
    # the Error hook's friendly message replaces the raw error for the client (it stays on the result)
    Case("example_6_error", [
        {"type": "error", "props": {"message": "I encountered an issue while processing your request.",
                                    "code": "UPSTREAM_TIMEOUT"}},
    ], replies=[{"error": {"message": "upstream timeout", "code": "UPSTREAM_TIMEOUT"}}],
         console=[("error", 'Assistant error: {"message":"upstream timeout","code":"UPSTREAM_TIMEOUT",'
                            '"name":"ModelError","hook":null}')],
         check=_check_no_commit),
    Case("example_7_multi_step", [
        loading("Validating input... (1/3)", id=PROGRESS, delta=False),
        loading("Loading context... (2/3)", id=PROGRESS, delta=True),
        loading("Preparing response... (3/3)", id=PROGRESS, delta=True),
        loading("", id=PROGRESS, done=True),
        *answer(),
    ], sleeps=[0.5, 1.0, 0.8], check=_check_progress_closed),
    Case("example_8_streaming", [
        text("Processing", id=STREAM),
        *[text(update, id=STREAM, **APPEND) for update in [".", ".", ".", " analyzing", ".", ".", ".", " complete!"]],
        *answer(),
    ], sleeps=[0.2] * 8, check=_check_final_state("stream_", "Processing... analyzing... complete!")),
    Case("example_9_groups", [
        # id-less members get "<group>.<index>": the group renders whole (see output/messages.group_members)
        text("**Context Information:**", group_id="context_info", id="context_info.0", metadata=GROUP_META),
        text("User: u-7", group_id="context_info", id="context_info.1", metadata=GROUP_META),
        text("Session: chat-42", group_id="context_info", id="context_info.2", metadata=GROUP_META),
        text("Locale: fr", group_id="context_info", id="context_info.3", metadata=GROUP_META),
        *answer(),
    ], fields={"chat_id": "chat-42", "locale": "fr", "authorized": {"user_id": "u-7"}}),
    Case("pattern_1_fire_and_forget", [text("Starting processing..."), *answer()]),
    Case("pattern_2_progress_tracking", [loading("validate..."), loading("analyze..."), loading("prepare..."), *answer()],
         check=_check_stages),
    Case("pattern_3_conditional", [*answer()]),
    Case("pattern_3_conditional", [{"type": "thinking", "props": {"content": "Analyzing complex query..."}}, *answer()],
         user=LONG),
    Case("pattern_4_error_recovery", [text("Service is busy, retrying..."), *answer("Recovered answer")],
         replies=[{"error": {"message": "Too many requests", "code": "RATE_LIMIT"}}, "Recovered answer"],
         sleeps=[1.0], check=_check_retry),
    Case("pattern_4_error_recovery", [
        {"type": "error", "props": {"message": "Sorry, something went wrong.", "code": "BOOM"}},
    ], replies=[{"error": {"message": "model failed", "code": "BOOM"}}]),
    Case("migration_before", [
        text("Hello"),
        text("Part one", group_id="grp1", id="grp1.0"),
        text("Part two", group_id="grp1", id="grp1.1"),
        *answer(),
    ]),
    Case("migration_after", [text("Hello"), text("Part one", group_id="grp1", id="grp1.0"),
                             text("Part two", group_id="grp1", id="grp1.1"), *answer()]),
]
IDS = [f"{case.name}-{i}" for i, case in enumerate(CASES)]


def _run(case: Case, hooks: Any, env: Env) -> tuple[Any, Context, ScriptedModel]:
    context = Context(name=case.name)
    model = ScriptedModel(case.replies)
    result = run_turn(context, case.user, hooks=hooks, model=model, output=env.output, **case.fields)
    return result, context, model


def _reset_matchers(case: Case) -> None:
    for matcher in (PROGRESS, STREAM):
        matcher.seen = None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_seed_example_in_javascript(case: Case) -> None:
    _reset_matchers(case)
    env = Env()
    source = (FIXTURES / "seed_hooks" / f"{case.name}.js").read_text()
    hooks = hooks_from_js(source, globals=env.helpers(), sleep=env.sleep_seconds)
    try:
        result, context, model = _run(case, hooks, env)
    finally:
        hooks.close()
    assert result.output == case.expected
    assert env.sleeps == case.sleeps
    expected_console = list(case.console)
    if case.name == "migration_before":
        expected_console = [("warn", "new Output(ctx) is deprecated; use ctx.Send / ctx.SendGroup / ctx.Flush")]
    assert [(line["level"], line["text"]) for line in result.console] == expected_console
    if case.check:
        case.check(result, env, context, model)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_hooks_in_python_give_the_same_stream(case: Case) -> None:
    _reset_matchers(case)
    env = Env()
    path = FIXTURES / "seed_hooks_py" / f"{case.name}.py"
    spec = importlib.util.spec_from_file_location(f"seed_hook_{case.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in env.py_globals().items():
        setattr(module, name, value)
    result, context, model = _run(case, hooks_from_python(module), env)
    assert result.output == case.expected
    assert env.sleeps == case.sleeps
    if case.name != "migration_before":
        assert env.console == case.console
    if case.check:
        case.check(result, env, context, model)


def test_javascript_development_env_adds_details_to_example_6() -> None:
    env = Env()
    source = (FIXTURES / "seed_hooks" / "example_6_error.js").read_text()
    hooks = hooks_from_js(source, globals={"process": {"env": {"YAO_ENV": "development"}}})
    result, _, _ = _run(CASES[7], hooks, env)
    assert result.output[0]["props"]["details"] == "upstream timeout"


def test_example_9_without_authorized_user_says_anonymous() -> None:
    env = Env()
    hooks = hooks_from_js((FIXTURES / "seed_hooks" / "example_9_groups.js").read_text())
    result, _, _ = _run(Case("example_9_groups", []), hooks, env)
    assert result.output[1]["props"]["content"] == "User: Anonymous"


@pytest.mark.skipif(not SEED.exists(), reason="seed 000 is not on this machine")
@pytest.mark.parametrize("path", sorted((FIXTURES / "seed_hooks").glob("*.js")), ids=lambda p: p.stem)
def test_fixture_is_a_verbatim_copy_of_the_seed(path: Path) -> None:
    seed = SEED.read_text()
    source = path.read_text()
    if "Fixture note" in source:  # the migration example: only `[...]` was made concrete
        body = "\n".join(line for line in source.split("\n") if not line.startswith("// Fixture note")
                         and not line.startswith("// this copy replaces"))
        concrete = re.search(r"messages: (\[\n.*?\n  \])", body, re.S).group(1)
        source = body.replace(concrete, "[...]")
    assert source.strip() in seed


def test_standard_client_gets_the_seed_streams_as_openai_chunks():
    """A standard client gets what Yao's OpenAI writer sends (agent/output/adapters/openai/converter.go at
    afab9c2): text as content, loading as reasoning_content, nothing for a done without delta, [DONE]."""
    hooks = hooks_from_js((FIXTURES / "seed_hooks" / "example_8_streaming.js").read_text(), sleep=lambda s: None)
    result = run_turn(Context(), USER, hooks=hooks, model=ScriptedModel([ANSWER]), accept="standard")
    chunks, done = result.chunks[:-1], result.chunks[-1]
    assert done == "[DONE]" and {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
    content = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks)
    assert content == "Processing... analyzing... complete!" + ANSWER
    assert {chunk["choices"][0]["finish_reason"] for chunk in chunks} == {None}  # Yao never sends one

    hooks = hooks_from_js((FIXTURES / "seed_hooks" / "example_7_multi_step.js").read_text(), sleep=lambda s: None)
    result = run_turn(Context(), USER, hooks=hooks, model=ScriptedModel([ANSWER]), accept="standard")
    deltas = [chunk["choices"][0]["delta"] for chunk in result.chunks[:-1]]
    assert deltas == [{"reasoning_content": "Validating input... (1/3)"}, {"reasoning_content": "Loading context... (2/3)"},
                      {"reasoning_content": "Preparing response... (3/3)"}, {"content": ANSWER, "role": "assistant"}]