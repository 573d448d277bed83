"""hooks_from_python: where hooks come from, and how their failures read."""

from __future__ import annotations

import asyncio
import types

import pytest

from agentctx_widgets.hooks import HookContext, HookLoadError, HookReturnError, HookThrewError, hooks_from_python


def call(hooks, name, *args):
    return asyncio.run(hooks.call(name, HookContext(), *args))


def test_from_a_dict_with_lowercase_names():
    hooks = hooks_from_python({"create": lambda ctx, m: {"messages": m}, "Done": lambda ctx, m, r: None, "other": 1})
    assert hooks.names == {"Create", "Done"}
    assert call(hooks, "Create", [{"role": "user", "content": "x"}]) == {"messages": [{"role": "user", "content": "x"}]}


def test_from_a_module_an_object_and_keywords():
    module = types.ModuleType("m")
    module.Before = lambda ctx, m, r: {"response": r}
    assert hooks_from_python(module).names == {"Before"}

    class Agent:
        def After(self, ctx, messages, response):
            return {"response": {**response, "seen": True}}

    assert call(hooks_from_python(Agent()), "After", [], {"content": ""}) == {"response": {"content": "", "seen": True}}
    assert hooks_from_python(error=lambda ctx, m, e: {"retry": True}).names == {"Error"}


def test_bad_sources_are_load_errors():
    with pytest.raises(HookLoadError, match="Create is int, not a function"):
        hooks_from_python({"Create": 3})
    with pytest.raises(HookLoadError, match="defined twice"):
        hooks_from_python({"Create": lambda c, m: None, "create": lambda c, m: None})
    with pytest.raises(HookLoadError, match="no hooks found"):
        hooks_from_python(object())


def test_a_raising_hook_names_itself_and_its_line():
    def before(ctx, messages, response):
        value = {}
        return value["missing"]  # the line named in the error

    hooks = hooks_from_python(before=before)
    with pytest.raises(HookThrewError, match=r"Before \(line \d+\): KeyError") as caught:
        call(hooks, "Before", [], {})
    assert caught.value.line == before.__code__.co_firstlineno + 2
    assert caught.value.to_dict()["name"] == "KeyError"


def test_a_wrong_return_shape_is_a_return_error():
    hooks = hooks_from_python(done=lambda ctx, m, r: ["not", "a", "dict"])
    with pytest.raises(HookReturnError, match=r"Done \(line \d+\): returned list"):
        call(hooks, "Done", [], {})
    hooks = hooks_from_python(error=lambda ctx, m, e: {"retry": "yes"})
    with pytest.raises(HookReturnError, match="retry = str 'yes'; expected true or false"):
        call(hooks, "Error", [], {})


def test_ctx_without_output_says_so():
    with pytest.raises(RuntimeError, match="ctx.Send: this HookContext has no Output"):
        HookContext().Send("x")
