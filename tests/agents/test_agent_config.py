"""Agent kinds in the configuration file: the commented example in config.yaml is valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.agents.diversity import config_warnings
from oracle.agents.metrics import AgentMetrics
from oracle.agents.settings import DataAgentConfig, LlmAgentConfig
from oracle.app import build_agent
from oracle.config import effective_config, load_settings
from oracle.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def commented_example(tmp_path: Path) -> Path:
    lines = (ROOT / "config.yaml").read_text().splitlines()
    start = lines.index("# agents:")
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("#"))
    body = [line[2:] if line.startswith("# ") else "" for line in lines[start:end]]
    path = tmp_path / "agents.yaml"
    path.write_text("\n".join(body) + "\n")
    return path


def test_the_commented_example_validates(tmp_path: Path) -> None:
    settings = load_settings(commented_example(tmp_path))
    gpt, claude, data = settings.agents
    assert isinstance(gpt, LlmAgentConfig)
    assert (gpt.family, gpt.provider_name, len(gpt.search)) == ("gpt", "openai", 5)
    assert isinstance(claude, LlmAgentConfig)
    assert (claude.family, claude.provider_name) == ("claude", "anthropic")
    assert isinstance(data, DataAgentConfig)
    assert config_warnings(settings.agents, settings.consensus) == []
    shown = effective_config(settings)
    assert shown["agents"][0]["api_key_env"] == "OPENAI_API_KEY"  # a name, not a key
    assert shown["agents"][0]["pages"]["allow_private_addresses"] is False


def test_errors_name_the_agent_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "agents:\n  - {name: a, kind: llm, model: m, search: [{kind: gdelt}], temperature: 9,"
        " budget: {wall_seconds: 10, answer_reserve_seconds: 20}}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert "agents[0].llm.temperature: Input should be less than or equal to 2" in message
    assert "agents[0].llm.budget: answer_reserve_seconds must be less than wall_seconds" in message


def test_test_only_page_settings_are_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "unsafe.yaml"
    path.write_text(
        "agents:\n  - {name: a, kind: llm, model: gpt-4.1, search: [{kind: gdelt}],"
        " pages: {allow_private_addresses: true, allowed_networks: [127.0.0.0/8]}}\n"
        "  - {name: b, kind: llm, model: claude-opus-4-6, api: anthropic,"
        " search: [{kind: gdelt}]}\n"
    )
    settings = load_settings(path)
    assert config_warnings(settings.agents, settings.consensus) == [
        "agents[a].pages.allow_private_addresses is on: the agent may fetch private, loopback "
        "and link-local addresses (for tests only)",
        "agents[a].pages.allowed_networks exempts 127.0.0.0/8 from the private-address block "
        "(for tests only)",
    ]


def test_missing_model_keys_stop_the_build_naming_the_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ABSENT_KEY", raising=False)
    base = {"name": "a", "kind": "llm", "model": "gpt-4.1", "search": [{"kind": "gdelt"}]}
    with pytest.raises(ConfigError, match=r"^agents\[a\]: the openai API needs api_key_env"):
        build_agent(LlmAgentConfig.model_validate(base), AgentMetrics())
    with pytest.raises(
        ConfigError, match=r"^agents\[a\]\.api_key_env: environment variable ABSENT_KEY is not set$"
    ):
        build_agent(
            LlmAgentConfig.model_validate({**base, "api_key_env": "ABSENT_KEY"}), AgentMetrics()
        )
    local = build_agent(
        LlmAgentConfig.model_validate({**base, "base_url": "http://gpu:8000/v1"}), AgentMetrics()
    )
    assert local.provider == "gpu"
