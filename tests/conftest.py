"""Suite-wide setup: SIGINT raises KeyboardInterrupt, and the browser tests run last.

The interrupt tests send a real SIGINT to this process or to children started from it. A process
started in the background by a non-interactive shell (``make test &``, a CI step's background job)
inherits SIGINT *ignored*, and then Python installs no KeyboardInterrupt handler, in this process or in
the children it starts: every such test failed in a stress run driven from a background script. So the
default handler is put back here, before any test runs (a handler, unlike "ignored", does not survive
``exec``: children start with the default action and install their own).

Playwright's sync API keeps an asyncio loop running in the main thread while its session fixtures
live, so any later test that calls ``asyncio.run`` would fail with "cannot be called from a running
event loop". Running the browser tests after everything else (notebooks included) keeps each kind
of test in the environment it expects.
"""

import signal
from pathlib import Path

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_BROWSER = Path(__file__).parent / "browser"


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: _BROWSER in Path(str(item.fspath)).parents)
