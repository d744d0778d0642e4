"""Settings of the research agents (`agents:` in config.yaml): one model per kind, with
everything that kind is configured by (search providers, page reading, source
classification, budgets, prices, data rules, API key references).

A leaf: it imports the standard library, pydantic, the core and `oracle.errors` only, so
the configuration can be read, checked and printed without importing a model SDK or an
HTTP client. The objects these settings describe are built by the composition root,
`oracle.app`.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from oracle.core.families import infer_model_family, infer_provider
from oracle.core.models import DATA, NO, WEB, YES
from oracle.errors import ConfigError

AgentName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
EnvName = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class SecretRef(BaseModel):
    """Where an API key comes from: `api_key_env` (a variable's name) or `api_key_file` (a
    path), never inline. The key is read when the agent is built and held as a
    `SecretStr`, so it never appears in a repr, a log line, an error message or
    `oracle config check`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_key_env: EnvName | None = None
    api_key_file: Path | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SecretRef:
        if self.api_key_env is not None and self.api_key_file is not None:
            raise ValueError("set api_key_env or api_key_file, not both")
        return self

    @property
    def configured(self) -> bool:
        return self.api_key_env is not None or self.api_key_file is not None

    def resolve(self, where: str) -> SecretStr | None:
        """The key, or None when none is configured; ConfigError names `where` and the field."""
        if self.api_key_env is not None:
            value = os.environ.get(self.api_key_env, "").strip()
            if not value:
                raise ConfigError(
                    f"{where}.api_key_env: environment variable {self.api_key_env} is not set"
                )
            return SecretStr(value)
        if self.api_key_file is not None:
            try:
                value = self.api_key_file.read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                raise ConfigError(
                    f"{where}.api_key_file: {self.api_key_file}: no such file"
                ) from None
            except (OSError, UnicodeDecodeError) as error:
                reason = getattr(error, "strerror", None) or type(error).__name__
                raise ConfigError(
                    f"{where}.api_key_file: {self.api_key_file}: cannot be read ({reason})"
                ) from None
            if not value:
                raise ConfigError(f"{where}.api_key_file: {self.api_key_file} is empty")
            return SecretStr(value)
        return None

    def require(self, where: str) -> SecretStr:
        secret = self.resolve(where)
        if secret is None:
            raise ConfigError(f"{where}: needs api_key_env or api_key_file")
        return secret


IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class PageSettings(BaseModel):
    """`pages:` of an agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_bytes: int = Field(3_000_000, ge=1024, description="Largest page read, in bytes.")
    timeout_seconds: Seconds = Field(20.0, description="Whole fetch, redirects included.")
    connect_timeout_seconds: Seconds = 5.0
    max_redirects: int = Field(5, ge=0, le=20)
    content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml", "text/plain")
    allow_private_addresses: bool = Field(
        False, description="Tests only: fetch private, loopback and link-local addresses."
    )
    allowed_networks: tuple[IpNetwork, ...] = Field(
        (), description="Tests only: networks exempt from the private-address block."
    )
    max_text_chars: int = Field(200_000, ge=1000, description="Extracted text kept per page.")
    user_agent: str = "oracle-research-agent/0.1 (+https://github.com/oracle)"


Credibility = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class DomainRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    domains: tuple[str, ...] = Field(min_length=1)
    category: str = Field(min_length=1)
    credibility: Credibility

    @field_validator("domains")
    @classmethod
    def _domains_clean(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = []
        for domain in value:
            item = domain.strip().lower().lstrip("*").strip(".")
            if not item or "/" in item or ":" in item or " " in item:
                raise ValueError(f"{domain!r} is not a domain (write e.g. gov.uk or reuters.com)")
            cleaned.append(item)
        return tuple(cleaned)

    @field_validator("category")
    @classmethod
    def _category_lower(cls, value: str) -> str:
        return value.strip().lower()


class ClassificationSettings(BaseModel):
    """`classification:` of an agent: domain rules and the defaults for unknown hosts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: tuple[DomainRule, ...] = ()
    replace_default_rules: bool = False
    default_category: str = WEB
    default_credibility: Credibility = 0.4


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_seconds: Seconds = 15.0
    max_retries: int = Field(2, ge=0, le=5, description="Retries after a 429 or a 5xx.")
    max_retry_wait_seconds: Seconds = Field(
        10.0, description="A Retry-After longer than this fails the search instead."
    )

    def _http(self) -> dict[str, Any]:
        return {
            "timeout_seconds": self.timeout_seconds,
            "max_retries": self.max_retries,
            "max_retry_wait_seconds": self.max_retry_wait_seconds,
        }


