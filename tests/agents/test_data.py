"""The `data` agent: median of several JSON endpoints against a threshold, no model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from oracle.agents.data import value_at
from oracle.agents.metrics import AgentMetrics
from oracle.agents.settings import DataAgentConfig, parse_path
from oracle.app import build_agent
from oracle.core.models import AgentResult, Market
from oracle.core.timing import AnswerWindow
from oracle.errors import AgentError

from .fakes import Internet, serve

NOW = 1_735_700_000.0
MARKET = Market(
    id="btc-100k",
    question="Will the price of BTC be above $100,000 on December 31, 2024?",
    resolve_after=NOW - 60,
)


def rule(
    internet: Internet, names: tuple[str, ...] = ("a", "b", "c"), **extra: Any
) -> dict[str, Any]:
    paths = {"a": "data.price", "b": "result[0].last", "broken": "x"}
    return {
        "question_pattern": r"BTC be above \$(?P<threshold>[\d,]+)",
        "endpoints": [
            {
                "name": name,
                "url": f"{internet.url}/data/{name}?date={{resolve_date}}",
                "path": paths.get(name, "price"),
            }
            for name in names
        ],
        **extra,
    }


def run(rules: Any, market: Market = MARKET, clock: float = NOW) -> AgentResult | AgentError:
    internet = Internet()

    async def main() -> AgentResult | AgentError:
        async with serve(internet):
            document = {
                "name": "prices",
                "kind": "data",
                "rules": rules(internet),
                "max_retries": 0,
            }
            agent = build_agent(
                DataAgentConfig.model_validate(document), AgentMetrics(), clock=lambda: clock
            )
            try:
                return await agent.research(market)
            except AgentError as error:
                return error
            finally:
                await agent.aclose()

    return asyncio.run(main())


def test_median_of_endpoints_decides_and_each_endpoint_is_a_source() -> None:
    result = run(lambda i: [rule(i)])
    assert isinstance(result, AgentResult), result
    assert result.outcome == "YES"  # median 101500.5 > 100000
    assert result.confidence == pytest.approx(2 / 3)  # 99000 is below
    assert result.provider == "http"
    assert result.model_family == "data"
    assert [s.title for s in result.sources] == [
        "a: data.price = 101500",
        "b: result[0].last = 101900",
        "c: price = 99000",
    ]
    assert all(s.url.endswith("?date=2025-01-01") for s in result.sources)
    assert {s.category for s in result.sources} == {"data"}
    assert result.reasoning.startswith("median of 3 endpoint values is 101500")


def test_configured_threshold_and_comparison() -> None:
    result = run(
        lambda i: [
            {
                **rule(i),
                "question_pattern": None,
                "market_ids": ["btc-100k"],
                "threshold": 105000,
                "comparison": "at_or_below",
            }
        ]
    )
    assert isinstance(result, AgentResult)
    assert result.outcome == "YES"
    assert result.confidence == 1.0


def test_failed_endpoints_are_tolerated_down_to_min_values() -> None:
    result = run(lambda i: [rule(i, ("a", "broken", "b"))])
    assert isinstance(result, AgentResult), result
    assert "endpoints that failed: broken: broken: HTTP 503" in result.reasoning
    failure = run(lambda i: [rule(i, ("a", "broken"), min_values=2)])
    assert isinstance(failure, AgentError)
    assert str(failure) == "only 1 of 2 endpoints answered, 2 needed: broken: broken: HTTP 503"


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("huge-number", "huge-number: huge-number: the answer is not usable JSON (a number has"),
        ("object-price", "object-price: price: the value is dict, not a number"),
        ("largest-float", "largest-float: price: the value times scale 10 is not finite"),
    ],
)
def test_a_value_the_agent_cannot_use_fails_that_endpoint_only(name: str, problem: str) -> None:
    def rules(internet: Internet) -> list[dict[str, Any]]:
        document = rule(internet, ("a", "b", name), min_values=2)
        document["endpoints"][2]["scale"] = 10
        return [document]

    result = run(rules)
    assert isinstance(result, AgentResult), result
    assert result.outcome == "YES"
    assert f"endpoints that failed: {problem}" in result.reasoning


def test_disagreeing_endpoints_fail_instead_of_guessing() -> None:
    result = run(lambda i: [rule(i, ("a", "far"))])
    assert isinstance(result, AgentError)
    assert "endpoints disagree: values 101500, 150000 spread" in str(result)


def test_too_early_and_unmatched_markets() -> None:
    early = run(lambda i: [rule(i)], clock=NOW - 3600)
    assert isinstance(early, AgentResult)
    assert early.outcome == "UNDETERMINED"
    assert early.reasoning.startswith("too early")
    other = run(lambda i: [rule(i)], market=Market(id="x", question="Will it rain?"))
    assert isinstance(other, AgentError)
    assert str(other) == "no data rule applies to market 'x'"


def test_the_venues_time_is_the_present_not_the_agents_clock() -> None:
    # The agent's clock is an hour before resolve_after; the venue's is past it.
    venue_now = NOW + 86400
    result = run(
        lambda i: [rule(i)], market=MARKET.model_copy(update={"now": venue_now}), clock=NOW - 3600
    )
    assert isinstance(result, AgentResult), result
    assert result.outcome == "YES"
    assert {s.published_at.timestamp() for s in result.sources if s.published_at} == {venue_now}
    # And the other way round: the venue's clock says too early, whatever the agent's.
    early = run(lambda i: [rule(i)], market=MARKET.model_copy(update={"now": NOW - 3600}))
    assert isinstance(early, AgentResult), early
    assert (early.outcome, early.sources) == ("UNDETERMINED", ())
    # With no resolve_after, the values asked for are those of the venue's present.
    undated = MARKET.model_copy(update={"resolve_after": None, "now": 1_700_000_000.0})
    dated = run(lambda i: [rule(i)], market=undated)
    assert isinstance(dated, AgentResult), dated
    assert all(s.url.endswith("?date=2023-11-14") for s in dated.sources)


def test_a_window_not_open_yet_is_undetermined() -> None:
    window = AnswerWindow(
        opens_at=NOW + 3600, closes_at=NOW + 7200, origin="question", evidence="on January 1"
    )
    market = MARKET.model_copy(update={"window": window, "now": NOW})
    result = run(lambda i: [rule(i)], market=market)
    assert isinstance(result, AgentResult), result
    assert result.outcome == "UNDETERMINED"
    assert result.reasoning.startswith("not yet: the event cannot happen before ")
    assert "question: on January 1" in result.reasoning


@pytest.mark.parametrize("resolve_after", [1e12, -1e12, 2.0**64])
def test_a_due_time_no_calendar_holds_is_no_crash(resolve_after: float) -> None:
    market = MARKET.model_copy(update={"resolve_after": resolve_after})
    result = run(lambda i: [rule(i)], market=market)
    if resolve_after > 0:
        assert isinstance(result, AgentResult)
        assert result.reasoning.startswith("too early")
    else:
        assert isinstance(result, AgentError)
        assert "resolve_after" in str(result)


def test_paths() -> None:
    assert parse_path("$.data.rates[0].price") == ("data", "rates", 0, "price")
    assert value_at({"a": [{"b": "1,234.5"}]}, parse_path("a.0.b")) == 1234.5
    with pytest.raises(ValueError, match="no 'c' in the answer"):
        value_at({"a": 1}, parse_path("c"))
    with pytest.raises(ValueError, match="not a number"):
        value_at({"a": True}, parse_path("a"))


def test_config_errors_name_the_field() -> None:
    base = {"name": "d", "kind": "data"}
    with pytest.raises(ValidationError, match="set market_ids or question_pattern"):
        DataAgentConfig.model_validate(
            {**base, "rules": [{"threshold": 1, "endpoints": [{"url": "http://x/", "path": "a"}]}]}
        )
    with pytest.raises(ValidationError, match=r"threshold: required unless question_pattern"):
        DataAgentConfig.model_validate(
            {
                **base,
                "rules": [{"market_ids": ["m"], "endpoints": [{"url": "http://x/", "path": "a"}]}],
            }
        )
    with pytest.raises(ValidationError, match=r"not an http\(s\) URL template"):
        DataAgentConfig.model_validate(
            {
                **base,
                "rules": [
                    {
                        "market_ids": ["m"],
                        "threshold": 1,
                        "endpoints": [{"url": "http://x/{oops}", "path": "a"}],
                    }
                ],
            }
        )
    agent = build_agent(
        DataAgentConfig.model_validate(
            {
                **base,
                "rules": [
                    {
                        "market_ids": ["m"],
                        "threshold": 1,
                        "endpoints": [{"url": "http://x/", "path": "a"}],
                    }
                ],
            }
        ),
        AgentMetrics(),
    )
    assert agent.kind == "data"
