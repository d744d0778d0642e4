"""The command line through its real entry point, as an operator runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from oracle.testing import consensus_document, result_dict


def oracle(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oracle", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def _document() -> dict[str, Any]:
    return consensus_document(
        [
            result_dict("a", "YES", 0.9),
            result_dict("b", "YES", 0.8),
            result_dict("c", "NO", 0.7),
            result_dict("thin", "NO", 0.9, 10),
        ]
    )


@pytest.fixture
def input_file(tmp_path: Path) -> Path:
    path = tmp_path / "input.json"
    path.write_text(json.dumps(_document()))
    return path


def test_consensus_json_output(input_file: Path) -> None:
    run = oracle("consensus", str(input_file))
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout)
    for key in (
        "reached",
        "outcome",
        "confidence",
        "agreement_ratio",
        "weighted_ratio",
        "required_agreement",
        "fault_tolerance",
        "requires_human_review",
        "review_reasons",
        "excluded",
        "overlap",
        "sources",
        "proof",
    ):
        assert key in output
    assert output["outcome"] == "YES"
    assert output["required_agreement"] == pytest.approx(2 / 3)
    assert output["excluded"] == [
        {
            "agent_id": "thin",
            "reasons": [
                "only 10 distinct sources, need 50",
                "only 1 official sources, need 5",
                "only 4 news sources, need 15",
            ],
        }
    ]
    assert set(output["overlap"]) >= {"average", "max", "pairs", "total_unique_sources"}
    assert output["sources"][0]["cited_by"] == ["a"] or output["sources"][0]["cited_by"]
    assert len(output["proof"]["checksum"]) == 64


def test_consensus_markdown_and_proof_files(input_file: Path, tmp_path: Path) -> None:
    proof_path = tmp_path / "out" / "proof.json"
    proof_path.parent.mkdir()
    run = oracle("consensus", str(input_file), "--format", "markdown", "--proof", str(proof_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# Consensus proof")
    assert proof_path.with_suffix(".md").read_text() == run.stdout
    verified = oracle("proof", "verify", str(proof_path))
    assert verified.returncode == 0
    assert verified.stdout.startswith("ok: checksum ")


def test_proof_verify_detects_alteration(input_file: Path, tmp_path: Path) -> None:
    proof_path = tmp_path / "proof.json"
    assert oracle("consensus", str(input_file), "--proof", str(proof_path)).returncode == 0
    proof = json.loads(proof_path.read_text())
    proof["verdict"]["outcome"] = "NO"
    proof_path.write_text(json.dumps(proof))
    run = oracle("proof", "verify", str(proof_path))
    assert run.returncode == 1
    assert "ALTERED" in run.stderr


def test_stdin_and_config_file(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("consensus:\n  threshold: 0.8\n")
    run = oracle("consensus", "-", "--config", str(config), stdin=json.dumps(_document()))
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout)
    assert output["reached"] is False
    assert output["required_agreement"] == 0.8


def _mutated(mutate: Any) -> str:
    document = _document()
    mutate(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            _mutated(lambda d: d["results"][1].update(outcome="MAYBE")),
            "results[1].outcome: unknown outcome 'MAYBE'; expected one of YES, NO, UNDETERMINED",
        ),
        (
            _mutated(lambda d: d["results"][0].update(confidence=1.5)),
            "results[0].confidence: Input should be less than or equal to 1",
        ),
        (
            _mutated(lambda d: d["results"][0].update(confidence=-0.1)),
            "results[0].confidence: Input should be greater than or equal to 0",
        ),
        (
            _mutated(lambda d: d["results"][2].update(confidence=float("nan"))),
            "results[2].confidence: must be a finite number (not NaN or infinity)",
        ),
        (
            _mutated(lambda d: d["results"][3].update(agent_id="a")),
            "results[3].agent_id: duplicate agent id 'a'",
        ),
        (
            _mutated(lambda d: d["failures"].append({"agent_id": "b", "error": "x"})),
            "failures[0].agent_id: duplicate agent id 'b'",
        ),
        (
            _mutated(lambda d: d["results"][0].pop("confidence")),
            "results[0].confidence: is required",
        ),
        (_mutated(lambda d: d.pop("market")), "market: is required"),
        (
            _mutated(lambda d: d["results"][0]["sources"][4].update(url="not a url")),
            "results[0].sources[4].url: not an absolute http(s) URL",
        ),
        (
            _mutated(lambda d: d["results"][0]["sources"][4].pop("credibility_score")),
            "results[0].sources[4].credibility_score: is required",
        ),
        ("{not json", "not usable JSON (line 1, column 2"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    run = oracle("consensus", str(path))
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert message in lines[0]
    assert "Traceback" not in run.stderr


def test_missing_input_file() -> None:
    run = oracle("consensus", "/nonexistent/input.json")
    assert run.returncode == 2
    assert run.stderr.strip() == "error: /nonexistent/input.json: no such file"


def test_proof_verify_rejects_non_proof(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"a": 1}')
    run = oracle("proof", "verify", str(path))
    assert run.returncode == 2
    assert run.stderr.strip() == "error: not a proof: no `checksum` field"


def test_config_check_prints_effective_config(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("database:\n  url: postgresql://u:topsecret@h/db\n")
    run = oracle("config", "check", "--config", str(config))
    assert run.returncode == 0
    assert "threshold: 0.67" in run.stdout
    assert "topsecret" not in run.stdout
    assert "postgresql://u:**********@h/db" in run.stdout


def test_config_check_reports_bad_value(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("consensus:\n  threshold: 0.3\n")
    run = oracle("config", "check", "--config", str(config))
    assert run.returncode == 2
    assert run.stderr.startswith("error: consensus.threshold: must be between 0.5 and 1")
