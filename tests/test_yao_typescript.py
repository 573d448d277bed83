"""Yao TypeScript hooks in QuickJS: sucrase inside the worker, imports linked as Yao links them, errors at
``.ts`` lines.

The fixtures under tests/fixtures/yao/ are ours, modeled on YaoApp/yao-dev-app's assistants (tests/create,
tests/next: ``function Create`` / ``function Next`` at the top level of src/index.ts, not exported; ``import
{ Process, time } from "@yao/runtime"``, ``import { basic } from "./basic"``). Every expected line below was
read off the fixture (``grep -n``), not off our output.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentctx_widgets import Output
from agentctx_widgets.hooks import (
    HookContext,
    HookLoadError,
    HookReturnError,
    Hooks,
    HookThrewError,
    HookTimeoutError,
)
from agentctx_widgets.yao import TypeScriptHooks, TypeScriptLoadError, load_ts_module_set

FIXTURES = Path(__file__).parent / "fixtures" / "yao"
ASSISTANT = FIXTURES / "assistant" / "src"


def call(hooks, name, *args):
    return asyncio.run(hooks.call(name, HookContext(output=Output(), locale="fr"), *args))


@pytest.fixture(scope="module")
def recorded():
    """The assistant's hooks with a recording process registry and sleep (one engine for the module)."""
    calls: list[tuple] = []
    slept: list[float] = []

    def find_user(user_id):
        calls.append(("models.user.find", user_id))
        return {"id": user_id, "name": "Ada"}

    hooks = load_ts_module_set(ASSISTANT, processes={"models.user.find": find_user}, sleep=slept.append)
    yield hooks, calls, slept
    hooks.close()


def test_the_hook_set_has_create_and_next_and_is_a_hooks():
    """Create and Next are found though index.ts does not export them (Yao's index.ts declares them at its
    top level: yao-dev-app assistants/tests/create/src/index.ts)."""
    hooks = load_ts_module_set(ASSISTANT, processes={})
    try:
        assert isinstance(hooks, TypeScriptHooks)
        assert isinstance(hooks, Hooks)
        assert hooks.names == frozenset({"Create", "Next"})
    finally:
        hooks.close()


def test_create_runs_through_relative_imports_enums_generics_and_process(recorded):
    hooks, calls, slept = recorded
    calls.clear()
    slept.clear()
    result = call(hooks, "Create", [{"role": "user", "content": "hi"}], {"tags": ["a", "b", "c"]})
    # basic("Ada", Tone.Warm) is `Hello, Ada!`; pick(tags, 2) the first two; locale from ctx (no option)
    assert result == {
        "messages": [{"role": "system", "content": "Hello, Ada!"}, {"role": "user", "content": "hi"}],
        "locale": "fr",
        "tags": ["a", "b"],
    }
    assert calls == [("models.user.find", 7)]
    assert slept == [0.001]  # time.Sleep(1) from @yao/runtime: 1 ms


def test_optional_chaining_and_a_null_return(recorded):
    hooks, calls, _ = recorded
    calls.clear()
    assert call(hooks, "Create", [{"role": "user", "content": "nothing"}]) is None
    assert calls == []  # returned before the Process call


def test_next_returns_what_yao_next_may_return(recorded):
    """Next's {data} is not a seed hook's shape: the Yao hook set checks only 'nothing or an object'."""
    hooks, _, _ = recorded
    assert call(hooks, "Next", {"completion": {"content": "abcd"}}) == {"data": {"echoed": 4}}
    assert call(hooks, "Next", {}) == {"data": {"echoed": 0}}


def test_a_throw_names_the_ts_file_and_line(recorded):
    hooks, _, _ = recorded
    with pytest.raises(HookThrewError) as caught:
        call(hooks, "Next", {"completion": {"content": "throw"}})
    error = caught.value
    assert (error.hook, error.file, error.line) == ("Next", "src/index.ts", 31)
    assert str(error) == "Next (line 31): Error: Next refused the completion (at src/index.ts:31)"
    assert error.stack.split("\n")[0] == "    at Next (src/index.ts:31)"


def test_a_throw_in_an_imported_module_names_that_module_and_the_caller(recorded):
    """src/lib/index.ts line 7 throws; the Next frame that called it is src/index.ts line 37."""
    hooks, _, _ = recorded
    with pytest.raises(HookThrewError) as caught:
        call(hooks, "Next", {"completion": {"content": "deep"}})
    error = caught.value
    assert (error.file, error.line, error.name) == ("src/lib/index.ts", 7, "TypeError")
    frames = [line.strip() for line in error.stack.split("\n") if "src/" in line]
    assert frames == ["at shout (src/lib/index.ts:7)", "at Next (src/index.ts:37)"]


