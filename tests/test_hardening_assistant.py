"""An assistant package that came from outside (``load_assistant``): every probe of issue 21.

Each case is a copy of the minimal fixture assistant (tests/fixtures/yao_apps/notes_app/assistants/tests/
minimal) under tmp_path with one hostile file. A case that could take memory or block (a locale that
flattens to 2^28 keys, a billion-laughs file, a FIFO, /dev/zero, 100,000-deep nesting) is loaded in a
child Python whose address space may grow by only a few MB (``bounded_child``) and that is killed after
60 s, so a regression fails the test instead of eating the machine or hanging it. Nothing here asserts a
time: the figures in docs/reliability.md come from ``python tests/test_hardening_assistant.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from bounded_child import run_child

from agentctx_widgets import Context, ScriptedModel, run_turn
from agentctx_widgets.yao import typescript
from agentctx_widgets.yao.assistant import AssistantLoadError, load_assistant
from agentctx_widgets.yao.typescript import TypeScriptLoadError, load_ts_module_set

pytestmark = pytest.mark.timeout(120)

MINIMAL = Path(__file__).parent / "fixtures" / "yao_apps" / "notes_app" / "assistants" / "tests" / "minimal"
SECRET = "HOST-SECRET-7f3a"
EXTRA_MB = 48
"""How much a child's address space may grow while it loads one hostile assistant (a clean load of the
minimal assistant needs about 2 MB more; the probes took 3.2 GB and more before the caps)."""

DEEP_LIST_YML = "k: " + "[" * 28 + "x" + "]" * 28 + "\n"  # 61 bytes: 2^28 keys once flattened
DEEP_LIST_JSON = '{"k": ' + "[" * 28 + '"x"' + "]" * 28 + "}\n"
BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n" for previous, name in zip("abcdefgh", "bcdefghi"))


@pytest.fixture
def assistant(tmp_path: Path) -> Path:
    """A copy of the minimal assistant in an app (id ``tests.minimal``), beside a host file it must never
    read: ``tmp_path/host_secret.txt`` is ``assets/../../../../host_secret.txt`` seen from the assistant."""
    (tmp_path / "app.yao").write_text('{"name": "t"}')
    directory = tmp_path / "assistants" / "tests" / "minimal"
    shutil.copytree(MINIMAL, directory)
    (tmp_path / "host_secret.txt").write_text(SECRET)
    return directory


def write(root: Path, files: dict[str, str]) -> None:
    for name, body in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(body), encoding="utf-8")


def load_in_child(directory: Path) -> dict:
    """``load_assistant(directory)`` in a bounded child: its error (text, file, line) or what it loaded."""
    child = run_child(f"""
        import json
        from agentctx_widgets.yao.assistant import AssistantLoadError, load_assistant
        limit_memory({EXTRA_MB})
        try:
            loaded = load_assistant({str(directory)!r})
        except AssistantLoadError as error:
            print(json.dumps({{"error": str(error), "file": str(error.file), "line": error.line}}))
        else:
            print(json.dumps({{"prompts": loaded.prompts, "locales": loaded.locales}}))
    """, timeout=60)
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_the_bounded_child_loads_a_good_assistant(assistant):
    # the control: the memory cap leaves room for a real load, so a refusal below is the code's, not the cap's
    write(assistant, {"prompts.yml": "- role: system\n  content: @assets/rules.md\n",
                      "assets/rules.md": "Be brief.", "locales/en.yml": "hello: Hello\nlist: [a, b]\n"})
    loaded = load_in_child(assistant)
    assert loaded == {"prompts": [{"type": 1, "content": [{"type": "text", "text": "Be brief.\n"}]}],
                      "locales": {"en": {"hello": "Hello", "list": ["a", "b"]}}}


# -- locales -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, body", [("en.yml", DEEP_LIST_YML), ("en.json", DEEP_LIST_JSON)])
def test_a_locale_of_28_nested_lists_is_refused_in_bounded_memory(assistant, name, body):
    # the probe: flatten_locales / _dot_set built 2^28 keys, 3.2 GB and MemoryError after 55 s
    write(assistant, {f"locales/{name}": body})
    file = assistant / "locales" / name
    assert load_in_child(assistant) == {
        "error": f"{file}: flattens to more than 100000 message keys (MAX_KEYS; every nested list item is a "
                 f"key twice, key.0 and key[0]); refusing it",
        "file": str(file), "line": None}


def test_a_billion_laughs_locale_is_refused_in_bounded_memory(assistant):
    # the probe: 2.4 GB in 60 s (9^9 "lol"s once the aliases are expanded)
    write(assistant, {"locales/en.yml": BILLION_LAUGHS})
    file = assistant / "locales" / "en.yml"
    assert load_in_child(assistant) == {
        "error": f"{file}:1: not YAML: has more than 1000000 nodes once its aliases are expanded "
                 f"(MAX_NODES: a billion-laughs document?)",
        "file": str(file), "line": 1}


def test_a_locale_with_a_python_tag_constructs_nothing(assistant, tmp_path):
    marker = tmp_path / "ran"
    write(assistant, {"locales/en.yml": f"hello: Hello\nrun: !!python/object/apply:os.system ['touch {marker}']\n"})
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert (info.value.file, info.value.line) == (assistant / "locales" / "en.yml", 2)
    assert info.value.reason == ("not YAML: the tag !!python/object/apply:os.system is not allowed here (only plain "
                                 "text, numbers, booleans, null, lists and mappings)")
    assert not marker.exists()


# -- assets: nothing outside the assistant -----------------------------------------------------------------


def refused_outside(assistant: Path, content: str, *, assets: bool = True) -> AssistantLoadError:
    """The error loading ``content`` as the system prompt; also through run_turn: the model never called."""
    write(assistant, {"prompts.yml": f"- role: system\n  content: {content}\n"})
    if assets:
        write(assistant, {"assets/ok.md": "fine"})
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    model = ScriptedModel(["Hi"])
    with pytest.raises(AssistantLoadError):
        run_turn(Context(), "hello", assistant=str(assistant), model=model)
    assert model.calls == []  # no prompt was sent at all
    assert (info.value.file, info.value.line) == (assistant / "prompts.yml", 2)
    assert SECRET not in str(info.value)
    return info.value


@pytest.mark.parametrize("assets", [True, False], ids=["assets-folder", "no-assets-folder"])
def test_an_asset_path_climbing_out_is_refused(assistant, assets):
    # the probe: @assets/../../../../host_secret.txt put the host file into the system prompt
    error = refused_outside(assistant, "@assets/../../../../host_secret.txt", assets=assets)
    secret = assistant.parents[2] / "host_secret.txt"
    if assets:  # the path exists: read_text resolves it and refuses it
        assert error.reason == (f"@assets/../../../../host_secret.txt: {assistant}/assets/../../../../host_secret.txt: "
                                f"is outside {assistant}; an assistant reads only its own files")
    else:  # assets/ is missing, so the path does not exist: refused all the same, not "missing"
        assert error.reason == (f"@assets/../../../../host_secret.txt: resolves to {secret}, outside {assistant}; "
                                f"an assistant reads only its own files")


def test_an_asset_path_climbing_out_to_nothing_is_refused_not_missing(assistant):
    # was a yao_missing_asset diagnostic, whose hint said to create the file outside the assistant
    error = refused_outside(assistant, "@assets/../../nothing_here.txt")
    assert error.reason == (f"@assets/../../nothing_here.txt: resolves to {assistant.parent / 'nothing_here.txt'}, "
                            f"outside {assistant}; an assistant reads only its own files")


def test_an_absolute_asset_path_is_refused(assistant):
    secret = assistant.parents[2] / "host_secret.txt"
    error = refused_outside(assistant, f"@assets/{secret}")
    assert error.reason == (f"@assets/{secret}: {secret}: is outside {assistant}; an assistant reads only its own "
                            f"files")


def test_an_asset_symlinked_outside_is_refused(assistant):
    secret = assistant.parents[2] / "host_secret.txt"
    (assistant / "assets").mkdir()
    (assistant / "assets" / "x.md").symlink_to(secret)
    error = refused_outside(assistant, "@assets/x.md")
    assert error.reason == (f"@assets/x.md: {assistant}/assets/x.md: is a symlink to {secret}, which is outside "
                            f"{assistant}; an assistant reads only its own files")


def test_an_asset_symlink_loop_is_a_load_error(assistant):
    (assistant / "assets").mkdir()
    (assistant / "assets" / "x.md").symlink_to("x.md")
    error = refused_outside(assistant, "@assets/x.md")
    assert error.reason == (f"@assets/x.md: {assistant}/assets/x.md: is a symlink loop (or passes through one); "
                            f"refusing to read it")


# -- assets and files that would block or never end ---------------------------------------------------------


def make_fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize("name", ["assets/x.md", "prompts.yml", "package.yao", "locales/en.yml", "prompts/p.yml"])
def test_a_fifo_is_refused_without_blocking(assistant, name):
    # the probe: an asset that is a FIFO blocked load_assistant until Ctrl-C
    if name == "assets/x.md":
        write(assistant, {"prompts.yml": "- role: system\n  content: @assets/x.md\n"})
    make_fifo(assistant / name)
    loaded = load_in_child(assistant)  # a regression blocks in the child; the 60 s timeout fails the test
    fifo = assistant / name
    reason = f"{fifo}: is a FIFO (named pipe), not a regular file; refusing to open it"
    if name == "assets/x.md":
        assert loaded == {"error": f"{assistant / 'prompts.yml'}:2: @assets/x.md: {reason}",
                          "file": str(assistant / "prompts.yml"), "line": 2}
    else:
        assert loaded == {"error": reason, "file": str(fifo), "line": None}


def test_an_asset_symlinked_to_dev_zero_is_refused_before_reading(assistant):
    # the probe: read to MemoryError (1.8 GB in 2 s)
    write(assistant, {"prompts.yml": "- role: system\n  content: @assets/x.md\n"})
    (assistant / "assets").mkdir()
    (assistant / "assets" / "x.md").symlink_to("/dev/zero")
    assert load_in_child(assistant) == {
        "error": f"{assistant / 'prompts.yml'}:2: @assets/x.md: {assistant}/assets/x.md: is a symlink to /dev/zero, "
                 f"which is outside {assistant}; an assistant reads only its own files",
        "file": str(assistant / "prompts.yml"), "line": 2}


@pytest.mark.parametrize("name, size", [("package.yao", 50 * 1024**2), ("prompts.yml", 200 * 1024**2)])
def test_a_huge_file_is_refused_by_its_size_unread(assistant, name, size):
    # the probe: package.yao of 50 MB parsed for 44-92 s, prompts.yml of 200 MB still parsing at 180 s
    with open(assistant / name, "wb") as file:  # sparse: no disk, and the child could not hold it
        file.truncate(size)
    file = assistant / name
    assert load_in_child(assistant) == {
        "error": f"{file}: is {size} bytes, over the 1048576-byte limit; refusing to read it",
        "file": str(file), "line": None}


# -- nesting, tags and keys ----------------------------------------------------------------------------------


@pytest.mark.parametrize("open_, close", [("[", "]"), ('{"a": ', "}")], ids=["lists", "objects"])
def test_a_package_100k_deep_is_a_clear_error_not_a_recursion_error(assistant, open_, close):
    (assistant / "package.yao").write_text('{\n  "name": "deep",\n  "a": ' + open_ * 100_000 + "1" + close * 100_000
                                           + "\n}\n")
    loaded = load_in_child(assistant)
    file = assistant / "package.yao"
    column = 8 + 199 * len(open_)  # the 200th bracket on line 3 (the package's own { is the first level)
    assert loaded == {"error": f"{file}:3: not JSON with comments: nests deeper than 200 levels (MAX_DEPTH) "
                               f"(column {column})", "file": str(file), "line": 3}


def test_prompts_100k_deep_is_a_clear_error_not_a_recursion_error(assistant):
    write(assistant, {"prompts.yml": "- role: system\n  content: " + "[" * 100_000 + "]" * 100_000 + "\n"})
    file = assistant / "prompts.yml"
    assert load_in_child(assistant) == {
        "error": f"{file}:2: not YAML: nests deeper than 200 levels (MAX_DEPTH)", "file": str(file), "line": 2}


@pytest.mark.parametrize("body, line, reason", [
    ("- role: system\n  content: !!python/object:os.system x\n", 2,
     "not YAML: the tag !!python/object:os.system is not allowed here (only plain text, numbers, booleans, null, "
     "lists and mappings)"),
    ("- role: system\n  content: hi\n- !!python/object/apply:os.system [echo hi]\n", 3,
     "not YAML: the tag !!python/object/apply:os.system is not allowed here (only plain text, numbers, booleans, "
     "null, lists and mappings)"),
    ("- role: system\n  content: hi\n  ? [a, b]\n  : x\n", 3, "not YAML: a key must be text, not a list or a mapping"),
    ("- role: system\n  content: hi\n  {a: 1}: x\n", 3, "not YAML: a key must be text, not a list or a mapping"),
], ids=["python-object", "python-apply", "list-key", "map-key"])
def test_prompts_tags_and_unhashable_keys_name_the_file_and_line(assistant, body, line, reason):
    # the probe: a bare ConstructorError / "TypeError: unhashable 'list'" without file or line
    write(assistant, {"prompts.yml": body})
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert (info.value.file, info.value.line, info.value.reason) == (assistant / "prompts.yml", line, reason)


HUGE = "7" * 5000  # past Python's 4300-digit int conversion limit: a bare ValueError before


@pytest.mark.parametrize("name, body, line, reason", [
    ("package.yao", '{\n  "name": "huge",\n  "n": -' + HUGE + "\n}\n", 3,
     "not JSON with comments: an integer of 5000 digits is over the 4300-digit limit "
     "(sys.get_int_max_str_digits()); refusing it (column 8)"),
    ("locales/en.json", '{\n  "a": "' + HUGE + '",\n  "n": ' + HUGE + "\n}\n", 3,
     "not JSON: an integer of 5000 digits is over the 4300-digit limit (sys.get_int_max_str_digits()); refusing it"),
    ("locales/en.jsonc", '// c\n{"n": [1,\n ' + HUGE + "]}\n", 3,
     "not JSON with comments: an integer of 5000 digits is over the 4300-digit limit "
     "(sys.get_int_max_str_digits()); refusing it"),
    ("locales/en.yml", "a: '" + HUGE + "'\nb:\n  - " + HUGE + "\n", 3,
     "not YAML: an integer of 5000 digits is over the 4300-digit limit (sys.get_int_max_str_digits()); refusing it"),
    ("prompts.yml", "- role: system\n  content: hi\n  ? " + HUGE + "\n  : x\n", 3,
     "not YAML: an integer of 5000 digits is over the 4300-digit limit (sys.get_int_max_str_digits()); refusing it"),
], ids=["package", "locale-json", "locale-jsonc", "locale-yml", "prompts-key"])
def test_a_5000_digit_integer_names_the_file_and_line(assistant, name, body, line, reason):
    # the probe: "ValueError: Exceeds the limit (4300 digits)" with no file or line; a 5000-digit string is fine
    if name == "package.yao":
        (assistant / name).write_text(body)
    else:
        write(assistant, {name: body})
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert (info.value.file, info.value.line, info.value.reason) == (assistant / name, line, reason)


def test_a_5000_digit_string_and_a_4300_digit_integer_still_load(assistant):
    write(assistant, {"locales/en.json": '{"a": "' + HUGE + '", "n": ' + "7" * 4300 + "}",
                      "locales/zh.yml": "a: '" + HUGE + "'\nn: " + "7" * 4300 + "\n"})
    loaded = load_assistant(assistant)
    assert loaded.locales["en"] == loaded.locales["zh"] == {"a": HUGE, "n": int("7" * 4300)}


# -- walked folders symlinked out ----------------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the app that looks like an assistant's own: modules, a locale, a preset, an asset."""
    folder = tmp_path / "elsewhere"
    write(folder, {"index.ts": f"export function Create() {{ return {{ secret: {SECRET!r} }} }}\n",
                   "en.yml": f"secret: {SECRET}\n", "p.yml": f"- role: system\n  content: {SECRET}\n",
                   "a.md": SECRET})
    return folder


