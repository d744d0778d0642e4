"""`oracle chain ...`: deploy the contracts, ask questions and read their on-chain state.

web3 takes about a second to import; only these commands load it, inside themselves.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from oracle.cli._common import chain_option, chain_settings, config_option
from oracle.errors import SetupError

if TYPE_CHECKING:
    from oracle.chain.contracts import Deployment, QuestionView
    from oracle.chain.deploy import Asked
    from oracle.chain.settings import ChainSettings

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"


@click.group()
def chain() -> None:
    """Deploy the contracts, ask questions and read their on-chain state."""


_QUESTION_ID = re.compile(r"^0x[0-9a-fA-F]{64}$")


def _parse_time(value: str) -> int:
    """Unix seconds, or an ISO-8601 date-time (UTC unless it names an offset)."""
    if value.isdigit():
        return int(value)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            "expected unix seconds or an ISO-8601 time such as 2026-01-31T12:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = int(moment.timestamp())
    if not 0 <= seconds < 2**32:
        raise click.BadParameter("must be between 1970 and 2106")
    return seconds


def _deployment_path(settings: ChainSettings, path: Path | None) -> tuple[Path, str]:
    """The deployment file, and the option or setting that named it (for errors)."""
    if path is not None:
        return path, "--deployment"
    return Path(settings.deployment_file), "chain.deployment_file"


def _require_writable(target: Path, key: str) -> None:
    """Fail before deploying rather than after: deployed contracts whose addresses cannot
    be written down are lost to the daemon."""
    import tempfile

    from oracle.files import make_directory

    try:
        make_directory(target.parent)
        with tempfile.TemporaryFile(dir=target.parent):
            pass
    except OSError as error:
        raise SetupError(key, f"{target}: cannot be written ({error.strerror})") from None


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))


def _deployment_option(function: Any) -> Any:
    return click.option(
        "--deployment",
        "deployment_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Deployment file (default: chain.deployment_file).",
    )(function)


@chain.command("deploy")
@config_option
@chain_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the deployment file (default: chain.deployment_file).",
)
# 30 seconds is the contract's LIVENESS_FLOOR; it rejects a zero bond.
@click.option(
    "--min-liveness", type=click.IntRange(30, 90 * 86400), default=7200, show_default=True
)
@click.option(
    "--bond-wei", type=click.IntRange(1, 2**96 - 1), default=10**17, show_default="0.1 ETH"
)
@click.option("--bond-token", default=None, help="ERC-20 bond token (default: ETH).")
@click.option("--treasury", default=None, help="Receives forfeited bonds (default: the signer).")
@click.option("--owner", default=None, help="Owner after deployment (default: the signer).")
@click.option(
    "--reporter", "reporters", multiple=True, help="Reporter account(s) (default: the signer)."
)
@click.option("--conditional-tokens", default=None, help="Existing ConditionalTokens address.")
@click.option(
    "--deploy-conditional-tokens",
    is_flag=True,
    help="Also deploy a ConditionalTokens contract (development chains).",
)
@click.option("--no-adapter", is_flag=True, help="Skip the Conditional Tokens adapter.")
def chain_deploy(
    *,
    config_path: str | None,
    out: Path | None,
    min_liveness: int,
    bond_wei: int,
    bond_token: str | None,
    treasury: str | None,
    owner: str | None,
    reporters: tuple[str, ...],
    conditional_tokens: str | None,
    deploy_conditional_tokens: bool,
    no_adapter: bool,
) -> None:
    """Deploy the contracts from the exported artifacts and write the deployment file."""
    import asyncio

    from oracle.app import chain_session
    from oracle.chain.deploy import deploy_contracts

    settings = chain_settings(config_path)
    target = out if out is not None else Path(settings.deployment_file)
    target_key = "--out" if out is not None else "chain.deployment_file"
    _require_writable(target, target_key)

    async def deploy() -> Deployment:
        async with chain_session(settings) as session:
            return await deploy_contracts(
                session.manager,
                owner=owner,
                treasury=treasury,
                bond_token=bond_token or ZERO_ADDRESS,
                bond_amount=bond_wei,
                min_liveness=min_liveness,
                reporters=list(reporters) or None,
                conditional_tokens=conditional_tokens,
                deploy_conditional_tokens=deploy_conditional_tokens,
                adapter=not no_adapter,
            )

    deployment = asyncio.run(deploy())
    _echo_json({**deployment.model_dump(mode="json"), "file": str(target)})  # never lost
    try:
        deployment.save(target)
    except OSError as error:
        raise SetupError(target_key, f"{target}: cannot be written ({error.strerror})") from None


@chain.command("ask")
@config_option
@chain_option
@_deployment_option
@click.option("--question", "text", required=True, help="The question text.")
@click.option(
    "--resolve-after",
    required=True,
    metavar="TIME",
    help="Earliest time a proposal is accepted: unix seconds or ISO-8601.",
)
@click.option("--outcomes", type=click.IntRange(2, 256), default=2, show_default=True)
@click.option(
    "--liveness",
    type=click.IntRange(30, 90 * 86400),
    default=30,
    show_default=True,
    help="Challenge window in seconds (raised to the contract's minimum: 30 means the minimum).",
)
@click.option("--callback", default=ZERO_ADDRESS, help="Contract notified by settle.")
def chain_ask(
    *,
    config_path: str | None,
    deployment_path: Path | None,
    text: str,
    resolve_after: str,
    outcomes: int,
    liveness: int,
    callback: str,
) -> None:
    """Ask a question on the oracle (for demos and tests); prints its id."""
    import asyncio

    from oracle.app import chain_session
    from oracle.chain.contracts import ORACLE
    from oracle.chain.deploy import ask

    if not text.strip():
        raise click.BadParameter("must not be empty", param_hint="--question")
    try:
        earliest = _parse_time(resolve_after)
    except click.BadParameter as error:
        error.param_hint = "--resolve-after"
        raise
    settings = chain_settings(config_path)
    deployment_file, deployment_key = _deployment_path(settings, deployment_path)

    async def ask_question() -> Asked:
        async with chain_session(
            settings, deployment_file=deployment_file, deployment_key=deployment_key
        ) as session:
            assert session.deployment is not None  # asked for by deployment_file
            return await ask(
                session.manager,
                session.deployment.address(ORACLE),
                text=text,
                earliest_time=earliest,
                outcomes=outcomes,
                liveness=liveness,
                callback=callback,
            )

    asked = asyncio.run(ask_question())
    _echo_json(
        {
            "question_id": asked.question_id,
            "tx_hash": asked.tx_hash,
            "block_number": asked.block_number,
        }
    )


@chain.command("status")
@config_option
@chain_option
@_deployment_option
@click.argument("question_id")
def chain_status(config_path: str | None, deployment_path: Path | None, question_id: str) -> None:
    """Print the on-chain state of QUESTION_ID (exit 1 if there is no such question)."""
    if not _QUESTION_ID.match(question_id):
        raise click.BadParameter("expected 0x and 64 hex digits", param_hint="QUESTION_ID")
    settings = chain_settings(config_path)
    deployment_file, deployment_key = _deployment_path(settings, deployment_path)
    question = _read_question(settings, deployment_file, deployment_key, question_id)
    if not question.exists:
        click.echo(f"error: {question_id}: no such question", err=True)
        sys.exit(1)
    _echo_json({"question_id": question_id, **question.describe()})


def _read_question(
    settings: ChainSettings, deployment_file: Path, deployment_key: str, question_id: str
) -> QuestionView:
    """The question's view on the deployment's chain; reading needs no signer."""
    import asyncio

    from oracle.chain.connect import connect
    from oracle.chain.contracts import ORACLE, AgentOracle

    async def read() -> QuestionView:
        pool, deployment = await connect(settings, deployment_file, deployment_key=deployment_key)
        try:
            return await AgentOracle(pool, deployment.address(ORACLE)).get_question(question_id)
        finally:
            await pool.close()

    return asyncio.run(read())
