"""``python -m agentctx_widgets suite check SUITE --hooks FILE | --assistant DIR`` (issue 22, "outside a notebook"),
run as a real child process on a suite recorded here (a ScriptedModel that echoes, JavaScript hooks): exit
code 0 when every case passed, 1 with the text diff when something differs, 2 and one ``agentctx:`` line
naming the file for bad input. Each run is a child with a timeout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx_widgets import hooks_from_js
from agentctx_widgets.models import ScriptedModel
from agentctx_widgets.suite import Suite

pytestmark = pytest.mark.timeout(120)

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
VERY_BRIEF = BASE.replace("Be brief.", "Be very brief.")
CASES = ["hi", ["one", "two"], {"id": "greet", "turns": ["hello"]}]
GPT_4O = {"usage": {"prompt_tokens": 1000, "completion_tokens": 100}, "model": "gpt-4o"}
# gpt-4o at $2.50 / $10.00 per million input / output tokens (OpenAI's price page): 1000 * 2.5e-6 + 100 * 1e-5 =
# $0.0035 a call; the suite's 4 turns make 4 calls: $0.014
SAME_COST = "cost: recorded $0.014, checked $0.014"


def echo(messages: list[dict]) -> str:
    return "You said: " + messages[-1]["content"][0]["text"]


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentctx_widgets", "suite", "check", *args], capture_output=True,
                          text=True, timeout=100, cwd=cwd)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A recorded suite (``greetings.suite.jsonl``) and hook files beside it."""
    Suite.record(tmp_path / "greetings.suite.jsonl", CASES, model=ScriptedModel(echo, **GPT_4O),
                 hooks=lambda: hooks_from_js(BASE), concurrency=2)
    for name, source in (("base.js", BASE), ("hello.js", HELLO), ("very_brief.js", VERY_BRIEF)):
        (tmp_path / name).write_text(source, encoding="utf-8")
    return tmp_path


def one_error_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and done.stdout == "", (done.returncode, done.stdout, done.stderr)
    assert lines[0].startswith("agentctx: suite check: "), lines[0]
    return lines[0]


def test_the_hooks_it_was_recorded_with_pass_every_case_exit_0(folder):
    done = run_cli("greetings.suite.jsonl", "--hooks", "base.js", "--concurrency", "2", cwd=folder)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"greetings.suite.jsonl: 3 cases: 3 passed\n{SAME_COST}\n", "")


def test_a_changed_hook_exits_1_printing_old_and_new_text_of_the_case_it_touches(folder):
    done = run_cli("greetings.suite.jsonl", "--hooks", "hello.js", "--concurrency", "2", cwd=folder)
    assert done.returncode == 1 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == "case-1: changed" and lines[1] == "  turn 1 'hi': changed"
    assert "      - You said: hi" in lines and "      + Hello! You said: hi" in lines
    assert not any(line.startswith(("case-2:", "greet:")) for line in lines)  # untouched cases are not printed
    assert lines[-2:] == ["greetings.suite.jsonl: 3 cases: 2 passed, 1 changed", SAME_COST]  # the same calls, priced as recorded


def test_a_hook_that_changes_the_model_request_is_model_changed_naming_the_part(folder):
    done = run_cli("greetings.suite.jsonl", "--hooks", "very_brief.js", "--concurrency", "2", cwd=folder)
    assert done.returncode == 1
    assert done.stdout.count(": model_changed (turn 1: replay: request ") == 3
    assert '-          "text": "Be brief.",' in done.stdout and '+          "text": "Be very brief.",' in done.stdout
    assert done.stdout.splitlines()[-2:] == ["greetings.suite.jsonl: 3 cases: 0 passed, 3 model changed",
                                             "cost: recorded $0.014, checked none (3 cases not priced: model changed or "
                                             "crashed)"]


def test_python_and_typescript_hook_files_load_and_a_ts_error_names_its_own_line(folder):
    (folder / "hooks.py").write_text(
        'def Create(ctx, messages):\n    return {"messages": [{"role": "system", "content": "Be brief."}, *messages]}\n',
        encoding="utf-8")
    (folder / "factory.py").write_text(
        "from agentctx_widgets import hooks_from_js\n"
        f"SOURCE = {BASE!r}\n"
        "def hooks():\n    return hooks_from_js(SOURCE)\n", encoding="utf-8")
    # TypeScript: types stripped, lines kept, so the throw on line 5 is reported as line 5.
    (folder / "hooks.ts").write_text(
        "interface Msg { role: string; content: string }\n"
        "function Create(ctx: any, messages: Msg[]): { messages: Msg[] } {\n"
        '  const system: Msg = { role: "system", content: "Be brief." };\n'
        "  const last: string = messages[messages.length - 1].content;\n"
        '  if (last === "two") throw new Error("no twos");\n'
        "  return { messages: [system, ...messages] };\n"
        "}\n", encoding="utf-8")
    for hooks in ("hooks.py", "factory.py"):
        done = run_cli("greetings.suite.jsonl", "--hooks", hooks, "--concurrency", "2", cwd=folder)
        assert (done.returncode, done.stdout.splitlines()[-2:]) == (0, ["greetings.suite.jsonl: 3 cases: 3 passed",
                                                                       SAME_COST]), \
            (hooks, done.stdout, done.stderr)
    done = run_cli("greetings.suite.jsonl", "--hooks", "hooks.ts", "--concurrency", "2", cwd=folder)
    assert done.returncode == 1, done.stderr
    assert "case-2: failed (turn 2: Create (hooks.ts, line 5): Error: no twos)" in done.stdout
    # case-2 failed at turn 2, before its model call: its checked turns made 1 call of the 2 recorded
    assert done.stdout.splitlines()[-2:] == ["greetings.suite.jsonl: 3 cases: 2 passed, 1 failed",
                                             "cost: recorded $0.014, checked $0.0105 (Δ -$0.0035)"]


