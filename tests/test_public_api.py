"""The front door: every public name resolves, and nothing else leaks."""

import importlib

import pytest

import agentctx_widgets


# Every name of seed 001 (lib/context/*), in snake_case, written out from the seed by hand.
SEED_001 = {
    "Context", "ContentType", "EventType", "MessageType", "MIME_BY_EXTENSION", "FALLBACK_CONTEXT_WINDOWS",
    "TOKENS_PER_WORD", "assembly_callbacks", "create_assembler", "normalize_callbacks", "binary_content",
    "content_indexer", "text_content", "callback_name", "dispatch", "is_response_event",
    "validate_response_event", "fallback_context_window", "append_message", "assistant_message",
    "error_text", "file_message", "has_content", "has_error", "is_record", "rebuild_message",
    "system_message", "user_message", "is_message", "validate_message", "parse_context", "is_context",
    "validate_context", "detect_mime", "mimetype_of", "estimate_tokens", "estimate_context_tokens",
    "usage_add", "usage_details", "estimate_usage", "finalize_usage", "usage_headers", "usage_normalize",
    "word_count",
}


# The front door (issue 19: what a notebook user types, at most 40 names): name -> the submodule that
# defines it, written out by hand.
FRONT_DOOR = {
    "Context": "agentctx_widgets.context", "user_message": "agentctx_widgets.context",
    "system_message": "agentctx_widgets.context", "assistant_message": "agentctx_widgets.context",
    "Output": "agentctx_widgets.output",
    "run_turn": "agentctx_widgets.turns", "run_turn_async": "agentctx_widgets.turns",
    "TurnResult": "agentctx_widgets.hooks", "TurnError": "agentctx_widgets.hooks", "HookContext": "agentctx_widgets.hooks",
    "HookError": "agentctx_widgets.hooks",
    "hooks_from_js": "agentctx_widgets.hooks", "hooks_from_python": "agentctx_widgets.hooks",
    "Model": "agentctx_widgets.models", "ModelError": "agentctx_widgets.models",
    "ScriptedModel": "agentctx_widgets.models", "ReplayModel": "agentctx_widgets.models",
    "OpenAIChatModel": "agentctx_widgets.models", "OpenAIResponsesModel": "agentctx_widgets.models",
    "AnthropicModel": "agentctx_widgets.models", "Tool": "agentctx_widgets.models",
    "ContextView": "agentctx_widgets.widget", "TurnDisplay": "agentctx_widgets.widget",
    "TurnDocument": "agentctx_widgets.widget",
    "watch": "agentctx_widgets.widget.watch", "Watcher": "agentctx_widgets.widget.watch",
    "to_html": "agentctx_widgets.html",
    "show": "agentctx_widgets.notebook", "usage": "agentctx_widgets.notebook", "run": "agentctx_widgets.notebook",
    "diff": "agentctx_widgets.suite", "Suite": "agentctx_widgets.suite",
    "cost": "agentctx_widgets.context.cost", "Cost": "agentctx_widgets.context.cost",
}

# Names the root exported before the front door shrank: still importable from it (not listed), so code
# written against them keeps working; their home is the subpackage.
MOVED = {
    **{name: "agentctx_widgets.output" for name in ("OutputMessageError", "DeltaError", "SinkError",
                                                    "DiagnosticError", "StandardAdapter", "CuiAdapter")},
    **{name: "agentctx_widgets.hooks" for name in ("HookLoadError", "HookThrewError", "HookTimeoutError",
                                                   "HookMemoryError", "HookStackOverflowError", "HookReturnError")},
}


@pytest.mark.parametrize("name", sorted(FRONT_DOOR))
def test_every_front_door_name_is_its_modules_own_object(name):
    assert name in agentctx_widgets.__all__
    assert getattr(agentctx_widgets, name) is getattr(importlib.import_module(FRONT_DOOR[name]), name)


def test_the_front_door_is_small_and_lists_nothing_else():
    assert set(agentctx_widgets.__all__) == set(FRONT_DOOR) | {"load_ipython_extension", "__version__"}
    assert len(agentctx_widgets.__all__) <= 40