@pytest.mark.parametrize("name", ["src", "locales", "prompts"])
def test_a_walked_folder_symlinked_outside_is_refused_naming_it(assistant, outside, name):
    (assistant / name).symlink_to(outside, target_is_directory=True)
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert (info.value.file, info.value.line, info.value.reason) == (
        assistant / name, None, f"is a symlink to {outside}, which is outside {assistant}; an assistant reads "
                                f"only its own files")


def test_an_assets_folder_symlinked_outside_is_refused_at_the_line_that_uses_it(assistant, outside):
    (assistant / "assets").symlink_to(outside, target_is_directory=True)
    write(assistant, {"prompts.yml": "- role: system\n  content: |\n    @assets/a.md\n"})
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert (info.value.file, info.value.line, info.value.reason) == (
        assistant / "prompts.yml", 3, f"@assets/a.md: {assistant / 'assets'}: is a symlink to {outside}, which is "
                                      f"outside {assistant}; an assistant reads only its own files")


def test_load_ts_module_set_refuses_a_src_symlinked_outside_its_assistant(assistant, outside):
    (assistant / "src").symlink_to(outside, target_is_directory=True)
    with pytest.raises(TypeScriptLoadError) as info:
        load_ts_module_set(assistant / "src")
    assert str(info.value) == (f"src: is a symlink to {outside}, which is outside {assistant}; an assistant reads "
                               f"only its own files")


