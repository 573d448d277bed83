"""``%agentctx diff A B`` in a real IPython shell (issue 22): two runs compared turn by turn, A and B named
as variables (or a step inside one) or as session / suite files; two suites compared case by case by id.
Expected texts are written out by hand from the diff's rules (suite/compare.py's text form)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentctx_widgets import Context, ScriptedModel, assistant_message, hooks_from_js, user_message
from agentctx_widgets.suite import Diff, Suite

sys.path.insert(0, str(Path(__file__).parent))
from magic_shell import assert_error, ip, line, shell  # noqa: E402,F401

USAGE = {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
"""The same provider usage on every reply, so a changed answer changes only its text."""

TODAY = """turn 1 'Where is 42?': changed
  text:
    - It ships today.
    + It ships tomorrow.
    ~ It ships [-today-]{+tomorrow+}."""

SENT = """  outputs[1].props.content:
    - It ships today.
    + It ships tomorrow.
    ~ It ships [-today-]{+tomorrow+}."""
"""A suite case keeps both the committed reply and the output messages the client got (suite/suite.py
_turn_of), and the diff compares both (suite/records.py reads the reply's text from the committed messages
and compares the outputs prop by prop): the new text shows once more as the text output's content."""


def conversation(*pairs: tuple[str, str], **where: Any) -> Context:
    ctx = Context(**where)
    for asked, answered in pairs:
        ctx.append(user_message(asked))
        ctx.append(assistant_message([{"type": "text", "text": answered}]))
    return ctx


def answers(table: dict[str, str]) -> ScriptedModel:
    """A model that answers each question from ``table`` (by the last user text)."""
    return ScriptedModel([lambda messages: {"text": table[messages[-1]["content"][0]["text"]], "usage": USAGE}])


YESTERDAY = {"hi": "Hello!", "Where is 42?": "It ships today.", "bye": "Goodbye!"}
TODAY_MODEL = {**YESTERDAY, "Where is 42?": "It ships tomorrow."}


@pytest.fixture
def suites(tmp_path: Path) -> tuple[Path, Path]:
    """Two recordings of a suite: the second answers the order question differently and has one case more."""
    old = Suite.record(tmp_path / "old.jsonl", ["hi", {"id": "order", "turns": ["Where is 42?"]}],
                       model=answers(YESTERDAY), concurrency=1)
    new = Suite.record(tmp_path / "new.jsonl", ["hi", {"id": "order", "turns": ["Where is 42?"]},
                                                {"id": "later", "turns": ["bye"]}],
                       model=answers(TODAY_MODEL), concurrency=1)
    return old.path, new.path


def test_two_contexts_display_their_diff_and_return_nothing(ip: Any) -> None:
    ip.user_ns.update(old=conversation(("Where is 42?", "It ships today.")),
                      new=conversation(("Where is 42?", "It ships tomorrow.")))
    result, out = line(ip, "diff old new")
    assert result is None and out.stdout == out.stderr == ""
    [shown] = ip.shown
    assert isinstance(shown, Diff) and str(shown) == TODAY
    html = shown._repr_html_()
    assert "It ships <del>today</del>." in html and "It ships <ins>tomorrow</ins>." in html


def test_text_prints_the_text_diff_and_displays_nothing(ip: Any) -> None:
    ip.user_ns.update(old=conversation(("hi", "Hello!"), ("Where is 42?", "It ships today.")),
                      new=conversation(("hi", "Hello!"), ("Where is 42?", "It ships tomorrow.")))
    _, out = line(ip, "diff old new --text")
    assert ip.shown == [] and out.stderr == ""
    assert out.stdout == TODAY.replace("turn 1", "turn 2") + "\nsame: turn 1\n"


def test_session_files_by_path_and_by_a_variable_holding_the_path(ip: Any, tmp_path: Path) -> None:
    first = conversation(("Where is 42?", "It ships today."), id="monday", dir=tmp_path).save()
    second = conversation(("Where is 42?", "It ships tomorrow."), id="tuesday", dir=tmp_path).save()
    assert first.name == "monday.jsonl"
    ip.user_ns["path"] = str(second)
    _, out = line(ip, f"diff {first} path --text")
    assert out.stdout == TODAY + "\n" and out.stderr == ""


def test_two_suite_files_compare_case_by_case_by_id(ip: Any, suites: tuple[Path, Path]) -> None:
    old, new = suites
    _, out = line(ip, f"diff {old} {new} --result d")
    assert out.stdout == out.stderr == ""
    [shown] = ip.shown
    assert shown is ip.user_ns["d"] and shown.changed == ["order", "later"] and not shown.same
    assert shown.status == {"case-1": "same", "order": "changed", "later": "added"}
    assert str(shown) == "\n".join([
        "3 cases: 1 changed, 1 only in new.jsonl, 1 same",
        "case order: changed",
        *("  " + text for text in (TODAY + "\n" + SENT).splitlines()),
        "case later: only in new.jsonl",
        "  turn 1 'bye': added",
        "    + Goodbye!",
        "same: case-1",
    ])
    html = shown._repr_html_()
    assert html.count("<details open") == 2 and 'data-case="order"' in html and 'data-case="case-1"' not in html
    assert "only in new.jsonl</span> · case later" in html and "same: case-1" in html


