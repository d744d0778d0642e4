"""Checks on the configured agents that `oracle config check` reports as warnings."""

from __future__ import annotations

from collections.abc import Sequence

from oracle.agents.settings import AgentConfig, DataAgentConfig, LlmAgentConfig
from oracle.core.params import ConsensusParams


def configured_family(config: AgentConfig) -> str | None:
    """The model family an agent will record; None when it records none."""
    if isinstance(config, LlmAgentConfig):
        return config.family
    if isinstance(config, DataAgentConfig):
        return config.model_family
    return config.model_family


def config_warnings(agents: Sequence[AgentConfig], params: ConsensusParams) -> list[str]:
    """Problems that do not stop the oracle but defeat part of its design."""
    warnings = []
    if agents:
        known = sorted({f for a in agents if (f := configured_family(a)) is not None})
        unknown = sum(configured_family(a) is None for a in agents)
        families = len(known) + unknown  # an agent without a family is a family of its own
        if families < params.min_model_families:
            listed = ", ".join([*known, *([f"{unknown} unrecorded"] if unknown else [])])
            warnings.append(
                f"consensus.min_model_families is {params.min_model_families} but the configured "
                f"agents come from {families} model "
                f"{'family' if families == 1 else 'families'} ({listed}): every consensus "
                "they reach will go to review"
            )
    for config in agents:
        if isinstance(config, LlmAgentConfig):
            if config.pages.allow_private_addresses:
                warnings.append(
                    f"agents[{config.name}].pages.allow_private_addresses is on: the agent may "
                    "fetch private, loopback and link-local addresses (for tests only)"
                )
            if config.pages.allowed_networks:
                nets = ", ".join(str(n) for n in config.pages.allowed_networks)
                warnings.append(
                    f"agents[{config.name}].pages.allowed_networks exempts {nets} from the "
                    "private-address block (for tests only)"
                )
    return warnings
