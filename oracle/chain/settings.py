"""The `chain:` section of the configuration (see config.yaml for the documented defaults).

Values are plain YAML types (paths are strings, fees are gwei floats) so the effective
configuration can be printed. Secrets (RPC URLs, which often embed an API key, and the
development private key) are `SecretStr`, so `oracle config check` masks them and their
repr shows `**********`.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from fractions import Fraction
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from oracle.core.urls import is_http_url

PositiveSeconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Gwei = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Ratio = Annotated[float, Field(allow_inf_nan=False)]


def decimal_fraction(value: float) -> Fraction:
    """The decimal the user wrote (1.2 -> 6/5), not the binary float's exact value."""
    return Fraction(Decimal(str(value)))


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RpcSettings(_Section):
    urls: tuple[SecretStr, ...] = Field(
        (SecretStr("http://127.0.0.1:8545"),),
        min_length=1,
        description="HTTP(S) JSON-RPC endpoints of one chain, in order of preference.",
    )
    chain_id: int | None = Field(
        None,
        ge=1,
        description="Expected chain id; None: the deployment file's (when deploying: the nodes')",
    )
    request_timeout: PositiveSeconds = 10.0
    max_block_lag: int = Field(5, ge=0, description="Blocks a node may trail the best one.")
    retry_backoff: PositiveSeconds = 1.0
    retry_backoff_max: PositiveSeconds = 60.0
    health_check_interval: PositiveSeconds = 15.0
    call_deadline: PositiveSeconds = Field(
        120.0, description="Seconds one call keeps retrying over the pool before it fails."
    )
    max_batch_size: int = Field(
        100, ge=1, description="Contract reads per JSON-RPC batch request (providers cap it)."
    )

    @field_validator("urls")
    @classmethod
    def _http_urls(cls, value: tuple[SecretStr, ...]) -> tuple[SecretStr, ...]:
        for index, url in enumerate(value):
            if not is_http_url(url.get_secret_value()):
                # Never echo the URL: it may carry an API key.
                raise ValueError(f"entry {index} must be an http:// or https:// URL")
        return value


class SignerSettings(_Section):
    type: Literal["keystore", "dev_private_key"] = "keystore"
    keystore: str | None = Field(None, description="Encrypted JSON keystore (`oracle keys new`).")
    password_file: str | None = None
    password_env: str | None = "ORACLE_KEYSTORE_PASSWORD"
    dev_private_key: SecretStr | None = Field(
        None, description="Development only; used only when type is dev_private_key."
    )
    min_balance_wei: int = Field(
        5 * 10**16,
        ge=0,
        description="Below this balance (wei of the native token) the signer may soon be "
        "unable to pay for its answers: exported as oracle_signer_min_balance_wei, which "
        "the OracleSignerBalanceLow alert compares the balance with.",
    )

    @model_validator(mode="after")
    def _dev_key_only_when_chosen(self) -> SignerSettings:
        if self.type == "dev_private_key" and self.dev_private_key is None:
            raise ValueError("dev_private_key is required when type is dev_private_key")
        if self.type == "keystore" and self.dev_private_key is not None:
            raise ValueError("dev_private_key is set but type is keystore; remove it")
        return self


class TxSettings(_Section):
    confirmations: int = Field(3, ge=1, description="Blocks on top of the receipt's, inclusive.")
    poll_interval: PositiveSeconds = 2.0
    resend_after_blocks: int = Field(3, ge=1)
    fee_bump_percent: Ratio = Field(12.5, ge=10, le=200)
    max_fee_per_gas_gwei: Gwei = 200.0
    min_priority_fee_gwei: Gwei = 0.01
    max_priority_fee_gwei: Gwei = 5.0
    priority_fee_percentile: float = Field(50.0, ge=0, le=100)
    fee_history_blocks: int = Field(10, ge=1, le=1024)
    base_fee_multiplier: Ratio = Field(2.0, ge=1, le=10)
    gas_limit_multiplier: Ratio = Field(1.2, ge=1, le=10)
    max_gas_limit: int = Field(10_000_000, ge=21_000)

    @model_validator(mode="after")
    def _tip_bounds(self) -> TxSettings:
        if self.min_priority_fee_gwei > self.max_priority_fee_gwei:
            raise ValueError("min_priority_fee_gwei must not exceed max_priority_fee_gwei")
        if self.max_fee_per_gas_gwei <= 0:
            raise ValueError("max_fee_per_gas_gwei must be positive")
        return self

    def gas_multiplier(self) -> Fraction:
        return decimal_fraction(self.gas_limit_multiplier)


