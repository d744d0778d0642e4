"""Settings of a `market_sources[]` entry of kind `reality`: questions on a Reality.eth
contract. A leaf: only the standard library, pydantic, the core and other settings."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from oracle.core.outcomes import InvalidPolicy
from oracle.daemon.settings import ADDRESS_PATTERN, checked_address


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
        return checked_address(value)

    @field_validator("bond_token")
    @classmethod
    def _bond_token(cls, value: str | None) -> str | None:
        return None if value is None else checked_address(value)

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
            if not ADDRESS_PATTERN.match(address):
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
