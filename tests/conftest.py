"""Suite-wide ordering: the browser tests run last.

Playwright's sync API keeps an asyncio loop running in the main thread while its session fixtures
live, so any later test that calls ``asyncio.run`` would fail with "cannot be called from a running
event loop". Running the browser tests after everything else (notebooks included) keeps each kind
of test in the environment it expects.
"""

from pathlib import Path

_BROWSER = Path(__file__).parent / "browser"


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: _BROWSER in Path(str(item.fspath)).parents)
