"""Suite.record / Suite(path).check: a set of conversations recorded once, checked offline against changed
hooks (issue 22). The model is a real Model (its own stream of events), recorded through ReplayModel."""

from __future__ import annotations

import os
import signal
import threading

import orjson
import pytest

from agentctx_widgets import hooks_from_js, hooks_from_python
from agentctx_widgets.suite import Suite, SuiteFileError, SuiteReport

BRIEF = 'function Create(ctx, messages) { return { messages: [{role: "system", content: "Be brief."}, ...messages] }; }'
VERY_BRIEF = BRIEF.replace("Be brief.", "Be very brief.")
LOUD = BRIEF.replace("{ return", '{ ctx.Send({type: "loading", props: {message: "hm"}}); return')
THROWS = BRIEF.replace("{ return", '{ if (messages[messages.length - 1].content === "two") throw new Error("no twos"); return')


class Echo:
    """Answers 'You said: <last user text>' (system prompt count shown), as a model's event stream."""

    def __init__(self) -> None:
        self.calls = 0

    def stream(self, messages, *, options=None):
        self.calls += 1
        last = messages[-1]["content"][0]["text"]
        systems = sum(1 for message in messages if message["type"] == 1)
        yield {"type": "start", "model": "echo"}
        yield {"type": "text_start", "contentIndex": 0}
        yield {"type": "text_delta", "contentIndex": 0, "delta": f"You said: {last}"}
        yield {"type": "text_delta", "contentIndex": 0, "delta": f" ({systems} system)"}
        yield {"type": "text_end", "contentIndex": 0}
        yield {"type": "done", "reason": "stop"}


CASES = ["hi", ["one", "two"], {"id": "greet", "turns": ["hello"]}]


@pytest.fixture
def suite(tmp_path):
    model = Echo()
    recorded = Suite.record(tmp_path / "suite.jsonl", CASES, model=model, hooks=lambda: hooks_from_js(BRIEF),
                            concurrency=2)
    assert model.calls == 4  # one model call per turn: 1 + 2 + 1
    return recorded


def test_the_file_is_a_header_and_one_line_per_case_with_its_calls_and_results(suite):
    lines = [orjson.loads(line) for line in suite.path.read_bytes().splitlines()]
    assert lines[0] == {"type": "suite", "format": "agentctx-suite/1", "cases": 3}
    assert [(line["id"], line["turns"], len(line["calls"]), len(line["results"])) for line in lines[1:]] == [
        ("case-1", ["hi"], 1, 1), ("case-2", ["one", "two"], 2, 2), ("greet", ["hello"], 1, 1)]
    second = lines[2]["results"][1]
    assert second["messages"][0] == {"type": 2, "content": [{"type": "text", "text": "two"}]}
    assert second["messages"][1]["content"] == [{"type": "text", "text": "You said: two (1 system)"}]
    assert second["error"] is None


def test_the_same_hooks_pass_every_case_offline(suite):
    report = Suite(suite.path).check(hooks=lambda: hooks_from_js(BRIEF))
    assert isinstance(report, SuiteReport) and report.ok
    assert report.passed == ["case-1", "case-2", "greet"] and report.changed == report.failed == []
    # Echo reports no usage and no table knows "echo": the kit's estimate is unpriced, never $0
    headline, cost, how = str(report).splitlines()
    assert (headline, cost) == ("3 cases: 3 passed", "cost: recorded unpriced, checked unpriced")
    assert how.startswith("unpriced: echo — genai-prices ") and "prices={'echo': 'free'}" in how
    assert report.assert_ok() is report


def test_a_hook_that_changes_the_model_request_is_model_changed_naming_the_change(suite):
    report = suite.check(hooks=lambda: hooks_from_js(VERY_BRIEF))
    assert report.model_changed == ["case-1", "case-2", "greet"]
    reason = report.cases["case-2"].reason
    assert reason.startswith("turn 1: replay: request ") and "in this case's recordings" in reason
    assert '-          "text": "Be brief.",' in reason and '+          "text": "Be very brief.",' in reason
    assert reason.endswith("(re-record it: suite.check(update=True, model=<a real model>))")


def test_a_hook_that_adds_an_output_changes_every_turn_and_assert_ok_fails_with_the_diff(suite):
    report = suite.check(hooks=lambda: hooks_from_js(LOUD))
    assert report.changed == ["case-1", "case-2", "greet"]
    case = report.cases["case-2"]
    assert [turn.status for turn in case.diff.turns] == ["changed", "changed"]
    assert case.summary == "turns 1, 2: outputs"
    with pytest.raises(AssertionError) as caught:
        report.assert_ok()
    text = str(caught.value)
    assert text.startswith("3 cases: 0 passed, 3 changed\n\ncase-1: changed\n  turn 1 'hi': changed\n")
    assert '    + outputs[1]: {"props":{"message":"hm"},"type":"loading"}' in text


