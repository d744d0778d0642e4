"""Agent configuration (`agents:` in config.yaml): a name, a kind, kind-specific settings.

Kinds: `replay` (below), `llm` (oracle/agents/llm.py), `data` (oracle/agents/data.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from oracle.agents.base import ResearchAgent
from oracle.agents.data import DataAgent, DataAgentConfig
from oracle.agents.llm import LlmAgent, LlmAgentConfig
from oracle.agents.replay import ReplayAgent

AgentName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]


class ReplayAgentConfig(BaseModel):
    """Answers from recordings on disk (see oracle/agents/replay.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: AgentName
    kind: Literal["replay"]
    directory: Path
    replay_as: str | None = None
    latency_seconds: float = Field(0.0, ge=0, allow_inf_nan=False)
    latency_jitter_seconds: float = Field(0.0, ge=0, allow_inf_nan=False)
    provider: str | None = None
    model_family: str | None = None


AgentConfig = Annotated[
    ReplayAgentConfig | LlmAgentConfig | DataAgentConfig, Field(discriminator="kind")
]


def build_agent(config: AgentConfig) -> ResearchAgent:
    """A fresh, isolated agent for `config`."""
    if isinstance(config, LlmAgentConfig):
        return LlmAgent(config)
    if isinstance(config, DataAgentConfig):
        return DataAgent(config)
    return ReplayAgent(
        config.name,
        config.directory,
        replay_as=config.replay_as,
        latency_seconds=config.latency_seconds,
        latency_jitter_seconds=config.latency_jitter_seconds,
        provider=config.provider,
        model_family=config.model_family,
    )
