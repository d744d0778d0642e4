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
import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from oracle._pydantic_errors import describe
from oracle.agents.settings import AgentConfig
from oracle.chain.settings import ChainSettings
from oracle.console.settings import ConsoleSettings
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.urls import redact_url
from oracle.daemon.settings import (
    ChainSourceConfig,
    DaemonSettings,
    MarketSourceConfig,
    MetricsSettings,
)
from oracle.errors import ConfigError
from oracle.store.settings import DatabaseSettings

DEFAULT_CONFIG_FILE = Path("config.yaml")
CONFIG_FILE_ENV = "ORACLE_CONFIG"
ENV_PREFIX = "ORACLE__"
ENV_DELIMITER = "__"


class LogSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["json", "text"] = "json"


class Settings(BaseSettings):
    """The whole effective configuration of one oracle process."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_DELIMITER,
        extra="forbid",
        frozen=True,
    )

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
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _reject_duplicate_keys(path, node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as error:
        where = ""
        mark = getattr(error, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        raise ConfigError(f"{path}: not valid YAML{where}") from None
    finally:
        loader.dispose()
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections at the top level")
    return data


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _reject_duplicate_keys(path: Path, root: yaml.Node) -> None:
    """A key set twice in one mapping is an error: YAML would quietly keep the last."""
    stack: list[tuple[str, yaml.Node]] = [("", root)]
    seen_nodes: set[int] = set()  # an alias repeats a node; look at each once
    while stack:
        where, node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            first_lines: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
                    continue
                name = f"{where}.{key.value}" if where else str(key.value)
                line = key.start_mark.line + 1
                first = first_lines.setdefault((key.tag, key.value), line)
                if first != line:
                    raise ConfigError(f"{path}: {name} is set twice (lines {first} and {line})")
                stack.append((name, value))


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
    _reject_unknown_variables()
    try:
        return Settings(**data)
    except ValidationError as error:
        raise ConfigError("\n".join(describe(error, label=config_key))) from None


def _environment_names() -> dict[tuple[str, ...], str]:
    """Every `ORACLE__A__B` variable: its key path (lower case, as matched) -> its name."""
    return {
        tuple(name[len(ENV_PREFIX) :].lower().split(ENV_DELIMITER)): name
        for name in os.environ
        if name.upper().startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX)
    }


def _reject_unknown_variables() -> None:
    """pydantic-settings ignores a variable naming no section, so a misspelt override
    would silently not apply; within a section, the model rejects unknown keys itself."""
    for parts, name in sorted(_environment_names().items()):
        if parts[0] not in Settings.model_fields:
            raise ConfigError(f"{'.'.join(parts)} ({name}): unknown key")


_PATH_PART = re.compile(r"[^.\[\]]+|\[\d+\]")


def config_key(path: str) -> str:
    """The key path as an error names it: `database.url`, followed by the variable that
    set it when the value came from the environment: `database.url (ORACLE__DATABASE__URL)`.
    """
    parts: list[str] = _PATH_PART.findall(path)
    if not parts or not _from_environment(parts):
        return path
    names = [p.lower() for p in parts if not p.startswith("[")]
    matches = [
        (len(key), name)
        for key, name in _environment_names().items()
        if tuple(names[: len(key)]) == key
    ]
    return f"{path} ({max(matches)[1]})" if matches else path


def _from_environment(parts: list[str]) -> bool:
    """Whether the value at `parts` is one the environment set (not the file or a default).

    A list from the environment replaces the file's whole list; a mapping is merged into
    the file's key by key.
    """
    node: Any = EnvSettingsSource(Settings)()
    for part in parts:
        if isinstance(node, list):
            return True
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


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
