"""load_assistant: a Yao assistant directory read as YaoApp/yao@5a3f9a6a reads it.

Fixtures: tests/fixtures/yao_apps/notes_app, our own app modeled on yao-dev-app's assistants/tests/create,
tests/next and tests/fullfields. Malformed files are written per test under tmp_path. Where a test ports
an upstream Go test, its docstring names the file and line; every expected value below was worked out by
hand from the fixture text and the upstream rules, not copied from our output.
"""

from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from agentctx_widgets.yao.assistant import Assistant, AssistantLoadError, load_assistant
from agentctx_widgets.yao.jsonc import JSONCError, loads_jsonc, strip_jsonc, top_level_key_lines
from agentctx_widgets.yao.locales import flatten_locales, translate
from agentctx_widgets.yao.prompt_vars import render_variables

APP = Path(__file__).parent / "fixtures" / "yao_apps" / "notes_app"
CREATE = APP / "assistants" / "tests" / "create"
MINIMAL = APP / "assistants" / "tests" / "minimal"
NEXT = APP / "assistants" / "tests" / "next"
NOW = datetime(2026, 3, 5, 14, 7, 9)  # a Thursday (2026-01-01 is a Thursday; +63 days)


def text(content: str) -> list[dict]:
    return [{"type": "text", "text": content}]


def write(root: Path, files: dict[str, str]) -> None:
    for name, body in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(body), encoding="utf-8")


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """An empty Yao app in tmp_path (app.yao, assistants/)."""
    write(tmp_path, {"app.yao": '{"name": "t"}'})
    return tmp_path


# -- a full assistant ------------------------------------------------------------------------------------


def test_full_assistant(monkeypatch):
    """Ports TestLoadPathFullFields (agent/assistant/load_integration_test.go:14-83): id, name, type
    defaulted to "assistant" (load.go:333), options, connector, prompts, presets, the hook script."""
    monkeypatch.setenv("AGENTCTX_TEST_CONNECTOR", "deepseek.v3")
    asst = load_assistant(CREATE)
    assert isinstance(asst, Assistant)
    assert asst.id == "tests.create"
    assert asst.name == "{{ name }}"
    assert asst.path == CREATE.resolve()
    assert asst.type == "assistant"
    assert asst.connector == "deepseek.v3"  # $ENV. resolved (load.go:304-311)
    assert asst.package["connector"] == "$ENV.AGENTCTX_TEST_CONNECTOR"  # as written
    assert asst.options == {"temperature": 0.2, "max_tokens": 800}
    assert asst.package["tags"] == ["Notes", "Test"]
    assert asst.package["modes"] == ["chat", "task"] and asst.package["default_mode"] == "chat"
    assert asst.script == CREATE.resolve() / "src" / "index.ts"
    assert asst.language == "typescript"
    # src/index_test.ts is skipped, src/helpers/format.ts is the script "helpers.format" (scripts.go:78-98, :128)
    assert asst.sources == {"helpers.format": CREATE.resolve() / "src" / "helpers" / "format.ts"}
    assert asst.not_emulated == ("mcp", "kb")
    assert asst.mcp == {"servers": [{"server_id": "notes", "tools": ["search"]}], "options": {"max_turn": 4}}
    assert asst.unknown_fields == ("x_team_color",)
    assert asst.package["x_team_color"] == "teal"  # kept; Yao's loadMap drops it
    assert asst.env_reads == ("AGENTCTX_TEST_BUILD", "AGENTCTX_TEST_CONNECTOR")
    assert asst.diagnostics == [{  # the $ENV. names a package reads are said at load (issue 21)
        "code": "yao_env_read",
        "message": "this assistant reads the environment variables AGENTCTX_TEST_BUILD (prompts.yml), "
                   "AGENTCTX_TEST_CONNECTOR (the connector): Yao fills $ENV. in, so a prompt's values go to the model",
        "where": str(CREATE.resolve()),
        "hint": "load_assistant(..., env_allow=[...]) fills only the names you list (env_allow=[]: none)"}]