def test_walked_folders_symlinked_inside_the_assistant_still_load(assistant, outside):
    for name, file in (("src", "index.ts"), ("locales", "en.yml"), ("prompts", "p.yml"), ("assets", "a.md")):
        (assistant / "shared" / name).mkdir(parents=True)
        shutil.copy(outside / file, assistant / "shared" / name / file)
        (assistant / name).symlink_to(Path("shared") / name, target_is_directory=True)
    write(assistant, {"prompts.yml": "- role: system\n  content: |\n    @assets/a.md\n"})
    loaded = load_assistant(assistant)
    assert loaded.locales["en"] == {"secret": SECRET} and loaded.prompt_presets["p"][0]["content"][0]["text"] == SECRET
    assert loaded.script == assistant / "src" / "index.ts" and SECRET in loaded.prompts[0]["content"][0]["text"]
    hooks = load_ts_module_set(assistant / "src")
    hooks.close()


@pytest.fixture
def outside_the_app(tmp_path_factory) -> Path:
    """A folder outside the app (``outside`` is beside the assistants/, inside the app's folder)."""
    folder = tmp_path_factory.mktemp("elsewhere")
    (folder / "prompts.yml").write_text(f"- role: system\n  content: {SECRET}\n")
    return folder


def test_the_apps_agent_folder_symlinked_outside_the_app_is_refused_naming_it(assistant, outside_the_app):
    # the app-level agent/prompts.yml (load.go:158) went into every assistant's system prompt from wherever
    # agent/ pointed; read_text confined it only to agent/ itself, resolved
    app, outside = assistant.parents[2], outside_the_app
    (app / "agent").symlink_to(outside, target_is_directory=True)
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert (info.value.file, info.value.line, info.value.reason) == (
        app / "agent", None, f"is a symlink to {outside}, which is outside {app}; an assistant reads only its "
                             f"own files")


