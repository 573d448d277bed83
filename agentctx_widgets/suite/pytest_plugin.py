"""A pytest plugin (pytest loads it when the package is installed) that runs regression suites as tests.

Each case of a suite file is one test item (``path/to/greetings.suite.jsonl::case-2``); it passes when the
case is ``passed`` and fails with the case's text diff (``changed``) or its reason (``failed``,
``model_changed``). A file's cases are checked together, once, by ``Suite(path).check`` on
``concurrency`` threads, when its first selected item runs (``-k`` or node ids narrow what is checked).

It is opt-in, so a test run that does not ask for it collects nothing new:

- only files whose names end in ``.suite.jsonl`` are collected, and only when the hooks to check them
  with are given: ``--agentctx-suite-hooks FILE`` (a ``.js``, ``.ts`` or ``.py`` file, loaded as
  ``python -m agentctx_widgets suite check --hooks`` loads it: ``suite/cli.py``) or
  ``--agentctx-suite-assistant DIR`` (a Yao assistant), or the ini options ``agentctx_suite_hooks`` /
  ``agentctx_suite_assistant`` (paths relative to the ini file; the command line wins);
- a ``.suite.jsonl`` file named on the command line is collected even so, and then fails to collect
  with the message saying which option to give.

``--agentctx-suite-concurrency N`` / ``agentctx_suite_concurrency`` (default 8) is how many cases run side
by side. Bad input (a hooks file that does not load, a suite file that is not one) is a collection
error naming the file.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

SUFFIX = ".suite.jsonl"
DEFAULT_CONCURRENCY = 8

_SETTINGS = pytest.StashKey[dict]()
_SOURCE = pytest.StashKey[list]()  # [HookSource or SuiteCliError], loaded at the first suite file


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentctx-suite", "agentctx-widgets regression suites (*.suite.jsonl files)")
    group.addoption("--agentctx-suite-hooks", metavar="FILE", default=None,
                    help="check *.suite.jsonl files with these hooks (.js, .ts or .py); collects them")
    group.addoption("--agentctx-suite-assistant", metavar="DIR", default=None,
                    help="check *.suite.jsonl files with this Yao assistant; collects them")
    group.addoption("--agentctx-suite-concurrency", metavar="N", default=None,
                    help=f"cases of a suite checked side by side (default {DEFAULT_CONCURRENCY})")
    parser.addini("agentctx_suite_hooks", type="paths", default=[],
                  help="the hooks file *.suite.jsonl files are checked with (relative to the ini file)")
    parser.addini("agentctx_suite_assistant", type="paths", default=[],
                  help="the Yao assistant directory *.suite.jsonl files are checked with")
    parser.addini("agentctx_suite_concurrency", type="string", default=str(DEFAULT_CONCURRENCY),
                  help="cases of a suite checked side by side")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_SETTINGS] = _settings(config)
    config.stash[_SOURCE] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    for source in config.stash.get(_SOURCE, []):
        if hasattr(source, "close"):
            source.close()


def _settings(config: pytest.Config) -> dict:
    """Which hooks (the command line before the ini file) and how many cases at once; UsageError if bad."""
    here = config.invocation_params.dir
    chosen: dict[str, Any] = {}
    for name in ("hooks", "assistant"):
        given = config.getoption(f"agentctx_suite_{name}")
        listed = config.getini(f"agentctx_suite_{name}")
        if given is None and len(listed) > 1:
            raise pytest.UsageError(f"agentctx_suite_{name}: one path, not {len(listed)}")
        chosen[name] = here / given if given is not None else (listed[0] if listed else None)
        chosen[f"{name}_option"] = f"--agentctx-suite-{name}" if given is not None else f"agentctx_suite_{name}"
    if chosen["hooks"] is not None and chosen["assistant"] is not None:
        raise pytest.UsageError("agentctx suites: give the hooks or the assistant to check with, not both "
                                f"(hooks {chosen['hooks']}, assistant {chosen['assistant']})")
    text = config.getoption("agentctx_suite_concurrency") or config.getini("agentctx_suite_concurrency")
    try:
        concurrency = int(text)
    except ValueError:
        concurrency = 0
    if concurrency < 1:
        raise pytest.UsageError(f"agentctx suite concurrency: a whole number of at least 1, not {text!r}")
    return {**chosen, "concurrency": concurrency}


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not file_path.name.endswith(SUFFIX):
        return None
    settings = parent.config.stash[_SETTINGS]
    if settings["hooks"] is None and settings["assistant"] is None and not parent.session.isinitpath(file_path):
        return None  # not asked for: a *.suite.jsonl file in the tree is left alone
    return SuiteFile.from_parent(parent, path=file_path)


def _source(config: pytest.Config) -> Any:
    """The hooks, loaded once per run (a load error is kept, and said by every suite file)."""
    from .cli import SuiteCliError, load_assistant_source, load_hook_file

    loaded = config.stash[_SOURCE]
    if not loaded:
        settings = config.stash[_SETTINGS]
        try:
            if settings["hooks"] is not None:
                loaded.append(load_hook_file(settings["hooks"], settings["hooks_option"]))
            elif settings["assistant"] is not None:
                loaded.append(load_assistant_source(settings["assistant"], settings["assistant_option"]))
            else:
                loaded.append(SuiteCliError(
                    "no hooks to check it with: give --agentctx-suite-hooks FILE or --agentctx-suite-assistant DIR "
                    "(or agentctx_suite_hooks / agentctx_suite_assistant in the ini file)"))
        except SuiteCliError as error:
            loaded.append(error)
    return loaded[0]


class SuiteFile(pytest.File):
    """A suite file: one :class:`SuiteCase` per case; the cases are checked together, once."""

    def collect(self):
        from .cli import SuiteCliError, read_suite

        source = _source(self.config)
        if isinstance(source, SuiteCliError):
            raise self.CollectError(f"{self.path.name}: {source}")
        try:
            self.suite = read_suite(self.path)
        except SuiteCliError as error:
            raise self.CollectError(str(error)) from None
        self._report: Any = None
        self._error: BaseException | None = None
        for case in self.suite.cases:
            yield SuiteCase.from_parent(self, name=case.id)

    def case_report(self, case_id: str) -> Any:
        """This case's ``CaseReport``, the selected cases of the file checked at the first call."""
        if self._error is not None:
            raise self._error
        if self._report is None:
            selected = {item.name for item in self.session.items if item.parent is self}
            suite = copy.copy(self.suite)  # the file is not rewritten: update is never passed
            suite.cases = [case for case in self.suite.cases if case.id in selected or case.id == case_id]
            try:
                self._report = suite.check(concurrency=self.config.stash[_SETTINGS]["concurrency"],
                                           **_source(self.config).arguments)
            except Exception as error:
                self._error = error
                raise
        return self._report.cases[case_id]


class CaseDiffers(AssertionError):
    """A case that did not pass; its ``case`` is the ``CaseReport``."""

    def __init__(self, case: Any) -> None:
        super().__init__(case.text())
        self.case = case


class SuiteCase(pytest.Item):
    """One case of a suite file: passes when the check finds it ``passed``."""

    def runtest(self) -> None:
        case = self.parent.case_report(self.name)
        if case.status != "passed":
            raise CaseDiffers(case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseDiffers):
            return excinfo.value.case.text()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"suite case {self.name}"
