"""`oracle consensus` and `oracle proof ...`: the pure core on files, no daemon."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from oracle.cli._common import EXIT_CHECK_FAILED, config_option, fail, read_json
from oracle.errors import InputError, ProofError


@click.command("consensus")
@click.argument("input_file", metavar="FILE")
@config_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["json", "markdown"]),
    default="json",
    show_default=True,
)
@click.option(
    "--proof",
    "proof_out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the proof: JSON to this path, Markdown beside it with a .md suffix.",
)
def consensus(
    input_file: str, config_path: str | None, output_format: str, proof_out: str | None
) -> None:
    """Compute the consensus of agent results in FILE (JSON; `-` for stdin)."""
    # Only the two sections it uses: the other sections' models (daemon, chain, agents)
    # would double the command's start-up time (bench/startup.py).
    from oracle.config_sources import load_data, validate_section
    from oracle.core import build_proof, evaluate, parse_consensus_input, render_markdown
    from oracle.core.params import ConsensusParams, SourceThresholds
    from oracle.core.proof import round_like_a_proof

    config_data = load_data(config_path)
    params = validate_section(config_data, "consensus", ConsensusParams)
    thresholds = validate_section(config_data, "sources", SourceThresholds)
    try:
        consensus_input = parse_consensus_input(read_json(input_file))
    except InputError as error:
        fail(f"{'stdin' if input_file == '-' else input_file}: {error}")
    result = evaluate(consensus_input, params, thresholds)
    proof = build_proof(consensus_input, result, params, thresholds)
    if proof_out is not None:
        target = Path(proof_out)
        for path, text in (
            (target, json.dumps(proof, indent=2, ensure_ascii=False) + "\n"),
            (target.with_suffix(".md"), render_markdown(proof)),
        ):
            try:
                path.write_text(text, "utf-8")
            except OSError as error:
                fail(f"--proof: {path}: cannot be written ({error.strerror})")
    if output_format == "markdown":
        click.echo(render_markdown(proof), nl=False)
    else:
        # Rounded for display only: the proof, its values and checksum, stay as built.
        output = {**round_like_a_proof(result.model_dump(mode="json")), "proof": proof}
        click.echo(json.dumps(output, indent=2, ensure_ascii=False))


@click.group()
def proof() -> None:
    """Work with consensus proofs."""


@proof.command("verify")
@click.argument("proof_file", metavar="FILE")
@config_option
def proof_verify(proof_file: str, config_path: str | None) -> None:
    """Recompute FILE's checksum: exit 0 when it matches, 1 when the proof was altered.
    No setting changes the check: `--config` is accepted, as by every command, and not
    read (a proof is checked the same anywhere)."""
    from oracle.core.proof import verify_proof

    name = "stdin" if proof_file == "-" else proof_file
    document = read_json(proof_file)
    try:
        matches, recomputed = verify_proof(document)
    except ProofError as error:
        fail(f"{name}: {error}")
    if matches:
        click.echo(f"ok: checksum {recomputed} matches")
        return
    click.echo(
        f"ALTERED: {name}: the content's checksum is {recomputed}, not the recorded one",
        err=True,
    )
    sys.exit(EXIT_CHECK_FAILED)
