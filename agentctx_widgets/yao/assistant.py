"""A Yao assistant directory, read as Yao reads it: ``load_assistant(path) -> Assistant``.

The reference is YaoApp/yao@5a3f9a6a ``agent/assistant/load.go`` (``LoadPath``, line 317; ``loadMap``,
line 442). An assistant is a directory under an app's ``assistants/`` folder holding:

- ``package.yao`` (required): JSON with comments (:mod:`.jsonc`); ``name`` is required (``load.go:454``).
  Yao reads the fields in :data:`KNOWN_FIELDS` and drops any other key without a word; we keep every key
  in :attr:`Assistant.package` and list the unknown ones in :attr:`Assistant.unknown_fields`.
- ``prompts.yml``: a YAML list of ``{role, content, name?}`` (``agent/store/types/types.go:235``), with
  ``@assets/…`` includes (``prompt.go:183``); without the file, a ``prompts`` list (or YAML text) in
  ``package.yao`` is used (``load.go:702-729``). ``prompts/**.yml`` are presets, keyed by their path
  dotted (``prompts/chat/friendly.yml`` → ``chat.friendly``, ``prompt.go:170-176``).
- ``locales/*.yml``: the messages of ``{{ key }}`` templates (:mod:`.locales`).
- ``src/index.ts`` (or ``index.js``): the hook script; other ``src/**.ts|js`` files except ``*_test.*``
  are the scripts it may import (``scripts.go:53-124``). Loading does not run or even read them.

The id is Yao's: the path under the app's ``assistants/`` folder, dotted (``load.go:329-330``:
``assistants/tests/create`` → ``tests.create``), unless ``id=`` is given.

Every malformed file raises :class:`AssistantLoadError` naming the file and line (the readers of each
file are in :mod:`.assistant_files`); nothing is half-loaded.
What Yao accepts but a developer almost surely did not mean (an ``@assets/`` file that is missing, which
Yao silently includes as nothing; a field of the wrong type, which Yao silently ignores) is kept as Yao
does and recorded in :attr:`Assistant.diagnostics` (``{code, message, where, hint}``): ``yao_field_ignored``,
``yao_unknown_field`` (a key close to one Yao reads, ``option`` for ``options``), ``yao_missing_asset``,
``yao_two_index_scripts``.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..context.types import text_content
from . import locales as i18n
from .._js_types import js_type
from .assistant_files import (PROMPT_ROLES, AssistantLoadError, default_prompts, diagnostic, find_scripts,
                              prompt_presets, prompts_file, read_locales, read_text, walked_folder)
from .jsonc import JSONCError, loads_jsonc, top_level_key_lines
from .prompt_vars import ENV_VARIABLE, render_variables

__all__ = ["KNOWN_FIELDS", "NOT_EMULATED", "PROMPT_ROLES", "Assistant", "AssistantLoadError", "load_assistant"]

KNOWN_FIELDS = frozenset({
    "assistant_id", "name", "avatar", "type", "placeholder", "mentionable", "automated", "modes",
    "default_mode", "disable_global_prompts", "readonly", "public", "share", "built_in", "sort", "path",
    "connector", "connector_options", "tags", "options", "description", "capabilities", "locales",
    "search", "prompts", "prompt_presets", "source", "kb", "db", "mcp", "workflow", "sandbox",
    "dependencies", "uses", "script", "scripts", "created_at", "updated_at",
    "__yao_created_by", "__yao_updated_by", "__yao_team_id", "__yao_tenant_id",
})
"""The ``package.yao`` keys Yao's ``loadMap`` reads (``load.go:442-891``)."""

