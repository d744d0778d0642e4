"""Proof artifacts: contents, determinism, tamper detection, Markdown."""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import UTC
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, example, given, settings
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
from oracle.core.models import (
    AgentFailure,
    AgentResult,
    ConsensusInput,
    Dissent,
    ExcludedAgent,
    Market,
    MergedSource,
    OverlapPair,
    SourceOverlap,
    Tension,
    Vote,
)
from oracle.core.proof import build_decision_proof
from oracle.core.timing import AnswerWindow
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
    the distinct scores are told by name."""
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
    records, held = proof_module._source_records(sources)
    for field in ("credibility_score", "relevance_score"):
        assert held[field] == {record[field] for record in records}
    for record, (credibility, relevance) in zip(records, scores, strict=True):
        for field, score in (("credibility_score", credibility), ("relevance_score", relevance)):
            assert repr(record[field]) == repr(round(score, 6))


# -- built from the models' fields as their dumps are -----------------------------------

_texts = st.text(
    st.characters(blacklist_categories=("Cs",)) | st.sampled_from(['"', "\\", "\U0001f600"]),
    max_size=6,
)
_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 300.0, 0.1234565, 1e-7, 2.5e-6, 1e-5, 1e16, 1e21]),
    st.floats(0, 1),
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | _floats | _texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_texts, children, max_size=3),
    max_leaves=8,
)
_agent_ids = st.lists(_texts.filter(bool), min_size=1, max_size=4, unique=True)


@st.composite
def _results(draw: st.DrawFn) -> tuple[Any, Any]:
    """A consensus input and a result holding any values their fields' types allow."""
    agents = draw(_agent_ids)
    texts = st.tuples(_texts, _texts) | st.tuples()
    votes = tuple(
        Vote(
            agent_id=agent,
            outcome=draw(_texts),
            confidence=draw(_floats),
            weight=draw(_floats),
            source_quality=draw(_floats),
            source_count=draw(st.integers(0, 2**53 - 1)),
            counted=draw(st.booleans()),
            excluded_reasons=draw(texts),
            seen_not_read=draw(texts),
        )
        for agent in agents
    )
    market = Market(
        id="m",
        question=draw(_texts.filter(bool)),
        resolve_after=draw(st.none() | _floats),
        now=draw(st.none() | _floats),
        window=draw(
            st.none()
            | st.builds(
                AnswerWindow,
                closes_at=st.floats(0, 2e9),
                early_outcomes=st.sampled_from([(), ("YES",)]),
                origin=st.sampled_from(["venue", "question"]),
            )
        ),
    )
    consensus_input = ConsensusInput(
        market=market,
        results=tuple(
            AgentResult(
                agent_id=agent, outcome="YES", confidence=0.5, reasoning=draw(_texts), sources=()
            )
            for agent in agents
        ),
    )
    base = evaluate(consensus_input, ConsensusParams(), SourceThresholds())
    result = base.model_copy(
        update={
            "strategy": draw(_texts),
            "reached": draw(st.booleans()),
            "leading_outcome": draw(st.none() | _texts),
            "confidence": draw(_floats),
            "agreement_ratio": draw(_floats),
            "weighted_ratio": draw(_floats),
            "strategy_score": draw(_floats),
            "required_agreement": draw(_floats),
            "valid_agents": draw(st.integers(0, 2**53 - 1)),
            "review_reasons": draw(texts),
            "review_codes": draw(texts),
            "explanation": draw(_texts),
            "votes": votes,
            "excluded": tuple(ExcludedAgent(agent_id=a, reasons=draw(texts)) for a in agents),
            "failures": (AgentFailure(agent_id=draw(_texts.filter(bool)), error=draw(_texts)),),
            "dissent": tuple(
                Dissent(
                    agent_id=a,
                    outcome=draw(_texts),
                    confidence=draw(_floats),
                    kind=draw(st.sampled_from(["full", "partial"])),
                    reasoning=draw(_texts),
                )
                for a in agents
            ),
            "tensions": (
                Tension(
                    description=draw(_texts),
                    agents_involved=tuple(agents),
                    options=draw(texts),
                    impact=draw(_texts),
                    suggested_followup=draw(_texts),
                ),
            ),
            "blind_spots": draw(texts),
            "overlap": SourceOverlap(
                average=draw(_floats),
                max=draw(_floats),
                pairs=tuple(
                    OverlapPair(agents=(a, b), jaccard=draw(_floats))
                    for a in agents
                    for b in agents
                    if a < b
                ),
                total_unique_sources=draw(st.integers(0, 2**53 - 1)),
                band=draw(st.sampled_from(["low", "moderate", "high", "very high"])),
            ),
            "sources": tuple(
                MergedSource(
                    url=draw(_texts),
                    title=draw(_texts),
                    category=draw(_texts),
                    credibility_score=draw(_floats),
                    relevance_score=draw(_floats),
                    published_at=draw(st.none() | st.datetimes(timezones=st.just(UTC))),
                    cited_by=tuple(agents),
                )
                for _ in range(draw(st.integers(0, 4)))
            ),
        }
    )
    return consensus_input, result