def test_env_allow_fills_only_the_names_listed_and_says_which_are_left_empty(monkeypatch):
    """Issue 21: a downloaded package can read $ENV.OPENAI_API_KEY into a prompt; env_allow limits it."""
    monkeypatch.setenv("AGENTCTX_TEST_CONNECTOR", "deepseek.v3")
    monkeypatch.setenv("AGENTCTX_TEST_BUILD", "secret-build")
    asst = load_assistant(CREATE, env_allow=["AGENTCTX_TEST_BUILD"])
    # not allowed reads as unset: the connector stays as written (load.go keeps it when the variable is empty)
    assert asst.connector == "$ENV.AGENTCTX_TEST_CONNECTOR"
    text = lambda assistant: " ".join(block["text"] for message in assistant.request_prompts()  # noqa: E731
                                      for block in message["content"])
    assert "Build: secret-build." in text(asst)
    [diagnostic] = asst.diagnostics
    assert diagnostic["message"] == ("this assistant reads the environment variables AGENTCTX_TEST_BUILD (prompts.yml), "
                                     "AGENTCTX_TEST_CONNECTOR (the connector): env_allow fills AGENTCTX_TEST_BUILD and "
                                     "leaves AGENTCTX_TEST_CONNECTOR empty")
    none = load_assistant(CREATE, env_allow=[])
    assert none.diagnostics[0]["message"].endswith(
        ": env_allow fills none of them and leaves AGENTCTX_TEST_BUILD, AGENTCTX_TEST_CONNECTOR empty")
    assert "Build: ." in text(none) and "secret-build" not in text(none)


def test_prompts_are_context_messages_in_file_order():
    """prompts.yml → Context messages: role → type (system 1, user 2, assistant 3), name kept, the
    @assets/style.md include expanded as a block scalar (prompt.go:183-205), variables left for the request."""
    asst = load_assistant(CREATE)
    assert asst.prompts == [
        {"type": 1, "content": text(
            "You are $CTX.ASSISTANT_NAME ($CTX.ASSISTANT_ID), answering in $CTX.LOCALE.\n"
            "Today is $SYS.DATE ($SYS.WEEKDAY). Build: $ENV.AGENTCTX_TEST_BUILD.\n")},
        {"type": 1, "content": text("Answer in short sentences.\nQuote note titles in double quotes.\n")},
        {"type": 2, "content": text("Find my note about tea."), "name": "sample_user"},
        {"type": 3, "content": text('Your note "Tea" is from Monday.'), "name": "sample_assistant"},
    ]
    assert asst.prompt_presets == {
        "mode.terse": [{"type": 1, "content": text("Be terse. You are $CTX.ASSISTANT_NAME.")}]}
    assert asst.global_prompts == [{"type": 1, "content": text("Notes app. Locale: $CTX.LOCALE")}]


def test_request_prompts_global_first_variables_filled():
    """build.go:75-120: global prompts (agent/prompts.yml) then the assistant's, each filled with
    $SYS. then $ENV. then $CTX. (prompt.go:231-271); ASSISTANT_NAME is the name in the request's locale."""
    asst = load_assistant(CREATE)
    variables = asst.prompt_variables(locale="zh-CN")
    assert variables == {"ASSISTANT_ID": "tests.create", "ASSISTANT_TYPE": "assistant",
                         "ASSISTANT_NAME": "笔记查找", "ASSISTANT_DESCRIPTION": "{{ description }}",
                         "LOCALE": "zh-CN"}
    messages = asst.request_prompts(variables, now=NOW, environ={"AGENTCTX_TEST_BUILD": "b7"})
    assert [m["content"][0]["text"] for m in messages[:2]] == [
        "Notes app. Locale: zh-CN",
        "You are 笔记查找 (tests.create), answering in zh-CN.\nToday is 2026-03-05 (Thursday). Build: b7.\n",
    ]
    assert messages[2:] == asst.prompts[1:]


