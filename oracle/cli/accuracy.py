"""`oracle accuracy`: the live accuracy ledger, from the daemon's database.

`oracle accuracy [--since WHEN] [--venue NAME] [--chain NAME] [--json]` scores every
agent, model family and the decision policy on the markets whose outcome became final
(`oracle.core.scoring` says how), then each venue's signer's record as UMA's
proposer-whitelist guideline counts it over the last six months whatever `--since` says
(`oracle.core.track_record`: its proposals, their accuracy, whether the guideline is met,
and the second opinions that would have been proposals); `oracle accuracy record MARKET
--outcome X --reason TEXT` records the outcome a venue settled on when the daemon cannot
read it there (a person's decision)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import click

from oracle.cli._common import config_option, fail

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([hd])$")


def parse_since(text: str, now: float) -> float:
    """Epoch seconds from `7d` / `24h` (back from `now`), or an ISO 8601 date or time
    (UTC unless it names its offset)."""
    duration = _DURATION.match(text.strip())
    if duration:
        amount, unit = float(duration.group(1)), duration.group(2)
        return now - amount * (86_400 if unit == "d" else 3_600)
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        fail(
            "--since: expected a date (2026-11-01), a time (2026-11-01T12:00Z) or 7d/24h, "
            f"got {text!r}"
        )
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@click.group(invoke_without_command=True)
@config_option
@click.option(
    "--since", default=None, help="Markets final since: 2026-11-01, 2026-11-01T12:00Z, 7d, 24h."
)
@click.option("--venue", default=None, help="Only this venue's markets (its market_sources name).")
@click.option("--chain", default=None, help="Only markets on this chain (its name in chains).")
@click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
@click.pass_context
def accuracy(  # noqa: PLR0917 (click passes every option by name)
    context: click.Context,
    config_path: str | None,
    since: str | None,
    venue: str | None,
    chain: str | None,
    as_json: bool,
) -> None:
    """How often the agents and the policy were right, on markets now final."""
    context.obj = config_path
    if context.invoked_subcommand is not None:
        return
    import json

    from oracle.cli.review import _review_store
    from oracle.config import load_settings
    from oracle.core import track_record
    from oracle.core.scoring import accuracy_report, render_text

    now = time.time()
    start = parse_since(since, now) if since is not None else None
    # UMA's proposer-whitelist guideline counts OOv2 venues (kind uma, managed or not).
    oov2 = [s.name for s in load_settings(config_path).market_sources if s.kind == "uma"]
    window = track_record.window_start(now)
    with _review_store(config_path) as store:
        markets = store.scored_markets(since=start, venue=venue, chain=chain)
        disputes = store.disagreements(since=start, venue=venue, chain=chain)
        answers = store.track_record(since=window, venue=venue)
    report = accuracy_report(markets, disputes)
    records = track_record.records(answers, now=now, guideline_venues=oov2)
    if as_json:
        whitelist = {
            "from": window,
            "to": now,
            "min_proposals": track_record.MIN_PROPOSALS,
            "min_accuracy": float(track_record.MIN_ACCURACY),
            "signers": [r.to_json() for r in records],
        }
        click.echo(
            json.dumps(
                {
                    "since": start,
                    "venue": venue,
                    "chain": chain,
                    **report.to_json(),
                    "whitelist": whitelist,
                },
                indent=2,
            )
        )
    else:
        click.echo(render_text(report), nl=False)
        click.echo(track_record.render_text(records, start=window, now=now), nl=False)


@accuracy.command("record")
@click.argument("market_id")
@click.option("--outcome", required=True, help="One of the market's outcomes, or INVALID.")
@click.option("--reason", required=True, help="Where the outcome comes from; recorded with it.")
@click.option("--by", "recorded_by", default=None, help="Who records it (default: the OS user).")
@config_option
@click.pass_obj
def accuracy_record(
    group_config: str | None,
    *,
    market_id: str,
    outcome: str,
    reason: str,
    recorded_by: str | None,
    config_path: str | None,
) -> None:
    """Record (or correct) the outcome MARKET became final with, as a person's decision."""
    import getpass

    from oracle.cli.review import _review_store

    if not reason.strip():
        fail("--reason: must not be empty")
    with _review_store(config_path or group_config) as store:
        store.record_final_outcome(
            market_id, outcome, recorded_by=recorded_by or getpass.getuser(), reason=reason.strip()
        )
    click.echo(f"{market_id}: final outcome {outcome} recorded")
