"""`oracle keys ...`: the signer's encrypted keystore.

Private keys are never taken as command-line arguments (they would end up in shell
history and process listings): `keys import` reads the key from a file or from standard
input. eth_account is imported only inside the commands that need it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from oracle.cli._common import chain_option, chain_settings, config_option
from oracle.errors import KeystoreError

if TYPE_CHECKING:
    from pydantic import SecretStr

    from oracle.chain.settings import ChainSettings


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
    return chain_option(config_option(function))


def _keystore_path(settings: ChainSettings, keystore: Path | None) -> Path:
    if keystore is not None:
        return keystore
    if settings.signer.keystore is None:
        raise KeystoreError("chain.signer.keystore: not set; pass --keystore")
    return Path(settings.signer.keystore)


def _password(
    settings: ChainSettings, password_file: Path | None, password_env: str | None, *, new: bool
) -> SecretStr:
    from pydantic import SecretStr

    from oracle.chain.passwords import read_password

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
    settings = chain_settings(config_path)
    path = _keystore_path(settings, keystore)
    password = _password(settings, password_file, password_env, new=True)
    from oracle.chain.keys import create_keystore

    click.echo(create_keystore(path, password))


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
    settings = chain_settings(config_path)
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
    from pydantic import SecretStr

    from oracle.chain.keys import import_keystore

    click.echo(import_keystore(path, SecretStr(key_text.strip()), password))


@keys.command("address")
@config_option
@chain_option
@click.option("--keystore", type=click.Path(dir_okay=False, path_type=Path), default=None)
def keys_address(config_path: str | None, keystore: Path | None) -> None:
    """Print the keystore's address (no password needed)."""
    settings = chain_settings(config_path)
    from oracle.chain.keys import keystore_address

    click.echo(keystore_address(_keystore_path(settings, keystore)))
