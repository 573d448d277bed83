"""Properties of the delta engine on arbitrary messages, and agreement with the JavaScript engine.

Hypothesis drives sequences of (often odd) messages from an empty state. The Python engine may only
raise DeltaError, never mutates its inputs, never half-applies, its pure and in-place forms agree, and
one planned change committed to two equal states (what ``Output`` does with its pending and flushed
states) leaves them equal and independent. js/src/delta.js runs the same sequences in QuickJS and must
give the same states and the same diagnostics: code, ``where`` and details, in order.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import orjson
import pytest
import quickjs
from fakes import FakeScheduler
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from agentctx_widgets.output import (
    DeltaError,
    Output,
    OutputMessageError,
    apply_message,
    apply_message_in_place,
    commit_change,
    new_state,
    parse_path,
    plan_message,
)
from agentctx_widgets.output.delta import SHARED_SLOT, js_number, js_string
from agentctx_widgets.output.diagnostics import DIAGNOSTICS, Collector

VECTORS = orjson.loads((Path(__file__).parent / "vectors" / "delta.json").read_bytes())

KEYS = st.sampled_from(["content", "items", "name", "a", "b", "0", "1", "3", "length", "__proto__", "constructor"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-2, 2, allow_nan=False),
                    st.sampled_from([1e21, 1.5e-7, -0.0, 0.1]), st.text(alphabet="ab!ü ", max_size=3))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8)
PATHS = st.sampled_from([None, "", "content", "items", "items.0", "items[1]", "items.0.name", "items[0].name",
                         "a.b", "a.b.c", "0", "[1]", "name", "__proto__.a", "constructor", "items.length",
                         "items.x", "a..b", "m[0][1]", "content.0", "items.3", "a.0"])
PROPS = st.dictionaries(KEYS, JSON, max_size=3)
IDS_SENT = st.sampled_from(["m", "n", "#0", "__proto__", "", SHARED_SLOT])
VALID = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "action", "tool_call", ""]), "props": PROPS},
    optional={
        "id": IDS_SENT,
        "delta": st.booleans(),
        "done": st.sampled_from([True, False, False, False]),
        "delta_path": PATHS,
        "delta_action": st.sampled_from(["append", "replace", "merge", "set", "", "prepend"]),
        "type_change": st.sampled_from([True, False]),
        "group_id": st.just("g"),
        "metadata": st.just({"k": [1]}),
    },
)
ODD_FIELDS = st.sampled_from([
    # not a message: DeltaError("invalid_message")
    ("type", 5), ("type", None), ("props", [1]), ("props", "x"), ("props", {"n": math.nan}), ("id", 3),
    ("delta", "yes"), ("done", 1), ("delta_path", 3), ("delta_action", 3), ("group_id", 3), ("metadata", "x"),
    # a message (the client takes it): diagnostics at most
    ("props", None), ("id", None), ("id", ""), ("delta_path", "items[x]"), ("delta_action", "APPEND"),
    ("delta_action", None), ("type_change", "yes"),
])
ODD = st.tuples(VALID, ODD_FIELDS).map(lambda pair: {**pair[0], pair[1][0]: pair[1][1]})


ITEM_LISTS = st.lists(st.one_of(st.text(alphabet="xy", max_size=2), st.fixed_dictionaries({"name": st.text("n")})),
                      max_size=2)
STREAM_PROPS = st.fixed_dictionaries({"items": st.one_of(ITEM_LISTS, ITEM_LISTS, SCALARS)}, optional={
    "content": st.one_of(st.text(alphabet="ab", max_size=2), st.none(), st.integers(0, 2)),
    "a": st.one_of(st.fixed_dictionaries({}, optional={"b": JSON}), SCALARS),
})


@st.composite
def stream_delta(draw):
    """A delta whose sent props usually hold a value at its path, so it meets the state's own shapes."""
    path = draw(st.sampled_from(["content", "items", "items.0", "items[1]", "items.0.name", "items[1].name",
                                 "a", "a.b", "content.x", "items.5", "items.x", "items[3].name", "a.0"]))
    props: dict = {}
    node = props
    parts = parse_path(path)
    for part in parts[:-1]:
        node = node.setdefault(part.key, {})
    last = parts[-1]
    node[last.key] = draw(JSON) if last.index is None else [draw(JSON) for _ in range(int(last.index) + 1)]
    if draw(st.integers(0, 9)) == 0:
        props = {}  # nothing at the path: missing_value
    message = {"type": draw(st.sampled_from(["text", "text", "text", "thinking"])), "props": props,
               "id": draw(st.sampled_from(["m", "n"])), "delta": True, "delta_path": path}
    action = draw(st.sampled_from([None, "append", "append", "replace", "merge", "set"]))
    if action:
        message["delta_action"] = action
    if draw(st.integers(0, 9)) == 0:
        message["done"] = True
    return message


