"""The front door: every public name resolves, and nothing else leaks."""

import importlib

import pytest

import agentctx_widgets


@pytest.mark.parametrize("name", sorted(set(agentctx_widgets.__all__) - {"__version__"}))
def test_every_public_name_resolves(name):
    assert getattr(agentctx_widgets, name) is not None


def test_context_package_exports_exactly_the_seed_names():
    context = importlib.import_module("agentctx_widgets.context")
    assert set(context.__all__) == set(agentctx_widgets._CONTEXT_NAMES)


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
