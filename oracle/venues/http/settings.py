"""Settings of a `market_sources[]` entry of kind `http`: a venue's own API and webhook.
A leaf: only the standard library, pydantic, the core and other settings."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
)

from oracle.core.urls import is_http_url


class HttpFieldMap(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = "id"
    question: str = "question"
    criteria: str = "criteria"
    outcomes: str = "outcomes"
    resolve_after: str = "resolve_after"


class HttpSourceConfig(BaseModel):
    """`market_sources[]` entry of kind `http`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=50, pattern=r"^[a-z0-9_-]+$")
    kind: Literal["http"]
    url: str
    result_url: str
    items_path: str = ""
    fields: HttpFieldMap = HttpFieldMap()
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    timeout_seconds: float = Field(10.0, gt=0, allow_inf_nan=False)

    @field_validator("url", "result_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not is_http_url(value):
            # Never echo the URL: a venue's may carry an API key.
            raise ValueError("must be an http:// or https:// URL with a host")
        return value