def test_a_turn_that_fails_now_is_failed_with_its_reason_and_the_rest_still_run(suite):
    report = suite.check(hooks=lambda: hooks_from_js(THROWS))
    assert report.failed == ["case-2"] and report.passed == ["case-1", "greet"]
    assert report.cases["case-2"].reason.startswith("turn 2: ") and "no twos" in report.cases["case-2"].reason


def test_update_re_records_the_model_changed_cases_and_then_they_pass(suite):
    with pytest.raises(ValueError, match="pass the model as model="):
        suite.check(hooks=lambda: hooks_from_js(VERY_BRIEF), update=True)
    model = Echo()
    first = suite.check(hooks=lambda: hooks_from_js(VERY_BRIEF), update=True, model=model)
    assert first.model_changed == ["case-1", "case-2", "greet"] and model.calls == 4
    assert Suite(suite.path).check(hooks=lambda: hooks_from_js(VERY_BRIEF)).ok


def test_a_hook_factory_is_called_once_per_thread_and_its_hook_sets_are_closed(suite):
    made, closed = [], []
    lock = threading.Lock()

    def factory():
        hooks = hooks_from_js(BRIEF)
        close = hooks.close
        hooks.close = lambda: (closed.append(id(hooks)), close())
        with lock:
            made.append((threading.get_ident(), id(hooks)))
        return hooks

    assert suite.check(hooks=factory, concurrency=2).ok
    threads = [thread for thread, _ in made]
    assert 1 <= len(made) <= 2 and len(set(threads)) == len(threads)
    assert sorted(closed) == sorted(hook_set for _, hook_set in made)


def test_python_hooks_and_no_hooks_work_too(tmp_path):
    hooks = hooks_from_python({"create": lambda ctx, messages: {"messages": [
        {"role": "system", "content": "Be brief."}, *messages]}})
    recorded = Suite.record(tmp_path / "py.jsonl", ["hi"], model=Echo(), hooks=hooks)
    assert recorded.check(hooks=hooks).ok
    assert recorded.check().model_changed == ["case-1"]  # no system prompt now: another request


def test_bad_cases_are_refused_before_anything_runs(tmp_path):
    model = Echo()
    with pytest.raises(ValueError, match=r"cases\[1\]: id 'a' is also cases\[0\]'s"):
        Suite.record(tmp_path / "x.jsonl", [{"id": "a", "turns": ["x"]}, {"id": "a", "turns": ["y"]}], model=model)
    with pytest.raises(ValueError, match=r"cases\[0\]: unknown key \['turn'\]"):
        Suite.record(tmp_path / "x.jsonl", [{"turn": "x"}], model=model)
    with pytest.raises(TypeError, match=r"cases\[0\]\.turns\[1\]: a turn is a string or a user message dict, not a int"):
        Suite.record(tmp_path / "x.jsonl", [{"turns": ["x", 3]}], model=model)
    assert model.calls == 0 and not (tmp_path / "x.jsonl").exists()


def test_a_suite_file_that_is_not_one_is_refused_naming_file_and_line(tmp_path, suite):
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"type": "session"}\n')
    with pytest.raises(SuiteFileError, match=r"other.jsonl: not a suite file"):
        Suite(other)
    lines = suite.path.read_bytes().splitlines()
    case = orjson.loads(lines[2])
    case["results"] = case["results"][:1]
    other.write_bytes(b"\n".join([lines[0], lines[1], orjson.dumps(case)]) + b"\n")
    with pytest.raises(SuiteFileError, match=r"other.jsonl:3: case 'case-2' has 2 turns but 1 results"):
        Suite(other)
    other.write_bytes(lines[0] + b"\n" + b"[" * 300 + b"]" * 300 + b"\n")
    with pytest.raises(SuiteFileError, match=r"other.jsonl:2: "):
        Suite(other)


def test_a_forged_recording_in_a_suite_file_cannot_answer_and_the_case_fails(tmp_path, suite):
    lines = suite.path.read_bytes().splitlines()
    case = orjson.loads(lines[1])
    case["calls"][0]["request"]["messages"][-1]["content"][0]["text"] = "something else"
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(b"\n".join([lines[0], orjson.dumps(case), *lines[2:]]) + b"\n")
    report = Suite(forged).check(hooks=lambda: hooks_from_js(BRIEF))
    assert report.failed == ["case-1"] and report.passed == ["case-2", "greet"]
    assert "ReplayFileError" in report.cases["case-1"].reason and "key" in report.cases["case-1"].reason


