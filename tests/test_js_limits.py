"""``Limits``: the one value the JavaScript hook limits travel in (hooks/js_limits.py), and its checks."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import typing

import pytest

from agentctx_widgets.hooks import HookContext, HookTimeoutError, hooks_from_js
from agentctx_widgets.hooks.js_hooks import MAX_CONSOLE_BYTES, MAX_OUTPUT_BYTES, MAX_OUTPUT_MESSAGES, MAX_SEND_BYTES
from agentctx_widgets.hooks.js_limits import MB, LimitOptions, Limits
from agentctx_widgets.output import Output


def test_the_defaults_are_the_documented_ones() -> None:
    assert dataclasses.asdict(Limits()) == {
        "time_limit": 5.0, "wall_limit": 60.0, "memory_limit": 64 * MB, "stack_limit": 1 * MB,
        "max_send_bytes": MAX_SEND_BYTES, "max_output_messages": MAX_OUTPUT_MESSAGES,
        "max_output_bytes": MAX_OUTPUT_BYTES, "max_console_bytes": MAX_CONSOLE_BYTES,
    }
    assert (MAX_SEND_BYTES, MAX_OUTPUT_MESSAGES, MAX_OUTPUT_BYTES, MAX_CONSOLE_BYTES) == (
        8 * MB, 100_000, 64 * MB, 4 * MB)


def test_the_keyword_options_an_editor_completes_are_the_limits_fields() -> None:
    # hooks_from_js(**Unpack[LimitOptions]): a field added to Limits must be added there too
    fields = {field.name for field in dataclasses.fields(Limits)}
    limits_types = {name: kind for name, kind in typing.get_type_hints(Limits).items() if name in fields}
    assert typing.get_type_hints(LimitOptions) == limits_types and len(limits_types) == 8
    assert inspect.signature(hooks_from_js).parameters["limit_options"].annotation == "Unpack[LimitOptions]"


def test_a_limits_value_is_frozen_and_normalised() -> None:
    limits = Limits(time_limit=1, memory_limit=32.0 * MB)
    assert limits.time_limit == 1.0 and isinstance(limits.time_limit, float)
    assert limits.memory_limit == 32 * MB and isinstance(limits.memory_limit, int)
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.time_limit = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(("options", "error", "text"), [
    ({"time_limit": 0}, ValueError, "hooks_from_js(time_limit=…): expected a finite number of seconds > 0, got 0"),
    ({"wall_limit": -1.0}, ValueError, "hooks_from_js(wall_limit=…): expected a finite number of seconds > 0, got -1.0"),
    ({"wall_limit": float("inf")}, ValueError, "hooks_from_js(wall_limit=…): expected a finite number of seconds > 0"),
    ({"time_limit": "5"}, TypeError, "hooks_from_js(time_limit=…): expected a number of seconds, got str"),
    ({"time_limit": True}, TypeError, "hooks_from_js(time_limit=…): expected a number of seconds, got bool"),
    ({"memory_limit": 0}, ValueError, "hooks_from_js(memory_limit=…): expected an int ≥ 1, got 0"),
    ({"max_output_messages": 1.5}, TypeError, "hooks_from_js(max_output_messages=…): expected an int, got float 1.5"),
    ({"max_console_bytes": None}, TypeError, "hooks_from_js(max_console_bytes=…): expected an int, got NoneType"),
])
def test_a_bad_limit_raises_naming_its_field(options: dict, error: type, text: str) -> None:
    with pytest.raises(error) as raised:
        Limits(**options)
    assert str(raised.value).startswith(text)
    with pytest.raises(error) as raised:  # before any worker starts
        hooks_from_js("function Create(ctx) {}", **options)
    assert str(raised.value).startswith(text)


def test_an_unknown_keyword_raises_naming_it_and_the_limits() -> None:
    with pytest.raises(TypeError) as raised:
        hooks_from_js("function Create(ctx) {}", time_limt=1)
    assert str(raised.value) == (
        "hooks_from_js(): unexpected keyword argument 'time_limt' (the limits are time_limit, wall_limit, "
        "memory_limit, stack_limit, max_send_bytes, max_output_messages, max_output_bytes, max_console_bytes)")
    with pytest.raises(TypeError, match="expected a Limits, got dict"):
        hooks_from_js("function Create(ctx) {}", limits={"time_limit": 1})


def test_keywords_and_a_limits_value_reach_the_hook_set() -> None:
    hooks = hooks_from_js("function Create(ctx) {}", time_limit=0.5, max_send_bytes=1000)
    try:
        assert hooks.limits == Limits(time_limit=0.5, max_send_bytes=1000)
    finally:
        hooks.close()
    base = Limits(time_limit=0.3, wall_limit=20)
    hooks = hooks_from_js("function Create(ctx) {}", limits=base, wall_limit=10)
    try:
        assert hooks.limits == Limits(time_limit=0.3, wall_limit=10)  # a keyword replaces the value's field
    finally:
        hooks.close()


def test_the_time_limit_of_a_limits_value_stops_an_endless_loop() -> None:
    hooks = hooks_from_js("function Create(ctx) {\n  for (;;) {}\n}", limits=Limits(time_limit=0.3))
    try:
        with pytest.raises(HookTimeoutError) as raised:
            asyncio.run(hooks.call("Create", HookContext(output=Output())))
        assert str(raised.value) == "Create (line 2): ran longer than its 0.3 s time limit (an endless loop?)"
    finally:
        hooks.close()


def test_the_caps_texts_name_the_cap_and_its_value() -> None:
    limits = Limits(max_output_messages=1000, max_output_bytes=2048, max_console_bytes=64)
    assert limits.caps_left(10, 48, 4) == {
        "messages": 990, "chars": 2000, "console": 60,
        "messages_text": "sent more than 1,000 output messages in one turn (the max_output_messages cap)",
        "chars_text": "sent more than 2,048 bytes of output messages in one turn (the max_output_bytes cap)",
        "console_text": "wrote more than 64 bytes to the console in one turn (the max_console_bytes cap)",
    }