@st.composite
def messages(draw):
    """Mostly well-formed messages (so deltas meet real states), some odd ones, a few non-dicts."""
    roll = draw(st.sampled_from(["base"] * 3 + ["stream"] * 4 + ["valid"] * 2 + ["odd"] * 2 + ["done"] + ["scalar"]))
    if roll == "scalar":
        return draw(st.sampled_from([None, "Hello", 5, ["x"]]))
    if roll == "base":
        return {"type": "text", "props": draw(STREAM_PROPS), "id": draw(st.sampled_from(["m", "n"]))}
    if roll == "stream":
        return draw(stream_delta())
    if roll == "done":
        return {"type": "text", "id": draw(st.sampled_from(["m", "n"])), "done": True}
    return draw(VALID if roll == "valid" else ODD)


MESSAGES = messages()
BASES = st.builds(lambda msg_id, props: {"type": "text", "props": props, "id": msg_id},
                  st.sampled_from(["m", "n"]), STREAM_PROPS)
SEQUENCES = st.builds(lambda first, rest: [first, *rest], BASES, st.lists(MESSAGES, max_size=8))


OUTCOMES: dict[str, int] = {}


def _notes():
    notes: list = []
    return notes, lambda code, where, **details: notes.append([code, where, details])


def run_python(messages):
    """Per step ``["ok", state, notes]`` or ``["error", code, []]``; checks purity, in-place agreement,
    and that one change committed to two equal states keeps them equal."""
    state, owned, mirror, outcomes = new_state(), new_state(), new_state(), []
    for message in messages:
        old, frozen_state, frozen_message = state, copy.deepcopy(state), copy.deepcopy(message)
        notes, report = _notes()
        try:
            new = apply_message(state, message, report)
        except DeltaError as error:
            assert notes == []  # nothing is reported for what is not a message
            with pytest.raises(DeltaError) as again:
                apply_message_in_place(owned, message)
            assert again.value.code == error.code
            outcomes.append(["error", error.code, []])
            OUTCOMES[error.code] = OUTCOMES.get(error.code, 0) + 1
        else:
            owned_notes, owned_report = _notes()
            change = plan_message(owned, message, owned_report)
            commit_change(owned, change)
            commit_change(mirror, change)  # Output commits each change to its pending and flushed states
            assert owned == new == mirror
            assert owned_notes == notes
            outcomes.append(["ok", new, notes])
            for code in ["ok", *(note[0] for note in notes)]:
                OUTCOMES[code] = OUTCOMES.get(code, 0) + 1
            state = new
        assert old == frozen_state  # the input state, whether the message applied or not
        assert message == frozen_message
        assert owned == state == mirror
    return outcomes


@given(SEQUENCES)
@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_python_engine_only_raises_delta_error_and_never_mutates(messages):
    run_python(messages)


@given(SEQUENCES)
@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_old_states_stay_valid_after_later_applies(messages):
    """Structural sharing is safe: every intermediate state is still what it was when returned."""
    states, snapshots = [new_state()], [new_state()]
    for message in messages:
        try:
            states.append(apply_message(states[-1], message))
        except DeltaError:
            continue
        snapshots.append(copy.deepcopy(states[-1]))
    assert states == snapshots


@given(SEQUENCES)
@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_output_send_raises_only_our_errors_and_changes_nothing_on_error(messages):
    out = Output()
    for message in messages:
        before = out.pending_state
        try:
            out.send(message)
        except (OutputMessageError, DeltaError):
            assert out.pending_state == before
    out.flush()
    assert out.state == out.pending_state


