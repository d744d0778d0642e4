"""Anthropic's Messages API through the official `anthropic` SDK: tool use, and
`output_config.format` with a JSON schema for the final answer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anthropic
from pydantic import SecretStr

from oracle.agents.providers.base import (
    AssistantTurn,
    Entry,
    ModelTurn,
    SdkFailures,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
    UserText,
    http_client,
    model_turn,
    reported_tokens,
)
from oracle.errors import JsonError
from oracle.safe_json import loads

NO_KEY = "no-key"


class UnusableAnswer(anthropic.AnthropicError):
    """A body the SDK must not decode (see `oracle.agents.providers.base.http_client`)."""


def _status(error: anthropic.APIStatusError) -> tuple[int, object]:
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else {}
    return error.status_code, inner.get("type") if isinstance(inner, dict) else None


FAILURES = SdkFailures(
    unusable=UnusableAnswer,
    status=anthropic.APIStatusError,
    status_of=_status,
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
    any=anthropic.AnthropicError,
)


class AnthropicMessages:
    def __init__(
        self,
        *,
        model: str,
        provider: str,
        api_key: SecretStr | None,
        base_url: str | None,
        temperature: float | None,
        timeout_seconds: float,
        max_retries: int,
    ) -> None:
        self.model = model
        self.provider = provider
        self._temperature = temperature
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key.get_secret_value() if api_key is not None else NO_KEY,
            base_url=base_url,
            timeout=timeout_seconds,
            max_retries=max_retries,
            http_client=http_client(anthropic.DefaultAsyncHttpxClient, UnusableAnswer),
        )

    def __repr__(self) -> str:
        return f"AnthropicMessages(model={self.model!r}, provider={self.provider!r})"

    @staticmethod
    def messages(transcript: Sequence[Entry]) -> list[dict[str, Any]]:
        """The transcript as alternating user/assistant messages of content blocks."""
        messages: list[dict[str, Any]] = []

        def add(role: str, block: dict[str, Any]) -> None:
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": role, "content": [block]})

        for entry in transcript:
            match entry:
                case UserText():
                    add("user", {"type": "text", "text": entry.text})
                case AssistantTurn():
                    if entry.text:
                        add("assistant", {"type": "text", "text": entry.text})
                    for call in entry.tool_calls:
                        try:
                            arguments = loads(call.arguments or "{}")
                        except JsonError:
                            arguments = {}
                        add(
                            "assistant",
                            {
                                "type": "tool_use",
                                "id": call.id,
                                "name": call.name,
                                "input": arguments if isinstance(arguments, dict) else {},
                            },
                        )
                case ToolResult():
                    add(
                        "user",
                        {
                            "type": "tool_result",
                            "tool_use_id": entry.call_id,
                            "content": entry.content,
                            "is_error": entry.is_error,
                        },
                    )
        # Tool results must come first in their user message.
        for message in messages:
            if message["role"] == "user":
                message["content"].sort(key=lambda block: block["type"] != "tool_result")
        return messages

    async def complete(
        self,
        system: str,
        transcript: Sequence[Entry],
        tools: Sequence[ToolSpec],
        *,
        max_output_tokens: int,
        allow_tools: bool = True,
        answer_schema: dict[str, Any] | None = None,
    ) -> ModelTurn:
        request: dict[str, Any] = {
            "model": self.model,
            "system": system,
            "messages": self.messages(transcript),
            "max_tokens": max_output_tokens,
        }
        if tools:
            request["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]
            request["tool_choice"] = {"type": "auto" if allow_tools else "none"}
        if answer_schema is not None:
            request["output_config"] = {"format": {"type": "json_schema", "schema": answer_schema}}
        if self._temperature is not None:
            # Not a typed parameter of this SDK version; the API still reads it.
            request["extra_body"] = {"temperature": self._temperature}
        return await model_turn(
            self.provider,
            FAILURES,
            lambda: self._client.messages.with_raw_response.create(**request),
            parse_message,
        )

    async def aclose(self) -> None:
        await self._client.close()


def parse_message(document: Any) -> ModelTurn:
    """A Messages API answer (decoded JSON) as a ModelTurn; ValueError says what is wrong.
    Blocks of other types (thinking, ...) are skipped."""
    if not isinstance(document, dict):
        raise ValueError("is not a JSON object")
    content = document.get("content")
    if not isinstance(content, list):
        raise ValueError("has no content list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict) or not isinstance(kind, str):
            raise ValueError(f"has content block {index} without a type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise ValueError(f"has text block {index} without text")
            texts.append(text)
        elif kind == "tool_use":
            call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
            if not isinstance(name, str) or not name or not isinstance(arguments, dict):
                raise ValueError(f"has tool_use block {index} without a name or an input")
            calls.append(
                ToolCall(
                    id=call_id if isinstance(call_id, str) and call_id else f"toolu_{index}",
                    name=name,
                    arguments=json.dumps(arguments),
                )
            )
    usage = document.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    stop = document.get("stop_reason")
    return ModelTurn(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(
            input_tokens=reported_tokens(
                usage.get("input_tokens"),
                usage.get("cache_creation_input_tokens") or 0,
                usage.get("cache_read_input_tokens") or 0,
            ),
            output_tokens=reported_tokens(usage.get("output_tokens")),
        ),
        stop_reason=stop if isinstance(stop, str) else "",
    )
