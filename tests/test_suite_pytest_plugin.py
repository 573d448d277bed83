"""The pytest plugin (``agentctx_widgets/suite/pytest_plugin.py``, registered as a ``pytest11`` entry point):
a ``*.suite.jsonl`` file is collected as one test item a case when hooks are given, and a case that differs
fails with its text diff. An inner pytest (pytester) runs on a suite recorded here with a ScriptedModel."""

from __future__ import annotations

import pytest

import agentctx_widgets.suite.cli  # noqa: F401 - imported before pytester snapshots sys.modules
from agentctx_widgets import hooks_from_js
from agentctx_widgets.models import ScriptedModel
from agentctx_widgets.suite import Suite

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(180)

BASE = """function Create(ctx, messages) {
  return { messages: [{ role: "system", content: "Be brief." }, ...messages] };
}
"""
# Only the case whose user says "hi" gets another reply text; the model request stays the same.
HELLO = BASE + """function Before(ctx, messages, response) {
  if (messages[messages.length - 1].content !== "hi") return { response };
  return { response: { ...response, content: "Hello! " + response.content } };
}
"""
CASES = ["hi", ["one", "two"], {"id": "greet", "turns": ["hello"]}]
CONCURRENCY = ("--agentctx-suite-concurrency", "2")


def echo(messages: list[dict]) -> str:
    return "You said: " + messages[-1]["content"][0]["text"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A folder with a recorded suite (``greetings.suite.jsonl``) and hooks under ``hooks/``."""
    Suite.record(pytester.path / "greetings.suite.jsonl", CASES, model=ScriptedModel(echo),
                 hooks=lambda: hooks_from_js(BASE), concurrency=2)
    (pytester.path / "hooks").mkdir()
    (pytester.path / "hooks" / "base.js").write_text(BASE, encoding="utf-8")
    (pytester.path / "hooks" / "hello.js").write_text(HELLO, encoding="utf-8")
    return pytester


def test_with_the_recorded_hooks_every_case_is_an_item_and_passes(project):
    result = project.runpytest_subprocess("-v", "-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/base.js",
                                          *CONCURRENCY)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*greetings.suite.jsonl::case-1 PASSED*", "*greetings.suite.jsonl::case-2 PASSED*",
                                 "*greetings.suite.jsonl::greet PASSED*"])


def test_a_changed_hook_fails_the_case_it_touches_with_the_diff_and_the_others_pass(project):
    result = project.runpytest("-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/hello.js", *CONCURRENCY)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*_ suite case case-1 _*",
        "case-1: changed",
        "  turn 1 'hi': changed",
        "    text:",
        "      - You said: hi",
        "      + Hello! You said: hi",
        "*",
        "FAILED greetings.suite.jsonl::case-1 - case-1: changed",
    ])
    assert "Traceback" not in result.stdout.str()  # the diff is the failure, not the plugin's stack


def test_the_ini_option_names_the_hooks_relative_to_the_ini_file_and_the_command_line_wins(project):
    project.makeini("[pytest]\nagentctx_suite_hooks = hooks/base.js\nagentctx_suite_concurrency = 2\n")
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)
    project.runpytest("-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/hello.js").assert_outcomes(
        passed=2, failed=1)


def test_k_and_node_ids_select_cases_and_only_the_selected_cases_are_checked(project):
    (project.path / "hooks" / "logged.py").write_text(
        "from pathlib import Path\n"
        "LOG = Path(__file__).with_name('turns.log')\n"
        "def Create(ctx, messages):\n"
        "    with LOG.open('a') as log:\n"
        "        log.write(messages[-1]['content'] + '\\n')\n"
        "    return {'messages': [{'role': 'system', 'content': 'Be brief.'}, *messages]}\n", encoding="utf-8")
    log = project.path / "hooks" / "turns.log"
    result = project.runpytest("-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/logged.py", "-k", "case-2",
                               *CONCURRENCY)
    result.assert_outcomes(passed=1, deselected=2)
    assert log.read_text(encoding="utf-8").splitlines() == ["one", "two"]  # case-2's turns, nothing else ran
    log.unlink()
    result = project.runpytest("-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/hello.js",
                               "greetings.suite.jsonl::case-1", "greetings.suite.jsonl::greet", *CONCURRENCY)
    result.assert_outcomes(passed=1, failed=1)


def test_without_hooks_suite_files_are_not_collected_and_other_jsonl_never_is(project):
    project.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    (project.path / "notes.jsonl").write_text('{"type": "suite"}\n', encoding="utf-8")
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)  # test_plain only: greetings.suite.jsonl waits for hooks
    result = project.runpytest("-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/base.js", *CONCURRENCY)
    result.assert_outcomes(passed=4)  # the three cases and test_plain; notes.jsonl is no suite file by its name


def test_a_suite_file_named_without_hooks_or_with_hooks_that_do_not_load_is_a_collection_error(project):
    result = project.runpytest("-p", "no:cacheprovider", "greetings.suite.jsonl")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["greetings.suite.jsonl: no hooks to check it with: give --agentctx-suite-hooks FILE*"])
    (project.path / "hooks" / "broken.js").write_text("function Create(ctx, messages) {\n", encoding="utf-8")
    result = project.runpytest("-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/broken.js")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["greetings.suite.jsonl: --agentctx-suite-hooks: hook (*/hooks/broken.js, line 2): could not load*"])
    (project.path / "bad.suite.jsonl").write_text('{"type": "session"}\n', encoding="utf-8")
    result = project.runpytest("-p", "no:cacheprovider", "--agentctx-suite-hooks", "hooks/base.js", *CONCURRENCY)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error stops the run, as pytest does
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*bad.suite.jsonl: not a suite file*"])