@given(SEQUENCES)
@settings(max_examples=100, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_report_that_raises_stops_the_message_before_anything_is_applied(messages):
    """The strict caller's contract: every diagnostic is reported while planning."""
    state = new_state()
    for message in messages:
        before = copy.deepcopy(state)

        def strict(code, where, **details):
            raise LookupError(code)

        try:
            apply_message_in_place(state, message, strict)
        except LookupError:
            assert state == before
        except DeltaError:
            assert state == before


# ---- agreement with the JavaScript engine --------------------------------------------------------

JS_SOURCE = (Path(__file__).parent.parent / "js" / "src" / "delta.js").read_text()
JS_RUNNER = """
function canon(value) {
  if (Array.isArray(value)) return "[" + value.map(canon).join(",") + "]";
  if (value !== null && typeof value === "object") {
    return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canon(value[k])).join(",") + "}";
  }
  return JSON.stringify(value);
}
function runFrom(stateJson, messagesJson) {
  let state = JSON.parse(stateJson);
  const messages = JSON.parse(messagesJson);
  const outcomes = [];
  for (const message of messages) {
    const before = JSON.stringify(state), sent = JSON.stringify(message);
    const notes = [];
    try {
      const next = applyMessage(state, message, (code, where, details) => notes.push([code, where, details]));
      const owned = JSON.parse(before);
      applyMessageInPlace(owned, message);
      if (canon(owned) !== canon(next)) throw new Error("in-place differs");
      outcomes.push(["ok", next, notes]);
      state = next;
    } catch (error) {
      if (!(error instanceof DeltaError)) throw error;
      if (notes.length > 0) throw new Error("reported before an error");
      outcomes.push(["error", error.code, []]);
    }
    if (JSON.stringify(message) !== sent) throw new Error("message mutated");
    if (outcomes[outcomes.length - 1][0] === "error" && JSON.stringify(state) !== before) {
      throw new Error("state mutated on error");
    }
  }
  return JSON.stringify(outcomes);
}
function runSequence(messagesJson) { return runFrom('{"order": [], "messages": {}}', messagesJson); }
"""


@pytest.fixture(scope="module")
def js_context():
    context = quickjs.Context()
    script = re.sub(r"^export ", "", JS_SOURCE, flags=re.MULTILINE)
    context.eval(script + JS_RUNNER)
    return context


@pytest.fixture(scope="module")
def js_engine(js_context):
    return js_context.get("runSequence")


@pytest.fixture(scope="module")
def js_engine_from(js_context):
    return js_context.get("runFrom")


def _as_json(value):
    """What a value is after a trip through JSON to JavaScript and back (ints past 2**53 become doubles)."""
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


def run_both(js_engine_from, state, messages):
    state, messages = _as_json(state), _as_json(messages)  # the same input for both (NaN becomes null)
    python = _as_json(run_python_from(state, messages))
    javascript = orjson.loads(js_engine_from(orjson.dumps(state).decode(), orjson.dumps(messages).decode()))
    return python, javascript


def run_python_from(state, messages):
    outcomes = []
    for message in messages:
        notes, report = _notes()
        try:
            state = apply_message(state, message, report)
        except DeltaError as error:
            outcomes.append(["error", error.code, []])
        else:
            outcomes.append(["ok", state, notes])
    return outcomes


@given(SEQUENCES)
@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
def test_javascript_engine_agrees(js_engine, messages):
    messages = _as_json(messages)  # the same input for both (NaN becomes null)
    python = _as_json(run_python(messages))
    javascript = orjson.loads(js_engine(orjson.dumps(messages).decode()))
    assert javascript == python


IDS = st.sampled_from(["m", "n", "#0", SHARED_SLOT])
ENTRIES = st.one_of(
    st.builds(lambda msg_id, kind, props, done: {"id": msg_id, "type": kind, "props": props, "done": done},
              IDS, st.sampled_from(["text", "action"]) | SCALARS, STREAM_PROPS | JSON, st.booleans() | SCALARS),
    JSON,
)
STATES = st.one_of(
    st.fixed_dictionaries({"order": st.lists(IDS, max_size=3), "messages": st.dictionaries(IDS, ENTRIES, max_size=3)}),
    JSON,
)


@given(STATES, MESSAGES)
@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
def test_arbitrary_states_only_raise_delta_error_and_agree_with_javascript(js_engine_from, state, message):
    frozen_state, frozen_message = copy.deepcopy(state), copy.deepcopy(message)
    if not (isinstance(state, dict) and isinstance(state.get("order"), list) and isinstance(state.get("messages"), dict)):
        with pytest.raises(DeltaError) as caught:
            apply_message(state, message)
        assert caught.value.code == "invalid_state"
        return
    python, javascript = run_both(js_engine_from, state, [message])
    assert state == frozen_state and message == frozen_message
    assert javascript == python


# ---- the client's own cases, and sequences like them, through both engines ---------------------------

SLOT_IDS = st.sampled_from(["m1", "m2", None, "", SHARED_SLOT])
CUI_PATHS = st.sampled_from(["content", "items", "items.0", "items[0]", "items[1]", "items.3", "items[2]", "items.0.name",
                             "items[0].name", "items[1].name", "a.b", "a.0", "[0]", "a..b", "m[0][1]", "content.0",
                             "content.x", "items.length", "items.x", "items[01]", "títulos[0]", "props.content", ""])
CUI_VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(KEYS, SCALARS, max_size=2),
                       st.just({"toString": "x"}), st.just([None, 1]))


