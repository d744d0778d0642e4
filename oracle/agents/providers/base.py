"""A provider-neutral conversation and the interface every chat model implements.

Contract of :class:`ChatModel`: `complete` sends the system prompt, the transcript and the
tool definitions, and returns the model's turn (text and tool calls) with the tokens it
used. When `answer_schema` is given the model is asked for structured output matching it;
`allow_tools=False` forbids tool calls but still declares the tools (some APIs refuse a
transcript with tool calls otherwise). Failures raise :class:`ModelError`, whose message
never contains the key or the server's echo of a request. Retries on 429 (honouring
Retry-After) and 5xx are the SDK's, bounded by `max_retries`.

A model server is outside data like any other. The SDKs decode every body they get with
`json.loads` (answers and error bodies alike), so their HTTP client (:func:`http_client`)
checks each body's nesting first; an answer itself is read from the raw body with
`oracle.safe_json` and taken apart with explicit checks, so a body in any other shape is a
ModelError, never an exception from deep inside the SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx2

from oracle.errors import JsonError, JsonTooDeep, ModelError
from oracle.safe_json import check_nesting, loads

# The most tokens one request may report; more is a broken server, not a big request.
MAX_REPORTED_TOKENS = 2**40


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it


@dataclass(frozen=True)
class Usage:
    """Tokens of one request as the server reported them; None where it reported no usable
    count (missing, negative, not an integer), which the agent then estimates."""

    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class ModelTurn:
    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    stop_reason: str = ""


@dataclass(frozen=True)
class UserText:
    text: str


@dataclass(frozen=True)
class AssistantTurn:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    content: str
    is_error: bool = False


Entry = UserText | AssistantTurn | ToolResult


class ChatModel(Protocol):
    provider: str
    model: str

    async def complete(
        self,
        system: str,
        transcript: Sequence[Entry],
        tools: Sequence[ToolSpec],
        *,
        max_output_tokens: int,
        allow_tools: bool = True,
        answer_schema: dict[str, Any] | None = None,
    ) -> ModelTurn: ...

    async def aclose(self) -> None: ...


def status_error(provider: str, status: int, error_type: str | None) -> ModelError:
    """A ModelError from an HTTP status; the server's message is left out on purpose
    (an authentication error may quote part of the key)."""
    detail = f" ({error_type})" if error_type and error_type.replace("_", "").isalnum() else ""
    return ModelError(f"{provider}: HTTP {status}{detail}")


def reported_tokens(*values: object) -> int | None:
    """The sum of token counts a server reported; None unless each is a whole number from 0
    to MAX_REPORTED_TOKENS (a missing count among several optional ones is given as 0)."""
    total = 0
    for value in values:
        whole = int(value) if isinstance(value, float) and value.is_integer() else value
        if isinstance(whole, bool) or not isinstance(whole, int):
            return None
        if not 0 <= whole <= MAX_REPORTED_TOKENS:
            return None
        total += whole
    return total


def estimate_tokens(*texts: str) -> int:
    """Tokens of `texts` when the server did not say: one per four bytes of UTF-8, which
    is about right for English and errs high for most other text."""
    return -(-sum(len(text.encode("utf-8", "surrogatepass")) for text in texts) // 4)


def entry_texts(entry: Entry) -> list[str]:
    """The strings an entry sends to the model."""
    match entry:
        case UserText():
            return [entry.text]
        case AssistantTurn():
            return [entry.text, *(part for c in entry.tool_calls for part in (c.name, c.arguments))]
        case ToolResult():
            return [entry.content]


def http_client(
    sdk_client: type[httpx2.AsyncClient], sdk_error: type[Exception]
) -> httpx2.AsyncClient:
    """An SDK's own default HTTP client (`openai.DefaultAsyncHttpxClient`, ...) that checks
    every response body before the SDK decodes it, raising `sdk_error` (a subclass of the
    SDK's own base error, which the SDK passes on as it is: no retry, no wrapping)."""

    async def refuse_deep_json(response: httpx2.Response) -> None:
        await response.aread()
        try:
            check_nesting(response.content)
        except JsonTooDeep as error:
            raise sdk_error(f"the answer is {error}") from None

    return sdk_client(event_hooks={"response": [refuse_deep_json]})


@dataclass(frozen=True)
class SdkFailures:
    """How an SDK fails, for `model_turn`: its exception classes (`timeout` before
    `connection`, of which it is a subclass in both SDKs; `any` is the SDK's base), the
    provider's `UnusableAnswer` (see `http_client`), and `status_of`, the HTTP status
    and error type of a `status` error (its body's shape is the provider's)."""

    unusable: type[Exception]
    status: type[Exception]
    status_of: Callable[[Any], tuple[int, object]]
    timeout: type[Exception]
    connection: type[Exception]
    any: type[Exception]


async def model_turn(
    provider: str,
    failures: SdkFailures,
    send: Callable[[], Awaitable[Any]],
    parse: Callable[[Any], ModelTurn],
) -> ModelTurn:
    """The turn in the answer to `send` (an SDK's `with_raw_response` call), its raw body
    decoded with `oracle.safe_json` and taken apart by `parse` (a ValueError says what is
    wrong); every failure on the way a ModelError naming `provider`, never quoting the
    server."""
    try:
        raw = await send()
        document = loads(raw.http_response.content)
    except JsonError as error:
        raise ModelError(f"{provider}: the answer is {error}") from None
    except failures.unusable as error:
        raise ModelError(f"{provider}: {error}") from None
    except failures.status as error:
        status, kind = failures.status_of(error)
        raise status_error(provider, status, str(kind) if kind else None) from None
    except failures.timeout:
        raise ModelError(f"{provider}: the request timed out") from None
    except failures.connection:
        raise ModelError(f"{provider}: cannot connect") from None
    except failures.any as error:
        raise ModelError(f"{provider}: {type(error).__name__}") from None
    try:
        return parse(document)
    except ValueError as problem:
        raise ModelError(f"{provider}: the answer {problem}") from None
