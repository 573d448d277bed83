"""Regression suites of whole conversations (issue 22): record a set of conversations once
(``Suite.record``), check every hook change against all of them (``Suite(path).check`` → ``SuiteReport``),
and see what changed turn by turn (``diff``)."""

from .changes import MISSING, Change, TurnDiff
from .diff import Diff, diff
from .records import ID, ID_KEYS, VOLATILE_KEYS, Normalizer, TurnRecord, turn_records
from .report import STATUSES, CaseReport, SuiteReport
from .suite import FORMAT, Suite, SuiteFileError

__all__ = ["Suite", "SuiteReport", "CaseReport", "SuiteFileError", "STATUSES", "FORMAT", "diff", "Diff", "TurnDiff",
           "Change", "MISSING", "Normalizer", "TurnRecord", "turn_records", "ID", "ID_KEYS", "VOLATILE_KEYS"]
