"""Settings of the long-lived daemon: `daemon.*`, `metrics.*` and the venues it answers on
(`market_sources[]`). A leaf: only the standard library, pydantic and the core."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from oracle.core.outcomes import InvalidPolicy
from oracle.core.timing import ScheduleParams
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


_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_IDENTIFIER = re.compile(r"^[\x20-\x7e]{1,32}$")
_OUTCOME = re.compile(r"^[^\x00-\x1f\x7f]{1,100}$")
Amount = Annotated[Decimal, Field(allow_inf_nan=False)]


def _address(value: str) -> str:
    if not _ADDRESS.match(value):
        raise ValueError("must be a 0x-prefixed address of 40 hex digits")
    return value


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
        return _address(value)

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
        return None if value is None else _address(value)

    @field_validator("requesters")
    @classmethod
    def _requesters(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one requester, or leave it out for anyone's")
        for index, address in enumerate(value):
            if not _ADDRESS.match(address):
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
        return None if value is None else _address(value)


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
            if not _ADDRESS.match(address):
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
        return None if value is None else _address(value)

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


class RealityBondPolicy(BaseModel):
    """`market_sources[].bond` of kind `reality`: what answers may put at stake, in wei of
    the chain's native token (RealityETH_v3_0 and v2.1 bonds are ETH, xDAI, ...), or in the
    smallest unit of `bond_token` (RealityETH_ERC20_v3_0)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    initial_wei: int = Field(
        gt=0,
        description="Bond of a first answer; the question's min_bond when that is higher.",
    )
    defend: bool = Field(
        False,
        description="When another answer supersedes ours: research again and answer again "
        "at double the bond (within the caps); false: the market goes to a person.",
    )
    max_per_question_wei: int | None = Field(
        None, gt=0, description="Cap on all our bonds on one question; null: no cap."
    )
    max_total_wei: int | None = Field(
        None,
        gt=0,
        description="Cap on our bonds on questions not yet finalized, over the venue; "
        "null: no cap.",
    )
    past_cap: Literal["review"] = Field(
        "review",
        description="A defence the caps do not allow: the market goes to a person.",
    )

    @model_validator(mode="after")
    def _bounded(self) -> RealityBondPolicy:
        if self.defend and self.max_per_question_wei is None:
            # Each defence doubles the bond: without a cap a bond war has no end.
            raise ValueError("defend: true needs max_per_question_wei (each defence doubles)")
        for cap in ("max_per_question_wei", "max_total_wei"):
            value = getattr(self, cap)
            if value is not None and value < self.initial_wei:
                raise ValueError(f"{cap} {value} is below initial_wei {self.initial_wei}")
        return self


