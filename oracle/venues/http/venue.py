"""Off-chain venues over HTTP: a JSON market list to poll, and a webhook for answers.

The market list is any JSON document holding a list of market objects at `items_path`
(a dot path; empty for the top level). `fields` names where each market keeps its id,
question, criteria, outcomes and resolution time (epoch seconds or ISO 8601). A market
missing a field is skipped with a line that names it; the others still count.

Answers are POSTed to `result_url` as JSON with an `Idempotency-Key` header
(`<market id>:<proof checksum>`), so a venue can ignore a repeat after a crash. A refusal
(not 2xx) is a `ResolverError` naming the status and the start of the venue's answer
(`MAX_REFUSAL_CHARS`, the configured header values masked): a 4xx other than 408, 425 and
429 is the venue refusing this answer for good (`oracle.core.failures.classify_status`),
so a person looks at once; a 5xx and those three are retried.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import aiohttp

from oracle import safe_json
from oracle.core.failures import FailureKind, classify_status
from oracle.core.markets import MarketSpec
from oracle.core.timing import venue_window
from oracle.daemon.ports import (
    Deliver,
    MarketRef,
    PollResult,
    Receipt,
    Resolution,
    ResolutionStatus,
)
from oracle.errors import JsonError, ResolverError, SourceError
from oracle.venues.http.settings import HttpSourceConfig

MAX_MARKET_LIST_BYTES = 20 * 1024 * 1024
# How much of a refusing webhook's answer is read, and quoted in the error.
MAX_REFUSAL_BYTES = 4096
MAX_REFUSAL_CHARS = 300


def _dig(document: Any, path: str) -> Any:
    for part in [p for p in path.split(".") if p]:
        if not isinstance(document, dict) or part not in document:
            raise KeyError(path)
        document = document[part]
    return document


def _epoch(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("not a time")
    if isinstance(value, int | float):
        seconds = float(value) if abs(value) < 1e300 else math.inf  # no OverflowError
        if not math.isfinite(seconds):
            raise ValueError("not a time")
        return seconds
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise ValueError("an ISO 8601 time needs a time zone")
        return parsed.timestamp()
    raise ValueError("not a time")


def parse_market_list(config: HttpSourceConfig, document: Any) -> PollResult:
    """The markets in a venue's JSON document; malformed entries skipped and named."""
    try:
        items = _dig(document, config.items_path)
    except KeyError:
        raise SourceError(
            f"source {config.name}: no `{config.items_path}` in the response"
        ) from None
    if not isinstance(items, list):
        raise SourceError(f"source {config.name}: `{config.items_path or '(top)'}` is not a list")
    fields = config.fields
    markets, skipped = [], []
    for index, item in enumerate(items):
        where = f"source {config.name}: item {index}"
        try:
            external_id = str(_dig(item, fields.id))
            question = _dig(item, fields.question)
            if not isinstance(question, str) or not question.strip():
                raise ValueError(f"`{fields.question}` is not a non-empty string")
            try:
                outcomes = _dig(item, fields.outcomes)
            except KeyError:
                outcomes = ["YES", "NO"]
            if not (isinstance(outcomes, list) and all(isinstance(o, str) for o in outcomes)):
                raise ValueError(f"`{fields.outcomes}` is not a list of strings")
            try:
                criteria = str(_dig(item, fields.criteria))
            except KeyError:
                criteria = ""
            resolve_after = _epoch(_dig(item, fields.resolve_after))
        except KeyError as missing:
            skipped.append(f"{where}: missing `{missing.args[0]}`")
            continue
        except ValueError as error:
            skipped.append(f"{where}: {error}")
            continue
        markets.append(
            MarketSpec(
                source=config.name,
                external_id=external_id,
                question=question.strip(),
                criteria=criteria,
                outcomes=tuple(outcomes),
                resolve_after=resolve_after,
                window=venue_window(resolve_after, f"the source's `{fields.resolve_after}`"),
            )
        )
    return PollResult(markets, skipped)


