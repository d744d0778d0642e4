"""Configuration: defaults, then a YAML file, then `ORACLE__SECTION__KEY` environment variables.

A file may set only some keys; the rest keep their defaults. Every value is validated at
start-up and an invalid one fails with its key path and the reason, for example
`consensus.threshold: must be between 0.5 and 1 ...`. Unknown keys are errors too, so a
typo cannot silently fall back to a default.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from oracle._pydantic_errors import describe
from oracle.agents.config import AgentConfig
from oracle.chain.settings import ChainSettings
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.daemon.chain_venue import ChainSourceConfig
from oracle.daemon.http_venue import HttpSourceConfig
from oracle.daemon.settings import DaemonSettings, MetricsSettings
from oracle.errors import ConfigError

DEFAULT_CONFIG_FILE = Path("config.yaml")
CONFIG_FILE_ENV = "ORACLE_CONFIG"
MASK = "**********"  # what pydantic shows for a SecretStr


class DatabaseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(
        "sqlite:///data/oracle.db",
        description="SQLAlchemy URL; its password is masked whenever it is shown.",
    )


class LogSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["json", "text"] = "json"


MarketSourceConfig = Annotated[HttpSourceConfig | ChainSourceConfig, Field(discriminator="kind")]


class Settings(BaseSettings):
    """The whole effective configuration of one oracle process."""

    model_config = SettingsConfigDict(
        env_prefix="ORACLE__",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    consensus: ConsensusParams = ConsensusParams()
    sources: SourceThresholds = SourceThresholds()
    database: DatabaseSettings = DatabaseSettings()
    log: LogSettings = LogSettings()
    daemon: DaemonSettings = DaemonSettings()
    metrics: MetricsSettings = MetricsSettings()
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

    chain: ChainSettings = ChainSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The file's values arrive as init arguments; the environment overrides them.
        return (env_settings, init_settings)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        where = ""
        mark = getattr(error, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        raise ConfigError(f"{path}: not valid YAML{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections at the top level")
    return data


def resolve_config_path(path: str | Path | None) -> Path | None:
    """The file to load: the one given, else $ORACLE_CONFIG, else ./config.yaml if present."""
    if path is not None:
        return Path(path)
    if os.environ.get(CONFIG_FILE_ENV):
        return Path(os.environ[CONFIG_FILE_ENV])
    return DEFAULT_CONFIG_FILE if DEFAULT_CONFIG_FILE.exists() else None


def load_settings(path: str | Path | None = None) -> Settings:
    """Defaults, overlaid by the config file, overlaid by the environment; validated."""
    config_path = resolve_config_path(path)
    data = _read_file(config_path) if config_path is not None else {}
    try:
        return Settings(**data)
    except ValidationError as error:
        raise ConfigError("\n".join(describe(error))) from None


def mask_url_password(url: str) -> str:
    """`postgresql://u:secret@h/db` -> `postgresql://u:********@h/db`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{MASK}@{host}"))


def _mask_urls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _mask_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_urls(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return mask_url_password(value)
    return value


def effective_config(settings: Settings) -> dict[str, Any]:
    """The configuration as plain data with every secret masked, for display.

    `SecretStr` values serialize as the mask; passwords inside URLs are masked here.
    """
    masked: dict[str, Any] = _mask_urls(settings.model_dump(mode="json"))
    return masked
