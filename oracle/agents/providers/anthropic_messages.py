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
    ModelError,
    ModelTurn,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
    UserText,
    status_error,
)

NO_KEY = "no-key"


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
                            arguments = json.loads(call.arguments or "{}")
                        except json.JSONDecodeError:
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
        try:
            response = await self._client.messages.create(**request)
        except anthropic.APIStatusError as error:
            body = error.body if isinstance(error.body, dict) else {}
            inner = body.get("error") if isinstance(body.get("error"), dict) else {}
            kind = inner.get("type") if isinstance(inner, dict) else None
            raise status_error(
                self.provider, error.status_code, str(kind) if kind else None
            ) from None
        except anthropic.APITimeoutError:
            raise ModelError(f"{self.provider}: the request timed out") from None
        except anthropic.APIConnectionError:
            raise ModelError(f"{self.provider}: cannot connect") from None
        except anthropic.AnthropicError as error:
            raise ModelError(f"{self.provider}: {type(error).__name__}") from None
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in response.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(
                    ToolCall(
                        id=block.id,
                        name=block.name,
                        arguments=json.dumps(block.input, ensure_ascii=False),
                    )
                )
        usage = response.usage
        input_tokens = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        return ModelTurn(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=Usage(input_tokens=input_tokens, output_tokens=usage.output_tokens),
            stop_reason=str(response.stop_reason or ""),
        )

    async def aclose(self) -> None:
        await self._client.close()
