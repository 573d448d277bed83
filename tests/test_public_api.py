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


# name -> the submodule that defines it (every public name outside seed 001, written out by hand)
OWNERS = {
    "Output": "agentctx_widgets.output", "OutputMessageError": "agentctx_widgets.output",
    "DeltaError": "agentctx_widgets.output", "SinkError": "agentctx_widgets.output",
    "StandardAdapter": "agentctx_widgets.output", "CuiAdapter": "agentctx_widgets.output",
    "DiagnosticError": "agentctx_widgets.output",
    "run_turn": "agentctx_widgets.turns", "run_turn_async": "agentctx_widgets.turns",
    "TurnResult": "agentctx_widgets.hooks", "TurnError": "agentctx_widgets.hooks", "HookContext": "agentctx_widgets.hooks",
    "HookError": "agentctx_widgets.hooks", "HookLoadError": "agentctx_widgets.hooks",
    "HookThrewError": "agentctx_widgets.hooks", "HookTimeoutError": "agentctx_widgets.hooks",
    "HookMemoryError": "agentctx_widgets.hooks", "HookStackOverflowError": "agentctx_widgets.hooks",
    "HookReturnError": "agentctx_widgets.hooks",
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
}


@pytest.mark.parametrize("name", sorted(OWNERS))
def test_every_public_name_is_its_modules_own_object(name):
    assert name in agentctx_widgets.__all__
    assert getattr(agentctx_widgets, name) is getattr(importlib.import_module(OWNERS[name]), name)


def test_the_front_door_lists_nothing_else():
    assert set(agentctx_widgets.__all__) == SEED_001 | set(OWNERS) | {"load_ipython_extension", "__version__"}


def test_every_hook_error_is_a_hook_error_and_model_error_is_not():
    errors = [getattr(agentctx_widgets, name) for name in OWNERS if name.startswith("Hook") and name.endswith("Error")]
    assert len(errors) == 7 and all(issubclass(error, agentctx_widgets.HookError) for error in errors)
    assert not issubclass(agentctx_widgets.ModelError, agentctx_widgets.HookError)



def test_context_package_exports_exactly_the_seed_names():
    context = importlib.import_module("agentctx_widgets.context")
    assert set(context.__all__) == SEED_001
    assert SEED_001 <= set(agentctx_widgets.__all__)


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