def test_an_unregistered_process_is_a_javascript_error_naming_it(recorded):
    """Yao's text for an unknown process is "Exception|404:<name> not found" (gou process/process.go:461)."""
    hooks, _, _ = recorded
    with pytest.raises(HookThrewError) as caught:
        call(hooks, "Next", {"completion": {"content": "unknown process"}})
    error = caught.value
    assert (error.file, error.line, error.name) == ("src/index.ts", 34, "Error")
    assert error.detail == ('Error: Exception|404:models.missing.find not found (no Python callable is registered '
                            'under "models.missing.find" in processes=) (at src/index.ts:34)')


def test_a_process_that_raises_is_thrown_where_it_was_called(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.ts").write_text(
        'import { Process } from "@yao/runtime";\n'
        "function Create(ctx: any, messages: any[]) {\n"
        "  try {\n"
        '    Process("models.broken.find", 3);\n'
        "  } catch (error) {\n"
        "    return { caught: (error as Error).name + \": \" + (error as Error).message };\n"
        "  }\n"
        "}\n"
    )

    def explode(row):
        raise ValueError(f"no row {row}")

    hooks = load_ts_module_set(src, processes={"models.broken.find": explode})
    try:
        result = asyncio.run(hooks.call("Create", HookContext(output=Output()), []))
    finally:
        hooks.close()
    assert result == {"caught": "ProcessError: host function: Process 'models.broken.find' raised ValueError: no row 3"}