def test_request_prompts_preset_and_disable_global():
    """build.go:143-156: a preset that exists replaces the default prompts, an unknown one falls back;
    disable_global drops agent/prompts.yml (build.go:124-139)."""
    asst = load_assistant(CREATE)
    terse = asst.request_prompts({"ASSISTANT_NAME": "N"}, preset="mode.terse", disable_global=True, now=NOW)
    assert terse == [{"type": 1, "content": text("Be terse. You are N.")}]
    fallback = asst.request_prompts(None, preset="mode.nope", disable_global=True, now=NOW, environ={})
    assert fallback[0]["content"][0]["text"].startswith("You are $CTX.ASSISTANT_NAME ($CTX.ASSISTANT_ID)")
    assert fallback[0]["content"][0]["text"].endswith("Today is 2026-03-05 (Thursday). Build: .\n")


def test_minimal_assistant():
    """Ports TestLoadPathNoPrompt (load_integration_test.go:96-106): no prompts, no MCP, no hook script."""
    asst = load_assistant(MINIMAL)
    assert (asst.id, asst.name, asst.type) == ("tests.minimal", "Minimal", "assistant")
    assert asst.prompts == [] and asst.prompt_presets == {} and asst.locales == {}
    assert asst.script is None and asst.language is None and asst.sources == {}
    assert asst.mcp is None and asst.connector is None and asst.options == {}
    assert asst.not_emulated == () and asst.unknown_fields == ()


def test_inline_prompts_javascript_hook_and_disabled_globals():
    """Ports TestLoadPathDisableGlobalPrompts (load_integration_test.go:140-148); package.yao prompts are
    used without prompts.yml (load.go:702-729); a developer prompt is a system message; src/index.js."""
    asst = load_assistant(NEXT)
    assert asst.disable_global_prompts is True
    assert asst.type == "robot"
    assert asst.prompts == [{"type": 1, "content": text("Reply with JSON.")}]
    assert asst.request_prompts(None) == asst.prompts  # the global prompt is left out
    assert (asst.script.name, asst.language) == ("index.js", "javascript")


# -- id ----------------------------------------------------------------------------------------------------


def test_id_is_the_path_under_assistants_dotted():
    """load.go:329-330: assistants/tests/create → tests.create; id= wins."""
    assert load_assistant(CREATE).id == "tests.create"
    assert load_assistant(CREATE, id="notes.finder").id == "notes.finder"


def test_id_uses_the_apps_assistants_folder(app):
    """A folder named assistants inside an assistant does not cut the id: the app's folder is the root."""
    write(app, {"assistants/team/assistants/helper/package.yao": '{"name": "H"}'})
    assert load_assistant(app / "assistants/team/assistants/helper").id == "team.assistants.helper"


def test_id_without_an_assistants_folder_asks_for_id(tmp_path):
    write(tmp_path, {"bot/package.yao": '{"name": "B"}'})
    with pytest.raises(AssistantLoadError, match="not inside an app's assistants/ folder; pass id="):
        load_assistant(tmp_path / "bot")
    assert load_assistant(tmp_path / "bot", id="bot").id == "bot"


@pytest.mark.parametrize("bad", ["", "  ", 3])
def test_bad_id_is_refused(bad):
    with pytest.raises(AssistantLoadError, match="id= must be a non-empty string"):
        load_assistant(CREATE, id=bad)


# -- package.yao -------------------------------------------------------------------------------------------


def test_missing_directory_and_package(tmp_path):
    with pytest.raises(AssistantLoadError, match="no such assistant directory"):
        load_assistant(tmp_path / "nope")
    (tmp_path / "assistants" / "empty").mkdir(parents=True)
    with pytest.raises(AssistantLoadError, match="package.yao not found") as caught:
        load_assistant(tmp_path / "assistants" / "empty")
    assert caught.value.file == (tmp_path / "assistants" / "empty").resolve()


