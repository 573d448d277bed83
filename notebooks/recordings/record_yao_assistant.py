"""Re-record notebooks/recordings/yao_assistant.jsonl (a maintainer's tool).

The replies are a scripted model's — we have no API keys here — recorded through ``ReplayModel`` keyed
by the very requests ``notebooks/yao_assistant.ipynb`` makes (the assistant's prompts, what Create
returned, the options), so the notebook replays them offline and a change in what the hooks send the
model shows up as a replay miss naming the difference. To record a real model instead, run the notebook
with ``AGENTCTX_REPLAY=record`` and a real model in place of the scripted one.

Run: ``.venv/bin/python notebooks/recordings/record_yao_assistant.py`` (then re-execute the notebook).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from agentctx_widgets import Context, ReplayModel, ScriptedModel, run_turn  # noqa: E402

RECORDING = HERE / "yao_assistant.jsonl"
APP = REPO / "notebooks" / "yao_app"
QUESTIONS = [
    ("Where is my order 42?", "Order 42 left our warehouse yesterday and arrives on Friday."),
    ("This is unacceptable, the parcel arrived broken. I want a refund.",
     "I am sorry the parcel arrived broken. I have asked billing to refund order 42."),
]
EDITED = ("The delivery is late again.", "I am sorry it is late again; order 42 arrives tomorrow.")


def main() -> None:
    RECORDING.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(shutil.copytree(APP, Path(tmp) / "yao_app"))
        support = app / "assistants" / "demo" / "support"
        chat = Context(name="support")
        for question, reply in QUESTIONS:
            model = ReplayModel(RECORDING, model=ScriptedModel([reply], model="gpt-4o-mini"), mode="record")
            assert run_turn(chat, question, assistant=support, model=model).ok
        tone = support / "src" / "tone.ts"  # the notebook's edit: "late" now sounds upset
        tone.write_text(tone.read_text().replace('["angry", "unacceptable", "terrible"]',
                                                 '["angry", "unacceptable", "terrible", "late"]'))
        model = ReplayModel(RECORDING, model=ScriptedModel([EDITED[1]], model="gpt-4o-mini"), mode="record")
        assert run_turn(chat, EDITED[0], assistant=support, model=model).ok
    print(f"recorded {sum(1 for _ in RECORDING.open())} lines into {RECORDING.relative_to(REPO)}")


if __name__ == "__main__":
    main()
