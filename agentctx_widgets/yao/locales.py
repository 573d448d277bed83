"""An assistant's ``locales/`` and its ``{{ key }}`` templates, translated the way Yao translates them.

In Yao the ``{{ … }}`` templates live in ``package.yao`` (``"name": "{{ name }}"``, the placeholder's
title, description and prompts) and are filled from the assistant's locale files
(YaoApp/yao@5a3f9a6a ``agent/i18n/i18n.go``); system prompts use ``$SYS.`` / ``$ENV.`` / ``$CTX.`` instead
(:mod:`.prompt_vars`). The rules, each with its source line:

- ``locales/<code>.yml``: the code is the file name lower-cased (``i18n.go:153``); nested keys are
  flattened to dots and lists to ``.0`` and ``[0]`` (``i18n.go:171``, kun ``maps/strany.go:116-158``,
  which also keeps every intermediate key); ``en-us`` also answers for ``en`` and ``us`` unless a file
  defines them (``i18n.go:175-185``).
- The assistant's ``name``, ``description`` and ``capabilities`` are added to every locale that lacks them
  (``agent/assistant/load.go:630-645``); an assistant without locale files gets ``en``, ``en-us``, ``zh``,
  ``zh-cn`` and ``zh-tw`` holding just those (``load.go:649-670``).
- A string is translated when it is a message key as a whole (``"hello"``, trimmed), a single
  ``{{ key }}``, or text with embedded ``{{ key }}`` (each found key replaced, unknown ones kept); only
  string values replace (``i18n.go:69-125``). Maps and lists are translated item by item (``i18n.go:26-66``).
- Lookup order: the exact locale (lower-cased, trimmed), then its region, then its language
  (``i18n.go:274-296``); a result that still holds ``{{ key }}`` is translated again (``i18n.go:257-271``).

Differences: Yao's built-in ``__global__`` messages (its own UI strings) are not here; Go iterates maps in
random order, so when ``en-us`` and ``en-gb`` both exist which one ``en`` answers for is chance in Yao —
here it is the first in sorted order; Yao's recursion has no bound (a self-referencing key never ends),
ours stops after :data:`MAX_DEPTH` rounds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_LOCALES", "MAX_DEPTH", "MAX_KEYS", "count_flat_keys", "flatten_locales", "translate"]

DEFAULT_LOCALES = ("en", "en-us", "zh", "zh-cn", "zh-tw")
"""The locales Yao makes for an assistant that ships none (``load.go:652``)."""

MAX_DEPTH = 8
"""How many times a translated string that still holds templates is translated again."""

MAX_KEYS = 100_000
"""A locale whose messages flatten to more keys than this is refused: kun's flattening writes every list
item twice (``key.0`` and ``key[0]``), so 28 nested one-item lists (73 bytes) would make 2^28 keys."""

_TEMPLATE = re.compile(r"\{\{\s*([^}]+?)\s*\}\}")  # i18n.go:86, :105, :259


def flatten_locales(locales: Mapping[str, Mapping[str, Any]], injected: Mapping[str, str]) -> dict[str, dict]:
    """Locale code → flat messages, with the short codes and the ``injected`` name/description added."""
    if not locales:
        return {code: dict(injected) for code in DEFAULT_LOCALES} if injected else {}
    flat: dict[str, dict] = {}
    for code in sorted(locales):
        count = count_flat_keys(locales[code], MAX_KEYS)
        if count > MAX_KEYS:
            raise ValueError(f"locale {code!r} flattens to more than {MAX_KEYS} keys (MAX_KEYS); refusing it")
        messages: dict[str, Any] = {}
        for key, value in locales[code].items():
            _dot_set(messages, str(key), value)
        flat[code] = messages
        parts = code.split("-")
        if len(parts) > 1:
            flat.setdefault(parts[0], messages)
            flat.setdefault(parts[1], messages)
    for messages in {id(m): m for m in flat.values()}.values():  # shared dicts: update each once
        for key, value in injected.items():
            messages.setdefault(key, value)
    return flat


def count_flat_keys(messages: Mapping[str, Any], limit: int) -> int:
    """How many keys :func:`flatten_locales` makes of one locale's ``messages``, counted without making
    them and given up past ``limit`` (then any number over it): linear in ``limit``, not in the result."""
    count, stack = 0, list(messages.values())
    while stack and count <= limit:
        value = stack.pop()
        count += 1
        if isinstance(value, list):
            stack.extend(value)
            stack.extend(value)  # key.0 and key[0]
        elif isinstance(value, Mapping):
            stack.extend(value.values())
    return count


def _dot_set(out: dict, key: str, value: Any) -> None:
    """kun's ``dotSet``: lists as ``key.0`` and ``key[0]``, maps as ``key.sub``, and ``key`` itself."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            _dot_set(out, f"{key}.{index}", item)
            _dot_set(out, f"{key}[{index}]", item)
    elif isinstance(value, Mapping):
        for sub, item in value.items():
            _dot_set(out, f"{key}.{sub}", item)
    out[key] = value


def translate(flat: Mapping[str, Mapping[str, Any]], locale: str | None, value: Any) -> Any:
    """``value`` translated into ``locale`` from flattened locales (Yao's ``i18n.Translate``)."""
    return _translate(flat, (locale or "").strip().lower(), value, 0)


def _translate(flat: Mapping[str, Mapping[str, Any]], locale: str, value: Any, depth: int) -> Any:
    parts = locale.split("-")
    candidates = [locale] + ([parts[1], parts[0]] if len(parts) > 1 else [])
    for code in candidates:
        messages = flat.get(code)
        if messages is None:
            continue
        result = _parse(messages, value)
        if isinstance(value, str) and result == value:
            continue  # not found here: try the next code (i18n.go:243-250)
        if isinstance(result, str) and depth < MAX_DEPTH and _TEMPLATE.search(result):
            result = _TEMPLATE.sub(lambda m: _again(flat, locale, m, depth), result)
        return result
    return value


def _again(flat: Mapping[str, Mapping[str, Any]], locale: str, match: re.Match, depth: int) -> str:
    name = match.group(1).strip()
    translated = _translate(flat, locale, name, depth + 1)
    return translated if isinstance(translated, str) and translated != name else match.group(0)


def _parse(messages: Mapping[str, Any], value: Any) -> Any:
    """One locale's ``I18n.Parse``: strings by the three rules, maps and lists item by item."""
    if isinstance(value, str):
        return _parse_string(messages, value)
    if isinstance(value, Mapping):
        return {key: _parse(messages, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_parse(messages, item) for item in value]
    return value


def _parse_string(messages: Mapping[str, Any], text: str) -> str:
    trimmed = text.strip()
    if "{{" not in trimmed and "}}" not in trimmed:
        found = messages.get(trimmed)
        return found if isinstance(found, str) else text
    whole = _TEMPLATE.fullmatch(trimmed)
    if whole is not None and len(_TEMPLATE.findall(trimmed)) == 1:
        found = messages.get(whole.group(1).strip())
        return found if isinstance(found, str) else text

    def replace(match: re.Match) -> str:
        found = messages.get(match.group(1).strip())
        return found if isinstance(found, str) else match.group(0)

    return _TEMPLATE.sub(replace, text)