def test_the_apps_prompts_file_symlinked_outside_the_app_is_refused(assistant, outside_the_app):
    app, outside = assistant.parents[2], outside_the_app
    (app / "agent").mkdir()
    (app / "agent" / "prompts.yml").symlink_to(outside / "prompts.yml")
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert info.value.file == app / "agent" / "prompts.yml"
    assert info.value.reason.startswith(f"is a symlink to {outside / 'prompts.yml'}, which is outside")


def test_the_apps_agent_folder_symlinked_inside_the_app_still_loads(assistant):
    app = assistant.parents[2]
    write(app, {"shared/agent/prompts.yml": f"- role: system\n  content: {SECRET}\n"})
    (app / "agent").symlink_to(Path("shared") / "agent", target_is_directory=True)
    loaded = load_assistant(assistant)
    assert loaded.global_prompts[0]["content"][0]["text"] == SECRET


# -- src/ ---------------------------------------------------------------------------------------------------


def test_a_fifo_index_ts_is_refused_not_taken_for_no_script(assistant):
    # before: load_assistant saw no script (is_file() is false for a FIFO) and the turn ran without hooks
    make_fifo(assistant / "src" / "index.ts")
    loaded = load_in_child(assistant)
    fifo = assistant / "src" / "index.ts"
    assert loaded == {"error": f"{fifo}: is a FIFO (named pipe), not a regular file; refusing to open it",
                      "file": str(fifo), "line": None}
    child = run_child(f"""
        from agentctx_widgets.yao.typescript import TypeScriptLoadError, load_ts_module_set
        limit_memory({EXTRA_MB})
        try:
            load_ts_module_set({str(assistant / 'src')!r})
        except TypeScriptLoadError as error:
            print(error.file, "|", error)
    """, timeout=60)
    assert child.returncode == 0, child.stderr[-3000:]
    assert child.stdout.strip() == (f"src/index.ts | src/index.ts: {fifo} is a FIFO (named pipe), not a regular "
                                    f"file; refusing to open it")


