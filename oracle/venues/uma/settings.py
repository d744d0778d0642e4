"""Settings of the `market_sources[]` entries of kinds `uma` (UMA's OOv2, managed or not)
and `uma_v3` (OOv3 assertions). A leaf: only the standard library, pydantic, the core
and other settings."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from oracle.core.outcomes import InvalidPolicy
from oracle.daemon.settings import ADDRESS_PATTERN, Amount, Seconds, checked_address

_IDENTIFIER = re.compile(r"^[\x20-\x7e]{1,32}$")
_OUTCOME = re.compile(r"^[^\x00-\x1f\x7f]{1,100}$")


class UmaRiskSettings(BaseModel):
    """`market_sources[].risk` of kind `uma`: what a proposal may put at stake. Amounts are
    in units of the request's bond currency (100.5 = 100.5 USDC), not its smallest unit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_bond_outstanding: Amount | None = Field(
        None,
        gt=0,
        description="Cap on bond + final fee posted and not yet returned, in this currency, "
        "of everything the chain's signer has out (every venue on the chain); null: no cap.",
    )
    max_bond_per_request: Amount | None = Field(
        None, gt=0, description="Cap on one request's bond + final fee; null: no cap."
    )
    min_reward: Amount = Field(
        Decimal(0), ge=0, description="Requests paying a smaller reward are not proposed on."
    )
    native_token_price: Amount | None = Field(
        None,
        gt=0,
        description="What one native token (ETH, POL) is worth in the bond currency: with "
        "it, the reward must cover the proposal's gas cost; null: gas is not weighed.",
    )
    proposal_gas: int = Field(
        150_000, gt=0, description="Gas a proposal is taken to use when weighing its cost."
    )
    min_bond_balance: Amount = Field(
        Decimal(0),
        ge=0,
        description="Alert (OracleBondBalanceLow) when the signer holds less of a bond "
        "currency than this; 0: no alert.",
    )
    bond_allowance: Amount | None = Field(
        None,
        gt=0,
        description="A standing allowance of the bond currency the oracle may pull, set when a "
        "bond needs more than it allows; null: each bond approves exactly what it needs, "
        "when it needs it. Never unlimited.",
    )


