"""A real IPython shell with ``%agentctx`` loaded, and the helpers the magics' tests share.

Displayed objects are recorded by replacing the ``display`` the magics module calls; printed lines are
captured with IPython's ``capture_output``. Test modules import the fixtures by name
(``from magic_shell import ip, shell``) so pytest finds them there.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from agentctx_widgets import magics as magics_module
from agentctx_widgets.context import Context, system_message, user_message
from agentctx_widgets.widget import TurnDisplay


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "agentctx_widgets")
    return ip


@pytest.fixture
def ip(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The shell, with the names a test adds removed afterwards and displayed objects (``shown``) and
    the turns ``%agentctx run`` showed (``turns``) recorded."""
    shown: list[Any] = []
    monkeypatch.setattr(magics_module, "display", shown.append)
    turns: list[TurnDisplay] = []  # a terminal shell displays no turn: record the ones %agentctx run shows
    monkeypatch.setattr(TurnDisplay, "show", lambda self: (turns.append(self), self)[1])
    before = set(shell.user_ns)
    shell.shown = shown
    shell.turns = turns
    yield shell
    for name in set(shell.user_ns) - before:
        del shell.user_ns[name]
    shell.magics_manager.registry["AgentContextMagics"].hook_sets.clear()


def line(shell: InteractiveShell, text: str) -> tuple[Any, Any]:
    with capture_output() as captured:
        result = shell.run_line_magic("agentctx", text)
    return result, captured


def cell(shell: InteractiveShell, first_line: str, body: str) -> tuple[Any, Any]:
    with capture_output() as captured:
        result = shell.run_cell_magic("agentctx", first_line, body)
    return result, captured


def assert_error(captured: Any, *fragments: str) -> None:
    """One ``agentctx: `` line on stderr naming every fragment; nothing on stdout; no traceback."""
    err = captured.stderr
    assert err.startswith("agentctx: "), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert captured.stdout == ""


def assert_turn_failure(captured: Any, *fragments: str) -> None:
    """A turn that failed: its ``agentctx: run: `` line last on stdout (where nbval compares it; the turn's
    console lines may come before it) naming every fragment; nothing on stderr; no traceback."""
    out = captured.stdout
    assert out.endswith("\n"), out
    last = out.splitlines()[-1]
    assert last.startswith("agentctx: run: ") and last.endswith("; the context is unchanged"), out
    assert out.count("agentctx: ") == 1 and "Traceback" not in out, out
    for fragment in fragments:
        assert fragment in last, (fragment, last)
    assert captured.stderr == ""


def names(shell: InteractiveShell) -> set[str]:
    return set(shell.user_ns)


def sample_context(name: str = "demo") -> Context:
    ctx = Context(name=name)
    ctx.append(system_message("You are a helpful assistant."))  # 5 words -> ceil(20/3) = 7 tokens
    ctx.append(user_message("hello there friend"))  # 3 words -> 4 tokens
    return ctx
