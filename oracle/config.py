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
import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from oracle.agents.settings import AgentConfig, LlmAgentConfig
from oracle.chain.settings import ChainSettings, NamedChain, NativeToken
from oracle.config_sources import (
    SECTIONS,
    config_key,
    load_data,
    validation_error,
)
from oracle.console.settings import ConsoleSettings
from oracle.core.amounts import Token, Tokens
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.urls import redact_url
from oracle.daemon.settings import ChainSourceSettings, DaemonSettings, MetricsSettings
from oracle.errors import ConfigError, SetupError
from oracle.store.settings import DatabaseSettings
from oracle.venues.own.settings import ChainSourceConfig
from oracle.venues.registry import MarketSourceConfig, chain_source

DEFAULT_CHAIN = "default"

__all__ = [
    "DEFAULT_CHAIN",
    "SECTIONS",
    "Settings",
    "config_checksum",
    "config_key",
    "effective_config",
    "legacy_chain_warning",
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

    chains: tuple[NamedChain, ...] = (NamedChain(),)
    chain: ChainSettings | None = Field(
        None,
        description="The single-chain form of `chains` (one entry named `default`); "
        "kept for old files, with a warning.",
    )

    @field_validator("chains")
    @classmethod
    def _some_chain(cls, value: tuple[NamedChain, ...]) -> tuple[NamedChain, ...]:
        if not value:
            raise ValueError("at least one chain (the default one when no source uses a chain)")
        names = [chain.name for chain in value]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"names must be unique; repeated: {', '.join(duplicates)}")
        for index, chain in enumerate(value):
            for other in value[:index]:
                if chain.chain_id is not None and (chain.chain_id, chain.signer) == (
                    other.chain_id,
                    other.signer,
                ):
                    # Two contexts would each keep a nonce sequence for one account.
                    raise ValueError(
                        f"{other.name} and {chain.name} are both chain id {chain.chain_id} "
                        "with the same signer: make them one entry (its sources share it)"
                    )
        return value

    @model_validator(mode="before")
    @classmethod
    def _old_chain_section(cls, data: Any) -> Any:
        """`chain:` (the old single-chain form) is `chains:` with one entry, `default`."""
        if not isinstance(data, dict) or data.get("chain") is None:
            return data
        if "chains" in data:
            raise _key_error(
                ("chain",),
                data["chain"],
                "set chains or the old single-chain section chain, not both: move chain's "
                "keys into an entry of chains (- name: default)",
            )
        old = data["chain"]
        try:
            ChainSettings.model_validate(old)
        except ValidationError:
            return data  # the section's own validation names what is wrong, as chain.*
        return {**data, "chains": [{"name": DEFAULT_CHAIN, **old}]}

    @model_validator(mode="after")
    def _sources_name_their_chain(self) -> Settings:
        names = [chain.name for chain in self.chains]
        for index, entry in enumerate(self.market_sources):
            source = chain_source(entry)
            if source is None:
                continue
            if source.chain is None and len(names) > 1:
                raise _key_error(
                    ("market_sources", index, "chain"),
                    None,
                    f"source {source.name} must name its chain: several are configured "
                    f"({', '.join(names)})",
                )
            if source.chain is not None and source.chain not in names:
                raise _key_error(
                    ("market_sources", index, "chain"),
                    source.chain,
                    f"source {source.name} names the chain {source.chain!r}, which is not "
                    f"in chains (configured: {', '.join(names)})",
                )
        own = [s for s in self.market_sources if isinstance(s, ChainSourceConfig)]
        for chain in names:
            here = [s.name for s in own if self.chain_name(s) == chain]
            if len(here) > 1:
                # Both would read the same deployment file: every question answered twice.
                raise _key_error(
                    ("market_sources",),
                    None,
                    f"at most one source of kind chain per chain: {', '.join(here)} are "
                    f"all on {chain} (its deployment_file)",
                )
        return self

    @model_validator(mode="after")
    def _console_native_token_is_each_chains(self) -> Settings:
        """`console.native_token` (one native token for every chain) is deprecated: each
        entry of `chains` names its own. An old file's still applies, with a warning, to
        every entry that names none."""
        old = self.console.native_token
        if old is None:
            return self
        logging.getLogger("oracle.config").warning(
            "console.native_token is deprecated: set native_token in each entry of chains "
            "(until then it applies to those that set none)"
        )
        token = NativeToken(symbol=old.symbol, decimals=old.decimals)
        chains = tuple(
            chain
            if "native_token" in chain.model_fields_set
            else chain.model_copy(update={"native_token": token})
            for chain in self.chains
        )
        object.__setattr__(self, "chains", chains)
        return self

    def token_table(self) -> Tokens:
        """How amounts are named for people (`oracle.core.amounts`): `console.tokens` by
        address, and each chain's native token by the chain's name."""
        return self.console.token_table(
            {c.name: Token(c.native_token.symbol, c.native_token.decimals) for c in self.chains}
        )

    def chain_name(self, source: ChainSourceSettings) -> str:
        """The name of the chain `source` is on (the only one when it names none)."""
        return source.chain if source.chain is not None else self.chains[0].name

    def source_chains(self) -> dict[str, str]:
        """The chain each chain source is on, by source name."""
        on_chains = (chain_source(entry) for entry in self.market_sources)
        return {source.name: self.chain_name(source) for source in on_chains if source}

    def chain_settings(self, name: str | None = None) -> NamedChain:
        """The entry of `chains` called `name`; without a name, the only one (a
        ConfigError when several are configured)."""
        if name is None:
            if len(self.chains) > 1:
                names = ", ".join(c.name for c in self.chains)
                raise ConfigError(
                    f"chains: several are configured ({names}); name one (--chain NAME)"
                )
            return self.chains[0]
        for chain in self.chains:
            if chain.name == name:
                return chain
        names = ", ".join(c.name for c in self.chains)
        raise ConfigError(f"chains: no chain named {name!r} (configured: {names})")

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
        raise _key_error(("daemon", "window_model"), name, str(problem))


