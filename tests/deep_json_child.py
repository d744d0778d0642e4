"""Child process of tests/test_deep_json.py: one path that decodes outside JSON, fed a
body nested 100,000 levels deep, with the chain stack imported and the recursion limit at
100,000 (what py_ecc sets on import). A decoder that recurses in C overflows the thread
stack and the child dies by SIGSEGV; a safe one prints the clean error it got.

Run as `python -m tests.deep_json_child SCENARIO`; prints one line, `clean: <error>` or
`answered: <reasoning>`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from web3.exceptions import BadResponseFormat
from web3.types import RPCEndpoint

import oracle.cli
from oracle.agents.answer import parse_answer
from oracle.agents.metrics import AgentMetrics
from oracle.agents.providers.anthropic_messages import AnthropicMessages
from oracle.agents.providers.base import (
    AssistantTurn,
    ModelTurn,
    ToolCall,
    ToolResult,
    Usage,
    UserText,
)
from oracle.agents.providers.openai_chat import OpenAIChat
from oracle.agents.replay import ReplayAgent
from oracle.agents.search.providers import SearxngSearch
from oracle.agents.settings import DataAgentConfig, LlmAgentConfig
from oracle.app import build_agent
from oracle.backtest import load_recordings
from oracle.chain.keys import KeystoreError, keystore_address
from oracle.chain.rpc import is_node_failure
from oracle.chain.transport import KeepAliveHTTPProvider
from oracle.core.models import Market
from oracle.errors import AgentError, AnswerInvalid, InputError, ModelError, SourceError, ToolError
from oracle.venues.http.settings import HttpSourceConfig
from oracle.venues.http.venue import HttpMarketSource

DEEP = "[" * 100_000
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def deep_json(_: web.Request) -> web.Response:
    return web.Response(text=DEEP, content_type="application/json")


async def deep_json_error(_: web.Request) -> web.Response:
    return web.Response(text=DEEP, content_type="application/json", status=400)


async def good_price(_: web.Request) -> web.Response:
    return web.json_response({"price": 5})


@asynccontextmanager
async def serve(routes: dict[str, Handler]) -> AsyncIterator[str]:
    app = web.Application()
    for path, handler in routes.items():
        app.router.add_route("*", path, handler)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def data_endpoint() -> str:
    async with serve({"/deep": deep_json, "/good": good_price}) as url:
        config = DataAgentConfig.model_validate(
            {
                "name": "prices",
                "kind": "data",
                "max_retries": 0,
                "rules": [
                    {
                        "market_ids": ["m"],
                        "threshold": 1,
                        "min_values": 1,
                        "endpoints": [
                            {"name": "deep", "url": f"{url}/deep", "path": "price"},
                            {"name": "good", "url": f"{url}/good", "path": "price"},
                        ],
                    }
                ],
            }
        )
        agent = build_agent(config, AgentMetrics(), clock=lambda: 2_000_000_000.0)
        try:
            result = await agent.research(Market(id="m", question="Price above 1?"))
        finally:
            await agent.aclose()
        return f"answered: {result.reasoning}"


async def search_provider() -> str:
    async with serve({"/search": deep_json}) as url, aiohttp.ClientSession() as session:
        provider = SearxngSearch(
            lambda: session, url, timeout_seconds=5, max_retries=0, max_retry_wait_seconds=1
        )
        try:
            await provider.search("q", 3)
        except ToolError as error:
            return f"clean: {error}"
    return "no error"


async def model_server(api: str, handler: Handler) -> str:
    path = "/v1/chat/completions" if api == "openai" else "/v1/messages"
    async with serve({path: handler}) as url:
        common: dict[str, Any] = {
            "model": "m",
            "provider": "local",
            "api_key": None,
            "temperature": None,
            "timeout_seconds": 10,
            "max_retries": 0,
        }
        model = (
            OpenAIChat(base_url=f"{url}/v1", output_token_field="max_tokens", **common)
            if api == "openai"
            else AnthropicMessages(base_url=url, **common)
        )
        try:
            await model.complete("system", [UserText("question")], (), max_output_tokens=64)
        except ModelError as error:
            return f"clean: {error}"
        finally:
            await model.aclose()
    return "no error"


class _DeepArgumentsModel:
    """A chat model whose first turn calls a tool with deeply nested arguments."""

    provider = "local"
    model = "scripted"

    def __init__(self) -> None:
        self.tool_results: list[str] = []

    async def complete(
        self, system: str, transcript: Sequence[Any], tools: Sequence[Any], **_: Any
    ) -> Any:
        self.tool_results = [e.content for e in transcript if isinstance(e, ToolResult)]
        if not self.tool_results:
            call = ToolCall(id="c1", name="search", arguments=DEEP)
            return ModelTurn("", (call,), Usage(10, 10))
        return ModelTurn(
            '{"outcome": "UNDETERMINED", "confidence": 0.5, "reasoning": "tool failed", '
            '"sources": []}',
            (),
            Usage(10, 10),
        )

    async def aclose(self) -> None:
        return None


async def tool_arguments() -> str:
    config = LlmAgentConfig.model_validate(
        {
            "name": "llm",
            "kind": "llm",
            "model": "scripted",
            "base_url": "http://127.0.0.1:9/v1",
            "search": [{"kind": "searxng", "base_url": "http://127.0.0.1:9"}],
        }
    )
    model = _DeepArgumentsModel()
    agent = build_agent(config, AgentMetrics(), model=model)
    try:
        result = await agent.research(Market(id="m", question="Did it happen?"))
    finally:
        await agent.aclose()
    return f"answered: {result.outcome}; tool said: {' '.join(model.tool_results)}"


async def anthropic_transcript() -> str:
    messages = AnthropicMessages.messages([AssistantTurn("", (ToolCall("c1", "search", DEEP),))])
    return f"clean: input {messages[0]['content'][0]['input']!r}"


async def answer_text() -> str:
    try:
        parse_answer(DEEP, ("YES", "NO", "UNDETERMINED"))
    except AnswerInvalid as error:
        return f"clean: {error}"
    return "no error"


async def venue_market_list() -> str:
    async with serve({"/markets": deep_json}) as url:
        source = HttpMarketSource(
            HttpSourceConfig.model_validate(
                {
                    "name": "venue",
                    "kind": "http",
                    "url": f"{url}/markets",
                    "result_url": f"{url}/results",
                }
            )
        )

        async def deliver(_: Any) -> None:
            return None

        try:
            await source.poll(deliver)
        except SourceError as error:
            return f"clean: {error}"
        finally:
            await source.aclose()
    return "no error"


async def rpc_node() -> str:
    async with serve({"/": deep_json}) as url:
        provider = KeepAliveHTTPProvider(f"{url}/", timeout=10)
        try:
            await provider.make_request(RPCEndpoint("eth_blockNumber"), [])
        except BadResponseFormat as error:
            return f"clean: {error}; node failure: {is_node_failure(error)}"
        finally:
            await provider.disconnect()
    return "no error"


def _deep_file(directory: Path) -> Path:
    path = directory / "deep.json"
    path.write_text(DEEP)
    return path


async def cli_command(*command: str) -> str:
    with tempfile.TemporaryDirectory() as directory:
        path = _deep_file(Path(directory))
        try:
            oracle.cli.cli.main([*command, str(path)], prog_name="oracle")
        except SystemExit as stop:
            return f"clean: exit {stop.code}"
    return "no error"


async def replay_recordings() -> str:
    with tempfile.TemporaryDirectory() as directory:
        _deep_file(Path(directory))
        try:
            ReplayAgent("replay", Path(directory))
        except AgentError as error:
            return f"clean: {error}"
    return "no error"


async def backtest_recordings() -> str:
    with tempfile.TemporaryDirectory() as directory:
        _deep_file(Path(directory))
        try:
            load_recordings(Path(directory))
        except InputError as error:
            return f"clean: {error}"
    return "no error"


async def keystore_file() -> str:
    with tempfile.TemporaryDirectory() as directory:
        path = _deep_file(Path(directory))
        try:
            keystore_address(path)
        except KeystoreError as error:
            return f"clean: {error}"
    return "no error"


SCENARIOS: dict[str, Callable[[], Awaitable[str]]] = {
    "data-endpoint": data_endpoint,
    "search-provider": search_provider,
    "openai-answer": lambda: model_server("openai", deep_json),
    "openai-error-body": lambda: model_server("openai", deep_json_error),
    "anthropic-answer": lambda: model_server("anthropic", deep_json),
    "anthropic-error-body": lambda: model_server("anthropic", deep_json_error),
    "tool-arguments": tool_arguments,
    "anthropic-transcript": anthropic_transcript,
    "answer-text": answer_text,
    "venue-market-list": venue_market_list,
    "rpc-node": rpc_node,
    "cli-consensus": lambda: cli_command("consensus"),
    "cli-proof-verify": lambda: cli_command("proof", "verify"),
    "replay-recordings": replay_recordings,
    "backtest-recordings": backtest_recordings,
    "keystore-file": keystore_file,
}

if __name__ == "__main__":
    # The chain stack is imported above, as the daemon and the CLI import it. Whatever
    # oracle does about py_ecc's limit, the decoders must not depend on it.
    sys.setrecursionlimit(100_000)
    print(asyncio.run(SCENARIOS[sys.argv[1]]()), flush=True)
