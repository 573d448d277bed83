"""A suite file given where a session file goes (issue 22: "a suite file is JSON Lines that watch/load can
read"). ``Context.load`` reads any JSON Lines of records, so a suite file would load as a "context" of its
header and case lines, and ``show`` would draw those as records; ``load_session`` (behind ``show``, the
magics and ``export``) says what the file is and how to open it instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from magic_shell import assert_error, ip, line, shell  # noqa: F401 - fixtures

from agentctx_widgets import Context, ScriptedModel, Suite
from agentctx_widgets.notebook import SuiteNotSessionError, UnreadableSessionError, load_session


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    path = tmp_path / "support.suite.jsonl"
    Suite.record(path, ["hi", ["where is 42?", "thanks"]], model=ScriptedModel(["Hello", "Tuesday", "Bye"]))
    return path


def test_load_session_names_the_suite_and_how_to_open_it(suite_file: Path) -> None:
    with pytest.raises(SuiteNotSessionError) as raised:
        load_session(suite_file)
    assert isinstance(raised.value, UnreadableSessionError)
    assert str(raised.value).startswith("support.suite.jsonl is a regression suite (agentctx-suite/1, 2 cases), "
                                        "not a session file: open it with Suite(")
    assert "suite.check(hooks=...)" in str(raised.value) and "%agentctx diff" in str(raised.value)
    assert len(Suite(suite_file).cases) == 2  # the message's advice works
    assert len(Context.load(suite_file)) == 3  # the store itself still reads any records: the check is load_session's


def test_a_session_whose_first_record_merely_says_suite_still_loads(tmp_path: Path) -> None:
    context = Context([{"type": "suite", "note": "a record of the user's own"}], id="mine", dir=tmp_path)
    path = context.save()
    loaded, skipped = load_session(path)
    assert len(loaded) == 1 and not skipped


def test_the_magics_say_it_in_one_line(ip: Any, suite_file: Path) -> None:  # noqa: F811 - fixture
    for command in (f"show {suite_file}", f"usage {suite_file}"):
        result, out = line(ip, command)
        assert result is None
        assert_error(out, "support.suite.jsonl is a regression suite", "not a session file")


def test_export_exits_2_with_the_same_line(suite_file: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "agentctx_widgets", "export", str(suite_file), "-o",
                           str(tmp_path / "page.html")], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("agentctx: export: support.suite.jsonl is a regression suite"), done.stderr
    assert done.stderr.count("\n") == 1 and not (tmp_path / "page.html").exists()
