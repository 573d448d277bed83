"""What changed between two runs of a conversation, turn by turn.

``diff(a, b)`` takes two of anything :func:`.records.turn_records` reads (Contexts, session files, turn
results, suite cases), normalises both the same way, and compares them turn by turn: the input, the
reply's text and thinking (shown by words), each tool call's name and arguments (as JSON), the tool
results, the output messages by id (added, removed, or their props compared leaf by leaf), the
diagnostics and the usage — and, when the usage changed and both sides kept a cost, the cost (``cost:
$0.0035 -> $0.007 (+$0.0035)``; a cost difference alone, the same tokens priced by another table, is no
change: ``reprice()`` shows that). ``str(diff)`` is a unified text diff with the old and the new text both in it
(what ``assert_ok`` and the CLI print); in a notebook a :class:`Diff` shows side by side, as static HTML
that reads with no kernel (``suite/diff_html.py``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from ..context.cost import Cost
from .changes import MISSING, Change, TurnDiff, shown, word_ops
from .costs import cost_text, delta_text
from .diff_html import render_diff
from .records import Normalizer, TurnRecord, turn_records

__all__ = ["Diff", "diff"]


class Diff:
    """Two runs compared turn by turn (the module docstring)."""

    def __init__(self, turns: list[TurnDiff]) -> None:
        self.turns = tuple(turns)

    @property
    def same(self) -> bool:
        """No turn differs."""
        return all(turn.status == "same" for turn in self.turns)

    @property
    def changed(self) -> list[TurnDiff]:
        """The turns that differ, in order."""
        return [turn for turn in self.turns if turn.status != "same"]

    def __str__(self) -> str:
        return "\n".join(_text_lines(self))

    def __repr__(self) -> str:
        return f"<Diff: {len(self.turns)} turn{'s' * (len(self.turns) != 1)}, {len(self.changed)} changed>"

    def to_html(self, *, standalone: bool = False, title: str | None = None) -> str:
        """The diff side by side as static HTML (no JavaScript): a fragment, or a whole page."""
        return render_diff(self.turns, standalone=standalone, title=title)

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self.to_html()}


def diff(a: Any, b: Any, *, normalizer: Normalizer | None = None) -> Diff:
    """``a`` (the old run) against ``b`` (the new one), turn by turn (the module docstring)."""
    old, new = turn_records(a, normalizer), turn_records(b, normalizer)
    turns = []
    for index in range(max(len(old), len(new))):
        before = old[index] if index < len(old) else None
        after = new[index] if index < len(new) else None
        turns.append(_turn_diff(index + 1, before, after))
    return Diff(turns)


def _turn_diff(index: int, old: TurnRecord | None, new: TurnRecord | None) -> TurnDiff:
    if old is None or new is None:
        there = new if old is None else old
        return TurnDiff(index, there.input, "added" if old is None else "removed", (), old, new)
    changes = tuple(_changes(old, new))
    return TurnDiff(index, new.input or old.input, "changed" if changes else "same", changes, old, new)


def _changes(old: TurnRecord, new: TurnRecord) -> Iterator[Change]:
    for name in ("input", "text", "thinking"):
        if getattr(old, name) != getattr(new, name):
            yield Change(name, getattr(old, name), getattr(new, name))
    yield from _listed("tool_calls", old.tool_calls, new.tool_calls)
    yield from _listed("tool_results", old.tool_results, new.tool_results)
    yield from _outputs(old, new)
    if old.diagnostics != new.diagnostics:
        yield Change("diagnostics", old.diagnostics, new.diagnostics)
    usage = list(_leaves("usage", old.usage or {}, new.usage or {}))
    yield from usage
    if usage and old.cost is not None and new.cost is not None \
            and (old.cost.total, old.cost.unpriced) != (new.cost.total, new.cost.unpriced):
        yield Change("cost", old.cost, new.cost)


_REPLY_PROPS = (".props.content", ".props.arguments", ".props.name", ".props.id")
"""The props of a reply output that ``text`` / ``thinking`` / ``tool_calls`` already compare."""


def _outputs(old: TurnRecord, new: TurnRecord) -> Iterator[Change]:
    """Output messages aligned as lines are (their ids are made up, so their place decides): equal ones
    skipped, an inserted or dropped one added or removed, one of the same type in the same place compared
    prop by prop. A path names the message by its place in the new run (``outputs[2]``; the old run's for a
    removed one)."""
    whole = _aligned([shown(item) for item in old.outputs], [shown(item) for item in new.outputs])
    for tag, i1, i2, j1, j2 in whole:
        if tag == "equal":
            continue
        kinds = _aligned([item["type"] for item in old.outputs[i1:i2]], [item["type"] for item in new.outputs[j1:j2]])
        for kind, k1, k2, l1, l2 in kinds:
            if kind == "equal":  # the same types in the same places: compared prop by prop
                for i, j in zip(range(i1 + k1, i1 + k2), range(j1 + l1, j1 + l2)):
                    reply = i in old.reply_outputs and j in new.reply_outputs
                    yield from (change for change in _leaves(f"outputs[{j + 1}]", old.outputs[i], new.outputs[j])
                                if not (reply and change.path.endswith(_REPLY_PROPS)))
                continue
            yield from (Change(f"outputs[{i + 1}]", old.outputs[i], MISSING) for i in range(i1 + k1, i1 + k2))
            yield from (Change(f"outputs[{j + 1}]", MISSING, new.outputs[j]) for j in range(j1 + l1, j1 + l2))


def _aligned(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _listed(name: str, old: list[dict], new: list[dict]) -> Iterator[Change]:
    for index in range(max(len(old), len(new))):
        path = f"{name}[{index}]"
        if index >= len(old) or index >= len(new):
            yield Change(path, old[index] if index < len(old) else MISSING, new[index] if index < len(new) else MISSING)
        else:
            for key in dict.fromkeys([*old[index], *new[index]]):
                before, after = old[index].get(key, MISSING), new[index].get(key, MISSING)
                if before != after:
                    yield Change(f"{path}.{key}", before, after)


def _leaves(path: str, old: Any, new: Any) -> Iterator[Change]:
    """Dicts compared key by key, down to values that are not dicts (lists and strings compare whole)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in dict.fromkeys([*old, *new]):
            yield from _leaves(f"{path}.{key}", old.get(key, MISSING), new.get(key, MISSING))
    elif old != new:
        yield Change(path, old, new)


