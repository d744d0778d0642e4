"""The `oracle` command line.

Exit codes: 0 success; 1 a check failed (for example a proof that was altered);
2 bad input or configuration, reported as one line naming the field and the problem.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
import yaml

from oracle import __version__
from oracle.config import effective_config, load_settings
from oracle.core import build_proof, evaluate, parse_consensus_input, render_markdown, verify_proof
from oracle.errors import OracleError

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _read_json(path: str) -> Any:
    name = "stdin" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail(f"{name}: no such file")
    except (OSError, UnicodeDecodeError) as error:
        _fail(f"{name}: cannot be read ({getattr(error, 'strerror', None) or error})")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        _fail(f"{name}: not JSON (line {error.lineno}, column {error.colno}: {error.msg})")


def _config_option(function: Any) -> Any:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        default=None,
        help="Configuration file (default: $ORACLE_CONFIG, else ./config.yaml if present).",
    )(function)


@click.group()
@click.version_option(__version__, prog_name="oracle")
def cli() -> None:
    """AI-agent oracle for prediction markets."""


@cli.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("check")
@_config_option
def config_check(config_path: str | None) -> None:
    """Validate the configuration and print the effective values, secrets masked."""
    settings = load_settings(config_path)
    click.echo(yaml.safe_dump(effective_config(settings), sort_keys=False), nl=False)


@cli.command("consensus")
@click.argument("input_file", metavar="FILE")
@_config_option
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
    settings = load_settings(config_path)
    consensus_input = parse_consensus_input(_read_json(input_file))
    result = evaluate(consensus_input, settings.consensus, settings.sources)
    proof = build_proof(consensus_input, result, settings.consensus, settings.sources)
    if proof_out is not None:
        target = Path(proof_out)
        target.write_text(json.dumps(proof, indent=2, ensure_ascii=False) + "\n", "utf-8")
        target.with_suffix(".md").write_text(render_markdown(proof), "utf-8")
    if output_format == "markdown":
        click.echo(render_markdown(proof), nl=False)
    else:
        output = {**result.model_dump(mode="json"), "proof": proof}
        click.echo(json.dumps(output, indent=2, ensure_ascii=False))


@cli.group()
def proof() -> None:
    """Work with consensus proofs."""


@proof.command("verify")
@click.argument("proof_file", metavar="FILE")
def proof_verify(proof_file: str) -> None:
    """Recompute FILE's checksum: exit 0 when it matches, 1 when the proof was altered."""
    document = _read_json(proof_file)
    matches, recomputed = verify_proof(document)
    if matches:
        click.echo(f"ok: checksum {recomputed} matches")
        return
    click.echo(f"ALTERED: the content's checksum is {recomputed}, not the recorded one", err=True)
    sys.exit(EXIT_CHECK_FAILED)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        _fail("aborted")
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_BAD_INPUT)
    except OracleError as error:
        # A config error may list several problems, one per line; keep them all.
        _fail(str(error).replace("\n", "\nerror: "))
    except click.exceptions.Exit as exit_request:
        sys.exit(exit_request.exit_code)