def _proof_as_the_dumps_are(
    consensus_input: Any,
    result: Any,
    params: ConsensusParams,
    thresholds: SourceThresholds,
    *,
    extras: dict[str, Any],
    hidden_characters: int,
) -> dict[str, Any]:
    """A proof as documented, the plain way: every part `model_dump(mode="json")` of its
    model, floats rounded, and the checksum over the reference encoder's bytes."""
    dumped = result.model_dump(mode="json")
    parts = ("votes", "excluded", "failures", "dissent", "tensions", "blind_spots", "overlap")
    not_in_verdict = {*parts, "sources", "market_id", "required_agreement"}
    reasoning = {r.agent_id: r.reasoning for r in consensus_input.results}
    market = consensus_input.market.model_dump(mode="json")
    body = proof_module.round_like_a_proof(
        {
            "version": 2,
            "market": {
                k: v
                for k, v in market.items()
                if v is not None or k not in ("window", "now", "invalid", "values")
            }
            | ({"hidden_characters": hidden_characters} if hidden_characters else {}),
            "verdict": {k: v for k, v in dumped.items() if k not in not_in_verdict},
            "votes": [
                {k: v for k, v in vote.items() if k != "seen_not_read" or v}
                | {"reasoning": reasoning[vote["agent_id"]]}
                for vote in dumped["votes"]
            ],
            **{part: dumped[part] for part in parts[1:]},
            "sources": dumped["sources"],
            "config": {
                "consensus": params.model_dump(mode="json"),
                "sources": thresholds.model_dump(mode="json"),
            },
            **{name: extras[name] for name in ("debate", "majority", "timing") if name in extras},
        }
    )
    checksum = hashlib.sha256(rfc8785.dumps(body)).hexdigest()
    return {"proof_id": f"proof-{checksum[:16]}", **body, "checksum": checksum}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _results(),
    st.sampled_from([300.0, 12.5, 1e-7]),
    st.fixed_dictionaries(
        {}, optional={"debate": _json, "majority": _json, "timing": _json}
    ).filter(lambda extras: all(isinstance(v, dict) for v in extras.values())),
    st.sampled_from([0, 3]),
)
def test_a_proof_holds_each_part_as_its_models_dump_and_the_reference_encodes_it(
    built: tuple[Any, Any], timeout: float, extras: dict[str, Any], hidden_characters: int
) -> None:
    """Equal to the plain way's proof, its JSON text (key order included) and checksum
    too; the configuration kept from one proof to the next is never shared with it."""
    consensus_input, result = built
    params, thresholds = ConsensusParams(agent_timeout=timeout), SourceThresholds()
    expected = _proof_as_the_dumps_are(
        consensus_input,
        result,
        params,
        thresholds,
        extras=extras,
        hidden_characters=hidden_characters,
    )
    for _ in range(2):
        proof = build_proof(
            consensus_input,
            result,
            params,
            thresholds,
            hidden_characters=hidden_characters,
            **extras,
        )
        assert proof == expected
        assert json.dumps(proof) == json.dumps(expected)
        proof["config"]["consensus"]["agent_timeout"] = 1  # the caller's copy
