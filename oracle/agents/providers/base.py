"""A provider-neutral conversation and the interface every chat model implements.

Contract of :class:`ChatModel`: `complete` sends the system prompt, the transcript and the
tool definitions, and returns the model's turn (text and tool calls) with the tokens it
used. When `answer_schema` is given the model is asked for structured output matching it;
`allow_tools=False` forbids tool calls but still declares the tools (some APIs refuse a
transcript with tool calls otherwise). Failures raise :class:`ModelError`, whose message
never contains the key or the server's echo of a request. Retries on 429 (honouring
Retry-After) and 5xx are the SDK's, bounded by `max_retries`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from oracle.errors import OracleError


class ModelError(OracleError):
    """The model's API failed; the message is safe to record."""


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
    input_tokens: int = 0
    output_tokens: int = 0


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
