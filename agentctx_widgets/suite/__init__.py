"""Regression suites of whole conversations (issue 22): record a set of conversations once
(``Suite.record``), check every hook change against all of them (``Suite(path).check`` → ``SuiteReport``),
and see what changed turn by turn (``diff``).

The names load on first use, as the root's do: the pytest plugin (``suite.pytest_plugin``) is imported by
every pytest run in an environment where the package is installed, and must cost nothing (and break
nothing) until a suite file is collected."""

from __future__ import annotations

import importlib
from typing import Any

_HOMES: dict[str, str] = {
    **dict.fromkeys(("MISSING", "Change", "TurnDiff"), "changes"),
    **dict.fromkeys(("Diff", "diff"), "compare"),
    **dict.fromkeys(("ID", "ID_KEYS", "VOLATILE_KEYS", "Normalizer", "TurnRecord", "turn_records"), "records"),
    **dict.fromkeys(("STATUSES", "CaseReport", "SuiteReport", "Progress", "PROGRESS_MIME"), "report"),
    **dict.fromkeys(("FORMAT", "Suite", "SuiteBudgetExceeded", "SuiteFileError", "SuiteInterrupted", "SECRET_KEYS",
                     "STOP_WAIT"), "suite"),
    "Repricing": "reprice",
}

__all__ = ["Suite", "SuiteReport", "CaseReport", "SuiteBudgetExceeded", "Repricing", "SuiteFileError", "SuiteInterrupted", "STATUSES", "FORMAT", "diff", "Diff", "TurnDiff",
           "Change", "MISSING", "Normalizer", "TurnRecord", "turn_records", "ID", "ID_KEYS", "VOLATILE_KEYS"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
