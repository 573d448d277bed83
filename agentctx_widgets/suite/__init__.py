"""Regression checks of whole conversations: turn-level diffs of two runs (``diff``), and the records they
compare. Issue 22's suites (record a set of conversations, check every hook change against them) build on
these."""

from .changes import MISSING, Change, TurnDiff
from .diff import Diff, diff
from .records import ID_KEYS, VOLATILE_KEYS, Normalizer, TurnRecord, turn_records

__all__ = ["diff", "Diff", "TurnDiff", "Change", "MISSING", "Normalizer", "TurnRecord", "turn_records", "ID_KEYS",
           "VOLATILE_KEYS"]