def test_malformed_package_names_the_line(app):
    write(app, {"assistants/bad/package.yao": """\
        // comment on line 1
        {
          "name": "Bad",
          /* a block comment
             over two lines */
          "options": {"temperature": 0.1,}
          "connector": "x"
        }
        """})
    with pytest.raises(AssistantLoadError) as caught:
        load_assistant(app / "assistants/bad")
    error = caught.value
    assert (error.file.name, error.line) == ("package.yao", 7)  # the missing comma is found at line 7
    assert str(error) == (f"{(app / 'assistants/bad/package.yao').resolve()}:7: not JSON with comments: "
                          "Expecting ',' delimiter (column 3)")


@pytest.mark.parametrize("body, line, message", [
    ('{\n  "type": "assistant"\n}', None, "name is required and must be a string (missing; load.go:454)"),
    ('{\n  "type": "x",\n  "name": 7\n}', 3, "name is required and must be a string (a number; load.go:454)"),
    ('[1, 2]', 1, "expected an object, got list"),
    ('{\n "name": "P",\n "placeholder": "hi"\n}', 3, "placeholder must be an object {title, description, prompts}, got string"),
    ("{\n  name: 'single quotes'\n}", 2, "not JSON with comments: Expecting property name enclosed in double quotes (column 3)"),
])
def test_package_errors(app, body, line, message):
    write(app, {"assistants/p/package.yao": body})
    with pytest.raises(AssistantLoadError) as caught:
        load_assistant(app / "assistants/p")
    assert (caught.value.line, caught.value.reason) == (line, message)


def test_wrong_type_field_is_ignored_with_a_diagnostic(app):
    """load.go:565, :609: a connector that is not a string or options that are not an object are ignored
    by Yao without a word; we do the same and say so, naming the line."""
    write(app, {"assistants/w/package.yao": '{\n "name": "W",\n "options": [1],\n "connector": 5\n}'})
    asst = load_assistant(app / "assistants/w")
    assert asst.options == {} and asst.connector is None
    where = str((app / "assistants/w/package.yao").resolve())
    assert asst.diagnostics == [
        {"code": "yao_field_ignored", "where": f"{where}:4", "message": "connector is a number, not a string: Yao ignores it",
         "hint": "write connector as a string"},
        {"code": "yao_field_ignored", "where": f"{where}:3", "message": "options is a list, not an object: Yao ignores it",
         "hint": "write options as an object"},
    ]


def test_a_misspelt_field_is_kept_with_a_diagnostic(app):
    """yao-dev-app's tests/web-agent writes "option" for "options"; Yao drops it silently. A key far from
    every Yao field (x_team_color in the fixture) is only listed in unknown_fields."""
    write(app, {"assistants/t/package.yao": '{\n "name": "T",\n "option": {"temperature": 0}\n}'})
    asst = load_assistant(app / "assistants/t")
    assert asst.options == {} and asst.unknown_fields == ("option",)
    assert asst.package["option"] == {"temperature": 0}
    assert asst.diagnostics == [{
        "code": "yao_unknown_field", "where": f"{(app / 'assistants/t/package.yao').resolve()}:3",
        "message": "option is not a field Yao reads: it is ignored", "hint": "did you mean options?"}]


def test_env_connector_unset_is_kept_as_written(monkeypatch):
    """load.go:305-309 replaces $ENV.X only when X is set and not empty."""
    monkeypatch.delenv("AGENTCTX_TEST_CONNECTOR", raising=False)
    assert load_assistant(CREATE).connector == "$ENV.AGENTCTX_TEST_CONNECTOR"
    monkeypatch.setenv("AGENTCTX_TEST_CONNECTOR", "")
    assert load_assistant(CREATE).connector == "$ENV.AGENTCTX_TEST_CONNECTOR"


