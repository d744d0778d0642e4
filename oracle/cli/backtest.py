"""`oracle backtest`: recorded answers with known outcomes through the decision policy."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click

from oracle.cli._common import config_option, fail


def _numbers(option: str, text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        return tuple(float(item) for item in text.split(",") if item.strip())
    except ValueError:
        fail(f"{option}: expected numbers separated by commas, got {text!r}")


@click.command("backtest")
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
@click.option(
    "--reputation",
    is_flag=True,
    help="Also with reputation weights (oracle/core/reputation.py), walk-forward, to compare.",
)
@click.option(
    "--reputation-min-history",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Scored answers an agent needs before its reputation counts.",
)
@click.option(
    "--second-opinion",
    is_flag=True,
    help="Also the false-alarm and catch rates of a second opinion on other proposers.",
)
def backtest(
    directory: str,
    config_path: str | None,
    output_format: str,
    thresholds: str | None,
    min_confidences: str | None,
    *,
    reputation: bool,
    reputation_min_history: int,
    second_opinion: bool = False,
) -> None:
    """Run recorded answers with known outcomes (`final_outcome`) in DIR through the policy,
    and compare the conflict resolution modes on the debate rounds in DIR/debate/."""
    from pydantic import ValidationError

    from oracle._pydantic_errors import describe
    from oracle.backtest import (
        DEFAULT_MIN_CONFIDENCES,
        DEFAULT_THRESHOLDS,
        load_recordings,
        render_second_opinion,
        render_text,
        run_backtest,
        run_second_opinion,
    )
    from oracle.config import load_settings
    from oracle.core.reputation import ReputationParams
    from oracle.daemon.conflict_backtest import compare_conflict_modes

    settings = load_settings(config_path)
    recordings = load_recordings(Path(directory))
    try:
        report = run_backtest(
            recordings,
            settings.consensus,
            settings.sources,
            _numbers("--thresholds", thresholds) or DEFAULT_THRESHOLDS,
            _numbers("--min-confidences", min_confidences) or DEFAULT_MIN_CONFIDENCES,
            reputation=ReputationParams(min_history=reputation_min_history) if reputation else None,
        )
        opinion = (
            run_second_opinion(
                recordings,
                settings.consensus,
                settings.sources,
                _numbers("--thresholds", thresholds) or DEFAULT_THRESHOLDS,
                _numbers("--min-confidences", min_confidences) or DEFAULT_MIN_CONFIDENCES,
            )
            if second_opinion
            else None
        )
    except ValidationError as error:
        fail("sweep: " + "; ".join(describe(error, "consensus")))
    report = replace(
        report,
        conflict_modes=compare_conflict_modes(
            recordings, Path(directory), settings.consensus, settings.sources
        ),
    )
    if output_format == "json":
        document = report.to_json()
        if opinion is not None:
            document["second_opinion"] = opinion.to_json()
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(render_text(report), nl=False)
        if opinion is not None:
            click.echo("\n" + render_second_opinion(opinion), nl=False)
