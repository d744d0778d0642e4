"""The bundled example inputs are current and each shows the decision it is there for."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from oracle.core import ConsensusParams, SourceThresholds, evaluate, parse_consensus_input

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "make_examples", ROOT / "scripts" / "make_examples.py"
)
assert _spec is not None
assert _spec.loader is not None
make_examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_examples)


@pytest.mark.parametrize("name", sorted(make_examples.examples()))
def test_committed_example_is_current(name: str) -> None:
    committed = (ROOT / "oracle" / "examples" / name).read_text()
    assert committed == make_examples.render(make_examples.examples()[name]), (
        "run: .venv/bin/python scripts/make_examples.py"
    )


@pytest.mark.parametrize(
    ("name", "outcome", "action"),
    [
        ("agreement.json", "YES", "submit"),
        ("contested.json", "UNDETERMINED", "review"),
        ("thin-evidence.json", "INVALID", "review"),
    ],
)
def test_example_decision(name: str, outcome: str, action: str) -> None:
    document = json.loads((ROOT / "oracle" / "examples" / name).read_text())
    result = evaluate(parse_consensus_input(document), ConsensusParams(), SourceThresholds())
    assert (result.outcome, result.action) == (outcome, action)