# -- prompts.yml -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body, line, message", [
    ("- role: system\n  content: ok\n- role: user\n  content: [unclosed\n", 5,
     "not YAML: expected ',' or ']', but got '<stream end>'"),
    ("- role: system\n  content: a\n- role: robot\n  content: b\n", 3,
     "prompt 2: role 'robot' is not one of system, developer, user, assistant"),
    ("- role: system\n  content:\n    nested: map\n", 3, "prompt 1: content must be text, got a mapping"),
    ("role: system\ncontent: x\n", 1, "expected a list of prompts (- role: system\\n  content: …)"),
    ("- just text\n", 1, "prompt 1: expected role and content, got the text 'just text'"),
])
def test_malformed_prompts_name_the_line(app, body, line, message):
    write(app, {"assistants/y/package.yao": '{"name": "Y"}', "assistants/y/prompts.yml": body})
    with pytest.raises(AssistantLoadError) as caught:
        load_assistant(app / "assistants/y")
    assert (caught.value.file.name, caught.value.line, caught.value.reason) == ("prompts.yml", line, message)


def test_prompt_error_line_counts_the_file_not_the_expanded_assets(app):
    """An @assets include adds lines before the YAML parser sees the text; the error still names the line
    the author wrote (line 4), not the line in the expanded text (line 9)."""
    write(app, {
        "assistants/a/package.yao": '{"name": "A"}',
        "assistants/a/assets/long.md": "one\ntwo\nthree\n",
        "assistants/a/prompts.yml": "- role: system\n  content: @assets/long.md\n- role: user\n  content: a: b\n",
    })
    with pytest.raises(AssistantLoadError) as caught:
        load_assistant(app / "assistants/a")
    assert caught.value.line == 4


def test_missing_asset_is_empty_with_a_diagnostic(app):
    """prompt.go:192-195: Yao replaces an @assets reference whose file is missing with nothing."""
    write(app, {"assistants/m/package.yao": '{"name": "M"}',
                "assistants/m/prompts.yml": "- role: system\n  content: Intro @assets/gone.md\n"})
    asst = load_assistant(app / "assistants/m")
    assert asst.prompts == [{"type": 1, "content": text("Intro")}]
    assert [d["code"] for d in asst.diagnostics] == ["yao_missing_asset"]
    assert asst.diagnostics[0]["message"] == "@assets/gone.md does not exist: Yao includes it as nothing"


def test_prompt_scalars_as_yaml_v3_decodes_them(app):
    """yaml.v3 decodes any scalar into a Go string as written and null as "": `content: 42` is "42",
    `yes` stays "yes" (YAML 1.2 booleans), an empty content is ""."""
    write(app, {"assistants/s/package.yao": '{"name": "S"}',
                "assistants/s/prompts.yml": "- role: user\n  content: 42\n- role: user\n  content: yes\n- role: system\n"})
    asst = load_assistant(app / "assistants/s")
    assert [m["content"][0]["text"] for m in asst.prompts] == ["42", "yes", ""]


def test_empty_prompts_file(app):
    write(app, {"assistants/e/package.yao": '{"name": "E"}', "assistants/e/prompts.yml": "# nothing yet\n"})
    assert load_assistant(app / "assistants/e").prompts == []


# -- locales and templates ---------------------------------------------------------------------------------


def test_locales_parsed_and_keyed_lower_case():
    """i18n.go:143-155: one entry per file, named by the file lower-cased (zh-CN.yml → zh-cn)."""
    asst = load_assistant(CREATE)
    assert asst.locales == {
        "en-us": {"name": "Note Finder", "description": "Finds notes for you",
                  "chat": {"title": "New search", "prompts": ["Find a note", "List today's notes"]}},
        "zh-cn": {"name": "笔记查找", "chat": {"title": "新搜索", "prompts": ["查找笔记", "列出今天的笔记"]}},
    }


def test_templates_in_package_fields():
    """assistant.go:94-122: name, description and the placeholder translated; chat.prompts.0 and
    chat.prompts[1] both reach list items (kun maps/strany.go:123-127); an unknown key stays as written;
    zh-cn has no description, so the package's own "{{ description }}" is injected (load.go:638) and stays."""
    asst = load_assistant(CREATE)
    assert [asst.display_name(code) for code in ("en-us", "EN", "us", "zh-CN", "zh", "fr")] == [
        "Note Finder", "Note Finder", "Note Finder", "笔记查找", "笔记查找", "{{ name }}"]
    assert asst.display_description("en") == "Finds notes for you"
    assert asst.display_description("zh-cn") == "{{ description }}"
    assert asst.placeholder("zh-cn") == {"title": "新搜索", "description": "Try: 查找笔记",
                                         "prompts": ["查找笔记", "列出今天的笔记", "{{ chat.missing }}"]}


