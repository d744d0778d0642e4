"""`oracle consensus` and `oracle proof ...`: the pure core on files, no daemon."""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from oracle.cli._common import EXIT_CHECK_FAILED, config_option, fail, read_json
from oracle.errors import InputError, ProofError

if TYPE_CHECKING:
    from oracle.core.models import ConsensusResult
    from oracle.core.params import ConsensusParams, SourceThresholds


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a document's objects are built: they
    hold no cycles (reference counting frees them), yet every 700 allocations the collector
    would scan them, costing a fifth of the command's time on a large input
    (bench/consensus.py). mypy raises its thresholds for the same reason.

    On the way out, what was built is moved to the oldest generation (`gc.freeze` then
    `gc.unfreeze`, two list splices) instead of being scanned by the young collection the
    next allocation would start: that scan of every object built found nothing, and cost
    as much as the algorithm's own merge on a large input. (Not when something else froze
    objects: unfreezing would release them too.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def run_consensus(
    document: Any, params: ConsensusParams, thresholds: SourceThresholds
) -> tuple[ConsensusResult, dict[str, Any]]:
    """The verdict and proof of a consensus input document (decoded JSON): what
    `oracle consensus` computes; InputError naming the field for a malformed one."""
    from oracle.core import build_proof, evaluate
    from oracle.core.inputs import read_consensus_input

    with collector_paused():
        # As `parse_consensus_input` then `evaluate`, with the sources read as fields, not
        # models (`read_consensus_input`): the same verdict and proof, faster.
        read = read_consensus_input(document)
        answers = read["answers"]
        result = evaluate(answers, params, thresholds, sources=read)
        return result, build_proof(answers, result, params, thresholds)


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
    from oracle.core import render_markdown
    from oracle.core.params import ConsensusParams, SourceThresholds
    from oracle.core.proof import round_like_a_proof

    config_data = load_data(config_path)
    params = validate_section(config_data, "consensus", ConsensusParams)
    thresholds = validate_section(config_data, "sources", SourceThresholds)
    try:
        # Decoding builds as many objects as the verdict: the collector is paused for both.
        with collector_paused():
            result, proof = run_consensus(read_json(input_file), params, thresholds)
    except InputError as error:
        fail(f"{'stdin' if input_file == '-' else input_file}: {error}")
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
