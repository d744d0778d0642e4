"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp server,
OpenRouter) through the official `openai` SDK: function tools, `response_format` with a
strict JSON schema for the final answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import openai
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

# Keys for local servers that need none: the SDK must never fall back to $OPENAI_API_KEY.
NO_KEY = "no-key"


class OpenAIChat:
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
        output_token_field: Literal["max_tokens", "max_completion_tokens"],
    ) -> None:
        self.model = model
        self.provider = provider
        self._temperature = temperature
        self._token_field = output_token_field
        self._client = openai.AsyncOpenAI(
            api_key=api_key.get_secret_value() if api_key is not None else NO_KEY,
            base_url=base_url,
            timeout=timeout_seconds,
            max_retries=max_retries,
            organization=None,
            project=None,
        )

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r}, provider={self.provider!r})"

    @staticmethod
    def messages(system: str, transcript: Sequence[Entry]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for entry in transcript:
            match entry:
                case UserText():
                    messages.append({"role": "user", "content": entry.text})
                case AssistantTurn():
                    if not entry.text and not entry.tool_calls:
                        continue  # an empty assistant message is refused by some servers
                    message: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
                    if entry.tool_calls:
                        message["tool_calls"] = [
                            {
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments},
                            }
                            for call in entry.tool_calls
                        ]
                    messages.append(message)
                case ToolResult():
                    messages.append(
                        {"role": "tool", "tool_call_id": entry.call_id, "content": entry.content}
                    )
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
            "messages": self.messages(system, transcript),
            self._token_field: max_output_tokens,
        }
        if tools:
            request["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in tools
            ]
            request["tool_choice"] = "auto" if allow_tools else "none"
        if self._temperature is not None:
            request["temperature"] = self._temperature
        if answer_schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "final_answer", "schema": answer_schema, "strict": True},
            }
        try:
            response = await self._client.chat.completions.create(**request)
        except openai.APIStatusError as error:
            body = error.body if isinstance(error.body, dict) else {}
            kind = body.get("type") or body.get("code")
            raise status_error(
                self.provider, error.status_code, str(kind) if kind else None
            ) from None
        except openai.APITimeoutError:
            raise ModelError(f"{self.provider}: the request timed out") from None
        except openai.APIConnectionError:
            raise ModelError(f"{self.provider}: cannot connect") from None
        except openai.OpenAIError as error:
            raise ModelError(f"{self.provider}: {type(error).__name__}") from None
        if not response.choices:
            raise ModelError(f"{self.provider}: the answer has no choices")
        choice = response.choices[0]
        calls = tuple(
            ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "")
            for call in choice.message.tool_calls or ()
            if call.type == "function"
        )
        usage = response.usage
        return ModelTurn(
            text=choice.message.content or "",
            tool_calls=calls,
            usage=Usage(
                input_tokens=usage.prompt_tokens if usage else 0,
                output_tokens=usage.completion_tokens if usage else 0,
            ),
            stop_reason=str(choice.finish_reason or ""),
        )

    async def aclose(self) -> None:
        await self._client.close()
