"""A failed turn fails like a Python call: ``run_turn`` raises ``TurnError`` unless ``check=False``
(issue 18 §3: a relative recording path that did not resolve returned quietly, and the next line failed
with an unrelated ``TypeError``)."""

from __future__ import annotations

import pytest

from agentctx_widgets import Context, ScriptedModel, TurnError, hooks_from_js, hooks_from_python, run_turn
from agentctx_widgets.models import ReplayModel


class Broken:
    model_id = "broken"

    def stream(self, *args, **kwargs):
        raise ConnectionError("the server hung up")


def test_a_model_failure_raises_with_the_failed_result_and_commits_no_reply():
    ctx = Context(name="c")
    run_turn(ctx, "hi", model=ScriptedModel(["Hello"]))
    before = ctx.messages()
    with pytest.raises(TurnError) as raised:
        run_turn(ctx, "again", model=Broken())
    error = raised.value
    assert error.result.ok is False and error.result.error["message"] == "ConnectionError: the server hung up"
    assert str(error).splitlines()[0] == "the turn failed [TURN_ERROR]: ConnectionError: the server hung up"
    assert ctx.messages()[: len(before)] == before and [m["type"] for m in ctx.messages()[len(before):]] == [2]


def test_check_false_returns_the_failed_result():
    result = run_turn(Context(), "hi", model=Broken(), check=False)
    assert not result.ok and "the server hung up" in result.error["message"]


def test_a_javascript_hook_that_throws_names_the_hook_and_its_line():
    hooks = hooks_from_js("function Create(ctx, messages) {\n  ctx.Sendd({type: 'text'});\n}\n")
    with pytest.raises(TurnError) as raised:
        run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["x"]))
    first = str(raised.value).splitlines()[0]
    assert first.startswith("the Create hook (line 2) failed [HOOK_THREW]: ")
    assert "not a function" in first
    assert raised.value.code == "HOOK_THREW" and raised.value.result.error["hook"] == "Create"


def test_a_python_hook_that_raises_names_the_hook():
    def create(ctx, messages):
        raise ValueError("bad input")

    with pytest.raises(TurnError, match=r"Create hook.*bad input") as raised:
        run_turn(Context(), "hi", hooks=hooks_from_python(create=create), model=ScriptedModel(["x"]))
    assert raised.value.result.hooks_called == ["Create", "Error"] or "Create" in raised.value.result.hooks_called


def test_a_recording_that_is_not_there_says_so_at_the_run_turn_line(tmp_path, monkeypatch):
    model = ReplayModel(tmp_path / "nowhere" / "x.jsonl", mode="replay")
    with pytest.raises(TurnError, match="not recorded in") as raised:
        run_turn(Context(), "hi", model=model)
    assert raised.value.code == "REPLAY_MISS" and raised.value.report["what"] == "the model"
    monkeypatch.chdir(tmp_path)  # the README's case: a relative path from a notebook in another folder
    with pytest.raises(TurnError) as raised:
        run_turn(Context(), "hi", model=ReplayModel("recordings/models.jsonl", mode="replay"))
    assert (f"recordings/models.jsonl (no such file yet; a relative path counts from the working directory, "
            f"{tmp_path})") in str(raised.value)


def test_a_yao_assistant_request_that_fails_raises_too(tmp_path):
    folder = tmp_path / "assistants" / "t"
    folder.mkdir(parents=True)
    (folder / "package.yao").write_text('{"name": "t", "connector": "gpt-4o"}')
    hooks = hooks_from_js("function Create(ctx, messages) {\n  throw new Error('no way');\n}\n")
    with pytest.raises(TurnError, match="no way") as raised:
        run_turn(Context(), "hi", assistant=str(folder), hooks=hooks, model=ScriptedModel(["x"]))
    assert raised.value.result.ok is False and type(raised.value.result).__name__ == "YaoTurnResult"
    quiet = run_turn(Context(), "hi", assistant=str(folder), hooks=hooks, model=ScriptedModel(["x"]), check=False)
    assert quiet.ok is False


