"""Settings of the long-lived daemon: `daemon.*`, `metrics.*`, and the value types every
venue's settings share (`oracle.venues.<kind>.settings`: addresses, amounts, seconds). A
leaf: only the standard library, pydantic and the core."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from oracle.core.timing import ScheduleParams

Seconds = float


class DaemonSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    replica_id: str | None = Field(
        None, description="Name of this replica in leases and the audit log; default host-pid."
    )
    poll_interval: Seconds = Field(15.0, gt=0, description="Seconds between market-source polls.")
    dispatch_interval: Seconds = Field(1.0, gt=0, description="Seconds between dispatch rounds.")
    watch_interval: Seconds = Field(15.0, gt=0, description="Seconds between finality checks.")
    housekeeping_interval: Seconds = Field(60.0, gt=0)
    max_concurrent_markets: int = Field(64, ge=1, description="Markets worked on at once.")
    lease_margin: Seconds = Field(
        120.0, gt=0, description="Lease length beyond consensus.agent_timeout."
    )
    max_attempts: int = Field(
        5,
        ge=1,
        description="Failed research attempts, and failed delivery attempts in a row, "
        "before a person decides.",
    )
    retry_backoff: Seconds = Field(
        30.0, ge=0, description="First retry delay (research or delivery); doubles each time."
    )
    retry_backoff_max: Seconds = Field(3600.0, ge=0)
    schedule: ScheduleParams = Field(
        default_factory=ScheduleParams,
        description="When a market is researched: after its window, early checks, back-off.",
    )
    window_model: str | None = Field(
        None,
        min_length=1,
        description="The `llm` agent (of `agents`) whose model reads the answer window of a "
        "new market whose words the deterministic reader finds no time in: one request per "
        "such market. None: those markets take the default window.",
    )
    proofs_dir: Path = Path("data/proofs")
    drain_timeout: Seconds = Field(
        60.0, ge=0, description="On SIGTERM, seconds to let in-flight markets finish."
    )


class MetricsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(9464, ge=0, le=65535)
    # Exported as oracle_llm_budget_usd_per_day, so the spend alert and the config agree;
    # 0 turns the alert off.
    llm_budget_usd_per_day: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    # The accuracy ledger's bounds, exported as oracle_auto_submitted_accuracy_min and
    # oracle_agent_brier_max for the alerts on the rolling 7- and 30-day figures; 0 turns
    # the alert off.
    auto_submitted_accuracy_min: float = Field(
        0.9,
        ge=0.0,
        le=1.0,
        description="Below this share of right auto-submitted answers, an alert fires.",
    )
    agent_brier_max: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="Above this Brier score of an agent (0.25: a coin toss), an alert fires.",
    )
    accuracy_min_answers: int = Field(
        10,
        ge=1,
        description="Answers a rolling figure must rest on before it is exported.",
    )
    accuracy_refresh_interval: float = Field(
        600.0,
        ge=0.0,
        allow_inf_nan=False,
        description="Seconds between refreshes of the rolling accuracy figures (housekeeping "
        "reads 30 days of final outcomes for them; 0: at every housekeeping).",
    )


ADDRESS_PATTERN = re.compile(r"^0x[0-9a-fA-F]{40}$")
Amount = Annotated[Decimal, Field(allow_inf_nan=False)]


def checked_address(value: str) -> str:
    """`value` when it is a 0x-prefixed address of 40 hex digits (a settings validator)."""
    if not ADDRESS_PATTERN.match(value):
        raise ValueError("must be a 0x-prefixed address of 40 hex digits")
    return value


class SourceSettings(Protocol):
    """What every `market_sources[]` entry has, whatever its kind (`oracle.venues`)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...


class ChainSourceSettings(SourceSettings, Protocol):
    """A `market_sources[]` entry of a kind that lives on a chain: it names its entry of
    `chains` (None: the only one)."""

    @property
    def chain(self) -> str | None: ...
