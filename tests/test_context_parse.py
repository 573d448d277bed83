import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_widgets.context import parse_context


def test_a_json_array_is_returned_unchanged():
    assert parse_context('[1, {"type": "x"}]') == [1, {"type": "x"}]
    assert parse_context("[]") == []


def test_lines_of_messages_text_and_arrays():
    text = "\n".join([
        '{"type": 1, "content": [{"type": "text", "text": "sys"}]}',
        "hello there\r",
        "   ",
        '[{"type": 2, "content": []}, 7]',
        '{"not": "a message"}',
        "[1, 2]",
    ])
    assert parse_context(text) == [
        {"type": 1, "content": [{"type": "text", "text": "sys"}]},
        {"type": 2, "content": [{"type": "text", "text": "hello there"}]},
        {"type": 2, "content": []},
        {"type": 2, "content": [{"type": "text", "text": '{"not": "a message"}'}]},
        {"type": 2, "content": [{"type": "text", "text": "[1, 2]"}]},
    ]


def test_empty_input_and_single_object():
    assert parse_context("") == []
    assert parse_context('{"type": 2, "content": []}') == [{"type": 2, "content": []}]


def test_non_string_raises():
    with pytest.raises(TypeError):
        parse_context(None)


def test_deep_nesting_does_not_raise():
    assert parse_context("[" * 5000) == [{"type": 2, "content": [{"type": "text", "text": "[" * 5000}]}]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_string(text):
    result = parse_context(text)
    assert isinstance(result, list)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="abc xyz\t", min_size=1), max_size=6))
def test_every_plain_line_becomes_one_user_text_message(lines):
    lines = [line for line in lines if line.strip()]
    result = parse_context("\n".join(lines))
    assert result == [{"type": 2, "content": [{"type": "text", "text": line}]} for line in lines]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=()), max_size=40))
def test_never_raises_even_with_lone_surrogates(text):
    assert isinstance(parse_context(text + "\n\ud800[{\n"), list)
