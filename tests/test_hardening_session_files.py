"""Context.load on garbled session files: it never raises, warns once per bad line naming it, and
everything it keeps is a valid message or a record (what the rest of the package assumes)."""

from __future__ import annotations

import re
import warnings

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_widgets import Context, is_record, validate_message

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking"]), "text": st.text(max_size=10)})
MESSAGE = st.fixed_dictionaries({"type": st.sampled_from([1, 2, 3, 4]), "content": st.lists(BLOCK, max_size=2)})
RECORD = st.fixed_dictionaries({"type": st.sampled_from(["note", "usage", "x"]), "value": JSON})
INDEX = st.integers(-2, 6) | JSON
# What a control line may carry: a good replacement, or something that is not an object at all.
REPLACEMENT = MESSAGE | RECORD | st.fixed_dictionaries({"type": st.just("context.record"), "record": RECORD | JSON}) \
    | st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5) | st.lists(JSON, max_size=2)
CONTROL = st.one_of(
    st.fixed_dictionaries({"type": st.just("context.truncate"), "length": INDEX}),
    st.fixed_dictionaries({"type": st.just("context.remove"), "index": INDEX}),
    st.fixed_dictionaries({"type": st.just("context.replace"), "index": INDEX, "message": REPLACEMENT}),
    st.fixed_dictionaries({"type": st.just("context.record"), "record": RECORD | JSON}),
    st.fixed_dictionaries({"type": st.just("context"), "id": JSON, "name": JSON}),
)
GARBLED_MESSAGE = st.fixed_dictionaries({"type": JSON | st.sampled_from([1, 2, 3]), "content": JSON})
LINE = st.one_of(
    MESSAGE.map(orjson.dumps), RECORD.map(orjson.dumps), CONTROL.map(orjson.dumps),
    GARBLED_MESSAGE.map(orjson.dumps), JSON.map(orjson.dumps),
    st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")),          # not JSON (or, by chance, JSON)
    MESSAGE.map(lambda m: orjson.dumps(m)[: max(1, len(orjson.dumps(m)) // 2)]),  # a save cut short
)
HEADER = st.just(b'{"type":"context","id":"c1","name":"garbled","version":1}') | st.binary(max_size=10).map(
    lambda b: b.replace(b"\n", b""))


def load_with_warnings(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        context = Context.load(path)
    return context, caught


@given(HEADER, st.lists(LINE, max_size=12), st.booleans())
@settings(max_examples=300, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_garbled_session_files_load_with_one_warning_per_bad_line(tmp_path, header, lines, final_newline):
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join([header, *lines]) + (b"\n" if final_newline else b""))
    context, caught = load_with_warnings(path)
    raw = path.read_bytes().split(b"\n")
    named = []
    for warning in caught:
        assert issubclass(warning.category, RuntimeWarning)
        match = re.search(r"line (\d+)", str(warning.message))
        assert match, str(warning.message)
        number = int(match.group(1))
        assert 1 <= number <= len(raw) and raw[number - 1].strip(), (number, str(warning.message))
        named.append(number)
    assert len(named) == len(set(named))  # one warning per bad line
    for index, entry in enumerate(context.messages()):
        if not is_record(entry):
            validate_message(entry, f"context[{index}]")
    again, _ = load_with_warnings(path)
    assert again.messages() == context.messages()  # loading is deterministic


def test_a_file_that_is_not_there_raises_the_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        Context.load(tmp_path / "missing.jsonl")


def test_a_replace_line_with_an_invalid_message_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "session.jsonl"
    lines = [{"type": "context", "id": "c1", "name": "n", "version": 1},
             {"type": 2, "content": [{"type": "text", "text": "hi"}]},
             {"type": "context.replace", "index": 0, "message": {"type": 2, "content": "not a list"}}]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    context, caught = load_with_warnings(path)
    assert context.messages() == [lines[1]]
    assert any("line 3" in str(w.message) for w in caught)
