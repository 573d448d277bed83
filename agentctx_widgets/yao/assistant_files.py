"""The readers of each file in a Yao assistant directory, for :func:`.assistant.load_assistant`.

One function per part of the directory, each raising :class:`AssistantLoadError` that names the file and
line of what is malformed: ``prompts.yml`` and the ``prompts/`` presets (YaoApp/yao@5a3f9a6a
``agent/store/types/prompt.go``), ``locales/`` (``agent/i18n/i18n.go:128-158``) and ``src/``
(``agent/assistant/scripts.go:53-144``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from .._js_types import js_type
from ..context.safe_write import UnsafeFileError, check_regular, read_regular
from ..context.types import TYPE_OF_ROLE, text_content
from ..output.diagnostics import diagnostic
from .jsonc import JSONCError, loads_json, loads_jsonc
from .locales import MAX_KEYS, count_flat_keys
from .prompt_vars import expand_assets
from .yaml_reader import compose, construct

__all__ = ["PROMPT_ROLES", "AssistantLoadError", "default_prompts", "diagnostic", "find_scripts",
           "prompt_presets", "prompts_file", "read_locales", "read_text"]

PROMPT_ROLES = ("system", "developer", "user", "assistant")
"""Roles a prompt may have here (Yao passes any string on to the model, which refuses others)."""

_LOCALE_PARSERS = (".yml", ".yaml", ".json", ".jsonc", ".yao")  # gou application.go:93-115

MAX_FILE_BYTES = 1024 * 1024
"""Any file of an assistant (``package.yao``, a prompts file, a locale, an asset) larger than this is
refused by its size before it is read (1 MB of prompt is about 250,000 tokens)."""
MAX_ASSET_BYTES = 4 * 1024 * 1024
"""The ``@assets/`` files one prompts file includes, together; past this it is refused."""


class AssistantLoadError(ValueError):
    """An assistant directory Yao would refuse, or a file in it that does not parse.

    ``file`` is the file (or directory) at fault, ``line`` its 1-based line when known.
    """

    def __init__(self, message: str, *, file: Path | str, line: int | None = None) -> None:
        self.file = Path(file)
        self.line = line
        self.reason = message
        where = f"{self.file}:{line}" if line is not None else str(self.file)
        super().__init__(f"{where}: {message}")


def read_text(file: Path, within: Path) -> str:
    """The UTF-8 text of ``file``, which must resolve (symlinks followed) inside ``within``, be a regular
    file (a FIFO or a device is refused before it is opened) and hold at most ``MAX_FILE_BYTES``."""
    real = _resolved(file)
    if not real.is_relative_to(within.resolve()):
        what = f"is a symlink to {real}, which is" if file.is_symlink() else "is"
        raise AssistantLoadError(f"{what} outside {within}; an assistant reads only its own files", file=file)
    try:
        data = read_regular(real, "assistant file", MAX_FILE_BYTES)
    except UnsafeFileError as error:
        raise AssistantLoadError(str(error).split(f"{real} ", 1)[-1], file=file) from None
    except OSError as error:
        raise AssistantLoadError(f"cannot be read: {error.strerror}", file=file) from error
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise AssistantLoadError(f"not UTF-8 text ({error.reason})", file=file, line=line) from error


def _resolved(file: Path) -> Path:
    """``file`` with its symlinks resolved; a symlink loop is refused (Python 3.11 raises RuntimeError)."""
    try:
        return file.resolve()
    except (RuntimeError, OSError):
        raise AssistantLoadError("is a symlink loop (or passes through one); refusing to read it", file=file) from None


def walked_folder(directory: Path, name: str) -> Path | None:
    """``directory / name`` when it is a directory (``src``, ``locales``, ``prompts``, ``assets``), ``None``
    when there is none; refused, naming it, when it resolves (a symlink) outside ``directory``: its files
    would all be another directory's. (``rglob`` does not follow a symlinked folder inside it, and every
    file read is confined by :func:`read_text` again.)"""
    folder = directory / name
    if not folder.is_dir():
        return None
    real = _resolved(folder)
    if not real.is_relative_to(directory.resolve()):
        raise AssistantLoadError(f"is a symlink to {real}, which is outside {directory}; an assistant reads only "
                                 f"its own files", file=folder)
    return folder


def _present(file: Path) -> bool:
    """Whether something is at ``file`` (a dangling symlink or a FIFO too: read_text says what it is)."""
    return file.exists() or file.is_symlink()




# -- prompts ---------------------------------------------------------------------------------------------


def default_prompts(directory: Path, package: dict, key_lines: dict, diagnostics: list[dict]) -> list[dict]:
    """``prompts.yml`` when it exists (it wins, ``load.go:340-349``), else the package's ``prompts``."""
    file = directory / "prompts.yml"
    if _present(file):
        return prompts_file(file, directory, diagnostics)
    inline = package.get("prompts")
    if inline is None:
        return []
    package_file = directory / "package.yao"
    line = key_lines.get("prompts", 1)
    if isinstance(inline, str):  # YAML text inside package.yao (load.go:708-714)
        return _prompts_yaml(inline, package_file, [line] * (inline.count("\n") + 1))
    if not isinstance(inline, list):
        raise AssistantLoadError(f"prompts must be a list of {{role, content}}, got {js_type(inline)}",
                                 file=package_file, line=line)
    return [_prompt_message(item, lambda _key: line, package_file, f"prompts[{index}]")
            for index, item in enumerate(inline)]


