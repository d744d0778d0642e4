"""`search:` of an `llm` agent: one or more providers, each with its own settings."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field

from oracle.agents.search.base import SearchProvider, SessionFactory
from oracle.agents.search.feeds import FeedSearch
from oracle.agents.search.providers import BraveSearch, GdeltSearch, SearxngSearch, TavilySearch
from oracle.agents.secrets import SecretRef

Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


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


def build_search_provider(
    config: SearchConfig, session: SessionFactory, where: str
) -> SearchProvider:
    """A provider on `session`; keys are read now (ConfigError names `where` when missing)."""
    match config:
        case TavilyConfig():
            return TavilySearch(
                session,
                str(config.base_url),
                config.require(where),
                search_depth=config.search_depth,
                topic=config.topic,
                **config._http(),
            )
        case BraveConfig():
            return BraveSearch(
                session, str(config.base_url), config.require(where), **config._http()
            )
        case SearxngConfig():
            return SearxngSearch(session, str(config.base_url), **config._http())
        case GdeltConfig():
            return GdeltSearch(
                session, str(config.base_url), timespan=config.timespan, **config._http()
            )
        case FeedsConfig():
            return FeedSearch(
                session,
                [str(url) for url in config.feeds],
                timeout_seconds=config.timeout_seconds,
                cache_seconds=config.cache_seconds,
            )
