"""``python -m agentctx_widgets export --outputs FILE`` with hostile files (issue 21): a FIFO, a device, a
file over the cap, a deep file are each refused at once with one line naming the file, exit code 2; a
session file of 200,000 bad lines is exported with one summary line counting them all. Each run is a child
with a timeout (a FIFO that blocked the old reader fails the test instead of hanging it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from agentctx_widgets import Context
from agentctx_widgets.__main__ import MAX_OUTPUTS_BYTES


def run_cli(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "agentctx_widgets", *args], capture_output=True, text=True,
                          timeout=120)
    return done, time.monotonic() - started


@pytest.fixture
def session(tmp_path) -> Path:
    context = Context([{"type": 2, "content": [{"type": "text", "text": "hi"}]}], id="cli", dir=tmp_path)
    return context.save()


def refused(session: Path, outputs: Path, *fragments: str) -> str:
    target = session.with_suffix(".html")
    done, _ = run_cli("export", str(session), "--outputs", str(outputs), "-o", str(target))
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"agentctx: export: --outputs: {outputs}"), lines[0]
    assert all(fragment in lines[0] for fragment in fragments), lines[0]
    assert "Traceback" not in done.stderr and not target.exists()
    return lines[0]


def test_a_fifo_is_refused_not_waited_on(session, tmp_path):
    fifo = tmp_path / "outputs.json"
    os.mkfifo(fifo)
    refused(session, fifo, "is a FIFO (named pipe), not a regular file; refusing to open it")


def test_a_device_and_a_directory_are_refused(session, tmp_path):
    refused(session, Path("/dev/zero"), "is a character device, not a regular file")
    (tmp_path / "dir.json").mkdir()
    refused(session, tmp_path / "dir.json", "is a directory, not a regular file")
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    refused(session, link, "is a symlink to /dev/zero, which is a character device")


def test_a_file_over_the_cap_is_refused_by_its_size_before_reading(session, tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as stream:  # sparse: takes no disk, and the old reader would have read it all
        stream.truncate(MAX_OUTPUTS_BYTES + 1)
    refused(session, big, f"is {MAX_OUTPUTS_BYTES + 1} bytes, over the {MAX_OUTPUTS_BYTES}-byte limit")


@pytest.mark.parametrize("depth", [300, 100_000])
def test_a_deep_file_is_refused_naming_it_not_a_recursion_error(session, tmp_path, depth):
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * depth + b"]" * depth)
    refused(session, deep, "nests deeper than 200 levels (MAX_DEPTH); refusing it")


def test_missing_and_not_json_name_the_file(session, tmp_path):
    refused(session, tmp_path / "absent.json", "No such file")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    refused(session, bad, "is not JSON")


def test_a_good_outputs_file_still_exports(session, tmp_path):
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps([{"id": "o", "type": "text", "props": {"content": "an output"}}]))
    done, _ = run_cli("export", str(session), "--outputs", str(outputs), "-o", "-")
    assert done.returncode == 0 and "an output" in done.stdout, done.stderr


def test_two_hundred_thousand_bad_lines_are_one_summary_line_with_their_count(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(orjson.dumps({"type": "context", "id": "c1", "version": 1}) + b"\n"
                     + orjson.dumps({"type": 2, "content": [{"type": "text", "text": "kept"}]}) + b"\n"
                     + b"x\n" * 200_000)
    done, seconds = run_cli("export", str(path), "-o", "-")
    lines = done.stderr.splitlines()
    assert done.returncode == 0 and len(lines) == 1, done.stderr[:2000]
    assert lines[0].startswith("agentctx: export: skipped 200000 unreadable lines: ") and lines[0].endswith("; …")
    assert "line 3 is not valid JSON" in lines[0] and "kept" in done.stdout
    print(f"export of 200,000 bad lines: {seconds:.2f} s (interpreter start included)")