def test_no_locales_gives_yaos_default_five():
    """load.go:649-670: without locale files, en, en-us, zh, zh-cn, zh-tw hold the name and description."""
    flat = load_assistant(NEXT).flat_locales()
    expected = {"name": "Next Hook", "description": "Prompts inline, a JavaScript hook, no locales"}
    assert flat == {code: expected for code in ("en", "en-us", "zh", "zh-cn", "zh-tw")}


def test_malformed_locale_names_the_line(app):
    write(app, {"assistants/l/package.yao": '{"name": "L"}',
                "assistants/l/locales/en-us.yml": "name: L\nchat:\n  title: [x\n"})
    with pytest.raises(AssistantLoadError) as caught:
        load_assistant(app / "assistants/l")
    assert (caught.value.file.name, caught.value.line) == ("en-us.yml", 4)


@pytest.mark.parametrize("name, body, message", [
    ("fr.txt", "name: x", "a locale file must be YAML or JSON (.yml, .yaml, .json, .jsonc, .yao); Yao refuses others"),
    ("fr.yml", "- a\n- b\n", "expected messages (key: text), got list"),
])
def test_bad_locale_files(app, name, body, message):
    write(app, {"assistants/l/package.yao": '{"name": "L"}', f"assistants/l/locales/{name}": body})
    with pytest.raises(AssistantLoadError) as caught:
        load_assistant(app / "assistants/l")
    assert caught.value.reason == message


def test_json_locales_strict_and_jsonc_with_comments(app):
    """gou application.go:94-107: .jsonc/.yao are read with comments, .json strictly."""
    write(app, {"assistants/j/package.yao": '{"name": "{{ name }}"}',
                "assistants/j/locales/fr.jsonc": '{\n  // French\n  "name": "Carnet",\n}',
                "assistants/j/locales/de.json": '{"name": "Notizen"}'})
    asst = load_assistant(app / "assistants/j")
    assert (asst.display_name("fr"), asst.display_name("de")) == ("Carnet", "Notizen")
    write(app, {"assistants/j/locales/de.json": '{\n  // comment\n  "name": "Notizen"\n}'})
    with pytest.raises(AssistantLoadError) as caught:
        load_assistant(app / "assistants/j")
    assert (caught.value.file.name, caught.value.line, caught.value.reason) == (
        "de.json", 2, "not JSON: Expecting property name enclosed in double quotes")


EN = {"hello": "Hello", "world": "World", "greeting": "Hello, World!", "description": "This is a test"}


@pytest.mark.parametrize("given, expected", [
    ("{{greeting}}", "Hello, World!"),
    ("{{ greeting }}", "Hello, World!"),
    ("{{notfound}}", "{{notfound}}"),
    ("hello", "Hello"),
    (" world ", "World"),
    ("notfound", "notfound"),
    ("Just some text", "Just some text"),
    ("", ""),
    ("Hello {{hello}}", "Hello Hello"),
    ("{{hello}} {{world}}!", "Hello World!"),
    ("Say {{ hello }} to the {{ world }}", "Say Hello to the World"),
    ("Message: {{greeting}} - {{description}}", "Message: Hello, World! - This is a test"),
    ("Hello {{notfound}} World", "Hello {{notfound}} World"),
    ("{{hello}} {{notfound}} {{world}}", "Hello {{notfound}} World"),
    ("{{hello", "{{hello"),
    ("hello}}", "hello}}"),
])
def test_parse_string_rules(given, expected):
    """Ports TestParseString (agent/i18n/i18n_unit_test.go:14-54), case for case."""
    assert translate({"en": EN}, "en", given) == expected


