"""The `database:` section of the configuration."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

# The engines oracle makes (oracle/store/engine.py), with an optional driver.
_SUPPORTED = re.compile(r"^(sqlite|postgresql)(\+[A-Za-z0-9_]+)?://")


class DatabaseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(
        "sqlite:///data/oracle.db",
        description="SQLAlchemy URL; shown with its credentials masked (oracle.core.urls).",
    )

    @field_validator("url")
    @classmethod
    def _supported(cls, value: str) -> str:
        if not _SUPPORTED.match(value):
            # Never echo the URL: it may hold a password.
            raise ValueError("must be a sqlite:/// or postgresql:// URL")
        return value
