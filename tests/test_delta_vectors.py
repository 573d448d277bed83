"""Every case of the shared vector file (also run by js/test/delta.test.js) against the Python engine."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from agentctx_widgets.output import DeltaError, apply_message, apply_message_in_place

VECTORS = orjson.loads((Path(__file__).parent / "vectors" / "delta.json").read_bytes())


def test_the_vector_file_is_big_enough_and_names_are_unique():
    names = [case["name"] for case in VECTORS]
    assert len(names) >= 50
    assert len(set(names)) == len(names)
    for case in VECTORS:
        assert ("expect" in case) != ("error" in case), case["name"]


@pytest.mark.parametrize("case", VECTORS, ids=[case["name"] for case in VECTORS])
def test_pure_engine(case):
    state, message = copy.deepcopy(case["state"]), copy.deepcopy(case["message"])
    if "error" in case:
        with pytest.raises(DeltaError) as caught:
            apply_message(state, message)
        assert caught.value.code == case["error"]
    else:
        assert apply_message(state, message) == case["expect"]
    assert state == case["state"]  # inputs untouched
    assert message == case["message"]


@pytest.mark.parametrize("case", VECTORS, ids=[case["name"] for case in VECTORS])
def test_in_place_engine(case):
    state, message = copy.deepcopy(case["state"]), copy.deepcopy(case["message"])
    if "error" in case:
        with pytest.raises(DeltaError) as caught:
            apply_message_in_place(state, message)
        assert caught.value.code == case["error"]
        assert state == case["state"]  # nothing half-applied
    else:
        apply_message_in_place(state, message)
        assert state == case["expect"]
    assert message == case["message"]
