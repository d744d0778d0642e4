"""`oracle config ...`: inspect the configuration."""

from __future__ import annotations

import click

from oracle.cli._common import config_option


@click.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("check")
@config_option
def config_check(config_path: str | None) -> None:
    """Validate the configuration and print the effective values, secrets masked."""
    import yaml

    from oracle.agents.diversity import config_warnings
    from oracle.config import (
        config_key,
        effective_config,
        legacy_chain_warning,
        load_settings,
        nothing_to_do,
    )

    settings = load_settings(config_path)
    click.echo(yaml.safe_dump(effective_config(settings), sort_keys=False), nl=False)
    idle = nothing_to_do(settings)
    if idle is not None:
        click.echo(
            f"warning: {config_key(idle.key)}: {idle.problem}; `oracle run` refuses to start",
            err=True,
        )
    old_chain = legacy_chain_warning(settings)
    if old_chain is not None:
        click.echo(f"warning: {old_chain}", err=True)
    for warning in config_warnings(settings.agents, settings.consensus):
        click.echo(f"warning: {warning}", err=True)
