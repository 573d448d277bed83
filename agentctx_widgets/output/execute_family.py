"""What the CUI shows of an ``execute`` message and its semantic sub-types (``agent``, ``todo``, ``plan``,
``job``, ``question``): one header line (a label and a status) and a folded detail, so the transcript, the
static document and the live view (``js/src/render/execute.js``) say the same thing.

Yao 5a3f9a6a: ``agent/output/message/types.go:78-86`` (the types), ``:218-244`` (``ExecuteProps``: ``tool,
tool_id, input, output, status, is_error, exit_code, runner, metadata``); a runner's chunks merge into
one message (``handlers/stream.go:334-390``, ``semantic_type`` picks the sub-type). The client is CUI
66cb383f ``packages/cui/chatbox/messages/``: ``Execute/index.tsx``, ``AgentView``, ``TodoView``,
``PlanView``, ``JobView``, ``QuestionView`` (English labels).
"""

from __future__ import annotations

import json
import re
from typing import Any

EXECUTE = "execute"
EXECUTE_FAMILY: tuple[str, ...] = (EXECUTE, "agent", "todo", "plan", "job", "question")
"""``isExecuteFamily`` (handlers/stream.go:334-344): one lifecycle, running → completed / error."""

STATUSES = ("running", "completed", "error")
"""``ExecuteProps.Status`` (types.go:237); anything else is shown as running (Execute/index.tsx:24)."""

JOB_LABELS = {"create": "Job: Create", "get": "Job: Status", "list": "Job: List", "output": "Job: Output",
              "stop": "Job: Stop", "update": "Job: Update"}
"""JobView/index.tsx:15-22 (English)."""

AGENT_LABELS = {"a2a": "AI Expert", "general-purpose": "Agent", "Explore": "Explore", "Plan": "Plan"}
"""AgentView/index.tsx:21-28 (``label_en``); any other sub-agent type is ``Agent``."""

_SUMMARY_KEYS = ("command", "file_path", "path", "url", "query")


def execute_props(props: Any) -> dict[str, Any]:
    """The props the CUI reads: ``props.execute`` when it is an object, else ``props`` (Execute:19-20)."""
    raw = props if isinstance(props, dict) else {}
    inner = raw.get("execute")
    return dict(inner) if isinstance(inner, dict) else raw


def status_of(props: dict[str, Any]) -> str:
    """``props.status || 'running'`` (Execute:21); an unknown status is configured as running (:24);
    ``is_error: true`` (types.go:239) is an error whatever the status says."""
    if props.get("is_error") is True:
        return "error"
    status = props.get("status")
    return status if isinstance(status, str) and status in STATUSES else "running"


def _text(value: Any) -> str:
    """``formatValue`` (Execute:69-73): a string as it is, anything else as 2-space JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def summary_of(props: dict[str, Any]) -> str:
    """``props.summary`` or ``extractSummary`` (Execute:26, 75-94): the input's command / file_path / path,
    or those keys read out of a still-streaming ``input_delta``."""
    given = props.get("summary")
    if isinstance(given, str) and given:
        return given
    data = props.get("input")
    if isinstance(data, dict):
        found = next((data[key] for key in ("command", "file_path", "path") if data.get(key)), "")
        return found if isinstance(found, str) else _text(found)
    partial = props.get("input_delta")
    if isinstance(partial, str) and partial:
        for key in _SUMMARY_KEYS:
            match = re.search(rf'"{key}"\s*:\s*"([^"]*)"?', partial)
            if match and match.group(1):
                return match.group(1)
    return ""


def todos_of(props: dict[str, Any]) -> list[tuple[str, str]]:
    """``extractTodos`` (TodoView/index.tsx:88-99): ``(content, status)`` from ``input.todos`` (or output)."""
    data = props.get("input") or props.get("output")
    items = data.get("todos", data) if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        item = item if isinstance(item, dict) else {}
        content = next((item[k] for k in ("content", "text", "title") if item.get(k)), "")
        out.append((_text(content), _text(item.get("status") or "pending")))
    return out


def questions_of(props: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """``extractQuestions`` (QuestionView/index.tsx:178-200): ``(question, option labels)`` of each
    question with options; ``input`` may be JSON text."""
    data = props.get("input")
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return []
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if isinstance(item, dict) and item.get("question") and isinstance(item.get("options"), list) and item["options"]:
            labels = [_text(o.get("label") if isinstance(o, dict) else o) for o in item["options"]]
            out.append((_text(item["question"]), labels))
    return out


def label_of(kind: str, props: dict[str, Any]) -> str:
    """The header text each CUI component shows (English locale)."""
    if kind == "agent":  # AgentView:45-50
        data = props.get("input") if isinstance(props.get("input"), dict) else {}
        sub = props.get("subagent_type") or data.get("subagent_type") or ""
        name = AGENT_LABELS.get(sub, "Agent") if isinstance(sub, str) else "Agent"
        about = data.get("description") or data.get("prompt") or props.get("summary") or ""
        about = _text(about)
        return f"{name}: {about[:60] + '...' if len(about) > 60 else about}" if about else name
    if kind == "todo":  # TodoView:28-32
        todos = todos_of(props)
        return f"Todo ({sum(1 for _, status in todos if status == 'completed')}/{len(todos)})"
    if kind == "plan":  # PlanView:22-31
        return "Exit Plan Mode" if props.get("action", "enter") != "enter" else "Enter Plan Mode"
    if kind == "job":  # JobView:33-35
        action = props.get("action")
        return JOB_LABELS.get(action, "Job") if isinstance(action, str) else "Job"
    if kind == "question":  # QuestionView: one card per question; "Loading questions..." before any
        questions = questions_of(props)
        return questions[0][0] if len(questions) == 1 else (
            f"{len(questions)} questions" if questions else "Loading questions...")
    tool = props.get("tool")
    tool = tool if isinstance(tool, str) and tool else "..."  # Execute:23
    about = summary_of(props)
    return f"{tool} {about}" if about else tool


def detail_of(props: dict[str, Any]) -> str:
    """``buildDetailText`` (Execute:57-67): the input, then the output, each as ``formatValue`` writes it."""
    return "\n".join(part for part in (_text(props.get("input")), _text(props.get("output"))) if part)


def facts_of(props: dict[str, Any]) -> list[str]:
    """What ``ExecuteProps`` carries beyond the CUI's header (types.go:239-242): exit code, runner."""
    facts = []
    code = props.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        facts.append(f"exit {code}")
    runner = props.get("runner")
    if isinstance(runner, str) and runner:
        facts.append(runner)
    return facts


def transcript_line(kind: str, props: Any) -> str:
    """The transcript body: ``<label> · <status>`` and the facts, e.g. ``Bash ls -la · completed · exit 0``."""
    inner = execute_props(props)
    return " · ".join([label_of(kind, inner), status_of(inner), *facts_of(inner)])
