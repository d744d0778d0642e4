"""Regenerate the bundled consensus inputs in oracle/examples/ and the proofs of them (with
the default configuration) in oracle/examples/proofs/ (run after changing either).

The proofs are written in the current proof format (version 2, RFC 8785 checksum), as
`oracle consensus FILE --proof OUT` writes them; `node verifier/verify-proof.mjs` checks
them without Python. Version 1 proofs of the same inputs are kept as fixtures in
tests/fixtures/proofs/."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from oracle.core import (
    ConsensusParams,
    SourceThresholds,
    build_proof,
    evaluate,
    parse_consensus_input,
)
from oracle.testing import consensus_document, result_dict, source_dicts

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "oracle" / "examples"
PROOFS_DIR = EXAMPLES_DIR / "proofs"


def examples() -> dict[str, dict[str, Any]]:
    shared = source_dicts("fed-statement", 12, credibility=0.95)
    return {
        "agreement.json": consensus_document(
            [
                result_dict("claude-researcher", "YES", 0.91, 64, shared=shared),
                result_dict("gpt-researcher", "YES", 0.88, 58, shared=shared),
                result_dict("llama-researcher", "YES", 0.84, 52, shared=shared[:6]),
                result_dict(
                    "mistral-researcher",
                    "NO",
                    0.62,
                    55,
                    reasoning="The statement mentions a cut in a future meeting only.",
                ),
            ],
            market_id="fed-cut-2026-09",
            question="Did the Federal Reserve cut its policy rate at the September 2026 meeting?",
        ),
        "contested.json": consensus_document(
            [
                result_dict("claude-researcher", "Alice", 0.74, 60),
                result_dict("gpt-researcher", "Bob", 0.71, 57),
                result_dict("llama-researcher", "Alice", 0.55, 51),
                result_dict("mistral-researcher", "Carol", 0.66, 53),
            ],
            market_id="mayor-2026",
            question="Who won the 2026 mayoral election?",
            outcomes=["Alice", "Bob", "Carol"],
        ),
        "thin-evidence.json": consensus_document(
            [
                result_dict("claude-researcher", "NO", 0.93, 61),
                result_dict("gpt-researcher", "NO", 0.90, 22),
                result_dict("llama-researcher", "NO", 0.85, 18),
            ],
            market_id="launch-2026-q3",
            question="Did the rocket launch before the end of Q3 2026?",
            failures=[{"agent_id": "mistral-researcher", "error": "timed out after 300 s"}],
        ),
    }


def proofs() -> dict[str, dict[str, Any]]:
    """The proof of each example under the default configuration, by the example's name."""
    params, thresholds = ConsensusParams(), SourceThresholds()
    built = {}
    for name, document in examples().items():
        consensus_input = parse_consensus_input(document)
        result = evaluate(consensus_input, params, thresholds)
        built[name] = build_proof(consensus_input, result, params, thresholds)
    return built


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1) + "\n"


def render_proof(proof: dict[str, Any]) -> str:
    """As `oracle consensus --proof` writes a proof."""
    return json.dumps(proof, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    EXAMPLES_DIR.mkdir(exist_ok=True)
    PROOFS_DIR.mkdir(exist_ok=True)
    for name, document in examples().items():
        (EXAMPLES_DIR / name).write_text(render(document))
        print(f"wrote {EXAMPLES_DIR / name}", file=sys.stderr)
    for name, proof in proofs().items():
        (PROOFS_DIR / name).write_text(render_proof(proof), "utf-8")
        print(f"wrote {PROOFS_DIR / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
