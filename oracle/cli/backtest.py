"""`oracle backtest`: recorded answers with known outcomes through the decision policy, and
(`--timing FILE`) real requests through the research schedule."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from oracle.cli._common import config_option, fail

if TYPE_CHECKING:
    from oracle.core.timing import ScheduleParams


def _numbers(option: str, text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        return tuple(float(item) for item in text.split(",") if item.strip())
    except ValueError:
        fail(f"{option}: expected numbers separated by commas, got {text!r}")


@click.command("backtest")
@click.argument("directory", metavar="[DIR]", type=click.Path(file_okay=False), required=False)
@config_option
@click.option(
    "--timing",
    "timing_file",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    default=None,
    help="Instead of DIR: replay the requests in FILE (JSON, gzip or plain) through the "
    "research schedule (daemon.schedule).",
)
@click.option(
    "--mode",
    type=click.Choice(["known", "guess", "both"]),
    default=None,
    help="With --timing: the agents' model (default both).",
)
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
    directory: str | None,
    config_path: str | None,
    output_format: str,
    thresholds: str | None,
    min_confidences: str | None,
    *,
    timing_file: str | None,
    mode: str | None,
    reputation: bool,
    reputation_min_history: int,
    second_opinion: bool = False,
) -> None:
    """Run recorded answers with known outcomes (`final_outcome`) in DIR through the policy,
    and compare the conflict resolution modes on the debate rounds in DIR/debate/.

    With `--timing FILE` instead of DIR: replay real requests with known outcomes through
    the research schedule and the hold rule on a simulated clock (docs/backtest.md)."""
    if timing_file is not None:
        if directory is not None:
            fail("give DIR (recorded answers) or --timing FILE (requests), not both")
        dir_only = {
            "--thresholds": thresholds is not None,
            "--min-confidences": min_confidences is not None,
            "--reputation": reputation,
            "--second-opinion": second_opinion,
        }
        extra = [name for name, given in dir_only.items() if given]
        if extra:
            fail(f"{', '.join(extra)}: only with DIR, not with --timing")
        _timing(timing_file, config_path, mode or "both", output_format)
        return
    if directory is None:
        fail("expected DIR (recorded answers) or --timing FILE (requests)")
    if mode is not None:
        fail("--mode applies to --timing FILE")
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


def _timing(path: str, config_path: str | None, mode: str, output_format: str) -> None:
    from oracle.timing_backtest import (
        MODES,
        load_requests,
        render_timing_text,
        run_timing_backtest,
    )

    report = run_timing_backtest(
        load_requests(Path(path)),
        _schedule_params(config_path),
        MODES if mode == "both" else tuple(m for m in MODES if m == mode),
        source=path,
    )
    if output_format == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        click.echo(render_timing_text(report), nl=False)


def _schedule_params(config_path: str | None) -> ScheduleParams:
    """`daemon.schedule` of the configuration, validated alone (the backtest needs no other
    section); its defaults where the file sets none."""
    from pydantic import ValidationError

    from oracle._pydantic_errors import describe
    from oracle.config_sources import config_key, load_data
    from oracle.core.timing import ScheduleParams
    from oracle.errors import ConfigError

    daemon = load_data(config_path).get("daemon") or {}
    schedule = daemon.get("schedule", {}) if isinstance(daemon, dict) else {}
    try:
        return ScheduleParams.model_validate(schedule)
    except ValidationError as error:
        lines = describe(error, prefix="daemon.schedule", label=config_key)
        raise ConfigError("\n".join(lines)) from None
