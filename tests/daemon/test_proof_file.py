"""A proof file's text is json.dumps(indent=2, ensure_ascii=False)'s, byte for byte, whoever
writes it (orjson for most documents, json for what orjson writes otherwise)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from oracle.core import build_proof, evaluate
from oracle.core.models import ConsensusInput, Market
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.daemon.service import _json
from oracle.testing import result


def as_json_writes_it(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


@pytest.fixture(scope="module")
def proof() -> dict[str, Any]:
    answers = tuple(
        result(agent, "NO" if agent == "epsilon" else "YES", 0.8, 12)
        for agent in ("alpha", "beta", "gamma", "delta", "epsilon")
    )
    market = Market(
        id="chain:0x1",
        question="Did it happen — «oui» \u2028 ✓\x01?",
        criteria='Per "official" sources\\n',
        outcomes=("YES", "NO"),
        resolve_after=0.0,
    )
    consensus_input = ConsensusInput(market=market, results=answers, failures=())
    params = ConsensusParams()
    thresholds = SourceThresholds(min_total=10, min_categories=3, min_official=1, min_news=3)
    return build_proof(
        consensus_input, evaluate(consensus_input, params, thresholds), params, thresholds
    )


def test_a_proof_is_written_as_json_writes_it(proof: dict[str, Any]) -> None:
    assert _json(proof) == as_json_writes_it(proof)


@pytest.mark.parametrize(
    "value",
    [
        1e-05,  # json: 1e-05, orjson: 0.00001
        -2.5e-07,
        9.9e-05,
        1e-4,
        0.0,
        -0.0,
        1e16,
        1.7976931348623157e308,
        float("nan"),  # json: NaN, orjson: null
        float("inf"),
        2**64,  # beyond orjson's integers
        -(2**63) - 1,
        2**63,
        {1: "a", None: "b"},  # keys json turns into strings, orjson refuses
        (1, "two", [3.5]),
        {"nested": [{"deeper": [1e-9, "1e-9"]}]},
        "a string that reads 1e-5",
        "\x00\x1f\x7f\u2028\u2029\ufeff é 漢字 \U0001f600",
        [],
        {},
        None,
        True,
    ],
)
def test_every_value_is_written_as_json_writes_it(proof: dict[str, Any], value: Any) -> None:
    document = {**proof, "extra": value}
    assert _json(document) == as_json_writes_it(document)


def test_what_json_cannot_write_fails_as_it_did() -> None:
    with pytest.raises(TypeError):
        _json({"when": object()})
    lone_surrogate = {"text": "\ud800"}
    assert _json(lone_surrogate) == as_json_writes_it(lone_surrogate)