@st.composite
def cui_message(draw):
    """Messages shaped like the harness' cases (tmp notes C-cui.md §3): id-less and "" ids, the slot,
    unknown and empty actions, type_change, done and reopen, odd paths, values of every kind."""
    message: dict = {"type": draw(st.sampled_from(["text", "thinking", "loading", "x", ""]))}
    msg_id = draw(SLOT_IDS)
    if msg_id is not None:
        message["id"] = msg_id
    if draw(st.integers(0, 4)) > 0:
        message["delta"] = True
        path = draw(CUI_PATHS)
        if path:
            message["delta_path"] = path
            head = parse_path(path)[0]
            value = draw(CUI_VALUES)
            message["props"] = {head.key: value if head.index is None else [value, value]}
        else:
            message["props"] = draw(st.dictionaries(KEYS, CUI_VALUES, max_size=3))
        if draw(st.booleans()):
            message["delta_action"] = draw(st.sampled_from(["append", "replace", "merge", "set", "", "prepend"]))
    else:
        message["props"] = draw(st.one_of(st.just({}), st.dictionaries(KEYS, CUI_VALUES, max_size=3)))
    if draw(st.integers(0, 5)) == 0:
        message["done"] = True
    if draw(st.integers(0, 7)) == 0:
        message["type_change"] = draw(st.sampled_from([True, 1, "yes", 0, False]))
    return message


def test_every_vector_agrees_with_javascript(js_engine_from):
    """Each vector's case through QuickJS too: the same state and the same diagnostics, with where and details."""
    for case in VECTORS:
        python, javascript = run_both(js_engine_from, case["state"], [case["message"]])
        assert javascript == python, case["name"]
        kind, value, notes = python[0]
        assert [kind, value] == (["error", case["error"]] if "error" in case else ["ok", _as_json(case["expect"])]), \
            case["name"]
        assert [note[0] for note in notes] == case.get("diagnostics", []), case["name"]


FOLLOW_UPS = [
    {"type": "text", "id": "m1", "delta": True, "delta_path": "content", "props": {"content": " more"}},
    {"type": "text", "props": {"content": "id-less"}},
    {"type": "text", "id": "", "delta": True, "props": {"content": 5}},
    {"type": "text", "id": "m1", "props": {}, "done": True},
    {"type": "thinking", "id": "m1", "delta": True, "delta_path": "items[2]", "delta_action": "set",
     "props": {"items": [0, 0, "x"]}},
    {"type": "x", "id": "m1", "delta": True, "delta_path": "a.b", "delta_action": "merge", "props": {"a": {"b": None}}},
    {"type": "text", "id": "m1", "type_change": True, "delta": True, "props": {"content": "new"}},
]


def test_cui_cases_followed_by_more_messages_agree_with_javascript(js_engine_from):
    """The client's cases (the ``cui:`` vectors) as the start of a sequence that goes on."""
    cases = [case for case in VECTORS if case["name"].startswith("cui:")]
    assert len(cases) >= 100
    for case in cases:
        python, javascript = run_both(js_engine_from, case["state"], [case["message"], *FOLLOW_UPS])
        assert javascript == python, case["name"]


@given(st.lists(cui_message(), min_size=1, max_size=10))
@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
def test_cui_style_sequences_agree_with_javascript(js_engine_from, messages):
    python, javascript = run_both(js_engine_from, new_state(), messages)
    assert javascript == python


# ---- pieces -------------------------------------------------------------------------------------------


def test_path_parts_are_the_clients():
    assert [(p.key, p.index, p.literal) for p in parse_path("items.0.name")] == [
        ("items", None, False), ("0", None, False), ("name", None, False)]
    assert [(p.key, p.index) for p in parse_path("items[01].name")] == [("items", "1"), ("name", None)]
    for literal in ("grid[1][2]", "[0]", "items[x]", "a[0", "títulos[0]", "foo-bar", ""):
        assert [(p.key, p.literal) for p in parse_path(literal)] == [(literal, True)]
    assert [p.key for p in parse_path("a..b")] == ["a", "", "b"]


@pytest.mark.parametrize(("value", "text"), [
    (None, "null"), (True, "true"), (False, "false"), ("x", "x"), (5, "5"), (1.0, "1"), (1e21, "1e+21"),
    (1e20, "100000000000000000000"), (-0.0, "0"), (1.5e-7, "1.5e-7"), (1e-6, "0.000001"), (0.1, "0.1"),
    (123456.789, "123456.789"), (2**53 + 1, "9007199254740992"), (10**21, "1e+21"), (-5e-324, "-5e-324"),
    ([1, [2, [None, "a"]], {"k": 1}, False], "1,2,,a,[object Object],false"), ([None], ""), ({}, "[object Object]"),
])
def test_javascript_tostring_of_json_values(value, text):
    assert js_string(value) == text


