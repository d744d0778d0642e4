"""Options shared by every `oracle` command group."""

from __future__ import annotations

from typing import Any

import click


def config_option(function: Any) -> Any:
    """`--config FILE`, read by `oracle.config.load_settings`."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        default=None,
        help="Configuration file (default: $ORACLE_CONFIG, else ./config.yaml if present).",
    )(function)
