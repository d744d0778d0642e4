"""The keep-alive JSON-RPC provider against local HTTP servers that misbehave on purpose."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from eth_typing import URI
from web3 import AsyncWeb3
from web3.exceptions import BadResponseFormat
from web3.types import RPCEndpoint

from oracle.chain.rpc import describe_failure, is_node_failure
from oracle.chain.transport import KeepAliveHTTPProvider
from oracle.devchain import free_port

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A JSON-RPC endpoint on localhost; yields its URL and the peer port of each request."""
    peers: list[int] = []

    async def record(request: web.Request) -> web.StreamResponse:
        peers.append(request.transport.get_extra_info("peername")[1])  # type: ignore[union-attr]
        return await handler(request)

    app = web.Application()
    app.router.add_post("/", record)
    runner = web.AppRunner(app, shutdown_timeout=0.1)  # a handler that hangs is cut off
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/", peers
    finally:
        await runner.cleanup()


async def echo_block(request: web.Request) -> web.Response:
    """Answers eth_blockNumber (single or batch), batches in reverse order."""
    body = await request.json()

    def answer(call: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": call["id"], "result": hex(100 + call["id"])}

    if isinstance(body, list):
        return web.json_response([answer(call) for call in reversed(body)])
    return web.json_response(answer(body))


def run(coroutine: Awaitable[Any]) -> Any:
    return asyncio.run(coroutine)  # type: ignore[arg-type]


def test_requests_share_connections() -> None:
    async def scenario() -> list[int]:
        async with serve(echo_block) as (url, peers):
            w3 = AsyncWeb3(KeepAliveHTTPProvider(url, timeout=5))
            for _ in range(20):
                await w3.eth.block_number
            await w3.provider.disconnect()
            return peers

    peers = run(scenario())
    assert len(peers) == 20
    assert len(set(peers)) == 1  # one TCP connection, kept alive


def test_batch_answers_come_back_in_request_order() -> None:
    async def scenario() -> list[Any]:
        async with serve(echo_block) as (url, _):
            provider = KeepAliveHTTPProvider(url, timeout=5)
            answers = await provider.make_batch_request(
                [(RPCEndpoint("eth_blockNumber"), []) for _ in range(5)]
            )
            await provider.disconnect()
            return answers  # type: ignore[return-value]

    answers = run(scenario())
    ids = [a["id"] for a in answers]
    assert ids == sorted(ids)
    assert len(ids) == 5
    assert [a["result"] for a in answers] == [hex(100 + i) for i in ids]


def test_a_refused_batch_returns_the_one_error() -> None:
    async def refuse(_: web.Request) -> web.Response:
        error = {"code": -32600, "message": "batch requests are not supported"}
        return web.json_response({"jsonrpc": "2.0", "id": None, "error": error})

    async def scenario() -> Any:
        async with serve(refuse) as (url, _):
            provider = KeepAliveHTTPProvider(url, timeout=5)
            answer = await provider.make_batch_request([(RPCEndpoint("eth_chainId"), [])] * 2)
            await provider.disconnect()
            return answer

    answer = run(scenario())
    assert answer["error"]["message"] == "batch requests are not supported"


def test_a_silent_node_times_out_instead_of_hanging() -> None:
    async def never(_: web.Request) -> web.Response:
        await asyncio.sleep(60)
        return web.json_response({})

    async def scenario() -> BaseException:
        async with serve(never) as (url, _):
            w3 = AsyncWeb3(KeepAliveHTTPProvider(url, timeout=0.5))
            try:
                await asyncio.wait_for(w3.eth.block_number, 10)
            except Exception as error:
                return error
            finally:
                await w3.provider.disconnect()
        raise AssertionError("the call returned")

    error = run(scenario())
    assert isinstance(error, TimeoutError)
    assert is_node_failure(error)
    assert describe_failure(error) == "timed out"


def test_http_errors_and_refused_connections_are_node_failures() -> None:
    async def broken(_: web.Request) -> web.Response:
        return web.Response(status=502, text="<html>bad gateway</html>")

    async def scenario() -> list[BaseException]:
        errors: list[BaseException] = []
        async with serve(broken) as (url, _):
            w3 = AsyncWeb3(KeepAliveHTTPProvider(url, timeout=5))
            with pytest.raises(aiohttp.ClientResponseError) as status_error:
                await w3.eth.block_number
            errors.append(status_error.value)
            await w3.provider.disconnect()
        closed = AsyncWeb3(KeepAliveHTTPProvider(f"http://127.0.0.1:{free_port()}/", timeout=5))
        with pytest.raises(aiohttp.ClientConnectorError) as refused:
            await closed.eth.block_number
        errors.append(refused.value)
        await closed.provider.disconnect()
        return errors

    status_error, refused = run(scenario())
    assert is_node_failure(status_error)
    assert describe_failure(status_error) == "HTTP 502"
    assert is_node_failure(refused)
    assert describe_failure(refused).startswith("connection failed")


def test_the_url_never_shows_in_the_provider_text() -> None:
    provider = KeepAliveHTTPProvider("https://node.example/v3/secret-api-key", timeout=5)
    assert "secret-api-key" not in str(provider)
    assert "secret-api-key" not in repr(provider)


def test_each_event_loop_gets_its_own_session() -> None:
    provider = KeepAliveHTTPProvider("http://127.0.0.1:1/", timeout=5)

    async def on_fresh_loop() -> int:
        async with serve(echo_block) as (url, _):
            provider.endpoint_uri = URI(url)
            try:
                return await AsyncWeb3(provider).eth.block_number
            finally:
                await provider.disconnect()

    # Two asyncio.run calls: the session of the first loop is never reused by the second.
    assert run(on_fresh_loop()) >= 100
    assert run(on_fresh_loop()) >= 100


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_an_answer_beyond_the_size_cap_is_a_node_failure(encoding: str) -> None:
    # A hostile node's endless answer, or a gzip bomb (5 MB of zeros in 5 KB), must not
    # fill the daemon's memory.
    body = b'{"jsonrpc": "2.0", "id": 0, "result": "0x' + b"0" * 5_000_000 + b'"}'

    async def huge(_: web.Request) -> web.Response:
        if encoding == "gzip":
            return web.Response(
                body=gzip.compress(body),
                headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
            )
        return web.Response(body=body, content_type="application/json")

    async def scenario() -> BaseException:
        async with serve(huge) as (url, _):
            provider = KeepAliveHTTPProvider(url, timeout=5, max_response_bytes=1_000_000)
            try:
                await provider.make_request(RPCEndpoint("eth_blockNumber"), [])
            except Exception as error:
                return error
            finally:
                await provider.disconnect()
        raise AssertionError("the call returned")

    error = run(scenario())
    assert isinstance(error, BadResponseFormat)
    assert str(error) == "the RPC node's answer is larger than 1000000 bytes"
    assert is_node_failure(error)


def test_an_answer_within_the_cap_is_read_whole() -> None:
    async def scenario() -> Any:
        async with serve(echo_block) as (url, _):
            provider = KeepAliveHTTPProvider(url, timeout=5, max_response_bytes=1000)
            try:
                return await provider.make_request(RPCEndpoint("eth_blockNumber"), [])
            finally:
                await provider.disconnect()

    assert run(scenario())["result"] == hex(100)
