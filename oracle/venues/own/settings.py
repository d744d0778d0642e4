"""Settings of a `market_sources[]` entry of kind `chain`: our own oracle contract.
A leaf: only the standard library, pydantic, the core and other settings."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)


class ChainSourceConfig(BaseModel):
    """`market_sources[]` entry of kind `chain`: the oracle contract of `chain.deployment_file`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("chain", min_length=1, max_length=50, pattern=r"^[a-z0-9_-]+$")
    kind: Literal["chain"]
    chain: str | None = Field(
        None,
        description="The entry of `chains` this source is on; optional with one chain.",
    )
    batch: bool = Field(
        True, description="Collect proposals into batches (chain.submitter.batch_max_*)."
    )
    report_payouts: bool = Field(
        True, description="Report payouts for questions asked through the CT adapter."
    )
