"""JSON over HTTP for search providers and data endpoints: bounded, retried on 429.

Errors name the service and the problem, never a header or a key.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections.abc import Mapping
from typing import Any

import aiohttp

from oracle.errors import JsonError, JsonTooDeep, RateLimited, ToolError
from oracle.safe_json import loads
from oracle.scrub import scrub

MAX_JSON_BYTES = 5_000_000


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header (seconds or an HTTP date); None when absent or bad."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        try:
            seconds = email.utils.mktime_tz(parsed) - (time.time() if now is None else now)
        except (ValueError, OverflowError):  # a year beyond 9999
            return None
    return None if math.isnan(seconds) else max(seconds, 0.0)


async def request_json(
    session: aiohttp.ClientSession,
    service: str,
    method: str,
    url: str,
    *,
    params: Mapping[str, str | int] | None = None,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
    timeout_seconds: float = 15.0,
    max_retries: int = 2,
    max_retry_wait_seconds: float = 10.0,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """The decoded JSON body; ToolError (RateLimited for 429) naming `service` otherwise."""
    for attempt in range(max_retries + 1):
        try:
            async with asyncio.timeout(timeout_seconds):
                async with session.request(
                    method,
                    url,
                    params=params,
                    json=json_body,
                    headers=headers,
                    allow_redirects=False,
                ) as response:
                    if response.status == 429:
                        wait = retry_after_seconds(response.headers.get("Retry-After"))
                        wait = 1.0 * 2**attempt if wait is None else wait
                        if attempt == max_retries or wait > max_retry_wait_seconds:
                            raise RateLimited(
                                f"{service}: rate limited (429), retry after {wait:g} s"
                            )
                        await asyncio.sleep(wait)
                        continue
                    if response.status >= 500 and attempt < max_retries:
                        await asyncio.sleep(0.5 * 2**attempt)
                        continue
                    if response.status != 200:
                        raise ToolError(f"{service}: HTTP {response.status}")
                    body = await read_capped(response, max_bytes, f"{service}: the answer")
        except TimeoutError:
            raise ToolError(f"{service}: timed out after {timeout_seconds:g} s") from None
        except aiohttp.ClientError as error:
            raise ToolError(f"{service}: {type(error).__name__}") from None
        try:
            return loads(body)
        except JsonError as error:
            first_line = body[:200].decode("utf-8", "replace").strip().splitlines()
            # The body is outside text: a provider may echo the key it was sent.
            hint = (
                f"; it begins: {scrub(first_line[0])}"
                if first_line and not isinstance(error, JsonTooDeep)
                else ""
            )
            raise ToolError(f"{service}: the answer is {error}{hint}") from None
    raise ToolError(f"{service}: no answer")  # pragma: no cover (the loop always returns)


async def read_capped(response: aiohttp.ClientResponse, max_bytes: int, what: str) -> bytes:
    """The whole body (decompressed), or ToolError "`what` is larger than the cap" as soon
    as it passes `max_bytes`: a declared length is refused before reading."""
    too_large = ToolError(f"{what} is larger than the {max_bytes}-byte cap")
    if response.content_length is not None and response.content_length > max_bytes:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(65536):
        size += len(chunk)
        if size > max_bytes:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)