def test_bad_input_is_one_line_naming_the_file_exit_2(folder):
    assert "missing.suite.jsonl: cannot read the suite file" in one_error_line(
        run_cli("missing.suite.jsonl", "--hooks", "base.js", cwd=folder))
    (folder / "session.jsonl").write_text('{"type": "session"}\n', encoding="utf-8")
    assert "session.jsonl: not a suite file" in one_error_line(run_cli("session.jsonl", "--hooks", "base.js", cwd=folder))
    (folder / "broken.js").write_text("function Create(ctx, messages) {\n  return {messages: [\n", encoding="utf-8")
    line = one_error_line(run_cli("greetings.suite.jsonl", "--hooks", "broken.js", cwd=folder))
    assert line.startswith("agentctx: suite check: --hooks: hook (broken.js, line 3): could not load the source: "
                           "SyntaxError"), line
    (folder / "nothing.py").write_text("x = 1\n", encoding="utf-8")
    assert one_error_line(run_cli("greetings.suite.jsonl", "--hooks", "nothing.py", cwd=folder)) == (
        "agentctx: suite check: --hooks: nothing.py: defines none of the hooks (functions named Create, Before, "
        "After, Done, Error, or a `hooks` attribute)")
    (folder / "raises.py").write_text("def Create(ctx, m):\n    return {}\nraise RuntimeError('boom')\n", encoding="utf-8")
    assert one_error_line(run_cli("greetings.suite.jsonl", "--hooks", "raises.py", cwd=folder)) == (
        "agentctx: suite check: --hooks: raises.py:3: importing it raised RuntimeError: boom")
    assert one_error_line(run_cli("greetings.suite.jsonl", "--hooks", "notes.txt", cwd=folder)) == (
        "agentctx: suite check: --hooks: notes.txt: not a hooks file (a .js, .ts or .py file)")
    assert "--assistant: " in one_error_line(run_cli("greetings.suite.jsonl", "--assistant", str(folder), cwd=folder))
    assert not (folder / "report.html").exists()


def test_html_writes_a_static_page_with_every_case_and_the_changed_ones_diff(folder):
    done = run_cli("greetings.suite.jsonl", "--hooks", "hello.js", "--concurrency", "2", "--html", "report.html",
                   cwd=folder)
    assert done.returncode == 1 and done.stdout.startswith("wrote report.html (")
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    for case in ("case-1", "case-2", "greet"):
        assert f'<tr data-case="{case}">' in page
    assert "<ins>Hello! </ins>" in page or "<ins>Hello!</ins>" in page
    assert '<tr class="actx-suite-total"><td>total</td>' in page and page.count(">$0.014</span>") == 2  # recorded, checked
    done = run_cli("greetings.suite.jsonl", "--hooks", "base.js", "--html", str(folder), cwd=folder)
    assert one_error_line(done) == f"agentctx: suite check: --html: {folder}: is a directory; give a file name"


def test_assistant_checks_with_a_yao_assistant_directory(tmp_path):
    shutil.copytree(Path(__file__).parent / "fixtures" / "yao_runner", tmp_path / "app")
    assistant = tmp_path / "app" / "assistants" / "tests" / "runner-echo"
    Suite.record(tmp_path / "yao.suite.jsonl", ["hello", ["one", "two"]], model=ScriptedModel(echo),
                 assistant=assistant, concurrency=2)
    done = run_cli("yao.suite.jsonl", "--assistant", str(assistant), "--concurrency", "2", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    # the scripted model reports no usage and no table knows it: unpriced, never $0
    assert done.stdout.splitlines()[:2] == ["yao.suite.jsonl: 2 cases: 2 passed",
                                            "cost: recorded unpriced, checked unpriced"]
    assert done.stdout.splitlines()[2].startswith("unpriced: scripted — ") and "$0" not in done.stdout
