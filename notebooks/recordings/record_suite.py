"""Re-record notebooks/recordings/suite.jsonl, the model answers notebooks/suite.ipynb replays (a maintainer's tool).

The answers are a scripted model's (we have no API keys here), recorded through ``ReplayModel`` keyed by
the very requests the notebook's hooks make: the notebook's cells marked ``# (recorded by
recordings/record_suite.py)`` (its hooks, its cases and the fixed hooks) are read from the notebook and
run here, so the two cannot drift apart. The notebook's first suite is recorded with ``HOOKS``; the
``card`` case's request under ``FIXED`` (one more instruction in the prompt) is recorded as the notebook's
``check(update=True)`` asks for it. The request that ``CHANGED`` makes is deliberately not recorded: in
the notebook it is the ``model_changed`` case.

To record a real model instead, replace ``scripted`` below with one (``OpenAIChatModel("gpt-4.1-mini")``).

Run: ``.venv/bin/python notebooks/recordings/record_suite.py`` (then re-execute the notebook).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from agentctx_widgets import ReplayModel, ScriptedModel, Suite, hooks_from_js  # noqa: E402

RECORDING = HERE / "suite.jsonl"
NOTEBOOK = REPO / "notebooks" / "suite.ipynb"
MARK = "# (recorded by recordings/record_suite.py)"

ANSWERS = {
    "Hello!": "Hi! How can I help you today?",
    "Where is my order?": "Could you tell me your order number?",
    "It's 42": "Order 42 left our warehouse yesterday and arrives on Friday.",
    "Which card do you have on file?": "The card on file is 4111 1111 1111 1234, a Visa.",
    "Can I get a refund?": "Yes: return it within 30 days for a full refund.",
}
CAREFUL = {"Which card do you have on file?": "A Visa ending in 1234 is on file."}
"""The answers when the system prompt carries the card rule."""


def answer(messages: list[dict]) -> dict:
    """The scripted model: the answer to the last user message, with OpenAI-shaped usage."""
    asked = messages[-1]["content"][0]["text"]
    system = " ".join(block.get("text", "") for message in messages if message["type"] == 1
                      for block in message["content"])
    text = CAREFUL.get(asked, ANSWERS[asked]) if "Never read" in system else ANSWERS[asked]
    prompt = sum(len(block.get("text", "").split()) for message in messages for block in message["content"]) + 8
    completion = len(text.split()) + 2
    return {"text": text, "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                    "total_tokens": prompt + completion}}


def notebook_cells() -> dict:
    """The names the notebook's marked cells define (HOOKS, CASES, edit, FIXED)."""
    namespace: dict = {}
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith(MARK):
            exec(compile(source, f"{NOTEBOOK.name} cell", "exec"), namespace)  # our own notebook's cells
    return namespace


def main() -> None:
    cells = notebook_cells()
    RECORDING.unlink(missing_ok=True)
    scripted = ScriptedModel([answer], model="gpt-4.1-mini")
    model = ReplayModel(RECORDING, model=scripted, mode="auto")
    with tempfile.TemporaryDirectory() as folder:
        suite = Suite.record(Path(folder) / "support.jsonl", cells["CASES"], model=model,
                             hooks=lambda: hooks_from_js(cells["HOOKS"]))
        report = suite.check(hooks=lambda: hooks_from_js(cells["FIXED"]), update=True, model=model)
        assert report.model_changed == ["card"], report
        assert Suite(suite.path).check(hooks=lambda: hooks_from_js(cells["FIXED"])).ok
    print(f"recorded {sum(1 for _ in RECORDING.open())} model calls into {RECORDING.relative_to(REPO)}")


if __name__ == "__main__":
    main()