# ---- the text form ----

WORD_DIFF_LIMIT = 4_000
"""Texts longer than this (characters, either side) get the line diff only, not the word line."""


def _text_lines(result: Diff) -> Iterator[str]:
    if not result.turns:
        yield "no turns on either side"
        return
    same = [turn.index for turn in result.turns if turn.status == "same"]
    for turn in result.turns:
        if turn.status == "same":
            continue
        yield f"turn {turn.index} {_quoted(turn.input)}: {turn.status}"
        if turn.status != "changed":
            there = turn.new if turn.status == "added" else turn.old
            sign = "+" if turn.status == "added" else "-"
            yield from (f"  {sign} {line}" for line in (there.text or "(no reply text)").splitlines() or [""])
            continue
        for change in turn.changes:
            yield from _change_lines(change)
    if same:
        yield f"same: turn{'s' * (len(same) != 1)} {_ranges(same)}"


def _change_lines(change: Change) -> Iterator[str]:
    if isinstance(change.old, Cost) and isinstance(change.new, Cost):
        delta = delta_text(change.old, change.new)
        yield f"  {change.path}: {cost_text(change.old)} -> {cost_text(change.new)}" + (f" ({delta})" if delta else "")
        return
    old, new = shown(change.old), shown(change.new)
    if change.kind != "changed":
        sign, value = ("+", new) if change.kind == "added" else ("-", old)
        first, *rest = value.splitlines() or [""]
        yield f"  {sign} {change.path}: {first}"
        yield from (f"  {sign}   {line}" for line in rest)
        return
    if isinstance(change.old, (int, float)) and isinstance(change.new, (int, float)) and not isinstance(change.old, bool):
        yield f"  {change.path}: {old} -> {new} ({change.new - change.old:+g})"
        return
    yield f"  {change.path}:"
    yield from (f"    - {line}" for line in old.splitlines() or [""])
    yield from (f"    + {line}" for line in new.splitlines() or [""])
    if isinstance(change.old, str) and isinstance(change.new, str) and max(len(old), len(new)) <= WORD_DIFF_LIMIT:
        marked = "".join(text if op == "=" else f"[-{text}-]" if op == "-" else f"{{+{text}+}}"
                         for op, text in word_ops(change.old, change.new))
        if "\n" not in marked and (old and new):
            yield f"    ~ {marked}"


def _quoted(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return repr(line if len(line) <= 60 else line[:59] + "…")


def _ranges(numbers: list[int]) -> str:
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
