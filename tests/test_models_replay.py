"""ReplayModel: record model calls once (a ScriptedModel stands in for the real model), replay them offline.

Expected file contents are written out by hand from the module docstring: one JSON line per model
call, ``{"key", "model", "request": {"model", "messages", "options"}, "events"}``, the key a 16-hex-digit
sha256 of the request's canonical (sorted-keys) JSON. The model is the wrapped model's identity:
``replay_identity()`` when it has one, else ``{"model": <its id>}`` (``{"model": "scripted"}`` for a
ScriptedModel).
"""

from __future__ import annotations

import functools
import asyncio
import hashlib
import json
import warnings

import orjson
import pytest

from agentctx_widgets import Context, ScriptedModel, hooks_from_python, run_turn
from agentctx_widgets.models import ModelError
from agentctx_widgets.models.replay import ReplayModel, request_key, request_of
from agentctx_widgets.output import without_echoes as shown

run_turn = functools.partial(run_turn, check=False)  # these tests read failed turns' results; test_turn_error raises

pytestmark = pytest.mark.timeout(300)  # a hang guard only: a loaded machine is slow, not failing


def user(text):
    return {"type": 2, "content": [{"type": "text", "text": text}]}


def assistant(text):
    return {"type": 3, "content": [{"type": "text", "text": text}]}


