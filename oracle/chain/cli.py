"""`oracle keys ...` and `oracle chain ...`: key custody and the on-chain side of the oracle.

Registered on the main `oracle` command in `oracle/cli.py`. Private keys are never taken
as command-line arguments (they would end up in shell history and process listings):
`keys import` reads the key from a file or from standard input.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import click
from pydantic import SecretStr

from oracle._cli_options import config_option
from oracle.chain.passwords import read_password
from oracle.chain.settings import ChainSettings
from oracle.config import load_settings
from oracle.errors import KeystoreError, SetupError
from oracle.files import make_directory

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"


def _commands() -> ModuleType:
    # web3 and eth_account take seconds to import; only these commands need them, so the
    # rest of the `oracle` command line does not pay for them.
    from oracle.chain import commands  # noqa: PLC0415

    return commands


def _chain_settings(config_path: str | None) -> ChainSettings:
    return load_settings(config_path).chain


def _keystore_options(function: Any) -> Any:
    function = click.option(
        "--password-env",
        metavar="VAR",
        default=None,
        help="Read the password from this environment variable (default: chain.signer).",
    )(function)
    function = click.option(
        "--password-file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Read the password from this file (default: chain.signer.password_file).",
    )(function)
    function = click.option(
        "--keystore",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Keystore file (default: chain.signer.keystore).",
    )(function)
    return config_option(function)


def _keystore_path(settings: ChainSettings, keystore: Path | None) -> Path:
    if keystore is not None:
        return keystore
    if settings.signer.keystore is None:
        raise KeystoreError("chain.signer.keystore: not set; pass --keystore")
    return Path(settings.signer.keystore)


def _password(
    settings: ChainSettings, password_file: Path | None, password_env: str | None, *, new: bool
) -> SecretStr:
    if password_file is not None or password_env is not None:
        return read_password(password_file, password_env)
    try:
        configured = settings.signer.password_file
        return read_password(Path(configured) if configured else None, settings.signer.password_env)
    except KeystoreError:
        if not sys.stdin.isatty():
            raise
    value = click.prompt("Keystore password", hide_input=True, confirmation_prompt=new)
    return SecretStr(str(value))


@click.group()
def keys() -> None:
    """Create and inspect the signer's encrypted keystore."""


@keys.command("new")
@_keystore_options
def keys_new(
    config_path: str | None,
    keystore: Path | None,
    password_file: Path | None,
    password_env: str | None,
) -> None:
    """Generate a key into a new encrypted keystore and print its address."""
    settings = _chain_settings(config_path)
    path = _keystore_path(settings, keystore)
    password = _password(settings, password_file, password_env, new=True)
    click.echo(_commands().create_keystore(path, password))


@keys.command("import")
@_keystore_options
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File holding the hex private key (default: read it from standard input).",
)
def keys_import(
    config_path: str | None,
    keystore: Path | None,
    password_file: Path | None,
    password_env: str | None,
    key_file: Path | None,
) -> None:
    """Encrypt an existing private key into a new keystore and print its address."""
    settings = _chain_settings(config_path)
    path = _keystore_path(settings, keystore)
    if key_file is not None:
        try:
            key_text = key_file.read_text(encoding="utf-8")
        except OSError as error:
            raise KeystoreError(f"{key_file}: cannot be read ({error.strerror})") from None
    elif sys.stdin.isatty():
        key_text = str(click.prompt("Private key (hex)", hide_input=True))
    else:
        key_text = sys.stdin.readline()
    password = _password(settings, password_file, password_env, new=True)
    click.echo(_commands().import_keystore(path, SecretStr(key_text.strip()), password))


@keys.command("address")
@config_option
@click.option("--keystore", type=click.Path(dir_okay=False, path_type=Path), default=None)
def keys_address(config_path: str | None, keystore: Path | None) -> None:
    """Print the keystore's address (no password needed)."""
    settings = _chain_settings(config_path)
    click.echo(_commands().keystore_address(_keystore_path(settings, keystore)))


@click.group()
def chain() -> None:
    """Deploy the contracts, ask questions and read their on-chain state."""


# --- oracle chain ---------------------------------------------------------------------------

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
    settings = _chain_settings(config_path)
    target = out if out is not None else Path(settings.deployment_file)
    target_key = "--out" if out is not None else "chain.deployment_file"
    _require_writable(target, target_key)
    deployment = _commands().deploy(
        settings,
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
    _echo_json({**deployment.model_dump(mode="json"), "file": str(target)})  # never lost
    try:
        deployment.save(target)
    except OSError as error:
        raise SetupError(target_key, f"{target}: cannot be written ({error.strerror})") from None


@chain.command("ask")
@config_option
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
    if not text.strip():
        raise click.BadParameter("must not be empty", param_hint="--question")
    try:
        earliest = _parse_time(resolve_after)
    except click.BadParameter as error:
        error.param_hint = "--resolve-after"
        raise
    settings = _chain_settings(config_path)
    asked = _commands().ask_question(
        settings,
        *_deployment_path(settings, deployment_path),
        text=text,
        earliest_time=earliest,
        outcomes=outcomes,
        liveness=liveness,
        callback=callback,
    )
    _echo_json(
        {
            "question_id": asked.question_id,
            "tx_hash": asked.tx_hash,
            "block_number": asked.block_number,
        }
    )


@chain.command("status")
@config_option
@_deployment_option
@click.argument("question_id")
def chain_status(config_path: str | None, deployment_path: Path | None, question_id: str) -> None:
    """Print the on-chain state of QUESTION_ID (exit 1 if there is no such question)."""
    if not _QUESTION_ID.match(question_id):
        raise click.BadParameter("expected 0x and 64 hex digits", param_hint="QUESTION_ID")
    settings = _chain_settings(config_path)
    question = _commands().question_status(
        settings, *_deployment_path(settings, deployment_path), question_id
    )
    if not question.exists:
        click.echo(f"error: {question_id}: no such question", err=True)
        sys.exit(1)
    _echo_json({"question_id": question_id, **question.describe()})