def test_case_picks_one_case_of_each_suite(ip: Any, suites: tuple[Path, Path]) -> None:
    old, new = suites
    _, out = line(ip, f"diff {old} {new} --case order --text")
    assert out.stdout == TODAY + "\n" + SENT + "\n"
    assert_error(line(ip, f"diff {new} {old} --case later")[1],  # a case one side lacks is named
                 "diff B: no case 'later' in old.jsonl (its cases: case-1, order)")


def test_a_suite_against_the_report_of_its_check_and_steps_inside_variables(ip: Any, suites: tuple[Path, Path]) -> None:
    loud = 'function Create(ctx, messages) { ctx.Send({type: "loading", props: {message: "hm"}}); return {messages}; }'
    suite = Suite(suites[0])
    report = suite.check(hooks=lambda: hooks_from_js(loud), concurrency=1)
    assert report.changed == ["case-1", "order"]
    ip.user_ns.update(suite=suite, report=report)
    added = '    + outputs[1]: {"props":{"message":"hm"},"type":"loading"}'
    _, out = line(ip, "diff suite report --text")
    assert out.stdout.splitlines() == [
        "2 cases: 2 changed",
        "case case-1: changed", "  turn 1 'hi': changed", added,
        "case order: changed", "  turn 1 'Where is 42?': changed", added,
    ]
    # a case by its place in the Suite and by its id in the report; a suite file's case by --case
    expected = f"turn 1 'Where is 42?': changed\n{added[2:]}\n"
    assert line(ip, "diff suite.cases[1] report.cases[order] --text")[1].stdout == expected
    assert line(ip, "diff \"suite.cases[-1]\" \"report.cases['order']\" --text")[1].stdout == expected
    assert line(ip, f"diff {suites[0]} report --case order --text")[1].stdout == expected
    assert ip.shown == []


def test_identical_runs_say_so(ip: Any, suites: tuple[Path, Path]) -> None:
    ip.user_ns["ctx"] = conversation(("hi", "Hello!"))
    assert line(ip, "diff ctx ctx --text")[1].stdout == "same: turn 1\n"
    assert line(ip, f"diff {suites[0]} {suites[0]} --text")[1].stdout == "2 cases: 2 same\n"


def test_help_names_the_subcommand(ip: Any) -> None:
    _, out = line(ip, "help diff")
    assert out.stdout.startswith("usage: %agentctx diff [--case ID] [--text] [--result NAME] A B\n")
    assert "Two suites (files, Suite or SuiteReport) are compared case by case by id." in " ".join(out.stdout.split())


@pytest.mark.parametrize(("command", "fragments"), [
    ("diff ctx", ("diff: the following arguments are required: B",)),
    ("diff ctx nothing_here", ("diff B: no variable or file named 'nothing_here'",)),
    ("diff missing.jsonl ctx", ("diff A: no such file: 'missing.jsonl'",)),
    ("diff number ctx", ("diff A: number holds a int, not a run to compare",)),
    ("diff ctx ctx.nope", ("diff B: ctx.nope: a Context has no attribute 'nope'",)),
    ("diff ctx ctx._messages", ("diff B: ctx._messages: a Context has no attribute '_messages'",)),
    ("diff pairs[5] ctx", ("diff A: pairs[5]: no item [5] in a list (it has 1)",)),
    ("diff ctx ctx --case order", ("diff: --case order picks a case of a suite, and neither A (ctx) nor B (ctx) is one",)),
    ("diff ctx ctx --result 2x", ("diff: '2x' is not a valid Python variable name",)),
])
def test_bad_arguments_are_one_line_naming_the_argument(ip: Any, command: str, fragments: tuple[str, ...]) -> None:
    ip.user_ns.update(ctx=conversation(("hi", "Hello!")), number=7, pairs=[conversation(("hi", "Hello!"))])
    before = set(ip.user_ns)
    result, out = line(ip, command)
    assert result is None and ip.shown == [] and set(ip.user_ns) == before
    assert_error(out, *fragments)


def test_suite_arguments_that_do_not_fit(ip: Any, suites: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = suites
    ip.user_ns["ctx"] = conversation(("hi", "Hello!"))
    assert_error(line(ip, f"diff {old} ctx")[1],
                 "diff: A (old.jsonl) is a suite of 2 cases and B (ctx) one conversation: pick a case with --case ID")
    assert_error(line(ip, f"diff {old} {new} --case nope")[1],
                 "diff A: no case 'nope' in old.jsonl (its cases: case-1, order)")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "suite", "format": "agentctx-suite/1", "cases": 1}\n{"type": "case"}\n')
    assert_error(line(ip, f"diff {broken} {new}")[1], f"diff A: {broken}:2: the case's 'id' is missing or not a str")
    assert_error(line(ip, f"diff {new} {tmp_path}")[1], f"diff B: '{tmp_path}' is a directory")
    assert ip.shown == []