class BulletinBoardSettings(BaseModel):
    """`market_sources[].bulletin_board` of kind `uma`: where question creators post
    clarifications (Polymarket: the UMA CTF adapter that asked the question), read when a
    request is discovered; only the updates of the question's initializer count, and they
    reach the agents bounded by these limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str = Field(description="The bulletin board contract (IBulletinBoard).")
    max_updates: int = Field(
        10, ge=1, le=100, description="The latest this many updates are shown; older ones not."
    )
    max_update_chars: int = Field(
        2000, ge=1, le=20_000, description="Each update is cut to this many characters."
    )
    max_total_chars: int = Field(
        8000, ge=1, le=100_000, description="All updates shown together, at most."
    )
    max_response_bytes: int = Field(
        1_048_576,
        ge=1024,
        le=16_777_216,
        description="A board answer larger than this is not read (the question says so).",
    )

    @field_validator("address")
    @classmethod
    def _board_address(cls, value: str) -> str:
        return checked_address(value)

    @model_validator(mode="after")
    def _limits(self) -> BulletinBoardSettings:
        if self.max_update_chars > self.max_total_chars:
            raise ValueError("max_update_chars must not exceed max_total_chars")
        return self


class UmaSourceConfig(BaseModel):
    """`market_sources[]` entry of kind `uma`: price requests on UMA's Optimistic Oracle V2,
    answered by proposing (signed by `chain.signer`, on the nodes of `chain.rpc`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("uma", min_length=1, max_length=50, pattern=r"^[a-z0-9_-]+$")
    kind: Literal["uma"]
    chain: str | None = Field(
        None,
        description="The entry of `chains` this source is on; optional with one chain.",
    )
    oracle_address: str | None = Field(
        None, description="The OptimisticOracleV2; or deployment_file naming it."
    )
    deployment_file: Path | None = Field(
        None, description="A deployment file with a uma/OptimisticOracleV2 address."
    )
    requesters: tuple[str, ...] | None = Field(
        None, description="Only requests asked by these contracts; null: anyone's."
    )
    identifiers: tuple[str, ...] = ("YES_OR_NO_QUERY",)
    start_block: int | None = Field(
        None, ge=0, description="Scan from this block; null: the deployment's block, else 0."
    )
    allow_too_early: bool = Field(
        False, description="Propose UMA's too-early price when the verdict is TOO_EARLY."
    )
    invalid: InvalidPolicy = Field(
        "propose",
        description="The agents' agreed INVALID (a canceled game: UMA's 50-50 price, where "
        "the question offers it): propose (as Polymarket's proposers do: the 50-50 price, "
        "0.5e18 for YES_OR_NO_QUERY) or review (a person first).",
    )
    settle: bool = Field(True, description="Settle requests once their liveness is over.")
    dispute: Literal["never", "after_review"] = Field(
        "never",
        description="Another proposer's price our consensus contradicts: never (a review "
        "item shows it), or after_review (a person confirming that item makes the daemon "
        "dispute it, within the risk caps).",
    )
    risk: UmaRiskSettings = UmaRiskSettings()
    bulletin_board: BulletinBoardSettings | None = Field(
        None,
        description="Clarifications by each question's creator, appended to the question; "
        "null: none are read.",
    )
    managed: bool | None = Field(
        None,
        description="The oracle is UMA's ManagedOptimisticOracleV2 (UMIP-189): its proposer "
        "whitelist is read, its request manager's bond weighed, settling left to its "
        "resolver; null: detected at start; true or false: the start fails unless the "
        "contract is (or is not) managed.",
    )

    @field_validator("oracle_address")
    @classmethod
    def _oracle_address(cls, value: str | None) -> str | None:
        return None if value is None else checked_address(value)

    @field_validator("requesters")
    @classmethod
    def _requesters(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one requester, or leave it out for anyone's")
        for index, address in enumerate(value):
            if not ADDRESS_PATTERN.match(address):
                raise ValueError(f"[{index}] must be a 0x-prefixed address of 40 hex digits")
        return value

    @field_validator("identifiers")
    @classmethod
    def _identifiers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("name at least one price identifier")
        for index, name in enumerate(value):
            if not _IDENTIFIER.match(name):
                raise ValueError(f"[{index}] must be 1 to 32 printable ASCII characters")
        return value

    @model_validator(mode="after")
    def _one_oracle(self) -> UmaSourceConfig:
        if (self.oracle_address is None) == (self.deployment_file is None):
            raise ValueError("set exactly one of oracle_address and deployment_file")
        return self


class ClaimMarketConfig(BaseModel):
    """`market_sources[].markets[]` of kind `uma_v3`: a claim-style market the daemon
    researches and, on a verdict to submit, asserts on the OptimisticOracleV3."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(
        min_length=1,
        max_length=100,
        pattern=r"^[a-z0-9][a-z0-9.-]*$",
        description="The market's id within the venue (market <source>:claim:<id>).",
    )
    question: str = Field(min_length=1, max_length=2000)
    criteria: str = Field("", max_length=5000, description="How the answer is decided.")
    outcomes: tuple[str, ...] = ("YES", "NO")
    resolve_after: AwareDatetime = Field(
        description="When it can be researched (the chain's clock), with its time zone."
    )

    @field_validator("outcomes")
    @classmethod
    def _outcomes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(value) < 2:
            raise ValueError("name at least two outcomes")
        if len(set(value)) != len(value):
            raise ValueError("outcomes must differ")
        for index, outcome in enumerate(value):
            if not _OUTCOME.match(outcome):
                raise ValueError(f"[{index}] must be 1 to 100 characters, no control characters")
        return value


class UmaV3BondSettings(BaseModel):
    """`market_sources[].bond` of kind `uma_v3`: the terms of our assertions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str | None = Field(
        None, description="The bond's ERC-20 (whitelisted by UMA); null: the oracle's default."
    )
    amount: Amount | None = Field(
        None,
        gt=0,
        description="Bond per assertion in units of the currency; null: the oracle's minimum "
        "bond for it (getMinimumBond).",
    )
    liveness: int | None = Field(
        None,
        gt=0,
        lt=2**64,
        description="Seconds an assertion can be disputed; null: the oracle's default.",
    )

    @field_validator("currency")
    @classmethod
    def _currency(cls, value: str | None) -> str | None:
        return None if value is None else checked_address(value)


class UmaV3RiskSettings(BaseModel):
    """`market_sources[].risk` of kind `uma_v3`, in units of the bond currency."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_bond_outstanding: Amount | None = Field(
        None,
        gt=0,
        description="Cap on the bonds of our assertions and disputes not yet settled; "
        "null: no cap.",
    )
    max_bond_per_assertion: Amount | None = Field(
        None, gt=0, description="Cap on one assertion's (or dispute's) bond; null: no cap."
    )
    min_bond_balance: Amount = Field(
        Decimal(0),
        ge=0,
        description="Alert (OracleBondBalanceLow) when the signer holds less of the bond "
        "currency than this; 0: no alert.",
    )


class SecondOpinionSettings(BaseModel):
    """`market_sources[].second_opinion` of kind `uma_v3`: whose assertions the daemon
    researches and compares with its own verdict (an assertion matching any filter)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    asserters: tuple[str, ...] | None = Field(None, description="Assertions by these accounts.")
    escalation_managers: tuple[str, ...] | None = Field(
        None, description="Assertions naming one of these escalation managers."
    )
    claim_prefixes: tuple[str, ...] | None = Field(
        None, description="Assertions whose claim (UTF-8) starts with one of these."
    )

    @field_validator("asserters", "escalation_managers")
    @classmethod
    def _addresses(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one address, or leave it out")
        for index, address in enumerate(value):
            if not ADDRESS_PATTERN.match(address):
                raise ValueError(f"[{index}] must be a 0x-prefixed address of 40 hex digits")
        return value

    @field_validator("claim_prefixes")
    @classmethod
    def _prefixes(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one prefix, or leave it out")
        for index, prefix in enumerate(value):
            if not 1 <= len(prefix) <= 200:
                raise ValueError(f"[{index}] must be 1 to 200 characters")
        return value

    @model_validator(mode="after")
    def _some_filter(self) -> SecondOpinionSettings:
        if (self.asserters, self.escalation_managers, self.claim_prefixes) == (None,) * 3:
            # Every assertion on a busy oracle would be researched: name whose to watch.
            raise ValueError("name asserters, escalation_managers or claim_prefixes")
        return self


class UmaV3SourceConfig(BaseModel):
    """`market_sources[]` entry of kind `uma_v3`: claim-style markets asserted on UMA's
    Optimistic Oracle V3, and a second opinion on others' assertions (signed by
    `chain.signer`, on the nodes of `chain.rpc`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # No underscore: the name is part of the market id the claim text names.
    name: str = Field("uma-v3", min_length=1, max_length=50, pattern=r"^[a-z0-9-]+$")
    kind: Literal["uma_v3"]
    chain: str | None = Field(
        None,
        description="The entry of `chains` this source is on; optional with one chain.",
    )
    oracle_address: str | None = Field(
        None, description="The OptimisticOracleV3; or deployment_file naming it."
    )
    deployment_file: Path | None = Field(
        None, description="A deployment file with a uma/OptimisticOracleV3 address."
    )
    start_block: int | None = Field(
        None, ge=0, description="Scan from this block; null: the deployment's block, else 0."
    )
    markets: tuple[ClaimMarketConfig, ...] = Field(
        (), description="Claim-style markets to research and assert."
    )
    second_opinion: SecondOpinionSettings | None = Field(
        None, description="Others' assertions to research and compare; null: none."
    )
    bond: UmaV3BondSettings = UmaV3BondSettings()
    risk: UmaV3RiskSettings = UmaV3RiskSettings()
    batch_window: Seconds = Field(
        2.0,
        ge=0,
        le=60,
        allow_inf_nan=False,
        description="Seconds a verdict to assert waits for others, to assert them together "
        "in one multicall (less gas per claim); 0: one transaction per assertion.",
    )
    settle: bool = Field(True, description="Settle our assertions once they can be.")
    dispute: Literal["never", "after_review"] = Field(
        "never",
        description="Another's assertion our consensus contradicts: never (a review item "
        "shows it), or after_review (a person confirming that item makes the daemon dispute "
        "it, posting the assertion's bond, within the risk caps).",
    )

    @field_validator("oracle_address")
    @classmethod
    def _oracle_address(cls, value: str | None) -> str | None:
        return None if value is None else checked_address(value)

    @field_validator("markets")
    @classmethod
    def _markets(cls, value: tuple[ClaimMarketConfig, ...]) -> tuple[ClaimMarketConfig, ...]:
        seen: set[str] = set()
        for index, market in enumerate(value):
            if market.id in seen:
                raise ValueError(f"[{index}].id: {market.id} is used twice")
            seen.add(market.id)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> UmaV3SourceConfig:
        if (self.oracle_address is None) == (self.deployment_file is None):
            raise ValueError("set exactly one of oracle_address and deployment_file")
        if not self.markets and self.second_opinion is None:
            raise ValueError("nothing to do: name markets, a second_opinion, or both")
        if self.dispute == "after_review" and self.second_opinion is None:
            raise ValueError(
                "dispute: after_review disputes others' assertions: it needs a second_opinion "
                "naming which"
            )
        cap, amount = self.risk.max_bond_per_assertion, self.bond.amount
        if cap is not None and amount is not None and amount > cap:
            raise ValueError(
                f"bond.amount {amount} is above risk.max_bond_per_assertion {cap}: every "
                "assertion would be refused"
            )
        return self
