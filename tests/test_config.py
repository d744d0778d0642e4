"""Configuration: defaults, partial files, environment overrides, errors with key paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.config import effective_config, load_settings, mask_url_password
from oracle.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no ./config.yaml unless a test writes one
    monkeypatch.delenv("ORACLE_CONFIG", raising=False)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "oracle.yaml"
    path.write_text(text)
    return path


def test_defaults_match_the_documented_keys() -> None:
    settings = load_settings()
    assert settings.consensus.model_dump() == {
        "min_agents": 3,
        "threshold": 0.67,
        "use_weighted_voting": True,
        "min_confidence": 0.5,
        "max_source_overlap": 0.8,
        "agent_timeout": 300.0,
        "min_model_families": 2,
        "strategy": "bft-weighted",
    }
    assert settings.sources.model_dump() == {
        "min_total": 50,
        "min_categories": 5,
        "min_official": 5,
        "min_news": 15,
    }


def test_shipped_config_yaml_is_the_defaults() -> None:
    assert load_settings(ROOT / "config.yaml") == load_settings()


def test_partial_file_keeps_other_defaults(tmp_path: Path) -> None:
    settings = load_settings(_write(tmp_path, "consensus:\n  threshold: 0.8\n"))
    assert settings.consensus.threshold == 0.8
    assert settings.consensus.min_agents == 3
    assert settings.sources.min_total == 50


def test_environment_overrides_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACLE__CONSENSUS__THRESHOLD", "0.75")
    monkeypatch.setenv("ORACLE__SOURCES__MIN_NEWS", "3")
    settings = load_settings(_write(tmp_path, "consensus:\n  threshold: 0.8\n  min_agents: 5\n"))
    assert settings.consensus.threshold == 0.75
    assert settings.consensus.min_agents == 5
    assert settings.sources.min_news == 3


def test_config_file_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACLE_CONFIG", str(_write(tmp_path, "sources:\n  min_total: 7\n")))
    assert load_settings().sources.min_total == 7


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("consensus:\n  threshold: 0.4\n", "consensus.threshold: must be between 0.5 and 1"),
        ("consensus:\n  threshold: 1.5\n", "consensus.threshold: must be between 0.5 and 1"),
        ("consensus:\n  threshold: .nan\n", "consensus.threshold: must be a finite number"),
        (
            "consensus:\n  min_agents: 1\n",
            "consensus.min_agents: Input should be greater than or equal to 2",
        ),
        (
            "consensus:\n  min_confidence: 2\n",
            "consensus.min_confidence: Input should be less than or equal to 1",
        ),
        ("consensus:\n  treshold: 0.7\n", "consensus.treshold: unknown key"),
        ("consensus:\n  strategy: magic\n", "consensus.strategy: unknown strategy 'magic'"),
        ("sources:\n  min_total: many\n", "sources.min_total: Input should be a valid integer"),
        ("nonsense: 1\n", "nonsense: unknown key"),
        ("consensus: [1, 2]\n", "consensus: Input should be a valid dictionary"),
        ("- just\n- a list\n", "expected a mapping of sections"),
        ("consensus:\n  threshold: [\n", "not valid YAML at line"),
    ],
)
def test_invalid_values_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_settings(_write(tmp_path, text))
    assert message in str(error.value)


def test_invalid_environment_value_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACLE__CONSENSUS__THRESHOLD", "0.3")
    with pytest.raises(ConfigError, match=r"^consensus\.threshold: must be between 0\.5 and 1"):
        load_settings()


def test_every_problem_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_settings(_write(tmp_path, "consensus:\n  threshold: 2\n  min_agents: 0\n"))
    assert str(error.value).count("\n") == 1


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no-such\.yaml: no such configuration file"):
        load_settings(tmp_path / "no-such.yaml")


def test_passwords_are_masked(tmp_path: Path) -> None:
    settings = load_settings(
        _write(tmp_path, "database:\n  url: postgresql+psycopg://oracle:hunter2@db:5432/oracle\n")
    )
    shown = effective_config(settings)
    assert shown["database"]["url"] == "postgresql+psycopg://oracle:**********@db:5432/oracle"
    assert "hunter2" not in repr(shown)


def test_mask_url_without_password_is_unchanged() -> None:
    assert mask_url_password("sqlite:///data/oracle.db") == "sqlite:///data/oracle.db"