def prompts_file(file: Path, root: Path, diagnostics: list[dict]) -> list[dict]:
    """A prompts file's messages; its ``@assets/`` are read from ``root/assets``, confined to ``root``."""
    budget = [MAX_ASSET_BYTES]

    def read_asset(name: str, line: int) -> str | None:
        try:
            walked_folder(root, "assets")
        except AssistantLoadError as error:
            raise AssistantLoadError(f"@assets/{name}: {error}", file=file, line=line) from None
        asset = root / "assets" / name
        if not _present(asset):
            try:
                real = _resolved(asset)
            except AssistantLoadError as error:
                raise AssistantLoadError(f"@assets/{name}: {error}", file=file, line=line) from None
            if not real.is_relative_to(root.resolve()):  # ../ or an absolute name: refused, not missing
                raise AssistantLoadError(f"@assets/{name}: resolves to {real}, outside {root}; an "
                                         f"assistant reads only its own files", file=file, line=line)
            return None
        try:
            text = read_text(asset, root)
        except AssistantLoadError as error:
            raise AssistantLoadError(f"@assets/{name}: {error}", file=file, line=line) from None
        budget[0] -= len(text)
        if budget[0] < 0:
            raise AssistantLoadError(f"@assets/{name}: the assets this file includes are over "
                                     f"{MAX_ASSET_BYTES} bytes together (MAX_ASSET_BYTES)", file=file, line=line)
        return text

    expanded, origin, missing = expand_assets(read_text(file, root), read_asset)
    for asset in missing:
        diagnostics.append(diagnostic("yao_missing_asset", str(file), asset=asset, path=root / "assets" / asset))
    return _prompts_yaml(expanded, file, origin)


def _prompts_yaml(text: str, file: Path, origin: list[int]) -> list[dict]:
    """A YAML list of prompts → Context messages; ``origin`` maps each text line to the file's line."""

    def line_of(mark: Any) -> int:
        return origin[min(mark.line, len(origin) - 1)] if origin else mark.line + 1

    try:
        root, loader = compose(text)
    except yaml.YAMLError as error:
        raise _yaml_error(error, file, line_of) from None
    if root is None or (isinstance(root, yaml.ScalarNode) and root.tag.endswith(":null")):
        return []  # an empty file: no prompts (yaml.v3 leaves the slice nil)
    if not isinstance(root, yaml.SequenceNode):
        raise AssistantLoadError("expected a list of prompts (- role: system\\n  content: …)", file=file,
                                 line=line_of(root.start_mark))
    messages = []
    for index, item in enumerate(root.value):
        if not isinstance(item, yaml.MappingNode):
            raise AssistantLoadError(f"prompt {index + 1}: expected role and content, got {_node_kind(item)}",
                                     file=file, line=line_of(item.start_mark))
        try:
            fields = {construct(loader, key): value for key, value in item.value}
        except yaml.YAMLError as error:
            raise _yaml_error(error, file, line_of) from None
        marks = {key: value.start_mark for key, value in fields.items()}
        data = {key: _scalar_text(value) for key, value in fields.items()}
        for key, value in data.items():
            if value is _NOT_SCALAR and key in ("role", "content", "name"):
                raise AssistantLoadError(f"prompt {index + 1}: {key} must be text, got {_node_kind(fields[key])}",
                                         file=file, line=line_of(marks[key]))
        messages.append(_prompt_message(
            data, lambda key: line_of(marks.get(key, item.start_mark)), file, f"prompt {index + 1}"))
    return messages


_NOT_SCALAR = object()


def _yaml_error(error: yaml.YAMLError, file: Path, line_of: Callable[[Any], int]) -> AssistantLoadError:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    return AssistantLoadError(f"not YAML: {problem}", file=file, line=line_of(mark) if mark is not None else None)


def _scalar_text(node: yaml.Node) -> Any:
    """yaml.v3 decoding into a Go string: any scalar as written, null as ``""``; a map or list refused."""
    if not isinstance(node, yaml.ScalarNode):
        return _NOT_SCALAR
    return "" if node.tag.endswith(":null") else node.value