NOT_EMULATED: Mapping[str, str] = {
    "kb": "knowledge-base collections (load.go:746)",
    "db": "database models for search (load.go:755)",
    "mcp": "tool usage samples in the system prompt (mcp.go:161-203: only a Yao process server has them; the "
           "servers' tools are offered to the model and run, and hooks reach them through ctx.mcp, once they are "
           "registered: load_assistant(mcp=...) or start_mcp=True)",
    "workflow": "workflows (load.go:773)",
    "sandbox": "a V2 sandbox (package.yao or sandbox.yao, load.go:396, :784)",
    "search": "web/KB/DB search settings (load.go:676)",
    "uses": "vision/audio/search wrappers (load.go:827)",
    "dependencies": "registry dependencies (load.go:802)",
    "source": "an inline hook script stored in the database (load.go:741)",
}
"""Fields an assistant may have that this kit keeps but cannot run: listed in ``Assistant.not_emulated``."""
@dataclass(frozen=True, eq=False)
class Assistant:
    """One loaded assistant: what Yao's ``Assistant`` holds that a notebook run needs, and the rest kept.

    ``prompts`` are Context messages (seed 001: ``{"type": 1, "content": [{"type": "text", …}]}``, a
    prompt's ``name`` kept on the message) with their ``$SYS./$ENV./$CTX.`` variables still unfilled:
    :meth:`request_prompts` fills them for one request, and Yao puts them, global prompts first, before
    the conversation (``build.go:53-57``, ``:87-99``).
    """

    id: str
    """Yao's assistant id (``tests.create``), ``ctx.assistant_id`` in a hook."""
    name: str
    """``name`` as written (maybe a ``{{ name }}`` template: :meth:`display_name` translates it)."""
    path: Path
    """The assistant directory, absolute."""
    package: dict
    """``package.yao`` as parsed, every key kept (the connector as written, before ``$ENV.``)."""
    prompts: list[dict] = field(default_factory=list)
    """``prompts.yml`` as Context messages, variables unfilled."""
    prompt_presets: dict[str, list[dict]] = field(default_factory=dict)
    """``prompts/<key>.yml`` presets, chosen by ``Create``'s ``prompt_preset`` or ``__prompt_preset``."""
    global_prompts: list[dict] = field(default_factory=list)
    """The app's ``agent/prompts.yml`` (``load.go:158``), prepended unless ``disable_global_prompts``."""
    locales: dict[str, dict] = field(default_factory=dict)
    """``locales/<code>.yml`` as parsed: locale code (lower-case) → messages."""
    script: Path | None = None
    """``src/index.ts`` or ``src/index.js``: the hook script (``Create``, ``Next``), or ``None``."""
    language: str | None = None
    """``"typescript"`` or ``"javascript"``: the script's language, ``None`` without a script."""
    sources: dict[str, Path] = field(default_factory=dict)
    """The other scripts in ``src/`` by Yao's script id (``foo/bar.ts`` → ``foo.bar``, ``scripts.go:128``)."""
    connector: str | None = None
    """The Yao connector name (``$ENV.NAME`` resolved, ``load.go:304-311``); ``None`` means the default."""
    options: dict = field(default_factory=dict)
    """Completion options (``temperature``, ``max_tokens``, …), the lowest layer of ``build.go:273``."""
    type: str = "assistant"
    """``type``, ``assistant`` when absent (``load.go:333``)."""
    description: str = ""
    disable_global_prompts: bool = False
    not_emulated: tuple[str, ...] = ()
    """Fields present that this kit keeps but cannot run (:data:`NOT_EMULATED`), in the package's order."""
    unknown_fields: tuple[str, ...] = ()
    """``package.yao`` keys Yao does not read (it drops them; we keep them in ``package``)."""
    diagnostics: list[dict] = field(default_factory=list)
    """What Yao accepts silently but is likely a mistake: ``{code, message, where, hint}``."""
    processes: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """``Process(name, …)`` of ``@yao/runtime``: name → Python callable."""
    assistants: Mapping[str, "Assistant"] = field(default_factory=dict)
    """Other assistants ``ctx.agent.Call`` may run, by id."""
    env_allow: frozenset[str] | None = None
    """The environment variables ``$ENV.NAME`` may fill (``load_assistant(env_allow=…)``); ``None``: all,
    as in Yao; a name not in the set fills as ``""``, as an unset one does."""
    env_reads: tuple[str, ...] = ()
    """The ``$ENV.`` names this assistant's prompts and connector read (the ``yao_env_read`` diagnostic)."""
    services: Mapping[str, Any] = field(default_factory=dict)
    """What the hooks' ``ctx.mcp`` / ``ctx.search`` / ``ctx.workspace`` answer from (``load_assistant``'s
    ``mcp=`` / ``search=`` / ``workspace=``): ``YaoServices`` options."""

    @property
    def mcp(self) -> dict | None:
        """``package.yao``'s ``mcp`` block, as Yao uses it: each of ``servers`` registered here (``services["mcp"]``:
        ``load_assistant(mcp=...)``, or ``mcps/*.mcp.yao`` with ``start_mcp=True``) has its tools — the ``tools``
        listed, else all, at most 20 — offered to the model as ``server_id__tool``, and a call of one runs on
        that server, its result going back to the model (``agent/assistant/mcp.go:31-415``, ``build.go:546-595``);
        a server not registered is skipped with a ``yao_mcp_not_offered`` diagnostic. ``options.tool_loop`` /
        ``max_turn`` drive the tool loop (``loop.go:163-196``)."""
        value = self.package.get("mcp")
        return value if isinstance(value, dict) else None

    @property
    def avatar(self) -> str:
        value = self.package.get("avatar")
        return value if isinstance(value, str) else ""

    # -- translation ---------------------------------------------------------------------------------

    def flat_locales(self) -> dict[str, dict]:
        """Locale code → flat messages, as Yao registers them for this assistant (``load.go:624-671``)."""
        injected = {key: value for key in ("name", "description", "capabilities")
                    if isinstance(value := self.package.get(key), str) and value}
        return i18n.flatten_locales(self.locales, injected)

    def translate(self, value: Any, locale: str | None) -> Any:
        """``value`` (a string, map or list) with its ``{{ key }}`` templates filled for ``locale``."""
        return i18n.translate(self.flat_locales(), locale, value)

    def display_name(self, locale: str | None = None) -> str:
        """The name as a user of ``locale`` sees it (``assistant.go:115``)."""
        return str(self.translate(self.name, locale))

    def display_description(self, locale: str | None = None) -> str:
        """The description as a user of ``locale`` sees it (``assistant.go:120``)."""
        return str(self.translate(self.description, locale))

    def placeholder(self, locale: str | None = None) -> dict | None:
        """The chat placeholder (``title``, ``description``, ``prompts``) translated (``assistant.go:94-112``)."""
        raw = self.package.get("placeholder")
        if not isinstance(raw, Mapping):
            return None
        prompts = raw.get("prompts")
        return {
            "title": str(self.translate(raw.get("title") or "", locale)),
            "description": str(self.translate(raw.get("description") or "", locale)),
            "prompts": [str(self.translate(p, locale)) for p in prompts] if isinstance(prompts, list) else [],
        }

    # -- prompts for one request ---------------------------------------------------------------------

    def prompt_variables(self, *, locale: str | None = None, chat_id: str | None = None,
                         metadata: Mapping[str, Any] | None = None, **request: str) -> dict[str, str]:
        """The ``$CTX.`` variables of one request (``build.go:177-267``).

        ``request`` takes the other request fields by their variable names (``USER_ID="u1"``,
        ``THEME="dark"``); metadata keys are added last, as strings, skipping ``None`` and ``""``.
        """
        variables = {"ASSISTANT_ID": self.id, "ASSISTANT_TYPE": self.type}
        if name := self.display_name(locale):
            variables["ASSISTANT_NAME"] = name
        if description := self.display_description(locale):
            variables["ASSISTANT_DESCRIPTION"] = description
        if chat_id:
            variables["CHAT_ID"] = chat_id
        if locale:
            variables["LOCALE"] = locale
        variables.update({key: str(value) for key, value in request.items() if value})
        for key, value in (metadata or {}).items():
            text = _go_string(value)
            if text:
                variables[str(key)] = text
        return variables

    def request_prompts(self, variables: Mapping[str, str] | None = None, *, preset: str | None = None,
                        disable_global: bool | None = None, now: datetime | None = None,
                        environ: Mapping[str, str] | None = None) -> list[dict]:
        """The prompt messages Yao puts before the conversation, their variables filled.

        Global prompts first unless disabled, then the ``preset``'s prompts when it names one that exists,
        else the default prompts (``build.go:75-120``, ``:143-156``). ``variables`` are the ``$CTX.``
        values (:meth:`prompt_variables`; ``None`` fills none and leaves ``$CTX.`` as written).
        """
        disabled = self.disable_global_prompts if disable_global is None else disable_global
        chosen = self.prompt_presets.get(preset) if preset else None
        messages = ([] if disabled else self.global_prompts) + (chosen or self.prompts)
        env = _allowed(os.environ if environ is None else environ, self.env_allow)
        return [_rendered(message, variables, now, env) for message in messages]


