"""tests/vectors/protocol.json is what the real StreamProtocol records today (so it cannot go stale),
and every sequence in it keeps the protocol's own promises. The front end replays the same file
(js/test/protocol-vectors.test.js)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import orjson
import pytest

VECTORS = Path(__file__).parent / "vectors"
_spec = importlib.util.spec_from_file_location("make_protocol_vectors", VECTORS / "make_protocol_vectors.py")
assert _spec is not None and _spec.loader is not None
generator = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generator)

RECORDED: list[dict[str, Any]] = orjson.loads((VECTORS / "protocol.json").read_bytes())


def test_the_file_is_what_the_generator_records_now():
    fresh = generator.build()
    assert [case["name"] for case in fresh] == [case["name"] for case in RECORDED]
    for made, stored in zip(fresh, RECORDED):
        assert made == stored, f"{made['name']}: run .venv/bin/python tests/vectors/make_protocol_vectors.py"
    assert generator.dumps(fresh) == (VECTORS / "protocol.json").read_bytes()


@pytest.mark.parametrize("case", RECORDED, ids=[case["name"] for case in RECORDED])
def test_batches_are_numbered_in_sequence_and_every_snapshot_is_the_state_at_its_seq(case):
    seq = 0
    for event in case["events"]:
        if "kernel" in event:
            message = event["kernel"]
            if message["kind"] == "batch":
                assert message["seq"] == seq + 1 and message["ops"], event
            else:
                assert message["seq"] == seq == message["state"]["seq"], event
            seq = message["seq"]
        elif "trait" in event:
            assert event["trait"]["seq"] == seq  # written with nothing queued: exactly the state at seq
    assert case["final"]["seq"] == seq
    traits = [event["trait"] for event in case["events"] if "trait" in event]
    assert traits[-1] == case["final"]  # every case ends settled: the saved notebook holds the end


def test_the_cases_cover_what_they_are_named_for():
    by_name = {case["name"]: case for case in RECORDED}
    lost = [event for event in by_name["gap"]["events"] if event.get("lost")]
    assert [event["kernel"]["seq"] for event in lost] == [2]
    late = by_name["late view"]["events"]
    assert [event["kernel"]["seq"] for event in late if event.get("lost")] == [1, 2]
    assert sum(1 for event in by_name["reload"]["events"] if event.get("render")) == 2
    folded = [op["message"]["props"]["content"] for event in by_name["folded appends"]["events"]
              if "kernel" in event and event["kernel"]["kind"] == "batch" for op in event["kernel"]["ops"]]
    assert folded == ["He", "llo, world!!", "", "ab", "?"]  # 4 + 2 appends to m, 2 to n: one op each