def test_non_string_values_do_not_replace():
    """Ports TestParseStringNonStringValue (i18n_unit_test.go:56-81)."""
    flat = {"en": {"number": 123, "object": {"key": "value"}}}
    assert [translate(flat, "en", s) for s in ("{{number}}", "number", "{{object}}")] == [
        "{{number}}", "number", "{{object}}"]


def test_translate_lookup_order_and_structures():
    """Ports TestTranslate (i18n_unit_test.go:312-375, less the global fallback, which needs Yao's
    built-in messages) and TestEdgeCases (:377-407)."""
    flat = {"en": {"greeting": "Hello", "name": "John"}, "zh-cn": {"greeting": "你好", "name": "张三"}}
    assert translate(flat, "en", "{{greeting}}") == "Hello"
    assert translate(flat, "zh-CN", "{{greeting}}") == "你好"
    assert translate(flat, "en-us", "{{name}}") == "John"
    assert translate(flat, "fr", "{{greeting}}") == "{{greeting}}"
    assert translate(flat, "zh-cn", {"title": "{{greeting}}", "user": "{{name}}", "n": 3}) == {
        "title": "你好", "user": "张三", "n": 3}
    assert translate({"en": {"key": "value"}}, "", "{{key}}") == "{{key}}"
    assert translate({"": {"key": "value"}}, "   ", "{{key}}") == "value"


def test_flatten_short_codes_and_recursion():
    """Ports TestMapFlatten (i18n_unit_test.go:195-222); a translation that holds a template is
    translated again (i18n.go:257-271), and a self-reference stops."""
    flat = flatten_locales({"en-us": {"greeting": "Hello"}, "zh-cn": {"greeting": "你好"}}, {})
    assert sorted(flat) == ["cn", "en", "en-us", "us", "zh", "zh-cn"]
    assert flat["en"]["greeting"] == "Hello" and flat["zh"]["greeting"] == "你好"
    nested = {"en": {"title": "{{brand}} notes", "brand": "Acme", "loop": "{{loop}}!"}}
    assert translate(nested, "en", "{{title}}") == "Acme notes"
    assert translate(nested, "en", "{{loop}}").startswith("{{loop}}!")


# -- $SYS / $ENV / $CTX ------------------------------------------------------------------------------------


@pytest.mark.parametrize("content, variables, expected", [
    ("App: $ENV.TEST_APP_NAME", None, "App: TestApp"),
    ("Value: $ENV.NOT_EXIST_VAR_12345", None, "Value: "),
    ("User: $CTX.USER_ID, Locale: $CTX.LOCALE", {"USER_ID": "user-123", "LOCALE": "zh-CN"}, "User: user-123, Locale: zh-CN"),
    ("Value: $CTX.NOT_EXIST", {"USER_ID": "u"}, "Value: "),
    ("Value: $CTX.SOMETHING", None, "Value: $CTX.SOMETHING"),
    ("Value: $SYS.UNKNOWN_VAR", None, "Value: $SYS.UNKNOWN_VAR"),
    ("Value: $SYS Value: $ENV Value: $CTX", None, "Value: $SYS Value: $ENV Value: $CTX"),
    ("$CTX.VAR and $CTX.VAR again", {"VAR": "value"}, "value and value again"),
    ("Name: $CTX.NAME", {"NAME": "用户名"}, "Name: 用户名"),
    ("Env then ctx: $ENV.NESTED", {"X": "filled"}, "Env then ctx: filled"),
])
def test_prompt_variables(content, variables, expected):
    """Ports TestPromptParse and TestParseVariablesEdgeCases (agent/store/types/prompt_test.go:14-233,
    :363-427); the last case shows the order of prompt.go:231-271 ($ENV. before $CTX.)."""
    environ = {"TEST_APP_NAME": "TestApp", "NESTED": "$CTX.X"}
    assert render_variables(content, variables, now=NOW, environ=environ) == expected