def _allowed(environ: Mapping[str, str], allow: frozenset[str] | None) -> Mapping[str, str]:
    return environ if allow is None else {key: value for key, value in environ.items() if key in allow}


def _go_string(value: Any) -> str:
    """``cast.ToString`` for the metadata types Yao documents (string, numbers, bool); others → ``""``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return value if isinstance(value, str) else json.dumps(value)
    return ""


def _rendered(message: dict, variables: Mapping[str, str] | None, now: datetime | None,
              environ: Mapping[str, str] | None) -> dict:
    text = message["content"][0]["text"]
    return {**message, "content": [text_content(render_variables(text, variables, now=now, environ=environ))]}


# -- loading ------------------------------------------------------------------------------------------


def load_assistant(
    path: str | os.PathLike,
    *,
    id: str | None = None,
    processes: Mapping[str, Callable[..., Any]] | None = None,
    assistants: Mapping[str, Assistant] | Iterable[Assistant] | None = None,
    mcp: Any = None,
    search: Any = None,
    workspace: str | os.PathLike | None = None,
    env_allow: Iterable[str] | None = None,
    start_mcp: bool = False,
) -> Assistant:
    """Read the assistant directory at ``path`` as Yao does; raise :class:`AssistantLoadError` if it is bad.

    ``processes`` maps ``Process`` names (``models.user.Find``) to Python callables for the hook script;
    ``assistants`` are the other loaded assistants ``ctx.agent.Call`` may reach (a mapping by id, or a
    list keyed by their own ids). ``mcp`` (a ``yao.Mcp``) and ``search`` (a ``yao.Search``) answer the
    hooks' ``ctx.mcp`` / ``ctx.search`` with Python functions you registered on them; ``workspace`` is the
    local directory ``ctx.workspace`` works in (nothing outside it is reachable). ``mcp`` may also map server
    ids to real servers (``McpServer.stdio`` / ``McpServer.http``) or to ``{tool: function}`` mappings.

    The MCP servers the app's and the assistant's ``mcps/*.mcp.yao`` describe start only with
    ``start_mcp=True`` (a downloaded package would otherwise run a command): without it each is named,
    with the command it would run, in a ``yao_mcp_not_started`` diagnostic (``yao/mcp_config.py``).

    ``$ENV.NAME`` in a prompt sends that environment variable to the model, as in Yao; a downloaded
    package can read any of them (``$ENV.OPENAI_API_KEY``), so the names it reads are listed in a
    ``yao_env_read`` diagnostic and in :attr:`Assistant.env_reads`, and ``env_allow=["NAME", …]`` fills
    only those: the others read as unset (``""`` in a prompt; a connector ``$ENV.NAME`` stays as written,
    as Yao keeps it when the variable is unset); ``env_allow=[]`` fills none.
    """
    directory = _assistant_directory(path)
    assistant_id = _checked_id(id) if id is not None else _derived_id(directory)
    allow = _checked_env_allow(env_allow)
    registry = _checked_processes(processes)
    others = _checked_assistants(assistants)
    package_file = directory / "package.yao"
    package, key_lines = _read_package(package_file, directory)
    diagnostics: list[dict] = []
    fields = _Fields(package, f"{package_file}", key_lines, diagnostics)
    connector = fields.get("connector", str, "a string")
    env_reads: dict[str, str] = {}  # name -> the first file that reads it
    if connector and connector.startswith("$ENV."):
        env_reads[connector[5:]] = "the connector"
        if _allowed(os.environ, allow).get(connector[5:]):
            connector = os.environ[connector[5:]]
    options = fields.get("options", dict, "an object") or {}
    description = fields.get("description", str, "a string") or ""
    kind = package.get("type") if isinstance(package.get("type"), str) else "assistant"
    disable_global = fields.get("disable_global_prompts", bool, "true or false") or False

    prompts = default_prompts(directory, package, key_lines, diagnostics)
    presets = prompt_presets(directory, diagnostics)
    global_prompts = _global_prompts(directory, diagnostics)
    locales = read_locales(directory)
    script, language, sources = find_scripts(directory, diagnostics)
    prompt_groups = [(prompts, "prompts.yml" if (directory / "prompts.yml").exists() else "package.yao prompts"),
                     (global_prompts, "the app's agent/prompts.yml")]
    prompt_groups += [(messages, f"prompt preset {key}") for key, messages in presets.items()]
    _add_env_reads(env_reads, prompt_groups)
    if env_reads:
        diagnostics.append(_env_diagnostic(env_reads, allow, str(directory)))
    unknown = _unknown_fields(fields)
    _check_mcp_servers(package, package_file)
    mcp = _mcp_registry(mcp, directory, assistant_id, start_mcp, allow, diagnostics)
    return Assistant(
        id=assistant_id, name=package["name"], path=directory, package=package, prompts=prompts,
        prompt_presets=presets, global_prompts=global_prompts, locales=locales, script=script,
        language=language, sources=sources, connector=connector or None, options=dict(options),
        type=kind, description=description, disable_global_prompts=disable_global,
        not_emulated=_not_emulated(package, directory), unknown_fields=unknown, diagnostics=diagnostics,
        processes=registry, assistants=others, env_allow=allow, env_reads=tuple(sorted(env_reads)),
        services={key: value for key, value in (("mcp", mcp), ("search", search), ("workspace", workspace))
                  if value is not None},
    )


def _assistant_directory(path: str | os.PathLike) -> Path:
    """``path`` resolved; ``AssistantLoadError`` unless it is a directory holding a ``package.yao``."""
    directory = Path(path).expanduser().resolve()
    package_file = directory / "package.yao"
    if not directory.is_dir():
        raise AssistantLoadError("no such assistant directory", file=directory)
    if not package_file.exists() and not package_file.is_symlink():
        raise AssistantLoadError("package.yao not found (an assistant directory holds one, load.go:288)",
                                 file=directory)
    return directory


def _read_package(package_file: Path, directory: Path) -> tuple[dict, dict[str, int]]:
    """``package.yao`` parsed, and the line of each top-level key; refused when Yao would refuse it (not
    JSON with comments, not an object, no string ``name``, a ``placeholder`` that is not an object)."""
    source = read_text(package_file, directory)
    try:
        package = loads_jsonc(source)
    except JSONCError as error:
        raise AssistantLoadError(f"not JSON with comments: {error.reason} (column {error.column})",
                                 file=package_file, line=error.line) from error
    if not isinstance(package, dict):
        raise AssistantLoadError(f"expected an object, got {js_type(package)}", file=package_file, line=1)
    key_lines = top_level_key_lines(source)
    name = package.get("name")
    if not isinstance(name, str):
        found = "missing" if "name" not in package else f"a {js_type(name)}"
        raise AssistantLoadError(f"name is required and must be a string ({found}; load.go:454)",
                                 file=package_file, line=key_lines.get("name"))
    if "placeholder" in package and not isinstance(package["placeholder"], (dict, type(None))):
        raise AssistantLoadError(  # load.go:471-502: Yao decodes it into its Placeholder struct and fails
            f"placeholder must be an object {{title, description, prompts}}, got {js_type(package['placeholder'])}",
            file=package_file, line=key_lines.get("placeholder"))
    return package, key_lines


@dataclass(frozen=True)
class _Fields:
    """``package.yao``'s fields as Yao's ``loadMap`` reads them, what it ignores noted in ``diagnostics``."""

    package: dict
    file: str
    key_lines: dict[str, int]
    diagnostics: list[dict]

    def where(self, key: str) -> str:
        return f"{self.file}:{self.key_lines.get(key, 1)}"

    def get(self, key: str, kind: type, kind_name: str) -> Any:
        """The value at ``key`` when it has Yao's type; otherwise None, with a ``yao_field_ignored``."""
        value = self.package.get(key)
        if value is None or isinstance(value, kind):
            return value
        self.diagnostics.append(diagnostic("yao_field_ignored", self.where(key), key=key, kind=js_type(value),
                                           expected=kind_name))
        return None


def _unknown_fields(fields: _Fields) -> tuple[str, ...]:
    """The keys Yao does not read; one close to a key it reads gets a ``yao_unknown_field``."""
    unknown = tuple(key for key in fields.package if key not in KNOWN_FIELDS)
    for key in unknown:
        close = difflib.get_close_matches(key, sorted(KNOWN_FIELDS), n=1, cutoff=0.8)
        if close:  # "option" for "options": Yao drops it without a word (loadMap reads named keys only)
            fields.diagnostics.append(diagnostic("yao_unknown_field", fields.where(key), key=key, close=close[0]))
    return unknown


def _not_emulated(package: dict, directory: Path) -> tuple[str, ...]:
    present = list(package) + (["sandbox"] if (directory / "sandbox.yao").is_file() else [])
    return tuple(dict.fromkeys(key for key in present if key in NOT_EMULATED))


def _global_prompts(directory: Path, diagnostics: list[dict]) -> list[dict]:
    """The app's ``agent/prompts.yml`` (``load.go:158``), ``[]`` outside an app or without the file. An
    ``agent/`` folder symlinked outside the app is refused naming it (``walked_folder``), so the file, and
    the ``@assets`` it reads from ``agent/assets``, are the app's own (``read_text`` confines them to it)."""
    app_root = _app_root(directory)
    if app_root is None:
        return []
    agent = walked_folder(app_root, "agent")
    if agent is None:
        return []
    global_file = agent / "prompts.yml"
    if not (global_file.exists() or global_file.is_symlink()):
        return []
    return prompts_file(global_file, agent, diagnostics)


def _add_env_reads(env_reads: dict[str, str], prompt_groups: Iterable[tuple[list[dict], str]]) -> None:
    """Each ``$ENV.`` name the prompts read, with the first place that reads it."""
    for messages, where in prompt_groups:
        for message in messages:
            for variable in ENV_VARIABLE.findall(message["content"][0]["text"]):
                env_reads.setdefault(variable, where)


def _checked_env_allow(env_allow: Iterable[str] | None) -> frozenset[str] | None:
    if env_allow is None:
        return None
    if isinstance(env_allow, str) or not all(isinstance(name, str) for name in env_allow):
        raise AssistantLoadError(f"env_allow= must be a list of variable names, got {env_allow!r}", file="<env_allow>")
    return frozenset(env_allow)


def _env_diagnostic(reads: Mapping[str, str], allow: frozenset[str] | None, where: str) -> dict:
    """``yao_env_read``: which environment variables the package reads, where, and what is filled in."""
    names = sorted(reads)
    listed = ", ".join(f"{name} ({reads[name]})" for name in names)
    if allow is None:
        effect = "Yao fills $ENV. in, so a prompt's values go to the model"
    else:
        refused = [name for name in names if name not in allow]
        effect = (f"env_allow fills {', '.join(n for n in names if n in allow) or 'none of them'}"
                  + (f" and leaves {', '.join(refused)} empty" if refused else ""))
    return diagnostic("yao_env_read", where, listed=listed, effect=effect)


# -- id --------------------------------------------------------------------------------------------------


def _checked_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AssistantLoadError(f"id= must be a non-empty string, got {value!r}", file="<id>")
    return value


def _derived_id(directory: Path) -> str:
    """The path under the app's ``assistants/`` folder, dotted (``load.go:329-330``).

    The folder is the outermost ancestor named ``assistants`` whose parent is a Yao app (has ``app.yao``,
    ``app.json`` or ``app.jsonc``), else the nearest ancestor named ``assistants``.
    """
    candidates = [parent for parent in directory.parents if parent.name == "assistants"]
    in_app = [parent for parent in candidates if _is_app(parent.parent)]
    root = in_app[-1] if in_app else (candidates[0] if candidates else None)
    if root is None:
        raise AssistantLoadError(
            "cannot derive Yao's id: the directory is not inside an app's assistants/ folder; pass id=",
            file=directory)
    parts = directory.relative_to(root).parts
    if not parts:
        raise AssistantLoadError("this is the assistants/ folder itself, not an assistant in it", file=directory)
    return ".".join(parts)


def _is_app(directory: Path) -> bool:
    return any((directory / name).is_file() for name in ("app.yao", "app.json", "app.jsonc"))


def _app_root(directory: Path) -> Path | None:
    for parent in directory.parents:
        if parent.name == "assistants" and _is_app(parent.parent):
            return parent.parent
    return None


# -- registries ------------------------------------------------------------------------------------------


def _check_mcp_servers(package: dict, package_file: Path) -> None:
    """``mcp.servers`` in a form Yao reads, else the load fails as Yao's does (``load.go:764-770``)."""
    from .registries import mcp_server_configs

    try:
        mcp_server_configs(package.get("mcp"))
    except ValueError as error:
        raise AssistantLoadError(str(error), file=package_file) from None


def _mcp_registry(mcp: Any, directory: Path, assistant_id: str, start: bool, allow: frozenset[str] | None,
                  diagnostics: list[dict]) -> Any:
    """``mcp=`` as a ``yao.Mcp`` (a mapping of ids to servers or tool functions is registered on a new one),
    with the configured servers added when ``start``; ``None`` when there is nothing to answer from."""
    from .mcp_config import configured_servers
    from .registries import Mcp

    if mcp is not None and not isinstance(mcp, (Mcp, Mapping)):
        raise AssistantLoadError(f"mcp= must be a yao.Mcp or map server ids to servers, got {type(mcp).__name__}",
                                 file="<mcp>")
    configured, found = configured_servers(_app_root(directory), directory, assistant_id, start=start, env_allow=allow)
    diagnostics.extend(found)
    if isinstance(mcp, Mcp) and not configured:
        return mcp
    registry = mcp if isinstance(mcp, Mcp) else Mcp()
    for server_id, server in configured.items():
        registry.register(server_id, server)
    for server_id, server in (mcp.items() if isinstance(mcp, Mapping) else ()):
        try:
            registry.register(server_id, server)
        except (TypeError, ValueError) as error:
            raise AssistantLoadError(f"mcp[{server_id!r}]: {error}", file="<mcp>") from None
    return registry if registry.servers or isinstance(mcp, Mcp) else None



def _checked_processes(processes: Mapping[str, Callable[..., Any]] | None) -> dict[str, Callable[..., Any]]:
    if processes is None:
        return {}
    if not isinstance(processes, Mapping):
        raise AssistantLoadError(f"processes= must map names to callables, got {type(processes).__name__}",
                                 file="<processes>")
    for name, function in processes.items():
        if not isinstance(name, str) or not name:
            raise AssistantLoadError(f"processes: a name must be a non-empty string, got {name!r}",
                                     file="<processes>")
        if not callable(function):
            raise AssistantLoadError(f"processes[{name!r}]: expected a callable, got {type(function).__name__}",
                                     file="<processes>")
    return dict(processes)


def _checked_assistants(assistants: Mapping[str, Assistant] | Iterable[Assistant] | None) -> dict[str, Assistant]:
    if assistants is None:
        return {}
    pairs = assistants.items() if isinstance(assistants, Mapping) else ((getattr(a, "id", None), a) for a in assistants)
    checked: dict[str, Assistant] = {}
    for key, other in pairs:
        if not isinstance(other, Assistant):
            raise AssistantLoadError(f"assistants[{key!r}]: expected an Assistant (load_assistant's result), "
                                     f"got {type(other).__name__}", file="<assistants>")
        checked[str(key)] = other
    return checked