def test_the_report_is_a_table_whose_changed_rows_open_to_their_diff(suite):
    page = suite.check(hooks=lambda: hooks_from_js(LOUD)).to_html()
    assert page.count('<tr data-case="') == 3
    assert "<details><summary>turns 1, 2: outputs</summary>" in page and "<ins>" in page
    assert "<script" not in page


CRASHY = BRIEF.replace("{ return", """{
  const said = messages[messages.length - 1].content;
  if (said === "crash") die();
  if (said === "bloat") { const kept = []; while (true) kept.push(new Array(100000).fill(said)); }
  return""")


def test_a_case_whose_hook_kills_its_worker_or_exhausts_its_memory_is_failed_and_the_rest_go_on(tmp_path):
    recorded = Suite.record(tmp_path / "crash.jsonl", ["one", "crash", "two", "bloat", "three"], model=Echo(),
                            hooks=lambda: hooks_from_js(BRIEF), concurrency=1)
    made = []

    def factory():  # die() SIGKILLs this hook set's own worker process from inside the call
        hooks = hooks_from_js(CRASHY, globals={"die": lambda: os.kill(hooks.worker_pid, signal.SIGKILL)},
                              memory_limit=64 << 20)
        made.append(hooks)
        return hooks

    report = recorded.check(hooks=factory, concurrency=2)
    assert report.failed == ["case-2", "case-4"] and report.passed == ["case-1", "case-3", "case-5"]
    died, bloated = report.cases["case-2"].reason, report.cases["case-4"].reason
    assert died.startswith("turn 1: Create") and "JavaScript engine process ended unexpectedly" in died, died
    assert bloated.startswith("turn 1: ") and "memory" in bloated, bloated
    assert 1 <= len(made) <= 2


KERNEL_CODE = """
from agentctx_widgets import ScriptedModel, hooks_from_js
from agentctx_widgets.suite import Suite
import tempfile, pathlib
BRIEF = %r
path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
echo = lambda messages: "You said: " + messages[-1]["content"][0]["text"]
Suite.record(path, ["a", ["b", "c"], "d"], model=ScriptedModel(echo), hooks=lambda: hooks_from_js(BRIEF), concurrency=2)
report = Suite(path).check(hooks=lambda: hooks_from_js(BRIEF.replace("{ return", '{ ctx.Send("x"); return')))
"""


def test_in_a_kernel_record_and_check_show_a_progress_line_updated_in_place_that_ends_as_the_report():
    from jupyter_client.manager import start_new_kernel

    from agentctx_widgets.suite.report import PROGRESS_MIME

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        sent = client.execute(KERNEL_CODE % BRIEF)
        shown: dict[str, list[dict]] = {}  # display id -> its bundles, first shown then each update
        while True:
            message = client.get_iopub_msg(timeout=60)
            if message["parent_header"].get("msg_id") != sent:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind in ("display_data", "update_display_data"):
                shown.setdefault(content["transient"]["display_id"], []).append(content["data"])
            elif kind == "error":
                raise AssertionError("\n".join(content["traceback"]))
            elif kind == "status" and content["execution_state"] == "idle":
                break
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert len(shown) == 2  # one line for record, one for check
    recording, checking = shown.values()
    assert recording[0][PROGRESS_MIME] == {"verb": "recording", "done": 0, "total": 3, "counts": {}}
    assert recording[0]["text/plain"] == "recording: 0/3 cases"
    assert recording[-1]["text/plain"].startswith("recorded 3 cases to ")
    assert recording[-1]["text/plain"].endswith(".jsonl (unpriced)")  # a scripted model: no price, never $0
    assert checking[0]["text/plain"] == "checking: 0/3 cases"
    assert '<progress max="3" value="0">' in checking[0]["text/html"]
    assert checking[-2]["text/plain"] == "checking: 3/3 cases (3 changed)"  # the last count is always shown
    assert checking[-1]["text/plain"].startswith("3 cases: 0 passed, 3 changed\ncost: recorded unpriced, checked "
                                                 "unpriced\nunpriced: scripted — ")
    assert "\n\ncase-1: changed" in checking[-1]["text/plain"]
    assert '<table class="actx-suite">' in checking[-1]["text/html"]
    assert checking[-1][PROGRESS_MIME]["done"] == 3


def test_outside_a_kernel_a_run_displays_nothing(tmp_path, capsys, monkeypatch):
    import IPython  # imported, but no shell runs: nothing is shown

    # an earlier test module may have started a terminal InteractiveShell in this process: this test is of
    # a process with none, as a script is
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    Suite.record(tmp_path / "quiet.jsonl", ["hi"], model=Echo(), hooks=lambda: hooks_from_js(BRIEF)).check(
        hooks=lambda: hooks_from_js(BRIEF))
    assert capsys.readouterr() == ("", "")