def test_process_is_also_a_global_as_in_yao(tmp_path):
    """Yao comments `@yao/runtime` imports out and runs Process as a global (gou runtime/v8/script.go:446-464)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.ts").write_text("function Create(ctx: any, messages: any[]) {\n"
                                  '  return { n: Process("count") as number };\n}\n')
    hooks = load_ts_module_set(src, processes={"count": lambda: 5})
    try:
        assert asyncio.run(hooks.call("Create", HookContext(output=Output()), [])) == {"n": 5}
    finally:
        hooks.close()


def test_a_non_object_return_is_refused_naming_the_hook(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.ts").write_text("export function Next(ctx: any, payload: any): number {\n  return 3;\n}\n")
    hooks = load_ts_module_set(src)
    try:
        with pytest.raises(HookReturnError, match=r"^Next: returned int; expected nothing \(null\) or an object$"):
            asyncio.run(hooks.call("Next", HookContext(output=Output()), {}))
    finally:
        hooks.close()


@pytest.mark.parametrize(
    ("fixture", "file", "line", "column", "message"),
    [
        # helper.ts line 4 `  const label: string | = ...`: the "=" is column 25 (counted by hand, 1-based)
        ("syntax_error", "src/helper.ts", 4, 25, "SyntaxError: Unexpected token"),
        # the transpiler passes a name declared twice; QuickJS refuses it at its second declaration
        ("engine_syntax_error", "src/index.ts", 6, None, "SyntaxError: invalid redefinition of lexical identifier"),
        ("escapes_src", "src/index.ts", 4, None, 'cannot import "../../outside": it leaves src/'),
        ("bare_import", "src/index.ts", 2, None,
         'cannot import "@scripts/lib/utils": only relative imports inside src/ ("./basic"), "@yao/runtime" and '
         '"@yao/agent" resolve here'),
        ("missing_module", "src/index.ts", 5, None,
         'cannot import "./nowhere": no module src/nowhere.ts, src/nowhere.js, src/nowhere/index.ts, '
         "src/nowhere/index.js"),
        ("top_level_throw", "src/settings.ts", 5, None,
         "the top-level code threw RangeError: settings.temperature is not set"),
    ],
)
def test_load_errors_name_the_file_and_line(fixture, file, line, column, message):
    with pytest.raises(TypeScriptLoadError) as caught:
        load_ts_module_set(FIXTURES / fixture / "src")
    error = caught.value
    assert isinstance(error, HookLoadError)
    assert (error.file, error.line, error.column, error.detail) == (file, line, column, message)
    where = f"{file}:{line}" + (f":{column}" if column else "")
    assert str(error) == f"{where}: {message}"


def test_a_missing_entry_is_a_load_error_listing_what_is_there(tmp_path):
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "util.ts").write_text("export const x = 1;\n")
    with pytest.raises(TypeScriptLoadError) as caught:
        load_ts_module_set(src)
    assert str(caught.value) == "src/index.ts: no entry module (found ['lib/util.ts'])"


def test_an_index_js_entry_and_a_js_module_load_too(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.js").write_text('import { twice, half } from "./math.js";\n'
                                  "function Create(ctx, messages) { return { n: twice(half(8)) }; }\n")
    (src / "math.js").write_text("export const twice = (n) => n * 2;\nexport const half = (n) => n / 2;\n")
    hooks = load_ts_module_set(src)
    try:
        assert asyncio.run(hooks.call("Create", HookContext(output=Output()), [])) == {"n": 8}
    finally:
        hooks.close()


@pytest.mark.parametrize(
    ("processes", "message"),
    [
        (["models.user.find"], "processes: expected a mapping of process name to callable, got list"),
        ({"": print}, "processes: a process name must be a non-empty string, got ''"),
        ({"models.user.find": 3}, "processes['models.user.find']: expected a callable, got int"),
    ],
)
def test_a_bad_process_registry_is_refused_before_anything_loads(processes, message):
    with pytest.raises(TypeError) as caught:
        load_ts_module_set(ASSISTANT, processes=processes)
    assert str(caught.value) == message


def test_an_endless_loop_names_the_loop_line_of_its_ts_file():
    """spin.ts's `while (true)` is line 4 (the engine says 2, the function's first line); Create called it
    from index.ts line 3."""
    hooks = load_ts_module_set(FIXTURES / "endless_loop" / "src", time_limit=1.0)
    try:
        with pytest.raises(HookTimeoutError) as caught:
            asyncio.run(hooks.call("Create", HookContext(output=Output()), [{"role": "user", "content": "x"}]))
    finally:
        hooks.close()
    error = caught.value
    assert (error.hook, error.file, error.line) == ("Create", "src/spin.ts", 4)
    assert [line.strip() for line in error.stack.split("\n") if "src/" in line] == [
        "at spin (src/spin.ts:2)", "at Create (src/index.ts:3)"]


def test_a_runtime_name_we_do_not_provide_throws_where_it_is_used(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.ts").write_text('import * as runtime from "@yao/runtime";\n'
                                  'import { log } from "@yao/runtime";\n'
                                  "function Create(ctx: any, messages: any[]) {\n"
                                  '  runtime.time.Sleep(0);\n'
                                  '  log.Info("hello");\n'
                                  "}\n")
    hooks = load_ts_module_set(src, sleep=lambda seconds: None)
    try:
        with pytest.raises(HookThrewError) as caught:
            asyncio.run(hooks.call("Create", HookContext(output=Output()), []))
    finally:
        hooks.close()
    assert (caught.value.file, caught.value.line) == ("src/index.ts", 5)
    assert caught.value.detail == ('Error: "@yao/runtime".log is not available here (agentctx-widgets provides '
                                   "Process and time) (at src/index.ts:5)")


def test_after_a_limit_the_fresh_engine_links_the_modules_again(tmp_path):
    """A hook past its limit gets a new worker (JsHooks): the modules are transpiled and linked anew, so
    module state starts over and the next call works."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "counter.ts").write_text("let calls: number = 0;\nexport function count(): number {\n  return ++calls;\n}\n")
    (src / "index.ts").write_text('import { count } from "./counter";\n'
                                  "function Create(ctx: any, messages: any[]) {\n"
                                  "  const n = count();\n"
                                  "  while (messages.length === 0) {}\n"
                                  "  return { n };\n"
                                  "}\n")
    hooks = load_ts_module_set(src, time_limit=0.3)
    message = [{"role": "user", "content": "x"}]
    try:
        first = [asyncio.run(hooks.call("Create", HookContext(output=Output()), message)) for _ in range(2)]
        with pytest.raises(HookTimeoutError) as caught:
            asyncio.run(hooks.call("Create", HookContext(output=Output()), []))
        after = asyncio.run(hooks.call("Create", HookContext(output=Output()), message))
    finally:
        hooks.close()
    assert first == [{"n": 1}, {"n": 2}]
    assert (caught.value.file, caught.value.line) == ("src/index.ts", 4)
    assert after == {"n": 1}
