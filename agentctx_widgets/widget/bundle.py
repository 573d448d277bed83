"""The front-end bundle, stored once per notebook instead of once per view.

anywidget keeps a widget's ``_esm`` and ``_css`` in each model's state, and a saved notebook stores the
state of every model, so ten views stored the ~130 KB bundle ten times. Here one ``FrontEndBundle``
model per kernel holds the code and CSS (gzipped and base64-encoded: ~60 KB in the notebook); each ``ContextView`` carries only ``static/loader.js`` as its
``_esm`` and a widget reference to that model in ``_bundle`` (the loader imports the bundle once per
page). Where that reference cannot be followed — marimo, Colab, or ``AGENTCTX_WIDGETS_INLINE_BUNDLE=1``
— a view carries the whole bundle as before.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import os
import pathlib
import sys
import threading
import zlib
from dataclasses import dataclass
from typing import Any

import ipywidgets
import traitlets

STATIC = pathlib.Path(__file__).resolve().parent.parent / "static"
ENCODING = "gzip+base64"
INLINE_ENV = "AGENTCTX_WIDGETS_INLINE_BUNDLE"
"""Set to 1 to make every view carry the whole bundle (a front end without widget references)."""

MISSING_BUNDLE = """
export default { render({ el }) {
  el.textContent = "[agentctx-widgets] front end not built: run `make js` (cd js && npm ci && npm run build)";
} };
"""


@dataclass(frozen=True)
class BundleFiles:
    """The built front end as text: the bundle, its CSS, the per-view loader, and a digest of the first two."""

    esm: str
    css: str
    loader: str | None
    digest: str


@functools.cache
def bundle_files() -> BundleFiles:
    """Read static/ once per process (``make js`` writes it); a missing bundle gives a view that says so."""
    esm = _read("widget.js")
    css = _read("widget.css") or ""
    if esm is None:
        return BundleFiles(MISSING_BUNDLE, css, None, "")
    digest = hashlib.sha256(esm.encode() + b"\0" + css.encode()).hexdigest()[:32]
    return BundleFiles(esm, css, _read("loader.js"), digest)


def _read(name: str) -> str | None:
    path = STATIC / name
    return path.read_text(encoding="utf-8") if path.is_file() else None


class FrontEndBundle(ipywidgets.Widget):
    """One per kernel: the front end's code and CSS, imported by every ContextView's loader by reference.

    A plain ``@jupyter-widgets/base`` model with no view, so every widget manager (JupyterLab, Notebook 7,
    nbconvert's HTML, a notebook reopened without a kernel) restores it from saved state.
    """

    esm = traitlets.Unicode("").tag(sync=True)
    """widget.js, encoded as ``encoding`` says."""
    css = traitlets.Unicode("").tag(sync=True)
    """widget.css, encoded as ``encoding`` says."""
    encoding = traitlets.Unicode(ENCODING).tag(sync=True)
    """How ``esm`` and ``css`` are written: gzip then base64 (the loader decodes with DecompressionStream)."""
    digest = traitlets.Unicode("").tag(sync=True)
    """Of the decoded text: the page imports one module per digest, however many kernels share it."""

    def __repr__(self) -> str:
        return f"FrontEndBundle(digest={self.digest!r}, esm={len(self.esm):,} chars, css={len(self.css):,} chars)"


def encode(text: str) -> str:
    """gzip (no timestamp, so the same bundle always gives the same notebook) then base64."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def inline_reason() -> str | None:
    """Why a new view must carry the whole bundle, or None when it can share the kernel's FrontEndBundle."""
    setting = os.environ.get(INLINE_ENV, "").strip()
    if setting not in ("", "0", "1"):
        raise ValueError(f"{INLINE_ENV} must be 0 or 1, not {setting!r}")
    if setting == "1":
        return f"{INLINE_ENV}=1"
    files = bundle_files()
    if files.loader is None:
        return "the front end is not built (static/loader.js is missing)"
    if _in_marimo():
        return "marimo (its anywidget support is not assumed to follow widget references)"
    if "google.colab" in sys.modules:
        return "Colab (its widget manager is not assumed to follow widget references)"
    return None


def _in_marimo() -> bool:
    marimo = sys.modules.get("marimo")
    if marimo is None:
        return False
    running = getattr(marimo, "running_in_notebook", None)
    return True if running is None else bool(running())  # an unknown marimo: the safe choice


_lock = threading.Lock()
_shared: FrontEndBundle | None = None


def shared_bundle() -> FrontEndBundle | None:
    """The kernel's FrontEndBundle (made on first use, again if closed); None where views carry the bundle."""
    global _shared
    if inline_reason() is not None:
        return None
    with _lock:
        if _shared is None or _shared.comm is None:  # Widget.close() (or close_all) drops the comm
            esm, css = _encoded_files()
            _shared = FrontEndBundle(esm=esm, css=css, digest=bundle_files().digest)
        return _shared


_users: set[str] = set()
"""Model ids of the views that use the shared bundle and were not closed with ``forget=True``."""


def use_shared_bundle(view_id: str) -> None:
    """A view refers to the shared bundle (it may be displayed, live or from saved state)."""
    with _lock:
        _users.add(view_id)


def forget_shared_bundle(view_id: str) -> None:
    """A view no display shows any more let go of the bundle; the last one closes it, emptied first.

    nbclient keeps the last state of closed models in the notebook, so a notebook whose views all
    settled into documents (``%agentctx run``) then stores no copy of the front end. A view closed
    without ``forget`` keeps the bundle: its display may still render it from saved state.
    """
    global _shared
    with _lock:
        _users.discard(view_id)
        if _users or _shared is None:
            return
        bundle, _shared = _shared, None
    if bundle.comm is not None:
        with bundle.hold_sync():
            bundle.esm = ""
            bundle.css = ""
        bundle.close()


@functools.cache
def _encoded_files() -> tuple[str, str]:
    files = bundle_files()
    return _encoded("widget.js", files.esm), _encoded("widget.css", files.css) if files.css else ""


def _encoded(name: str, text: str) -> str:
    """``encode(text)``, from the ``NAME.gz`` the build wrote beside it when that decodes to ``text``
    (a fresh kernel's first view then skips ~7 ms of gzip -9; a stale or broken file is ignored)."""
    path = STATIC / f"{name}.gz"
    try:
        packed = path.read_bytes() if path.stat().st_size <= 4 * len(text) + 1024 else None
        if packed is not None and gzip.decompress(packed) == text.encode("utf-8"):
            return base64.b64encode(packed).decode("ascii")
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        pass
    return encode(text)


class ViewCode:
    """A ContextView's ``_esm`` / ``_css``, decided per view: the loader when the bundle is shared, else all.

    anywidget reads ``_esm`` and ``_css`` from each instance as it is created and turns them into synced
    traits; this descriptor answers that read.
    """

    def __init__(self, part: str) -> None:
        if part not in ("esm", "css"):
            raise ValueError(f"ViewCode part must be 'esm' or 'css', not {part!r}")
        self.part = part

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        files = bundle_files()
        if shared_bundle() is not None:
            return files.loader if self.part == "esm" else ""
        return files.esm if self.part == "esm" else files.css


class BundleReference(traitlets.TraitType):
    """A view's synced ``_bundle`` trait: ``IPY_MODEL_<id>`` of the kernel's FrontEndBundle, or None.

    Its default is computed per view (not a static None, as traitlets makes of ``Instance(allow_none)``).
    """

    info_text = "the kernel's FrontEndBundle or None"
    allow_none = True

    def __init__(self) -> None:
        super().__init__()
        self.tag(sync=True, **ipywidgets.widget_serialization)

    def validate(self, obj: Any, value: Any) -> FrontEndBundle | None:
        if value is None or isinstance(value, FrontEndBundle):
            return value
        self.error(obj, value)
        return None

    def make_dynamic_default(self) -> FrontEndBundle | None:
        return shared_bundle()