def test_a_hooks_cell_error_names_the_cell_line_and_the_member():
    """Issue 18 §4: "line 2" counted from the hook, JupyterLab showed it on line 3, and ``Sendd`` was unnamed."""
    hooks = hooks_from_js("function Create(ctx, messages) {\n  const n = 1; ctx.Sendd({type: 'text'});\n}\n")
    hooks.first_line, hooks.origin = 2, "%%agentctx hooks greet"  # as the magic sets them for a cell's body
    result = run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["x"]), check=False)
    assert result.error["line"] == 3 and result.error["member"] == "ctx.Sendd"
    assert result.error["message"] == ("Create (%%agentctx hooks greet, line 3): TypeError: not a function "
                                       "(ctx.Sendd)")
    with pytest.raises(TurnError) as raised:
        run_turn(Context(), "hi", hooks=hooks, model=ScriptedModel(["x"]))
    assert str(raised.value).splitlines() == [
        "the Create hook (%%agentctx hooks greet, line 3) failed [HOOK_THREW]: TypeError: not a function (ctx.Sendd)",
        "hint: ctx.Sendd is not a function: check its spelling; fix the hook at that line (its console lines are on "
        "result.console)",
    ]


def test_a_failed_turns_document_says_what_failed_in_the_text_nbval_compares():
    from agentctx_widgets.hooks.errors import failure_report
    from agentctx_widgets.widget.document import TurnPart

    hooks = hooks_from_js("function Create(ctx, messages) {\n  ctx.Sendd({type: 'text'});\n}\n")
    ctx = Context(name="c")
    result = run_turn(ctx, "hi", hooks=hooks, model=ScriptedModel(["x"]), check=False)
    part = TurnPart(title="c", context=ctx.messages(), failure=failure_report(result.error),
                    diagnostics=[{"code": "shared_slot", "message": "two messages share a slot", "where": "send 2"}])
    lines = part.text().splitlines()
    assert lines[-3:] == [
        "failed: the Create hook (line 2) failed [HOOK_THREW]: TypeError: not a function (ctx.Sendd)",
        "hint: ctx.Sendd is not a function: check its spelling; fix the hook at that line (its console lines are on "
        "result.console)",
        "diagnostic shared_slot (send 2): two messages share a slot",
    ]
    page = part.html(css=False)
    assert "not a function (ctx.Sendd)" in page and "diagnostic shared_slot (send 2)" in page


@pytest.mark.parametrize(("line", "column", "callee"), [
    # (line, column) as QuickJS-NG reports them for these calls (measured: a hook calling each one)
    ("  ctx.Sendd({});", 7, "ctx.Sendd"),  # on the member
    ("  foo();", 3, "foo"),  # on the callee
    ("  new ctx.Nope();", 7, "ctx.Nope"),
    ("  [1].mapp(x => x);", 12, "mapp"),  # inside the parentheses
    ("  let o = {}; o.fn ( 1 );", 22, "o.fn"),
    ("  ctx.Send(ctx.nope(1));", 16, "ctx.nope"),  # the inner call, not the outer one
    ("  ctx?.Sendd(1);", 8, "ctx?.Sendd"),
    ("  ctx['Sendd'](1);", 3, None),  # no name to read back
])
def test_the_callee_of_a_call_that_is_not_a_function_is_read_back_from_the_source(line, column, callee):
    from agentctx_widgets.hooks.js_hooks import member_at

    assert member_at(f"function Create(ctx) {{\n{line}\n}}", 2, column) == callee


def test_a_chain_continued_from_the_line_above_keeps_its_start():
    from agentctx_widgets.hooks.js_hooks import member_at

    assert member_at("function Create(ctx) {\n  ctx\n    .Sendd(1);\n}", 3, 6) == "ctx.Sendd"


def test_a_load_error_counts_lines_from_first_line():
    with pytest.raises(Exception) as raised:
        hooks_from_js("function Create(ctx) {\n  return 1 +;\n}", first_line=2, origin="%%agentctx hooks bad")
    assert "(%%agentctx hooks bad, line 3)" in str(raised.value)
