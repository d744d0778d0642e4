"""Where configuration values come from, as plain data: the YAML file, overlaid by
`ORACLE__SECTION__KEY` environment variables.

Light on purpose (the standard library, yaml and pydantic): `oracle consensus` validates
its two sections with `load_section` without loading the models of the daemon, the chain
and the agents; `oracle.config.load_settings` validates every section from the same data.

The environment's rules: names are matched without regard to case; `__` separates the
key path; a value that starts with `[` or `{` is JSON (a list or a mapping), any other
is a string for the model to convert. A mapping from the environment is merged into the
file's key by key; anything else (a list included) replaces the file's value.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from oracle._pydantic_errors import describe
from oracle.errors import ConfigError

DEFAULT_CONFIG_FILE = Path("config.yaml")
CONFIG_FILE_ENV = "ORACLE_CONFIG"
ENV_PREFIX = "ORACLE__"
ENV_DELIMITER = "__"
# The top-level sections of `oracle.config.Settings` (tests/test_config.py holds them
# equal), so that a misspelt section is an error even where only one section is read.
SECTIONS = frozenset(
    {
        "consensus",
        "sources",
        "database",
        "log",
        "daemon",
        "metrics",
        "agents",
        "market_sources",
        "chain",
        "chains",
        "console",
    }
)

Model = TypeVar("Model", bound=BaseModel)


def resolve_config_path(path: str | Path | None) -> Path | None:
    """The file to load: the one given, else $ORACLE_CONFIG, else ./config.yaml if present."""
    if path is not None:
        return Path(path)
    if os.environ.get(CONFIG_FILE_ENV):
        return Path(os.environ[CONFIG_FILE_ENV])
    return DEFAULT_CONFIG_FILE if DEFAULT_CONFIG_FILE.exists() else None


def load_data(path: str | Path | None = None) -> dict[str, Any]:
    """The file's sections (see `resolve_config_path`) overlaid by the environment, not
    yet validated; ConfigError for an unreadable file or an unknown section."""
    config_path = resolve_config_path(path)
    data = _read_file(config_path) if config_path is not None else {}
    unknown = sorted(str(key) for key in data if key not in SECTIONS)
    if unknown:
        raise ConfigError(f"{unknown[0]}: unknown key")
    return _merge_chains(data, environment_overrides())


def _merge_chains(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`overrides` over `data`, where `ORACLE__CHAINS__NAME__KEY` sets KEY of the entry of
    `chains` called NAME (of the file's list, else of the default one, `default`), and
    the old `ORACLE__CHAIN__KEY` sets KEY of the file's only chain when it lists `chains`."""
    overrides = dict(overrides)
    by_name = overrides.pop("chains", None)
    old = overrides.get("chain")
    merged = _merge(data, overrides)
    if isinstance(by_name, list):  # the whole list, as JSON
        return {**merged, "chains": by_name}
    if by_name is None and not (isinstance(old, dict) and "chains" in data):
        return merged
    chains = data.get("chains", [{"name": "default"}])
    if not isinstance(chains, list) or not all(isinstance(c, dict) for c in chains):
        return merged  # the file's own value is refused by validation, naming it
    chains = [dict(chain) for chain in chains]
    names = [str(chain.get("name", "default")) for chain in chains]
    if isinstance(old, dict) and "chains" in data:
        if len(chains) != 1:
            raise ConfigError(
                f"ORACLE__CHAIN__...: the file lists several chains ({', '.join(names)}); "
                "set a chain's keys with ORACLE__CHAINS__<NAME>__<KEY>"
            )
        chains[0] = _merge(chains[0], old)
        del merged["chain"]
    if not isinstance(by_name, dict):
        if by_name is not None:
            raise ConfigError("ORACLE__CHAINS: expected a JSON list of chains")
        return {**merged, "chains": chains}
    for name, keys in by_name.items():
        if name not in names:
            raise ConfigError(
                f"ORACLE__CHAINS__{name.upper()}__...: no chain named {name!r} "
                f"(configured: {', '.join(names)})"
            )
        if not isinstance(keys, dict):
            raise ConfigError(f"ORACLE__CHAINS__{name.upper()}: set one key of the chain")
        index = names.index(name)
        chains[index] = _merge(chains[index], keys)
    return {**merged, "chains": chains}


def load_section(path: str | Path | None, section: str, model: type[Model]) -> Model:
    """One section of the configuration, validated by `model` with the same errors
    `load_settings` gives (`consensus.threshold (ORACLE__...): ...`)."""
    return validate_section(load_data(path), section, model)


def validate_section(data: dict[str, Any], section: str, model: type[Model]) -> Model:
    """One section of `load_data`'s result, validated by `model` (read the file once for
    several sections)."""
    value = data.get(section, {})
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise ConfigError("\n".join(describe(error, prefix=section, label=config_key))) from None


def validation_error(error: ValidationError) -> ConfigError:
    """A whole-configuration validation error, one `key (VARIABLE): reason` per line."""
    return ConfigError("\n".join(describe(error, label=config_key)))


# -- the file ----------------------------------------------------------------------------


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror})") from None
    loader = _SafeLoader(text)
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


# libyaml's parser when PyYAML was built with it: the pure-Python one spends longer on the
# commented config.yaml than `oracle consensus` spends on everything else.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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


# -- the environment ---------------------------------------------------------------------


def _environment_names() -> dict[tuple[str, ...], str]:
    """Every `ORACLE__A__B` variable: its key path (lower case, as matched) -> its name."""
    return {
        tuple(name[len(ENV_PREFIX) :].lower().split(ENV_DELIMITER)): name
        for name in os.environ
        if name.upper().startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX)
    }


def environment_overrides() -> dict[str, Any]:
    """The `ORACLE__...` variables as nested data; ConfigError for a variable naming no
    section (a misspelt override would otherwise silently not apply) or holding broken
    JSON. Within a section, the models reject unknown keys themselves."""
    overrides: dict[str, Any] = {}
    for parts, name in sorted(_environment_names().items()):
        if parts[0] not in SECTIONS:
            raise ConfigError(f"{'.'.join(parts)} ({name}): unknown key")
        if any(not part for part in parts):
            raise ConfigError(f"{name}: an empty key between '__' separators")
        overrides = _merge(overrides, _nest(parts, _env_value(parts, name)))
    return overrides


def _env_value(parts: tuple[str, ...], name: str) -> Any:
    raw = os.environ[name]
    if not raw.lstrip().startswith(("[", "{")):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        # Never echo the value: it may be a secret.
        raise ConfigError(f"{'.'.join(parts)} ({name}): not valid JSON") from None


def _nest(parts: tuple[str, ...], value: Any) -> dict[str, Any]:
    for part in reversed(parts[1:]):
        value = {part: value}
    return {parts[0]: value}


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


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
    try:
        node: Any = environment_overrides()
    except ConfigError:
        return False
    for part in parts:
        if isinstance(node, list):
            return True
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True
