"""The front door: every public name resolves, and nothing else leaks."""

import importlib

import pytest

import agentctx_widgets


@pytest.mark.parametrize("name", sorted(set(agentctx_widgets.__all__) - {"__version__"}))
def test_every_public_name_resolves(name):
    assert getattr(agentctx_widgets, name) is not None


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
