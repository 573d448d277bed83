"""Which output API a hook script was written for: the seed's (Yao of 2025-11-26) or today's
(5a3f9a6a), decided from what the script uses — the rules are in ``yao/output.py``'s docstring.

Upstream has one ``ctx`` per version, so the members each version lacks decide: today's ``ctx`` has no
``SendGroup`` / ``Flush`` and no ``Output`` constructor (jsapi.go:34-49; agent/output/jsapi/output.go is
commented out), the seed's has no ``SendStream`` / ``Append`` / ``Replace`` / ``Merge`` / ``Set`` /
``End`` / ``EndBlock`` / ``MessageID`` / ``BlockID`` / ``ThreadID``, and no ``message_id`` field. The scan
reads the script's text with comments removed (strings are kept: a field name is usually a key).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Api = Literal["seed", "current"]

CURRENT_METHODS = ("SendStream", "Append", "Replace", "Merge", "Set", "End", "EndBlock", "MessageID",
                   "BlockID", "ThreadID")
CURRENT_FIELDS = ("message_id", "block_id", "thread_id", "chunk_id")
SEED_METHODS = ("SendGroup", "Flush")

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_FIRST_PARAMS = re.compile(r"\bfunction\s*[A-Za-z_$][\w$]*\s*\(\s*([A-Za-z_$][\w$]*)")
_RESULT_OF_SEND = re.compile(r"(?:=|return|\(|,|:)\s*{receiver}\s*\.\s*Send\s*\(")


@dataclass(frozen=True, slots=True)
class ApiChoice:
    """The API a script runs with and why: ``evidence`` is ``(line, what)`` for each use that decided."""

    api: Api
    evidence: tuple[tuple[int, str], ...]
    decided_by: Literal["explicit", "script", "default"]


class MixedApiError(ValueError):
    """A script that uses members of both APIs: no Yao version runs it."""


def _blank_comments(source: str) -> str:
    """Comments replaced by spaces (newlines kept), so line numbers still count."""
    return _COMMENTS.sub(lambda match: re.sub(r"[^\n]", " ", match.group()), source)


def _line(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


def scan(source: str) -> dict[Api, list[tuple[int, str]]]:
    """Every use of a member only one API has, by API: ``{"current": [(line, what)], "seed": [...]}``.

    A method counts when it is called on a hook's ``ctx`` — ``ctx`` itself or the first parameter of
    any ``function`` in the script (``Create(c, …)``) — so ``ctx.memory.user.Set(…)`` is not ``ctx.Set``.
    """
    text = _blank_comments(source)
    receivers = {"ctx", *_FIRST_PARAMS.findall(text)}
    alternatives = "|".join(re.escape(name) for name in sorted(receivers))
    found: dict[Api, list[tuple[int, str]]] = {"current": [], "seed": []}
    for api, names in (("current", CURRENT_METHODS), ("seed", SEED_METHODS)):
        pattern = re.compile(rf"(?<![\w$.])(?:{alternatives})\s*\.\s*({'|'.join(names)})\s*\(")
        for match in pattern.finditer(text):
            found[api].append((_line(text, match.start()), f"ctx.{match.group(1)}"))
    for match in re.finditer(rf"\b({'|'.join(CURRENT_FIELDS)})\b", text):
        found["current"].append((_line(text, match.start()), match.group(1)))
    result = re.compile(_RESULT_OF_SEND.pattern.format(receiver=f"(?:{alternatives})"))
    for match in result.finditer(text):
        found["current"].append((_line(text, match.start()), "the value of ctx.Send"))
    for match in re.finditer(r"\bnew\s+Output\s*\(", text):
        found["seed"].append((_line(text, match.start()), "new Output(ctx)"))
    for uses in found.values():
        uses.sort()
    return found


def detect_api(source: str, *, default: Api, explicit: Api | None = None) -> ApiChoice:
    """The API ``source`` runs with: ``explicit`` if given; else the one its uses point to; else
    ``default`` (``"current"`` for an assistant directory, ``"seed"`` for ``hooks_from_js``). Raises
    :class:`MixedApiError` naming a line of each when it uses both."""
    if explicit is not None:
        if explicit not in ("seed", "current"):
            raise ValueError(f"api must be 'seed' or 'current', got {explicit!r}")
        return ApiChoice(explicit, (), "explicit")
    found = scan(source)
    if found["current"] and found["seed"]:
        (cur_line, cur), (seed_line, seed) = found["current"][0], found["seed"][0]
        raise MixedApiError(f"the script uses both output APIs: {cur} (line {cur_line}) is today's Yao, "
                            f"{seed} (line {seed_line}) the seed's; no Yao runs both — pass api='current' "
                            f"or api='seed' to choose")
    for api in ("current", "seed"):
        if found[api]:
            return ApiChoice(api, tuple(found[api]), "script")  # type: ignore[arg-type]
    return ApiChoice(default, (), "default")
