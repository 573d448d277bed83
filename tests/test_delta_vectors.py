"""Every case of the shared vector file (also run by js/test/delta.test.js) against the Python engine.

A case holds ``state``, ``message`` and either ``expect`` (the state after the message) or ``error`` (a
``DeltaError`` code), and ``diagnostics``: the codes reported, in order (absent = none). The expected
states are what the reference CUI client computes (YaoApp/cui at 9c35de9; cases named ``cui: …``
carry a ``cite``), except where delta.py's docstring names a deliberate difference.
"""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from agentctx_widgets.output import DeltaError, apply_message, apply_message_in_place
from agentctx_widgets.output.diagnostics import DIAGNOSTICS, Collector

VECTORS = orjson.loads((Path(__file__).parent / "vectors" / "delta.json").read_bytes())


def test_the_vector_file_is_big_enough_and_names_are_unique():
    names = [case["name"] for case in VECTORS]
    assert len(names) >= 200
    assert len(set(names)) == len(names)
    for case in VECTORS:
        assert ("expect" in case) != ("error" in case), case["name"]
        assert set(case) <= {"name", "cite", "state", "message", "expect", "error", "diagnostics"}, case["name"]
        assert "error" not in case or "diagnostics" not in case, case["name"]
        assert all(code in DIAGNOSTICS for code in case.get("diagnostics", [])), case["name"]


def test_every_engine_diagnostic_is_in_some_vector():
    seen = {code for case in VECTORS for code in case.get("diagnostics", [])}
    engine_codes = {"unknown_id", "after_done", "shared_slot", "type_changed", "append_coerced", "append_replaced",
                    "missing_value", "merge_ignored", "merge_list_by_index", "list_padded", "path_made_object",
                    "path_overwrote", "dropped", "path_literal", "invalid_action", "bare_done_kept",
                    "list_key_ignored"}
    assert engine_codes <= seen, engine_codes - seen


@pytest.mark.parametrize("case", VECTORS, ids=[case["name"] for case in VECTORS])
def test_pure_engine(case):
    state, message = copy.deepcopy(case["state"]), copy.deepcopy(case["message"])
    found = Collector()
    if "error" in case:
        with pytest.raises(DeltaError) as caught:
            apply_message(state, message, found)
        assert caught.value.code == case["error"]
    else:
        assert apply_message(state, message, found) == case["expect"]
    assert [item["code"] for item in found.items] == case.get("diagnostics", [])
    assert state == case["state"]  # inputs untouched
    assert message == case["message"]


@pytest.mark.parametrize("case", VECTORS, ids=[case["name"] for case in VECTORS])
def test_in_place_engine(case):
    state, message = copy.deepcopy(case["state"]), copy.deepcopy(case["message"])
    codes: list[str] = []
    if "error" in case:
        with pytest.raises(DeltaError) as caught:
            apply_message_in_place(state, message, lambda code, where, **details: codes.append(code))
        assert caught.value.code == case["error"]
        assert state == case["state"]  # nothing half-applied
    else:
        apply_message_in_place(state, message, lambda code, where, **details: codes.append(code))
        assert state == case["expect"]
    assert codes == case.get("diagnostics", [])
    assert message == case["message"]


@pytest.mark.parametrize("case", [c for c in VECTORS if "expect" in c], ids=[c["name"] for c in VECTORS if "expect" in c])
def test_without_a_report_the_state_is_the_same(case):
    assert apply_message(copy.deepcopy(case["state"]), copy.deepcopy(case["message"])) == case["expect"]
