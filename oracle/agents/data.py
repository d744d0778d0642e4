"""The `data` agent kind: deterministic answers for numeric rules, no language model.

A rule applies to markets by id or by a question pattern, and says "the value is above
(or below) a threshold". The agent reads every configured HTTP JSON endpoint (a value
path each, e.g. `data.rates[0].price`), takes the median of the values it got, and
answers the rule's outcome. Each endpoint read is recorded as a source. Fewer values than
`min_values`, or values further apart than `max_spread` (relative to the median), are an
agent failure rather than a guess; a market no answer to which can be final yet (the
rule the `llm` agent follows: `oracle.agents.question.too_early_reason`) gets
UNDETERMINED. The present is the venue's clock when this research began (`market.now`),
the agent's own clock only when the market does not say. Endpoint URLs may use
`{resolve_after}` (epoch seconds; the present when the market has none), `{resolve_date}`
(YYYY-MM-DD) and `{market_id}` to ask for the value at the market's time.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import SecretStr

from oracle.agents.base import PrivateSession, agent_result
from oracle.agents.classify import SourceClassifier
from oracle.agents.http import request_json
from oracle.agents.question import present, too_early_reason
from oracle.agents.settings import Comparison, DataAgentConfig, DataEndpoint, DataRule, parse_path
from oracle.core.models import UNDETERMINED, AgentResult, Market, ResearchSource
from oracle.errors import AgentError, ToolError
from oracle.scrub import scrub

logger = logging.getLogger(__name__)


def value_at(document: Any, path: tuple[str | int, ...]) -> float:
    """The number at `path`; ValueError names the step that failed."""
    current = document
    for step in path:
        if isinstance(current, list) and isinstance(step, int | str) and str(step).isdigit():
            index = int(step)
            if index >= len(current):
                raise ValueError(f"no item {index}")
            current = current[index]
        elif isinstance(step, str) and isinstance(current, dict) and step in current:
            current = current[step]
        else:
            raise ValueError(f"no {step!r} in the answer")
    if isinstance(current, bool) or not isinstance(current, int | float | str):
        raise ValueError(f"the value is {type(current).__name__}, not a number")
    try:
        number = float(str(current).replace(",", "").strip())
    except ValueError:
        raise ValueError(f"the value {current!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError("the value is not finite")
    return number


def _holds(value: float, comparison: Comparison, threshold: float) -> bool:
    match comparison:
        case "above":
            return value > threshold
        case "at_or_above":
            return value >= threshold
        case "below":
            return value < threshold
        case "at_or_below":
            return value <= threshold


class DataAgent:
    """Numeric rules over HTTP JSON endpoints (built by `oracle.app.build_agent`)."""

    kind = "data"

    def __init__(
        self,
        config: DataAgentConfig,
        *,
        session: PrivateSession,
        classifier: SourceClassifier,
        keys: Mapping[tuple[int, int], SecretStr | None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = config.name
        self.config = config
        self.provider: str | None = config.provider
        self.model_family: str | None = config.model_family
        self._session = session
        self._classifier = classifier
        self._keys = dict(keys)  # (rule index, endpoint index) -> its API key, if any
        self._clock = clock

    def _rule(self, market: Market) -> tuple[int, DataRule, float]:
        for index, rule in enumerate(self.config.rules):
            match = None
            if rule.question_pattern is not None:
                match = re.search(rule.question_pattern, market.question)
            if market.id in rule.market_ids or match is not None:
                threshold = rule.threshold
                if match is not None and "threshold" in match.groupdict():
                    raw = match.group("threshold") or ""
                    try:
                        threshold = float(raw.replace(",", "").replace("$", ""))
                    except ValueError:
                        raise AgentError(
                            f"rules[{index}]: threshold {raw!r} is not a number"
                        ) from None
                if threshold is None:
                    raise AgentError(f"rules[{index}]: no threshold")
                return index, rule, threshold
        raise AgentError(f"no data rule applies to market {market.id!r}")

    async def revise(
        self, market: Market, own: AgentResult, shown: Sequence[AgentResult], round_: int
    ) -> AgentResult:
        # Its answer follows from the data and its rules; other agents' words change neither.
        return own

    async def research(self, market: Market) -> AgentResult:
        now = present(market, self._clock())
        if (reason := too_early_reason(market, now)) is not None:
            return agent_result(self, UNDETERMINED, 1.0, reason, ())
        index, rule, threshold = self._rule(market)
        for outcome in (rule.outcome_if_true, rule.outcome_if_false):
            if not market.admits(outcome):
                raise AgentError(
                    f"rules[{index}]: outcome {outcome!r} is not one of the market's outcomes"
                )
        resolve_after = market.resolve_after if market.resolve_after is not None else now
        try:
            resolve_date = datetime.fromtimestamp(resolve_after, UTC).date().isoformat()
        except (OverflowError, ValueError, OSError):  # a venue may send any number
            raise AgentError(f"resolve_after {resolve_after:g} is no date") from None
        fields = {
            "resolve_after": int(resolve_after),
            "resolve_date": resolve_date,
            "market_id": market.id,
        }
        reads = await asyncio.gather(
            *(self._read(index, e, endpoint, fields) for e, endpoint in enumerate(rule.endpoints)),
            return_exceptions=True,
        )
        values: list[tuple[DataEndpoint, str, float]] = []
        problems: list[str] = []
        for endpoint, read in zip(rule.endpoints, reads, strict=True):
            label = endpoint.name or endpoint.url.split("/")[2]
            if isinstance(read, ToolError):
                problems.append(f"{label}: {read}")
            elif isinstance(read, Exception):
                # A bug met on this endpoint's data: that endpoint fails, loudly, not the agent.
                logger.error("data agent %s: endpoint %s raised", self.name, label, exc_info=read)
                problems.append(f"{label}: internal error ({type(read).__name__})")
            elif isinstance(read, BaseException):
                raise read
            else:
                values.append((endpoint, read[0], read[1]))
        needed = min(rule.min_values, len(rule.endpoints))
        if len(values) < needed:
            raise AgentError(
                f"only {len(values)} of {len(rule.endpoints)} endpoints answered, "
                f"{needed} needed: {'; '.join(problems)}"
            )
        numbers = [value for _, _, value in values]
        median = statistics.median(numbers)
        spread = (max(numbers) - min(numbers)) / abs(median) if median else 0.0
        if rule.max_spread is not None and spread > rule.max_spread:
            raise AgentError(
                f"endpoints disagree: values {', '.join(f'{v:g}' for v in numbers)} spread "
                f"{spread:.1%}, more than max_spread {rule.max_spread:.1%}"
            )
        holds = _holds(median, rule.comparison, threshold)
        agreeing = sum(_holds(v, rule.comparison, threshold) == holds for v in numbers)
        outcome = rule.outcome_if_true if holds else rule.outcome_if_false
        observed = datetime.fromtimestamp(now, UTC)
        sources = []
        for endpoint, url, value in values:
            classification = self._classifier.classify(url)
            sources.append(
                ResearchSource(
                    url=url,
                    title=f"{endpoint.name or 'endpoint'}: {endpoint.path} = {value:g}",
                    category=classification.category,
                    credibility_score=classification.credibility,
                    relevance_score=1.0,
                    published_at=observed,
                )
            )
        comparison = rule.comparison.replace("_", " ")
        reasoning = (
            f"median of {len(numbers)} endpoint values is {median:g} "
            f"({', '.join(f'{v:g}' for v in numbers)}); the rule asks whether it is "
            f"{comparison} {threshold:g}: {'yes' if holds else 'no'}, so {outcome}"
        )
        if problems:
            reasoning += f"; endpoints that failed: {'; '.join(problems)}"
        return agent_result(self, outcome, agreeing / len(numbers), reasoning, tuple(sources))

    async def _read(
        self, rule_index: int, endpoint_index: int, endpoint: DataEndpoint, fields: dict[str, Any]
    ) -> tuple[str, float]:
        url = endpoint.url.format(**fields)
        headers = {"Accept": "application/json"}
        key = self._keys[(rule_index, endpoint_index)]
        if key is not None and endpoint.api_key_header:
            headers[endpoint.api_key_header] = key.get_secret_value()
        document = await request_json(
            self._session(),
            endpoint.name or url.split("/")[2],
            "GET",
            url,
            headers=headers,
            timeout_seconds=self.config.timeout_seconds,
            max_retries=self.config.max_retries,
        )
        try:
            value = value_at(document, parse_path(endpoint.path))
        except ValueError as error:
            # The value is outside text: it may echo the endpoint's key (oracle.scrub).
            raise ToolError(f"{endpoint.path}: {scrub(str(error))}") from None
        scaled = value * endpoint.scale
        if not math.isfinite(scaled):
            raise ToolError(
                f"{endpoint.path}: the value times scale {endpoint.scale:g} is not finite"
            )
        return url, scaled

    async def aclose(self) -> None:
        await self._session.aclose()
