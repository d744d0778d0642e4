"""The consensus core: pure functions from agent answers to a verdict and its proof.

Public surface::

    parse_consensus_input(data) -> ConsensusInput     raises InputError naming the field
    evaluate(input, params, thresholds) -> ConsensusResult
    build_proof(input, result, params, thresholds) -> dict (with checksum)
    verify_proof(document) -> (matches, checksum)
    register_strategy(strategy)                       custom strategies by name
"""

from oracle.core.consensus import evaluate, fault_tolerance, final_confidence
from oracle.core.inputs import parse_consensus_input
from oracle.core.models import (
    INVALID,
    NO,
    UNDETERMINED,
    YES,
    AgentFailure,
    AgentResult,
    ConsensusInput,
    ConsensusResult,
    Market,
    ResearchSource,
)
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.proof import build_proof, render_markdown, verify_proof
from oracle.core.strategies import (
    Ballot,
    ConsensusStrategy,
    StrategyVerdict,
    get_strategy,
    register_strategy,
    strategy_names,
)
from oracle.core.urls import normalize_url

__all__ = [
    "INVALID",
    "NO",
    "UNDETERMINED",
    "YES",
    "AgentFailure",
    "AgentResult",
    "Ballot",
    "ConsensusInput",
    "ConsensusParams",
    "ConsensusResult",
    "ConsensusStrategy",
    "Market",
    "ResearchSource",
    "SourceThresholds",
    "StrategyVerdict",
    "build_proof",
    "evaluate",
    "fault_tolerance",
    "final_confidence",
    "get_strategy",
    "normalize_url",
    "parse_consensus_input",
    "register_strategy",
    "render_markdown",
    "strategy_names",
    "verify_proof",
]
