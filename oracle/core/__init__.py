"""The consensus core: pure functions from agent answers to a verdict and its proof.

Public surface::

    parse_consensus_input(data) -> ConsensusInput     raises InputError naming the field
    evaluate(input, params, thresholds) -> ConsensusResult
    build_proof(input, result, params, thresholds) -> dict (with checksum)
    verify_proof(document) -> (matches, checksum)
    register_strategy(strategy)                       custom strategies by name
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each name is imported from its module on first use (PEP 562), so that importing one
# module of the core (`oracle proof verify` needs only `oracle.core.proof`) does not
# build every model of the others.
_EXPORTS = {
    "evaluate": "consensus",
    "fault_tolerance": "consensus",
    "final_confidence": "consensus",
    "parse_consensus_input": "inputs",
    "INVALID": "models",
    "NO": "models",
    "UNDETERMINED": "models",
    "YES": "models",
    "AgentFailure": "models",
    "AgentResult": "models",
    "ConsensusInput": "models",
    "ConsensusResult": "models",
    "Market": "models",
    "ResearchSource": "models",
    "ConsensusParams": "params",
    "SourceThresholds": "params",
    "build_proof": "proof",
    "render_markdown": "proof",
    "verify_proof": "proof",
    "Ballot": "strategies",
    "ConsensusStrategy": "strategies",
    "StrategyVerdict": "strategies",
    "get_strategy": "strategies",
    "register_strategy": "strategies",
    "strategy_names": "strategies",
    "normalize_url": "urls",
}

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'oracle.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"oracle.core.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


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
