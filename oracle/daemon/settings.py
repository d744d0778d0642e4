"""Settings of the long-lived daemon (`daemon.*`, `metrics.*`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

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