def _failure(error: BaseException) -> str:
    """Why a request failed, without aiohttp's message: some quote the URL, which may
    hold the venue's API key."""
    if isinstance(error, aiohttp.ClientConnectorError):
        return f"cannot connect ({error.os_error.strerror or type(error.os_error).__name__})"
    if isinstance(error, TimeoutError):
        return "timed out"
    return type(error).__name__


class _VenueClient:
    """One private HTTP session per venue object, with the venue's headers and timeout."""

    def __init__(self, config: HttpSourceConfig) -> None:
        self.config = config
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers={k: v.get_secret_value() for k, v in self.config.headers.items()},
                timeout=aiohttp.ClientTimeout(total=self.config.timeout_seconds),
            )
        return self._session

    async def start(self) -> None:
        """Nothing to check before the first request: a venue that is down fails a poll
        or a delivery, which is retried."""

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class HttpMarketSource(_VenueClient):
    def __init__(self, config: HttpSourceConfig) -> None:
        super().__init__(config)
        self.name = config.name

    async def poll(self, deliver: Deliver) -> list[str]:
        try:
            async with self._client().get(self.config.url) as response:
                if response.status != 200:
                    raise SourceError(
                        f"source {self.name}: HTTP {response.status} from the market list"
                    )
                body = bytearray()
                async for chunk in response.content.iter_chunked(65536):
                    body += chunk
                    if len(body) > MAX_MARKET_LIST_BYTES:
                        raise SourceError(f"source {self.name}: market list larger than 20 MB")
        except (aiohttp.ClientError, TimeoutError) as error:
            raise SourceError(f"source {self.name}: {_failure(error)}") from None
        try:
            document = safe_json.loads(body)
        except JsonError as error:
            raise SourceError(f"source {self.name}: the market list is {error}") from None
        result = parse_market_list(self.config, document)
        await deliver(result.markets)
        return result.skipped


class WebhookResolver(_VenueClient):
    """Delivers answers for an HTTP venue's markets to its `result_url`."""

    async def propose(self, market: MarketRef, outcome: str, proof_checksum: str) -> Receipt:
        payload = {
            "market_id": market.external_id,
            "outcome": outcome,
            "proof_checksum": proof_checksum,
        }
        key = f"{market.external_id}:{proof_checksum}"
        try:
            async with self._client().post(
                self.config.result_url, json=payload, headers={"Idempotency-Key": key}
            ) as response:
                if 200 <= response.status < 300:
                    # Accepted by the venue: no challenge window of ours to wait out.
                    return Receipt(reference=f"webhook:{key}", final_after=0.0)
                said = await self._refusal_text(response)
                raise ResolverError(
                    f"source {self.config.name}: result webhook answered HTTP "
                    f"{response.status}" + (f": {said}" if said else ""),
                    retryable=classify_status(response.status) is FailureKind.TRANSIENT,
                )
        except (aiohttp.ClientError, TimeoutError) as error:
            raise ResolverError(
                f"source {self.config.name}: result webhook failed: {type(error).__name__}"
            ) from None

    async def _refusal_text(self, response: aiohttp.ClientResponse) -> str:
        """The start of a refusing venue's answer, as text: at most MAX_REFUSAL_BYTES read,
        MAX_REFUSAL_CHARS kept, white space made single spaces, and every configured
        header value (an API key the venue may echo) masked. Escaped where it is shown."""
        try:
            raw = await response.content.read(MAX_REFUSAL_BYTES)
        except (aiohttp.ClientError, TimeoutError):
            return ""
        text = " ".join(raw.decode("utf-8", errors="replace").split())
        for value in self.config.headers.values():
            secret = value.get_secret_value()
            # The whole value, then each long part of it ("Bearer <token>": the token).
            for part in sorted({secret, *secret.split()}, key=len, reverse=True):
                if part == secret or len(part) >= 8:
                    text = text.replace(part, "***") if part else text
        if len(text) > MAX_REFUSAL_CHARS:
            text = text[:MAX_REFUSAL_CHARS] + "..."
        return text

    async def state(self, market: MarketRef) -> Resolution:
        # A venue that accepted the answer has no challenge window of ours to wait for.
        return Resolution(ResolutionStatus.FINAL)

    async def settle(self, market: MarketRef) -> str | None:
        return None
