"""The `oracle` command line.

Exit codes: 0 success; 1 a check failed (for example a proof that was altered);
2 bad input or configuration, reported as one line naming the field and the problem (and
the `ORACLE__...` variable, for a value set in the environment).

Commands that use the daemon's database (`review ...`) never create or migrate it: that
is `oracle db upgrade`'s job, and the daemon's.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
import yaml

from oracle import __version__, safe_json
from oracle._cli_options import config_option
from oracle.chain import cli as chain_cli
from oracle.config import config_key, effective_config, load_settings
from oracle.core import build_proof, evaluate, parse_consensus_input, render_markdown, verify_proof
from oracle.core.urls import redact_url
from oracle.errors import InputError, JsonError, OracleError, ProofError, SetupError

if TYPE_CHECKING:
    from oracle.store.repository import Store

EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _read_json(path: str) -> Any:
    name = "stdin" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail(f"{name}: no such file")
    except (OSError, UnicodeDecodeError) as error:
        _fail(f"{name}: cannot be read ({getattr(error, 'strerror', None) or error})")
    try:
        return safe_json.loads(text)
    except JsonError as error:
        _fail(f"{name}: {error}")


@click.group()
@click.version_option(__version__, prog_name="oracle")
def cli() -> None:
    """AI-agent oracle for prediction markets."""


@cli.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("check")
@config_option
def config_check(config_path: str | None) -> None:
    """Validate the configuration and print the effective values, secrets masked."""
    from oracle.agents.diversity import config_warnings

    settings = load_settings(config_path)
    click.echo(yaml.safe_dump(effective_config(settings), sort_keys=False), nl=False)
    for warning in config_warnings(settings.agents, settings.consensus):
        click.echo(f"warning: {warning}", err=True)


@cli.command("consensus")
@click.argument("input_file", metavar="FILE")
@config_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["json", "markdown"]),
    default="json",
    show_default=True,
)
@click.option(
    "--proof",
    "proof_out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the proof: JSON to this path, Markdown beside it with a .md suffix.",
)
def consensus(
    input_file: str, config_path: str | None, output_format: str, proof_out: str | None
) -> None:
    """Compute the consensus of agent results in FILE (JSON; `-` for stdin)."""
    settings = load_settings(config_path)
    try:
        consensus_input = parse_consensus_input(_read_json(input_file))
    except InputError as error:
        _fail(f"{'stdin' if input_file == '-' else input_file}: {error}")
    result = evaluate(consensus_input, settings.consensus, settings.sources)
    proof = build_proof(consensus_input, result, settings.consensus, settings.sources)
    if proof_out is not None:
        target = Path(proof_out)
        for path, text in (
            (target, json.dumps(proof, indent=2, ensure_ascii=False) + "\n"),
            (target.with_suffix(".md"), render_markdown(proof)),
        ):
            try:
                path.write_text(text, "utf-8")
            except OSError as error:
                _fail(f"--proof: {path}: cannot be written ({error.strerror})")
    if output_format == "markdown":
        click.echo(render_markdown(proof), nl=False)
    else:
        output = {**result.model_dump(mode="json"), "proof": proof}
        click.echo(json.dumps(output, indent=2, ensure_ascii=False))


@cli.group()
def proof() -> None:
    """Work with consensus proofs."""


@proof.command("verify")
@click.argument("proof_file", metavar="FILE")
def proof_verify(proof_file: str) -> None:
    """Recompute FILE's checksum: exit 0 when it matches, 1 when the proof was altered."""
    name = "stdin" if proof_file == "-" else proof_file
    document = _read_json(proof_file)
    try:
        matches, recomputed = verify_proof(document)
    except ProofError as error:
        _fail(f"{name}: {error}")
    if matches:
        click.echo(f"ok: checksum {recomputed} matches")
        return
    click.echo(
        f"ALTERED: {name}: the content's checksum is {recomputed}, not the recorded one",
        err=True,
    )
    sys.exit(EXIT_CHECK_FAILED)


@cli.command("run")
@config_option
@click.option("--once", is_flag=True, help="Make one full pass and exit (for cron or serverless).")
def run(config_path: str | None, once: bool) -> None:
    """Run the oracle daemon: poll, research, decide, submit or queue for review.

    The whole setup is checked first (oracle/app.py); a problem exits 2 with one
    line naming the setting, before any job runs.
    """
    from oracle.app import assemble
    from oracle.daemon.runner import listen, run_forever
    from oracle.log import HeldLogs, configure_logging

    settings = load_settings(config_path)
    configure_logging(settings.log.level, settings.log.format)
    # The checks' records are written once the setup passed; a refused setup ends in the
    # one line that names the problem.
    held = HeldLogs()
    listeners = []
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
                    await assembly.daemon.run_once()
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


@cli.group()
def db() -> None:
    """Manage the database."""


@db.command("upgrade")
@config_option
def db_upgrade(config_path: str | None) -> None:
    """Create `database.url` if needed and apply every pending schema migration."""
    from oracle.store.database import open_database

    settings = load_settings(config_path)
    open_database(settings.database.url, create=True).dispose()
    click.echo(f"database at {redact_url(settings.database.url)} is up to date")


@cli.group()
def review() -> None:
    """The queue of markets a person must decide."""


