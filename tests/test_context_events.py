import pytest

from agentctx_widgets.context import (EventType, callback_name, dispatch, is_response_event, normalize_callbacks,
                                      validate_response_event)

ALL_CALLBACKS = {"onStart", "onTextStart", "onTextDelta", "onTextEnd", "onThinkingStart", "onThinkingDelta",
                 "onThinkingEnd", "onToolCallStart", "onToolCallDelta", "onToolCallEnd", "onDone", "onError"}


def test_event_vocabulary():
    assert len(EventType) == 12
    assert EventType.TOOL_CALL_DELTA == "tool_call_delta"


def test_callback_name():
    assert callback_name("text_delta") == "onTextDelta"
    assert callback_name("tool_call_start") == "onToolCallStart"
    assert callback_name("done") == "onDone"
    assert callback_name(EventType.THINKING_END) == "onThinkingEnd"
    with pytest.raises(TypeError):
        callback_name(3)


@pytest.mark.parametrize("event", [
    {"type": "start"},
    {"type": "text_start", "contentIndex": 0},
    {"type": "text_delta", "contentIndex": 2, "delta": ""},
    {"type": "thinking_end", "contentIndex": 1, "text": "t"},
    {"type": "tool_call_start", "contentIndex": 0, "callId": "c1", "name": "f"},
    {"type": "done", "usage": {"inputTokens": 1}},
    {"type": "error", "error": "boom"},
    {"type": "error", "error": {"message": "slow down", "retry": 3}},
])
def test_well_formed_events(event):
    assert is_response_event(event)
    assert validate_response_event(event) is event


@pytest.mark.parametrize("event", [
    None, "start", {"type": "nope"}, {"type": "text_delta", "delta": "x"},
    {"type": "text_delta", "contentIndex": -1, "delta": "x"},
    {"type": "text_delta", "contentIndex": 1.0, "delta": "x"},
    {"type": "text_delta", "contentIndex": True, "delta": "x"},
    {"type": "text_delta", "contentIndex": 0},
    {"type": "tool_call_start", "contentIndex": 0, "name": "f"},
    {"type": "error"}, {"type": "error", "error": {"retry": 1}},
])
def test_malformed_events(event):
    assert not is_response_event(event)
    with pytest.raises(TypeError, match="response event"):
        validate_response_event(event)


def test_normalize_defaults_to_on_data_and_keeps_consumer_callbacks():
    seen, mine = [], []
    cbs = normalize_callbacks({"onTextDelta": mine.append}, {"onData": seen.append})
    assert set(cbs) == ALL_CALLBACKS
    delta = {"type": "text_delta", "contentIndex": 0, "delta": "x"}
    cbs["onTextDelta"](delta)
    cbs["onStart"]({"type": "start"})
    assert mine == [delta] and seen == [{"type": "start"}]


def test_none_and_false_are_noops_not_defaults():
    seen = []
    cbs = normalize_callbacks({"onStart": None, "onDone": False}, {"onData": seen.append})
    cbs["onStart"]({"type": "start"})
    cbs["onDone"]({"type": "done"})
    assert seen == []


def test_terminal_runs_after_consumer_terminal_callbacks():
    order = []
    cbs = normalize_callbacks({"onDone": lambda e: order.append("mine")}, {"onTerminal": lambda e: order.append("term")})
    cbs["onDone"]({"type": "done"})
    cbs["onError"]({"type": "error", "error": "x"})
    cbs["onTextEnd"]({"type": "text_end", "contentIndex": 0})
    assert order == ["mine", "term", "term"]
    quiet = normalize_callbacks({}, {"onTerminal": None})
    quiet["onDone"]({"type": "done"})  # no terminal, no error


def test_omitted_on_error_reports_to_on_log():
    lines, data = [], []
    cbs = normalize_callbacks({}, {"onLog": lines.append, "onData": data.append})
    cbs["onError"]({"type": "error", "error": {"message": "quota"}})
    assert lines == ["error: quota"] and len(data) == 1


def test_normalize_rejects_non_functions():
    with pytest.raises(TypeError, match=r"callbacks\.onStart"):
        normalize_callbacks({"onStart": "print"})
    with pytest.raises(TypeError):
        normalize_callbacks([])


def test_binding_errors_propagate():
    def boom(event):
        raise RuntimeError("binding failed")
    cbs = normalize_callbacks({}, {"onData": boom})
    with pytest.raises(RuntimeError, match="binding failed"):
        cbs["onStart"]({"type": "start"})


def test_dispatch_validates_then_calls():
    got = []
    cbs = normalize_callbacks({"onTextDelta": got.append})
    dispatch(cbs, {"type": "text_delta", "contentIndex": 0, "delta": "a"})
    assert got == [{"type": "text_delta", "contentIndex": 0, "delta": "a"}]
    with pytest.raises(TypeError):
        dispatch(cbs, {"type": "text_delta", "delta": "a"})
    assert len(got) == 1
    with pytest.raises(TypeError, match="onStart"):
        dispatch({}, {"type": "start"})


def test_dispatch_propagates_callback_errors():
    def boom(event):
        raise ValueError("cb")
    with pytest.raises(ValueError, match="cb"):
        dispatch(normalize_callbacks({"onDone": boom}), {"type": "done"})
