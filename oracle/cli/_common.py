"""What every `oracle` command shares: exit codes, the one-line failure, input reading and
the `--config` option. Nothing heavy is imported here: `oracle --help` loads this."""

from __future__ import annotations

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


_CHAIN = "oracle.chain"


def chain_option(function: Any) -> Any:
    """`--chain NAME`: which entry of `chains` a command works on (read by
    `chain_settings`; needed only when several are configured)."""

    def remember(context: click.Context, _: click.Parameter, value: str | None) -> None:
        context.meta[_CHAIN] = value

    return click.option(
        "--chain",
        default=None,
        expose_value=False,
        callback=remember,
        help="The chain (its name in chains); needed when several are configured.",
    )(function)


def chain_settings(config_path: str | None) -> ChainSettings:
    """The chain of the configuration at `config_path`: the one `--chain` names, else the
    only entry of `chains` (a configuration error names them when there are several)."""
    from oracle.config import load_settings

    context = click.get_current_context(silent=True)
    name = context.meta.get(_CHAIN) if context is not None else None
    return load_settings(config_path).chain_settings(name)
