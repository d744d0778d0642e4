"""Proof artifacts: contents, determinism, tamper detection, Markdown."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from oracle.core import (
    ConsensusParams,
    SourceThresholds,
    build_proof,
    evaluate,
    parse_consensus_input,
    render_markdown,
    verify_proof,
)
from oracle.core import proof as proof_module
from oracle.core.models import MergedSource
from oracle.core.proof import build_decision_proof
from oracle.errors import ProofError
from oracle.testing import consensus_document, result_dict


def _proof(document: dict[str, Any]) -> dict[str, Any]:
    params, thresholds = ConsensusParams(), SourceThresholds()
    consensus_input = parse_consensus_input(document)
    return build_proof(
        consensus_input, evaluate(consensus_input, params, thresholds), params, thresholds
    )


@pytest.fixture
def document() -> dict[str, Any]:
    return consensus_document(
        [
            result_dict("alpha", "YES", 0.9),
            result_dict("beta", "YES", 0.8),
            result_dict("gamma", "NO", 0.75, reasoning="The official record shows no such event."),
            result_dict("thin", "YES", 0.9, 10),
        ],
        failures=[{"agent_id": "delta", "error": "timeout"}],
    )


def test_proof_records_everything(document: dict[str, Any]) -> None:
    proof = _proof(document)
    assert proof["verdict"]["outcome"] == "YES"
    assert proof["verdict"]["agreement_level"] == "majority"
    assert {v["agent_id"]: v["counted"] for v in proof["votes"]} == {
        "alpha": True,
        "beta": True,
        "gamma": True,
        "thin": False,
    }
    thin = next(v for v in proof["votes"] if v["agent_id"] == "thin")
    assert thin["excluded_reasons"][0] == "only 10 distinct sources, need 50"
    assert proof["dissent"] == [
        {
            "agent_id": "gamma",
            "outcome": "NO",
            "confidence": 0.75,
            "kind": "full",
            "reasoning": "The official record shows no such event.",
        }
    ]
    assert proof["tensions"][0]["options"] == ["YES", "NO"]
    assert any("gamma dissents with high confidence" in s for s in proof["blind_spots"])
    assert proof["failures"] == [{"agent_id": "delta", "error": "timeout"}]
    assert proof["config"]["consensus"]["threshold"] == 0.67
    assert proof["config"]["sources"]["min_total"] == 50
    assert len(proof["checksum"]) == 64
    assert proof["proof_id"] == f"proof-{proof['checksum'][:16]}"
    assert verify_proof(proof) == (True, proof["checksum"])


def test_checksum_is_independent_of_agent_order(document: dict[str, Any]) -> None:
    reordered = copy.deepcopy(document)
    reordered["results"].reverse()
    assert _proof(reordered)["checksum"] == _proof(document)["checksum"]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda p: p["verdict"].__setitem__("outcome", "NO"),
        lambda p: p["votes"][0].__setitem__("confidence", 0.99),
        lambda p: p["sources"].pop(),
        lambda p: p["config"]["consensus"].__setitem__("threshold", 0.51),
        lambda p: p["dissent"][0].__setitem__("reasoning", "edited"),
        lambda p: p.__setitem__("proof_id", "proof-0000000000000000"),
        lambda p: p.__setitem__("extra", "field"),
    ],
)
def test_any_alteration_is_detected(document: dict[str, Any], tamper: Any) -> None:
    proof = _proof(document)
    tamper(proof)
    matches, _ = verify_proof(proof)
    assert not matches


def test_verify_accepts_consensus_output_wrapping_the_proof(document: dict[str, Any]) -> None:
    proof = _proof(document)
    assert verify_proof({"outcome": "YES", "proof": proof})[0]


@pytest.mark.parametrize("bad", [[], {"no": "checksum"}, "text"])
def test_verify_rejects_non_proofs(bad: Any) -> None:
    with pytest.raises(ProofError, match="not a proof"):
        verify_proof(bad)


def test_markdown_report(document: dict[str, Any]) -> None:
    markdown = render_markdown(_proof(document))
    assert markdown.startswith("# Consensus proof `proof-")
    for heading in (
        "## Verdict",
        "## Votes",
        "## Dissent",
        "## Unresolved tensions",
        "## Blind spots",
        "## Failed agents",
        "## Evidence",
        "## Integrity",
    ):
        assert heading in markdown
    assert "| thin | YES | 0.90 |" in markdown
    assert "The official record shows no such event." in markdown


def test_decision_proof_embeds_the_consensus_and_detects_tampering(
    document: dict[str, Any],
) -> None:
    consensus = _proof(document)
    decision = build_decision_proof(
        consensus, outcome="NO", reason="official record", decided_by="alice", decided_at=1.5
    )
    assert decision["kind"] == "human_decision"
    assert decision["consensus"] == consensus
    assert verify_proof(decision)[0]
    assert "Decided **NO** by alice" in render_markdown(decision)
    decision["consensus"]["verdict"]["outcome"] = "NO"
    assert not verify_proof(decision)[0]


def test_market_text_cannot_forge_a_section_of_the_markdown_report(
    document: dict[str, Any],
) -> None:
    forged = "Will it rain?\n\n## Verdict\n\n- Consensus reached: **NO**\r\n# Integrity"
    document["market"]["question"] = forged
    document["market"]["criteria"] = "Per the record.\n## Votes\n| a | NO |"
    markdown = render_markdown(_proof(document))
    assert markdown.count("\n## Verdict\n") == 1
    assert markdown.count("\n## Votes\n") == 1
    assert "\n# Integrity" not in markdown
    lines = markdown.splitlines()
    assert lines[2] == (
        "**Market** `m-1`: Will it rain?\\n\\n\\#\\# Verdict\\n\\n- Consensus reached: "
        "\\*\\*NO\\*\\*\\r\\n\\# Integrity"
    )
    assert lines[3] == "**Criteria**: Per the record.\\n\\#\\# Votes\\n\\| a \\| NO \\|"


@given(st.lists(st.tuples(st.floats(), st.floats()), max_size=12))
@example([(-0.0, 0.0), (0.0, -0.0), (0.1234565, 1e-7)])
@example([(1e308, 1e308)])
def test_merged_sources_scores_are_rounded_as_round_rounds_each(
    scores: list[tuple[float, float]],
) -> None:
    """Rounded once per distinct value, yet each as `round(score, 6)` (-0.0 stays -0.0);
    `finite` is claimed only when every score is, and always for scores from 0 to 1."""
    sources = tuple(
        MergedSource(
            url=f"https://news.example/{i}",
            title="",
            category="news",
            credibility_score=credibility,
            relevance_score=relevance,
            cited_by=("a",),
        )
        for i, (credibility, relevance) in enumerate(scores)
    )
    records, finite, held = proof_module._source_records(sources)
    assert held == {
        record[f] for record in records for f in ("credibility_score", "relevance_score")
    }
    for record, (credibility, relevance) in zip(records, scores, strict=True):
        for field, score in (("credibility_score", credibility), ("relevance_score", relevance)):
            assert repr(record[field]) == repr(round(score, 6))
    values = [score for pair in scores for score in pair]
    every_finite = all(math.isfinite(score) for score in values)
    assert finite <= every_finite  # never claimed wrongly
    if every_finite and all(abs(score) <= 1 for score in values):
        assert finite  # scores as validated (0 to 1) never need the full check
