"""Regression suites: record a set of conversations once, check every hook change against all of them.

``Suite.record(path, cases, hooks=…, model=…)`` runs each case through ``run_turn`` against a real model
and writes one JSON Lines file: a header line, then one line per case with its inputs, the model calls
(as :class:`~agentctx_widgets.models.ReplayModel` records them, so replaying needs no network) and what
each turn produced (the messages it committed, the output messages the client got, diagnostics, usage,
error). ``Suite(path).check(hooks=…)`` re-runs every case with the current hooks against the recorded
answers, offline, and compares each turn with :func:`.diff.diff`: a case is ``passed``, ``changed``,
``failed`` (a turn fails now that did not) or ``model_changed`` (the hooks now send the model a request no
recording fits; the reason names the part of the request that changed, as ``ReplayModel``'s miss does).

A case is a string (one turn), a list of strings (turns in order), or a dict ``{"id", "turns", "ctx":
{…ctx fields}, "context": [initial messages]}``. Cases run on ``concurrency`` threads. ``hooks`` may be
a hook set or a callable that makes one (``lambda: hooks_from_js(source)``): a callable is called once per
thread, so JavaScript hook sets, which run their calls one at a time, check cases side by side.

The file is read as untrusted input: a regular file of at most ``MAX_FILE_BYTES``, lines of at most
``MAX_LINE_BYTES`` checked as the session store checks its lines, each recording re-verified by
``ReplayModel`` when it replays (a forged key is refused, naming the case).
"""

from __future__ import annotations

import os
import tempfile
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..context import Context
from ..context.safe_write import UnsafeFileError, read_regular, write_atomic
from ..context.store import RefusedJSON, decode_json
from ..models import ReplayModel
from ..turns import run_turn
from .diff import Diff, diff
from .report import CaseReport, SuiteReport

__all__ = ["Suite", "SuiteFileError", "MAX_FILE_BYTES", "MAX_LINE_BYTES", "FORMAT"]

FORMAT = "agentctx-suite/1"
MAX_FILE_BYTES = 512 << 20
MAX_LINE_BYTES = 64 << 20


_CALLS = "calls.jsonl"
"""The name of a case's recordings while it runs (a ReplayModel file in a temporary folder)."""


class SuiteFileError(ValueError):
    """A suite file that cannot be read: which file, which line, what was wrong."""


@dataclass
class _Case:
    id: str
    turns: list[Any]
    ctx: dict = field(default_factory=dict)
    context: list[dict] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)

    def line(self) -> dict:
        return {"type": "case", "id": self.id, "turns": self.turns, "ctx": self.ctx, "context": self.context,
                "calls": self.calls, "results": self.results}


