"""Settings of the long-lived daemon: `daemon.*`, `metrics.*` and the venues it answers on
(`market_sources[]`). A leaf: only the standard library, pydantic and the core."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from oracle.core.urls import is_http_url

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
        5, ge=1, description="Failed research attempts before a person decides."
    )
    retry_backoff: Seconds = Field(30.0, ge=0, description="First retry delay; doubles each time.")
    retry_backoff_max: Seconds = Field(3600.0, ge=0)
    research_again_after: Seconds = Field(
        3600.0, ge=0, description="Delay before re-researching a market agreed UNDETERMINED."
    )
    max_deferrals: int = Field(
        24,
        ge=1,
        description="Times the agents may agree a market cannot be decided yet before a "
        "person looks at it.",
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


class HttpFieldMap(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = "id"
    question: str = "question"
    criteria: str = "criteria"
    outcomes: str = "outcomes"
    resolve_after: str = "resolve_after"


class HttpSourceConfig(BaseModel):
    """`market_sources[]` entry of kind `http`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=50, pattern=r"^[a-z0-9_-]+$")
    kind: Literal["http"]
    url: str
    result_url: str
    items_path: str = ""
    fields: HttpFieldMap = HttpFieldMap()
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    timeout_seconds: float = Field(10.0, gt=0, allow_inf_nan=False)

    @field_validator("url", "result_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not is_http_url(value):
            # Never echo the URL: a venue's may carry an API key.
            raise ValueError("must be an http:// or https:// URL with a host")
        return value


class ChainSourceConfig(BaseModel):
    """`market_sources[]` entry of kind `chain`: the oracle contract of `chain.deployment_file`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("chain", min_length=1, max_length=50, pattern=r"^[a-z0-9_-]+$")
    kind: Literal["chain"]
    batch: bool = Field(
        True, description="Collect proposals into batches (chain.submitter.batch_max_*)."
    )
    report_payouts: bool = Field(
        True, description="Report payouts for questions asked through the CT adapter."
    )


MarketSourceConfig = Annotated[HttpSourceConfig | ChainSourceConfig, Field(discriminator="kind")]
