"""Shared field types of agent configurations."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

AgentName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