def lines_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def canonical_key(request):
    """The documented key, computed independently: sha256 of sorted-keys compact JSON, 16 hex digits."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class Exploding:
    """A model that must never be called (named ``model``: its identity is ``{"model": model}``)."""

    def __init__(self, model="exploding"):
        self.model = model
        self.calls = 0

    def stream(self, messages, *, options=None):
        self.calls += 1
        raise AssertionError("the wrapped model was called")


SCRIPTED = {"model": "scripted"}  # the identity of a ScriptedModel()

HELLO_USAGE = {"prompt_tokens": 3, "completion_tokens": 2}


def hello_model():
    return ScriptedModel([{"text": "Hello there", "usage": HELLO_USAGE}], chunk_size=6)


HELLO_EVENTS = [
    {"type": "start", "model": "scripted"},
    {"type": "text_start", "contentIndex": 0},
    {"type": "text_delta", "contentIndex": 0, "delta": "Hello "},
    {"type": "text_delta", "contentIndex": 0, "delta": "there"},
    {"type": "text_end", "contentIndex": 0, "text": "Hello there"},
    {"type": "done", "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
]


# -- record, then replay ----------------------------------------------------------------------------


def test_first_run_records_one_line_per_model_call(tmp_path):
    path = tmp_path / "rec.jsonl"
    inner = hello_model()
    replay = ReplayModel(path, model=inner)
    result = run_turn(Context(), "hi", model=replay)
    assert result.ok and len(inner.calls) == 1
    request = {"model": SCRIPTED, "messages": [user("hi")], "options": {}}
    assert lines_of(path) == [{"key": canonical_key(request), "model": SCRIPTED, "request": request,
                               "events": HELLO_EVENTS}]
    assert replay.recorded == 1 and replay.replayed == 0


def test_a_priced_models_line_keeps_the_tables_prices_and_its_replay_hands_them_on(tmp_path):
    """gpt-4o by OpenAI's pricing page: $2.50 / $10.00 per million, cached input $1.25; the line gets
    ``prices`` beside the documented four keys (the key still the request's hash), and the replayed
    ``done`` event carries them as ``recordedPrices`` (a ScriptedModel is unpriced: it gets none, above)."""
    import genai_prices

    path = tmp_path / "rec.jsonl"
    inner = ScriptedModel([{"text": "Hello there", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}],
                          model="gpt-4o")
    run_turn(Context(), "hi", model=ReplayModel(path, model=inner, mode="record"))
    (line,) = lines_of(path)
    prices = {"model": "gpt-4o", "rates": {"input": "2.5", "output": "10", "cache_read": "1.25"},
              "source": f"genai-prices {genai_prices.__version__} (bundled data)"}
    assert line["prices"] == prices
    assert line["key"] == canonical_key(line["request"])
    replayed = list(ReplayModel(path, mode="replay").stream([user("hi")]))
    assert replayed[-1] == {"type": "done", "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
                            "recordedPrices": prices}
    assert replayed[:-1] == line["events"][:-1]


def test_a_second_replay_model_replays_the_turn_without_any_model(tmp_path):
    path = tmp_path / "rec.jsonl"
    first_context = Context()
    first = run_turn(first_context, "hi", model=ReplayModel(path, model=hello_model()))
    recorded = path.read_bytes()

    offline = ReplayModel(path)
    assert offline.model is None and offline.model_id == "scripted"  # the id the recordings name
    second_context = Context()
    second = run_turn(second_context, "hi", model=offline)
    assert second.ok
    assert second_context.messages() == first_context.messages() == [user("hi"), assistant("Hello there")]
    assert second.usage == first.usage == {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5, "source": "provider"}
    assert second.calls == first.calls
    assert [m["props"]["content"] for m in shown(second.output)] == ["Hello there"]
    assert offline.replayed == 1 and offline.recorded == 0
    assert path.read_bytes() == recorded  # nothing written


def test_a_tool_turn_records_both_calls_and_replays_offline(tmp_path):
    def get_weather(city: str) -> str:
        """Get the weather."""
        return f"sun in {city}"

    path = tmp_path / "tools.jsonl"
    replies = [{"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 4}},
               {"text": "Sunny", "usage": {"prompt_tokens": 20, "completion_tokens": 1}}]
    live_context = Context()
    live = run_turn(live_context, "weather?", model=ReplayModel(path, model=ScriptedModel(replies)), tools=[get_weather])
    spec = {"name": "get_weather", "description": "Get the weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                           "additionalProperties": False}}
    call = {"type": 3, "content": [{"type": "toolCall", "callId": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]}
    result = {"type": 4, "callId": "c1", "name": "get_weather", "content": [{"type": "text", "text": "sun in Paris"}]}
    entries = lines_of(path)
    assert [entry["request"] for entry in entries] == [
        {"model": SCRIPTED, "messages": [user("weather?")], "options": {"tools": [spec]}},
        {"model": SCRIPTED, "messages": [user("weather?"), call, result], "options": {"tools": [spec]}},
    ]
    assert [entry["model"] for entry in entries] == [SCRIPTED, SCRIPTED]
    assert [entry["key"] for entry in entries] == [canonical_key(entry["request"]) for entry in entries]

    offline_context = Context()
    offline = run_turn(offline_context, "weather?", model=ReplayModel(path, mode="replay"), tools=[get_weather])
    assert offline.ok and offline_context.messages() == live_context.messages()
    assert offline.usage == live.usage == {"inputTokens": 30, "outputTokens": 5, "totalTokens": 35, "source": "provider"}
    assert offline.tool_results == [result]


# -- keys -------------------------------------------------------------------------------------------


def test_request_of_leaves_records_out_and_defaults_options():
    messages = [{"type": "note", "text": "a record"}, user("hi")]
    assert request_of(messages, None) == {"model": None, "messages": [user("hi")], "options": {}}
    assert request_of(messages, {"temperature": 0}) == \
        {"model": None, "messages": [user("hi")], "options": {"temperature": 0}}
    assert request_of(messages, None, SCRIPTED) == {"model": SCRIPTED, "messages": [user("hi")], "options": {}}


def test_request_key_is_the_documented_hash_and_ignores_key_order():
    request = request_of([user("héllo")], {"temperature": 0.5})
    key = request_key(request)
    assert key == canonical_key(request) and len(key) == 16 and int(key, 16) >= 0
    reordered = {"options": {"temperature": 0.5},
                 "messages": [{"content": [{"text": "héllo", "type": "text"}], "type": 2}], "model": None}
    assert request_key(reordered) == key
    assert request_key(request_of([user("héllo")], {"temperature": 0.5})) == key  # equal requests, equal keys
    assert request_key(request_of([{"type": "meta"}, user("héllo")], {"temperature": 0.5})) == key


def test_request_key_differs_when_messages_or_options_differ():
    base = request_key(request_of([user("hi")], None))
    assert request_key(request_of([user("hi")], {})) == base
    assert request_key(request_of([user("hi!")], None)) != base
    assert request_key(request_of([user("hi"), assistant("x")], None)) != base
    assert request_key(request_of([user("hi")], {"temperature": 0})) != base
    assert request_key(request_of([user("hi")], {"temperature": 0})) != request_key(request_of([user("hi")], {"temperature": 1}))


def test_request_key_differs_when_the_model_differs():
    base = request_key(request_of([user("hi")], None, {"model": "alpha"}))
    assert base == canonical_key({"model": {"model": "alpha"}, "messages": [user("hi")], "options": {}})
    assert request_key(request_of([user("hi")], None, {"model": "beta"})) != base
    assert request_key(request_of([user("hi")], None)) != base
    sdk = {"model": "openai:gpt-4.1-mini", "options": {"temperature": 0}}
    assert request_key(request_of([user("hi")], None, sdk)) != \
        request_key(request_of([user("hi")], None, {**sdk, "options": {"temperature": 1}}))


def test_tools_given_to_run_turn_are_part_of_the_key(tmp_path):
    def get_weather(city: str) -> str:
        return "sun"

    def get_time(zone: str) -> str:
        return "noon"

    path = tmp_path / "rec.jsonl"
    replay = ReplayModel(path, model=ScriptedModel(["ok"]))
    for tools in ([get_weather], [get_time], None, [get_weather]):
        run_turn(Context(), "hi", model=replay, tools=tools)
    entries = lines_of(path)
    assert len(entries) == 3  # the fourth turn repeats the first request: replayed
    keys = [entry["key"] for entry in entries]
    assert len(set(keys)) == 3
    assert [[tool["name"] for tool in entry["request"]["options"].get("tools", [])] for entry in entries] == \
        [["get_weather"], ["get_time"], []]
    assert entries[2]["request"]["options"] == {}
    assert replay.recorded == 3 and replay.replayed == 1


# -- the model is part of the key ------------------------------------------------------------------------


def scripted_events(text):
    """What ScriptedModel([text], model=...) streams after its start event, for a text of at most
    chunk_size characters (one delta)."""
    return [{"type": "text_start", "contentIndex": 0},
            {"type": "text_delta", "contentIndex": 0, "delta": text},
            {"type": "text_end", "contentIndex": 0, "text": text},
            {"type": "done"}]


def test_two_models_answering_the_same_messages_record_two_keys_and_each_replays_its_own(tmp_path):
    path = tmp_path / "rec.jsonl"
    alpha = ScriptedModel(["from alpha"], model="alpha", chunk_size=64)
    beta = ScriptedModel(["from beta"], model="beta", chunk_size=64)
    assert run_turn(Context(), "hi", model=ReplayModel(path, model=alpha)).response["content"] == "from alpha"
    assert run_turn(Context(), "hi", model=ReplayModel(path, model=beta)).response["content"] == "from beta"
    assert len(alpha.calls) == 1 and len(beta.calls) == 1  # beta was called: alpha's recording is not its answer
    alpha_request = {"model": {"model": "alpha"}, "messages": [user("hi")], "options": {}}
    beta_request = {"model": {"model": "beta"}, "messages": [user("hi")], "options": {}}
    assert canonical_key(alpha_request) != canonical_key(beta_request)
    assert lines_of(path) == [
        {"key": canonical_key(alpha_request), "model": {"model": "alpha"}, "request": alpha_request,
         "events": [{"type": "start", "model": "alpha"}, *scripted_events("from alpha")]},
        {"key": canonical_key(beta_request), "model": {"model": "beta"}, "request": beta_request,
         "events": [{"type": "start", "model": "beta"}, *scripted_events("from beta")]},
    ]
    recorded = path.read_bytes()

    for name in ("alpha", "beta"):
        exploding = Exploding(name)
        replay = ReplayModel(path, model=exploding, mode="replay")
        context = Context()
        assert run_turn(context, "hi", model=replay).response["content"] == f"from {name}"
        assert context.messages() == [user("hi"), assistant(f"from {name}")]
        assert exploding.calls == 0 and replay.replayed == 1
    # in auto mode too, each model's own recording answers it and nothing is called again
    again = ScriptedModel(["never"], model="beta")
    assert run_turn(Context(), "hi", model=ReplayModel(path, model=again)).response["content"] == "from beta"
    assert again.calls == [] and path.read_bytes() == recorded


def test_a_model_with_a_replay_identity_is_keyed_by_it(tmp_path):
    class Connector:
        """Stands in for an SDK connector: a spec and constructor options, streaming scripted events."""

        model = "claude-sonnet-4-5"

        def __init__(self, temperature, text):
            self.temperature = temperature
            self.inner = ScriptedModel([text], model=self.model)

        def replay_identity(self):
            return {"model": "anthropic:claude-sonnet-4-5", "options": {"temperature": self.temperature}}

        def stream(self, messages, *, options=None):
            return self.inner.stream(messages, options=options)

    path = tmp_path / "rec.jsonl"
    assert run_turn(Context(), "hi", model=ReplayModel(path, model=Connector(0, "cold"))).response["content"] == "cold"
    assert run_turn(Context(), "hi", model=ReplayModel(path, model=Connector(1, "warm"))).response["content"] == "warm"
    identities = [{"model": "anthropic:claude-sonnet-4-5", "options": {"temperature": t}} for t in (0, 1)]
    requests = [{"model": identity, "messages": [user("hi")], "options": {}} for identity in identities]
    entries = lines_of(path)
    assert [entry["model"] for entry in entries] == identities
    assert [entry["request"] for entry in entries] == requests
    assert [entry["key"] for entry in entries] == [canonical_key(request) for request in requests]
    assert len({entry["key"] for entry in entries}) == 2
    # the same temperature again replays (nothing called, nothing written)
    third = Connector(1, "never")
    assert run_turn(Context(), "hi", model=ReplayModel(path, model=third)).response["content"] == "warm"
    assert third.inner.calls == [] and len(lines_of(path)) == 2


def test_a_model_less_replay_model_replays_the_single_recorded_models_reply(tmp_path):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=ScriptedModel(["from alpha"], model="alpha")))
    run_turn(Context(), "bye", model=ReplayModel(path, model=ScriptedModel(["bye from beta"], model="beta")))
    recorded = path.read_bytes()
    offline = ReplayModel(path)
    context = Context()
    assert run_turn(context, "hi", model=offline).response["content"] == "from alpha"
    assert context.messages() == [user("hi"), assistant("from alpha")]
    assert run_turn(Context(), "bye", model=offline).response["content"] == "bye from beta"
    assert offline.replayed == 2 and offline.recorded == 0 and path.read_bytes() == recorded
    with pytest.raises(ModelError) as info:  # messages never recorded, for any model: the usual miss
        offline.stream([user("hello?")])
    key = canonical_key({"model": None, "messages": [user("hello?")], "options": {}})
    assert info.value.code == "REPLAY_MISS"
    assert str(info.value).startswith(f"replay: request {key} is not recorded in rec.jsonl; "
                                      "it differs from the nearest recorded request (")


def test_the_same_messages_recorded_for_two_models_are_ambiguous_without_a_model(tmp_path):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=ScriptedModel(["from beta"], model="beta")))
    run_turn(Context(), "hi", model=ReplayModel(path, model=ScriptedModel(["from alpha"], model="alpha")))
    assert len(lines_of(path)) == 2
    expected = ('replay: this request was recorded for 2 models ({"model":"alpha"}, {"model":"beta"}); '
                "pass the one you mean: ReplayModel(path, model=...)")
    offline = ReplayModel(path)
    with pytest.raises(ModelError) as info:
        offline.stream([user("hi")])
    assert info.value.code == "REPLAY_MISS" and info.value.provider == "replay"
    assert str(info.value) == expected
    context = Context()
    result = run_turn(context, "hi", model=offline)
    assert {k: result.error[k] for k in ("code", "message", "provider")} == \
        {"code": "REPLAY_MISS", "message": expected, "provider": "replay"}
    assert context.messages() == [user("hi")] and offline.replayed == 0
    # naming the model settles it
    for name in ("alpha", "beta"):
        named = ReplayModel(path, model=Exploding(name), mode="replay")
        assert run_turn(Context(), "hi", model=named).response["content"] == f"from {name}"


def test_model_id_of_a_model_less_replay_model_over_an_sdk_recording(tmp_path):
    path = tmp_path / "rec.jsonl"
    identity = {"model": "openai:gpt-4.1-mini", "options": {}}
    request = {"model": identity, "messages": [user("hi")], "options": {}}
    events = [{"type": "start", "model": "gpt-4.1-mini", "provider": "openai"},
              {"type": "text_delta", "contentIndex": 0, "delta": "hello from openai"},
              {"type": "done", "usage": {"prompt_tokens": 1, "completion_tokens": 3}}]
    line = {"key": canonical_key(request), "model": identity, "request": request, "events": events}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    offline = ReplayModel(path)
    assert offline.model is None and offline.model_id == "gpt-4.1-mini"
    assert run_turn(Context(), "hi", model=offline).response["content"] == "hello from openai"
    assert offline.replayed == 1


# -- misses ---------------------------------------------------------------------------------------------


def test_a_miss_without_a_model_is_a_replay_miss_error_with_a_diff(tmp_path):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "What is the capital of France?", model=ReplayModel(path, model=hello_model()))
    recorded_key = lines_of(path)[0]["key"]

    context = Context()
    result = run_turn(context, "What is the capital of Spain?", model=ReplayModel(path))
    wanted_key = canonical_key({"model": None, "messages": [user("What is the capital of Spain?")], "options": {}})
    assert result.error["code"] == "REPLAY_MISS"
    assert {k: result.error[k] for k in ("code", "name", "hook", "provider")} == \
        {"code": "REPLAY_MISS", "name": "ModelError", "hook": None, "provider": "replay"}
    message = result.error["message"]
    assert message.startswith(f"replay: request {wanted_key} is not recorded in rec.jsonl; "
                              f"it differs from the nearest recorded request ({recorded_key}):\n")
    lines = message.splitlines()
    assert "--- recorded" in lines and "+++ this request" in lines
    assert '-          "text": "What is the capital of France?",' in lines
    assert '+          "text": "What is the capital of Spain?",' in lines
    assert lines[-1] == "(record it: ReplayModel(path, model=<a real model>) with the network and a key)"
    assert context.messages() == [user("What is the capital of Spain?")]  # nothing committed
    assert result.output[-1]["type"] == "error"


def test_a_miss_with_no_file_says_nothing_is_recorded(tmp_path):
    path = tmp_path / "none.jsonl"
    replay = ReplayModel(path)
    key = canonical_key({"model": None, "messages": [user("hi")], "options": {}})
    with pytest.raises(ModelError) as info:
        replay.stream([user("hi")])
    assert info.value.code == "REPLAY_MISS" and info.value.provider == "replay"
    assert str(info.value) == (f"replay: request {key} is not recorded in {path} (no such file yet); nothing is recorded yet\n"
                               "(record it: ReplayModel(path, model=<a real model>) with the network and a key)")
    assert not path.exists()


def test_mode_replay_never_calls_the_wrapped_model(tmp_path):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=hello_model()))
    exploding = Exploding("scripted")  # the identity the recording was made with
    replay = ReplayModel(path, model=exploding, mode="replay")
    hit = run_turn(Context(), "hi", model=replay)
    assert hit.ok and hit.response["content"] == "Hello there"
    miss = run_turn(Context(), "something else", model=replay)
    assert miss.error["code"] == "REPLAY_MISS"
    # with a model, its identity is part of the key: the same messages for another model miss too
    other = Exploding("other")
    assert run_turn(Context(), "hi", model=ReplayModel(path, model=other, mode="replay")).error["code"] == "REPLAY_MISS"
    assert exploding.calls == 0 and other.calls == 0 and len(lines_of(path)) == 1


def test_env_replay_mode_never_calls_the_wrapped_model(tmp_path, monkeypatch):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=hello_model()))
    monkeypatch.setenv("AGENTCTX_REPLAY", "replay")
    exploding = Exploding("scripted")
    replay = ReplayModel(path, model=exploding)
    assert replay.mode == "replay"
    assert run_turn(Context(), "hi", model=replay).ok
    assert run_turn(Context(), "new question", model=replay).error["code"] == "REPLAY_MISS"
    assert exploding.calls == 0
    # an explicit mode wins over the environment
    assert ReplayModel(path, model=exploding, mode="auto").mode == "auto"


def test_env_mode_is_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTCTX_REPLAY", "sometimes")
    with pytest.raises(ValueError) as info:
        ReplayModel(tmp_path / "x.jsonl")
    assert str(info.value) == ("ReplayModel(mode=…) / $AGENTCTX_REPLAY: expected one of auto, replay, record, "
                               "got 'sometimes'")


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match=r"^ReplayModel\(mode='record'\) needs the model"):
        ReplayModel(tmp_path / "x.jsonl", mode="record")
    with pytest.raises(TypeError, match=r"^ReplayModel\(model=…\): expected a model with stream"):
        ReplayModel(tmp_path / "x.jsonl", model=object())
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(ValueError, match=r"is a directory, not a regular file"):
        ReplayModel(tmp_path / "dir.jsonl")


def test_mode_record_always_calls_and_appends(tmp_path):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=ScriptedModel(["first"])))
    inner = ScriptedModel(["second"])
    context = Context()
    run_turn(context, "hi", model=ReplayModel(path, model=inner, mode="record"))
    assert len(inner.calls) == 1 and context.at(-1) == assistant("second")
    entries = lines_of(path)
    assert len(entries) == 2 and entries[0]["key"] == entries[1]["key"]


# -- errors and retries ---------------------------------------------------------------------------------


BUSY = {"error": {"message": "busy", "code": "RATE_LIMIT"}}


def retry_hooks(seen):
    return hooks_from_python(error=lambda ctx, m, e: seen.append(e["code"]) or {"retry": True})


def test_an_error_and_its_retry_are_recorded_under_one_key_and_replay_in_order(tmp_path):
    path = tmp_path / "rec.jsonl"
    seen_live = []
    inner = ScriptedModel([BUSY, "ok"])
    live_context = Context()
    live = run_turn(live_context, "hi", model=ReplayModel(path, model=inner), hooks=retry_hooks(seen_live))
    assert live.ok and live.retries == 1 and seen_live == ["RATE_LIMIT"] and len(inner.calls) == 2
    request = {"model": SCRIPTED, "messages": [user("hi")], "options": {}}
    key = canonical_key(request)
    assert lines_of(path) == [
        {"key": key, "model": SCRIPTED, "request": request,
         "events": [{"type": "start", "model": "scripted"},
                    {"type": "error", "error": {"message": "busy", "code": "RATE_LIMIT"}}]},
        {"key": key, "model": SCRIPTED, "request": request,
         "events": [{"type": "start", "model": "scripted"},
                    {"type": "text_start", "contentIndex": 0},
                    {"type": "text_delta", "contentIndex": 0, "delta": "ok"},
                    {"type": "text_end", "contentIndex": 0, "text": "ok"},
                    {"type": "done"}]},
    ]

    seen_offline = []
    offline_context = Context()
    offline = run_turn(offline_context, "hi", model=ReplayModel(path), hooks=retry_hooks(seen_offline))
    assert offline.ok and offline.retries == 1 and seen_offline == ["RATE_LIMIT"]
    assert offline_context.messages() == live_context.messages() == [user("hi"), assistant("ok")]


def test_an_error_recorded_last_is_sent_again_with_a_model(tmp_path):
    path = tmp_path / "rec.jsonl"
    first = run_turn(Context(), "hi", model=ReplayModel(path, model=ScriptedModel([BUSY])))
    assert first.error["code"] == "RATE_LIMIT" and len(lines_of(path)) == 1
    inner = ScriptedModel(["recovered"])
    again = run_turn(Context(), "hi", model=ReplayModel(path, model=inner), hooks=retry_hooks([]))
    # the recorded failure replays first (its retry path), then the used-up failed request is sent again
    assert again.ok and again.retries == 1 and len(inner.calls) == 1
    assert again.response["content"] == "recovered" and len(lines_of(path)) == 2
    # offline, the last recording repeats once the others are used up
    offline = ReplayModel(path)
    assert run_turn(Context(), "hi", model=offline, hooks=retry_hooks([])).retries == 1
    assert run_turn(Context(), "hi", model=offline).response["content"] == "recovered"


def test_an_offline_failure_with_nothing_after_it_keeps_failing(tmp_path):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=ScriptedModel([BUSY])))
    result = run_turn(Context(), "hi", model=ReplayModel(path), hooks=retry_hooks([]), max_retries=2)
    assert result.retries == 2 and result.error["code"] == "RATE_LIMIT"
    assert result.error["message"] == "busy (gave up after 2 retries)"


def test_rerunning_on_the_same_object_replays_and_rewind_starts_again(tmp_path):
    path = tmp_path / "rec.jsonl"
    inner = ScriptedModel([BUSY, "ok"])
    replay = ReplayModel(path, model=inner)
    assert run_turn(Context(), "hi", model=replay, hooks=retry_hooks([])).retries == 1
    assert len(lines_of(path)) == 2 and len(inner.calls) == 2

    again = run_turn(Context(), "hi", model=replay, hooks=retry_hooks([]))  # the last recording repeats
    assert again.ok and again.retries == 0 and again.response["content"] == "ok"
    assert len(lines_of(path)) == 2 and len(inner.calls) == 2 and replay.recorded == 2

    replay.rewind()
    seen = []
    rewound = run_turn(Context(), "hi", model=replay, hooks=retry_hooks(seen))  # from the first recording again
    assert rewound.ok and rewound.retries == 1 and seen == ["RATE_LIMIT"]
    assert len(lines_of(path)) == 2 and len(inner.calls) == 2


def test_a_model_error_raised_by_the_stream_is_recorded_as_an_error_event(tmp_path):
    path = tmp_path / "rec.jsonl"
    inner = ScriptedModel([{"text": "par", "error": ModelError("overloaded", code="OVERLOADED", status=529)}])
    result = run_turn(Context(), "hi", model=ReplayModel(path, model=inner))
    assert result.error["code"] == "OVERLOADED"
    events = lines_of(path)[0]["events"]
    assert events[-1] == {"type": "error", "error": {"message": "overloaded", "code": "OVERLOADED", "status": 529}}
    offline = run_turn(Context(), "hi", model=ReplayModel(path))
    assert {k: offline.error[k] for k in ("message", "code", "status")} == \
        {"message": "overloaded", "code": "OVERLOADED", "status": 529}


# -- failures of the environment are not recorded ------------------------------------------------------


NO_ROUTE = {"error": {"message": "no route", "code": "CONNECTION"}}


def test_a_connection_error_is_not_recorded(tmp_path):
    path = tmp_path / "rec.jsonl"
    replay = ReplayModel(path, model=ScriptedModel([NO_ROUTE]))
    result = run_turn(Context(), "hi", model=replay)
    assert result.error["code"] == "CONNECTION" and result.error["message"] == "no route"
    assert not path.exists() and replay.recorded == 0 and replay.recordings == {}

    # with a file already there: unchanged
    run_turn(Context(), "hi", model=ReplayModel(path, model=hello_model()))
    recorded = path.read_bytes()
    replay = ReplayModel(path, model=ScriptedModel([NO_ROUTE]))
    assert run_turn(Context(), "bye", model=replay).error["code"] == "CONNECTION"
    assert path.read_bytes() == recorded and replay.recorded == 0
    # so once the network is back, the request is sent again, not replayed as a failure
    back = ScriptedModel(["Bye"])
    assert run_turn(Context(), "bye", model=ReplayModel(path, model=back)).response["content"] == "Bye"
    assert len(back.calls) == 1 and len(lines_of(path)) == 2


def test_a_connection_error_then_its_retry_records_only_the_retry(tmp_path):
    path = tmp_path / "rec.jsonl"
    seen = []
    inner = ScriptedModel([NO_ROUTE, "ok"])
    result = run_turn(Context(), "hi", model=ReplayModel(path, model=inner), hooks=retry_hooks(seen))
    assert result.ok and result.retries == 1 and seen == ["CONNECTION"] and len(inner.calls) == 2
    request = {"model": SCRIPTED, "messages": [user("hi")], "options": {}}
    assert lines_of(path) == [{"key": canonical_key(request), "model": SCRIPTED, "request": request,
                               "events": [{"type": "start", "model": "scripted"}, *scripted_events("ok")]}]
    offline = run_turn(Context(), "hi", model=ReplayModel(path), hooks=retry_hooks([]))
    assert offline.ok and offline.retries == 0 and offline.response["content"] == "ok"


def test_a_raised_timeout_is_not_recorded(tmp_path):
    path = tmp_path / "rec.jsonl"
    inner = ScriptedModel([{"error": ModelError("timed out", code="TIMEOUT")}])
    replay = ReplayModel(path, model=inner)
    assert run_turn(Context(), "hi", model=replay).error["code"] == "TIMEOUT"
    assert not path.exists() and replay.recorded == 0


def test_a_rate_limit_error_is_recorded(tmp_path):
    path = tmp_path / "rec.jsonl"
    replay = ReplayModel(path, model=ScriptedModel([BUSY]))
    assert run_turn(Context(), "hi", model=replay).error["code"] == "RATE_LIMIT"
    request = {"model": SCRIPTED, "messages": [user("hi")], "options": {}}
    assert lines_of(path) == [{"key": canonical_key(request), "model": SCRIPTED, "request": request,
                               "events": [{"type": "start", "model": "scripted"},
                                          {"type": "error", "error": {"message": "busy", "code": "RATE_LIMIT"}}]}]
    assert replay.recorded == 1


# -- the file ---------------------------------------------------------------------------------------------


def test_garbage_and_cut_lines_warn_and_the_rest_loads(tmp_path):
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=hello_model()))
    run_turn(Context(), "bye", model=ReplayModel(path, model=ScriptedModel(["Bye"])))
    good_hi, good_bye = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([good_hi, b"not json at all", b'{"just": "an object"}', b"", good_bye[: len(good_bye) // 2]]) + b"\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        replay = ReplayModel(path)
    texts = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(texts) == 3
    assert texts[0].startswith("ReplayModel: rec.jsonl line 2 is not JSON (") and texts[0].endswith("); skipped")
    assert texts[1] == "ReplayModel: rec.jsonl line 3 is not a recording ({key, request, events}); skipped"
    assert texts[2].startswith("ReplayModel: rec.jsonl line 5 is not JSON (")
    assert sum(len(entries) for entries in replay.recordings.values()) == 1
    assert run_turn(Context(), "hi", model=replay).response["content"] == "Hello there"
    assert run_turn(Context(), "bye", model=replay).error["code"] == "REPLAY_MISS"


def test_recording_into_a_new_directory(tmp_path):
    path = tmp_path / "deep" / "er" / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=hello_model()))
    assert len(lines_of(path)) == 1


# -- interrupted calls are not recorded -------------------------------------------------------------------


class CancelledMidStream:
    """An async model whose stream is cancelled after its first events."""

    model = "cancelling"

    def __init__(self):
        self.closed = False

    def stream(self, messages, *, options=None):
        return self._events()

    async def _events(self):
        try:
            yield {"type": "start", "model": "cancelling"}
            yield {"type": "text_start", "contentIndex": 0}
            yield {"type": "text_delta", "contentIndex": 0, "delta": "Hal"}
            raise asyncio.CancelledError("stopped")
        finally:
            self.closed = True


def test_a_stream_cancelled_mid_way_is_not_recorded(tmp_path):
    path = tmp_path / "rec.jsonl"
    replay = ReplayModel(path, model=CancelledMidStream())
    context = Context()
    with pytest.raises(asyncio.CancelledError):
        run_turn(context, "hi", model=replay)
    assert not path.exists() and replay.recorded == 0 and replay.recordings == {}
    assert context.messages() == [user("hi")]


def test_closing_a_recording_early_writes_nothing_and_closes_the_wrapped_stream(tmp_path):
    path = tmp_path / "rec.jsonl"
    inner = ScriptedModel(["Hello there, a longer answer"], chunk_size=4, delay=0.01)
    replay = ReplayModel(path, model=inner)

    async def consume_two_then_cancel():
        stream = replay.stream([user("hi")])
        got = []

        async def reader():
            async for event in stream:
                got.append(event)
                if len(got) == 3:
                    await asyncio.sleep(10)  # cancelled here, mid-stream

        task = asyncio.create_task(reader())
        while len(got) < 3:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await stream.aclose()
        return got

    got = asyncio.run(consume_two_then_cancel())
    assert [event["type"] for event in got] == ["start", "text_start", "text_delta"]
    assert not path.exists() and replay.recorded == 0


def test_a_wrapped_stream_closed_by_the_consumer_is_closed_too(tmp_path):
    inner = CancelledMidStream()

    async def main():
        stream = ReplayModel(tmp_path / "rec.jsonl", model=inner).stream([user("hi")])
        first = await stream.__anext__()
        await stream.aclose()
        return first, inner.closed  # closed at once, not only when the loop shuts down

    assert asyncio.run(main()) == ({"type": "start", "model": "cancelling"}, True)
    assert not (tmp_path / "rec.jsonl").exists()


def test_a_sync_wrapped_stream_records_too(tmp_path):
    class SyncModel:
        model = "sync"

        def stream(self, messages, *, options=None):
            return iter([{"type": "start"}, {"type": "text_delta", "contentIndex": 0, "delta": "sync ok"},
                         {"type": "done", "usage": {"prompt_tokens": 1, "completion_tokens": 2}}])

    path = tmp_path / "rec.jsonl"
    result = run_turn(Context(), "hi", model=ReplayModel(path, model=SyncModel()))
    assert result.response["content"] == "sync ok"
    entry = lines_of(path)[0]
    request = {"model": {"model": "sync"}, "messages": [user("hi")], "options": {}}
    assert entry["model"] == {"model": "sync"} and entry["request"] == request and entry["key"] == canonical_key(request)
    assert [event["type"] for event in entry["events"]] == ["start", "text_delta", "done"]
    assert orjson.loads(path.read_bytes().splitlines()[0]) == entry


def test_recording_after_a_cut_last_line_starts_a_new_line(tmp_path):
    # a write cut short (the kernel killed mid-line) leaves no newline at the end of the file;
    # the next recording must not be glued onto that partial line and lost with it
    path = tmp_path / "rec.jsonl"
    run_turn(Context(), "hi", model=ReplayModel(path, model=hello_model()))
    good = path.read_bytes()
    path.write_bytes(good + good[: len(good) // 2])  # no trailing newline
    with pytest.warns(RuntimeWarning, match=r"rec\.jsonl line 2 is not JSON"):
        replay = ReplayModel(path, model=ScriptedModel(["Bye"]))
    run_turn(Context(), "bye", model=replay)
    with pytest.warns(RuntimeWarning, match=r"rec\.jsonl line 2 is not JSON"):
        reloaded = ReplayModel(path)
    assert run_turn(Context(), "bye", model=reloaded).response["content"] == "Bye"
    assert run_turn(Context(), "hi", model=reloaded).response["content"] == "Hello there"
