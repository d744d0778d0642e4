"""What every `oracle` command shares: exit codes, the one-line failure, input reading and
the `--config` option. Nothing heavy is imported here: `oracle --help` loads this."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from oracle.errors import JsonError

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def read_json(path: str) -> Any:
    """FILE's JSON (`-` for stdin); any problem exits 2 naming the file."""
    from oracle import safe_json

    name = "stdin" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        fail(f"{name}: no such file")
    except (OSError, UnicodeDecodeError) as error:
        fail(f"{name}: cannot be read ({getattr(error, 'strerror', None) or error})")
    try:
        return safe_json.loads(text)
    except JsonError as error:
        fail(f"{name}: {error}")


def config_option(function: Any) -> Any:
    """`--config FILE`, read by `oracle.config.load_settings`."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        default=None,
        help="Configuration file (default: $ORACLE_CONFIG, else ./config.yaml if present).",
    )(function)


if TYPE_CHECKING:
    from oracle.chain.settings import ChainSettings


def chain_settings(config_path: str | None) -> ChainSettings:
    """The chain of the configuration at `config_path` (its only entry of `chains`, or
    the one `$ORACLE_CHAIN` names when several are configured)."""
    from oracle.config import load_settings

    return load_settings(config_path).chain_settings(os.environ.get("ORACLE_CHAIN") or None)