def hooks_assistant(assistant: Path, extra: dict[str, str]) -> None:
    write(assistant, {"src/index.ts": "function Create(ctx: any, messages: any): any { return null; }\n", **extra})


def test_an_index_ts_over_1_mib_is_refused_naming_it(assistant):
    hooks_assistant(assistant, {})
    index = assistant / "src" / "index.ts"
    index.write_text(index.read_text() + "// " + "x" * typescript.MAX_SOURCE_BYTES + "\n")
    size = index.stat().st_size
    with pytest.raises(TypeScriptLoadError) as info:
        run_turn(Context(), "hello", assistant=str(assistant), model=ScriptedModel(["Hi"]))
    assert info.value.file == "src/index.ts"
    assert str(info.value) == f"src/index.ts: {index} is {size} bytes, over the 1048576-byte limit; refusing to read it"


def test_more_than_max_sources_modules_is_refused_naming_the_first_over(assistant, monkeypatch):
    monkeypatch.setattr(typescript, "MAX_SOURCES", 3)
    hooks_assistant(assistant, {f"src/m{i}.ts": "export const a = 1;\n" for i in range(3)})
    with pytest.raises(TypeScriptLoadError) as info:  # index.ts, m0, m1 read; m2 is the fourth
        load_ts_module_set(assistant / "src")
    assert str(info.value) == "src/m2.ts: src/ holds more than 3 modules (MAX_SOURCES)"
    (assistant / "src" / "m2.ts").unlink()
    load_ts_module_set(assistant / "src").close()  # three modules: at the cap, loaded


