"""The `oracle` command line: every command, in one package.

Exit codes: 0 success; 1 a check failed (for example a proof that was altered);
2 bad input or configuration, reported as one line naming the field and the problem (and
the `ORACLE__...` variable, for a value set in the environment).

Each command imports what it needs inside itself, so that `oracle --help`, `oracle
consensus` and `oracle proof verify` start without web3, SQLAlchemy or the LLM clients
(`tests/test_layers.py` holds this; `bench/startup.py` measures it).

    oracle.cli.config      config check
    oracle.cli.consensus   consensus, proof verify
    oracle.cli.daemon      run, db upgrade
    oracle.cli.review      review list | show | decide
    oracle.cli.console     console serve | user add | disable | token create | revoke |
                           audit export | verify
    oracle.cli.backtest    backtest
    oracle.cli.accuracy    accuracy [record]
    oracle.cli.keys        keys new | import | address
    oracle.cli.chain       chain deploy | ask | status
"""

from __future__ import annotations

import sys

import click

from oracle import __version__
from oracle.cli._common import EXIT_BAD_INPUT, fail
from oracle.cli.accuracy import accuracy
from oracle.cli.backtest import backtest
from oracle.cli.chain import chain
from oracle.cli.config import config
from oracle.cli.consensus import consensus, proof
from oracle.cli.console import console
from oracle.cli.daemon import db, run
from oracle.cli.keys import keys
from oracle.cli.review import review
from oracle.errors import OracleError, SetupError

__all__ = ["cli", "main"]


@click.group()
@click.version_option(__version__, prog_name="oracle")
def cli() -> None:
    """AI-agent oracle for prediction markets."""


for command in (
    config,
    consensus,
    proof,
    run,
    db,
    review,
    console,
    backtest,
    accuracy,
    keys,
    chain,
):
    cli.add_command(command)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        fail("aborted")
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_BAD_INPUT)
    except SetupError as error:
        from oracle.config import config_key

        fail(f"{config_key(error.key)}: {error.problem}")
    except OracleError as error:
        # A config error may list several problems, one per line; keep them all.
        fail(str(error).replace("\n", "\nerror: "))
    except click.exceptions.Exit as exit_request:
        sys.exit(exit_request.exit_code)
