"""Fixtures for the browser tests: one JupyterLab server and one Chromium per session, a fresh page each."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import CHROMIUM, HANG, REPO, JupyterServer, Lab, launch_chromium  # noqa: E402

BUNDLE = REPO / "agentctx_widgets" / "static" / "widget.js"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.timeout(2 * HANG))  # only a hang ends here: every wait inside has HANG


def _require_browser_and_bundle() -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (make chromium installs it); browser tests need a real Chromium")
    if not BUNDLE.exists():
        pytest.fail(f"front-end bundle {BUNDLE} is missing: run `make js`")


@pytest.fixture(scope="session")
def lab_server():
    _require_browser_and_bundle()
    server = JupyterServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chromium():
    """One Chromium per session; no JupyterLab needed (marimo's tests and the exported pages use it alone)."""
    _require_browser_and_bundle()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def lab(lab_server, chromium):
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(HANG * 1000)
    page.set_default_timeout(60_000)
    yield Lab(lab_server, page)
    context.close()
    lab_server.shutdown_kernels()