def test_number_tostring_agrees_with_javascript(js_context):
    numbers = [0.1 * i for i in range(-50, 50)] + [10.0**e for e in range(-330, 310, 7)] + [1 / 3, 2 / 3, 123e-20, 2**70]
    javascript = orjson.loads(js_context.eval(f"JSON.stringify({json.dumps(numbers)}.map(String))"))
    assert [js_number(n) for n in numbers] == javascript


def test_diagnostics_fill_their_templates():
    """Every detail the engines report names a field of its template, so no message is left half-filled."""
    found = Collector()
    for case in VECTORS:
        try:
            apply_message(copy.deepcopy(case["state"]), copy.deepcopy(case["message"]), found)
        except DeltaError:
            pass
    for item in found.items:
        assert "{" not in item["message"], item
        assert item["where"].startswith("message '"), item


def test_the_generated_messages_reach_every_outcome():
    """Guards the strategies above: they must reach every outcome and every diagnostic of the engine, or
    the properties prove little.

    Up to three fixed seeds of 400 examples each: Hypothesis also draws constants from the modules that
    are loaded, so one seed's examples differ between a run of this file and of the whole suite."""
    OUTCOMES.clear()
    expected = {"ok", "invalid_message"} | {
        "unknown_id", "after_done", "shared_slot", "type_changed", "append_coerced", "append_replaced",
        "missing_value", "merge_ignored", "merge_list_by_index", "list_padded", "path_made_object",
        "path_overwrote", "dropped", "path_literal", "invalid_action", "bare_done_kept", "list_key_ignored"}
    assert expected - {"ok", "invalid_message"} <= set(DIAGNOSTICS)
    for number in range(3):
        @seed(number)
        @given(SEQUENCES)
        @settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
        def collect(messages):
            run_python(messages)

        collect()
        if expected <= set(OUTCOMES):
            break
    assert expected <= set(OUTCOMES), expected - set(OUTCOMES)


# ---- the view's coalescing stream meets the client's rules ----------------------------------------


STREAM_IDS = st.sampled_from(["a", "a", "b", None, "", SHARED_SLOT])


@st.composite
def view_message(draw):
    """Mostly plain string appends (what the view folds), and what must stop the folding: another type,
    done, a message after done, id-less and "" ids for the shared slot, coercions, type_change."""
    kind = draw(st.sampled_from(["append"] * 5 + ["full", "done", "bare_done", "coerce", "type_change", "other_key"]))
    message: dict = {"type": draw(st.sampled_from(["text", "text", "text", "thinking"]))}
    msg_id = draw(STREAM_IDS)
    if msg_id is not None:
        message["id"] = msg_id
    text = draw(st.sampled_from(["", "x", "yz", "é"]))
    if kind == "full":
        message["props"] = {"content": text}
    elif kind == "bare_done":
        message.update(props={}, done=True)
    else:
        message.update(delta=True, delta_path="name" if kind == "other_key" else "content", delta_action="append",
                       props={"name" if kind == "other_key" else "content": 5 if kind == "coerce" else text})
        if kind == "done":
            message["done"] = True
        if kind == "type_change":
            message["type_change"] = True
    return message


@given(st.lists(view_message(), max_size=30), st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.031]), min_size=30,
                                                         max_size=30))
@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_views_folded_appends_end_on_the_engines_state(messages, pauses):
    from agentctx_widgets.widget.stream import StreamProtocol

    timers, sent = FakeScheduler(), []
    proto = StreamProtocol(lambda m: sent.append(orjson.loads(orjson.dumps(m))), lambda state: None,
                           lambda context: {"name": "t", "count": 0, "tokens": 0, "window": None, "model": None},
                           clock=timers.clock, schedule=timers)
    reference = new_state()
    for message, pause in zip(messages, pauses):
        proto.output(copy.deepcopy(message))
        apply_message_in_place(reference, message)
        timers.advance(pause)
    proto.settle()
    assert proto.outputs == reference
    replayed, seq = new_state(), 0  # a front end applying every batch in order
    for item in sent:
        if item["kind"] == "snapshot":
            replayed, seq = item["state"]["outputs"], item["seq"]
            continue
        assert item["seq"] == seq + 1
        seq = item["seq"]
        for op in item["ops"]:
            if op["op"] == "out":
                replayed = apply_message(replayed, op["message"])
    assert replayed == reference