@contextmanager
def _review_store(config_path: str | None) -> Iterator[Store]:
    """The daemon's database, which must exist at the current schema: a person reviews
    what the daemon queued, so a database made here would only hide a wrong --config.
    A database failure on the way (it went away, it refuses writes) names `database.url`."""
    from sqlalchemy.exc import DBAPIError

    from oracle.store.database import KEY, describe, open_database
    from oracle.store.repository import Store

    url = load_settings(config_path).database.url
    store = Store(open_database(url, create=False))
    try:
        yield store
    except DBAPIError as error:
        raise SetupError(KEY, f"{redact_url(url)}: {describe(error, url)}") from None
    finally:
        store.engine.dispose()


@review.command("list")
@config_option
@click.option("--all", "show_all", is_flag=True, help="Include decided items.")
def review_list(config_path: str | None, show_all: bool) -> None:
    """Review items, oldest first."""
    with _review_store(config_path) as store:
        items = store.reviews(None if show_all else "open")
        markets = {item.market_id: store.get_market(item.market_id) for item in items}
    if not items:
        click.echo("no review items" if show_all else "no open review items")
    for item in items:
        market = markets[item.market_id]
        decided = f" -> {item.decided_outcome} by {item.decided_by}" if item.decided_outcome else ""
        click.echo(f"{item.id:>5}  {item.status:<8} {market.id}  {market.question}{decided}")
        for reason in item.reasons:
            click.echo(f"       - {reason}")


@review.command("show")
@click.argument("review_id", type=int)
@config_option
def review_show(review_id: int, config_path: str | None) -> None:
    """One review item: the market, the reasons, and the proof's report."""
    with _review_store(config_path) as store:
        item = store.review(review_id)
        market = store.get_market(item.market_id)
        consensus = store.consensus(item.consensus_id) if item.consensus_id is not None else None
    click.echo(f"review {item.id} ({item.status}) for market {market.id}")
    click.echo(f"question: {market.question}")
    click.echo(f"outcomes: {', '.join(market.outcomes)} (or INVALID)")
    click.echo("reasons:")
    for reason in item.reasons:
        click.echo(f"  - {reason}")
    if item.decided_outcome:
        click.echo(f"decided: {item.decided_outcome} by {item.decided_by}: {item.decided_reason}")
    if consensus is not None:
        click.echo("")
        click.echo(render_markdown(consensus.proof), nl=False)


@review.command("decide")
@click.argument("review_id", type=int)
@click.option("--outcome", required=True, help="One of the market's outcomes, or INVALID.")
@click.option("--reason", required=True, help="Why; recorded with the decision.")
@click.option("--by", "decided_by", default=None, help="Who decides (default: the OS user).")
@config_option
def review_decide(
    review_id: int, outcome: str, reason: str, decided_by: str | None, config_path: str | None
) -> None:
    """Decide a review item; the daemon then delivers the answer."""
    if not reason.strip():
        _fail("--reason: must not be empty")
    with _review_store(config_path) as store:
        market = store.decide_review(
            review_id, outcome, reason.strip(), decided_by or getpass.getuser()
        )
    click.echo(f"review {review_id}: {market.id} decided {outcome}; the daemon will submit it")


def _numbers(option: str, text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        return tuple(float(item) for item in text.split(",") if item.strip())
    except ValueError:
        _fail(f"{option}: expected numbers separated by commas, got {text!r}")


@cli.command("backtest")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False))
@config_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
@click.option("--thresholds", default=None, help="Sweep of consensus.threshold, e.g. 0.67,0.8,1.")
@click.option(
    "--min-confidences", default=None, help="Sweep of consensus.min_confidence, e.g. 0.5,0.8."
)
def backtest(
    directory: str,
    config_path: str | None,
    output_format: str,
    thresholds: str | None,
    min_confidences: str | None,
) -> None:
    """Run recorded answers with known outcomes (`final_outcome`) in DIR through the policy."""
    from pydantic import ValidationError

    from oracle._pydantic_errors import describe
    from oracle.backtest import (
        DEFAULT_MIN_CONFIDENCES,
        DEFAULT_THRESHOLDS,
        load_recordings,
        render_text,
        run_backtest,
    )

    settings = load_settings(config_path)
    recordings = load_recordings(Path(directory))
    try:
        report = run_backtest(
            recordings,
            settings.consensus,
            settings.sources,
            _numbers("--thresholds", thresholds) or DEFAULT_THRESHOLDS,
            _numbers("--min-confidences", min_confidences) or DEFAULT_MIN_CONFIDENCES,
        )
    except ValidationError as error:
        _fail("sweep: " + "; ".join(describe(error, "consensus")))
    if output_format == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        click.echo(render_text(report), nl=False)


cli.add_command(chain_cli.keys)
cli.add_command(chain_cli.chain)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        _fail("aborted")
    except click.ClickException as error:
        error.show()
        sys.exit(EXIT_BAD_INPUT)
    except SetupError as error:
        _fail(f"{config_key(error.key)}: {error.problem}")
    except OracleError as error:
        # A config error may list several problems, one per line; keep them all.
        _fail(str(error).replace("\n", "\nerror: "))
    except click.exceptions.Exit as exit_request:
        sys.exit(exit_request.exit_code)
