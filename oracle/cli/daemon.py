"""`oracle run` and `oracle db ...`: the daemon and its database."""

from __future__ import annotations

import sys

import click

from oracle.cli._common import EXIT_CHECK_FAILED, config_option
from oracle.errors import SetupError


@click.command("run")
@config_option
@click.option("--once", is_flag=True, help="Make one full pass and exit (for cron or serverless).")
def run(config_path: str | None, once: bool) -> None:
    """Run the oracle daemon: poll, research, decide, submit or queue for review.

    The whole setup is checked first (oracle/app.py); a problem exits 2 with one
    line naming the setting, before any job runs. With --once, a pass in which a market
    source could not be polled exits 1, one line per source.
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from oracle.app import assemble
    from oracle.config import load_settings, nothing_to_do
    from oracle.daemon.runner import listen, run_forever
    from oracle.log import HeldLogs, configure_logging

    settings = load_settings(config_path)
    idle = nothing_to_do(settings)
    if idle is not None:
        raise idle
    configure_logging(settings.log.level, settings.log.format)
    # The checks' records are written once the setup passed; a refused setup ends in the
    # one line that names the problem.
    held = HeldLogs()
    listeners = []
    unpolled: dict[str, str] = {}
    try:
        listeners = [] if once else listen(settings.metrics)  # --once serves no metrics
        assembly = assemble(settings)

        async def main() -> None:
            # Database calls run in threads; the default pool (cores + 4) would let writers
            # waiting for SQLite's lock starve every read.
            asyncio.get_running_loop().set_default_executor(
                ThreadPoolExecutor(max_workers=32, thread_name_prefix="oracle-db")
            )
            try:
                await assembly.daemon.start()  # each venue: its setup checked
                held.release()
                if once:
                    unpolled.update(await assembly.daemon.run_once())
                else:
                    await run_forever(assembly.daemon, listeners)
            finally:
                await assembly.close()

        asyncio.run(main())
    except SetupError:
        held.discard()
        raise
    finally:
        held.release()
        for sock in listeners:
            sock.close()
    if unpolled:
        for source, error in sorted(unpolled.items()):
            click.echo(f"error: market_sources[{source}]: poll failed: {error}", err=True)
        sys.exit(EXIT_CHECK_FAILED)


@click.group()
def db() -> None:
    """Manage the database."""


@db.command("upgrade")
@config_option
def db_upgrade(config_path: str | None) -> None:
    """Create `database.url` if needed and apply every pending schema migration."""
    from oracle.config import load_settings
    from oracle.core.urls import redact_url
    from oracle.store.database import upgrade_database

    settings = load_settings(config_path)
    before, after = upgrade_database(settings.database.url, settings.source_chains())
    shown = redact_url(settings.database.url)
    if before is None:
        click.echo(f"database at {shown}: schema created (revision {after})")
    elif before != after:
        click.echo(f"database at {shown}: migrated from revision {before} to {after}")
    else:
        click.echo(f"database at {shown} is up to date (revision {after})")
