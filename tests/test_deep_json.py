"""A JSON body nested 100,000 levels deep, on every path where outside JSON is decoded,
in a child process with the chain stack imported and the recursion limit at 100,000: the
child must exit normally with a clean error (tests/deep_json_child.py runs each path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.deep_json_child import SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
TOO_DEEP = "nested deeper than"
EXPECTED = {
    "data-endpoint": ["answered:", "deep: the answer is not usable JSON", TOO_DEEP],
    "search-provider": ["clean: searxng: the answer is not usable JSON", TOO_DEEP],
    "openai-answer": ["clean: local: the answer is not usable JSON", TOO_DEEP],
    "openai-error-body": ["clean: local: the answer is not usable JSON", TOO_DEEP],
    "anthropic-answer": ["clean: local: the answer is not usable JSON", TOO_DEEP],
    "anthropic-error-body": ["clean: local: the answer is not usable JSON", TOO_DEEP],
    "tool-arguments": ["answered: UNDETERMINED", "the arguments are not usable JSON", TOO_DEEP],
    "anthropic-transcript": ["clean: input {}"],
    "answer-text": ["clean: (answer): not usable JSON", TOO_DEEP],
    "venue-market-list": ["clean: source venue: the market list is not usable JSON", TOO_DEEP],
    "rpc-node": ["clean: the RPC node's answer is not usable JSON", TOO_DEEP, "failure: True"],
    "cli-consensus": ["clean: exit 2", "deep.json: not usable JSON", TOO_DEEP],
    "cli-proof-verify": ["clean: exit 2", "deep.json: not usable JSON", TOO_DEEP],
    "replay-recordings": ["clean: replay agent replay: deep.json", TOO_DEEP],
    "backtest-recordings": ["clean: deep.json: not usable JSON", TOO_DEEP],
    "keystore-file": ["clean:", "keystore is not usable JSON", TOO_DEEP],
}


def test_every_scenario_has_expectations() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_deeply_nested_json_is_a_clean_error(scenario: str) -> None:
    child = subprocess.run(
        [sys.executable, "-m", "tests.deep_json_child", scenario],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = child.stdout + child.stderr
    assert child.returncode == 0, f"child exited {child.returncode}:\n{output[-3000:]}"
    assert "Traceback" not in output, output[-3000:]
    for expected in EXPECTED[scenario]:
        assert expected in output, output[-3000:]