class Suite:
    """A recorded suite file (the module docstring)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.cases = _read(self.path)

    def __repr__(self) -> str:
        return f"Suite({str(self.path)!r}, {len(self.cases)} case{'s' * (len(self.cases) != 1)})"

    @classmethod
    def record(cls, path: str | os.PathLike, cases: Iterable[Any], *, model: Any, hooks: Any = None,
               assistant: Any = None, concurrency: int = 8, **turn_options: Any) -> Suite:
        """Run ``cases`` against ``model`` and write the suite file at ``path`` (replacing it)."""
        parsed = [_parse_case(case, index) for index, case in enumerate(cases)]
        _check_ids(parsed)
        runner = _Runner(hooks, assistant, turn_options)
        try:
            recorded = _map(lambda case: runner.record(case, model), parsed, concurrency)
        finally:
            runner.close()
        _write(Path(path), recorded)
        return cls(path)

    def check(self, *, hooks: Any = None, assistant: Any = None, concurrency: int = 8, update: bool = False,
              model: Any = None, **turn_options: Any) -> SuiteReport:
        """Every case re-run with these hooks against its recorded answers, and compared (module docstring).
        ``update=True`` re-records the ``model_changed`` cases with ``model`` and rewrites the file."""
        if update and model is None:
            raise ValueError("check(update=True) re-records the model_changed cases: pass the model as model=")
        runner = _Runner(hooks, assistant, turn_options)
        try:
            report = SuiteReport(_map(runner.check, self.cases, concurrency))
            changed = [case for case in self.cases if case.id in report.model_changed] if update else []
            again = {case.id: runner.record(case, model) for case in changed}
        finally:
            runner.close()
        if again:
            self.cases = [again.get(case.id, case) for case in self.cases]
            _write(self.path, self.cases)
        return report


class _Runner:
    """Runs one case's turns with the given hooks (one hook set per thread when ``hooks`` is a factory)."""

    def __init__(self, hooks: Any, assistant: Any, turn_options: dict) -> None:
        self._hooks, self._assistant, self._options = hooks, assistant, turn_options
        self._local = threading.local()
        self._made: list[Any] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the hook sets the factory made (a JavaScript set holds a worker process)."""
        with self._lock:
            made, self._made = self._made, []
        for hooks in made:
            close = getattr(hooks, "close", None)
            if callable(close):
                close()

    def _hook_set(self) -> Any:
        if not isinstance(self._hooks, types.FunctionType):  # a hook set, shared by every thread
            return self._hooks
        made = getattr(self._local, "hooks", None)
        if made is None:
            made = self._local.hooks = self._hooks()
            with self._lock:
                self._made.append(made)
        return made

    def record(self, case: _Case, model: Any) -> _Case:
        with tempfile.TemporaryDirectory(prefix="agentctx-suite-") as folder:
            recording = Path(folder) / _CALLS
            results = self._run(case, ReplayModel(recording, model=model, mode="record"))
            calls = [orjson.loads(line) for line in recording.read_bytes().splitlines() if line.strip()] \
                if recording.exists() else []
        return _Case(case.id, case.turns, case.ctx, case.context, calls, results)

    def check(self, case: _Case) -> CaseReport:
        try:
            with tempfile.TemporaryDirectory(prefix="agentctx-suite-") as folder:
                recording = Path(folder) / _CALLS
                recording.write_bytes(b"".join(orjson.dumps(call) + b"\n" for call in case.calls))
                results = self._run(case, ReplayModel(recording, mode="replay"))
        except Exception as failure:  # noqa: BLE001 - a case that crashes is failed, the rest go on
            return CaseReport(case.id, "failed", reason=f"{type(failure).__name__}: {failure}")
        return _judge(case, results)

    def _run(self, case: _Case, model: ReplayModel) -> list[dict]:
        context = Context([dict(message) for message in case.context])
        results = []
        for text in case.turns:
            before = len(context)
            result = run_turn(context, text, model=model, hooks=self._hook_set(), assistant=self._assistant,
                              check=False, **{**self._options, **case.ctx})
            results.append(_turn_of(context.messages()[before:], result))
        return results


def _turn_of(messages: list[dict], result: Any) -> dict:
    outputs = getattr(result, "output", None)
    if outputs is None:
        outputs = getattr(result, "messages", [])
    return {"messages": messages, "outputs": list(outputs), "diagnostics": list(result.diagnostics),
            "usage": result.usage, "error": result.error}


def _judge(case: _Case, results: list[dict]) -> CaseReport:
    for index, (now, then) in enumerate(zip(results, case.results)):
        error = now.get("error") or {}
        if error.get("code") == "REPLAY_MISS":
            return CaseReport(case.id, "model_changed", reason=f"turn {index + 1}: {_miss_text(error)}", results=results)
        if error and not then.get("error"):
            return CaseReport(case.id, "failed", reason=f"turn {index + 1}: {error.get('message', error)}",
                              results=results, diff=diff({"turns": case.results}, {"turns": results}))
    changes: Diff = diff({"turns": case.results}, {"turns": results})
    return CaseReport(case.id, "passed" if changes.same else "changed", diff=changes, results=results)


def _miss_text(error: dict) -> str:
    """ReplayModel's miss, said of the suite: which request, how it differs from the nearest recorded one."""
    text = str(error.get("message", "")).replace(f" in {_CALLS}", " in this case's recordings")
    return text.split("\n(record it:", 1)[0] + "\n(re-record it: suite.check(update=True, model=<a real model>))"


def _map(work: Callable[[Any], Any], items: list[Any], concurrency: int) -> list[Any]:
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    if concurrency == 1 or len(items) < 2:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="agentctx-suite") as pool:
        futures = [pool.submit(work, item) for item in items]
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _parse_case(case: Any, index: int) -> _Case:
    where = f"cases[{index}]"
    if isinstance(case, str):
        return _Case(f"case-{index + 1}", [case])
    if isinstance(case, (list, tuple)):
        return _Case(f"case-{index + 1}", _turn_texts(case, where))
    if not isinstance(case, Mapping):
        raise TypeError(f"{where}: a case is a string, a list of strings or a dict, not a {type(case).__name__}")
    unknown = set(case) - {"id", "turns", "ctx", "context"}
    if unknown:
        raise ValueError(f"{where}: unknown key{'s' * (len(unknown) > 1)} {sorted(unknown)} (a case has id, turns, "
                         "ctx, context)")
    turns = case.get("turns")
    turns = [turns] if isinstance(turns, str) else turns
    ctx, context = case.get("ctx") or {}, case.get("context") or []
    if not isinstance(ctx, Mapping):
        raise TypeError(f"{where}.ctx: ctx fields are a dict, not a {type(ctx).__name__}")
    if not isinstance(context, list) or not all(isinstance(message, Mapping) for message in context):
        raise TypeError(f"{where}.context: the initial messages are a list of message dicts")
    return _Case(str(case.get("id") or f"case-{index + 1}"), _turn_texts(turns, f"{where}.turns"), dict(ctx),
                 [dict(message) for message in context])