def test_modules_over_max_sources_bytes_together_are_refused(assistant, monkeypatch):
    monkeypatch.setattr(typescript, "MAX_SOURCES_BYTES", 200)
    hooks_assistant(assistant, {"src/a.ts": "// " + "a" * 100 + "\n", "src/b.ts": "// " + "b" * 100 + "\n"})
    with pytest.raises(TypeScriptLoadError) as info:  # sorted: a.ts (104), b.ts (208 > 200)
        load_ts_module_set(assistant / "src")
    assert str(info.value) == "src/b.ts: src/'s modules pass 200 bytes together (MAX_SOURCES_BYTES)"


def test_a_module_symlinked_to_dev_zero_is_not_read(assistant):
    # a symlink out of src/ is no module of it: refused at load_assistant (not a regular file), and the
    # TypeScript loader alone skips it, so importing it is a clear import error
    uses_z = ("import { a } from './z';\n"
              "function Create(ctx: any, messages: any): any { console.log(a); return null; }\n")
    hooks_assistant(assistant, {"src/index.ts": uses_z})
    (assistant / "src" / "z.ts").symlink_to("/dev/zero")
    with pytest.raises(AssistantLoadError) as info:
        load_assistant(assistant)
    assert str(info.value) == (f"{assistant / 'src' / 'z.ts'}: is a symlink to /dev/zero, which is a character device, "
                               f"not a regular file; refusing to open it")
    with pytest.raises(TypeScriptLoadError) as error:
        load_ts_module_set(assistant / "src")
    assert str(error.value) == ('src/index.ts:1: cannot import "./z": no module src/z.ts, src/z.js, src/z/index.ts, '
                                'src/z/index.js')


