"""The `oracle` command line: every command, in one package.

Exit codes: 0 success; 1 a check failed (for example a proof that was altered);
2 bad input or configuration, reported as one line naming the field and the problem (and
the `ORACLE__...` variable, for a value set in the environment). A usage error (an unknown
option, a missing argument, a bad choice) is one such line too, naming the command:
`error: oracle review show: missing argument 'REVIEW_ID'`.

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
from collections.abc import Iterator
from types import TracebackType

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


class _CommandNamingContext(click.Context):
    """Click raises a few usage errors (an option missing its value, a flag given one)
    without the context of their command; attaching it lets the error line name it."""

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        if isinstance(exc_value, click.UsageError) and exc_value.ctx is None:
            exc_value.ctx = self
        return super().__exit__(exc_type, exc_value, tb)


def _every_command(command: click.Command) -> Iterator[click.Command]:
    yield command
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            yield from _every_command(subcommand)


# Once, here, rather than a `cls=` on each command of each module.
for command in _every_command(cli):
    command.context_class = _CommandNamingContext

# A group run bare shows its help: click 8.2 and later raise this usage error for it.
_SHOW_GROUP_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def usage_error_line(error: click.UsageError) -> str:
    """Click's usage error as this command line's other errors read: the command, then the
    problem as a clause (`oracle review show: missing argument 'REVIEW_ID'`), one line."""
    command = error.ctx.command_path if error.ctx is not None else "oracle"
    problem = " ".join(error.format_message().split()).removesuffix(".")
    if problem[:2].istitle():  # "No such option" -> "no such option"; not an acronym
        problem = problem[0].lower() + problem[1:]
    return f"{command}: {problem}"


def main() -> None:
    try:
        cli.main(prog_name="oracle", standalone_mode=False)
    except click.exceptions.Abort:
        fail("aborted")
    except click.UsageError as error:
        if isinstance(error, _SHOW_GROUP_HELP):
            error.show()
            sys.exit(EXIT_BAD_INPUT)
        fail(usage_error_line(error))
    except click.ClickException as error:
        fail(" ".join(error.format_message().split()))
    except SetupError as error:
        from oracle.config import config_key

        fail(f"{config_key(error.key)}: {error.problem}")
    except OracleError as error:
        # A config error may list several problems, one per line; keep them all.
        fail(str(error).replace("\n", "\nerror: "))
    except click.exceptions.Exit as exit_request:
        sys.exit(exit_request.exit_code)
