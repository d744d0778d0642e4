"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp server,
OpenRouter) through the official `openai` SDK: function tools, `response_format` with a
strict JSON schema for the final answer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import openai
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

# Keys for local servers that need none: the SDK must never fall back to $OPENAI_API_KEY.
NO_KEY = "no-key"


class UnusableAnswer(openai.OpenAIError):
    """A body the SDK must not decode (see `oracle.agents.providers.base.http_client`)."""


def _status(error: openai.APIStatusError) -> tuple[int, object]:
    body = error.body if isinstance(error.body, dict) else {}
    return error.status_code, body.get("type") or body.get("code")


FAILURES = SdkFailures(
    unusable=UnusableAnswer,
    status=openai.APIStatusError,
    status_of=_status,
    timeout=openai.APITimeoutError,
    connection=openai.APIConnectionError,
    any=openai.OpenAIError,
)


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
            http_client=http_client(openai.DefaultAsyncHttpxClient, UnusableAnswer),
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
        return await model_turn(
            self.provider,
            FAILURES,
            lambda: self._client.chat.completions.with_raw_response.create(**request),
            parse_completion,
        )

    async def aclose(self) -> None:
        await self._client.close()


def parse_completion(document: Any) -> ModelTurn:
    """A chat completion (decoded JSON) as a ModelTurn; ValueError says what is missing.

    Lenient where OpenAI-compatible servers differ (content as a list of text parts,
    arguments as an object); anything else unexpected is an error, not a guess."""
    if not isinstance(document, dict):
        raise ValueError("is not a JSON object")
    choices = document.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ValueError("has no message in its first choice")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ValueError("has tool_calls that are not a list")
    usage = document.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    finish = choice.get("finish_reason")
    return ModelTurn(
        text=_content(message.get("content")),
        tool_calls=tuple(
            _tool_call(index, call)
            for index, call in enumerate(calls)
            if not isinstance(call, dict) or call.get("type", "function") == "function"
        ),
        usage=Usage(
            input_tokens=reported_tokens(usage.get("prompt_tokens")),
            output_tokens=reported_tokens(usage.get("completion_tokens")),
        ),
        stop_reason=finish if isinstance(finish, str) else "",
    )


def _content(content: object) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        if all(isinstance(text, str) for text in parts):
            return "".join(text for text in parts if isinstance(text, str))
    raise ValueError("has message content that is not text")


def _tool_call(index: int, call: object) -> ToolCall:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(call, dict) or not isinstance(function, dict):
        raise ValueError(f"has tool call {index} without a function")
    name, arguments, call_id = function.get("name"), function.get("arguments"), call.get("id")
    if not isinstance(name, str) or not name:
        raise ValueError(f"has tool call {index} without a name")
    if isinstance(arguments, dict):  # some servers send the object itself
        arguments = json.dumps(arguments)
    if arguments is not None and not isinstance(arguments, str):
        raise ValueError(f"has tool call {index} whose arguments are not text")
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
        name=name,
        arguments=arguments or "",
    )
