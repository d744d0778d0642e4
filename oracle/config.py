"""Configuration: defaults, then a YAML file, then `ORACLE__SECTION__KEY` environment variables.

A file may set only some keys; the rest keep their defaults. Every value is validated at
start-up and an invalid one fails with its key path and the reason, for example
`consensus.threshold: must be between 0.5 and 1 ...`; a value that came from the
environment is named with its variable too (`config_key`). Unknown keys are errors, in the
file and in `ORACLE__...` variable names, and so is a key the file sets twice: a typo
cannot silently fall back to a default.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from oracle.agents.settings import AgentConfig, LlmAgentConfig
from oracle.chain.settings import ChainSettings
from oracle.config_sources import (
    SECTIONS,
    config_key,
    load_data,
    validation_error,
)
from oracle.console.settings import ConsoleSettings
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.urls import redact_url
from oracle.daemon.settings import (
    ChainSourceConfig,
    DaemonSettings,
    MarketSourceConfig,
    MetricsSettings,
    RealitySourceConfig,
    UmaSourceConfig,
    UmaV3SourceConfig,
)
from oracle.errors import SetupError
from oracle.store.settings import DatabaseSettings

__all__ = [
    "SECTIONS",
    "Settings",
    "config_checksum",
    "config_key",
    "effective_config",
    "load_settings",
]


class LogSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["json", "text"] = "json"


class Settings(BaseModel):
    """The whole effective configuration of one oracle process."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    consensus: ConsensusParams = ConsensusParams()
    sources: SourceThresholds = SourceThresholds()
    database: DatabaseSettings = DatabaseSettings()
    log: LogSettings = LogSettings()
    daemon: DaemonSettings = DaemonSettings()
    metrics: MetricsSettings = MetricsSettings()
    console: ConsoleSettings = ConsoleSettings()
    agents: tuple[AgentConfig, ...] = ()
    market_sources: tuple[MarketSourceConfig, ...] = ()

    @field_validator("agents", "market_sources")
    @classmethod
    def _unique_names(cls, value: tuple[Any, ...]) -> tuple[Any, ...]:
        names = [item.name for item in value]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"names must be unique; repeated: {', '.join(duplicates)}")
        return value

    @field_validator("market_sources")
    @classmethod
    def _one_chain_source(cls, value: tuple[Any, ...]) -> tuple[Any, ...]:
        if sum(isinstance(item, ChainSourceConfig) for item in value) > 1:
            # Both would read the same deployment and sign with the same key: every
            # question answered twice, and two transaction managers racing for nonces.
            raise ValueError("at most one source of kind chain: they all use the chain section")
        signing = [
            item
            for item in value
            if isinstance(
                item,
                ChainSourceConfig | UmaSourceConfig | UmaV3SourceConfig | RealitySourceConfig,
            )
        ]
        if len(signing) > 1:
            # Each has its own transaction manager on chain.signer's key: they would race
            # each other for nonces.
            raise ValueError(
                "at most one source of kind chain, uma, uma_v3 or reality: each signs with "
                "chain.signer, "
                f"and {', '.join(s.name for s in signing)} would race for its nonces"
            )
        return value

    chain: ChainSettings = ChainSettings()

    @model_validator(mode="after")
    def _window_model_is_an_llm_agent(self) -> Settings:
        name = self.daemon.window_model
        llm_agents = [a.name for a in self.agents if isinstance(a, LlmAgentConfig)]
        if name is None or name in llm_agents:
            return self
        known = f"llm agents: {', '.join(llm_agents)}" if llm_agents else "there are none"
        problem = ValueError(f"must name an llm agent of `agents`: {name!r} is not one ({known})")
        # Raised as the key's own error, so the message names daemon.window_model (and
        # its ORACLE__ variable when it came from one), not the whole document.
        raise ValidationError.from_exception_data(
            "Settings",
            [
                {
                    "type": "value_error",
                    "loc": ("daemon", "window_model"),
                    "input": name,
                    "ctx": {"error": problem},
                }
            ],
        )


def load_settings(path: str | Path | None = None) -> Settings:
    """Defaults, overlaid by the config file, overlaid by the environment; validated."""
    data = load_data(path)
    try:
        return Settings(**data)
    except ValidationError as error:
        raise validation_error(error) from None


_IDLE = {
    "agents": "no agent to research markets with",
    "market_sources": "no market source to find markets in",
}


def nothing_to_do(settings: Settings) -> SetupError | None:
    """The daemon would have nothing to do: no `agents`, or no `market_sources` (the
    error names the empty sections); None when both are set. `oracle run` refuses to
    start with it, `oracle config check` warns."""
    empty = [
        key
        for key, value in (("agents", settings.agents), ("market_sources", settings.market_sources))
        if not value
    ]
    if not empty:
        return None
    why = " and ".join(_IDLE[key] for key in empty)
    return SetupError(
        ", ".join(empty),
        f"none configured: the daemon would have nothing to do ({why}; see config.yaml)",
    )


def _redact_urls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _redact_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_urls(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return redact_url(value)
    return value


def effective_config(settings: Settings) -> dict[str, Any]:
    """The configuration as plain data with every secret masked, for display.

    `SecretStr` values serialize as `**********`; every URL is shown as the logs show it
    (`redact_url`: scheme, host, port and plain path words, no credentials), the RPC URLs
    (secrets, as they often embed an API key) included.
    """
    shown: dict[str, Any] = _redact_urls(settings.model_dump(mode="json"))
    shown["chain"]["rpc"]["urls"] = [
        redact_url(url.get_secret_value()) for url in settings.chain.rpc.urls
    ]
    return shown


def config_checksum(settings: Settings) -> str:
    """The first 12 hex digits of the SHA-256 of `effective_config` (secrets masked, so
    it reveals none): tells apart replicas that run different configurations."""
    document = json.dumps(effective_config(settings), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(document.encode()).hexdigest()[:12]
