"""The front-end bundle is stored once per notebook: one FrontEndBundle model, a small loader per view,
and the whole bundle in each view only where widget references cannot be followed (marimo, Colab, opt-in)."""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import sys
import types
from pathlib import Path

import nbformat
import pytest
import traitlets
from nbclient import NotebookClient

from agentctx_widgets import Context, ContextView
from agentctx_widgets.widget import bundle as bundle_module
from agentctx_widgets.widget.bundle import INLINE_ENV, FrontEndBundle, shared_bundle

STATIC = Path(__file__).resolve().parents[1] / "agentctx_widgets" / "static"
WIDGET_JS = (STATIC / "widget.js").read_text(encoding="utf-8")
WIDGET_CSS = (STATIC / "widget.css").read_text(encoding="utf-8")
LOADER_JS = (STATIC / "loader.js").read_text(encoding="utf-8")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def decoded(text: str) -> str | None:
    """``text`` as the loader decodes it (base64, then gzip), or None when it is not that."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return gzip.decompress(raw).decode("utf-8") if raw[:2] == b"\x1f\x8b" else None


def copies(text: str, found: list[str]) -> int:
    """How many of the strings ``found`` hold ``text``, as it is or encoded for the loader."""
    return sum(1 for item in found if item == text or (len(item) > 1000 and decoded(item) == text))


@pytest.fixture(autouse=True)
def jupyter_host(monkeypatch):
    """Each test starts as a plain Jupyter kernel: no opt-in, no marimo, no Colab."""
    monkeypatch.delenv(INLINE_ENV, raising=False)
    monkeypatch.delitem(sys.modules, "marimo", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)


def test_views_share_one_bundle_model_and_carry_only_the_loader():
    first, second = ContextView(Context(name="a")), ContextView(Context(name="b"))
    shared = first._bundle
    assert isinstance(shared, FrontEndBundle)
    assert second._bundle is shared
    assert shared.encoding == "gzip+base64"
    assert (decoded(shared.esm), decoded(shared.css)) == (WIDGET_JS, WIDGET_CSS)
    assert len(shared.digest) == 32 and int(shared.digest, 16) >= 0
    for view in (first, second):
        state = view.get_state()
        assert (state["_esm"], state["_css"]) == (LOADER_JS, "")
        assert state["_bundle"] == f"IPY_MODEL_{shared.model_id}"
    assert "widget_manager" in LOADER_JS and WIDGET_JS not in LOADER_JS


def test_a_closed_bundle_model_is_replaced_for_the_next_view():
    old = shared_bundle()
    old.close()
    view = ContextView()
    assert view._bundle is not old and view._bundle.comm is not None
    assert view.get_state()["_bundle"] == f"IPY_MODEL_{view._bundle.model_id}"


@pytest.mark.parametrize(
    ("host", "value"),
    [("marimo", types.SimpleNamespace(running_in_notebook=lambda: True)),
     ("marimo", types.SimpleNamespace()),  # a marimo without running_in_notebook: the safe choice
     ("google.colab", types.SimpleNamespace())],
)
def test_hosts_that_may_not_follow_references_get_the_whole_bundle(monkeypatch, host, value):
    monkeypatch.setitem(sys.modules, host, value)
    view = ContextView(Context(name="m"))
    state = view.get_state()
    assert (state["_esm"], state["_css"], state["_bundle"]) == (WIDGET_JS, WIDGET_CSS, None)


def test_marimo_imported_in_a_jupyter_kernel_still_shares(monkeypatch):
    monkeypatch.setitem(sys.modules, "marimo",
                        types.SimpleNamespace(running_in_notebook=lambda: False))
    assert ContextView().get_state()["_esm"] == LOADER_JS


def test_the_environment_variable_opts_out_and_a_bad_value_is_named(monkeypatch):
    monkeypatch.setenv(INLINE_ENV, "1")
    assert ContextView().get_state()["_esm"] == WIDGET_JS
    monkeypatch.setenv(INLINE_ENV, "0")
    assert ContextView().get_state()["_esm"] == LOADER_JS
    monkeypatch.setenv(INLINE_ENV, "yes")
    with pytest.raises(ValueError, match=r"^AGENTCTX_WIDGETS_INLINE_BUNDLE must be 0 or 1, not 'yes'$"):
        ContextView()


def test_a_missing_build_gives_a_view_that_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(bundle_module, "STATIC", tmp_path)
    bundle_module.bundle_files.cache_clear()
    try:
        state = ContextView().get_state()
    finally:
        bundle_module.bundle_files.cache_clear()
    assert (state["_esm"], state["_css"], state["_bundle"]) == (bundle_module.MISSING_BUNDLE, "", None)


def test_the_builds_gzip_is_used_only_when_it_decodes_to_the_text_beside_it(monkeypatch, tmp_path):
    """The build writes widget.js.gz (the kernel then skips gzip -9 at its first view); a stale, broken or
    missing file falls back to encoding the text itself, so the loader always gets the text it digests."""
    text = "export default { render() {} }; // " + "x" * 500
    (tmp_path / "widget.js").write_text(text)
    encoded = lambda: base64.b64decode(bundle_module._encoded("widget.js", text))  # noqa: E731
    monkeypatch.setattr(bundle_module, "STATIC", tmp_path)
    assert gzip.decompress(encoded()) == text.encode()  # no .gz: encoded here
    built = gzip.compress(text.encode(), compresslevel=1, mtime=12345)  # not what encode() would write
    (tmp_path / "widget.js.gz").write_bytes(built)
    assert encoded() == built  # the build's bytes, as they are
    (tmp_path / "widget.js.gz").write_bytes(gzip.compress(b"an older build", mtime=0))
    assert gzip.decompress(encoded()) == text.encode()
    (tmp_path / "widget.js.gz").write_bytes(built[:-9])  # cut short
    assert gzip.decompress(encoded()) == text.encode()
    (tmp_path / "widget.js.gz").write_bytes(b"not gzip at all")
    assert gzip.decompress(encoded()) == text.encode()


def test_the_bundle_reference_refuses_other_values():
    view = ContextView()
    with pytest.raises(traitlets.TraitError, match="expected the kernel's FrontEndBundle or None, not the str 'x'"):
        view._bundle = "x"


# ------------------------------------------------------------ an executed notebook (nbclient, a real kernel)

CELLS = [
    "from agentctx_widgets import Context, ContextView\n"
    + "\n".join(f"ctx{i} = Context([{{'type': 2, 'content': [{{'type': 'text', 'text': 'Q{i}'}}]}}], name='v{i}')"
                for i in range(3)),
    "first = ContextView(ctx0)\nfirst",
    "ContextView(ctx1)",
    "ContextView(ctx2)",
    "first",  # the same view displayed again
]


def strings(value):
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def executed(tmp_path: Path) -> dict:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    path = tmp_path / "executed.ipynb"
    nbformat.write(notebook, path)  # what nbconvert --execute writes
    return json.loads(path.read_text())


@pytest.mark.parametrize(("inline", "stored"), [(False, 1), (True, 3)])
def test_an_executed_notebook_stores_the_bundle_once(tmp_path, monkeypatch, inline, stored):
    if inline:
        monkeypatch.setenv(INLINE_ENV, "1")  # the kernel inherits it: the old way, one copy per view
    data = executed(tmp_path)
    state = data["metadata"]["widgets"][WIDGET_STATE]["state"]
    found = list(strings(state))
    assert (copies(WIDGET_JS, found), copies(WIDGET_CSS, found)) == (stored, stored)

    shown = [output["data"][WIDGET_VIEW]["model_id"] for cell in data["cells"] for output in cell["outputs"]
             if WIDGET_VIEW in output.get("data", {})]
    assert len(shown) == 4 and shown[0] == shown[3] and len(set(shown)) == 3
    views = {model_id: state[model_id]["state"] for model_id in shown}
    if inline:
        assert all(view["_bundle"] is None and view["_esm"] == WIDGET_JS for view in views.values())
        return
    refs = {view["_bundle"] for view in views.values()}
    assert len(refs) == 1
    holder_id = refs.pop().removeprefix("IPY_MODEL_")
    holder = state[holder_id]
    assert (holder["model_module"], holder["model_name"]) == ("@jupyter-widgets/base", "WidgetModel")
    assert decoded(holder["state"]["esm"]) == WIDGET_JS and decoded(holder["state"]["css"]) == WIDGET_CSS
    assert WIDGET_JS not in found  # stored encoded: a third of its size
    assert all(view["_esm"] == LOADER_JS and view.get("_css", "") == "" for view in views.values())