@pytest.mark.parametrize("name", sorted(SEED_001 | set(MOVED)))
def test_seed_and_moved_names_still_resolve_from_the_root_to_the_same_object(name):
    home = "agentctx_widgets.context" if name in SEED_001 else MOVED[name]
    assert getattr(agentctx_widgets, name) is getattr(importlib.import_module(home), name)


def test_star_import_brings_the_front_door_only():
    namespace: dict = {}
    exec("from agentctx_widgets import *", namespace)
    names = set(namespace) - {"__builtins__"}
    assert names == set(agentctx_widgets.__all__)
    assert "word_count" not in names and "HookTimeoutError" not in names


def test_every_hook_error_is_a_hook_error_and_model_error_is_not():
    hooks = importlib.import_module("agentctx_widgets.hooks")
    errors = [getattr(hooks, name) for name in MOVED if name.startswith("Hook")]
    assert len(errors) == 6 and all(issubclass(error, agentctx_widgets.HookError) for error in errors)
    assert not issubclass(agentctx_widgets.ModelError, agentctx_widgets.HookError)


def test_context_package_exports_exactly_the_seed_names():
    context = importlib.import_module("agentctx_widgets.context")
    assert set(context.__all__) == SEED_001


def test_unknown_name_is_a_clear_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        agentctx_widgets.no_such_thing  # noqa: B018


def test_import_is_light():
    """Importing the package must not pull in Jupyter packages (only widget/magics do)."""
    import subprocess
    import sys

    code = (
        "import sys, agentctx_widgets\n"
        "agentctx_widgets.Context; agentctx_widgets.run_turn\n"
        "heavy = [m for m in ('anywidget', 'ipywidgets', 'IPython') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_no_package_exports_a_name_one_of_its_own_modules_has():
    """Importing ``pkg.name`` (a module) sets the attribute ``pkg.name`` to that module, so a function or class
    a package exports under its module's name turns into the module once anything imports that module (the
    suite's ``diff`` did: ``from agentctx_widgets import diff`` then gave a module, 'not callable')."""
    root = importlib.import_module("agentctx_widgets").__path__[0]
    import pathlib

    clashes = []
    for init in sorted(pathlib.Path(root).rglob("__init__.py")):
        package = ".".join(init.parent.relative_to(pathlib.Path(root).parent).parts)
        modules = {path.stem for path in init.parent.glob("*.py")} | {path.parent.name for path in init.parent.glob("*/__init__.py")}
        exported = set(getattr(importlib.import_module(package), "__all__", ()))
        clashes += [f"{package}.{name}" for name in sorted(exported & modules)]
    assert clashes == []


def test_the_front_door_diff_is_the_function_after_the_suite_modules_load():
    import subprocess
    import sys

    code = ("import agentctx_widgets.suite.suite, agentctx_widgets.suite.report\n"
            "import agentctx_widgets, agentctx_widgets.suite\n"
            "print(callable(agentctx_widgets.diff), callable(agentctx_widgets.suite.diff))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


def test_the_front_door_cost_is_the_function_though_its_module_is_named_cost():
    """``agentctx_widgets.context.cost`` is a module; the root's ``cost`` is its function, loaded or not, and
    ``agentctx_widgets.context`` does not export the name (it would turn into the module: the test above)."""
    import subprocess
    import sys

    code = ("import agentctx_widgets.context.cost, agentctx_widgets.context.ledger\n"
            "import agentctx_widgets, types\n"
            "from agentctx_widgets import cost, Cost\n"
            "print(callable(cost), isinstance(agentctx_widgets.context.cost, types.ModuleType), "
            "cost({'inputTokens': 1000, 'outputTokens': 100}, 'gpt-4o').total, Cost.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # gpt-4o: 1000 * $2.50 / M + 100 * $10.00 / M = $0.0035
    assert out.stdout.split() == ["True", "True", "0.0035", "agentctx_widgets.context.cost"]
    assert "cost" not in importlib.import_module("agentctx_widgets.context").__all__