class RealityArbitration(BaseModel):
    """`market_sources[].arbitration` of kind `reality`: when a bond war on our superseded
    answer goes to the question's arbitrator (its fee read from the arbitrator the
    question names, never from here)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request: Literal["never", "after_review"] = Field(
        "never",
        description="never: the daemon never requests arbitration; after_review: it offers "
        "it in the review queue and requests it (paying the fee) once a person decided and "
        "a second approved (four-eyes).",
    )
    bond_threshold_wei: int | None = Field(
        None,
        gt=0,
        description="Offer arbitration when the next answer would need at least this bond; "
        "null: only when a defence is past a bond cap.",
    )
    max_fee_wei: int | None = Field(
        None, gt=0, description="The largest arbitration fee paid; required with after_review."
    )

    @model_validator(mode="after")
    def _capped(self) -> RealityArbitration:
        if self.request == "after_review" and self.max_fee_wei is None:
            raise ValueError("request: after_review needs max_fee_wei (a cap on the fee paid)")
        return self


_REALITY_ANSWERABLE = {
    0: "bool",
    1: "uint",
    2: "single-select",
    3: "multiple-select",
    4: "datetime",
}


class RealitySourceConfig(BaseModel):
    """`market_sources[]` entry of kind `reality`: questions on a Reality.eth contract
    (`contract`: v3, RealityETH_v3_0, or v2.1, Realitio_v2_1; with `bond_token`,
    RealityETH_ERC20_v3_0 bonded in that token), answered with bonds (signed by
    `chain.signer`, on the nodes of `chain.rpc`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("reality", min_length=1, max_length=50, pattern=r"^[a-z0-9_-]+$")
    kind: Literal["reality"]
    chain: str | None = Field(
        None,
        description="The entry of `chains` this source is on; optional with one chain.",
    )
    contract_address: str = Field(description="The Reality.eth contract.")
    contract: Literal["v3", "v2.1"] = Field(
        "v3",
        description="Its version: v3 (RealityETH_v3_0, or RealityETH_ERC20_v3_0 with a "
        "bond_token) or v2.1 (Realitio_v2_1, where Omen asks on Gnosis chain); checked "
        "against the deployment at start.",
    )
    bond_token: str | None = Field(
        None,
        description="The ERC-20 token a RealityETH_ERC20_v3_0 takes bonds in (its token(), "
        "checked at start); null: bonds in the native token.",
    )
    claim_batch: int = Field(
        1,
        ge=1,
        le=64,
        description="Questions claimed in one claimMultipleAndWithdrawBalance (the claim and "
        "the withdrawal in one transaction); 1: claimWinnings then withdraw, per question.",
    )
    arbitrators: tuple[str, ...] | None = Field(
        None, description="Only questions naming one of these arbitrators; null: any."
    )
    templates: tuple[int, ...] = Field(
        (0, 2),
        description="Built-in templates answered: 0 bool, 2 single-select; 1 uint (a number "
        "with 18 decimals), 3 multiple-select (a set of the options) and 4 datetime (Unix "
        "seconds) are answered by a value the agents write, when listed.",
    )
    askers: tuple[str, ...] | None = Field(
        None, description="Only questions asked by these accounts; null: anyone's."
    )
    start_block: int = Field(0, ge=0, description="Scan for questions from this block.")
    bond: RealityBondPolicy
    allow_unresolved: bool = Field(
        False,
        description="Answer Reality.eth's 'answered too soon' (0xff..fe) when the verdict "
        "is TOO_EARLY.",
    )
    invalid: InvalidPolicy = Field(
        "propose",
        description="The agents' agreed INVALID (0xff..ff): propose (answered with a bond, "
        "as Reality.eth's answerers answer Invalid) or review (a person first).",
    )
    claim: bool = Field(
        True, description="Claim winnings and withdraw them once a question is finalized."
    )
    commit_reveal: bool = Field(
        False,
        description="Send each answer as a commitment, then reveal it (against front-running); "
        "the reveal must land within a question's timeout / 8 of the commitment.",
    )
    reopen: bool = Field(
        True,
        description="A question finalized as answered too soon (0xff..fe): reopen it "
        "(reopenQuestion, same text, arbitrator, timeout, opening_ts and min_bond; gas only, "
        "its bounty moves over) and answer the reopening as the same market; false: a person "
        "decides.",
    )
    arbitration: RealityArbitration = Field(
        default_factory=RealityArbitration,
        description="Arbitration of a bond war on our superseded answer, after review.",
    )
    counter_answer: Literal["never", "after_review"] = Field(
        "never",
        description="Another's answer our consensus contradicts: never (a review item shows "
        "it), or after_review (a person confirming that item makes the daemon answer over "
        "it at double the bond, within the bond caps; the same for a defence of our answer "
        "that another superseded, when the bond policy sent it to a person).",
    )

    @field_validator("contract_address")
    @classmethod
    def _contract_address(cls, value: str) -> str:
        return _address(value)

    @field_validator("bond_token")
    @classmethod
    def _bond_token(cls, value: str | None) -> str | None:
        return None if value is None else _address(value)

    @model_validator(mode="after")
    def _erc20_on_v3(self) -> RealitySourceConfig:
        if self.bond_token is not None and self.contract != "v3":
            # @reality.eth/contracts ships no ERC-20 flavour of v2.1.
            raise ValueError("bond_token: ERC-20 bonds are answered on contract v3 only")
        return self

    @field_validator("arbitrators", "askers")
    @classmethod
    def _addresses(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one address, or leave it out for any")
        for index, address in enumerate(value):
            if not _ADDRESS.match(address):
                raise ValueError(f"[{index}] must be a 0x-prefixed address of 40 hex digits")
        return value

    @field_validator("templates")
    @classmethod
    def _templates(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value:
            raise ValueError("name at least one template id")
        for template in value:
            if template not in _REALITY_ANSWERABLE:
                # Custom templates (5 and up) are refused: their JSON is not read.
                raise ValueError(
                    f"template {template}: only the built-in templates 0 to 4 can be answered"
                )
        if len(set(value)) != len(value):
            raise ValueError("a template id is named twice")
        return value


MarketSourceConfig = Annotated[
    HttpSourceConfig
    | ChainSourceConfig
    | UmaSourceConfig
    | UmaV3SourceConfig
    | RealitySourceConfig,
    Field(discriminator="kind"),
]