class ScannerSettings(_Section):
    confirmations: int = Field(5, ge=0, description="Scan only this many blocks behind the head.")
    max_block_range: int = Field(2000, ge=1, description="Blocks per eth_getLogs request.")
    start_block: int | None = Field(None, ge=0, description="Default: the deployment block.")
    poll_interval: PositiveSeconds = 5.0

    @model_validator(mode="before")
    @classmethod
    def _retired_checkpoint_file(cls, data: object) -> object:
        # Scan checkpoints are kept in the database, per source and contract; the file
        # setting was read by nothing. An old file that sets it still loads, with a warning.
        if isinstance(data, dict) and "checkpoint_file" in data:
            data = {k: v for k, v in data.items() if k != "checkpoint_file"}
            logging.getLogger("oracle.config").warning(
                "scanner.checkpoint_file is ignored and can be removed: scan checkpoints "
                "are kept in the database (database.url), per source and contract"
            )
        return data


class SubmitterSettings(_Section):
    batch_max_size: int = Field(20, ge=1, le=500)
    batch_max_wait: PositiveSeconds = Field(30.0, description="Seconds before a partial batch.")
    settle_attempts: int = Field(
        3,
        ge=1,
        le=20,
        description="settle transactions per question while its callback keeps failing; "
        "after that its consumer reads finalResult itself.",
    )


class NativeToken(_Section):
    """The chain's own currency (what gas and Reality.eth's native bonds are paid in), as
    amounts are shown to people: "0.1 xDAI"."""

    symbol: str = Field("ETH", min_length=1, max_length=20)
    decimals: int = Field(18, ge=0, le=36)


class ChainSettings(_Section):
    """Everything the chain layer reads from the configuration."""

    rpc: RpcSettings = RpcSettings()
    signer: SignerSettings = SignerSettings()
    tx: TxSettings = TxSettings()
    scanner: ScannerSettings = ScannerSettings()
    submitter: SubmitterSettings = SubmitterSettings()
    deployment_file: str = "data/deployment.json"
    native_token: NativeToken = Field(
        default_factory=NativeToken,
        description="The chain's native token: ETH (18 decimals) unless set, e.g. "
        "{symbol: xDAI} on Gnosis, {symbol: POL} on Polygon.",
    )


CHAIN_NAME = r"^[a-z0-9][a-z0-9_-]{0,49}$"


class NamedChain(ChainSettings):
    """One entry of `chains:`: a chain the daemon works on, by name, with its own RPC
    pool, signer, fees, confirmations and scanner. Every chain-based market source names
    the entry it is on (`market_sources[].chain`); the daemon makes one context per entry
    (one transaction manager, so one nonce sequence, per signer and chain)."""

    name: str = Field("default", pattern=CHAIN_NAME, description="Named by market_sources[].chain.")
    chain_id: int | None = Field(
        None,
        ge=1,
        description="The chain's id; RPC nodes on another are refused (rpc.chain_id too).",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_chain_id(cls, data: object) -> object:
        """`chain_id` is `rpc.chain_id`'s short form: the two agree, or one is unset."""
        if not isinstance(data, dict) or data.get("chain_id") is None:
            return data
        rpc = data.get("rpc")
        rpc = dict(rpc) if isinstance(rpc, dict) else ({} if rpc is None else rpc)
        if not isinstance(rpc, dict):
            return data
        if rpc.get("chain_id") is None:
            rpc["chain_id"] = data["chain_id"]
        elif rpc["chain_id"] != data["chain_id"]:
            raise ValueError(
                f"chain_id {data['chain_id']} and rpc.chain_id {rpc['chain_id']} disagree: "
                "set one of them"
            )
        return {**data, "rpc": rpc}

    @model_validator(mode="after")
    def _chain_id_from_rpc(self) -> NamedChain:
        if self.chain_id is None and self.rpc.chain_id is not None:
            object.__setattr__(self, "chain_id", self.rpc.chain_id)
        return self