def _turn_texts(turns: Any, where: str) -> list[Any]:
    if not isinstance(turns, (list, tuple)) or not turns:
        raise TypeError(f"{where}: turns are a non-empty list of strings (or user messages)")
    for index, turn in enumerate(turns):
        if not isinstance(turn, (str, Mapping)):
            raise TypeError(f"{where}[{index}]: a turn is a string or a user message dict, not a {type(turn).__name__}")
    return list(turns)


def _check_ids(cases: list[_Case]) -> None:
    seen: dict[str, int] = {}
    for index, case in enumerate(cases):
        if case.id in seen:
            raise ValueError(f"cases[{index}]: id {case.id!r} is also cases[{seen[case.id]}]'s; ids must differ")
        seen[case.id] = index


# ---- reading a suite file ----


def _write(path: Path, cases: list[_Case]) -> None:
    lines = [orjson.dumps({"type": "suite", "format": FORMAT, "cases": len(cases)})]
    lines += [orjson.dumps(case.line()) for case in cases]
    write_atomic(path, b"\n".join(lines) + b"\n", "suite")


def _read(path: Path) -> list[_Case]:
    try:
        lines = _bounded_lines(read_regular(path, "suite", MAX_FILE_BYTES), path)
    except UnsafeFileError as error:
        raise SuiteFileError(str(error)) from None
    except OSError as error:
        raise SuiteFileError(f"{path}: cannot read the suite file ({error.strerror or error})") from None
    if not lines or lines[0][1].get("format") != FORMAT:
        raise SuiteFileError(f"{path}: not a suite file (its first line is not {{\"type\": \"suite\", "
                             f"\"format\": \"{FORMAT}\"}})")
    cases = [_case_of(entry, number, path) for number, entry in lines[1:]]
    _check_file_ids(cases, lines[1:], path)
    return cases


def _bounded_lines(data: bytes, path: Path) -> list[tuple[int, dict]]:
    lines = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise SuiteFileError(f"{path}:{number}: a line over {MAX_LINE_BYTES} bytes (MAX_LINE_BYTES)")
        if not raw.strip():
            continue
        try:
            entry = decode_json(raw)
        except (RefusedJSON, orjson.JSONDecodeError) as error:
            raise SuiteFileError(f"{path}:{number}: {error}") from None
        if not isinstance(entry, dict):
            raise SuiteFileError(f"{path}:{number}: a line is a JSON object, not {type(entry).__name__}")
        lines.append((number, entry))
    return lines


def _case_of(entry: dict, number: int, path: Path) -> _Case:
    where = f"{path}:{number}"
    if entry.get("type") != "case":
        raise SuiteFileError(f"{where}: a line after the header is a case ({{\"type\": \"case\", …}})")
    for key, kind in (("id", str), ("turns", list), ("ctx", dict), ("context", list), ("calls", list),
                      ("results", list)):
        if not isinstance(entry.get(key), kind):
            raise SuiteFileError(f"{where}: the case's {key!r} is missing or not a {kind.__name__}")
    if len(entry["results"]) != len(entry["turns"]):
        raise SuiteFileError(f"{where}: case {entry['id']!r} has {len(entry['turns'])} turns but "
                             f"{len(entry['results'])} results")
    if not all(isinstance(item, dict) for item in (*entry["calls"], *entry["results"], *entry["context"])):
        raise SuiteFileError(f"{where}: case {entry['id']!r}: calls, results and context hold objects only")
    return _Case(entry["id"], entry["turns"], entry["ctx"], entry["context"], entry["calls"], entry["results"])


def _check_file_ids(cases: list[_Case], lines: list[tuple[int, dict]], path: Path) -> None:
    seen: dict[str, int] = {}
    for case, (number, _) in zip(cases, lines):
        if case.id in seen:
            raise SuiteFileError(f"{path}:{number}: case id {case.id!r} is also line {seen[case.id]}'s")
        seen[case.id] = number
