"""`oracle review ...`: the queue of markets a person must decide.

These commands use the daemon's database and never create or migrate it: that is
`oracle db upgrade`'s job, and the daemon's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from oracle.cli._common import config_option, fail
from oracle.errors import SetupError

if TYPE_CHECKING:
    from oracle.store.repository import Store


@click.group()
def review() -> None:
    """The queue of markets a person must decide."""


@contextmanager
def _review_store(config_path: str | None) -> Iterator[Store]:
    """The daemon's database, which must exist at the current schema: a person reviews
    what the daemon queued, so a database made here would only hide a wrong --config.
    A database failure on the way (it went away, it refuses writes) names `database.url`."""
    from sqlalchemy.exc import DBAPIError

    from oracle.config import load_settings
    from oracle.core.urls import redact_url
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
    from oracle.core.proof import render_markdown

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
    import getpass

    if not reason.strip():
        fail("--reason: must not be empty")
    with _review_store(config_path) as store:
        market = store.decide_review(
            review_id, outcome, reason.strip(), decided_by or getpass.getuser()
        )
    click.echo(f"review {review_id}: {market.id} decided {outcome}; the daemon will submit it")