def test_system_variables_at_a_fixed_time():
    """prompt.go:20-33 at 2026-03-05 14:07:09. UNIX is Go's layout "1136239445" (month month hour12 6 day
    hour12 9 minute minute second, unpadded): 3 3 2 6 5 2 9 7 7 9. TIMEZONE is time.Local's name, "Local"."""
    names = "TIME DATE DATETIME TIMEZONE WEEKDAY YEAR MONTH DAY HOUR MINUTE SECOND UNIX".split()
    rendered = render_variables("|".join(f"$SYS.{n}" for n in names), None, now=NOW, environ={})
    assert rendered.split("|") == ["14:07:09", "2026-03-05", "2026-03-05 14:07:09", "Local", "Thursday",
                                   "2026", "03", "05", "14", "07", "09", "3326529779"]


def test_prompt_variables_from_the_request():
    """build.go:177-267: request fields by name, metadata last as strings, empty and None skipped."""
    asst = load_assistant(MINIMAL)
    variables = asst.prompt_variables(locale="en", chat_id="c1", USER_ID="u1", THEME="",
                                      metadata={"plan": "pro", "seats": 3, "beta": True, "none": None, "empty": ""})
    assert variables == {"ASSISTANT_ID": "tests.minimal", "ASSISTANT_TYPE": "assistant", "ASSISTANT_NAME": "Minimal",
                         "CHAT_ID": "c1", "LOCALE": "en", "USER_ID": "u1", "plan": "pro", "seats": "3", "beta": "true"}


# -- JSON with comments ------------------------------------------------------------------------------------


def test_jsonc_dialect_is_gous():
    """gou application.go:127-195: // and /* */ comments blanked (offsets and line breaks kept), a comma
    before } or ] removed, strings untouched (a // inside a string, an escaped quote)."""
    source = '// head\n{"a": "x // y", /* c\n */ "b": [1, 2,], "q": "\\" //",}\n'
    stripped = strip_jsonc(source)
    assert len(stripped) == len(source) and stripped.count("\n") == source.count("\n")
    assert loads_jsonc(source) == {"a": "x // y", "b": [1, 2], "q": '" //'}
    assert top_level_key_lines(source) == {"a": 2, "b": 3, "q": 3}


def test_jsonc_comment_edges():
    """A line comment at the end without a newline, and an unterminated block comment, blank to the end
    (application.go:135-161); a lone slash is left for the decoder to refuse."""
    assert strip_jsonc('{"a": 1} // end') == '{"a": 1}       '
    assert strip_jsonc('{"a": 1} /* open\nstill') == '{"a": 1}        \n     '
    with pytest.raises(JSONCError) as caught:
        loads_jsonc('{"a": 1 / 2}')
    assert (caught.value.line, caught.value.column) == (1, 9)


@pytest.mark.parametrize("source, line, column", [
    ('{\n  "a": NaN\n}', 2, 8),
    ("{'a': 1}", 1, 2),
    ('{\n  "a": 0x10\n}', 2, 9),
    ('{"a": 1,,}', 1, 10),
])
def test_jsonc_refuses_what_go_refuses(source, line, column):
    """JSON5 extras (NaN, single quotes, hex) are errors, as they are for jsoniter; a double comma stays one."""
    with pytest.raises(JSONCError) as caught:
        loads_jsonc(source)
    assert (caught.value.line, caught.value.column) == (line, column)


# -- registries --------------------------------------------------------------------------------------------


def test_processes_and_assistants_are_checked():
    def find(*args):
        return args

    minimal = load_assistant(MINIMAL)
    asst = load_assistant(CREATE, processes={"models.note.Find": find}, assistants=[minimal])
    assert asst.processes == {"models.note.Find": find}
    assert asst.assistants == {"tests.minimal": minimal}
    with pytest.raises(AssistantLoadError, match=r"processes\['models.x'\]: expected a callable, got int"):
        load_assistant(CREATE, processes={"models.x": 3})
    with pytest.raises(AssistantLoadError, match=r"assistants\['a'\]: expected an Assistant"):
        load_assistant(CREATE, assistants={"a": "tests/minimal"})
