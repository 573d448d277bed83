"""The ``$SYS.`` / ``$ENV.`` / ``$CTX.`` variables of Yao prompts, and ``@assets/`` includes.

Yao fills a prompt's variables when it builds each request, not when it loads the assistant
(YaoApp/yao@5a3f9a6a ``agent/assistant/build.go:75-120`` → ``agent/store/types/prompt.go:210-271``), in
this order:

1. ``$SYS.NAME`` (``[A-Z_]+``): the clock (``prompt.go:20-33``); an unknown name is kept as written.
2. ``$ENV.NAME``: the environment variable, ``""`` when unset (``prompt.go:245-253``).
3. ``$CTX.NAME``: the request's variables (``build.go:177-267``: ``ASSISTANT_ID``, ``ASSISTANT_NAME``,
   ``ASSISTANT_DESCRIPTION`` (both translated into the request's locale), ``ASSISTANT_TYPE``,
   ``WORKSPACE_ID``, ``CHAT_ID``, ``LOCALE``, ``THEME``, ``ROUTE``, ``REFERER``, ``CLIENT_TYPE``,
   ``USER_ID``, ``TEAM_ID``, ``TENANT_ID``, then every metadata key); ``""`` when missing
   (``prompt.go:256-268``).

Because the steps run in turn, an environment value that contains ``$CTX.X`` is filled by step 3, as in
Yao. Yao's ``$SYS.TIMEZONE`` is Go's ``time.Local.String()``, which is the word ``Local``, and its
``$SYS.UNIX`` formats the layout ``"1136239445"`` (``prompt.go:32``), which is not a Unix timestamp but
month, month, 12-hour, ``6``, day, 12-hour, ``9``, minute, minute, second, unpadded; both are reproduced
so a prompt reads here as it will in Yao.

``@assets/NAME.(md|yml|yaml|json|txt)`` in a prompts file is replaced, before the YAML is parsed, by the
asset file as an indented block scalar, or by nothing when the file is missing (``prompt.go:40``,
``:183-205``); :func:`expand_assets` also returns where each expanded line came from, so a YAML error
still names the line of the file the author wrote.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from datetime import datetime

__all__ = ["ENV_VARIABLE", "SYSTEM_VARIABLES", "expand_assets", "render_variables"]

_SYS = re.compile(r"\$SYS\.([A-Z_]+)")
_ENV = ENV_VARIABLE = re.compile(r"\$ENV\.([A-Za-z_][A-Za-z0-9_]*)")
_CTX = re.compile(r"\$CTX\.([A-Za-z_][A-Za-z0-9_]*)")
_ASSET = re.compile(r"@assets/([^\s]+\.(md|yml|yaml|json|txt))")


def _hour12(now: datetime) -> str:
    return str(now.hour % 12 or 12)


def _go_unix_layout(now: datetime) -> str:
    """Go's ``now.Format("1136239445")``: 1=month, 3=hour (12h), 2=day, 4=minute, 5=second; 6 and 9 literal."""
    month, hour, minute = str(now.month), _hour12(now), str(now.minute)
    return f"{month}{month}{hour}6{now.day}{hour}9{minute}{minute}{now.second}"


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")  # Go's, whatever the C locale

SYSTEM_VARIABLES: Mapping[str, Callable[[datetime], str]] = {
    "TIME": lambda now: now.strftime("%H:%M:%S"),
    "DATE": lambda now: now.strftime("%Y-%m-%d"),
    "DATETIME": lambda now: now.strftime("%Y-%m-%d %H:%M:%S"),
    "TIMEZONE": lambda now: "Local",
    "WEEKDAY": lambda now: _WEEKDAYS[now.weekday()],
    "YEAR": lambda now: now.strftime("%Y"),
    "MONTH": lambda now: now.strftime("%m"),
    "DAY": lambda now: now.strftime("%d"),
    "HOUR": lambda now: now.strftime("%H"),
    "MINUTE": lambda now: now.strftime("%M"),
    "SECOND": lambda now: now.strftime("%S"),
    "UNIX": _go_unix_layout,
}
"""``$SYS.`` names → their text at ``now`` (``prompt.go:20-33``)."""


def render_variables(
    text: str,
    variables: Mapping[str, str] | None,
    *,
    now: datetime | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """``text`` with ``$SYS.``, ``$ENV.`` then ``$CTX.`` filled; ``variables=None`` leaves ``$CTX.`` as is."""
    moment = datetime.now() if now is None else now
    env = os.environ if environ is None else environ

    def system(match: re.Match) -> str:
        fill = SYSTEM_VARIABLES.get(match.group(1))
        return match.group(0) if fill is None else fill(moment)

    text = _SYS.sub(system, text)
    text = _ENV.sub(lambda match: env.get(match.group(1), ""), text)
    if variables is not None:
        text = _CTX.sub(lambda match: str(variables.get(match.group(1), "")), text)
    return text


def expand_assets(text: str, read_asset: Callable[[str, int], str | None]) -> tuple[str, list[int], list[str]]:
    """``text`` with ``@assets/`` includes expanded by ``read_asset(name, line)`` (the asset's text, or
    ``None`` when it does not exist; it raises to refuse one).

    Returns the text, the original line of each expanded line (1-based), and the asset names that were
    missing (Yao drops them silently; the loader reports them as diagnostics).
    """
    missing: list[str] = []
    out_lines: list[str] = []
    origin: list[int] = []

    for number, line in enumerate(text.split("\n"), start=1):

        def include(match: re.Match, number: int = number) -> str:
            content = read_asset(match.group(1), number)
            if content is None:
                missing.append(match.group(1))
                return ""
            return "|\n" + "".join("    " + line + "\n" for line in content.split("\n"))

        expanded = _ASSET.sub(include, line)
        pieces = expanded.split("\n")
        out_lines.extend(pieces)
        origin.extend([number] * len(pieces))
    return "\n".join(out_lines), origin, missing
