from __future__ import annotations

from typing import Any

from oracle.core import (
    ConsensusParams,
    ConsensusResult,
    SourceThresholds,
    evaluate,
    parse_consensus_input,
)
from oracle.testing import consensus_document, result_dict


def verdict(
    votes: list[tuple[str, str, float]] | list[dict[str, Any]],
    params: ConsensusParams | None = None,
    thresholds: SourceThresholds | None = None,
    **document: Any,
) -> ConsensusResult:
    """Evaluate agents given as (agent_id, outcome, confidence) or full result dicts."""
    results = [v if isinstance(v, dict) else result_dict(*v) for v in votes]
    return evaluate(
        parse_consensus_input(consensus_document(results, **document)),
        params or ConsensusParams(),
        thresholds or SourceThresholds(),
    )