def _node_kind(node: yaml.Node) -> str:
    return {yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list"}.get(type(node), f"the text {node.value!r}")


def _prompt_message(item: Any, line_of: Callable[[str], int], file: Path, where: str) -> dict:
    """A Yao ``Prompt`` as a Context message: the role's message type, one text block, ``name`` kept."""
    if not isinstance(item, Mapping):
        raise AssistantLoadError(f"{where}: expected role and content, got {js_type(item)}",
                                 file=file, line=line_of("role"))
    role = item.get("role", "")
    if role not in PROMPT_ROLES:
        raise AssistantLoadError(f"{where}: role {role!r} is not one of {', '.join(PROMPT_ROLES)}",
                                 file=file, line=line_of("role"))
    content, name = item.get("content", ""), item.get("name", "")
    for key, value in (("content", content), ("name", name)):
        if not isinstance(value, str):
            raise AssistantLoadError(f"{where}: {key} must be text, got {js_type(value)}",
                                     file=file, line=line_of(key))
    message: dict = {"type": TYPE_OF_ROLE[role], "content": [text_content(content)]}
    if name:
        message["name"] = name
    return message


def prompt_presets(directory: Path, diagnostics: list[dict]) -> dict[str, list[dict]]:
    """``prompts/**.yml|yaml`` → preset key (the path dotted, no extension) → messages."""
    folder = walked_folder(directory, "prompts")
    if folder is None:
        return {}
    presets = {}
    for file in sorted(folder.rglob("*")):
        if not file.is_dir() and file.suffix in (".yml", ".yaml"):
            key = ".".join(file.relative_to(folder).with_suffix("").parts)
            presets[key] = prompts_file(file, directory, diagnostics)
    return presets


# -- locales ---------------------------------------------------------------------------------------------


def read_locales(directory: Path) -> dict[str, dict]:
    """``locales/**`` → code (file name lower-cased, extension dropped; ``i18n.go:143-155``) → messages."""
    folder = walked_folder(directory, "locales")
    if folder is None:
        return {}
    found: dict[str, dict] = {}
    for file in sorted(folder.rglob("*")):
        if file.is_dir() or file.name.startswith("."):
            continue  # anything else that is not a regular file is refused by read_text, not skipped
        if file.suffix not in _LOCALE_PARSERS:
            raise AssistantLoadError(f"a locale file must be YAML or JSON ({', '.join(_LOCALE_PARSERS)}); "
                                     "Yao refuses others", file=file)
        messages = _locale_file(file, directory)
        if count_flat_keys(messages, MAX_KEYS) > MAX_KEYS:
            raise AssistantLoadError(f"flattens to more than {MAX_KEYS} message keys (MAX_KEYS; every nested "
                                     f"list item is a key twice, key.0 and key[0]); refusing it", file=file)
        found[file.stem.lower()] = messages
    return found


def _locale_file(file: Path, directory: Path) -> dict:
    text = read_text(file, directory)
    if file.suffix in (".yml", ".yaml"):
        try:
            root, loader = compose(text)
            data = {} if root is None else construct(loader, root)
        except yaml.YAMLError as error:
            raise _yaml_error(error, file, lambda mark: mark.line + 1) from None
        line = root.start_mark.line + 1 if root is not None else 1
    else:  # gou reads .json strictly and .jsonc/.yao with comments (application.go:94-107)
        try:
            data = loads_json(text) if file.suffix == ".json" else loads_jsonc(text)
        except JSONCError as error:
            dialect = "JSON" if file.suffix == ".json" else "JSON with comments"
            raise AssistantLoadError(f"not {dialect}: {error.reason}", file=file, line=error.line) from error
        line = 1
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise AssistantLoadError(f"expected messages (key: text), got {js_type(data)}", file=file, line=line)
    return data


# -- scripts ---------------------------------------------------------------------------------------------


def find_scripts(directory: Path, diagnostics: list[dict]) -> tuple[Path | None, str | None, dict[str, Path]]:
    """The hook script ``src/index.ts|js`` and the other scripts (``scripts.go:53-124``)."""
    src = walked_folder(directory, "src")
    if src is None:
        return None, None, {}
    for file in sorted(src.rglob("*")):  # a FIFO or device index.ts is refused, not taken for "no script"
        if file.suffix in (".ts", ".js") and not file.is_dir() and not file.is_file():
            try:
                check_regular(file, "assistant script")
            except UnsafeFileError as error:
                raise AssistantLoadError(str(error).split(f"{file} ", 1)[-1], file=file) from None
            except OSError as error:
                raise AssistantLoadError(f"cannot be read: {error.strerror}", file=file) from None
    typescript, javascript = src / "index.ts", src / "index.js"
    script = typescript if typescript.is_file() else javascript if javascript.is_file() else None
    if typescript.is_file() and javascript.is_file():
        diagnostics.append(diagnostic("yao_two_index_scripts", str(src)))
    sources = {}
    for file in sorted(src.rglob("*")):
        if not file.is_file() or file.suffix not in (".ts", ".js") or file.parent == src and file.stem == "index":
            continue
        if file.name.endswith(("_test.ts", "_test.js")):
            continue
        sources[".".join(file.relative_to(src).with_suffix("").parts)] = file
    language = None if script is None else ("typescript" if script.suffix == ".ts" else "javascript")
    return script, language, sources