@pytest.mark.parametrize("target, reason", [("l.ts", "is a symlink loop; refusing to read it"),
                                            ("gone.ts", "cannot be read: No such file or directory")])
def test_a_module_symlink_loop_or_dangling_is_a_load_error(assistant, target, reason):
    hooks_assistant(assistant, {})
    (assistant / "src" / "l.ts").symlink_to(target)
    with pytest.raises(TypeScriptLoadError) as info:
        load_ts_module_set(assistant / "src")
    assert str(info.value) == f"src/l.ts: {reason}"


# -- $ENV. -------------------------------------------------------------------------------------------------


def test_env_reads_through_an_asset_and_a_preset_are_named_and_env_allow_empty_sends_none(assistant, monkeypatch):
    # tests/test_yao_assistant.py checks the diagnostic's wording and env_allow on the fixture's own prompts;
    # here a hostile package hides the reads in an @assets file and a preset, and the turn is checked on
    # what reaches the model
    monkeypatch.setenv("AGENTCTX_PROBE_KEY", "sk-probe-key")
    monkeypatch.setenv("AGENTCTX_PROBE_OTHER", "other-value")
    write(assistant, {"prompts.yml": "- role: system\n  content: @assets/style.md\n",
                      "assets/style.md": "Style guide. $ENV.AGENTCTX_PROBE_KEY",
                      "prompts/p.yml": "- role: system\n  content: 'Preset $ENV.AGENTCTX_PROBE_OTHER'\n"})
    default = load_assistant(assistant)
    assert default.env_reads == ("AGENTCTX_PROBE_KEY", "AGENTCTX_PROBE_OTHER")
    [read] = [item for item in default.diagnostics if item["code"] == "yao_env_read"]
    assert read["message"] == ("this assistant reads the environment variables AGENTCTX_PROBE_KEY (prompts.yml), "
                               "AGENTCTX_PROBE_OTHER (prompt preset p): Yao fills $ENV. in, so a prompt's values go "
                               "to the model")
    sent = ScriptedModel(["Hi"])
    run_turn(Context(), "hello", assistant=default, model=sent)
    assert "sk-probe-key" in json.dumps(sent.calls)  # as in Yao: the control for the next assertions

    none = load_assistant(assistant, env_allow=[])
    assert none.env_reads == default.env_reads
    model = ScriptedModel(["Hi"])
    run_turn(Context(), "hello", assistant=none, model=model)
    [messages] = model.calls
    assert "sk-probe-key" not in json.dumps(messages) and "Style guide. " in json.dumps(messages)
    assert "other-value" not in json.dumps(none.request_prompts(preset="p"))


if __name__ == "__main__":  # the figures in docs/reliability.md: time and peak memory of the worst probes
    import subprocess
    import sys
    import tempfile

    probes = {
        "locale 2^28 keys (en.yml)": {"locales/en.yml": DEEP_LIST_YML},
        "locale 2^28 keys (en.json)": {"locales/en.json": DEEP_LIST_JSON},
        "billion-laughs locale": {"locales/en.yml": BILLION_LAUGHS},
        "package.yao 100k deep": {"package.yao": '{"name": "x", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"},
        "package.yao 100k deep objects": {"package.yao": '{"name": "x", "a": ' + '{"a": ' * 100_000 + "1"
                                          + "}" * 100_000 + "}"},
        "prompts.yml 100k deep": {"prompts.yml": "- " + "[" * 100_000 + "]" * 100_000 + "\n"},
    }
    for label, files in probes.items():
        with tempfile.TemporaryDirectory() as folder:
            directory = Path(folder) / "a"
            shutil.copytree(MINIMAL, directory)
            write(directory, files)
            code = f"""
import time, resource
from agentctx_widgets.yao.assistant import AssistantLoadError, load_assistant
def peak():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) // 1024
before, start = peak(), time.perf_counter()
try:
    load_assistant({str(directory)!r}, id="x")
except AssistantLoadError as error:
    print(f"{{time.perf_counter() - start:.2f}} s, peak {{peak()}} MB ({{peak() - before}} MB over the imports): "
          f"{{error.reason[:60]}}")
"""
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
            print(f"{label}: {out.stdout.strip() or out.stderr[-500:]}")