class TavilyConfig(_Common, SecretRef):
    kind: Literal["tavily"]
    base_url: AnyHttpUrl = AnyHttpUrl("https://api.tavily.com")
    search_depth: Literal["basic", "advanced"] = "basic"
    topic: Literal["general", "news", "finance"] = "general"


class BraveConfig(_Common, SecretRef):
    kind: Literal["brave"]
    base_url: AnyHttpUrl = AnyHttpUrl("https://api.search.brave.com/res/v1/web/search")


class SearxngConfig(_Common):
    kind: Literal["searxng"]
    base_url: AnyHttpUrl


class GdeltConfig(_Common):
    kind: Literal["gdelt"]
    base_url: AnyHttpUrl = AnyHttpUrl("https://api.gdeltproject.org/api/v2/doc/doc")
    timespan: str | None = Field(None, description="GDELT timespan, e.g. 3months; default all.")


class FeedsConfig(_Common):
    kind: Literal["rss"]
    feeds: tuple[AnyHttpUrl, ...] = Field(min_length=1)
    cache_seconds: float = Field(300.0, ge=0, allow_inf_nan=False)


SearchConfig = Annotated[
    TavilyConfig | BraveConfig | SearxngConfig | GdeltConfig | FeedsConfig,
    Field(discriminator="kind"),
]


_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
Comparison = Literal["above", "at_or_above", "below", "at_or_below"]


def parse_path(path: str) -> tuple[str | int, ...]:
    """`data.rates[0].price` -> ("data", "rates", 0, "price"); ValueError when malformed."""
    tokens: list[str | int] = []
    position = 0
    text = path.strip().removeprefix("$").lstrip(".")
    while position < len(text):
        if text[position] == ".":
            position += 1
            continue
        match = _PATH_TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"cannot read the path at {text[position:]!r}")
        tokens.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        position = match.end()
    if not tokens:
        raise ValueError("the path is empty")
    return tuple(tokens)


class DataEndpoint(SecretRef):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    url: str = Field(min_length=1)
    path: str
    scale: float = Field(1.0, allow_inf_nan=False, description="Multiply the value by this.")
    api_key_header: str | None = Field(None, description="Header that carries the key.")

    @field_validator("url")
    @classmethod
    def _url_template(cls, value: str) -> str:
        try:
            AnyHttpUrl(value.format(resolve_after=0, resolve_date="2000-01-01", market_id="m"))
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(
                f"not an http(s) URL template ({error}); placeholders: "
                "{resolve_after}, {resolve_date}, {market_id}"
            ) from None
        return value

    @field_validator("path")
    @classmethod
    def _path_valid(cls, value: str) -> str:
        parse_path(value)
        return value

    @model_validator(mode="after")
    def _key_has_header(self) -> DataEndpoint:
        if self.configured and not self.api_key_header:
            raise ValueError("api_key_header is required with api_key_env or api_key_file")
        return self


class DataRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    market_ids: tuple[str, ...] = ()
    question_pattern: str | None = Field(
        None, description="Regex on the question; a group named `threshold` sets it."
    )
    comparison: Comparison = "above"
    threshold: float | None = Field(None, allow_inf_nan=False)
    outcome_if_true: str = YES
    outcome_if_false: str = NO
    endpoints: tuple[DataEndpoint, ...] = Field(min_length=1)
    min_values: int = Field(2, ge=1, description="Capped at the number of endpoints.")
    max_spread: float | None = Field(0.05, ge=0, allow_inf_nan=False)

    @field_validator("question_pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"not a regular expression ({error})") from None
        return value

    @model_validator(mode="after")
    def _matchable(self) -> DataRule:
        if not self.market_ids and self.question_pattern is None:
            raise ValueError("set market_ids or question_pattern")
        takes_threshold = (
            self.question_pattern is not None
            and "threshold" in re.compile(self.question_pattern).groupindex
        )
        if self.threshold is None and not takes_threshold:
            raise ValueError(
                "threshold: required unless question_pattern has a (?P<threshold>...) group"
            )
        return self


class DataAgentConfig(BaseModel):
    """A deterministic agent (see this module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: AgentName
    kind: Literal["data"]
    rules: tuple[DataRule, ...] = Field(min_length=1)
    timeout_seconds: Seconds = 15.0
    max_retries: int = Field(2, ge=0, le=5)
    provider: str = "http"
    model_family: str = "data"
    classification: ClassificationSettings = ClassificationSettings(default_category=DATA)


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tool_calls: int = Field(12, ge=0, le=500)
    max_tokens: int = Field(
        80_000, ge=1000, description="Input plus output tokens of the research loop."
    )
    max_output_tokens: int = Field(2048, ge=64, description="Per model request.")
    wall_seconds: Seconds = 240.0
    answer_reserve_seconds: float = Field(
        30.0, ge=0, allow_inf_nan=False, description="Research stops this long before the end."
    )

    @model_validator(mode="after")
    def _reserve_fits(self) -> Budget:
        if self.answer_reserve_seconds >= self.wall_seconds:
            raise ValueError("answer_reserve_seconds must be less than wall_seconds")
        return self


class Pricing(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_million_tokens: float = Field(0.0, ge=0, allow_inf_nan=False)
    output_per_million_tokens: float = Field(0.0, ge=0, allow_inf_nan=False)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million_tokens
            + output_tokens * self.output_per_million_tokens
        ) / 1_000_000


class LlmAgentConfig(SecretRef):
    """An agent driven by a language model (see this module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: AgentName
    kind: Literal["llm"]
    api: Literal["openai", "anthropic"] = "openai"
    base_url: AnyHttpUrl | None = Field(
        None, description="OpenAI-compatible endpoint (vLLM, Ollama, OpenRouter, ...)."
    )
    model: str = Field(min_length=1)
    model_family: str | None = Field(None, description="Default: inferred from the model name.")
    provider: str | None = Field(None, description="Default: the API or the endpoint's host.")
    temperature: float | None = Field(0.2, ge=0.0, le=2.0, allow_inf_nan=False)
    persona: str = Field("", max_length=2000)
    request_timeout_seconds: Seconds = 90.0
    max_retries: int = Field(2, ge=0, le=10, description="SDK retries (429, 5xx).")
    output_token_field: Literal["max_tokens", "max_completion_tokens"] = "max_completion_tokens"
    budget: Budget = Budget()
    pricing: Pricing = Pricing()
    search: tuple[SearchConfig, ...] = Field(min_length=1)
    max_results_per_search: int = Field(8, ge=1, le=50)
    read_chars: int = Field(6000, ge=500, le=100_000, description="Text per page read.")
    pages: PageSettings = PageSettings()
    classification: ClassificationSettings = ClassificationSettings()

    @property
    def family(self) -> str:
        return self.model_family or infer_model_family(self.model)

    @property
    def provider_name(self) -> str:
        return self.provider or infer_provider(
            self.api, str(self.base_url) if self.base_url else None
        )


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