def _key_error(loc: tuple[str | int, ...], value: Any, problem: str) -> ValidationError:
    """A validation error of the key at `loc` (so the message names it, and its ORACLE__
    variable when it came from one), not of the whole document."""
    return ValidationError.from_exception_data(
        "Settings",
        [
            {
                "type": "value_error",
                "loc": loc,
                "input": value,
                "ctx": {"error": ValueError(problem)},
            }
        ],
    )


def legacy_chain_warning(settings: Settings) -> str | None:
    """How to move an old single `chain:` section to `chains:`; None when not used."""
    if settings.chain is None:
        return None
    return (
        "chain: is the old single-chain section; it is read as chains: with one entry "
        "named default. Move its keys under `chains:` as `- name: default` (the sources "
        "may then say `chain: default`; config.yaml shows the form)"
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

    Each chain source shows the chain it is on (named or not). `SecretStr` values
    serialize as `**********`; every URL is shown as the logs show it
    (`redact_url`: scheme, host, port and plain path words, no credentials), the RPC URLs
    (secrets, as they often embed an API key) included.
    """
    shown: dict[str, Any] = _redact_urls(settings.model_dump(mode="json"))
    for index, entry in enumerate(settings.market_sources):
        source = chain_source(entry)
        if source is not None:  # the chain each source is on, named
            shown["market_sources"][index]["chain"] = settings.chain_name(source)
    for index, chain in enumerate(settings.chains):
        shown["chains"][index]["rpc"]["urls"] = [
            redact_url(url.get_secret_value()) for url in chain.rpc.urls
        ]
    if settings.chain is not None:
        shown["chain"]["rpc"]["urls"] = [
            redact_url(url.get_secret_value()) for url in settings.chain.rpc.urls
        ]
    return shown


def config_checksum(settings: Settings) -> str:
    """The first 12 hex digits of the SHA-256 of `effective_config` (secrets masked, so
    it reveals none): tells apart replicas that run different configurations."""
    document = json.dumps(effective_config(settings), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(document.encode()).hexdigest()[:12]
